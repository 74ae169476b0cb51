/*
 * xdev plugin ABI, version 1.
 *
 * The one header a device plugin is written against. A plugin is a shared
 * library that exports a single C function, `xdev_plugin_query` (see the end
 * of this file). Through it the core and the plugin exchange two tables:
 *
 *   core -> plugin  xdev_host_api_t    status creation, logging (host services)
 *   plugin -> core  xdev_plugin_api_t  devices, memory, streams, events,
 *                                      copies, kernels, shutdown
 *
 * Rules (docs/plugin-abi.md says more, docs/ABI-CHANGELOG.md lists versions):
 *  - Plain C99, only <stddef.h> and <stdint.h>. No C++ exception may leave a
 *    function called through this ABI; errors are status objects.
 *  - Every struct that may grow begins with `struct_size` (the size the writer
 *    of the struct was compiled with) and an extension pointer `ext` (a chain
 *    of xdev_extension_t, NULL when none). Fields are only appended, never
 *    reordered or removed; a reader uses a field only when `struct_size`
 *    covers it (XDEV_HAS_FIELD). Each struct's v1 size is static-asserted.
 *  - A major version change breaks compatibility and is refused at load. A
 *    minor version only appends fields/slots: a core loads plugins of any
 *    minor of its major.
 *  - Status objects: NULL means success. A non-NULL status is created with
 *    the host's `status_create` and from then on owned by the core, which
 *    destroys it. A plugin never frees a status.
 *  - Strings and arrays a plugin returns are owned by the plugin and stay
 *    valid until `shutdown` returns, unless a field says otherwise.
 *  - Thread-safety is stated per slot. "Thread-safe" means the core may call
 *    it from several threads at once, also for the same device.
 */
#ifndef XDEV_PLUGIN_H_
#define XDEV_PLUGIN_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------ */
/* Versions, visibility, struct sizes                                       */
/* ------------------------------------------------------------------------ */

#define XDEV_ABI_VERSION_MAJOR 1
/* 1.3: DLPack device types and streams (the "Since 1.3" blocks below).
 * 1.4: timing between two events (XDEV_CAP_EVENT_TIMING, event_elapsed_ms).
 * 1.5: a device's largest single allocation and memory kind, per-device
 *      kernels (device_kernels); platform names are lower case.
 * 1.6: handle-based device memory (XDEV_CAP_HANDLE_MEMORY, the *_at copy
 *      slots, scratch_allocate_at); xdev_tensor_t::data is the allocation.
 * 1.7: device collectives across processes (XDEV_CAP_COLLECTIVES: a
 *      communicator per device from an opaque id, collectives on streams). */
#define XDEV_ABI_VERSION_MINOR 7

/* The name of the one exported entry symbol. */
#define XDEV_PLUGIN_ENTRY_SYMBOL "xdev_plugin_query"

#if defined(_WIN32)
#define XDEV_PLUGIN_EXPORT __declspec(dllexport)
#elif defined(__GNUC__) || defined(__clang__)
#define XDEV_PLUGIN_EXPORT __attribute__((visibility("default")))
#else
#define XDEV_PLUGIN_EXPORT
#endif

/* Size of `type` up to and including `last_field`: the value to store in
 * struct_size for the version of the struct that ends at `last_field`. */
#define XDEV_STRUCT_SIZE(type, last_field) \
  (offsetof(type, last_field) + sizeof(((type*)0)->last_field))

/* True when a struct of which the writer reported `ptr->struct_size` has
 * `field`. Use before reading any field appended after v1.0. */
#define XDEV_HAS_FIELD(ptr, type, field) \
  ((ptr)->struct_size >= XDEV_STRUCT_SIZE(type, field))

typedef struct xdev_version_t {
  uint32_t major;
  uint32_t minor;
} xdev_version_t;

/* Optional features travel as a singly linked chain hanging off a struct's
 * `ext`. Every extension begins with this header; `type` identifies it (ids
 * are allocated in docs/ABI-CHANGELOG.md), unknown types are skipped. */
typedef struct xdev_extension_t {
  size_t struct_size;
  uint32_t type;
  const struct xdev_extension_t* next;
} xdev_extension_t;

/* ------------------------------------------------------------------------ */
/* Status                                                                   */
/* ------------------------------------------------------------------------ */

/* Error codes. 0 is never used in a status object (success is NULL). */
typedef enum xdev_status_code_t {
  XDEV_STATUS_OK = 0,
  XDEV_STATUS_INVALID_ARGUMENT = 1,  /* the caller passed a bad value */
  XDEV_STATUS_NOT_FOUND = 2,         /* no such device, op, ... */
  XDEV_STATUS_OUT_OF_MEMORY = 3,     /* an allocation could not be satisfied */
  XDEV_STATUS_UNIMPLEMENTED = 4,     /* feature or dtype not supported */
  XDEV_STATUS_FAILED_PRECONDITION = 5, /* wrong state (e.g. after shutdown) */
  XDEV_STATUS_UNAVAILABLE = 6,       /* driver/device missing or lost */
  XDEV_STATUS_INTERNAL = 7,          /* a bug or an unexpected failure */
  XDEV_STATUS_ABI_MISMATCH = 8       /* incompatible versions or structs */
} xdev_status_code_t;

/* Opaque; created by the host, owned by whoever receives it. */
typedef struct xdev_status_t xdev_status_t;

/* ------------------------------------------------------------------------ */
/* Host services: filled by the core, read by the plugin                    */
/* ------------------------------------------------------------------------ */

typedef enum xdev_log_level_t {
  XDEV_LOG_DEBUG = 0,
  XDEV_LOG_INFO = 1,
  XDEV_LOG_WARNING = 2,
  XDEV_LOG_ERROR = 3
} xdev_log_level_t;

/* Lives from `xdev_plugin_query` until after `shutdown` returns. All
 * functions are thread-safe and never fail in a way the plugin must handle. */
typedef struct xdev_host_api_t {
  size_t struct_size;
  const xdev_extension_t* ext;
  /* The core's ABI version. */
  xdev_version_t abi_version;
  /* Opaque core context; pass it back to every function below. */
  void* host_context;
  /* Creates a status with `code` (not XDEV_STATUS_OK) and a copy of the
   * NUL-terminated `message` (may be NULL). The returned object belongs to
   * whoever the plugin returns it to (the core). Never returns NULL. */
  xdev_status_t* (*status_create)(void* host_context, xdev_status_code_t code,
                                  const char* message);
  /* Writes a line to the core's log, tagged with the plugin's name. `message`
   * is copied; the core adds no newline of its own to the text. */
  void (*log)(void* host_context, xdev_log_level_t level, const char* message);
} xdev_host_api_t;
#define XDEV_HOST_API_STRUCT_SIZE XDEV_STRUCT_SIZE(xdev_host_api_t, log)

/* ------------------------------------------------------------------------ */
/* Data types and tensor descriptors (DLPack-like)                          */
/* ------------------------------------------------------------------------ */

typedef enum xdev_dtype_t {
  XDEV_DTYPE_INVALID = 0,
  XDEV_DTYPE_FLOAT32 = 1,
  XDEV_DTYPE_FLOAT64 = 2,
  XDEV_DTYPE_INT32 = 3,
  XDEV_DTYPE_INT64 = 4,
  XDEV_DTYPE_BOOL = 5,   /* one byte, 0 or 1 */
  XDEV_DTYPE_FLOAT16 = 6,
  XDEV_DTYPE_BFLOAT16 = 7,
  XDEV_DTYPE_UINT8 = 8,
  XDEV_DTYPE_INT8 = 9
} xdev_dtype_t;

