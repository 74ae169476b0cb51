/*
 * An example xdev device plugin in plain C99: one device of type "EXAMPLE"
 * whose memory is ordinary host memory, synchronous streams, copies, and two
 * float32 kernels, Add and Neg (docs/ops.md). It passes `xdev-conformance`.
 *
 * Read it top to bottom with docs/plugin-guide.md beside it. Everything a
 * plugin needs comes from the SDK's headers: <xdev/plugin.h>, the ABI, and
 * <xdev/plugin_helpers.h>, header-only helpers for what every plugin repeats
 * (formatted statuses, the query's version negotiation, initialize's checks,
 * struct_size-aware properties). A plugin never links libxdev: the core hands
 * it a host table (status creation, logging) when it calls the one exported
 * function, xdev_plugin_query, at the end of this file.
 *
 * Build it out of tree (see README.md):
 *   meson setup build && meson compile -C build && meson install -C build
 */
#define _POSIX_C_SOURCE 200809L /* posix_memalign, pthreads */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <xdev/op_names.h>       /* XDEV_OP_Add, ...: the op table's names */
#include <xdev/plugin_helpers.h> /* includes <xdev/plugin.h> */

#define EXAMPLE_MEMORY_BYTES ((uint64_t)256 << 20) /* what the device "has" */
#define EXAMPLE_MIN_ALIGNMENT 64                   /* always honoured */

/* ------------------------------------------------------------------------ */
/* Handles: opaque to the core, defined here                                */
/* ------------------------------------------------------------------------ */

struct xdev_device_t {
  struct xdev_plugin_t* plugin;
  pthread_mutex_t mutex; /* guards `used`: memory calls are thread-safe */
  uint64_t used;
  int open;
};

struct xdev_plugin_t {
  const xdev_host_api_t* host;
  struct xdev_device_t device; /* the one device */
};

struct xdev_stream_t {
  struct xdev_device_t* device;
};

struct xdev_event_t {
  struct xdev_device_t* device;
};

/* The host table from xdev_plugin_query: statuses for calls whose handle is
 * NULL (so there is no plugin to ask) are made with it. */
static const xdev_host_api_t* g_host;

/* ------------------------------------------------------------------------ */
/* Statuses: NULL is success; errors are made by the host                   */
/* ------------------------------------------------------------------------ */

/* xdev_plugin_status formats the message and has the host create the status;
 * the core owns it from then on. Messages start with "example: <slot>: ". */
static xdev_status_t* error(xdev_status_code_t code, const char* slot, const char* what) {
  return xdev_plugin_status(g_host, code, "example: %s: %s", slot, what);
}

static xdev_status_t* null_argument(const char* slot, const char* argument) {
  return xdev_plugin_status(g_host, XDEV_STATUS_INVALID_ARGUMENT, "example: %s: %s is NULL",
                            slot, argument);
}

/* ------------------------------------------------------------------------ */
/* Life cycle                                                               */
/* ------------------------------------------------------------------------ */

static xdev_status_t* example_initialize(const xdev_plugin_init_args_t* args,
                                         xdev_plugin_t** out_plugin) {
  struct xdev_plugin_t* plugin;
  /* NULL arguments, arguments or a host table older than v1.0: a status. */
  xdev_status_t* status = xdev_plugin_check_init_args(g_host, args, out_plugin);
  if (status != NULL) return status;
  plugin = calloc(1, sizeof *plugin);
  if (plugin == NULL) return error(XDEV_STATUS_OUT_OF_MEMORY, "initialize", "no memory");
  plugin->host = args->host;
  plugin->device.plugin = plugin;
  pthread_mutex_init(&plugin->device.mutex, NULL);
  *out_plugin = plugin;
  return NULL;
}

static void example_shutdown(xdev_plugin_t* plugin) {
  if (plugin == NULL) return;
  pthread_mutex_destroy(&plugin->device.mutex);
  free(plugin);
}

static const char* example_describe_status(xdev_plugin_t* plugin) {
  (void)plugin;
  return "1 example device (256 MiB of host memory)";
}

/* ------------------------------------------------------------------------ */
/* Device types and devices                                                 */
/* ------------------------------------------------------------------------ */

