/*
 * "handles": a plugin whose device memory is handles, not addresses (plugin
 * ABI 1.6, XDEV_CAP_HANDLE_MEMORY), like OpenCL's cl_mem. Plain C99.
 *
 * memory_allocate returns small odd integers (1, 3, 5, ...): tokens, not
 * addresses, so a core that dereferenced one, or added an offset to one and
 * passed the sum, would crash or be refused. Every copy slot and kernel
 * resolves (handle, offset) through the plugin's own table and refuses,
 * naming the handle, a handle it never returned (or already freed, or of the
 * other device) and a range [offset, offset + size) outside the allocation.
 * Its old copy slots (copy_host_to_device, ...) are NULL: only the *_at slots
 * exist.
 *
 * Type "HND", platform "handles", two devices of 16 MiB each with a largest
 * single allocation of 1 MiB and discrete memory (so the core's pool reserves
 * its limit up front in many regions: many handles, sub-allocated). Streams
 * run work as it is enqueued. Peer copies between its two devices
 * (copy_peer_at). Kernels, float32 only, any strides (offsets and stride 0
 * included): Add, AddN, Mul, Copy, Fill, and Sum, whose partial sums live in kernel
 * scratch taken with scratch_allocate_at (the core must pass
 * scratch_allocate = NULL to it).
 *
 * Built also as plugins the core must refuse (tests/abi/test_abi_1_6.cpp):
 *   XDEV_TEST_HANDLES_NO_AT     declares the bit, leaves copy_device_to_host_at NULL
 *   XDEV_TEST_HANDLES_ADDRESSABLE  declares the bit and XDEV_CAP_HOST_ADDRESSABLE
 *   XDEV_TEST_HANDLES_NO_PEER_AT   declares XDEV_CAP_PEER_COPY without copy_peer_at
 */
#define _POSIX_C_SOURCE 200112L
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xdev/plugin.h>
#include <xdev/op_names.h>

#include "../enqueue_time_events.h"

#ifndef XDEV_TEST_PLUGIN_NAME
#define XDEV_TEST_PLUGIN_NAME "handles"
#endif

#define HND_DEVICES 2
#define HND_MEMORY ((uint64_t)16 << 20)
#define HND_MAX_ALLOCATION ((uint64_t)1 << 20)
#define HND_SLOTS 512

struct xdev_plugin_t {
  int unused;
};
struct xdev_device_t {
  uint32_t ordinal;
};
struct xdev_stream_t {
  struct xdev_device_t* device;
};

/* One allocation: the handle 2 * index + 1 names slot `index`. */
struct hnd_allocation {
  char* bytes;
  uint64_t size;
  uint32_t device;
  int live;
};

static const xdev_host_api_t* g_host;
static struct xdev_device_t g_devices[HND_DEVICES] = {{0}, {1}};
static struct xdev_stream_t g_streams[HND_DEVICES] = {{&g_devices[0]}, {&g_devices[1]}};
static struct hnd_allocation g_table[HND_SLOTS];
static uint64_t g_used[HND_DEVICES];
static pthread_mutex_t g_mutex = PTHREAD_MUTEX_INITIALIZER;

static xdev_status_t* error(xdev_status_code_t code, const char* message) {
  return g_host->status_create(g_host->host_context, code, message);
}

/* The bytes [offset, offset + size) of allocation `handle` on `device`, or
 * NULL with *err set naming what is wrong. size 0 resolves to a non-NULL
 * pointer only when the handle is valid. */
static char* resolve(const void* handle, uint64_t offset, uint64_t size, uint32_t device,
                     const char* what, xdev_status_t** err) {
  char message[256];
  const uintptr_t token = (uintptr_t)handle;
  uint64_t index;
  struct hnd_allocation a;
  if (token % 2 == 0 || (index = (token - 1) / 2) >= HND_SLOTS) {
    snprintf(message, sizeof message, "handles: %s: %#lx is not a handle this plugin returned",
             what, (unsigned long)token);
    *err = error(XDEV_STATUS_INVALID_ARGUMENT, message);
    return NULL;
  }
  pthread_mutex_lock(&g_mutex);
  a = g_table[index];
  pthread_mutex_unlock(&g_mutex);
  if (!a.live || a.device != device) {
    snprintf(message, sizeof message, "handles: %s: handle %lu is %s", what,
             (unsigned long)token, !a.live ? "not allocated" : "of the other device");
    *err = error(XDEV_STATUS_INVALID_ARGUMENT, message);
    return NULL;
  }
  if (offset > a.size || size > a.size - offset) {
    snprintf(message, sizeof message,
             "handles: %s: bytes [%lu, %lu + %lu) lie outside handle %lu of %lu bytes", what,
             (unsigned long)offset, (unsigned long)offset, (unsigned long)size,
             (unsigned long)token, (unsigned long)a.size);
    *err = error(XDEV_STATUS_INVALID_ARGUMENT, message);
    return NULL;
  }
  *err = NULL;
  return a.bytes + offset;
}

