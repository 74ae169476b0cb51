/*
 * A minimal plugin for the loader tests, in plain C99. Built once as a good
 * plugin ("minimal": type TEST, two devices, host-memory backed, synchronous
 * streams) and several times with one XDEV_TEST_* define each, to make a bad
 * plugin that the core must skip with an exact reason:
 *
 *   XDEV_TEST_NO_ENTRY      exports no xdev_plugin_query
 *   XDEV_TEST_WRONG_MAJOR   reports ABI 2.0
 *   XDEV_TEST_INIT_FAILS    initialize returns an error status
 *   XDEV_TEST_NULL_SLOT     leaves the required slot memory_allocate NULL
 *   XDEV_TEST_SMALL_TABLE   reports a table struct_size below v1.0
 *   XDEV_TEST_BAD_TYPE      device 1 claims a device type that does not exist
 *   XDEV_TEST_QUERY_FAILS   xdev_plugin_query itself returns an error
 *   XDEV_TEST_UPPER_PLATFORM  its platform is "Test" (upper case; ABI 1.5)
 *   XDEV_TEST_ZERO_MEMORY   its devices report memory_total 0 (ABI 1.5)
 *   XDEV_TEST_CAP_NO_SLOT   declares XDEV_CAP_PEER_COPY, leaves copy_peer NULL
 *   XDEV_TEST_SLOT_NO_CAP   sets copy_peer without XDEV_CAP_PEER_COPY (ABI 1.5)
 *   XDEV_TEST_HOST_PLATFORM offers type CPU on platform "host", which only
 *                           the cpu plugin may (ABI 1.5)
 *
 * and as good plugins for ABI 1.5 (tests/abi/test_abi_1_5.cpp):
 *
 *   XDEV_TEST_THIRD_CPU     "thirdcpu": type CPU on platform "thirdcpu", two
 *                           devices; device 1 declares discrete memory
 *                           (XDEV_MEMORY_KIND_DEVICE)
 *   XDEV_TEST_LIMITS        "limits": device 0 declares discrete memory and a
 *                           largest single allocation of 4 MiB, and its
 *                           memory_allocate refuses bigger requests with
 *                           INVALID_ARGUMENT; device 1 declares host memory
 *                           and registers its own Add kernel (float32 and
 *                           float64, device_kernels) besides the type's
 *                           float32 Add
 *   XDEV_TEST_ABI_1_4       "abi-1-4": a plugin of ABI 1.4: its table ends at
 *                           event_elapsed_ms; the device_kernels slot beyond
 *                           it holds a function that aborts, so a core that
 *                           read past struct_size would crash
 *   XDEV_TEST_ABI_1_5       "abi15": a plugin of ABI 1.5: its table ends at
 *                           device_kernels; two of the 1.7 collective slots
 *                           beyond it hold functions that abort, so a core
 *                           that read past struct_size would crash; it
 *                           takes the host path between processes
 *   XDEV_TEST_CRASH_DEVICE_KERNELS  "crashdevicekernels": device_kernels
 *                           aborts; the probe skips it naming that slot
 *   XDEV_TEST_SYNC_FAILS    "syncfails": stream_synchronize returns an error;
 *                           what the user gets names the slot, the plugin
 *                           file and the device
 *
 * and as a plugin of ABI 1.5 for 1.6 (tests/abi/test_abi_1_6.cpp):
 *
 *   XDEV_TEST_ABI_1_5       "abi15": its table ends at device_kernels; the
 *                           1.6 copy slots beyond it (copy_host_to_device_at,
 *                           ...) and two 1.7 collective slots hold functions
 *                           that abort, so a core that read past struct_size
 *                           would crash. Its float32
 *                           Add reads (char*)data + byte_offset, as every
 *                           pointer plugin before 1.6 did.
 *   XDEV_TEST_POINTER_AT    "pointerat": type PTR, a pointer plugin of 1.6
 *                           (its table ends at copy_peer_at; two 1.7
 *                           collective slots beyond it abort) that sets the
 *                           optional *_at copy slots; its old
 *                           copy slots abort (unless XDEV_VALIDATE is set:
 *                           the validation layer copies its canaries through
 *                           them), so the core must prefer the *_at ones. Its
 *                           float32 Add sums into scratch taken with
 *                           scratch_allocate_at, then copies it out.
 *
 * and once more as a good plugin for the interop tests (tests/interop):
 *
 *   XDEV_TEST_FAKECL        "fakecl": one device "FAKECL:0" of 64 MiB that
 *                           declares DLPack device type OpenCL (ABI 1.3) and
 *                           offers stream handles (stream_native_handle), so
 *                           the in-place import of device memory other than
 *                           the host's and DLPack's stream negotiation are
 *                           tested without a GPU. Behind the label its memory
 *                           is plain host memory, which the tests' fake
 *                           producers hand over; no kernels (ops on its
 *                           tensors run on the CPU after a copy).
 * and, for the validation layer (XDEV_VALIDATE, core/validation), as plugins
 * that load fine but misbehave, each with a float32 Add kernel:
 *
 *   XDEV_TEST_WRITES_NOTHING  Add returns success without writing its output
 *   XDEV_TEST_WRITES_PAST     Add writes one element past the end of its output
 *   XDEV_TEST_GARBAGE_STATUS  memory_query returns a pointer that is no status of
 *                             the host's status_create
 *   XDEV_TEST_MISSPELLED_OP   registers its Add kernel once more as "Addd", an op
 *                             the op table does not have
 *   XDEV_TEST_LEAKS           stream_destroy keeps the stream's memory, which
 *                             memory_query goes on counting as used
 */