/* The core upper-cases type names; platforms are lower case. The priority is
 * below the CPU's, so the example device never wins placement by default. Its
 * memory is plain host memory: DLPack's CPU type (ABI 1.3). */
static const xdev_device_type_info_t k_type = {XDEV_DEVICE_TYPE_INFO_STRUCT_SIZE, NULL, "EXAMPLE",
                                               "example", XDEV_PRIORITY_CPU - 10, XDEV_DLPACK_CPU};
static const xdev_device_type_info_t* const k_types[] = {&k_type};

static xdev_status_t* example_device_types(xdev_plugin_t* plugin,
                                           const xdev_device_type_info_t* const** out_types,
                                           uint32_t* out_count) {
  if (plugin == NULL) return null_argument("device_types", "plugin");
  if (out_types == NULL) return null_argument("device_types", "out_types");
  if (out_count == NULL) return null_argument("device_types", "out_count");
  *out_types = k_types;
  *out_count = 1;
  return NULL;
}

static xdev_status_t* example_device_count(xdev_plugin_t* plugin, uint32_t* out_count) {
  if (plugin == NULL) return null_argument("device_count", "plugin");
  if (out_count == NULL) return null_argument("device_count", "out_count");
  *out_count = 1;
  return NULL;
}

static const xdev_property_t k_properties[] = {{"backing", "host memory"}};

/* What device 0 reports (struct_size and ext are left to the core). */
static const xdev_device_properties_t k_device_properties = {
    .type_index = 0,
    .name = "Example Device",
    .memory_total = EXAMPLE_MEMORY_BYTES,
    .bus_id = "",
    .numa_node = -1,
    .description = "device: 0, name: Example Device, memory: 256 MiB",
    .properties = k_properties,
    .property_count = 1,
};

static xdev_status_t* example_device_get_properties(xdev_plugin_t* plugin, uint32_t ordinal,
                                                    xdev_device_properties_t* out) {
  if (plugin == NULL) return null_argument("device_get_properties", "plugin");
  if (out == NULL) return null_argument("device_get_properties", "out_props");
  if (ordinal != 0) return error(XDEV_STATUS_NOT_FOUND, "device_get_properties", "no such device");
  /* The core sized the struct: only the fields its struct_size covers are
   * written. */
  xdev_plugin_fill_properties(out, &k_device_properties);
  return NULL;
}

static xdev_status_t* example_device_open(xdev_plugin_t* plugin, uint32_t ordinal,
                                          xdev_device_t** out_device) {
  if (plugin == NULL) return null_argument("device_open", "plugin");
  if (out_device == NULL) return null_argument("device_open", "out_device");
  *out_device = NULL;
  if (ordinal != 0) return error(XDEV_STATUS_NOT_FOUND, "device_open", "no such device");
  if (plugin->device.open) {
    return error(XDEV_STATUS_FAILED_PRECONDITION, "device_open", "device 0 is already open");
  }
  plugin->device.open = 1;
  *out_device = &plugin->device;
  return NULL;
}

static void example_device_close(xdev_device_t* device) {
  if (device != NULL) device->open = 0;
}

/* ------------------------------------------------------------------------ */
/* Memory: host memory with a 256 MiB budget                                */
/* ------------------------------------------------------------------------ */

/* Each block is [header | user bytes]; the header (one alignment unit, at
 * least 64 bytes) records where the block starts and how big it is. */
struct block_header {
  void* base;
  uint64_t size;
};