static xdev_status_t* initialize(const xdev_plugin_init_args_t* args, xdev_plugin_t** out) {
  static struct xdev_plugin_t plugin;
  (void)args;
  *out = &plugin;
  return NULL;
}
static void shutdown(xdev_plugin_t* plugin) { (void)plugin; }
static const char* describe_status(xdev_plugin_t* plugin) {
  (void)plugin;
  return "2 devices whose memory is handles";
}

static const xdev_device_type_info_t k_type = {XDEV_DEVICE_TYPE_INFO_STRUCT_SIZE, NULL, "HND",
                                               "handles", 50, XDEV_DLPACK_NONE};
static const xdev_device_type_info_t* const k_types[] = {&k_type};
static xdev_status_t* device_types(xdev_plugin_t* plugin,
                                   const xdev_device_type_info_t* const** out,
                                   uint32_t* out_count) {
  (void)plugin;
  *out = k_types;
  *out_count = 1;
  return NULL;
}
static xdev_status_t* device_count(xdev_plugin_t* plugin, uint32_t* out_count) {
  (void)plugin;
  *out_count = HND_DEVICES;
  return NULL;
}
static xdev_status_t* device_get_properties(xdev_plugin_t* plugin, uint32_t ordinal,
                                            xdev_device_properties_t* out) {
  (void)plugin;
  if (ordinal >= HND_DEVICES) return error(XDEV_STATUS_NOT_FOUND, "handles: no such device");
  out->type_index = 0;
  out->name = ordinal == 0 ? "Handle Device Zero" : "Handle Device One";
  out->memory_total = HND_MEMORY;
  out->bus_id = "";
  out->numa_node = -1;
  out->description = ordinal == 0 ? "device: 0, memory: handles" : "device: 1, memory: handles";
  out->properties = NULL;
  out->property_count = 0;
  if (XDEV_HAS_FIELD(out, xdev_device_properties_t, memory_kind)) {
    out->max_allocation_bytes = HND_MAX_ALLOCATION;
    out->memory_kind = XDEV_MEMORY_KIND_DEVICE;
  }
  return NULL;
}
static xdev_status_t* device_open(xdev_plugin_t* plugin, uint32_t ordinal, xdev_device_t** out) {
  (void)plugin;
  if (ordinal >= HND_DEVICES) return error(XDEV_STATUS_NOT_FOUND, "handles: no such device");
  *out = &g_devices[ordinal];
  return NULL;
}
static void device_close(xdev_device_t* device) { (void)device; }

