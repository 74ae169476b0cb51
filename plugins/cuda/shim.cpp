// The cuda plugin as the core loads it: a thin library (`xdev_plugin_cuda.so`)
// that maps no CUDA library until it knows a device is there.
//
// A process that only lists its devices must not pay for the CUDA runtime and
// cuBLAS (about 200 MiB mapped and 70 ms on a machine with the toolkit and no
// GPU). So this library links nothing of CUDA. `initialize` first looks for
// the driver (`dlopen("libcuda.so.1")`, microseconds when it is missing), then
// asks it for devices (cuInit, cuDeviceGetCount). Only when there is one does
// it load the implementation, `cuda_impl/xdev_cuda_impl.so` beside this file
// (found through dladdr, so an installed tree can move), which links the CUDA
// runtime and loads cuBLAS at its first stream. Without a device the plugin
// reports zero devices, no kernels, and the reason ("CUDA driver not found").
//
// The table below forwards every slot to the implementation's table. Device,
// memory, stream and event handles are the implementation's own objects; only
// the plugin handle is wrapped (it carries the reason when there is no
// implementation).
#include <xdev/plugin.h>
#include <xdev/plugin_helpers.hpp>

#include <dlfcn.h>

#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>

#include "cuda_plugin_config.hpp"
#include "gpu_type.hpp"

static_assert(XDEV_ABI_VERSION_MAJOR == 1, "the cuda plugin implements ABI major version 1");

namespace xdev::cuda_shim {
namespace {

namespace ph = xdev::plugin_helpers;

// The driver API entry points the shim needs, with the driver's types
// spelled out (cuda.h is not needed for four functions): CUresult is an int,
// CUDA_SUCCESS 0, CUDA_ERROR_NO_DEVICE 100.
using CuInit = int (*)(unsigned int flags);
using CuDriverGetVersion = int (*)(int* version);
using CuDeviceGetCount = int (*)(int* count);
using CuGetErrorString = int (*)(int error, const char** text);
using CuGetErrorName = int (*)(int error, const char** name);
constexpr int kCudaErrorNoDevice = 100;
constexpr int kCudaErrorInsufficientDriver = 35;

// The symbol the implementation exports instead of xdev_plugin_query, so the
// core never takes it for a plugin of its own.
constexpr const char* kImplEntry = "xdev_cuda_impl_query";
// Where the implementation lives, relative to this library's directory.
constexpr const char* kImplRelativePath = "cuda_impl/xdev_cuda_impl.so";

std::string version_text(int version) {
  // CUDA encodes 13.0 as 13000.
  return std::to_string(version / 1000) + "." + std::to_string((version % 1000) / 10);
}

// The oldest driver branch that runs a CUDA major version (NVIDIA's CUDA
// compatibility table); 0 when unknown.
int minimum_driver_branch(int cuda_major) {
  switch (cuda_major) {
    case 11: return 450;
    case 12: return 525;
    case 13: return 580;
    default: return 0;
  }
}

// The host table of the latest query (for NULL handles), statuses and log
// lines, the exception guard and the query answer: the SDK's plugin helpers.
constinit ph::PluginHost g_host{"cuda"};

// ---------------------------------------------------------------------------
// Looking for the driver and devices

struct DriverProbe {
  bool has_devices = false;
  std::string reason;  // why there is no device (when has_devices is false)
  std::string detail;  // for the debug log
};

std::string visible_note() {
  const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
  if (visible == nullptr) return "";
  return std::string(" (CUDA_VISIBLE_DEVICES=\"") + visible + "\")";
}

std::string driver_error_text(void* driver, int error) {
  const char* name = nullptr;
  const char* text = nullptr;
  if (auto get_name = reinterpret_cast<CuGetErrorName>(dlsym(driver, "cuGetErrorName"))) {
    if (get_name(error, &name) != 0) name = nullptr;
  }
  if (auto get_text = reinterpret_cast<CuGetErrorString>(dlsym(driver, "cuGetErrorString"))) {
    if (get_text(error, &text) != 0) text = nullptr;
  }
  return std::string(text != nullptr ? text : "unknown error") + " (" +
         (name != nullptr ? name : "CUresult " + std::to_string(error)) + ")";
}

// Loads the driver library (kept for the process, as the runtime would) and
// asks it whether there is a device this plugin can use.
DriverProbe probe_driver() {
  DriverProbe probe;
  void* driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (driver == nullptr) {
    const char* error = dlerror();
    probe.reason = "CUDA driver not found";
    probe.detail = std::string("dlopen(libcuda.so.1): ") + (error != nullptr ? error : "?");
    return probe;
  }
  auto get_version = reinterpret_cast<CuDriverGetVersion>(dlsym(driver, "cuDriverGetVersion"));
  auto init = reinterpret_cast<CuInit>(dlsym(driver, "cuInit"));
  auto get_count = reinterpret_cast<CuDeviceGetCount>(dlsym(driver, "cuDeviceGetCount"));
  if (get_version == nullptr || init == nullptr || get_count == nullptr) {
    probe.reason = "CUDA driver unusable: libcuda.so.1 lacks cuInit, cuDriverGetVersion or "
                   "cuDeviceGetCount";
    return probe;
  }
  // The runtime of the toolkit the plugin was built with runs on a driver of
  // the same major CUDA version or newer (minor version compatibility).
  int driver_version = 0;
  if (const int e = get_version(&driver_version); e != 0) {
    probe.reason = "CUDA unavailable: cuDriverGetVersion: " + driver_error_text(driver, e);
    return probe;
  }
  const int needed = XDEV_CUDA_TOOLKIT_VERSION;
  if (driver_version / 1000 < needed / 1000) {
    const int branch = minimum_driver_branch(needed / 1000);
    probe.reason = "CUDA driver too old: it supports CUDA " + version_text(driver_version) +
                   ", the plugin needs CUDA " + version_text(needed);
    if (branch > 0) {
      probe.reason += " (NVIDIA driver R" + std::to_string(branch) + " or newer)";
    }
    return probe;
  }
  if (const int e = init(0); e != 0) {
    if (e == kCudaErrorNoDevice) {
      probe.reason = "no CUDA-capable device" + visible_note();
    } else if (e == kCudaErrorInsufficientDriver) {
      probe.reason = "CUDA driver too old: cuInit says " + driver_error_text(driver, e);
    } else {
      probe.reason = "CUDA unavailable: " + driver_error_text(driver, e) + visible_note();
    }
    return probe;
  }
  int count = 0;
  if (const int e = get_count(&count); e != 0) {
    probe.reason = "CUDA unavailable: " + driver_error_text(driver, e) + visible_note();
    return probe;
  }
  if (count <= 0) {
    probe.reason = "no CUDA-capable device" + visible_note();
    return probe;
  }
  probe.has_devices = true;
  return probe;
}

// ---------------------------------------------------------------------------
// The implementation library

struct Impl {
  const xdev_plugin_api_t* api = nullptr;  // its table
  std::string error;                       // why it could not be loaded
};

// This library's directory, through dladdr on one of its own functions.
std::string own_directory() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<const void*>(&own_directory), &info) == 0 ||
      info.dli_fname == nullptr) {
    return "";
  }
  std::string path = info.dli_fname;
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? std::string(".") : path.substr(0, slash);
}