#define _POSIX_C_SOURCE 200112L /* posix_memalign */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <xdev/plugin.h>

#include "enqueue_time_events.h"

#ifndef XDEV_TEST_PLUGIN_NAME
#define XDEV_TEST_PLUGIN_NAME "minimal"
#endif

/* What the plugin reports: its status line, each device's memory, its one
 * device type and its devices (at most two). */
struct test_device_info {
  const char* name;
  const char* bus_id;
  int32_t numa_node;
  const char* description;
  uint32_t property_count;
};
struct test_config {
  const char* status;
  uint64_t memory;
  xdev_device_type_info_t type;
  uint32_t device_count;
  struct test_device_info devices[2];
};

#ifdef XDEV_TEST_FAKECL
static const struct test_config k_config = {
    "1 fake OpenCL device", (uint64_t)64 << 20,
    {XDEV_DEVICE_TYPE_INFO_STRUCT_SIZE, NULL, "FAKECL", "fakecl", XDEV_PRIORITY_CPU - 20,
     XDEV_DLPACK_OPENCL},
    1, {{"Fake OpenCL Device", "", -1, "device: 0, name: Fake OpenCL Device", 0}}};
#else
#if defined(XDEV_TEST_UPPER_PLATFORM)
#define XDEV_TEST_TYPE "TEST"
#define XDEV_TEST_PLATFORM "Test"
#elif defined(XDEV_TEST_HOST_PLATFORM)
#define XDEV_TEST_TYPE "CPU"
#define XDEV_TEST_PLATFORM "host"
#elif defined(XDEV_TEST_THIRD_CPU)
#define XDEV_TEST_TYPE "CPU"
#define XDEV_TEST_PLATFORM "thirdcpu"
#elif defined(XDEV_TEST_POINTER_AT)
#define XDEV_TEST_TYPE "PTR"
#define XDEV_TEST_PLATFORM "pointerat"
#else
#define XDEV_TEST_TYPE "TEST"
#define XDEV_TEST_PLATFORM "test"
#endif
#if defined(XDEV_TEST_THIRD_CPU) || defined(XDEV_TEST_HOST_PLATFORM)
#define XDEV_TEST_PRIORITY XDEV_PRIORITY_CPU
#else
#define XDEV_TEST_PRIORITY 50
#endif
#ifdef XDEV_TEST_ZERO_MEMORY
#define XDEV_TEST_MEMORY 0
#elif defined(XDEV_TEST_LIMITS)
#define XDEV_TEST_MEMORY ((uint64_t)64 << 20)
#else
#define XDEV_TEST_MEMORY ((uint64_t)1 << 30)
#endif
static const struct test_config k_config = {
    "2 test devices", XDEV_TEST_MEMORY,
    {XDEV_DEVICE_TYPE_INFO_STRUCT_SIZE, NULL, XDEV_TEST_TYPE, XDEV_TEST_PLATFORM,
     XDEV_TEST_PRIORITY, XDEV_DLPACK_NONE},
    2,
    {{"Test Device Zero", "test:00", 0, "device: 0, name: Test Device Zero", 1},
     {"Test Device One", "test:01", 0, "device: 1, name: Test Device One", 1}}};