/* Bit for a dtype in a dtype mask. */
#define XDEV_DTYPE_BIT(dtype) (UINT64_C(1) << (unsigned)(dtype))

/* Maximum rank the core passes to kernels. */
#define XDEV_MAX_RANK 8

/* A view of a tensor handed to a kernel. Not size-tagged: it is fixed for
 * the life of major version 1. The element at index (i0, ..., in-1) lives
 * at byte offset byte_offset + sum_k(i_k * strides[k]) * element_size
 * inside the allocation `data`; for a plugin whose memory is addresses
 * (no XDEV_CAP_HANDLE_MEMORY) that is the byte address (char*)data +
 * byte_offset + ... . `shape` and `strides` point to `rank` values owned
 * by the core, valid for the duration of the kernel call. `strides` are in
 * elements; a stride of 0 means the tensor is broadcast along that axis.
 * The core never dereferences device memory.
 *
 * Since 1.6, `data` is exactly the value memory_allocate returned for the
 * allocation the tensor lives in (the core's pool sub-allocates inside
 * such allocations), and `byte_offset` is the offset of element 0 inside
 * it: the pool's sub-offset plus the view's offset. Cores before 1.6
 * passed `data` = allocation + pool sub-offset and only the view's offset
 * in `byte_offset`; the sum (char*)data + byte_offset, the only thing a
 * pointer plugin may rely on, is the same address either way, so plugins
 * built before 1.6 are unaffected. A plugin that declares
 * XDEV_CAP_HANDLE_MEMORY reads `data` as its own opaque handle (OpenCL's
 * cl_mem) and `byte_offset` as the offset inside it; the core never forms
 * an address from a handle. */
typedef struct xdev_tensor_t {
  void* data;              /* the allocation memory_allocate returned (an
                            * address or, with XDEV_CAP_HANDLE_MEMORY, a
                            * handle) */
  uint64_t byte_offset;    /* offset of element 0 inside `data` */
  xdev_dtype_t dtype;
  int32_t rank;            /* 0 ... XDEV_MAX_RANK */
  const int64_t* shape;    /* `rank` dims, each >= 0 */
  const int64_t* strides;  /* `rank` strides in elements, may be 0 */
} xdev_tensor_t;

/* ------------------------------------------------------------------------ */
/* Op attributes                                                            */
/* ------------------------------------------------------------------------ */

typedef enum xdev_attr_kind_t {
  XDEV_ATTR_BOOL = 0,
  XDEV_ATTR_INT = 1,
  XDEV_ATTR_FLOAT = 2,
  XDEV_ATTR_DTYPE = 3,
  XDEV_ATTR_INTS = 4,  /* list of int64 */
  XDEV_ATTR_STRING = 5
} xdev_attr_kind_t;

/* One named attribute of an op call (e.g. MatMul's "transpose_a"). The op
 * table in docs/ops.md lists each op's attributes. Names and arrays are owned
 * by the core and valid for the duration of the kernel call. */
typedef struct xdev_attr_t {
  const char* name;
  xdev_attr_kind_t kind;
  union {
    int32_t b;           /* XDEV_ATTR_BOOL: 0 or 1 */
    int64_t i;           /* XDEV_ATTR_INT */
    double f;            /* XDEV_ATTR_FLOAT */
    xdev_dtype_t dtype;  /* XDEV_ATTR_DTYPE */
    struct {
      const int64_t* values;
      int64_t count;
    } ints;              /* XDEV_ATTR_INTS */
    const char* s;       /* XDEV_ATTR_STRING, NUL-terminated */
  } value;
} xdev_attr_t;

/* ------------------------------------------------------------------------ */
/* Opaque plugin objects                                                    */
/* ------------------------------------------------------------------------ */

/* All created and destroyed by the plugin; the core never looks inside. */
typedef struct xdev_plugin_t xdev_plugin_t;  /* one initialized plugin */
typedef struct xdev_device_t xdev_device_t;  /* one opened device */
typedef struct xdev_stream_t xdev_stream_t;  /* an in-order work queue */
typedef struct xdev_event_t xdev_event_t;    /* a marker in a stream */

/* ------------------------------------------------------------------------ */
/* Device types and devices                                                 */
/* ------------------------------------------------------------------------ */

/* Conventional priorities. Higher wins when an op could run on several
 * device types and the user asked for none. */
#define XDEV_PRIORITY_CPU 0
#define XDEV_PRIORITY_GPU 100

/* A device type the plugin offers. Two plugins may offer the same type
 * (e.g. "GPU" on platforms "cuda" and "rocm"); the core numbers their
 * devices in one sequence per type. */
typedef struct xdev_device_type_info_t {
  size_t struct_size;
  const xdev_extension_t* ext;
  /* Type name: ASCII letters, digits and '_', starting with a letter, at
   * most 31 characters; the core upper-cases it ("GPU", "CPU", "NPU"). */
  const char* type;
  /* Platform: who implements it, lower case ("host", "cuda", "sim"): a
   * name with an upper-case letter is refused at load (enforced since 1.5).
   * "host" is reserved for the in-tree cpu plugin (plugin name "cpu"),
   * whose CPU device is always CPU:0; another plugin that offers platform
   * "host" is skipped (docs/plugin-abi.md, "Device numbering"). */
  const char* platform;
  /* Placement priority, see XDEV_PRIORITY_*. */
  int32_t priority;

  /* ---- Since 1.3: DLPack device type -------------------------------- */
  /* Which DLPack device type (DLDeviceType of dlpack.h, the XDEV_DLPACK_*
   * values below) this type's device memory is, so the core can hand
   * tensors to other libraries (torch, NumPy, CuPy) and take theirs
   * without a copy. Declaring a type promises both directions: an address
   * from memory_allocate is an address of that DLPack type, with DLPack
   * device_id = the device's ordinal in this plugin; and any memory of that
   * DLPack type and device_id (allocated by anyone, e.g. torch's CUDA
   * caching allocator) may be passed to this plugin's kernels and copy
   * slots as device memory. XDEV_DLPACK_NONE (0, also what the core assumes
   * for plugins before 1.3) promises nothing: the core exports such memory
   * as XDEV_DLPACK_CPU when the plugin declares XDEV_CAP_HOST_ADDRESSABLE,
   * else as XDEV_DLPACK_EXT_DEV, and imports memory of other libraries for
   * such a device only by copying it. */
  int32_t dlpack_device_type;
  /* ---- end of 1.3 --------------------------------------------------- */
} xdev_device_type_info_t;
/* The size a writer built against this header reports. */
#define XDEV_DEVICE_TYPE_INFO_STRUCT_SIZE \
  XDEV_STRUCT_SIZE(xdev_device_type_info_t, dlpack_device_type)
/* The v1.0 size (up to `priority`): the least the core accepts. */
#define XDEV_DEVICE_TYPE_INFO_STRUCT_SIZE_1_0 \
  XDEV_STRUCT_SIZE(xdev_device_type_info_t, priority)