static xdev_status_t* memory_allocate(xdev_device_t* device, uint64_t size, uint64_t alignment,
                                      void** out) {
  uint64_t i;
  char* bytes;
  if (size == 0 || alignment == 0 || (alignment & (alignment - 1)) != 0 || alignment > 4096) {
    return error(XDEV_STATUS_INVALID_ARGUMENT, "handles: bad size or alignment");
  }
  if (size > HND_MAX_ALLOCATION) {
    return error(XDEV_STATUS_INVALID_ARGUMENT, "handles: more than 1 MiB in one allocation");
  }
  pthread_mutex_lock(&g_mutex);
  if (g_used[device->ordinal] + size > HND_MEMORY) {
    pthread_mutex_unlock(&g_mutex);
    return error(XDEV_STATUS_OUT_OF_MEMORY, "handles: device memory exhausted");
  }
  for (i = 0; i < HND_SLOTS && g_table[i].live; ++i) {
  }
  if (i == HND_SLOTS || (bytes = malloc((size_t)size)) == NULL) {
    pthread_mutex_unlock(&g_mutex);
    return error(XDEV_STATUS_OUT_OF_MEMORY, "handles: no handle left");
  }
  g_table[i].bytes = bytes;
  g_table[i].size = size;
  g_table[i].device = device->ordinal;
  g_table[i].live = 1;
  g_used[device->ordinal] += size;
  pthread_mutex_unlock(&g_mutex);
  *out = (void*)(uintptr_t)(2 * i + 1);
  return NULL;
}
static void memory_free(xdev_device_t* device, void* handle) {
  const uintptr_t token = (uintptr_t)handle;
  uint64_t index;
  if (handle == NULL || token % 2 == 0 || (index = (token - 1) / 2) >= HND_SLOTS) return;
  pthread_mutex_lock(&g_mutex);
  if (g_table[index].live && g_table[index].device == device->ordinal) {
    free(g_table[index].bytes);
    g_used[device->ordinal] -= g_table[index].size;
    g_table[index].live = 0;
  }
  pthread_mutex_unlock(&g_mutex);
}
static xdev_status_t* memory_query(xdev_device_t* device, uint64_t* out_free, uint64_t* out_total) {
  pthread_mutex_lock(&g_mutex);
  *out_free = HND_MEMORY - g_used[device->ordinal];
  pthread_mutex_unlock(&g_mutex);
  *out_total = HND_MEMORY;
  return NULL;
}

static xdev_status_t* stream_create(xdev_device_t* device, xdev_stream_t** out) {
  *out = &g_streams[device->ordinal];
  return NULL;
}
static void stream_destroy(xdev_stream_t* stream) { (void)stream; }
static xdev_status_t* stream_synchronize(xdev_stream_t* stream) {
  (void)stream;
  return NULL;
}

/* --- copies: (allocation, offset) only --- */

static xdev_status_t* copy_h2d_at(xdev_stream_t* stream, void* dst, uint64_t dst_offset,
                                  const void* src, uint64_t size) {
  xdev_status_t* err;
  char* to;
  if (size == 0) return NULL;
  to = resolve(dst, dst_offset, size, stream->device->ordinal, "copy_host_to_device_at", &err);
  if (to == NULL) return err;
  memcpy(to, src, (size_t)size);
  return NULL;
}
static xdev_status_t* copy_d2h_at(xdev_stream_t* stream, void* dst, const void* src,
                                  uint64_t src_offset, uint64_t size) {
  xdev_status_t* err;
  const char* from;
  if (size == 0) return NULL;
  from = resolve(src, src_offset, size, stream->device->ordinal, "copy_device_to_host_at", &err);
  if (from == NULL) return err;
  memcpy(dst, from, (size_t)size);
  return NULL;
}
static xdev_status_t* copy_d2d_at(xdev_stream_t* stream, void* dst, uint64_t dst_offset,
                                  const void* src, uint64_t src_offset, uint64_t size) {
  xdev_status_t* err;
  char* to;
  const char* from;
  if (size == 0) return NULL;
  to = resolve(dst, dst_offset, size, stream->device->ordinal, "copy_device_to_device_at", &err);
  if (to == NULL) return err;
  from = resolve(src, src_offset, size, stream->device->ordinal, "copy_device_to_device_at", &err);
  if (from == NULL) return err;
  memmove(to, from, (size_t)size);
  return NULL;
}
static xdev_status_t* copy_peer_at(xdev_stream_t* stream, void* dst, uint64_t dst_offset,
                                   xdev_device_t* src_device, const void* src,
                                   uint64_t src_offset, uint64_t size) {
  xdev_status_t* err;
  char* to;
  const char* from;
  if (size == 0) return NULL;
  to = resolve(dst, dst_offset, size, stream->device->ordinal, "copy_peer_at", &err);
  if (to == NULL) return err;
  from = resolve(src, src_offset, size, src_device->ordinal, "copy_peer_at", &err);
  if (from == NULL) return err;
  memcpy(to, from, (size_t)size);
  return NULL;
}

/* --- kernels (float32, any strides) --- */

static int64_t element_count(const xdev_tensor_t* t) {
  int64_t n = 1;
  int32_t k;
  for (k = 0; k < t->rank; ++k) n *= t->shape[k];
  return n;
}

/* The tensor's first byte: resolves the whole range its elements span
 * inside its allocation (strides may be 0 or negative), or NULL with *err. */