#endif

struct xdev_plugin_t {
  const xdev_host_api_t* host;
};
struct xdev_device_t {
  uint32_t ordinal;
};
struct xdev_stream_t {
  int unused;
};

#if defined(XDEV_TEST_WRITES_NOTHING) || defined(XDEV_TEST_WRITES_PAST) || \
    defined(XDEV_TEST_LEAKS) || defined(XDEV_TEST_LIMITS) || defined(XDEV_TEST_ABI_1_5) || \
    defined(XDEV_TEST_POINTER_AT) || defined(XDEV_TEST_MISSPELLED_OP) || \
    defined(XDEV_TEST_GARBAGE_STATUS)
#define XDEV_TEST_HAS_KERNEL 1
#endif

#ifdef XDEV_TEST_LIMITS
/* Device 0's largest single allocation. */
#define XDEV_TEST_MAX_ALLOCATION ((uint64_t)4 << 20)
#endif

static const xdev_host_api_t* g_host;
/* Bytes each device's streams hold: what memory_query reports as used. */
static uint64_t g_stream_bytes[2];
#define XDEV_TEST_STREAM_BYTES 4096
static struct xdev_device_t g_devices[2] = {{0}, {1}};
static struct xdev_stream_t g_streams[2];

static xdev_status_t* error(xdev_status_code_t code, const char* message) {
  return g_host->status_create(g_host->host_context, code, message);
}

static xdev_status_t* initialize(const xdev_plugin_init_args_t* args, xdev_plugin_t** out) {
#ifdef XDEV_TEST_INIT_FAILS
  (void)args;
  (void)out;
  return error(XDEV_STATUS_UNAVAILABLE, "simulated init failure");
#else
  struct xdev_plugin_t* plugin = malloc(sizeof *plugin);
  if (plugin == NULL) return error(XDEV_STATUS_OUT_OF_MEMORY, "no memory for plugin state");
  plugin->host = args->host;
  *out = plugin;
  return NULL;
#endif
}

static void shutdown(xdev_plugin_t* plugin) { free(plugin); }

static const char* describe_status(xdev_plugin_t* plugin) {
  (void)plugin;
  return k_config.status;
}

static const xdev_device_type_info_t* const k_types[] = {&k_config.type};

static xdev_status_t* device_types(xdev_plugin_t* plugin,
                                   const xdev_device_type_info_t* const** out_types,
                                   uint32_t* out_count) {
  (void)plugin;
  *out_types = k_types;
  *out_count = 1;
  return NULL;
}

static xdev_status_t* device_count(xdev_plugin_t* plugin, uint32_t* out_count) {
  (void)plugin;
  *out_count = k_config.device_count;
  return NULL;
}

static const xdev_property_t k_properties[] = {{"flavour", "plain"}};

static xdev_status_t* device_get_properties(xdev_plugin_t* plugin, uint32_t ordinal,
                                            xdev_device_properties_t* out) {
  (void)plugin;
  if (ordinal >= k_config.device_count) return error(XDEV_STATUS_NOT_FOUND, "no such test device");
  out->type_index = 0;
#ifdef XDEV_TEST_BAD_TYPE
  if (ordinal == 1) out->type_index = 3;
#endif
  out->name = k_config.devices[ordinal].name;
  out->memory_total = k_config.memory;
  out->bus_id = k_config.devices[ordinal].bus_id;
  out->numa_node = k_config.devices[ordinal].numa_node;
  out->description = k_config.devices[ordinal].description;
  out->property_count = k_config.devices[ordinal].property_count;
  out->properties = out->property_count > 0 ? k_properties : NULL;
#if defined(XDEV_TEST_LIMITS) || defined(XDEV_TEST_THIRD_CPU)
  /* ABI 1.5, written only when the core's struct has the fields. */
  if (XDEV_HAS_FIELD(out, xdev_device_properties_t, memory_kind)) {
#ifdef XDEV_TEST_LIMITS
    out->max_allocation_bytes = ordinal == 0 ? XDEV_TEST_MAX_ALLOCATION : 0;
    out->memory_kind = ordinal == 0 ? XDEV_MEMORY_KIND_DEVICE : XDEV_MEMORY_KIND_HOST;
#else
    out->memory_kind = ordinal == 1 ? XDEV_MEMORY_KIND_DEVICE : XDEV_MEMORY_KIND_UNDECLARED;
#endif
  }
#endif
  return NULL;
}