/* Since 1.3. Values of xdev_device_type_info_t::dlpack_device_type: the
 * DLDeviceType codes of DLPack 1.x (only the common ones are named here;
 * any other DLDeviceType value may be used). */
#define XDEV_DLPACK_NONE 0      /* not declared (see above) */
#define XDEV_DLPACK_CPU 1       /* kDLCPU: host memory */
#define XDEV_DLPACK_CUDA 2      /* kDLCUDA: CUDA device memory */
#define XDEV_DLPACK_OPENCL 4    /* kDLOpenCL */
#define XDEV_DLPACK_VULKAN 7    /* kDLVulkan */
#define XDEV_DLPACK_METAL 8     /* kDLMetal */
#define XDEV_DLPACK_ROCM 10     /* kDLROCM */
#define XDEV_DLPACK_EXT_DEV 12  /* kDLExtDev: memory only this plugin reads */
#define XDEV_DLPACK_ONEAPI 14   /* kDLOneAPI */

/* One free-form property ("compute_capability" = "9.0"). */
typedef struct xdev_property_t {
  const char* key;
  const char* value;
} xdev_property_t;

/* What the plugin reports about one physical device. The core sets
 * `struct_size` and `ext` before the call; the plugin fills the fields that
 * struct_size covers. Strings/arrays are owned by the plugin. */
typedef struct xdev_device_properties_t {
  size_t struct_size;
  const xdev_extension_t* ext;
  /* Index into the plugin's device types (see `device_types`). */
  uint32_t type_index;
  /* Human-readable model name ("NVIDIA H100 80GB HBM3", "AMD EPYC 9B14"). */
  const char* name;
  /* Total memory the device has, in bytes; > 0 (a device that reports 0
   * makes the core skip the plugin, since 1.5). */
  uint64_t memory_total;
  /* Bus id ("0000:05:00.0"), or "" when it has none. */
  const char* bus_id;
  /* NUMA node the device is closest to, or -1 when unknown. */
  int32_t numa_node;
  /* One line: "device: 0, name: ..., pci bus id: ..., compute capability:
   * 9.0". Printed as the physical device description. */
  const char* description;
  /* Free-form key/values, `property_count` of them. May be NULL if 0. */
  const xdev_property_t* properties;
  uint32_t property_count;

  /* ---- Since 1.5: memory limits and kind (read when struct_size covers
   * them; the core zero-fills the struct before the call, so a plugin that
   * leaves them alone declares nothing) ----------------------------------- */
  /* The largest size memory_allocate can satisfy in one call on this device
   * (OpenCL's CL_DEVICE_MAX_MEM_ALLOC_SIZE), in bytes; 0 = no such limit or
   * unknown (what the core assumes for plugins before 1.5). The core's pool
   * never asks memory_allocate for more than this in one call: it reserves
   * memory in regions of at most this size, and a single tensor larger than
   * it fails with XDEV_STATUS_OUT_OF_MEMORY naming the limit. Plain value,
   * copied by the core during the call. */
  uint64_t max_allocation_bytes;
  /* What the device's memory is, one of XDEV_MEMORY_KIND_* below. It picks
   * the default of the core's pool: DEVICE memory (discrete, not shared with
   * the host) is reserved up front unless the user asks for growth; HOST
   * memory (the host's RAM, or memory an integrated device shares with it)
   * grows on demand. XDEV_MEMORY_KIND_UNDECLARED (0, also plugins before
   * 1.5) and values this core does not know: the core derives the default
   * from the type name as before 1.5 (CPU grows, GPU reserves unless
   * XDEV_FORCE_GPU_ALLOW_GROWTH, other types reserve). Plain value, copied
   * by the core during the call. */
  int32_t memory_kind;
  /* ---- end of 1.5 --------------------------------------------------- */
} xdev_device_properties_t;
#define XDEV_DEVICE_PROPERTIES_STRUCT_SIZE \
  XDEV_STRUCT_SIZE(xdev_device_properties_t, memory_kind)
/* The v1.0 size (up to `property_count`): what cores before 1.5 pass. */
#define XDEV_DEVICE_PROPERTIES_STRUCT_SIZE_1_0 \
  XDEV_STRUCT_SIZE(xdev_device_properties_t, property_count)

/* Since 1.5. Values of xdev_device_properties_t::memory_kind. */
#define XDEV_MEMORY_KIND_UNDECLARED 0 /* derive from the type name (see above) */
#define XDEV_MEMORY_KIND_DEVICE 1     /* discrete device memory: reserve up front */
#define XDEV_MEMORY_KIND_HOST 2       /* host memory or shared with it: grow */

/* ------------------------------------------------------------------------ */
/* Kernels                                                                  */
/* ------------------------------------------------------------------------ */

/* Everything a kernel invocation receives. Built by the core, valid for the
 * duration of the call. Inputs are already on `device`; outputs are
 * allocated by the core with the shapes and dtypes the op definition says.
 * The kernel enqueues its work on `stream` and may return before it has
 * finished; the core orders later work on the same stream after it. */
typedef struct xdev_kernel_call_t {
  size_t struct_size;
  const xdev_extension_t* ext;
  const char* op;                 /* op name, e.g. "MatMul" */
  xdev_device_t* device;
  xdev_stream_t* stream;
  const xdev_tensor_t* const* inputs;
  uint32_t input_count;
  const xdev_tensor_t* const* outputs;
  uint32_t output_count;
  const xdev_attr_t* attrs;
  uint32_t attr_count;

  /* --- 1.2: temporary device memory (read with XDEV_HAS_FIELD) --- */

  /* Scratch memory for this call (partial sums of a reduction, a BLAS
   * workspace), taken from the pool of the call's logical device: it counts
   * against that device's memory limit and never competes with the pool for
   * the device's free memory. Returns `size` bytes (> 0) aligned to at least
   * 256 bytes, or NULL when the pool cannot provide them (the kernel then
   * runs without, e.g. a slower path, or returns XDEV_STATUS_OUT_OF_MEMORY
   * naming the request). Call it only during the kernel call, from the
   * calling thread, with `scratch_context`; any number of times.
   * Lifetime: the memory stays valid for the work the kernel enqueues on
   * `stream` before it returns. When the kernel returns, the core gives it
   * back to the pool, which hands it out again only for work enqueued later
   * on the same stream (stream order), so the kernel never frees it and must
   * not use it from another stream. The core never reads or writes it.
   * NULL when the caller offers no scratch (a core older than 1.2, a test
   * harness): kernels must then work without it. */
  void* (*scratch_allocate)(void* scratch_context, uint64_t size);
  /* Opaque; owned by the core, valid during the call. */
  void* scratch_context;

  /* --- 1.6: scratch as (allocation, offset) (read with XDEV_HAS_FIELD) --- */

  /* The same scratch as scratch_allocate (same pool, alignment, lifetime
   * and stream-order rules, same `scratch_context`), returned the way
   * xdev_tensor_t carries memory: the value memory_allocate returned for
   * the allocation the scratch lies in, with the scratch's offset inside it
   * written to *out_offset (its first byte; offset and size lie inside the
   * allocation). NULL, and *out_offset untouched, when the pool cannot
   * provide `size` bytes (> 0). A plugin with XDEV_CAP_HANDLE_MEMORY must
   * use this one: for its kernels the core passes scratch_allocate = NULL
   * (an address cannot be formed from a handle). For a pointer plugin both
   * are set and (char*)allocation + offset is the address scratch_allocate
   * would have returned. NULL from a core before 1.6 or a harness that
   * offers no scratch. */
  void* (*scratch_allocate_at)(void* scratch_context, uint64_t size,
                               uint64_t* out_offset);
} xdev_kernel_call_t;
/* The v1.0 call ended at attr_count. */
#define XDEV_KERNEL_CALL_STRUCT_SIZE_1_0 \
  XDEV_STRUCT_SIZE(xdev_kernel_call_t, attr_count)