static float* tensor_base(const xdev_tensor_t* t, uint32_t device, const char* what,
                          xdev_status_t** err) {
  int64_t lo = 0, hi = 0;
  int32_t k;
  char* first;
  if (t->dtype != XDEV_DTYPE_FLOAT32) {
    *err = error(XDEV_STATUS_UNIMPLEMENTED, "handles: float32 only");
    return NULL;
  }
  if (element_count(t) == 0) {
    return (float*)resolve(t->data, t->byte_offset, 0, device, what, err);
  }
  for (k = 0; k < t->rank; ++k) {
    const int64_t reach = (t->shape[k] - 1) * t->strides[k];
    if (reach < 0) lo += reach; else hi += reach;
  }
  if ((int64_t)t->byte_offset + lo * 4 < 0) {
    *err = error(XDEV_STATUS_INVALID_ARGUMENT, "handles: a view reaches before its allocation");
    return NULL;
  }
  first = resolve(t->data, t->byte_offset + (uint64_t)(lo * 4), (uint64_t)(hi - lo + 1) * 4,
                  device, what, err);
  return first == NULL ? NULL : (float*)(first - lo * 4);
}

/* Element offset (in elements) of linear row-major index `i` of `shape`
 * under `strides`. */
static int64_t strided(int64_t i, int32_t rank, const int64_t* shape, const int64_t* strides) {
  int64_t at = 0;
  int32_t k;
  for (k = rank - 1; k >= 0; --k) {
    if (shape[k] > 0) {
      at += (i % shape[k]) * strides[k];
      i /= shape[k];
    }
  }
  return at;
}

static xdev_status_t* binary(const xdev_kernel_call_t* call, int mul) {
  xdev_status_t* err;
  const xdev_tensor_t* a = call->inputs[0];
  const xdev_tensor_t* b = call->inputs[1];
  const xdev_tensor_t* o = call->outputs[0];
  const uint32_t dev = call->device->ordinal;
  const float* x = tensor_base(a, dev, mul ? "Mul x" : "Add x", &err);
  const float* y;
  float* z;
  int64_t i, n = element_count(o);
  if (x == NULL) return err;
  if ((y = tensor_base(b, dev, mul ? "Mul y" : "Add y", &err)) == NULL) return err;
  if ((z = tensor_base(o, dev, mul ? "Mul out" : "Add out", &err)) == NULL) return err;
  for (i = 0; i < n; ++i) {
    const float u = x[strided(i, a->rank, a->shape, a->strides)];
    const float v = y[strided(i, b->rank, b->shape, b->strides)];
    z[strided(i, o->rank, o->shape, o->strides)] = mul ? u * v : u + v;
  }
  return NULL;
}
static xdev_status_t* add_kernel(void* context, const xdev_kernel_call_t* call) {
  (void)context;
  return binary(call, 0);
}
static xdev_status_t* mul_kernel(void* context, const xdev_kernel_call_t* call) {
  (void)context;
  return binary(call, 1);
}
/* AddN: the sum of any number of inputs of the output's shape (all-reduce). */
static xdev_status_t* add_n_kernel(void* context, const xdev_kernel_call_t* call) {
  xdev_status_t* err;
  const xdev_tensor_t* o = call->outputs[0];
  float* z = tensor_base(o, call->device->ordinal, "AddN out", &err);
  int64_t i, n = element_count(o);
  uint32_t k;
  (void)context;
  if (z == NULL) return err;
  for (i = 0; i < n; ++i) z[strided(i, o->rank, o->shape, o->strides)] = 0.0f;
  for (k = 0; k < call->input_count; ++k) {
    const xdev_tensor_t* a = call->inputs[k];
    const float* x = tensor_base(a, call->device->ordinal, "AddN input", &err);
    if (x == NULL) return err;
    for (i = 0; i < n; ++i) {
      z[strided(i, o->rank, o->shape, o->strides)] += x[strided(i, a->rank, a->shape, a->strides)];
    }
  }
  return NULL;
}
static xdev_status_t* copy_kernel(void* context, const xdev_kernel_call_t* call) {
  xdev_status_t* err;
  const xdev_tensor_t* a = call->inputs[0];
  const xdev_tensor_t* o = call->outputs[0];
  const float* x = tensor_base(a, call->device->ordinal, "Copy x", &err);
  float* z;
  int64_t i, n = element_count(o);
  (void)context;
  if (x == NULL) return err;
  if ((z = tensor_base(o, call->device->ordinal, "Copy out", &err)) == NULL) return err;
  for (i = 0; i < n; ++i) {
    z[strided(i, o->rank, o->shape, o->strides)] = x[strided(i, a->rank, a->shape, a->strides)];
  }
  return NULL;
}
static const xdev_attr_t* attr(const xdev_kernel_call_t* call, const char* name) {
  uint32_t i;
  for (i = 0; i < call->attr_count; ++i) {
    if (strcmp(call->attrs[i].name, name) == 0) return &call->attrs[i];
  }
  return NULL;
}
static xdev_status_t* fill_kernel(void* context, const xdev_kernel_call_t* call) {
  xdev_status_t* err;
  const xdev_tensor_t* o = call->outputs[0];
  const xdev_attr_t* value = attr(call, XDEV_ATTR_NAME_value);
  float* z = tensor_base(o, call->device->ordinal, "Fill out", &err);
  int64_t i, n = element_count(o);
  (void)context;
  if (z == NULL) return err;
  for (i = 0; i < n; ++i) {
    z[strided(i, o->rank, o->shape, o->strides)] = value != NULL ? (float)value->value.f : 0.0f;
  }
  return NULL;
}
/* Sum over `axes`: partial sums in scratch (scratch_allocate_at), one per
 * output element, then copied to the output. */