static xdev_status_t* example_memory_allocate(xdev_device_t* device, uint64_t size,
                                              uint64_t alignment, void** out_ptr) {
  const char* slot = "memory_allocate";
  void* base = NULL;
  struct block_header* header;
  uint64_t free_bytes;
  int over;
  if (device == NULL) return null_argument(slot, "device");
  if (out_ptr == NULL) return null_argument(slot, "out_ptr");
  *out_ptr = NULL;
  if (size == 0) return error(XDEV_STATUS_INVALID_ARGUMENT, slot, "size is 0 (must be > 0)");
  if (alignment == 0 || (alignment & (alignment - 1)) != 0) {
    return xdev_plugin_status(g_host, XDEV_STATUS_INVALID_ARGUMENT,
                              "example: %s: alignment %llu is not a power of two", slot,
                              (unsigned long long)alignment);
  }
  if (alignment < EXAMPLE_MIN_ALIGNMENT) alignment = EXAMPLE_MIN_ALIGNMENT;
  pthread_mutex_lock(&device->mutex);
  free_bytes = EXAMPLE_MEMORY_BYTES - device->used;
  over = size > free_bytes;
  if (!over) device->used += size;
  pthread_mutex_unlock(&device->mutex);
  if (over) {
    return xdev_plugin_status(g_host, XDEV_STATUS_OUT_OF_MEMORY,
                              "example: %s: cannot allocate %llu bytes: %llu of %llu bytes are "
                              "free",
                              slot, (unsigned long long)size, (unsigned long long)free_bytes,
                              (unsigned long long)EXAMPLE_MEMORY_BYTES);
  }
  if (posix_memalign(&base, (size_t)alignment, (size_t)(alignment + size)) != 0) {
    pthread_mutex_lock(&device->mutex);
    device->used -= size;
    pthread_mutex_unlock(&device->mutex);
    return error(XDEV_STATUS_OUT_OF_MEMORY, slot, "the host allocator failed");
  }
  header = (struct block_header*)((char*)base + alignment - sizeof *header);
  header->base = base;
  header->size = size;
  *out_ptr = (char*)base + alignment;
  return NULL;
}

static void example_memory_free(xdev_device_t* device, void* ptr) {
  const struct block_header* header;
  if (device == NULL || ptr == NULL) return;
  header = (const struct block_header*)((char*)ptr - sizeof *header);
  pthread_mutex_lock(&device->mutex);
  device->used -= header->size;
  pthread_mutex_unlock(&device->mutex);
  free(header->base);
}

static xdev_status_t* example_memory_query(xdev_device_t* device, uint64_t* out_free,
                                           uint64_t* out_total) {
  if (device == NULL) return null_argument("memory_query", "device");
  if (out_free == NULL) return null_argument("memory_query", "out_free");
  if (out_total == NULL) return null_argument("memory_query", "out_total");
  pthread_mutex_lock(&device->mutex);
  *out_free = EXAMPLE_MEMORY_BYTES - device->used;
  pthread_mutex_unlock(&device->mutex);
  *out_total = EXAMPLE_MEMORY_BYTES;
  return NULL;
}

/* ------------------------------------------------------------------------ */
/* Streams and events: work runs when it is enqueued, so both are trivial   */
/* ------------------------------------------------------------------------ */

static xdev_status_t* example_stream_create(xdev_device_t* device, xdev_stream_t** out_stream) {
  struct xdev_stream_t* stream;
  if (device == NULL) return null_argument("stream_create", "device");
  if (out_stream == NULL) return null_argument("stream_create", "out_stream");
  stream = malloc(sizeof *stream);
  if (stream == NULL) return error(XDEV_STATUS_OUT_OF_MEMORY, "stream_create", "no memory");
  stream->device = device;
  *out_stream = stream;
  return NULL;
}

static void example_stream_destroy(xdev_stream_t* stream) { free(stream); }

static xdev_status_t* example_stream_synchronize(xdev_stream_t* stream) {
  return stream == NULL ? null_argument("stream_synchronize", "stream") : NULL;
}

static xdev_status_t* example_event_create(xdev_device_t* device, xdev_event_t** out_event) {
  struct xdev_event_t* event;
  if (device == NULL) return null_argument("event_create", "device");
  if (out_event == NULL) return null_argument("event_create", "out_event");
  event = malloc(sizeof *event);
  if (event == NULL) return error(XDEV_STATUS_OUT_OF_MEMORY, "event_create", "no memory");
  event->device = device;
  *out_event = event;
  return NULL;
}

static void example_event_destroy(xdev_event_t* event) { free(event); }

static xdev_status_t* example_event_record(xdev_event_t* event, xdev_stream_t* stream) {
  if (event == NULL) return null_argument("event_record", "event");
  if (stream == NULL) return null_argument("event_record", "stream");
  return NULL; /* everything before it has already run */
}

static xdev_status_t* example_stream_wait_event(xdev_stream_t* stream, xdev_event_t* event) {
  if (stream == NULL) return null_argument("stream_wait_event", "stream");
  if (event == NULL) return null_argument("stream_wait_event", "event");
  return NULL;
}