#define XDEV_KERNEL_CALL_STRUCT_SIZE \
  XDEV_STRUCT_SIZE(xdev_kernel_call_t, scratch_allocate_at)
/* The 1.2 call ended at scratch_context. */
#define XDEV_KERNEL_CALL_STRUCT_SIZE_1_2 \
  XDEV_STRUCT_SIZE(xdev_kernel_call_t, scratch_context)

/* A kernel function. `kernel_context` is the value registered with it.
 * Thread-safety: must be thread-safe for calls on different streams, and
 * for calls on the same stream from several threads at once when the plugin
 * declares XDEV_CAP_CONCURRENT_STREAMS. */
typedef xdev_status_t* (*xdev_kernel_fn_t)(void* kernel_context,
                                           const xdev_kernel_call_t* call);

/* One kernel the plugin registers: (op, device type, dtypes) -> function. */
typedef struct xdev_kernel_info_t {
  size_t struct_size;
  const xdev_extension_t* ext;
  /* Op name as in docs/ops.md ("MatMul", "Add", "Cast", ...). */
  const char* op;
  /* Index into the plugin's device types. */
  uint32_t type_index;
  /* Dtypes accepted for the op's inputs (mask of XDEV_DTYPE_BIT). For ops
   * whose output dtype is an attribute (Cast), `output_dtypes` limits it;
   * for others set it equal to `input_dtypes` or to 0 (no extra limit). */
  uint64_t input_dtypes;
  uint64_t output_dtypes;
  xdev_kernel_fn_t fn;
  void* kernel_context;
} xdev_kernel_info_t;
#define XDEV_KERNEL_INFO_STRUCT_SIZE XDEV_STRUCT_SIZE(xdev_kernel_info_t, kernel_context)

/* ------------------------------------------------------------------------ */
/* Plugin initialization                                                    */
/* ------------------------------------------------------------------------ */

/* Passed to `initialize`. Owned by the core, valid during the call. */
typedef struct xdev_plugin_init_args_t {
  size_t struct_size;
  const xdev_extension_t* ext;
  /* The host services (same table as given to xdev_plugin_query). */
  const xdev_host_api_t* host;
} xdev_plugin_init_args_t;
#define XDEV_PLUGIN_INIT_ARGS_STRUCT_SIZE XDEV_STRUCT_SIZE(xdev_plugin_init_args_t, host)

/* Capability bits a plugin declares in xdev_plugin_api_t::capabilities. An
 * optional slot whose bit is clear must be NULL, and vice versa: the core
 * skips a plugin that declares a bit without its slots, and (since 1.5) one
 * that sets such a slot without its bit. */
#define XDEV_CAP_HOST_MEMORY UINT64_C(0x1) /* host_memory_allocate/free */
#define XDEV_CAP_PEER_COPY UINT64_C(0x2)   /* copy_peer */
#define XDEV_CAP_EVENTS UINT64_C(0x4)      /* real asynchronous events */
/* Addresses from memory_allocate are host pointers: the core may read and
 * write them with the CPU (memcpy) once the stream that uses them is idle,
 * and copies to other devices need no staging. Needs no extra slot. */
#define XDEV_CAP_HOST_ADDRESSABLE UINT64_C(0x8)
/* Since 1.1. Every slot that takes a stream may be called for the same stream from
 * several threads at once (e.g. streams that run work synchronously). The
 * core then does not serialize its use of a device's stream, which saves a
 * lock per op. Needs no extra slot. */
#define XDEV_CAP_CONCURRENT_STREAMS UINT64_C(0x10)
/* Since 1.4. The plugin can time the work between two events
 * (event_elapsed_ms). */
#define XDEV_CAP_EVENT_TIMING UINT64_C(0x20)
/* Since 1.6. Device memory is handles, not addresses: the values
 * memory_allocate returns (OpenCL's cl_mem) are opaque to the core, which
 * never adds an offset to one, compares two, or passes one where an
 * address is expected. It names device memory only as (allocation,
 * offset) pairs: xdev_tensor_t {data, byte_offset}, scratch_allocate_at,
 * and the *_at copy slots, which such a plugin must provide
 * (copy_host_to_device_at, copy_device_to_host_at, copy_device_to_device_at;
 * copy_peer_at when it also declares XDEV_CAP_PEER_COPY): the core skips a
 * plugin that declares this bit without them, or together with
 * XDEV_CAP_HOST_ADDRESSABLE. Its old copy slots (copy_host_to_device,
 * copy_device_to_host, copy_device_to_device, copy_peer) are never called
 * and may be NULL. DLPack export of its memory is refused (the core cannot
 * name an address for another library). */
#define XDEV_CAP_HANDLE_MEMORY UINT64_C(0x40)
/* Since 1.7. Collectives between devices of many processes (and hosts) on
 * the devices' own streams (NCCL for CUDA): collective_id,
 * communicator_create, communicator_destroy, communicator_abort,
 * communicator_poll, collective. */
#define XDEV_CAP_COLLECTIVES UINT64_C(0x80)

/* ------------------------------------------------------------------------ */
/* Device collectives (since 1.7, XDEV_CAP_COLLECTIVES)                      */
/* ------------------------------------------------------------------------ */

/* One device's membership of a group of `nranks` devices (of this and other
 * processes) that run collectives together; created by communicator_create,
 * owned by the plugin. */
typedef struct xdev_communicator_t xdev_communicator_t;

/* The most bytes an id from collective_id may have (NCCL's ncclUniqueId
 * has 128). */
#define XDEV_COLLECTIVE_ID_MAX_SIZE 256

/* What communicator_create needs besides the devices. The core allocates
 * and fills it; valid for the duration of the call only. */
typedef struct xdev_collective_init_t {
  size_t struct_size;
  const xdev_extension_t* ext;
  /* The bytes one process got from collective_id, sent by the core to every
   * other process (over MPI); `id_size` of them, at most
   * XDEV_COLLECTIVE_ID_MAX_SIZE. */
  const uint8_t* id;
  size_t id_size;
  /* Devices in the group, over all processes (every rank once). */
  int32_t nranks;
  int32_t reserved; /* 0 */
  /* How long communicator_create may wait for the other ranks to join
   * before it returns XDEV_STATUS_UNAVAILABLE; 0: the plugin's default. */
  uint64_t timeout_ms;
} xdev_collective_init_t;
#define XDEV_COLLECTIVE_INIT_STRUCT_SIZE XDEV_STRUCT_SIZE(xdev_collective_init_t, timeout_ms)