static xdev_status_t* device_open(xdev_plugin_t* plugin, uint32_t ordinal,
                                  xdev_device_t** out) {
  (void)plugin;
  if (ordinal >= k_config.device_count) return error(XDEV_STATUS_NOT_FOUND, "no such test device");
  *out = &g_devices[ordinal];
  return NULL;
}
static void device_close(xdev_device_t* device) { (void)device; }

static xdev_status_t* memory_allocate(xdev_device_t* device, uint64_t size,
                                      uint64_t alignment, void** out_ptr) {
#ifdef XDEV_TEST_LIMITS
  /* Like an OpenCL device: more than CL_DEVICE_MAX_MEM_ALLOC_SIZE at once is
   * an error, not an out-of-memory the pool could retry smaller. */
  if (device->ordinal == 0 && size > XDEV_TEST_MAX_ALLOCATION) {
    *out_ptr = NULL;
    return error(XDEV_STATUS_INVALID_ARGUMENT,
                 "limits: memory_allocate larger than the device's 4 MiB maximum");
  }
#endif
  (void)device;
  if (alignment < 64) alignment = 64;
  size = (size + alignment - 1) / alignment * alignment;
  if (posix_memalign(out_ptr, (size_t)alignment, (size_t)size) != 0) {
    *out_ptr = NULL;
    return error(XDEV_STATUS_OUT_OF_MEMORY, "test device out of memory");
  }
  return NULL;
}
static void memory_free(xdev_device_t* device, void* ptr) {
  (void)device;
  free(ptr);
}
#ifdef XDEV_TEST_GARBAGE_STATUS
/* Bytes that are no status of the host's status_create. */
static const char k_not_a_status[64] = "not a status";
#endif

static xdev_status_t* memory_query(xdev_device_t* device, uint64_t* out_free,
                                   uint64_t* out_total) {
  *out_free = k_config.memory - g_stream_bytes[device->ordinal];
  *out_total = k_config.memory;
#ifdef XDEV_TEST_GARBAGE_STATUS
  return (xdev_status_t*)(uintptr_t)k_not_a_status;
#else
  return NULL;
#endif
}

/* Each device has one stream object, handed out for every stream_create. */
static xdev_status_t* stream_create(xdev_device_t* device, xdev_stream_t** out) {
  *out = &g_streams[device->ordinal];
  g_stream_bytes[device->ordinal] += XDEV_TEST_STREAM_BYTES;
  return NULL;
}
static void stream_destroy(xdev_stream_t* stream) {
#ifndef XDEV_TEST_LEAKS
  g_stream_bytes[stream - g_streams] -= XDEV_TEST_STREAM_BYTES;
#else
  (void)stream;
#endif
}
/* Work runs when it is enqueued: nothing to wait for, events are complete. */
static xdev_status_t* stream_synchronize(xdev_stream_t* stream) {
  (void)stream;
#ifdef XDEV_TEST_SYNC_FAILS
  return error(XDEV_STATUS_INTERNAL, "simulated synchronize failure");
#else
  return NULL;
#endif
}

static xdev_status_t* copy(xdev_stream_t* stream, void* dst, const void* src, uint64_t size) {
  (void)stream;
  if (size > 0) memcpy(dst, src, (size_t)size);
  return NULL;
}

#ifdef XDEV_TEST_POINTER_AT
/* The old copy slots: the core must call the *_at ones instead. */
static xdev_status_t* copy_old(xdev_stream_t* stream, void* dst, const void* src, uint64_t size) {
  if (getenv("XDEV_VALIDATE") == NULL || strcmp(getenv("XDEV_VALIDATE"), "1") != 0) abort();
  return copy(stream, dst, src, size);
}
static xdev_status_t* h2d_at(xdev_stream_t* s, void* d, uint64_t o, const void* h, uint64_t n) {
  return copy(s, (char*)d + o, h, n);
}
static xdev_status_t* d2h_at(xdev_stream_t* s, void* h, const void* d, uint64_t o, uint64_t n) {
  return copy(s, h, (const char*)d + o, n);
}
static xdev_status_t* d2d_at(xdev_stream_t* s, void* d, uint64_t o, const void* r, uint64_t p,
                             uint64_t n) {
  return copy(s, (char*)d + o, (const char*)r + p, n);
}
#endif