static xdev_status_t* example_event_synchronize(xdev_event_t* event) {
  return event == NULL ? null_argument("event_synchronize", "event") : NULL;
}

static xdev_status_t* example_event_query(xdev_event_t* event, int32_t* out_done) {
  if (event == NULL) return null_argument("event_query", "event");
  if (out_done == NULL) return null_argument("event_query", "out_done");
  *out_done = 1;
  return NULL;
}

/* ------------------------------------------------------------------------ */
/* Copies: device memory is host memory, so all three are memcpy            */
/* ------------------------------------------------------------------------ */

static xdev_status_t* copy_bytes(const char* slot, xdev_stream_t* stream, void* dst,
                                 const void* src, uint64_t size) {
  if (stream == NULL) return null_argument(slot, "stream");
  if (size == 0) return NULL;
  if (dst == NULL) return null_argument(slot, "dst");
  if (src == NULL) return null_argument(slot, "src");
  memcpy(dst, src, (size_t)size);
  return NULL;
}

static xdev_status_t* example_copy_host_to_device(xdev_stream_t* stream, void* dst,
                                                  const void* src, uint64_t size) {
  return copy_bytes("copy_host_to_device", stream, dst, src, size);
}

static xdev_status_t* example_copy_device_to_host(xdev_stream_t* stream, void* dst,
                                                  const void* src, uint64_t size) {
  return copy_bytes("copy_device_to_host", stream, dst, src, size);
}

static xdev_status_t* example_copy_device_to_device(xdev_stream_t* stream, void* dst,
                                                    const void* src, uint64_t size) {
  return copy_bytes("copy_device_to_device", stream, dst, src, size);
}

/* ------------------------------------------------------------------------ */
/* Kernels: Add and Neg for float32, any input strides (docs/ops.md)        */
/* ------------------------------------------------------------------------ */

/* Address of row-major element `i` of `t` (strides in elements, may be 0). */
static float* element(const xdev_tensor_t* t, int64_t i) {
  int64_t offset = 0;
  int k;
  for (k = t->rank - 1; k >= 0; --k) {
    offset += (i % t->shape[k]) * t->strides[k];
    i /= t->shape[k];
  }
  return (float*)((char*)t->data + t->byte_offset) + offset;
}

static int64_t element_count(const xdev_tensor_t* t) {
  int64_t n = 1;
  int k;
  for (k = 0; k < t->rank; ++k) n *= t->shape[k];
  return n;
}

/* Checks what the core promises anyway, so a bad call is a status, never a
 * crash: counts, dtypes, and inputs with the output's shape. */
static xdev_status_t* check_call(const xdev_kernel_call_t* call, uint32_t inputs) {
  uint32_t i;
  int k;
  const xdev_tensor_t* out;
  if (call == NULL) return null_argument("kernel", "call");
  if (call->input_count != inputs || call->output_count != 1 || call->outputs == NULL ||
      call->outputs[0] == NULL || (inputs > 0 && call->inputs == NULL)) {
    return error(XDEV_STATUS_INVALID_ARGUMENT, call->op, "wrong number of inputs or outputs");
  }
  out = call->outputs[0];
  for (i = 0; i < inputs; ++i) {
    const xdev_tensor_t* in = call->inputs[i];
    if (in == NULL) return error(XDEV_STATUS_INVALID_ARGUMENT, call->op, "an input is NULL");
    if (in->dtype != XDEV_DTYPE_FLOAT32) {
      return error(XDEV_STATUS_UNIMPLEMENTED, call->op, "only float32 is supported");
    }
    if (in->rank != out->rank) {
      return error(XDEV_STATUS_INVALID_ARGUMENT, call->op, "input and output ranks differ");
    }
    for (k = 0; k < out->rank; ++k) {
      if (in->shape[k] != out->shape[k]) {
        return error(XDEV_STATUS_INVALID_ARGUMENT, call->op, "input and output shapes differ");
      }
    }
  }
  if (out->dtype != XDEV_DTYPE_FLOAT32) {
    return error(XDEV_STATUS_UNIMPLEMENTED, call->op, "only float32 is supported");
  }
  return NULL;
}