typedef enum xdev_collective_kind_t {
  /* recv[i] = op over ranks of send[i], i < count. */
  XDEV_COLLECTIVE_ALL_REDUCE = 1,
  /* recv[r * count + i] = send of rank r [i]: `count` elements per rank,
   * recv holds nranks * count, in rank order. */
  XDEV_COLLECTIVE_ALL_GATHER = 2,
  /* recv[i] = send of rank `root` [i], i < count; send is read on the root
   * only (elsewhere it may equal recv). */
  XDEV_COLLECTIVE_BROADCAST = 3,
  /* recv[i] = op over ranks of send[rank * count + i]: send holds
   * nranks * count, recv `count` elements (rank r keeps block r). */
  XDEV_COLLECTIVE_REDUCE_SCATTER = 4
} xdev_collective_kind_t;

/* The reduction of ALL_REDUCE and REDUCE_SCATTER. A mean is a SUM the core
 * divides afterwards. */
typedef enum xdev_reduce_op_t {
  XDEV_REDUCE_SUM = 1,
  XDEV_REDUCE_MAX = 2,
  XDEV_REDUCE_MIN = 3
} xdev_reduce_op_t;

/* One device's part of one collective. The core allocates and fills it;
 * valid for the duration of the call only (the plugin copies what it
 * enqueues). Buffers are given as (allocation, byte offset) pairs: the
 * allocation is what memory_allocate returned (the whole pool region the
 * tensor lies in), the offset where the data starts inside it, so that a
 * plugin whose memory is handles rather than addresses can resolve them.
 * Both buffers are contiguous, on the communicator's device, and either
 * identical (same allocation and offset: in place) or disjoint. */
typedef struct xdev_collective_call_t {
  size_t struct_size;
  const xdev_extension_t* ext;
  int32_t kind;         /* xdev_collective_kind_t */
  int32_t op;           /* xdev_reduce_op_t; ignored by gather, broadcast */
  xdev_dtype_t dtype;   /* of both buffers */
  int32_t root;         /* BROADCAST: the rank whose send is sent */
  void* send_allocation;
  uint64_t send_offset;
  void* recv_allocation;
  uint64_t recv_offset;
  /* Elements, as the kinds above define them (may be 0: nothing moves, but
   * every rank still takes part). */
  uint64_t count;
} xdev_collective_call_t;
#define XDEV_COLLECTIVE_CALL_STRUCT_SIZE XDEV_STRUCT_SIZE(xdev_collective_call_t, count)

/* ------------------------------------------------------------------------ */
/* The plugin's table                                                       */
/* ------------------------------------------------------------------------ */

/* Filled by the plugin, normally a `static const` object; it must stay valid
 * and unchanged until the library is unloaded. Slots marked REQUIRED must be
 * non-NULL; the core refuses a table whose `struct_size` does not cover the
 * v1.0 table or whose required slot is NULL. Unless noted, functions return
 * NULL on success or a status created with host->status_create.
 *
 * Every slot says which calls the core may make at the same time
 * ("Thread-safety:"). Two rules recur:
 *  - the stream rule: a stream is used by one thread at a time (all slots
 *    that take it, kernels included), unless the plugin declares
 *    XDEV_CAP_CONCURRENT_STREAMS; different streams are used concurrently;
 *  - a handle is never destroyed (device_close, stream_destroy,
 *    event_destroy, memory_free) while another call that takes it runs. */
