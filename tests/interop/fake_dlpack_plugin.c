/*
 * Test fixture: a plugin whose one device ("FAKECL:0", platform "fakecl")
 * declares DLPack device type OpenCL (ABI 1.3) and offers stream handles
 * (stream_native_handle), so the in-place import of device memory other than
 * the host's, and DLPack's stream negotiation, are tested without a GPU.
 * Behind the label its memory is plain host memory (malloc), which the
 * tests' fake producers hand over; streams run synchronously; no kernels
 * (ops on its tensors run on the CPU after a copy). Not installed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xdev/plugin.h>

struct xdev_plugin_t {
  const xdev_host_api_t* host;
};
struct xdev_device_t {
  int unused;
};
struct xdev_stream_t {
  int unused;
};
struct xdev_event_t {
  int unused;
};

static const xdev_host_api_t* g_host;
static struct xdev_plugin_t g_plugin;
static struct xdev_device_t g_device;

static xdev_status_t* fail(xdev_status_code_t code, const char* what) {
  return g_host->status_create(g_host->host_context, code, what);
}

static xdev_status_t* fake_initialize(const xdev_plugin_init_args_t* args, xdev_plugin_t** out) {
  g_plugin.host = args->host;
  *out = &g_plugin;
  return NULL;
}
static void fake_shutdown(xdev_plugin_t* plugin) { (void)plugin; }

static const xdev_device_type_info_t k_type = {XDEV_DEVICE_TYPE_INFO_STRUCT_SIZE,
                                               NULL,
                                               "FAKECL",
                                               "fakecl",
                                               XDEV_PRIORITY_CPU - 20,
                                               XDEV_DLPACK_OPENCL};
static const xdev_device_type_info_t* const k_types[] = {&k_type};

static xdev_status_t* fake_device_types(xdev_plugin_t* plugin,
                                        const xdev_device_type_info_t* const** out,
                                        uint32_t* count) {
  (void)plugin;
  *out = k_types;
  *count = 1;
  return NULL;
}
static xdev_status_t* fake_device_count(xdev_plugin_t* plugin, uint32_t* count) {
  (void)plugin;
  *count = 1;
  return NULL;
}
static xdev_status_t* fake_device_get_properties(xdev_plugin_t* plugin, uint32_t ordinal,
                                                 xdev_device_properties_t* out) {
  (void)plugin;
  if (ordinal != 0) return fail(XDEV_STATUS_NOT_FOUND, "fakecl: no such device");
  out->type_index = 0;
  out->name = "Fake OpenCL Device";
  out->memory_total = (uint64_t)64 << 20;
  out->bus_id = "";
  out->numa_node = -1;
  out->description = "device: 0, name: Fake OpenCL Device";
  out->properties = NULL;
  out->property_count = 0;
  return NULL;
}
static xdev_status_t* fake_device_open(xdev_plugin_t* plugin, uint32_t ordinal,
                                       xdev_device_t** out) {
  (void)plugin;
  (void)ordinal;
  *out = &g_device;
  return NULL;
}
static void fake_device_close(xdev_device_t* device) { (void)device; }

static xdev_status_t* fake_memory_allocate(xdev_device_t* device, uint64_t size,
                                           uint64_t alignment, void** out) {
  (void)device;
  if (alignment < 64) alignment = 64;
  *out = aligned_alloc(alignment, (size + alignment - 1) / alignment * alignment);
  return *out != NULL ? NULL : fail(XDEV_STATUS_OUT_OF_MEMORY, "fakecl: out of memory");
}
static void fake_memory_free(xdev_device_t* device, void* ptr) {
  (void)device;
  free(ptr);
}
static xdev_status_t* fake_memory_query(xdev_device_t* device, uint64_t* free_bytes,
                                        uint64_t* total) {
  (void)device;
  *free_bytes = *total = (uint64_t)64 << 20;
  return NULL;
}

static struct xdev_stream_t g_stream;
static struct xdev_event_t g_event;
static xdev_status_t* fake_stream_create(xdev_device_t* device, xdev_stream_t** out) {
  (void)device;
  *out = &g_stream;
  return NULL;
}
static void fake_stream_destroy(xdev_stream_t* stream) { (void)stream; }
static xdev_status_t* fake_stream_synchronize(xdev_stream_t* stream) {
  (void)stream;
  return NULL;
}
static xdev_status_t* fake_event_create(xdev_device_t* device, xdev_event_t** out) {
  (void)device;
  *out = &g_event;
  return NULL;
}
static void fake_event_destroy(xdev_event_t* event) { (void)event; }
static xdev_status_t* fake_event_record(xdev_event_t* event, xdev_stream_t* stream) {
  (void)event;
  (void)stream;
  return NULL;
}
static xdev_status_t* fake_stream_wait_event(xdev_stream_t* stream, xdev_event_t* event) {
  (void)stream;
  (void)event;
  return NULL;
}
static xdev_status_t* fake_event_synchronize(xdev_event_t* event) {
  (void)event;
  return NULL;
}
static xdev_status_t* fake_event_query(xdev_event_t* event, int32_t* done) {
  (void)event;
  *done = 1;
  return NULL;
}
static xdev_status_t* fake_copy(xdev_stream_t* stream, void* dst, const void* src, uint64_t size) {
  (void)stream;
  if (size > 0) memcpy(dst, src, size);
  return NULL;
}
static xdev_status_t* fake_kernels(xdev_plugin_t* plugin, const xdev_kernel_info_t* const** out,
                                   uint32_t* count) {
  (void)plugin;
  *out = NULL;
  *count = 0;
  return NULL;
}

/* The handle a producer would order its work before: recognisable in tests. */
#define FAKE_STREAM_HANDLE INT64_C(0x5eed0c1)
static xdev_status_t* fake_stream_native_handle(xdev_stream_t* stream, int64_t* out) {
  (void)stream;
  *out = FAKE_STREAM_HANDLE;
  return NULL;
}

static const xdev_plugin_api_t k_api = {
    .struct_size = XDEV_PLUGIN_API_STRUCT_SIZE,
    .ext = NULL,
    .abi_version = {XDEV_ABI_VERSION_MAJOR, XDEV_ABI_VERSION_MINOR},
    .name = "fakecl",
    .plugin_version = "0",
    .capabilities = 0,
    .initialize = fake_initialize,
    .shutdown = fake_shutdown,
    .describe_status = NULL,
    .device_types = fake_device_types,
    .device_count = fake_device_count,
    .device_get_properties = fake_device_get_properties,
    .device_open = fake_device_open,
    .device_close = fake_device_close,
    .memory_allocate = fake_memory_allocate,
    .memory_free = fake_memory_free,
    .memory_query = fake_memory_query,
    .host_memory_allocate = NULL,
    .host_memory_free = NULL,
    .stream_create = fake_stream_create,
    .stream_destroy = fake_stream_destroy,
    .stream_synchronize = fake_stream_synchronize,
    .event_create = fake_event_create,
    .event_destroy = fake_event_destroy,
    .event_record = fake_event_record,
    .stream_wait_event = fake_stream_wait_event,
    .event_synchronize = fake_event_synchronize,
    .event_query = fake_event_query,
    .copy_host_to_device = fake_copy,
    .copy_device_to_host = fake_copy,
    .copy_device_to_device = fake_copy,
    .copy_peer = NULL,
    .kernels = fake_kernels,
    .stream_native_handle = fake_stream_native_handle,
};

XDEV_PLUGIN_EXPORT xdev_status_t* xdev_plugin_query(xdev_plugin_query_args_t* args) {
  g_host = args->host;
  args->plugin_api = &k_api;
  return NULL;
}