std::mutex g_impl_mutex;
Impl* g_impl = nullptr;  // loaded once, never unloaded (RTLD_NODELETE)

// The implementation's table, loading it at the first call. Thread-safe.
// A status the implementation's query returned (it belongs to the core) goes
// to *out_status, for initialize to hand over.
const Impl& load_impl(const xdev_host_api_t* host, xdev_status_t** out_status) {
  std::lock_guard lock(g_impl_mutex);
  if (g_impl != nullptr) return *g_impl;
  auto* impl = new Impl;
  const std::string path = own_directory() + "/" + kImplRelativePath;
  // RTLD_NODELETE: the CUDA runtime starts threads that outlive shutdown.
  void* library = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  if (library == nullptr) {
    const char* error = dlerror();
    impl->error = "cannot load the CUDA implementation " + path + ": " +
                  (error != nullptr ? error : "?");
  } else if (auto query = reinterpret_cast<xdev_plugin_query_fn_t>(dlsym(library, kImplEntry));
             query == nullptr) {
    impl->error = path + " has no entry " + kImplEntry;
  } else {
    xdev_plugin_query_args_t args{};
    args.struct_size = XDEV_PLUGIN_QUERY_ARGS_STRUCT_SIZE;
    args.core_min_version = {XDEV_ABI_VERSION_MAJOR, 0};
    args.core_max_version = {XDEV_ABI_VERSION_MAJOR, XDEV_ABI_VERSION_MINOR};
    args.host = host;
    if (xdev_status_t* s = query(&args)) {
      impl->error = path + ": " + kImplEntry + " failed";
      *out_status = s;
    } else if (args.plugin_api == nullptr) {
      impl->error = path + ": " + kImplEntry + " returned no table";
    } else {
      impl->api = args.plugin_api;
    }
  }
  g_impl = impl;
  return *impl;
}