typedef struct xdev_plugin_api_t {
  size_t struct_size;
  const xdev_extension_t* ext;
  /* The ABI version the plugin was compiled with: set it to
   * {XDEV_ABI_VERSION_MAJOR, XDEV_ABI_VERSION_MINOR}. */
  xdev_version_t abi_version;
  /* Short unique plugin name ("cpu", "cuda"), and its own version string. */
  const char* name;
  const char* plugin_version;
  /* XDEV_CAP_* bits. */
  uint64_t capabilities;

  /* --- life cycle --- */

  /* REQUIRED. Called once, before anything else below. Creates the plugin
   * state. A plugin that cannot work on this machine (no driver, no device)
   * should still succeed and report 0 devices; `describe_status` then says
   * why. On error the core logs the message, calls nothing else (not even
   * shutdown) and skips the plugin. Thread-safety: not called concurrently
   * with xdev_plugin_query, shutdown or another initialize. */
  xdev_status_t* (*initialize)(const xdev_plugin_init_args_t* args,
                               xdev_plugin_t** out_plugin);
  /* REQUIRED. Called once, last. Every device has been closed. Releases all
   * state; afterwards the library may be unloaded. Must not fail.
   * Thread-safety: not called concurrently with xdev_plugin_query,
   * initialize or another shutdown; every call for this instance (its
   * devices, streams, events) has returned. */
  void (*shutdown)(xdev_plugin_t* plugin);
  /* Optional. A one-line human-readable state ("2 devices", "CUDA driver not
   * found"); the string is owned by the plugin and valid until shutdown.
   * Thread-safety: thread-safe. */
  const char* (*describe_status)(xdev_plugin_t* plugin);

  /* --- types and physical devices (thread-safe, cheap, no device init) --- */

  /* REQUIRED. Device types offered: `*out_count` pointers to descriptors,
   * each with its struct_size set; the array and descriptors are owned by
   * the plugin. Thread-safety: thread-safe. */
  xdev_status_t* (*device_types)(xdev_plugin_t* plugin,
                                 const xdev_device_type_info_t* const** out_types,
                                 uint32_t* out_count);
  /* REQUIRED. Number of physical devices (of all types) this plugin sees.
   * Thread-safety: thread-safe. */
  xdev_status_t* (*device_count)(xdev_plugin_t* plugin, uint32_t* out_count);
  /* REQUIRED. Properties of physical device `ordinal` (0 ... count-1). The
   * core sets out_props->struct_size; fill what it covers. Thread-safety:
   * thread-safe, also while the device is open and in use. */
  xdev_status_t* (*device_get_properties)(xdev_plugin_t* plugin, uint32_t ordinal,
                                          xdev_device_properties_t* out_props);

  /* --- device handles --- */

  /* REQUIRED. Opens physical device `ordinal` for use (creates contexts,
   * default resources). The core opens each device at most once and only
   * those the user made visible. Thread-safety: thread-safe for different
   * ordinals; not called concurrently for one ordinal. */
  xdev_status_t* (*device_open)(xdev_plugin_t* plugin, uint32_t ordinal,
                                xdev_device_t** out_device);
  /* REQUIRED. Closes a device; all its memory, streams and events have been
   * released first. Must not fail. Thread-safety: no other call for this
   * device runs; calls for other devices may. */
  void (*device_close)(xdev_device_t* device);

  /* --- raw memory (the core pools it; thread-safe) --- */

  /* REQUIRED. Allocates `size` bytes (> 0) of device memory aligned to at
   * least `alignment`, a power of two from 1 to 4096 (the core asks for
   * 256); below 64 the plugin may align to 64. Size 0 or another alignment:
   * XDEV_STATUS_INVALID_ARGUMENT. Returns XDEV_STATUS_OUT_OF_MEMORY when the
   * device cannot satisfy the request; above the device's declared
   * max_allocation_bytes (1.5), which the core never asks for, it may return
   * XDEV_STATUS_INVALID_ARGUMENT instead. Thread-safety: thread-safe. */
  xdev_status_t* (*memory_allocate)(xdev_device_t* device, uint64_t size,
                                    uint64_t alignment, void** out_ptr);
  /* REQUIRED. Frees memory from memory_allocate. NULL is a no-op. All work
   * that uses it has completed. Thread-safety: thread-safe (for different
   * pointers; one pointer is freed once). */
  void (*memory_free)(xdev_device_t* device, void* ptr);
  /* REQUIRED. Free and total device memory in bytes, now. Thread-safety:
   * thread-safe. */
  xdev_status_t* (*memory_query)(xdev_device_t* device, uint64_t* out_free,
                                 uint64_t* out_total);
  /* Optional (XDEV_CAP_HOST_MEMORY). Page-locked host memory that copies to
   * and from this device can use at full speed. Thread-safety: thread-safe. */
  xdev_status_t* (*host_memory_allocate)(xdev_device_t* device, uint64_t size,
                                         void** out_ptr);
  /* Optional (XDEV_CAP_HOST_MEMORY). Frees memory from host_memory_allocate;
   * NULL is a no-op. Thread-safety: thread-safe (for different pointers). */
  void (*host_memory_free)(xdev_device_t* device, void* ptr);

  /* --- streams and events --- */

  /* REQUIRED. Creates an in-order queue: work enqueued on it runs in
   * enqueue order. Thread-safety: thread-safe. The new stream is then used
   * under the stream rule (above the table). */
  xdev_status_t* (*stream_create)(xdev_device_t* device, xdev_stream_t** out_stream);
  /* REQUIRED. Destroys a stream after all its work completed.
   * Thread-safety: no other call on this stream runs; other streams may be
   * in use. */
  void (*stream_destroy)(xdev_stream_t* stream);
  /* REQUIRED. Blocks until all work enqueued so far on `stream` completed;
   * returns the first asynchronous error since the last synchronize and
   * clears it (work enqueued after a failed item may be skipped; say so in
   * the plugin's documentation).
   * A fault that leaves the device unusable cannot be cleared (a sticky
   * error: CUDA's illegal address, a lost device). The plugin then returns
   * XDEV_STATUS_UNAVAILABLE naming the device, here and from every later
   * call that uses that device, and its other devices keep working. Only
   * errors that left the device usable are cleared. Thread-safety: the
   * stream rule. */
  xdev_status_t* (*stream_synchronize)(xdev_stream_t* stream);
  /* REQUIRED. Creates an event. Thread-safety: thread-safe. */
  xdev_status_t* (*event_create)(xdev_device_t* device, xdev_event_t** out_event);
  /* REQUIRED. Destroys an event. Thread-safety: no other call that takes
   * this event runs; other events may be in use. */
  void (*event_destroy)(xdev_event_t* event);
  /* REQUIRED. Marks the current end of `stream` (a stream of the event's
   * device); the event completes when all work enqueued before it completed.
   * Re-recording replaces the mark. Thread-safety: the stream rule for
   * `stream`; no other call that takes this event runs at the same time. */
  xdev_status_t* (*event_record)(xdev_event_t* event, xdev_stream_t* stream);
  /* REQUIRED. Makes later work on `stream` wait for `event` (the event may
   * belong to another stream, also of another device, of the same plugin).
   * Does not block the host. Events carry no errors. Thread-safety: the
   * stream rule for `stream`; several threads may wait for one event. */
  xdev_status_t* (*stream_wait_event)(xdev_stream_t* stream, xdev_event_t* event);
  /* REQUIRED. Blocks the host until `event` completed. An event never
   * recorded counts as completed. Thread-safety: thread-safe; several
   * threads may synchronize or query one event. */
  xdev_status_t* (*event_synchronize)(xdev_event_t* event);
  /* REQUIRED. Non-blocking: *out_done = 1 when completed, else 0.
   * Thread-safety: as event_synchronize. */
  xdev_status_t* (*event_query)(xdev_event_t* event, int32_t* out_done);

  /* --- copies (asynchronous on `stream`; sizes in bytes; with size 0 the
   * pointers are not used and may be anything). Device addresses may point
   * anywhere inside an allocation. Source and destination never overlap
   * (the core's promise; a plugin may check it and return
   * XDEV_STATUS_INVALID_ARGUMENT). Thread-safety of all four: the stream
   * rule. --- */

  /* REQUIRED (may be NULL with XDEV_CAP_HANDLE_MEMORY, which uses
   * copy_host_to_device_at instead). Host memory `src` -> device address
   * `dst`. The host buffer
   * must stay valid and unchanged until the stream passes the copy (the
   * core synchronizes or uses host memory it owns). */
  xdev_status_t* (*copy_host_to_device)(xdev_stream_t* stream, void* dst,
                                        const void* src, uint64_t size);
  /* REQUIRED (may be NULL with XDEV_CAP_HANDLE_MEMORY). Device address
   * `src` -> host memory `dst`. */
  xdev_status_t* (*copy_device_to_host)(xdev_stream_t* stream, void* dst,
                                        const void* src, uint64_t size);
  /* REQUIRED (may be NULL with XDEV_CAP_HANDLE_MEMORY). Within the
   * stream's device (regions may not overlap). */
  xdev_status_t* (*copy_device_to_device)(xdev_stream_t* stream, void* dst,
                                          const void* src, uint64_t size);
  /* Optional (XDEV_CAP_PEER_COPY; with XDEV_CAP_HANDLE_MEMORY the core
   * calls copy_peer_at instead and this may be NULL). From `src` on
   * `src_device` to `dst` on
   * the stream's device, both devices of this plugin; the work that wrote
   * `src` has completed (the core synchronizes its stream first). Returns
   * XDEV_STATUS_UNIMPLEMENTED when this pair has no direct path; the core
   * then stages through host memory. Thread-safety: the stream rule for
   * `stream`; `src_device` may be in use by other threads meanwhile. */
  xdev_status_t* (*copy_peer)(xdev_stream_t* stream, void* dst,
                              xdev_device_t* src_device, const void* src,
                              uint64_t size);

  /* --- kernels --- */

  /* REQUIRED. The kernels this plugin registers: `*out_count` pointers to
   * descriptors owned by the plugin. May be 0. Thread-safety: thread-safe. */
  xdev_status_t* (*kernels)(xdev_plugin_t* plugin,
                            const xdev_kernel_info_t* const** out_kernels,
                            uint32_t* out_count);

  /* ---- Since 1.3: DLPack stream negotiation (optional, may be NULL) ---- */
  /* The stream's native handle, as DLPack's Python protocol passes it in
   * __dlpack__(stream=...): for CUDA and ROCm the cudaStream_t / hipStream_t
   * value (1 for the legacy default stream, never 0). When the core takes
   * another library's memory in place for a device (see dlpack_device_type),
   * it hands the producer this handle so that the producer orders its
   * pending work before this stream's. A plugin whose device memory is not
   * host memory and that leaves this NULL gets such memory only through a
   * host copy from the Python protocol. Thread-safe; must not block. */
  xdev_status_t* (*stream_native_handle)(xdev_stream_t* stream, int64_t* out_handle);
  /* ---- end of 1.3 ---------------------------------------------------- */

  /* ---- Since 1.4: event timing (optional, XDEV_CAP_EVENT_TIMING) ------- */
  /* Milliseconds of device time from `start` to `end`: from when the
   * stream `start` was recorded on passed its mark to when the stream `end`
   * was recorded on passed its mark (negative when `end` came first). Both
   * events belong to one device, were recorded and have completed;
   * otherwise XDEV_STATUS_FAILED_PRECONDITION naming which ("not
   * recorded", "not completed") and nothing is written. Resolution is the
   * plugin's (CUDA: about half a microsecond; a plugin whose streams run
   * work as it is enqueued may use the host's steady clock at record
   * time). Thread-safety: thread-safe; the events are not destroyed or
   * re-recorded meanwhile. */
  xdev_status_t* (*event_elapsed_ms)(xdev_event_t* start, xdev_event_t* end, double* out_ms);
  /* ---- end of 1.4 ---------------------------------------------------- */

  /* ---- Since 1.5: per-device kernels (optional, may be NULL) ------------ */
  /* The kernels only physical device `ordinal` (0 ... device_count-1) runs,
   * in addition to those `kernels` registers for its whole type: for two
   * devices of one type that differ (one supports float64, the other not).
   * Same descriptors and ownership as `kernels` (owned by the plugin, valid
   * until shutdown); each descriptor's `type_index` must be the device's
   * type, else the core ignores it with a warning. For an op and dtypes,
   * the core prefers a kernel registered here over one of the type. May
   * report 0 kernels. Called once per device after initialize, before any
   * device is opened. NULL (also plugins before 1.5): only type kernels.
   * Thread-safety: thread-safe. */
  xdev_status_t* (*device_kernels)(xdev_plugin_t* plugin, uint32_t ordinal,
                                   const xdev_kernel_info_t* const** out_kernels,
                                   uint32_t* out_count);
  /* ---- end of 1.5 ---------------------------------------------------- */

  /* ---- Since 1.6: copies of (allocation, offset) pairs -------------------
   * The copy slots above with each device buffer named as an allocation
   * (the value memory_allocate returned, never an address the core formed)
   * and a byte offset inside it: the bytes [offset, offset + size) lie
   * inside that allocation (the core's promise; a plugin may check it and
   * return XDEV_STATUS_INVALID_ARGUMENT naming the allocation). Same rules
   * otherwise: asynchronous on `stream`, size 0 uses no pointer, regions
   * never overlap, the host buffer stays valid until the stream passes the
   * copy; thread-safety: the stream rule (for copy_peer_at also as
   * copy_peer). REQUIRED with XDEV_CAP_HANDLE_MEMORY (copy_peer_at when it
   * also declares XDEV_CAP_PEER_COPY); optional otherwise: a pointer plugin
   * may set them, and the core then calls them instead of the old slots
   * (copy_peer_at only with XDEV_CAP_PEER_COPY, like copy_peer). NULL, and
   * every plugin before 1.6: the core calls the old slots with the address
   * allocation + offset. */

  /* Host memory `src` -> `size` bytes at `dst_offset` in `dst_alloc`. */
  xdev_status_t* (*copy_host_to_device_at)(xdev_stream_t* stream, void* dst_alloc,
                                           uint64_t dst_offset, const void* src,
                                           uint64_t size);
  /* `size` bytes at `src_offset` in `src_alloc` -> host memory `dst`. */
  xdev_status_t* (*copy_device_to_host_at)(xdev_stream_t* stream, void* dst,
                                           const void* src_alloc, uint64_t src_offset,
                                           uint64_t size);
  /* Within the stream's device; the two allocations may be the same one
   * (the ranges then do not overlap). */
  xdev_status_t* (*copy_device_to_device_at)(xdev_stream_t* stream, void* dst_alloc,
                                             uint64_t dst_offset, const void* src_alloc,
                                             uint64_t src_offset, uint64_t size);
  /* From `src_alloc` + `src_offset` on `src_device` to `dst_alloc` +
   * `dst_offset` on the stream's device, both devices of this plugin; the
   * rest as copy_peer (the source's work has completed; UNIMPLEMENTED for a
   * pair without a direct path makes the core stage through the host). */
  xdev_status_t* (*copy_peer_at)(xdev_stream_t* stream, void* dst_alloc,
                                 uint64_t dst_offset, xdev_device_t* src_device,
                                 const void* src_alloc, uint64_t src_offset,
                                 uint64_t size);
  /* ---- end of 1.6 ---------------------------------------------------- */

  /* ---- Since 1.7: device collectives (optional, XDEV_CAP_COLLECTIVES) --- */
  /* docs/plugin-abi.md, "Device collectives", says how the core uses them.
   * The core calls none of them for devices of different plugins together. */

  /* Writes a new opaque bootstrap id (NCCL's ncclUniqueId) of `*out_size`
   * bytes, at most `capacity` (the core passes XDEV_COLLECTIVE_ID_MAX_SIZE),
   * into `id` (owned by the core). The core calls it in one process and
   * sends the bytes to the others; it names one group: every id is new.
   * Thread-safety: thread-safe. */
  xdev_status_t* (*collective_id)(xdev_plugin_t* plugin, uint8_t* id, size_t capacity,
                                  size_t* out_size);
  /* Joins `count` open devices of this plugin to the group `init` names,
   * device `devices[i]` as rank `ranks[i]` (distinct, in [0, nranks)), and
   * writes one communicator per device to `out_comms[i]` (an array of
   * `count` owned by the core; the communicators are the plugin's). Blocks
   * until every rank of every process joined; after init->timeout_ms
   * without them: XDEV_STATUS_UNAVAILABLE naming how many joined, and no
   * communicator is made. Thread-safety: thread-safe for different groups;
   * every device of the call is otherwise idle. */
  xdev_status_t* (*communicator_create)(xdev_plugin_t* plugin,
                                        const xdev_collective_init_t* init,
                                        xdev_device_t* const* devices, const int32_t* ranks,
                                        int32_t count, xdev_communicator_t** out_comms);
  /* Frees a communicator; all its collectives have completed (the core
   * synchronized their streams). Must not fail. Thread-safety: no other
   * call that takes this communicator runs. */
  void (*communicator_destroy)(xdev_communicator_t* comm);
  /* Tears down a communicator that may have collectives pending which will
   * never complete (a rank of another process was lost; ncclCommAbort):
   * pending and later work on its streams fails or is skipped instead of
   * waiting, so the streams drain. Frees the communicator (no destroy
   * follows). Must not fail or block on other ranks. Thread-safety: may be
   * called while another thread waits for the communicator's streams. */
  void (*communicator_abort)(xdev_communicator_t* comm);
  /* Non-blocking: NULL while the communicator is healthy, else the
   * asynchronous error that stops it (ncclCommGetAsyncError; a peer that
   * aborted). The core polls it while it waits for a collective's event.
   * Thread-safety: thread-safe. */
  xdev_status_t* (*communicator_poll)(xdev_communicator_t* comm);
  /* Enqueues one collective on each of `count` communicators of this
   * process: `calls[i]` on `comms[i]` and its device's stream
   * `streams[i]`, together (one NCCL group), and returns without waiting
   * for other ranks. The work completes on each stream when every rank
   * took part; the core records an event after it. Every rank enqueues the
   * same collectives in the same order with the same kind, op, dtype, count
   * and root (the core checks this first). Errors found at enqueue are
   * returned (nothing was enqueued on any stream); later ones come from
   * stream_synchronize or communicator_poll. Thread-safety: the stream
   * rule for each stream; one thread at a time per communicator. */
  xdev_status_t* (*collective)(xdev_communicator_t* const* comms, xdev_stream_t* const* streams,
                               const xdev_collective_call_t* calls, int32_t count);
  /* ---- end of 1.7 ---------------------------------------------------- */
} xdev_plugin_api_t;
/* The size a writer built against this header reports. */
#define XDEV_PLUGIN_API_STRUCT_SIZE XDEV_STRUCT_SIZE(xdev_plugin_api_t, collective)
/* The 1.6 table (up to `copy_peer_at`). */
#define XDEV_PLUGIN_API_STRUCT_SIZE_1_6 XDEV_STRUCT_SIZE(xdev_plugin_api_t, copy_peer_at)
/* The 1.5 table (up to `device_kernels`). */
#define XDEV_PLUGIN_API_STRUCT_SIZE_1_5 XDEV_STRUCT_SIZE(xdev_plugin_api_t, device_kernels)
/* The 1.4 table (up to `event_elapsed_ms`). */
#define XDEV_PLUGIN_API_STRUCT_SIZE_1_4 XDEV_STRUCT_SIZE(xdev_plugin_api_t, event_elapsed_ms)
/* The 1.3 table (up to `stream_native_handle`). */
#define XDEV_PLUGIN_API_STRUCT_SIZE_1_3 XDEV_STRUCT_SIZE(xdev_plugin_api_t, stream_native_handle)
/* The v1.0 table (up to `kernels`): the least the core accepts. */
#define XDEV_PLUGIN_API_STRUCT_SIZE_1_0 XDEV_STRUCT_SIZE(xdev_plugin_api_t, kernels)