static xdev_status_t* example_add(void* context, const xdev_kernel_call_t* call) {
  xdev_status_t* status = check_call(call, 2);
  int64_t i, n;
  (void)context;
  if (status != NULL) return status;
  n = element_count(call->outputs[0]);
  for (i = 0; i < n; ++i) {
    *element(call->outputs[0], i) = *element(call->inputs[0], i) + *element(call->inputs[1], i);
  }
  return NULL;
}

static xdev_status_t* example_neg(void* context, const xdev_kernel_call_t* call) {
  xdev_status_t* status = check_call(call, 1);
  int64_t i, n;
  (void)context;
  if (status != NULL) return status;
  n = element_count(call->outputs[0]);
  for (i = 0; i < n; ++i) *element(call->outputs[0], i) = -*element(call->inputs[0], i);
  return NULL;
}

#define F32 XDEV_DTYPE_BIT(XDEV_DTYPE_FLOAT32)
static const xdev_kernel_info_t k_add = {
    XDEV_KERNEL_INFO_STRUCT_SIZE, NULL, XDEV_OP_Add, 0, F32, F32, example_add, NULL};
static const xdev_kernel_info_t k_neg = {
    XDEV_KERNEL_INFO_STRUCT_SIZE, NULL, XDEV_OP_Neg, 0, F32, F32, example_neg, NULL};
static const xdev_kernel_info_t* const k_kernels[] = {&k_add, &k_neg};

static xdev_status_t* example_kernels(xdev_plugin_t* plugin,
                                      const xdev_kernel_info_t* const** out_kernels,
                                      uint32_t* out_count) {
  if (plugin == NULL) return null_argument("kernels", "plugin");
  if (out_kernels == NULL) return null_argument("kernels", "out_kernels");
  if (out_count == NULL) return null_argument("kernels", "out_count");
  *out_kernels = k_kernels;
  *out_count = 2;
  return NULL;
}

/* ------------------------------------------------------------------------ */
/* The table and the entry point                                            */
/* ------------------------------------------------------------------------ */

/* Normally a static const object: it must stay valid and unchanged while the
 * library is loaded. Optional slots left out are NULL. */
static const xdev_plugin_api_t k_api = {
    .struct_size = XDEV_PLUGIN_API_STRUCT_SIZE,
    .ext = NULL,
    .abi_version = {XDEV_ABI_VERSION_MAJOR, XDEV_ABI_VERSION_MINOR},
    .name = "example",
    .plugin_version = "0.1.0",
    /* Device memory is host memory: the core may read it with the CPU. */
    .capabilities = XDEV_CAP_HOST_ADDRESSABLE,
    .initialize = example_initialize,
    .shutdown = example_shutdown,
    .describe_status = example_describe_status,
    .device_types = example_device_types,
    .device_count = example_device_count,
    .device_get_properties = example_device_get_properties,
    .device_open = example_device_open,
    .device_close = example_device_close,
    .memory_allocate = example_memory_allocate,
    .memory_free = example_memory_free,
    .memory_query = example_memory_query,
    .stream_create = example_stream_create,
    .stream_destroy = example_stream_destroy,
    .stream_synchronize = example_stream_synchronize,
    .event_create = example_event_create,
    .event_destroy = example_event_destroy,
    .event_record = example_event_record,
    .stream_wait_event = example_stream_wait_event,
    .event_synchronize = example_event_synchronize,
    .event_query = example_event_query,
    .copy_host_to_device = example_copy_host_to_device,
    .copy_device_to_host = example_copy_device_to_host,
    .copy_device_to_device = example_copy_device_to_device,
    .kernels = example_kernels,
};

/* The one exported symbol (XDEV_PLUGIN_ENTRY_POINT: C linkage, default
 * visibility). Cheap: hands over the table, starts nothing. It keeps the
 * core's host table for statuses of calls with a NULL handle;
 * xdev_plugin_query_answer checks that the core's arguments hold a table
 * pointer and that the core accepts this plugin's ABI version, then writes
 * args->plugin_api (or returns an ABI_MISMATCH status naming both versions). */
XDEV_PLUGIN_ENTRY_POINT xdev_status_t* xdev_plugin_query(xdev_plugin_query_args_t* args) {
  const xdev_host_api_t* host = xdev_plugin_query_host(args);
  if (host != NULL) g_host = host;
  return xdev_plugin_query_answer(args, &k_api);
}