#if defined(XDEV_TEST_CAP_NO_SLOT) || defined(XDEV_TEST_SLOT_NO_CAP)
static xdev_status_t* copy_peer(xdev_stream_t* stream, void* dst, xdev_device_t* src_device,
                                const void* src, uint64_t size) {
  (void)src_device;
  return copy(stream, dst, src, size);
}
#endif

#ifdef XDEV_TEST_HAS_KERNEL
/* out = a + b, float32, inputs and output dense of one shape. */
static xdev_status_t* add_kernel(void* context, const xdev_kernel_call_t* call) {
  const xdev_tensor_t* a = call->inputs[0];
  const xdev_tensor_t* b = call->inputs[1];
  const xdev_tensor_t* out = call->outputs[0];
  int64_t n = 1;
  int32_t k;
  (void)context;
  for (k = 0; k < out->rank; ++k) n *= out->shape[k];
  {
    const float* x = (const float*)((const char*)a->data + a->byte_offset);
    const float* y = (const float*)((const char*)b->data + b->byte_offset);
    float* z = (float*)((char*)out->data + out->byte_offset);
    int64_t i;
#ifdef XDEV_TEST_WRITES_NOTHING
    (void)x, (void)y, (void)z, (void)i;
#elif defined(XDEV_TEST_POINTER_AT)
    uint64_t offset = 0;
    char* scratch;
    if (!XDEV_HAS_FIELD(call, xdev_kernel_call_t, scratch_allocate_at) ||
        call->scratch_allocate_at == NULL) {
      return error(XDEV_STATUS_INTERNAL, "pointerat: no scratch_allocate_at");
    }
    scratch = (char*)call->scratch_allocate_at(call->scratch_context, (uint64_t)(n + 1) * 4,
                                               &offset);
    if (scratch == NULL) return error(XDEV_STATUS_OUT_OF_MEMORY, "pointerat: no scratch");
    for (i = 0; i < n; ++i) ((float*)(scratch + offset))[i] = x[i] + y[i];
    if (n > 0) memcpy(z, scratch + offset, (size_t)n * 4);
#else
    for (i = 0; i < n; ++i) z[i] = x[i] + y[i];
#endif
#ifdef XDEV_TEST_WRITES_PAST
    z[n] = 42.0f;
#endif
  }
  return NULL;
}

static const xdev_kernel_info_t k_add = {
    XDEV_KERNEL_INFO_STRUCT_SIZE, NULL, "Add", 0, XDEV_DTYPE_BIT(XDEV_DTYPE_FLOAT32),
    XDEV_DTYPE_BIT(XDEV_DTYPE_FLOAT32), add_kernel, NULL};
#ifdef XDEV_TEST_MISSPELLED_OP
/* The same kernel once more under a name the op table does not have. */
static const xdev_kernel_info_t k_misspelled = {
    XDEV_KERNEL_INFO_STRUCT_SIZE, NULL, "Addd", 0, XDEV_DTYPE_BIT(XDEV_DTYPE_FLOAT32),
    XDEV_DTYPE_BIT(XDEV_DTYPE_FLOAT32), add_kernel, NULL};
static const xdev_kernel_info_t* const k_kernels[] = {&k_add, &k_misspelled};
#else
static const xdev_kernel_info_t* const k_kernels[] = {&k_add};
#endif
#endif

#ifdef XDEV_TEST_LIMITS
/* Device 1's own Add: float32 and float64, dense, one shape. Its context
 * marks it (the tests tell it from the type's Add by it). */
static int g_device_add_marker;
static xdev_status_t* device_add_kernel(void* context, const xdev_kernel_call_t* call) {
  const xdev_tensor_t* a = call->inputs[0];
  const xdev_tensor_t* b = call->inputs[1];
  const xdev_tensor_t* out = call->outputs[0];
  int64_t n = 1, i;
  int32_t k;
  (void)context;
  for (k = 0; k < out->rank; ++k) n *= out->shape[k];
  if (out->dtype == XDEV_DTYPE_FLOAT64) {
    const double* x = (const double*)((const char*)a->data + a->byte_offset);
    const double* y = (const double*)((const char*)b->data + b->byte_offset);
    double* z = (double*)((char*)out->data + out->byte_offset);
    for (i = 0; i < n; ++i) z[i] = x[i] + y[i];
  } else {
    const float* x = (const float*)((const char*)a->data + a->byte_offset);
    const float* y = (const float*)((const char*)b->data + b->byte_offset);
    float* z = (float*)((char*)out->data + out->byte_offset);
    for (i = 0; i < n; ++i) z[i] = x[i] + y[i];
  }
  return NULL;
}
#define XDEV_TEST_F32_F64 \
  (XDEV_DTYPE_BIT(XDEV_DTYPE_FLOAT32) | XDEV_DTYPE_BIT(XDEV_DTYPE_FLOAT64))