/* ------------------------------------------------------------------------ */
/* The entry point                                                          */
/* ------------------------------------------------------------------------ */

/* Arguments of xdev_plugin_query. The core allocates and fills the inputs;
 * the plugin writes the outputs (only those `struct_size` covers). */
typedef struct xdev_plugin_query_args_t {
  size_t struct_size;
  const xdev_extension_t* ext;
  /* in: the range of ABI versions the core accepts (same major). */
  xdev_version_t core_min_version;
  xdev_version_t core_max_version;
  /* in: host services, valid until after shutdown. */
  const xdev_host_api_t* host;
  /* out: the plugin's table (owned by the plugin, valid until unload). */
  const xdev_plugin_api_t* plugin_api;
} xdev_plugin_query_args_t;
#define XDEV_PLUGIN_QUERY_ARGS_STRUCT_SIZE \
  XDEV_STRUCT_SIZE(xdev_plugin_query_args_t, plugin_api)

/* The entry point every plugin exports (as "xdev_plugin_query", with
 * XDEV_PLUGIN_EXPORT). Must be cheap, start no threads and touch no device:
 * the core may call it only to read the version. It writes
 * args->plugin_api and returns NULL, or a status (then it is skipped).
 * Thread-safety: not called concurrently with itself, initialize or
 * shutdown; it may be called again after shutdown. */