const xdev_plugin_api_t* impl_api() {
  std::lock_guard lock(g_impl_mutex);
  return g_impl != nullptr ? g_impl->api : nullptr;
}

}  // namespace
}  // namespace xdev::cuda_shim

// One initialized plugin: the implementation's instance, or the reason why
// there is none.
struct xdev_plugin_t {
  const xdev_host_api_t* host = nullptr;
  xdev_plugin_t* impl = nullptr;  // the implementation's own plugin handle
  std::string status;             // describe_status without an implementation
};

namespace xdev::cuda_shim {
namespace {

// What a slot that takes a device, stream or event answers while no
// implementation is loaded: such handles cannot exist, so the argument is
// NULL or not one of ours.
xdev_status_t* no_implementation(const char* slot, const char* argument, const void* value) {
  if (value == nullptr) {
    return g_host.fail(g_host.fallback(), XDEV_STATUS_INVALID_ARGUMENT, "%s: %s is NULL", slot,
                       argument);
  }
  return g_host.fail(g_host.fallback(), XDEV_STATUS_INVALID_ARGUMENT,
                     "%s: %s is not a handle of the cuda plugin, which has no device open", slot,
                     argument);
}

xdev_status_t* null_plugin(const char* slot) {
  return g_host.fail(g_host.fallback(), XDEV_STATUS_INVALID_ARGUMENT, "%s: plugin is NULL", slot);
}

// ---- life cycle -------------------------------------------------------------

xdev_status_t* shim_initialize(const xdev_plugin_init_args_t* args,
                               xdev_plugin_t** out_plugin) noexcept {
  constexpr const char* kSlot = "initialize";
  const xdev_host_api_t* host = g_host.fallback();
  if (out_plugin == nullptr) {
    return g_host.fail(host, XDEV_STATUS_INVALID_ARGUMENT, "%s: out_plugin is NULL", kSlot);
  }
  *out_plugin = nullptr;
  if (args == nullptr)
    return g_host.fail(host, XDEV_STATUS_INVALID_ARGUMENT, "%s: args is NULL", kSlot);
  if (!XDEV_HAS_FIELD(args, xdev_plugin_init_args_t, host)) {
    return g_host.fail(host, XDEV_STATUS_ABI_MISMATCH,
                       "%s: args->struct_size is %zu bytes; ABI v1.0 init arguments need %zu",
                       kSlot, args->struct_size,
                       static_cast<size_t>(XDEV_PLUGIN_INIT_ARGS_STRUCT_SIZE));
  }
  if (!xdev_plugin_can_create_status(args->host)) {
    return g_host.fail(host, XDEV_STATUS_INVALID_ARGUMENT,
                       "%s: args->host is NULL or has no status_create", kSlot);
  }
  host = args->host;
  return g_host.guard(host, kSlot, [&]() -> xdev_status_t* {
    auto* plugin = new xdev_plugin_t;
    plugin->host = host;
    const DriverProbe probe = probe_driver();
    if (!probe.has_devices) {
      plugin->status = probe.reason;
      g_host.log(host, XDEV_LOG_DEBUG, "no devices: %s%s%s", probe.reason.c_str(),
                 probe.detail.empty() ? "" : "; ", probe.detail.c_str());
      *out_plugin = plugin;
      return nullptr;
    }
    xdev_status_t* query_status = nullptr;
    const Impl& impl = load_impl(host, &query_status);
    if (query_status != nullptr) {
      delete plugin;
      return query_status;  // made with the host's status_create: the core owns it
    }
    if (impl.api == nullptr) {
      plugin->status = "CUDA runtime unavailable: " + impl.error;
      g_host.log(host, XDEV_LOG_WARNING, "%s", plugin->status.c_str());
      *out_plugin = plugin;
      return nullptr;
    }
    if (xdev_status_t* s = impl.api->initialize(args, &plugin->impl)) {
      delete plugin;
      return s;  // made with the host's status_create: the core owns it
    }
    *out_plugin = plugin;
    return nullptr;
  });
}

void shim_shutdown(xdev_plugin_t* plugin) noexcept {
  if (plugin == nullptr) return;
  if (plugin->impl != nullptr) {
    if (const xdev_plugin_api_t* api = impl_api()) api->shutdown(plugin->impl);
  }
  delete plugin;
}

const char* shim_describe_status(xdev_plugin_t* plugin) noexcept {
  if (plugin == nullptr) return "invalid plugin handle (NULL)";
  if (plugin->impl != nullptr) return impl_api()->describe_status(plugin->impl);
  return plugin->status.c_str();
}

// ---- types and physical devices ---------------------------------------------

using cuda_common::kDeviceTypes;  // gpu_type.hpp

xdev_status_t* shim_device_types(xdev_plugin_t* plugin,
                                 const xdev_device_type_info_t* const** out_types,
                                 uint32_t* out_count) noexcept {
  constexpr const char* kSlot = "device_types";
  if (plugin == nullptr) return null_plugin(kSlot);
  if (plugin->impl != nullptr) return impl_api()->device_types(plugin->impl, out_types, out_count);
  return g_host.hand_out(plugin->host, kSlot, "out_types", kDeviceTypes, 1, out_types, out_count);
}

xdev_status_t* shim_device_count(xdev_plugin_t* plugin, uint32_t* out_count) noexcept {
  constexpr const char* kSlot = "device_count";
  if (plugin == nullptr) return null_plugin(kSlot);
  if (plugin->impl != nullptr) return impl_api()->device_count(plugin->impl, out_count);
  if (out_count == nullptr) {
    return g_host.fail(plugin->host, XDEV_STATUS_INVALID_ARGUMENT, "%s: out_count is NULL", kSlot);
  }
  *out_count = 0;
  return nullptr;
}

xdev_status_t* no_such_device(const xdev_plugin_t* plugin, const char* slot, uint32_t ordinal) {
  return g_host.fail(plugin->host, XDEV_STATUS_NOT_FOUND,
                     "%s: no CUDA device with ordinal %" PRIu32 " (the cuda plugin has 0: %s)",
                     slot, ordinal, plugin->status.c_str());
}

xdev_status_t* shim_device_get_properties(xdev_plugin_t* plugin, uint32_t ordinal,
                                          xdev_device_properties_t* out_props) noexcept {
  constexpr const char* kSlot = "device_get_properties";
  if (plugin == nullptr) return null_plugin(kSlot);
  if (plugin->impl != nullptr) {
    return impl_api()->device_get_properties(plugin->impl, ordinal, out_props);
  }
  if (out_props == nullptr) {
    return g_host.fail(plugin->host, XDEV_STATUS_INVALID_ARGUMENT, "%s: out_props is NULL", kSlot);
  }
  return no_such_device(plugin, kSlot, ordinal);
}

xdev_status_t* shim_device_open(xdev_plugin_t* plugin, uint32_t ordinal,
                                xdev_device_t** out_device) noexcept {
  constexpr const char* kSlot = "device_open";
  if (plugin == nullptr) return null_plugin(kSlot);
  if (plugin->impl != nullptr) return impl_api()->device_open(plugin->impl, ordinal, out_device);
  if (out_device == nullptr) {
    return g_host.fail(plugin->host, XDEV_STATUS_INVALID_ARGUMENT, "%s: out_device is NULL", kSlot);
  }
  *out_device = nullptr;
  return no_such_device(plugin, kSlot, ordinal);
}

xdev_status_t* shim_kernels(xdev_plugin_t* plugin, const xdev_kernel_info_t* const** out_kernels,
                            uint32_t* out_count) noexcept {
  constexpr const char* kSlot = "kernels";
  if (plugin == nullptr) return null_plugin(kSlot);
  if (plugin->impl != nullptr) return impl_api()->kernels(plugin->impl, out_kernels, out_count);
  // No device, no kernels: nothing could run them.
  return g_host.hand_out<xdev_kernel_info_t>(plugin->host, kSlot, "out_kernels", nullptr, 0,
                                             out_kernels, out_count);
}

// ---- everything that takes a device, stream or event: forwarded -------------

// Forwards a slot whose first argument is a handle of the implementation.
#define XDEV_SHIM_FORWARD(slot, first, ...)                                            \
  if (const xdev_plugin_api_t* api = impl_api()) return api->slot(first, __VA_ARGS__); \
  return no_implementation(#slot, #first, first)

xdev_status_t* shim_memory_allocate(xdev_device_t* device, uint64_t size, uint64_t alignment,
                                    void** out_ptr) noexcept {
  XDEV_SHIM_FORWARD(memory_allocate, device, size, alignment, out_ptr);
}
void shim_memory_free(xdev_device_t* device, void* ptr) noexcept {
  if (const xdev_plugin_api_t* api = impl_api()) api->memory_free(device, ptr);
}
xdev_status_t* shim_memory_query(xdev_device_t* device, uint64_t* out_free,
                                 uint64_t* out_total) noexcept {
  XDEV_SHIM_FORWARD(memory_query, device, out_free, out_total);
}
xdev_status_t* shim_host_memory_allocate(xdev_device_t* device, uint64_t size,
                                         void** out_ptr) noexcept {
  XDEV_SHIM_FORWARD(host_memory_allocate, device, size, out_ptr);
}
void shim_host_memory_free(xdev_device_t* device, void* ptr) noexcept {
  if (const xdev_plugin_api_t* api = impl_api()) api->host_memory_free(device, ptr);
}
void shim_device_close(xdev_device_t* device) noexcept {
  if (const xdev_plugin_api_t* api = impl_api()) api->device_close(device);
}
xdev_status_t* shim_stream_create(xdev_device_t* device, xdev_stream_t** out_stream) noexcept {
  XDEV_SHIM_FORWARD(stream_create, device, out_stream);
}
void shim_stream_destroy(xdev_stream_t* stream) noexcept {
  if (const xdev_plugin_api_t* api = impl_api()) api->stream_destroy(stream);
}
xdev_status_t* shim_stream_synchronize(xdev_stream_t* stream) noexcept {
  if (const xdev_plugin_api_t* api = impl_api()) return api->stream_synchronize(stream);
  return no_implementation("stream_synchronize", "stream", stream);
}
xdev_status_t* shim_stream_native_handle(xdev_stream_t* stream, int64_t* out_handle) noexcept {
  XDEV_SHIM_FORWARD(stream_native_handle, stream, out_handle);
}
xdev_status_t* shim_event_create(xdev_device_t* device, xdev_event_t** out_event) noexcept {
  XDEV_SHIM_FORWARD(event_create, device, out_event);
}
void shim_event_destroy(xdev_event_t* event) noexcept {
  if (const xdev_plugin_api_t* api = impl_api()) api->event_destroy(event);
}
xdev_status_t* shim_event_record(xdev_event_t* event, xdev_stream_t* stream) noexcept {
  XDEV_SHIM_FORWARD(event_record, event, stream);
}
xdev_status_t* shim_stream_wait_event(xdev_stream_t* stream, xdev_event_t* event) noexcept {
  XDEV_SHIM_FORWARD(stream_wait_event, stream, event);
}
xdev_status_t* shim_event_synchronize(xdev_event_t* event) noexcept {
  if (const xdev_plugin_api_t* api = impl_api()) return api->event_synchronize(event);
  return no_implementation("event_synchronize", "event", event);
}
xdev_status_t* shim_event_query(xdev_event_t* event, int32_t* out_done) noexcept {
  XDEV_SHIM_FORWARD(event_query, event, out_done);
}
xdev_status_t* shim_event_elapsed_ms(xdev_event_t* start, xdev_event_t* end,
                                     double* out_ms) noexcept {
  XDEV_SHIM_FORWARD(event_elapsed_ms, start, end, out_ms);
}
xdev_status_t* shim_copy_host_to_device(xdev_stream_t* stream, void* dst, const void* src,
                                        uint64_t size) noexcept {
  XDEV_SHIM_FORWARD(copy_host_to_device, stream, dst, src, size);
}
xdev_status_t* shim_copy_device_to_host(xdev_stream_t* stream, void* dst, const void* src,
                                        uint64_t size) noexcept {
  XDEV_SHIM_FORWARD(copy_device_to_host, stream, dst, src, size);
}
xdev_status_t* shim_copy_device_to_device(xdev_stream_t* stream, void* dst, const void* src,
                                          uint64_t size) noexcept {
  XDEV_SHIM_FORWARD(copy_device_to_device, stream, dst, src, size);
}
xdev_status_t* shim_copy_peer(xdev_stream_t* stream, void* dst, xdev_device_t* src_device,
                              const void* src, uint64_t size) noexcept {
  XDEV_SHIM_FORWARD(copy_peer, stream, dst, src_device, src, size);
}
#if XDEV_CUDA_NCCL
// ABI 1.7: the implementation's NCCL collectives.
xdev_status_t* shim_collective_id(xdev_plugin_t* plugin, uint8_t* id, size_t capacity,
                                  size_t* out_size) noexcept {
  if (plugin == nullptr) return null_plugin("collective_id");
  if (plugin->impl == nullptr) return no_implementation("collective_id", "plugin", plugin);
  return impl_api()->collective_id(plugin->impl, id, capacity, out_size);
}
xdev_status_t* shim_communicator_create(xdev_plugin_t* plugin, const xdev_collective_init_t* init,
                                        xdev_device_t* const* devices, const int32_t* ranks,
                                        int32_t count, xdev_communicator_t** out_comms) noexcept {
  if (plugin == nullptr) return null_plugin("communicator_create");
  if (plugin->impl == nullptr) return no_implementation("communicator_create", "plugin", plugin);
  return impl_api()->communicator_create(plugin->impl, init, devices, ranks, count, out_comms);
}
void shim_communicator_destroy(xdev_communicator_t* comm) noexcept {
  if (const xdev_plugin_api_t* api = impl_api()) api->communicator_destroy(comm);
}
void shim_communicator_abort(xdev_communicator_t* comm) noexcept {
  if (const xdev_plugin_api_t* api = impl_api()) api->communicator_abort(comm);
}
xdev_status_t* shim_communicator_poll(xdev_communicator_t* comm) noexcept {
  if (const xdev_plugin_api_t* api = impl_api()) return api->communicator_poll(comm);
  return no_implementation("communicator_poll", "comm", comm);
}
xdev_status_t* shim_collective(xdev_communicator_t* const* comms, xdev_stream_t* const* streams,
                               const xdev_collective_call_t* calls, int32_t count) noexcept {
  XDEV_SHIM_FORWARD(collective, comms, streams, calls, count);
}
#endif
#undef XDEV_SHIM_FORWARD

constexpr xdev_plugin_api_t kPluginApi = {
    .struct_size = XDEV_PLUGIN_API_STRUCT_SIZE,
    .ext = nullptr,
    .abi_version = {XDEV_ABI_VERSION_MAJOR, XDEV_ABI_VERSION_MINOR},
    .name = "cuda",
    .plugin_version = XDEV_CUDA_PLUGIN_VERSION,
    // The implementation's capabilities (plugin.cpp declares the same).
    .capabilities = XDEV_CAP_HOST_MEMORY | XDEV_CAP_PEER_COPY | XDEV_CAP_EVENTS |
                    XDEV_CAP_EVENT_TIMING | (XDEV_CUDA_NCCL ? XDEV_CAP_COLLECTIVES : 0),
    .initialize = &shim_initialize,
    .shutdown = &shim_shutdown,
    .describe_status = &shim_describe_status,
    .device_types = &shim_device_types,
    .device_count = &shim_device_count,
    .device_get_properties = &shim_device_get_properties,
    .device_open = &shim_device_open,
    .device_close = &shim_device_close,
    .memory_allocate = &shim_memory_allocate,
    .memory_free = &shim_memory_free,
    .memory_query = &shim_memory_query,
    .host_memory_allocate = &shim_host_memory_allocate,
    .host_memory_free = &shim_host_memory_free,
    .stream_create = &shim_stream_create,
    .stream_destroy = &shim_stream_destroy,
    .stream_synchronize = &shim_stream_synchronize,
    .event_create = &shim_event_create,
    .event_destroy = &shim_event_destroy,
    .event_record = &shim_event_record,
    .stream_wait_event = &shim_stream_wait_event,
    .event_synchronize = &shim_event_synchronize,
    .event_query = &shim_event_query,
    .copy_host_to_device = &shim_copy_host_to_device,
    .copy_device_to_host = &shim_copy_device_to_host,
    .copy_device_to_device = &shim_copy_device_to_device,
    .copy_peer = &shim_copy_peer,
    .kernels = &shim_kernels,
    .stream_native_handle = &shim_stream_native_handle,
    .event_elapsed_ms = &shim_event_elapsed_ms,  // ABI 1.4
#if XDEV_CUDA_NCCL
    .device_kernels = nullptr,
    .collective_id = &shim_collective_id,  // ABI 1.7
    .communicator_create = &shim_communicator_create,
    .communicator_destroy = &shim_communicator_destroy,
    .communicator_abort = &shim_communicator_abort,
    .communicator_poll = &shim_communicator_poll,
    .collective = &shim_collective,
#endif
};

}  // namespace
}  // namespace xdev::cuda_shim

// The entry point. Cheap: reads and writes the arguments, loads nothing.
XDEV_PLUGIN_ENTRY_POINT xdev_status_t* xdev_plugin_query(xdev_plugin_query_args_t* args) {
  return xdev::cuda_shim::g_host.answer_query(args, xdev::cuda_shim::kPluginApi);
}
