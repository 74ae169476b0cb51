// The cpu plugin: the host processor as one xdev device (type "CPU",
// platform "host"), implementing the plugin ABI v1 (xdev/plugin.h).
//
// Device memory is host memory. Streams run their work at enqueue time in
// the calling thread, in order, so every event is complete when it is
// recorded and synchronizing never waits. Large copies are split across
// oneTBB's threads (copy.hpp). The kernels (kernels/, docs/ops.md) run in
// the calling thread too, splitting large work over oneTBB's threads;
// matrix products use OpenBLAS.
//
// Every function reached through the table is noexcept: failures become
// status objects made with the host's status_create, never exceptions (the
// SDK's plugin helpers, xdev/plugin_helpers.hpp, make them and guard slots).
#include <xdev/plugin.h>
#include <xdev/plugin_helpers.hpp>

#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/version.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <iterator>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "blas.hpp"
#include "copy.hpp"
#include "cpu_plugin_config.hpp"
#include "kernels/common.hpp"
#include "kernels/kernels.hpp"
#include "machine_info.hpp"

static_assert(XDEV_ABI_VERSION_MAJOR == 1, "the cpu plugin implements ABI major version 1");

// ---------------------------------------------------------------------------
// The opaque ABI objects. Each is created and destroyed by this plugin only.

// One initialized plugin instance (the core may initialize the library more
// than once, e.g. after shutdown when the library stayed loaded).
struct xdev_plugin_t {
  const xdev_host_api_t* host = nullptr;  // owned by the core, outlives us
  xdev::cpu::MachineInfo machine;
  // Strings the ABI hands out; they live until shutdown.
  std::vector<std::pair<std::string, std::string>> property_text;
  std::vector<xdev_property_t> properties;  // points into property_text
  std::string description;                  // xdev_device_properties_t
  std::string status_line;                  // describe_status
  // Keeps oneTBB's worker threads joinable: finalized in shutdown so the
  // library can be unloaded while no worker runs its code. Attached at the
  // first device_open (guarded by `mutex`); empty until then.
  tbb::task_scheduler_handle tbb_handle;
  std::mutex mutex;                   // guards open_device
  xdev_device_t* open_device = nullptr;  // device 0 while it is open
};

// Device 0, between device_open and device_close. Counts what the core has
// not released yet, to warn about leaks at close.
struct xdev_device_t {
  xdev_plugin_t* plugin = nullptr;
  std::atomic<int64_t> live_allocations{0};
  std::atomic<int64_t> live_streams{0};
  std::atomic<int64_t> live_events{0};
};

// Work runs at enqueue time, so a stream and an event need only know their
// device.
struct xdev_stream_t {
  xdev_device_t* device = nullptr;
};

struct xdev_event_t {
  xdev_device_t* device = nullptr;
  // ABI 1.4: steady-clock nanoseconds of the last record (work runs at
  // enqueue time, so that is when the stream passed the mark); -1: never.
  std::atomic<int64_t> recorded_ns{-1};
};