typedef xdev_status_t* (*xdev_plugin_query_fn_t)(xdev_plugin_query_args_t* args);

#ifdef __cplusplus
} /* extern "C" */
#endif

/* ------------------------------------------------------------------------ */
/* v1.0 sizes, frozen. The core reads no field past these for a v1.0 plugin. */
/* ------------------------------------------------------------------------ */
#if defined(__cplusplus)
#define XDEV_STATIC_ASSERT static_assert
#elif defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L
#define XDEV_STATIC_ASSERT _Static_assert
#endif

#if defined(XDEV_STATIC_ASSERT) && UINTPTR_MAX == UINT64_MAX
XDEV_STATIC_ASSERT(sizeof(xdev_version_t) == 8, "xdev_version_t changed");
XDEV_STATIC_ASSERT(sizeof(xdev_extension_t) == 24, "xdev_extension_t changed");
XDEV_STATIC_ASSERT(XDEV_HOST_API_STRUCT_SIZE == 48, "xdev_host_api_t changed");
XDEV_STATIC_ASSERT(sizeof(xdev_tensor_t) == 40, "xdev_tensor_t changed");
XDEV_STATIC_ASSERT(sizeof(xdev_attr_t) == 32, "xdev_attr_t changed");
XDEV_STATIC_ASSERT(XDEV_DEVICE_TYPE_INFO_STRUCT_SIZE_1_0 == 36, "xdev_device_type_info_t changed");
/* 1.3 */
XDEV_STATIC_ASSERT(XDEV_DEVICE_TYPE_INFO_STRUCT_SIZE == 40, "xdev_device_type_info_t 1.3 changed");
XDEV_STATIC_ASSERT(XDEV_PLUGIN_API_STRUCT_SIZE_1_3 == 272, "xdev_plugin_api_t 1.3 changed");
/* 1.4 */
XDEV_STATIC_ASSERT(XDEV_PLUGIN_API_STRUCT_SIZE_1_4 == 280, "xdev_plugin_api_t 1.4 changed");
/* 1.5 */
XDEV_STATIC_ASSERT(XDEV_PLUGIN_API_STRUCT_SIZE_1_5 == 288, "xdev_plugin_api_t 1.5 changed");
XDEV_STATIC_ASSERT(XDEV_DEVICE_PROPERTIES_STRUCT_SIZE == 92, "xdev_device_properties_t 1.5 changed");
XDEV_STATIC_ASSERT(XDEV_DEVICE_PROPERTIES_STRUCT_SIZE_1_0 == 76, "xdev_device_properties_t changed");
XDEV_STATIC_ASSERT(XDEV_KERNEL_CALL_STRUCT_SIZE_1_0 == 84, "xdev_kernel_call_t changed");
XDEV_STATIC_ASSERT(XDEV_KERNEL_INFO_STRUCT_SIZE == 64, "xdev_kernel_info_t changed");
XDEV_STATIC_ASSERT(XDEV_PLUGIN_INIT_ARGS_STRUCT_SIZE == 24, "xdev_plugin_init_args_t changed");
XDEV_STATIC_ASSERT(XDEV_PLUGIN_API_STRUCT_SIZE_1_0 == 264, "xdev_plugin_api_t changed");
XDEV_STATIC_ASSERT(XDEV_PLUGIN_QUERY_ARGS_STRUCT_SIZE == 48, "xdev_plugin_query_args_t changed");
/* Appended in 1.2. */
XDEV_STATIC_ASSERT(XDEV_KERNEL_CALL_STRUCT_SIZE_1_2 == 104, "xdev_kernel_call_t 1.2 changed");
/* 1.6 */
XDEV_STATIC_ASSERT(XDEV_PLUGIN_API_STRUCT_SIZE_1_6 == 320, "xdev_plugin_api_t 1.6 changed");
XDEV_STATIC_ASSERT(XDEV_KERNEL_CALL_STRUCT_SIZE == 112, "xdev_kernel_call_t 1.6 changed");
/* 1.7 */
XDEV_STATIC_ASSERT(XDEV_PLUGIN_API_STRUCT_SIZE == 368, "xdev_plugin_api_t 1.7 changed");
XDEV_STATIC_ASSERT(XDEV_COLLECTIVE_INIT_STRUCT_SIZE == 48, "xdev_collective_init_t changed");
XDEV_STATIC_ASSERT(XDEV_COLLECTIVE_CALL_STRUCT_SIZE == 72, "xdev_collective_call_t changed");
#endif

#endif /* XDEV_PLUGIN_H_ */