static const xdev_kernel_info_t k_device_add = {
    XDEV_KERNEL_INFO_STRUCT_SIZE, NULL, "Add", 0, XDEV_TEST_F32_F64, XDEV_TEST_F32_F64,
    device_add_kernel, &g_device_add_marker};
static const xdev_kernel_info_t* const k_device_kernels[] = {&k_device_add};

static xdev_status_t* device_kernels(xdev_plugin_t* plugin, uint32_t ordinal,
                                     const xdev_kernel_info_t* const** out, uint32_t* out_count) {
  (void)plugin;
  *out = ordinal == 1 ? k_device_kernels : NULL;
  *out_count = ordinal == 1 ? 1 : 0;
  return NULL;
}
#endif

#if defined(XDEV_TEST_ABI_1_5) || defined(XDEV_TEST_POINTER_AT)
/* Beyond the 1.5 and 1.6 tables: a core that calls one read past
 * struct_size. */
static xdev_status_t* collective_id(xdev_plugin_t* plugin, uint8_t* id, size_t capacity,
                                    size_t* out_size) {
  (void)plugin, (void)id, (void)capacity, (void)out_size;
  abort();
}
static xdev_status_t* collective(xdev_communicator_t* const* comms, xdev_stream_t* const* streams,
                                 const xdev_collective_call_t* calls, int32_t count) {
  (void)comms, (void)streams, (void)calls, (void)count;
  abort();
}
#endif

#if defined(XDEV_TEST_ABI_1_4) || defined(XDEV_TEST_CRASH_DEVICE_KERNELS)
/* ABI_1_4: beyond the 1.4 table, a core that calls it read past struct_size.
 * CRASH_DEVICE_KERNELS: the probe must catch it and name the slot. */
static xdev_status_t* device_kernels(xdev_plugin_t* plugin, uint32_t ordinal,
                                     const xdev_kernel_info_t* const** out, uint32_t* out_count) {
  (void)plugin, (void)ordinal, (void)out, (void)out_count;
  abort();
}
#endif

#ifdef XDEV_TEST_ABI_1_5
/* Beyond the 1.5 table: a core that calls one read past struct_size. */
static xdev_status_t* h2d_at_beyond(xdev_stream_t* s, void* d, uint64_t o, const void* h,
                                    uint64_t n) {
  (void)s, (void)d, (void)o, (void)h, (void)n;
  abort();
}
static xdev_status_t* d2h_at_beyond(xdev_stream_t* s, void* h, const void* d, uint64_t o,
                                    uint64_t n) {
  (void)s, (void)h, (void)d, (void)o, (void)n;
  abort();
}
static xdev_status_t* d2d_at_beyond(xdev_stream_t* s, void* d, uint64_t o, const void* r,
                                    uint64_t p, uint64_t n) {
  (void)s, (void)d, (void)o, (void)r, (void)p, (void)n;
  abort();
}
#endif

static xdev_status_t* kernels(xdev_plugin_t* plugin, const xdev_kernel_info_t* const** out,
                              uint32_t* out_count) {
  (void)plugin;
#ifdef XDEV_TEST_HAS_KERNEL
  *out = k_kernels;
  *out_count = (uint32_t)(sizeof k_kernels / sizeof k_kernels[0]);
#else
  *out = NULL;
  *out_count = 0;
#endif
  return NULL;
}

#ifdef XDEV_TEST_FAKECL
/* The handle a producer would order its work before: recognisable in tests. */
static xdev_status_t* stream_native_handle(xdev_stream_t* stream, int64_t* out) {
  (void)stream;
  *out = INT64_C(0x5eed0c1);
  return NULL;
}
#endif