namespace xdev::cpu {
namespace {

namespace ph = xdev::plugin_helpers;

constexpr uint32_t kDeviceCount = 1;
// Alignment every allocation gets at least: a cache line, and enough for
// any SIMD load (AVX-512).
constexpr uint64_t kMinAlignment = 64;

// ---------------------------------------------------------------------------
// Host table and statuses (the SDK's xdev/plugin_helpers.hpp)

// The host table used where a call has no handle to find its own (a NULL
// handle is an INVALID_ARGUMENT status, made with this table): the table of
// the most recently initialized live instance, else the one from
// xdev_plugin_query. Also makes every status and log line, and guards slots
// against exceptions.
constinit ph::PluginHost g_host{"cpu"};

xdev_status_t* no_such_device(const xdev_host_api_t* host, const char* slot,
                              uint32_t ordinal) noexcept {
  return g_host.fail(host, XDEV_STATUS_NOT_FOUND,
                     "%s: no device with ordinal %" PRIu32 " (the cpu plugin has %" PRIu32
                     " device, ordinal 0)",
                     slot, ordinal, kDeviceCount);
}

// ---------------------------------------------------------------------------
// Plugin state

// The value of one of the device's properties ("" when there is none).
const char* property_value(const xdev_plugin_t& plugin, std::string_view key) noexcept {
  for (const auto& [k, value] : plugin.property_text) {
    if (k == key) return value.c_str();
  }
  return "";
}

// blas()'s log lines go to the host's log.
void log_to_host(void* host, xdev_log_level_t level, const char* message) {
  g_host.log(static_cast<const xdev_host_api_t*>(host), level, "%s", message);
}

// OpenBLAS loads at the first matrix product (blas.hpp): until then the
// blas properties say what will load and how it will be set up. When the
// program has loaded OpenBLAS already, nothing is left to decide: the plugin
// takes it now (no load cost) and reports what it is.
void describe_machine(xdev_plugin_t& plugin) {
  const MachineInfo& machine = plugin.machine;
  if (blas_if_loaded() == nullptr && blas_in_process()) {
    blas(&log_to_host, const_cast<xdev_host_api_t*>(plugin.host));
  }
  const BlasApi* loaded = blas_if_loaded();
  const char* blas_config = loaded != nullptr ? loaded->get_config() : nullptr;
  plugin.property_text = {
      {"cores", std::to_string(machine.cores)},
      {"simd", machine.simd},
      {"blas", loaded == nullptr ? std::string("OpenBLAS (") + blas_library_name() +
                                       ", loaded at the first matrix product)"
               : blas_config != nullptr ? blas_config
                                        : "OpenBLAS (unknown configuration)"},
      {"blas_core", planned_blas_core()},
      {"blas_threads", planned_blas_threads()},
      {"tbb", std::string("oneTBB ") + TBB_runtime_version()},
  };
  plugin.properties.clear();
  for (const auto& [key, value] : plugin.property_text) {
    plugin.properties.push_back({key.c_str(), value.c_str()});
  }
  plugin.description = "device: 0, name: " + machine.model_name +
                       ", cores: " + std::to_string(machine.cores) +
                       ", memory: " + format_gib(machine.memory_total);
  plugin.status_line = "1 device (" + machine.model_name + ", " +
                       std::to_string(machine.cores) +
                       (machine.cores == 1 ? " core)" : " cores)");
}

// ---------------------------------------------------------------------------
// Life cycle

xdev_status_t* plugin_initialize(const xdev_plugin_init_args_t* args,
                                 xdev_plugin_t** out_plugin) noexcept {
  constexpr const char* kSlot = "initialize";
  if (xdev_status_t* status = g_host.check_init_args(args, out_plugin)) return status;
  const xdev_host_api_t* host = args->host;
  return g_host.guard(host, kSlot, [&]() -> xdev_status_t* {
    auto plugin = std::make_unique<xdev_plugin_t>();
    plugin->host = host;
    plugin->machine = read_machine_info();
    describe_machine(*plugin);
    g_host.add_instance(host);
    g_host.log(host, XDEV_LOG_DEBUG, "initialized: %s; BLAS: %s; kernels: %s; threads: %s",
               plugin->status_line.c_str(), property_value(*plugin, "blas"),
               property_value(*plugin, "blas_core"), property_value(*plugin, "blas_threads"));
    *out_plugin = plugin.release();
    return nullptr;
  });
}

void plugin_shutdown(xdev_plugin_t* plugin) noexcept {
  if (plugin == nullptr) return;
  std::unique_ptr<xdev_plugin_t> owned(plugin);
  const xdev_host_api_t* host = owned->host;
  if (owned->open_device != nullptr) {
    g_host.log(host, XDEV_LOG_WARNING, "shutdown: device 0 is still open; closing it");
    delete owned->open_device;
    owned->open_device = nullptr;
  }
  // Joins oneTBB's worker threads (when no one else holds the scheduler), so
  // that unloading the library cannot leave a worker running unmapped code.
  if (owned->tbb_handle && !tbb::finalize(owned->tbb_handle, std::nothrow)) {
    g_host.log(host, XDEV_LOG_WARNING,
               "shutdown: oneTBB's worker threads were not joined because other threads or "
               "libraries still use oneTBB; keep this library loaded (RTLD_NODELETE)");
  }
  g_host.remove_instance(host);
}

const char* plugin_describe_status(xdev_plugin_t* plugin) noexcept {
  if (plugin == nullptr) return "invalid plugin handle (NULL)";
  return plugin->status_line.c_str();
}

// ---------------------------------------------------------------------------
// Device types and physical devices

constexpr xdev_device_type_info_t kCpuType = {
    .struct_size = XDEV_DEVICE_TYPE_INFO_STRUCT_SIZE,
    .ext = nullptr,
    .type = "CPU",
    .platform = "host",
    .priority = XDEV_PRIORITY_CPU,
    .dlpack_device_type = XDEV_DLPACK_CPU,
};
constexpr const xdev_device_type_info_t* kDeviceTypes[] = {&kCpuType};

xdev_status_t* plugin_device_types(xdev_plugin_t* plugin,
                                   const xdev_device_type_info_t* const** out_types,
                                   uint32_t* out_count) noexcept {
  constexpr const char* kSlot = "device_types";
  const xdev_host_api_t* host = plugin != nullptr ? plugin->host : g_host.fallback();
  if (plugin == nullptr) return g_host.null_argument(host, kSlot, "plugin");
  return g_host.hand_out(host, kSlot, "out_types", kDeviceTypes,
                         static_cast<uint32_t>(std::size(kDeviceTypes)), out_types, out_count);
}

xdev_status_t* plugin_device_count(xdev_plugin_t* plugin, uint32_t* out_count) noexcept {
  constexpr const char* kSlot = "device_count";
  const xdev_host_api_t* host = plugin != nullptr ? plugin->host : g_host.fallback();
  if (xdev_status_t* s = g_host.require(
          host, kSlot, {{"plugin", plugin}, {"out_count", out_count}})) {
    return s;
  }
  *out_count = kDeviceCount;
  return nullptr;
}

// The argument checks of the slots that take a device ordinal.
xdev_status_t* check_device_args(const xdev_host_api_t* host, const char* slot,
                                 const xdev_plugin_t* plugin, const char* out_name,
                                 const void* out, uint32_t ordinal) noexcept {
  if (xdev_status_t* s = g_host.require(host, slot, {{"plugin", plugin}, {out_name, out}})) {
    return s;
  }
  if (ordinal >= kDeviceCount) return no_such_device(host, slot, ordinal);
  return nullptr;
}

xdev_status_t* plugin_device_get_properties(xdev_plugin_t* plugin, uint32_t ordinal,
                                            xdev_device_properties_t* out_props) noexcept {
  constexpr const char* kSlot = "device_get_properties";
  const xdev_host_api_t* host = plugin != nullptr ? plugin->host : g_host.fallback();
  if (xdev_status_t* s = check_device_args(host, kSlot, plugin, "out_props", out_props, ordinal)) {
    return s;
  }
  // Fill only what the core's struct_size covers; struct_size and ext are
  // the core's.
#define XDEV_CPU_SET(field, value)                                   \
  if (XDEV_HAS_FIELD(out_props, xdev_device_properties_t, field)) {  \
    out_props->field = (value);                                      \
  }
  XDEV_CPU_SET(type_index, 0U)
  XDEV_CPU_SET(name, plugin->machine.model_name.c_str())
  XDEV_CPU_SET(memory_total, plugin->machine.memory_total)
  XDEV_CPU_SET(bus_id, "")
  XDEV_CPU_SET(numa_node, 0)
  XDEV_CPU_SET(description, plugin->description.c_str())
  XDEV_CPU_SET(properties, plugin->properties.data())
  XDEV_CPU_SET(property_count, static_cast<uint32_t>(plugin->properties.size()))
#undef XDEV_CPU_SET
  return nullptr;
}

// ---------------------------------------------------------------------------
// Device handles

xdev_status_t* plugin_device_open(xdev_plugin_t* plugin, uint32_t ordinal,
                                  xdev_device_t** out_device) noexcept {
  constexpr const char* kSlot = "device_open";
  const xdev_host_api_t* host = plugin != nullptr ? plugin->host : g_host.fallback();
  if (out_device != nullptr) *out_device = nullptr;
  if (xdev_status_t* s = check_device_args(host, kSlot, plugin, "out_device", out_device, ordinal)) {
    return s;
  }
  return g_host.guard(host, kSlot, [&]() -> xdev_status_t* {
    std::lock_guard lock(plugin->mutex);
    if (plugin->open_device != nullptr) {
      return g_host.fail(host, XDEV_STATUS_FAILED_PRECONDITION,
                         "%s: device %" PRIu32 " is already open", kSlot, ordinal);
    }
    // Registers this instance as a user of oneTBB's scheduler (starts no
    // thread), so that shutdown() can join oneTBB's workers. Only kernels and
    // copies use oneTBB, and both need an open device; attaching here rather
    // than at initialize keeps oneTBB's set-up (it loads tbbmalloc: ~0.25 ms)
    // out of a process that only lists its devices.
    if (!plugin->tbb_handle) plugin->tbb_handle = tbb::task_scheduler_handle{tbb::attach{}};
    auto* device = new xdev_device_t;
    device->plugin = plugin;
    plugin->open_device = device;
    *out_device = device;
    return nullptr;
  });
}

void plugin_device_close(xdev_device_t* device) noexcept {
  if (device == nullptr) return;
  xdev_plugin_t* plugin = device->plugin;
  const int64_t allocations = device->live_allocations.load();
  const int64_t streams = device->live_streams.load();
  const int64_t events = device->live_events.load();
  if (allocations != 0 || streams != 0 || events != 0) {
    g_host.log(plugin->host, XDEV_LOG_WARNING,
               "device_close: device 0 still has %" PRId64 " allocations, %" PRId64
               " streams and %" PRId64 " events; they leak",
               allocations, streams, events);
  }
  {
    std::lock_guard lock(plugin->mutex);  // std::mutex::lock only throws on misuse
    if (plugin->open_device == device) plugin->open_device = nullptr;
  }
  delete device;
}

// ---------------------------------------------------------------------------
// Raw memory

xdev_status_t* plugin_memory_allocate(xdev_device_t* device, uint64_t size, uint64_t alignment,
                                      void** out_ptr) noexcept {
  constexpr const char* kSlot = "memory_allocate";
  const xdev_host_api_t* host = device != nullptr ? device->plugin->host : g_host.fallback();
  if (xdev_status_t* s = g_host.require(host, kSlot, {{"device", device}, {"out_ptr", out_ptr}})) {
    return s;
  }
  *out_ptr = nullptr;
  if (xdev_status_t* s = g_host.check_allocation(host, kSlot, size, alignment)) return s;
  const uint64_t effective_alignment = std::max(alignment, kMinAlignment);
  const uint64_t total = device->plugin->machine.memory_total;
  // A request the device's memory could never hold fails here, before the
  // system allocator sees it (glibc would refuse it too, but sanitizer
  // allocators abort on absurd sizes instead of returning NULL).
  const bool beyond_total =
      total != 0 && (size > total || effective_alignment > total - size);
  if (beyond_total || size > SIZE_MAX) {
    return g_host.fail(host, XDEV_STATUS_OUT_OF_MEMORY,
                       "%s: cannot allocate %" PRIu64 " bytes (alignment %" PRIu64
                       ") on cpu device 0: more than its %" PRIu64 " bytes of memory",
                       kSlot, size, effective_alignment, total);
  }
  void* ptr = nullptr;
  const int error = posix_memalign(&ptr, static_cast<size_t>(effective_alignment),
                                   static_cast<size_t>(size));
  if (error != 0 || ptr == nullptr) {
    const uint64_t available = available_memory_bytes().value_or(0);
    return g_host.fail(host, XDEV_STATUS_OUT_OF_MEMORY,
                       "%s: cannot allocate %" PRIu64 " bytes (alignment %" PRIu64
                       ") on cpu device 0: %s (%" PRIu64 " bytes available)",
                       kSlot, size, effective_alignment, std::strerror(error), available);
  }
  device->live_allocations.fetch_add(1, std::memory_order_relaxed);
  *out_ptr = ptr;
  return nullptr;
}

void plugin_memory_free(xdev_device_t* device, void* ptr) noexcept {
  if (ptr == nullptr) return;
  std::free(ptr);
  if (device != nullptr) device->live_allocations.fetch_sub(1, std::memory_order_relaxed);
}

xdev_status_t* plugin_memory_query(xdev_device_t* device, uint64_t* out_free,
                                   uint64_t* out_total) noexcept {
  constexpr const char* kSlot = "memory_query";
  const xdev_host_api_t* host = device != nullptr ? device->plugin->host : g_host.fallback();
  if (xdev_status_t* s = g_host.require(
          host, kSlot, {{"device", device}, {"out_free", out_free}, {"out_total", out_total}})) {
    return s;
  }
  const uint64_t total = device->plugin->machine.memory_total;
  uint64_t available = 0;
  if (const auto mem_available = available_memory_bytes()) {
    available = *mem_available;
  } else {
    // Kernels before 3.14 have no MemAvailable: free pages only.
    const long pages = sysconf(_SC_AVPHYS_PAGES);
    const long page_size = sysconf(_SC_PAGESIZE);
    if (pages > 0 && page_size > 0) {
      available = static_cast<uint64_t>(pages) * static_cast<uint64_t>(page_size);
    }
  }
  *out_free = std::min(available, total);
  *out_total = total;
  return nullptr;
}

// ---------------------------------------------------------------------------
// Streams and events

// stream_create and event_create: a new handle on `device`, counted in the
// device's `live` counter (device_close reports what leaked).
template <typename Handle>
xdev_status_t* create_counted(const char* slot, const char* out_name, xdev_device_t* device,
                              Handle** out, std::atomic<int64_t> xdev_device_t::*live) noexcept {
  const xdev_host_api_t* host = device != nullptr ? device->plugin->host : g_host.fallback();
  if (xdev_status_t* s = g_host.require(host, slot, {{"device", device}, {out_name, out}})) {
    return s;
  }
  *out = nullptr;
  auto* handle = new (std::nothrow) Handle;
  if (handle == nullptr) {
    return g_host.fail(host, XDEV_STATUS_OUT_OF_MEMORY, "%s: out of host memory", slot);
  }
  handle->device = device;
  (device->*live).fetch_add(1, std::memory_order_relaxed);
  *out = handle;
  return nullptr;
}

template <typename Handle>
void destroy_counted(Handle* handle, std::atomic<int64_t> xdev_device_t::*live) noexcept {
  if (handle == nullptr) return;
  (handle->device->*live).fetch_sub(1, std::memory_order_relaxed);
  delete handle;
}

xdev_status_t* plugin_stream_create(xdev_device_t* device, xdev_stream_t** out_stream) noexcept {
  return create_counted("stream_create", "out_stream", device, out_stream,
                        &xdev_device_t::live_streams);
}

void plugin_stream_destroy(xdev_stream_t* stream) noexcept {
  destroy_counted(stream, &xdev_device_t::live_streams);
}

xdev_status_t* plugin_stream_synchronize(xdev_stream_t* stream) noexcept {
  if (stream == nullptr)
    return g_host.null_argument(g_host.fallback(), "stream_synchronize", "stream");
  return nullptr;  // all work ran when it was enqueued
}

xdev_status_t* plugin_event_create(xdev_device_t* device, xdev_event_t** out_event) noexcept {
  return create_counted("event_create", "out_event", device, out_event,
                        &xdev_device_t::live_events);
}

void plugin_event_destroy(xdev_event_t* event) noexcept {
  destroy_counted(event, &xdev_device_t::live_events);
}

// Checks the pair for event_record and stream_wait_event.
xdev_status_t* check_event_and_stream(const char* slot, xdev_event_t* event,
                                      xdev_stream_t* stream) noexcept {
  const xdev_host_api_t* host = event != nullptr    ? event->device->plugin->host
                                : stream != nullptr ? stream->device->plugin->host
                                                    : g_host.fallback();
  if (xdev_status_t* s = g_host.require(host, slot, {{"event", event}, {"stream", stream}})) {
    return s;
  }
  if (event->device->plugin != stream->device->plugin) {
    return g_host.fail(host, XDEV_STATUS_INVALID_ARGUMENT,
                       "%s: the event and the stream belong to different plugin instances", slot);
  }
  return nullptr;
}

xdev_status_t* plugin_event_record(xdev_event_t* event, xdev_stream_t* stream) noexcept {
  // The stream has already run everything enqueued on it: the mark is
  // complete as soon as it is set.
  if (xdev_status_t* s = check_event_and_stream("event_record", event, stream)) return s;
  event->recorded_ns.store(std::chrono::duration_cast<std::chrono::nanoseconds>(
                               std::chrono::steady_clock::now().time_since_epoch())
                               .count(),
                           std::memory_order_release);
  return nullptr;
}

// ABI 1.4: the host's steady clock at the two records.
xdev_status_t* plugin_event_elapsed_ms(xdev_event_t* start, xdev_event_t* end,
                                       double* out_ms) noexcept {
  constexpr const char* kSlot = "event_elapsed_ms";
  const xdev_host_api_t* host = start != nullptr ? start->device->plugin->host : g_host.fallback();
  const std::pair<const void*, const char*> arguments[] = {
      {start, "start"}, {end, "end"}, {out_ms, "out_ms"}};
  for (const auto& [value, name] : arguments) {
    if (value == nullptr) return g_host.null_argument(host, kSlot, name);
  }
  const int64_t a = start->recorded_ns.load(std::memory_order_acquire);
  const int64_t b = end->recorded_ns.load(std::memory_order_acquire);
  if (a < 0 || b < 0) {
    return g_host.fail(host, XDEV_STATUS_FAILED_PRECONDITION, "%s: the %s event was not recorded",
                       kSlot, a < 0 ? "start" : "end");
  }
  *out_ms = static_cast<double>(b - a) / 1e6;
  return nullptr;
}

xdev_status_t* plugin_stream_wait_event(xdev_stream_t* stream, xdev_event_t* event) noexcept {
  // Every recorded event is already complete: nothing to wait for.
  return check_event_and_stream("stream_wait_event", event, stream);
}

xdev_status_t* plugin_event_synchronize(xdev_event_t* event) noexcept {
  if (event == nullptr)
    return g_host.null_argument(g_host.fallback(), "event_synchronize", "event");
  return nullptr;
}

xdev_status_t* plugin_event_query(xdev_event_t* event, int32_t* out_done) noexcept {
  constexpr const char* kSlot = "event_query";
  const xdev_host_api_t* host = event != nullptr ? event->device->plugin->host : g_host.fallback();
  if (xdev_status_t* s = g_host.require(host, kSlot, {{"event", event}, {"out_done", out_done}})) {
    return s;
  }
  *out_done = 1;
  return nullptr;
}

// ---------------------------------------------------------------------------
// Copies. Host and device memory are the same memory; the three directions
// differ only in their names in messages.

xdev_status_t* copy(const char* slot, xdev_stream_t* stream, void* dst, const void* src,
                    uint64_t size) noexcept {
  const xdev_host_api_t* host =
      stream != nullptr ? stream->device->plugin->host : g_host.fallback();
  if (stream == nullptr) return g_host.null_argument(host, slot, "stream");
  if (size == 0) return nullptr;
  if (dst == nullptr || src == nullptr) {
    return g_host.fail(host, XDEV_STATUS_INVALID_ARGUMENT,
                       "%s: %s is NULL for a copy of %" PRIu64 " bytes", slot,
                       dst == nullptr ? "dst" : "src", size);
  }
  if (size > SIZE_MAX) {
    return g_host.fail(host, XDEV_STATUS_INVALID_ARGUMENT,
                       "%s: size %" PRIu64 " bytes is larger than the address space", slot, size);
  }
  const auto to = reinterpret_cast<uintptr_t>(dst);
  const auto from = reinterpret_cast<uintptr_t>(src);
  const uintptr_t distance = to > from ? to - from : from - to;
  if (distance < size) {
    return g_host.fail(host, XDEV_STATUS_INVALID_ARGUMENT,
                       "%s: the %" PRIu64 "-byte ranges at dst %p and src %p overlap", slot, size,
                       dst, src);
  }
  copy_bytes(dst, src, static_cast<size_t>(size));
  return nullptr;
}

xdev_status_t* plugin_copy_host_to_device(xdev_stream_t* stream, void* dst, const void* src,
                                          uint64_t size) noexcept {
  return copy("copy_host_to_device", stream, dst, src, size);
}

xdev_status_t* plugin_copy_device_to_host(xdev_stream_t* stream, void* dst, const void* src,
                                          uint64_t size) noexcept {
  return copy("copy_device_to_host", stream, dst, src, size);
}

xdev_status_t* plugin_copy_device_to_device(xdev_stream_t* stream, void* dst, const void* src,
                                            uint64_t size) noexcept {
  return copy("copy_device_to_device", stream, dst, src, size);
}

// ---------------------------------------------------------------------------
// Kernels (kernels/registry.cpp lists them)

xdev_status_t* plugin_kernels(xdev_plugin_t* plugin, const xdev_kernel_info_t* const** out_kernels,
                              uint32_t* out_count) noexcept {
  constexpr const char* kSlot = "kernels";
  const xdev_host_api_t* host = plugin != nullptr ? plugin->host : g_host.fallback();
  if (plugin == nullptr) return g_host.null_argument(host, kSlot, "plugin");
  uint32_t count = 0;
  const xdev_kernel_info_t* const* kernels = kernel_infos(&count);
  return g_host.hand_out(host, kSlot, "out_kernels", kernels, count, out_kernels, out_count);
}

// ---------------------------------------------------------------------------
// The table

constexpr xdev_plugin_api_t kPluginApi = {
    .struct_size = XDEV_PLUGIN_API_STRUCT_SIZE,
    .ext = nullptr,
    .abi_version = {XDEV_ABI_VERSION_MAJOR, XDEV_ABI_VERSION_MINOR},
    .name = "cpu",
    .plugin_version = XDEV_CPU_PLUGIN_VERSION,
    // Device memory is host memory: the core may memcpy it. Streams run work
    // synchronously and never change after creation, so several threads may
    // use one at once. No pinned host memory (all memory is host memory), one
    // device (no peers), events complete when recorded.
    .capabilities =
        XDEV_CAP_HOST_ADDRESSABLE | XDEV_CAP_CONCURRENT_STREAMS | XDEV_CAP_EVENT_TIMING,
    .initialize = &plugin_initialize,
    .shutdown = &plugin_shutdown,
    .describe_status = &plugin_describe_status,
    .device_types = &plugin_device_types,
    .device_count = &plugin_device_count,
    .device_get_properties = &plugin_device_get_properties,
    .device_open = &plugin_device_open,
    .device_close = &plugin_device_close,
    .memory_allocate = &plugin_memory_allocate,
    .memory_free = &plugin_memory_free,
    .memory_query = &plugin_memory_query,
    .host_memory_allocate = nullptr,
    .host_memory_free = nullptr,
    .stream_create = &plugin_stream_create,
    .stream_destroy = &plugin_stream_destroy,
    .stream_synchronize = &plugin_stream_synchronize,
    .event_create = &plugin_event_create,
    .event_destroy = &plugin_event_destroy,
    .event_record = &plugin_event_record,
    .stream_wait_event = &plugin_stream_wait_event,
    .event_synchronize = &plugin_event_synchronize,
    .event_query = &plugin_event_query,
    .copy_host_to_device = &plugin_copy_host_to_device,
    .copy_device_to_host = &plugin_copy_device_to_host,
    .copy_device_to_device = &plugin_copy_device_to_device,
    .copy_peer = nullptr,
    .kernels = &plugin_kernels,
    .stream_native_handle = nullptr,  // ABI 1.3: host memory needs no stream negotiation
    .event_elapsed_ms = &plugin_event_elapsed_ms,  // ABI 1.4
};

}  // namespace

// ---------------------------------------------------------------------------
// Statuses of kernels (kernels/common.hpp)

namespace {
const xdev_host_api_t* call_host(const xdev_kernel_call_t* call) noexcept {
  if (call != nullptr && XDEV_HAS_FIELD(call, xdev_kernel_call_t, device) &&
      call->device != nullptr && call->device->plugin != nullptr) {
    return call->device->plugin->host;
  }
  return g_host.fallback();
}
}  // namespace

xdev_status_t* kernel_fail(const xdev_kernel_call_t* call, xdev_status_code_t code,
                           const char* format, ...) noexcept {
  va_list args;
  va_start(args, format);
  xdev_status_t* status = xdev_plugin_vstatus(g_host.pick(call_host(call)), code, format, args);
  va_end(args);
  return status;
}

void kernel_log(const xdev_kernel_call_t* call, xdev_log_level_t level, const char* format,
                ...) noexcept {
  const xdev_host_api_t* host = call_host(call);
  char text[1024];
  va_list args;
  va_start(args, format);
  std::vsnprintf(text, sizeof(text), format, args);
  va_end(args);
  g_host.log(host, level, "%s", text);
}

xdev_status_t* kernel_unexpected(const xdev_kernel_call_t* call) noexcept {
  const char* op = call != nullptr && call->op != nullptr ? call->op : "kernel";
  return g_host.unexpected(call_host(call), op);
}

}  // namespace xdev::cpu

// The entry point. Cheap: reads and writes the arguments, starts nothing. Any
// core of our major can use this table (minors only append), unless it
// demands a newer minor than the one this plugin was built with
// (xdev_plugin_query_answer negotiates).
XDEV_PLUGIN_ENTRY_POINT xdev_status_t* xdev_plugin_query(xdev_plugin_query_args_t* args) {
  return xdev::cpu::g_host.answer_query(args, xdev::cpu::kPluginApi);
}