static xdev_status_t* sum_kernel(void* context, const xdev_kernel_call_t* call) {
  xdev_status_t* err;
  const xdev_tensor_t* a = call->inputs[0];
  const xdev_tensor_t* o = call->outputs[0];
  const xdev_attr_t* axes = attr(call, XDEV_ATTR_NAME_axes);
  const uint32_t dev = call->device->ordinal;
  const float* x = tensor_base(a, dev, "Sum x", &err);
  float* z;
  float* partial;
  void* scratch;
  uint64_t scratch_offset = 0;
  int64_t i, n = element_count(a), m = element_count(o);
  int reduced[XDEV_MAX_RANK] = {0};
  int32_t k;
  (void)context;
  if (x == NULL) return err;
  if ((z = tensor_base(o, dev, "Sum out", &err)) == NULL) return err;
  if (call->scratch_allocate != NULL) {
    return error(XDEV_STATUS_INTERNAL,
                 "handles: the core offered scratch_allocate (an address) to a handle plugin");
  }
  if (!XDEV_HAS_FIELD(call, xdev_kernel_call_t, scratch_allocate_at) ||
      call->scratch_allocate_at == NULL) {
    return error(XDEV_STATUS_INTERNAL, "handles: no scratch_allocate_at");
  }
  scratch = call->scratch_allocate_at(call->scratch_context, (uint64_t)(m > 0 ? m : 1) * 4,
                                      &scratch_offset);
  if (scratch == NULL) return error(XDEV_STATUS_OUT_OF_MEMORY, "handles: Sum: no scratch");
  partial = (float*)resolve(scratch, scratch_offset, (uint64_t)(m > 0 ? m : 1) * 4, dev,
                            "Sum scratch", &err);
  if (partial == NULL) return err;
  for (i = 0; i < m; ++i) partial[i] = 0.0f;
  if (axes != NULL) {
    for (i = 0; i < axes->value.ints.count; ++i) reduced[axes->value.ints.values[i]] = 1;
  }
  for (i = 0; i < n; ++i) {
    /* The output's linear index: the input's index without reduced axes. */
    int64_t rest = i, out_index = 0, scale = 1;
    for (k = a->rank - 1; k >= 0; --k) {
      const int64_t at = rest % a->shape[k];
      rest /= a->shape[k];
      if (!reduced[k]) {
        out_index += at * scale;
        scale *= a->shape[k];
      }
    }
    partial[out_index] += x[strided(i, a->rank, a->shape, a->strides)];
  }
  for (i = 0; i < m; ++i) z[strided(i, o->rank, o->shape, o->strides)] = partial[i];
  return NULL;
}