static xdev_plugin_api_t make_api(void) {
  xdev_plugin_api_t api;
  memset(&api, 0, sizeof api);
  api.struct_size = XDEV_PLUGIN_API_STRUCT_SIZE;
  api.abi_version.major = XDEV_ABI_VERSION_MAJOR;
  api.abi_version.minor = XDEV_ABI_VERSION_MINOR;
#ifdef XDEV_TEST_WRONG_MAJOR
  api.abi_version.major = 2;
  api.abi_version.minor = 0; /* "2.0", whatever the live minor is */
#endif
#ifdef XDEV_TEST_SMALL_TABLE
  api.struct_size = 100;
#endif
#ifdef XDEV_TEST_ABI_1_4
  api.struct_size = XDEV_PLUGIN_API_STRUCT_SIZE_1_4;
  api.abi_version.minor = 4;
  api.device_kernels = device_kernels; /* beyond its table: never read */
#endif
#if defined(XDEV_TEST_LIMITS) || defined(XDEV_TEST_CRASH_DEVICE_KERNELS)
  api.device_kernels = device_kernels;
#endif
#ifdef XDEV_TEST_ABI_1_5
  api.struct_size = XDEV_PLUGIN_API_STRUCT_SIZE_1_5;
  api.abi_version.minor = 5;
  api.copy_host_to_device_at = h2d_at_beyond; /* beyond its table: never read */
  api.copy_device_to_host_at = d2h_at_beyond;
  api.copy_device_to_device_at = d2d_at_beyond;
  api.collective_id = collective_id; /* 1.7, beyond its table: never read */
  api.collective = collective;
#endif
  api.name = XDEV_TEST_PLUGIN_NAME;
  api.plugin_version = "test";
  api.capabilities = 0;
  api.initialize = initialize;
  api.shutdown = shutdown;
  api.describe_status = describe_status;
  api.device_types = device_types;
  api.device_count = device_count;
  api.device_get_properties = device_get_properties;
  api.device_open = device_open;
  api.device_close = device_close;
#ifndef XDEV_TEST_NULL_SLOT
  api.memory_allocate = memory_allocate;
#else
  (void)memory_allocate;
#endif
  api.memory_free = memory_free;
  api.memory_query = memory_query;
  api.stream_create = stream_create;
  api.stream_destroy = stream_destroy;
  api.stream_synchronize = stream_synchronize;
  api.event_create = event_create;
  api.event_destroy = event_destroy;
  api.event_record = event_record;
  api.stream_wait_event = stream_wait_event;
  api.event_synchronize = event_synchronize;
  api.event_query = event_query;
  /* Host and device memory are one: the three directions are one copy. */
  api.copy_host_to_device = api.copy_device_to_host = api.copy_device_to_device = copy;
  api.kernels = kernels;
#ifdef XDEV_TEST_POINTER_AT
  api.struct_size = XDEV_PLUGIN_API_STRUCT_SIZE_1_6;
  api.abi_version.minor = 6;
  api.collective_id = collective_id; /* 1.7, beyond its table: never read */
  api.collective = collective;
  api.copy_host_to_device = api.copy_device_to_host = api.copy_device_to_device = copy_old;
  api.copy_host_to_device_at = h2d_at;
  api.copy_device_to_host_at = d2h_at;
  api.copy_device_to_device_at = d2d_at;
#endif
#ifdef XDEV_TEST_CAP_NO_SLOT
  api.capabilities |= XDEV_CAP_PEER_COPY;
  (void)copy_peer;
#endif
#ifdef XDEV_TEST_SLOT_NO_CAP
  api.copy_peer = copy_peer;
#endif
#ifdef XDEV_TEST_FAKECL
  api.stream_native_handle = stream_native_handle;
#endif
  return api;
}

static xdev_plugin_api_t g_api;

#ifdef XDEV_TEST_NO_ENTRY
XDEV_PLUGIN_EXPORT xdev_status_t* xdev_plugin_query_misspelled(xdev_plugin_query_args_t* args)
#else
XDEV_PLUGIN_EXPORT xdev_status_t* xdev_plugin_query(xdev_plugin_query_args_t* args)
#endif
{
  g_host = args->host;
#ifdef XDEV_TEST_QUERY_FAILS
  (void)make_api;
  (void)g_api;
  return error(XDEV_STATUS_FAILED_PRECONDITION, "simulated query failure");
#else
  g_api = make_api();
  args->plugin_api = &g_api;
  return NULL;
#endif
}