#define HND_F32 XDEV_DTYPE_BIT(XDEV_DTYPE_FLOAT32)
static const xdev_kernel_info_t k_add = {XDEV_KERNEL_INFO_STRUCT_SIZE, NULL, XDEV_OP_Add, 0, HND_F32,
                                         HND_F32, add_kernel, NULL};
static const xdev_kernel_info_t k_add_n = {XDEV_KERNEL_INFO_STRUCT_SIZE, NULL, XDEV_OP_AddN, 0,
                                           HND_F32, HND_F32, add_n_kernel, NULL};
static const xdev_kernel_info_t k_mul = {XDEV_KERNEL_INFO_STRUCT_SIZE, NULL, XDEV_OP_Mul, 0, HND_F32,
                                         HND_F32, mul_kernel, NULL};
static const xdev_kernel_info_t k_copy = {XDEV_KERNEL_INFO_STRUCT_SIZE, NULL, XDEV_OP_Copy, 0, HND_F32,
                                          HND_F32, copy_kernel, NULL};
static const xdev_kernel_info_t k_fill = {XDEV_KERNEL_INFO_STRUCT_SIZE, NULL, XDEV_OP_Fill, 0, HND_F32,
                                          HND_F32, fill_kernel, NULL};
static const xdev_kernel_info_t k_sum = {XDEV_KERNEL_INFO_STRUCT_SIZE, NULL, XDEV_OP_Sum, 0, HND_F32,
                                         HND_F32, sum_kernel, NULL};
static const xdev_kernel_info_t* const k_kernels[] = {&k_add, &k_add_n, &k_mul, &k_copy, &k_fill,
                                                      &k_sum};
static xdev_status_t* kernels(xdev_plugin_t* plugin, const xdev_kernel_info_t* const** out,
                              uint32_t* out_count) {
  (void)plugin;
  *out = k_kernels;
  *out_count = (uint32_t)(sizeof k_kernels / sizeof k_kernels[0]);
  return NULL;
}

static xdev_plugin_api_t g_api;

XDEV_PLUGIN_EXPORT xdev_status_t* xdev_plugin_query(xdev_plugin_query_args_t* args) {
  xdev_plugin_api_t* api = &g_api;
  g_host = args->host;
  memset(api, 0, sizeof *api);
  /* A plugin of ABI 1.6 (the 1.7 collective slots lie beyond its table). */
  api->struct_size = XDEV_PLUGIN_API_STRUCT_SIZE_1_6;
  api->abi_version.major = XDEV_ABI_VERSION_MAJOR;
  api->abi_version.minor = 6;
  api->name = XDEV_TEST_PLUGIN_NAME;
  api->plugin_version = "test";
  api->capabilities = XDEV_CAP_HANDLE_MEMORY | XDEV_CAP_PEER_COPY;
  api->initialize = initialize;
  api->shutdown = shutdown;
  api->describe_status = describe_status;
  api->device_types = device_types;
  api->device_count = device_count;
  api->device_get_properties = device_get_properties;
  api->device_open = device_open;
  api->device_close = device_close;
  api->memory_allocate = memory_allocate;
  api->memory_free = memory_free;
  api->memory_query = memory_query;
  api->stream_create = stream_create;
  api->stream_destroy = stream_destroy;
  api->stream_synchronize = stream_synchronize;
  api->event_create = event_create;
  api->event_destroy = event_destroy;
  api->event_record = event_record;
  api->stream_wait_event = stream_wait_event;
  api->event_synchronize = event_synchronize;
  api->event_query = event_query;
  /* copy_host_to_device, copy_device_to_host, copy_device_to_device and
   * copy_peer stay NULL: a handle plugin has only the *_at slots. */
  api->copy_host_to_device_at = copy_h2d_at;
  api->copy_device_to_host_at = copy_d2h_at;
  api->copy_device_to_device_at = copy_d2d_at;
  api->copy_peer_at = copy_peer_at;
  api->kernels = kernels;
#ifdef XDEV_TEST_HANDLES_NO_AT
  api->copy_device_to_host_at = NULL;
#endif
#ifdef XDEV_TEST_HANDLES_ADDRESSABLE
  api->capabilities |= XDEV_CAP_HOST_ADDRESSABLE;
#endif
#ifdef XDEV_TEST_HANDLES_NO_PEER_AT
  api->copy_peer_at = NULL;
#endif
  args->plugin_api = api;
  return NULL;
}
