// The simulated accelerator ("sim"): a test fixture that stands in for a GPU
// so multi-device behaviour can be tested on machines without one. It
// implements the plugin ABI v1 (xdev/plugin.h) exactly:
//
//  - device type "GPU" on platform "sim", priority XDEV_PRIORITY_GPU;
//    XDEV_SIM_DEVICES devices (default 2, 0 allowed), each with an arena of
//    XDEV_SIM_MEMORY_MB MiB of host memory (default 256), mapped at
//    device_open (arena.hpp);
//  - device addresses the core cannot dereference: arena address plus
//    kAddressTag (common.hpp). Every address the plugin is given is checked
//    to lie inside a live allocation of the right device, when the call is
//    made and again when the work runs; so tests prove the core reaches
//    device memory only through the plugin;
//  - really asynchronous streams: a worker thread per stream runs copies and
//    kernels in order; events mark points in streams and order work across
//    streams and devices (queue.hpp); XDEV_SIM_DELAY_US (default 0) sleeps
//    before every copy and kernel to widen race windows. Host buffers of
//    copies are read and written when the copy runs, never snapshotted;
//  - kernels: every op of the cpu plugin, for the dtypes it registers, run
//    by the cpu plugin's host kernels on the stream's worker (kernels.hpp);
//    XDEV_SIM_KERNELS (default: all) picks which, so tests of fallback and
//    placement have ops the sim lacks (MatMul,Add was the old set).
//
// Every function reached through the table is noexcept and turns failures
// into status objects made with the host's status_create; the SDK's plugin
// helpers (xdev/plugin_helpers.hpp: g_host below) make them, guard each slot
// against exceptions and answer xdev_plugin_query.
#include <xdev/plugin.h>
#include <xdev/op_names.h>
#include <xdev/plugin_helpers.hpp>

#include <algorithm>
#include <thread>
#include <cinttypes>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "arena.hpp"
#include "common.hpp"
#include "handles.hpp"
#include "kernels.hpp"
#include "queue.hpp"

#ifndef XDEV_SIM_PLUGIN_VERSION
#define XDEV_SIM_PLUGIN_VERSION "0"
#endif

static_assert(XDEV_ABI_VERSION_MAJOR == 1, "the sim plugin implements ABI major version 1");

namespace xdev::sim {
namespace {

constexpr uint32_t kMaxDevices = 64;
constexpr uint64_t kMaxMemoryMb = 65536;
constexpr uint64_t kMaxDelayUs = 10'000'000;
constexpr uint64_t kHostMemoryAlignment = 4096;

// ---------------------------------------------------------------------------
// Host table, statuses, logging (xdev/plugin_helpers.hpp)

// The fallback host table for calls with a NULL handle, statuses and the
// exception guard of every slot.
constinit ph::PluginHost g_host{"sim"};

// A Failure as a status, its message after "<slot>: ".
xdev_status_t* to_status(const xdev_host_api_t* host, const char* slot,
                         const Failure& failure) noexcept {
  if (!failure) return nullptr;
  return g_host.fail(host, failure.code, "%s: %s", slot, failure.message.c_str());
}

const xdev_host_api_t* host_of(const xdev_device_t* device) noexcept {
  return device->plugin->host;
}
const xdev_host_api_t* host_of(const xdev_stream_t* stream) noexcept {
  return host_of(stream->device);
}

uint64_t address_of(const void* pointer) noexcept { return reinterpret_cast<uint64_t>(pointer); }

// A host pointer that carries the tag is a device address passed by mistake.
Failure check_host_pointer(const void* pointer, const char* role) {
  if ((address_of(pointer) & kAddressTag) == kAddressTag) {
    return make_failure(XDEV_STATUS_INVALID_ARGUMENT,
                        "%s 0x%" PRIx64 " is a sim device address, not host memory", role,
                        address_of(pointer));
  }
  return {};
}

Failure prefixed(const char* slot, Failure failure) {
  failure.message = std::string(slot) + ": " + failure.message;
  return failure;
}

// ---------------------------------------------------------------------------
// Configuration

// Reads a whole decimal number from the environment by the SDK's rules
// (<xdev/env_value.hpp>); unset or empty means `fallback`. Stricter than the
// shipped plugins on purpose: a test fixture set up wrong must not run, so a
// bad value fails initialize with the parser's sentence instead of a warning.
Failure read_env(const char* name, uint64_t fallback, uint64_t lowest, uint64_t highest,
                 uint64_t* out) {
  const auto parsed = xdev::env_value::parse_uint(name, std::getenv(name), fallback, lowest,
                                                  highest);
  if (!parsed.ok()) {
    // The parser's sentence says what a lenient reader would use instead;
    // this fixture uses nothing.
    const std::string what = parsed.warning.substr(0, parsed.warning.find("; using"));
    return make_failure(XDEV_STATUS_INVALID_ARGUMENT, "%s; the sim plugin does not start",
                        what.c_str());
  }
  *out = parsed.value;
  return {};
}

// Read a comma-separated list of op names or dtype names from the environment
// (kernels.hpp, select_kernels and select_dtypes); unset or empty means all of
// them. A name that is no op or dtype fails initialize, naming it.
Failure read_env_ops(const char* name, std::vector<const xdev_kernel_info_t*>* out) {
  return select_kernels(name, std::getenv(name), out);
}
Failure read_env_dtypes(const char* name, uint64_t* out) {
  return select_dtypes(name, std::getenv(name), out);
}

Failure read_config(Config* config) {
  uint64_t devices = 0;
  uint64_t memory_mb = 0;
  uint64_t delay_us = 0;
  if (Failure failure = read_env("XDEV_SIM_DEVICES", 2, 0, kMaxDevices, &devices)) return failure;
  if (Failure failure = read_env("XDEV_SIM_MEMORY_MB", 256, 1, kMaxMemoryMb, &memory_mb)) {
    return failure;
  }
  if (Failure failure = read_env("XDEV_SIM_DELAY_US", 0, 0, kMaxDelayUs, &delay_us)) {
    return failure;
  }
  uint64_t collective_delay_us = 0;
  if (Failure failure = read_env("XDEV_SIM_COLLECTIVE_DELAY_US", 0, 0, kMaxDelayUs,
                                 &collective_delay_us)) {
    return failure;
  }
  config->collective_delay = std::chrono::microseconds(collective_delay_us);
  if (Failure failure = read_env("XDEV_SIM_SCRATCH_BYTES", 0, 0, kMaxMemoryMb << 20,
                                 &config->scratch_bytes)) {
    return failure;
  }
  if (Failure failure = read_env_ops("XDEV_SIM_KERNELS", &config->kernels)) return failure;
  if (Failure failure = read_env_dtypes("XDEV_SIM_KERNEL_DTYPES", &config->kernel_dtypes)) {
    return failure;
  }
  config->device_count = static_cast<uint32_t>(devices);
  config->memory_mb = memory_mb;
  config->delay = std::chrono::microseconds(delay_us);
  return {};
}

void describe(xdev_plugin_t& plugin) {
  const Config& config = plugin.config;
  plugin.devices.resize(config.device_count);
  for (uint32_t i = 0; i < config.device_count; ++i) {
    DeviceText& text = plugin.devices[i];
    text.name = "Sim Accelerator " + std::to_string(i);
    text.bus_id = ph::format("sim:%02" PRIu32, i);
    text.description = "device: " + std::to_string(i) + ", name: " + text.name +
                       ", pci bus id: " + text.bus_id + ", compute capability: 0.0";
    text.label = text.name + " (" + text.bus_id + ")";
    text.properties.clear();
    text.properties.add("compute_capability", "0.0")
        .add("simulated", "true")
        .add("address_tag", ph::format("0x%016" PRIx64, kAddressTag))
        .add("memory_mb", std::to_string(config.memory_mb))
        .add("delay_us", std::to_string(config.delay.count()));
  }
  plugin.status_line = std::to_string(config.device_count) + " simulated device" +
                       (config.device_count == 1 ? "" : "s") + ", " +
                       std::to_string(config.memory_mb) + " MiB each";
  if (config.delay.count() > 0) {
    plugin.status_line += ", " + std::to_string(config.delay.count()) + " us delay per operation";
  }
}

xdev_status_t* kernel(void* context, const xdev_kernel_call_t* call) noexcept;

// One entry per host kernel XDEV_SIM_KERNELS selects, with the host kernel's
// op and dtypes (its input dtypes only those XDEV_SIM_KERNEL_DTYPES lists);
// its context (a KernelContext) names the instance and the
// host kernel.
void register_kernels(xdev_plugin_t& plugin) {
  for (const xdev_kernel_info_t* host : plugin.config.kernels) {
    const uint64_t inputs = host->input_dtypes & plugin.config.kernel_dtypes;
    if (inputs == 0) continue;
    KernelContext& context =
        plugin.kernel_contexts.emplace_back(KernelContext{&plugin, host, inputs});
    plugin.kernels.add(ph::kernel_info(host->op, inputs, host->output_dtypes, &kernel, &context));
  }
}

// ---------------------------------------------------------------------------
// Life cycle

void device_close(xdev_device_t* device) noexcept;

// Completes a new instance for initialize (g_host.initialize checked the
// arguments, guards this and hands the instance out).
xdev_status_t* set_up(xdev_plugin_t& plugin, const xdev_host_api_t* host) {
  plugin.host = host;
  plugin.registration.emplace(g_host, host);
  if (Failure failure = read_config(&plugin.config)) return to_status(host, "initialize", failure);
  describe(plugin);
  plugin.type = {XDEV_DEVICE_TYPE_INFO_STRUCT_SIZE, nullptr, "GPU", "sim", XDEV_PRIORITY_GPU,
                 XDEV_DLPACK_EXT_DEV};
  register_kernels(plugin);
  plugin.open.assign(plugin.config.device_count, nullptr);
  g_host.log(host, XDEV_LOG_DEBUG, "initialized: %s", plugin.status_line.c_str());
  return nullptr;
}

xdev_status_t* initialize(const xdev_plugin_init_args_t* args,
                          xdev_plugin_t** out_plugin) noexcept {
  return g_host.initialize(args, out_plugin, &set_up);
}

void shutdown(xdev_plugin_t* plugin) noexcept {
  if (plugin == nullptr) return;
  std::vector<xdev_device_t*> still_open;
  {
    std::lock_guard lock(plugin->mutex);
    for (xdev_device_t* device : plugin->open) {
      if (device != nullptr) still_open.push_back(device);
    }
  }
  for (xdev_device_t* device : still_open) {
    g_host.log(plugin->host, XDEV_LOG_WARNING, "shutdown: %s is still open; closing it",
               device->text->label.c_str());
    device_close(device);
  }
  delete plugin;  // its registration ends: the host table is no fallback any more
}

const char* describe_status(xdev_plugin_t* plugin) noexcept {
  return plugin != nullptr ? plugin->status_line.c_str() : "";
}

// ---------------------------------------------------------------------------
// Types and devices

xdev_status_t* device_types(xdev_plugin_t* plugin,
                            const xdev_device_type_info_t* const** out_types,
                            uint32_t* out_count) noexcept {
  if (plugin == nullptr) return g_host.null_argument(nullptr, "device_types", "plugin");
  return g_host.hand_out(plugin->host, "device_types", "out_types", plugin->types, 1, out_types,
                         out_count);
}

xdev_status_t* device_count(xdev_plugin_t* plugin, uint32_t* out_count) noexcept {
  constexpr const char* kSlot = "device_count";
  if (plugin == nullptr) return g_host.null_argument(nullptr, kSlot, "plugin");
  if (out_count == nullptr) return g_host.null_argument(plugin->host, kSlot, "out_count");
  *out_count = plugin->config.device_count;
  return nullptr;
}

xdev_status_t* no_such_device(const xdev_plugin_t* plugin, const char* slot,
                              uint32_t ordinal) noexcept {
  return g_host.fail(plugin->host, XDEV_STATUS_NOT_FOUND,
                     "%s: no device with ordinal %" PRIu32 " (the sim plugin has %" PRIu32
                     " devices; XDEV_SIM_DEVICES sets how many)",
                     slot, ordinal, plugin->config.device_count);
}

xdev_status_t* device_get_properties(xdev_plugin_t* plugin, uint32_t ordinal,
                                     xdev_device_properties_t* out) noexcept {
  constexpr const char* kSlot = "device_get_properties";
  if (plugin == nullptr) return g_host.null_argument(nullptr, kSlot, "plugin");
  if (out == nullptr) return g_host.null_argument(plugin->host, kSlot, "out_props");
  if (ordinal >= plugin->config.device_count) return no_such_device(plugin, kSlot, ordinal);
  const DeviceText& text = plugin->devices[ordinal];
  xdev_device_properties_t values{};
  values.type_index = 0;
  values.name = text.name.c_str();
  values.memory_total = plugin->config.memory_mb << 20;
  values.bus_id = text.bus_id.c_str();
  values.numa_node = -1;
  values.description = text.description.c_str();
  values.properties = text.properties.data();
  values.property_count = text.properties.size();
  xdev_plugin_fill_properties(out, &values);  // only what the core's struct covers
  return nullptr;
}

xdev_status_t* device_open(xdev_plugin_t* plugin, uint32_t ordinal,
                           xdev_device_t** out_device) noexcept {
  constexpr const char* kSlot = "device_open";
  if (plugin == nullptr) return g_host.null_argument(nullptr, kSlot, "plugin");
  if (out_device == nullptr) return g_host.null_argument(plugin->host, kSlot, "out_device");
  *out_device = nullptr;
  if (ordinal >= plugin->config.device_count) return no_such_device(plugin, kSlot, ordinal);
  return g_host.guard(plugin->host, kSlot, [&]() -> xdev_status_t* {
    std::lock_guard lock(plugin->mutex);
    const DeviceText& text = plugin->devices[ordinal];
    if (plugin->open[ordinal] != nullptr) {
      return g_host.fail(plugin->host, XDEV_STATUS_FAILED_PRECONDITION, "%s: %s is already open",
                         kSlot, text.label.c_str());
    }
    auto device = std::make_unique<xdev_device_t>();
    device->plugin = plugin;
    device->ordinal = ordinal;
    device->text = &text;
    if (Failure failure = Arena::create(plugin->config.memory_mb << 20, text.label,
                                        &device->arena)) {
      return to_status(plugin->host, kSlot, failure);
    }
    plugin->open[ordinal] = device.get();
    *out_device = device.release();
    return nullptr;
  });
}

void stream_destroy(xdev_stream_t* stream) noexcept;
void event_destroy(xdev_event_t* event) noexcept;

// Releases what the core did not before closing `device`, with a warning
// per kind, so no worker thread or host block outlives the device.
void release_leftovers(xdev_device_t* device) noexcept {
  const xdev_host_api_t* host = host_of(device);
  const char* label = device->text->label.c_str();
  std::set<xdev_stream_t*> streams;
  std::set<xdev_event_t*> events;
  std::set<void*> host_blocks;
  {
    std::lock_guard lock(device->mutex);
    streams.swap(device->streams);
    events.swap(device->events);
    host_blocks.swap(device->host_blocks);
  }
  if (!streams.empty()) {
    g_host.log(host, XDEV_LOG_WARNING,
               "device_close: %s: destroying %zu streams the core left alive", label,
               streams.size());
  }
  for (xdev_stream_t* stream : streams) stream_destroy(stream);
  if (!events.empty()) {
    g_host.log(host, XDEV_LOG_WARNING,
               "device_close: %s: destroying %zu events the core left alive", label, events.size());
  }
  for (xdev_event_t* event : events) event_destroy(event);
  if (!host_blocks.empty()) {
    g_host.log(host, XDEV_LOG_WARNING,
               "device_close: %s: freeing %zu host memory blocks the core "
               "left allocated",
               label, host_blocks.size());
  }
  for (void* block : host_blocks) std::free(block);
  const uint64_t live = device->arena->live_allocations();
  if (live > 0) {
    g_host.log(host, XDEV_LOG_WARNING,
               "device_close: %s: %" PRIu64
               " device allocations were never freed; they go with the device",
               label, live);
  }
}

void device_close(xdev_device_t* device) noexcept {
  if (device == nullptr) return;
  release_leftovers(device);
  xdev_plugin_t* plugin = device->plugin;
  {
    std::lock_guard lock(plugin->mutex);
    plugin->open[device->ordinal] = nullptr;
  }
  delete device;
}

// ---------------------------------------------------------------------------
// Memory

xdev_status_t* memory_allocate(xdev_device_t* device, uint64_t size, uint64_t alignment,
                               void** out_ptr) noexcept {
  constexpr const char* kSlot = "memory_allocate";
  if (device == nullptr) return g_host.null_argument(nullptr, kSlot, "device");
  const xdev_host_api_t* host = host_of(device);
  if (out_ptr == nullptr) return g_host.null_argument(host, kSlot, "out_ptr");
  *out_ptr = nullptr;
  const char* label = device->text->label.c_str();
  if (size == 0) {
    return g_host.fail(host, XDEV_STATUS_INVALID_ARGUMENT, "%s: %s: size is 0 (must be > 0)", kSlot,
                       label);
  }
  if (alignment == 0 || (alignment & (alignment - 1)) != 0) {
    return g_host.fail(host, XDEV_STATUS_INVALID_ARGUMENT,
                       "%s: %s: alignment %" PRIu64 " is not a power of two", kSlot, label,
                       alignment);
  }
  return g_host.guard(host, kSlot, [&]() -> xdev_status_t* {
    uint64_t address = 0;
    if (Failure failure = device->arena->allocate(size, alignment, &address)) {
      return to_status(host, kSlot, failure);
    }
    *out_ptr = reinterpret_cast<void*>(address);
    return nullptr;
  });
}

void memory_free(xdev_device_t* device, void* ptr) noexcept {
  if (device == nullptr || ptr == nullptr) return;
  if (!device->arena->free(address_of(ptr))) {
    g_host.log(host_of(device), XDEV_LOG_ERROR,
               "memory_free: 0x%" PRIx64 " is not the start of a live allocation of %s; ignored",
               address_of(ptr), device->text->label.c_str());
  }
}

xdev_status_t* memory_query(xdev_device_t* device, uint64_t* out_free,
                            uint64_t* out_total) noexcept {
  constexpr const char* kSlot = "memory_query";
  if (device == nullptr) return g_host.null_argument(nullptr, kSlot, "device");
  if (out_free == nullptr || out_total == nullptr) {
    return g_host.null_argument(host_of(device), kSlot,
                                out_free == nullptr ? "out_free" : "out_total");
  }
  device->arena->query(out_free, out_total);
  return nullptr;
}

xdev_status_t* host_memory_allocate(xdev_device_t* device, uint64_t size,
                                    void** out_ptr) noexcept {
  constexpr const char* kSlot = "host_memory_allocate";
  if (device == nullptr) return g_host.null_argument(nullptr, kSlot, "device");
  const xdev_host_api_t* host = host_of(device);
  if (out_ptr == nullptr) return g_host.null_argument(host, kSlot, "out_ptr");
  *out_ptr = nullptr;
  if (size == 0) {
    return g_host.fail(host, XDEV_STATUS_INVALID_ARGUMENT, "%s: size is 0 (must be > 0)", kSlot);
  }
  if (size > UINT64_MAX - kHostMemoryAlignment) {
    return g_host.fail(host, XDEV_STATUS_OUT_OF_MEMORY, "%s: cannot allocate %" PRIu64 " bytes",
                       kSlot, size);
  }
  return g_host.guard(host, kSlot, [&]() -> xdev_status_t* {
    const uint64_t rounded = (size + kHostMemoryAlignment - 1) / kHostMemoryAlignment *
                             kHostMemoryAlignment;
    void* block = nullptr;
    if (rounded > SIZE_MAX || posix_memalign(&block, kHostMemoryAlignment, rounded) != 0) {
      return g_host.fail(host, XDEV_STATUS_OUT_OF_MEMORY,
                         "%s: cannot allocate %" PRIu64 " bytes of host memory for %s", kSlot, size,
                         device->text->label.c_str());
    }
    try {
      std::lock_guard lock(device->mutex);
      device->host_blocks.insert(block);
    } catch (...) {
      std::free(block);
      throw;
    }
    *out_ptr = block;
    return nullptr;
  });
}

void host_memory_free(xdev_device_t* device, void* ptr) noexcept {
  if (device == nullptr || ptr == nullptr) return;
  bool known = false;
  {
    std::lock_guard lock(device->mutex);
    known = device->host_blocks.erase(ptr) > 0;
  }
  if (known) {
    std::free(ptr);
  } else {
    g_host.log(host_of(device), XDEV_LOG_ERROR,
               "host_memory_free: %p is not host memory allocated for %s; ignored", ptr,
               device->text->label.c_str());
  }
}

// ---------------------------------------------------------------------------
// Streams and events

// stream_create and event_create: a new Handle of `device`, completed by
// `set_up` and kept in the device's set `owned` (device_close releases what
// the core forgot).
template <typename Handle, typename SetUp>
xdev_status_t* create_handle(const char* slot, xdev_device_t* device, Handle** out,
                             const char* out_name, std::set<Handle*> xdev_device_t::*owned,
                             SetUp&& set_up) noexcept {
  if (device == nullptr) return g_host.null_argument(nullptr, slot, "device");
  const xdev_host_api_t* host = host_of(device);
  if (out == nullptr) return g_host.null_argument(host, slot, out_name);
  *out = nullptr;
  return g_host.guard(host, slot, [&]() -> xdev_status_t* {
    auto handle = std::make_unique<Handle>();
    handle->device = device;
    set_up(*handle);
    {
      std::lock_guard lock(device->mutex);
      (device->*owned).insert(handle.get());
    }
    *out = handle.release();
    return nullptr;
  });
}

xdev_status_t* stream_create(xdev_device_t* device, xdev_stream_t** out_stream) noexcept {
  return create_handle("stream_create", device, out_stream, "out_stream", &xdev_device_t::streams,
                       [device](xdev_stream_t& stream) {
                         stream.queue = std::make_unique<WorkQueue>(device->text->label + " stream",
                                                                    device->plugin->config.delay);
                       });
}

void stream_destroy(xdev_stream_t* stream) noexcept {
  if (stream == nullptr) return;
  xdev_device_t* device = stream->device;
  {
    std::lock_guard lock(device->mutex);
    device->streams.erase(stream);
  }
  // Runs what is still queued (the core should have synchronized), so an
  // error nobody asked for can at least be logged.
  try {
    const Failure failure = stream->queue->synchronize();
    if (failure) {
      g_host.log(host_of(device), XDEV_LOG_WARNING,
                 "stream_destroy: %s: asynchronous error never reported by stream_synchronize: %s",
                 device->text->label.c_str(), failure.message.c_str());
    }
  } catch (...) {
    // Only the log line is lost; the destructor below drains the queue too.
  }
  delete stream;  // joins the worker
}

xdev_status_t* stream_synchronize(xdev_stream_t* stream) noexcept {
  constexpr const char* kSlot = "stream_synchronize";
  if (stream == nullptr) return g_host.null_argument(nullptr, kSlot, "stream");
  const xdev_host_api_t* host = host_of(stream);
  return g_host.guard(host, kSlot, [&]() -> xdev_status_t* {
    Failure failure = stream->queue->synchronize();
    // Memory the core freed while queued work still used it (Arena::pin).
    // Taken either way: when that work failed on it too, this is the same
    // core bug, reported once.
    Failure violation = stream->device->arena->take_violation();
    if (!failure) failure = std::move(violation);
    if (!failure) return nullptr;
    return g_host.fail(host, failure.code, "%s: asynchronous work failed: %s", kSlot,
                       failure.message.c_str());
  });
}

xdev_status_t* event_create(xdev_device_t* device, xdev_event_t** out_event) noexcept {
  // A new event has no mark: it counts as completed until recorded.
  return create_handle("event_create", device, out_event, "out_event", &xdev_device_t::events,
                       [](xdev_event_t&) {});
}

void event_destroy(xdev_event_t* event) noexcept {
  if (event == nullptr) return;
  {
    std::lock_guard lock(event->device->mutex);
    event->device->events.erase(event);
  }
  // A pending mark lives on in the stream that completes it.
  delete event;
}

std::shared_ptr<Mark> current_mark(xdev_event_t* event) {
  std::lock_guard lock(event->mutex);
  return event->mark;
}

xdev_status_t* event_record(xdev_event_t* event, xdev_stream_t* stream) noexcept {
  constexpr const char* kSlot = "event_record";
  if (event == nullptr) return g_host.null_argument(nullptr, kSlot, "event");
  const xdev_host_api_t* host = host_of(event->device);
  if (stream == nullptr) return g_host.null_argument(host, kSlot, "stream");
  if (stream->device->plugin != event->device->plugin) {
    return g_host.fail(host, XDEV_STATUS_INVALID_ARGUMENT,
                       "%s: the stream belongs to another instance of the sim plugin", kSlot);
  }
  return g_host.guard(host, kSlot, [&]() -> xdev_status_t* {
    auto mark = std::make_shared<Mark>();
    stream->queue->enqueue(
        [mark]() -> Failure {
          mark->complete();
          return {};
        },
        /*delayed=*/false);
    std::lock_guard lock(event->mutex);
    event->mark = std::move(mark);
    return nullptr;
  });
}

xdev_status_t* stream_wait_event(xdev_stream_t* stream, xdev_event_t* event) noexcept {
  constexpr const char* kSlot = "stream_wait_event";
  if (stream == nullptr) return g_host.null_argument(nullptr, kSlot, "stream");
  const xdev_host_api_t* host = host_of(stream);
  if (event == nullptr) return g_host.null_argument(host, kSlot, "event");
  if (stream->device->plugin != event->device->plugin) {
    return g_host.fail(host, XDEV_STATUS_INVALID_ARGUMENT,
                       "%s: the event belongs to another instance of the sim plugin", kSlot);
  }
  return g_host.guard(host, kSlot, [&]() -> xdev_status_t* {
    std::shared_ptr<Mark> mark = current_mark(event);
    if (mark == nullptr || mark->done()) return nullptr;  // nothing to wait for
    // Blocks this stream's worker, not the host. No cycle is possible: the
    // mark was enqueued before this call, so it never waits for later work.
    stream->queue->enqueue(
        [mark = std::move(mark)]() -> Failure {
          mark->wait();
          return {};
        },
        /*delayed=*/false);
    return nullptr;
  });
}

xdev_status_t* event_synchronize(xdev_event_t* event) noexcept {
  constexpr const char* kSlot = "event_synchronize";
  if (event == nullptr) return g_host.null_argument(nullptr, kSlot, "event");
  return g_host.guard(host_of(event->device), kSlot, [&]() -> xdev_status_t* {
    if (std::shared_ptr<Mark> mark = current_mark(event)) mark->wait();
    return nullptr;
  });
}

xdev_status_t* event_query(xdev_event_t* event, int32_t* out_done) noexcept {
  constexpr const char* kSlot = "event_query";
  if (event == nullptr) return g_host.null_argument(nullptr, kSlot, "event");
  if (out_done == nullptr) return g_host.null_argument(host_of(event->device), kSlot, "out_done");
  return g_host.guard(host_of(event->device), kSlot, [&]() -> xdev_status_t* {
    std::shared_ptr<Mark> mark = current_mark(event);
    *out_done = mark == nullptr || mark->done() ? 1 : 0;
    return nullptr;
  });
}

// ABI 1.4: the time between the workers reaching the two marks.
xdev_status_t* event_elapsed_ms(xdev_event_t* start, xdev_event_t* end, double* out_ms) noexcept {
  constexpr const char* kSlot = "event_elapsed_ms";
  if (start == nullptr) return g_host.null_argument(nullptr, kSlot, "start");
  const xdev_host_api_t* host = host_of(start->device);
  if (end == nullptr) return g_host.null_argument(host, kSlot, "end");
  if (out_ms == nullptr) return g_host.null_argument(host, kSlot, "out_ms");
  if (start->device != end->device) {
    return g_host.fail(host, XDEV_STATUS_INVALID_ARGUMENT, "%s: the events belong to two devices",
                       kSlot);
  }
  return g_host.guard(host, kSlot, [&]() -> xdev_status_t* {
    std::shared_ptr<Mark> a = current_mark(start), b = current_mark(end);
    if (a == nullptr || b == nullptr) {
      return g_host.fail(host, XDEV_STATUS_FAILED_PRECONDITION, "%s: the %s event was not recorded",
                         kSlot, a == nullptr ? "start" : "end");
    }
    if (!a->done() || !b->done()) {
      return g_host.fail(host, XDEV_STATUS_FAILED_PRECONDITION,
                         "%s: the %s event has not completed", kSlot,
                         !a->done() ? "start" : "end");
    }
    *out_ms = std::chrono::duration<double, std::milli>(b->completed_at() - a->completed_at())
                  .count();
    return nullptr;
  });
}

// ---------------------------------------------------------------------------
// Copies. Each checks its addresses now (a status for the caller) and again
// when it runs (a failure for stream_synchronize, e.g. memory freed early).

bool ranges_overlap(uint64_t a, uint64_t b, uint64_t size) noexcept {
  return a < b + size && b < a + size;
}

// A copy between host memory and the stream's device, to the device when
// `to_device`. The device range is checked now and again when the copy
// runs; the host memory is read or written when the copy runs, never
// snapshotted: the ABI says the caller keeps it valid and unchanged until
// then, and a snapshot would hide a core that does not.
xdev_status_t* copy_with_host(const char* slot, xdev_stream_t* stream, uint64_t device_address,
                              void* host_memory, uint64_t size, bool to_device) noexcept {
  if (stream == nullptr) return g_host.null_argument(nullptr, slot, "stream");
  const xdev_host_api_t* host = host_of(stream);
  if (size == 0) return nullptr;
  if (host_memory == nullptr) return g_host.null_argument(host, slot, to_device ? "src" : "dst");
  const char* device_role = to_device ? "destination" : "source";
  return g_host.guard(host, slot, [&]() -> xdev_status_t* {
    if (Failure failure = check_host_pointer(host_memory, to_device ? "source" : "destination")) {
      return to_status(host, slot, failure);
    }
    const Arena& arena = *stream->device->arena;
    std::byte* unused = nullptr;
    if (Failure failure = arena.resolve(device_address, size, device_role, &unused)) {
      return to_status(host, slot, failure);
    }
    stream->queue->enqueue(
        [slot, &arena, device_address, device_role, host_memory, size, to_device,
         pin = arena.pin(device_address)]() -> Failure {
          std::byte* device_memory = nullptr;
          if (Failure failure = arena.resolve(device_address, size, device_role, &device_memory)) {
            return prefixed(slot, std::move(failure));
          }
          std::memcpy(to_device ? static_cast<void*>(device_memory) : host_memory,
                      to_device ? host_memory : static_cast<const void*>(device_memory), size);
          return {};
        },
        /*delayed=*/true);
    return nullptr;
  });
}

xdev_status_t* copy_host_to_device(xdev_stream_t* stream, void* dst, const void* src,
                                   uint64_t size) noexcept {
  return copy_with_host("copy_host_to_device", stream, address_of(dst), const_cast<void*>(src),
                        size, /*to_device=*/true);
}

xdev_status_t* copy_device_to_host(xdev_stream_t* stream, void* dst, const void* src,
                                   uint64_t size) noexcept {
  return copy_with_host("copy_device_to_host", stream, address_of(src), dst, size,
                        /*to_device=*/false);
}

// A copy between device addresses: `src` in `source_arena`, `dst` in the
// stream's device.
xdev_status_t* copy_between_devices(const char* slot, xdev_stream_t* stream, uint64_t dst,
                                    const Arena& source_arena, uint64_t src, uint64_t size) {
  const xdev_host_api_t* host = host_of(stream);
  const Arena& target_arena = *stream->device->arena;
  std::byte* unused = nullptr;
  if (Failure failure = source_arena.resolve(src, size, "source", &unused)) {
    return to_status(host, slot, failure);
  }
  if (Failure failure = target_arena.resolve(dst, size, "destination", &unused)) {
    return to_status(host, slot, failure);
  }
  if (&source_arena == &target_arena && ranges_overlap(dst, src, size)) {
    return g_host.fail(host, XDEV_STATUS_INVALID_ARGUMENT,
                       "%s: the %" PRIu64 "-byte regions at 0x%" PRIx64 " (source) and 0x%" PRIx64
                       " (destination) overlap",
                       slot, size, src, dst);
  }
  stream->queue->enqueue(
      [slot, &source_arena, &target_arena, dst, src, size, source_pin = source_arena.pin(src),
       target_pin = target_arena.pin(dst)]() -> Failure {
        std::byte* source = nullptr;
        std::byte* target = nullptr;
        if (Failure failure = source_arena.resolve(src, size, "source", &source)) {
          return prefixed(slot, std::move(failure));
        }
        if (Failure failure = target_arena.resolve(dst, size, "destination", &target)) {
          return prefixed(slot, std::move(failure));
        }
        std::memcpy(target, source, size);
        return {};
      },
      /*delayed=*/true);
  return nullptr;
}

xdev_status_t* copy_device_to_device(xdev_stream_t* stream, void* dst, const void* src,
                                     uint64_t size) noexcept {
  constexpr const char* kSlot = "copy_device_to_device";
  if (stream == nullptr) return g_host.null_argument(nullptr, kSlot, "stream");
  if (size == 0) return nullptr;
  return g_host.guard(host_of(stream), kSlot, [&]() -> xdev_status_t* {
    return copy_between_devices(kSlot, stream, address_of(dst), *stream->device->arena,
                                address_of(src), size);
  });
}

xdev_status_t* copy_peer(xdev_stream_t* stream, void* dst, xdev_device_t* src_device,
                         const void* src, uint64_t size) noexcept {
  constexpr const char* kSlot = "copy_peer";
  if (stream == nullptr) return g_host.null_argument(nullptr, kSlot, "stream");
  const xdev_host_api_t* host = host_of(stream);
  if (src_device == nullptr) return g_host.null_argument(host, kSlot, "src_device");
  if (src_device->plugin != stream->device->plugin) {
    return g_host.fail(host, XDEV_STATUS_INVALID_ARGUMENT,
                       "%s: src_device belongs to another instance of the sim plugin", kSlot);
  }
  if (size == 0) return nullptr;
  return g_host.guard(host, kSlot, [&]() -> xdev_status_t* {
    return copy_between_devices(kSlot, stream, address_of(dst), *src_device->arena,
                                address_of(src), size);
  });
}

// ---------------------------------------------------------------------------
// Kernels

xdev_status_t* kernels(xdev_plugin_t* plugin, const xdev_kernel_info_t* const** out_kernels,
                       uint32_t* out_count) noexcept {
  if (plugin == nullptr) return g_host.null_argument(nullptr, "kernels", "plugin");
  return g_host.hand_out(plugin->host, "kernels", "out_kernels", plugin->kernels.data(),
                         plugin->kernels.size(), out_kernels, out_count);
}

xdev_status_t* run_kernel(const KernelContext& entry, const xdev_kernel_call_t* call) noexcept {
  const xdev_plugin_t* plugin = entry.plugin;
  const char* op = entry.host->op;
  const xdev_host_api_t* host = plugin->host;
  if (call == nullptr) return g_host.null_argument(host, op, "call");
  if (!XDEV_HAS_FIELD(call, xdev_kernel_call_t, attr_count)) {
    return g_host.fail(host, XDEV_STATUS_ABI_MISMATCH,
                       "%s: call->struct_size is %zu bytes; a v1.0 kernel call needs %zu", op,
                       call->struct_size, static_cast<size_t>(XDEV_KERNEL_CALL_STRUCT_SIZE_1_0));
  }
  if (call->device == nullptr) return g_host.null_argument(host, op, "call->device");
  if (call->stream == nullptr) return g_host.null_argument(host, op, "call->stream");
  if (call->stream->device != call->device) {
    return g_host.fail(
        host, XDEV_STATUS_INVALID_ARGUMENT, "%s: the stream belongs to %s, but the call is for %s",
        op, call->stream->device->text->label.c_str(), call->device->text->label.c_str());
  }
  if (call->op == nullptr || std::strcmp(call->op, op) != 0) {
    return g_host.fail(host, XDEV_STATUS_INVALID_ARGUMENT,
                       "%s: the %s kernel was called for op '%s'", op, op,
                       call->op != nullptr ? call->op : "(NULL)");
  }
  return g_host.guard(host, op, [&]() -> xdev_status_t* {
    const Failure failure = enqueue_kernel(*entry.host, entry.input_dtypes, *call,
                                           *call->device->arena, *call->stream->queue, host);
    if (!failure) return nullptr;
    return g_host.fail(host, failure.code, "%s", failure.message.c_str());
  });
}

// XDEV_SIM_SCRATCH_BYTES (ABI 1.2 kernel scratch): MatMul asks the core for
// that many bytes of scratch and fills them on the stream before the product,
// like a BLAS workspace. The range is checked to lie in a live allocation
// when the call is made and again when the work runs, so scratch the core
// gave back to the device too early shows at the next synchronize.
Failure use_scratch(const xdev_kernel_call_t& call, uint64_t bytes) {
  const Arena& arena = *call.device->arena;
  if (!XDEV_HAS_FIELD(&call, xdev_kernel_call_t, scratch_context) ||
      call.scratch_allocate == nullptr) {
    return make_failure(XDEV_STATUS_FAILED_PRECONDITION,
                        "MatMul on %s: XDEV_SIM_SCRATCH_BYTES asks for scratch, but the caller "
                        "offers none (ABI 1.2 scratch_allocate)",
                        arena.label().c_str());
  }
  void* scratch = call.scratch_allocate(call.scratch_context, bytes);
  if (scratch == nullptr) {
    return make_failure(XDEV_STATUS_OUT_OF_MEMORY,
                        "MatMul on %s: no scratch of %" PRIu64 " bytes (XDEV_SIM_SCRATCH_BYTES)",
                        arena.label().c_str(), bytes);
  }
  std::byte* unused = nullptr;
  if (Failure failure = arena.resolve(address_of(scratch), bytes, "MatMul scratch", &unused)) {
    return failure;
  }
  call.stream->queue->enqueue(
      [&arena, address = address_of(scratch), bytes,
       pin = arena.pin(address_of(scratch))]() -> Failure {
        std::byte* host = nullptr;
        if (Failure failure = arena.resolve(address, bytes, "MatMul scratch", &host)) {
          return failure;
        }
        std::memset(host, 0x5c, bytes);
        return {};
      },
      /*delayed=*/true);
  return {};
}

// Every kernel of the plugin: `context` is its KernelContext.
xdev_status_t* kernel(void* context, const xdev_kernel_call_t* call) noexcept {
  const auto* entry = static_cast<const KernelContext*>(context);
  if (entry == nullptr) return g_host.null_argument(nullptr, "kernel", "kernel_context");
  const xdev_plugin_t* plugin = entry->plugin;
  const bool matmul = std::strcmp(entry->host->op, XDEV_OP_MatMul) == 0;
  if (matmul && plugin->config.scratch_bytes > 0 && call != nullptr &&
      call->device != nullptr && call->stream != nullptr &&
      call->stream->device == call->device) {
    try {
      if (Failure failure = use_scratch(*call, plugin->config.scratch_bytes)) {
        return g_host.fail(plugin->host, failure.code, "%s", failure.message.c_str());
      }
    } catch (...) {
      return g_host.unexpected(plugin->host, XDEV_OP_MatMul);
    }
  }
  return run_kernel(*entry, call);
}

// ---------------------------------------------------------------------------
// Device collectives (ABI 1.7) over shared memory: collectives.hpp

xdev_status_t* collective_id(xdev_plugin_t* plugin, uint8_t* id, size_t capacity,
                             size_t* out_size) noexcept {
  constexpr const char* kSlot = "collective_id";
  if (plugin == nullptr) return g_host.null_argument(nullptr, kSlot, "plugin");
  if (id == nullptr) return g_host.null_argument(plugin->host, kSlot, "id");
  if (out_size == nullptr) return g_host.null_argument(plugin->host, kSlot, "out_size");
  return g_host.guard(plugin->host, kSlot, [&]() -> xdev_status_t* {
    Failure failure = CollectiveGroup::make_id(id, capacity, out_size);
    return failure ? g_host.fail(plugin->host, failure.code, "%s", failure.message.c_str())
                   : nullptr;
  });
}

xdev_status_t* communicator_create(xdev_plugin_t* plugin, const xdev_collective_init_t* init,
                                   xdev_device_t* const* devices, const int32_t* ranks,
                                   int32_t count, xdev_communicator_t** out_comms) noexcept {
  constexpr const char* kSlot = "communicator_create";
  if (plugin == nullptr) return g_host.null_argument(nullptr, kSlot, "plugin");
  const xdev_host_api_t* host = plugin->host;
  if (init == nullptr) return g_host.null_argument(host, kSlot, "init");
  if (devices == nullptr) return g_host.null_argument(host, kSlot, "devices");
  if (ranks == nullptr) return g_host.null_argument(host, kSlot, "ranks");
  if (out_comms == nullptr) return g_host.null_argument(host, kSlot, "out_comms");
  if (!XDEV_HAS_FIELD(init, xdev_collective_init_t, timeout_ms)) {
    return g_host.fail(host, XDEV_STATUS_ABI_MISMATCH, "%s: init->struct_size %zu is below %zu",
                       kSlot, init->struct_size, size_t{XDEV_COLLECTIVE_INIT_STRUCT_SIZE});
  }
  return g_host.guard(host, kSlot, [&]() -> xdev_status_t* {
    for (int32_t i = 0; i < count; ++i) {
      if (devices[i] == nullptr || devices[i]->plugin != plugin) {
        return g_host.fail(host, XDEV_STATUS_INVALID_ARGUMENT,
                           "%s: devices[%d] is no open device of this sim plugin", kSlot, i);
      }
      if (ranks[i] < 0 || ranks[i] >= init->nranks) {
        return g_host.fail(host, XDEV_STATUS_INVALID_ARGUMENT, "%s: rank %d is not in [0, %d)",
                           kSlot, ranks[i], init->nranks);
      }
    }
    std::shared_ptr<CollectiveGroup> group;
    const auto timeout =
        std::chrono::milliseconds(init->timeout_ms == 0 ? 60000 : init->timeout_ms);
    if (Failure failure = CollectiveGroup::join(init->id, init->id_size, init->nranks, count,
                                                timeout, &group)) {
      return g_host.fail(host, failure.code, "%s", failure.message.c_str());
    }
    for (int32_t i = 0; i < count; ++i) {
      auto* comm = new xdev_communicator_t;
      comm->device = devices[i];
      comm->state = std::make_shared<RankState>();
      comm->state->group = group;
      comm->state->rank = ranks[i];
      out_comms[i] = comm;
    }
    return nullptr;
  });
}

void communicator_destroy(xdev_communicator_t* comm) noexcept { delete comm; }

void communicator_abort(xdev_communicator_t* comm) noexcept {
  if (comm == nullptr) return;
  comm->state->aborted = true;  // this rank's queued collectives give up
  comm->state->group->abort(comm->state->rank);  // and every other rank's
  delete comm;
}

xdev_status_t* communicator_poll(xdev_communicator_t* comm) noexcept {
  constexpr const char* kSlot = "communicator_poll";
  if (comm == nullptr) return g_host.null_argument(nullptr, kSlot, "comm");
  const int32_t by = comm->state->group->aborted_by();
  if (by < 0) return nullptr;
  return g_host.fail(host_of(comm->device), XDEV_STATUS_UNAVAILABLE,
                     "%s: %s: rank %d aborted the group", kSlot,
                     comm->device->text->label.c_str(), by);
}

// Checks one call and resolves its buffers; the work for the stream, or a
// failure (then nothing is enqueued anywhere).
Failure prepare_collective(xdev_communicator_t* comm, xdev_stream_t* stream,
                           const xdev_collective_call_t* call, WorkQueue::Work* out) {
  if (comm == nullptr || stream == nullptr || call == nullptr) {
    return make_failure(XDEV_STATUS_INVALID_ARGUMENT, "collective: a NULL comm, stream or call");
  }
  if (!XDEV_HAS_FIELD(call, xdev_collective_call_t, count)) {
    return make_failure(XDEV_STATUS_ABI_MISMATCH, "collective: call->struct_size %zu is below %zu",
                        call->struct_size, size_t{XDEV_COLLECTIVE_CALL_STRUCT_SIZE});
  }
  if (stream->device != comm->device) {
    return make_failure(XDEV_STATUS_INVALID_ARGUMENT,
                        "collective: the stream belongs to %s, the communicator to %s",
                        stream->device->text->label.c_str(), comm->device->text->label.c_str());
  }
  CollectiveArgs args;
  args.kind = call->kind;
  args.op = call->op;
  args.dtype = call->dtype;
  args.root = call->root;
  args.count = call->count;
  std::shared_ptr<RankState> state = comm->state;
  uint64_t send_bytes = 0, recv_bytes = 0;
  if (Failure failure = collective_sizes(args, state->group->nranks(), &send_bytes, &recv_bytes)) {
    return failure;
  }
  const Arena& arena = *comm->device->arena;
  const uint64_t send = address_of(call->send_allocation) + call->send_offset;
  const uint64_t recv = address_of(call->recv_allocation) + call->recv_offset;
  std::byte* unused = nullptr;
  if (Failure failure = arena.resolve(send, send_bytes, "collective send", &unused)) return failure;
  if (Failure failure = arena.resolve(recv, recv_bytes, "collective recv", &unused)) return failure;
  if (send != recv && ranges_overlap(send, recv, std::min(send_bytes, recv_bytes))) {
    return make_failure(XDEV_STATUS_INVALID_ARGUMENT,
                        "collective: send and recv overlap without being the same buffer");
  }
  const std::chrono::microseconds delay = comm->device->plugin->config.collective_delay;
  *out = [&arena, state = std::move(state), args, send, recv, send_bytes, recv_bytes, delay,
          send_pin = arena.pin(send), recv_pin = arena.pin(recv)]() mutable -> Failure {
    if (delay.count() > 0) std::this_thread::sleep_for(delay);
    std::byte* send_host = nullptr;
    std::byte* recv_host = nullptr;
    if (Failure failure = arena.resolve(send, send_bytes, "collective send", &send_host)) {
      return failure;
    }
    if (Failure failure = arena.resolve(recv, recv_bytes, "collective recv", &recv_host)) {
      return failure;
    }
    args.send = send_host;
    args.recv = recv_host;
    Failure failure = state->group->run(state->rank, args, &state->round, state->aborted);
    if (failure) failure.message = arena.label() + ": " + failure.message;
    return failure;
  };
  return {};
}

xdev_status_t* collective(xdev_communicator_t* const* comms, xdev_stream_t* const* streams,
                          const xdev_collective_call_t* calls, int32_t count) noexcept {
  constexpr const char* kSlot = "collective";
  if (comms == nullptr || streams == nullptr || calls == nullptr || count < 1 ||
      comms[0] == nullptr) {
    return g_host.fail(nullptr, XDEV_STATUS_INVALID_ARGUMENT,
                       "%s: NULL arrays or a count of %d", kSlot, count);
  }
  const xdev_host_api_t* host = host_of(comms[0]->device);
  return g_host.guard(host, kSlot, [&]() -> xdev_status_t* {
    std::vector<WorkQueue::Work> work(static_cast<size_t>(count));
    for (int32_t i = 0; i < count; ++i) {
      if (Failure failure = prepare_collective(comms[i], streams[i], &calls[i], &work[i])) {
        return g_host.fail(host, failure.code, "%s: %s", kSlot, failure.message.c_str());
      }
    }
    // Every rank of this process on its own stream worker: they meet in the
    // group's memory, so none waits for another's enqueue.
    for (int32_t i = 0; i < count; ++i) {
      streams[i]->queue->enqueue(std::move(work[i]), /*delayed=*/false);
    }
    return nullptr;
  });
}

// ---------------------------------------------------------------------------
// The table

// The sim plugin implements every slot of the table, optional ones included,
// each with the function of the slot's name.
constexpr xdev_plugin_api_t make_plugin_api() {
  xdev_plugin_api_t api{};
  api.struct_size = XDEV_PLUGIN_API_STRUCT_SIZE;
  api.abi_version = {XDEV_ABI_VERSION_MAJOR, XDEV_ABI_VERSION_MINOR};
  api.name = "sim";
  api.plugin_version = XDEV_SIM_PLUGIN_VERSION;
  api.capabilities = XDEV_CAP_EVENTS | XDEV_CAP_PEER_COPY | XDEV_CAP_HOST_MEMORY |
                     XDEV_CAP_EVENT_TIMING | XDEV_CAP_COLLECTIVES;
#define XDEV_SIM_SET_SLOT(slot, required) api.slot = &slot;
  XDEV_PLUGIN_SLOTS(XDEV_SIM_SET_SLOT)
#undef XDEV_SIM_SET_SLOT
  api.event_elapsed_ms = &event_elapsed_ms;  // ABI 1.4
  api.collective_id = &collective_id;        // ABI 1.7
  api.communicator_create = &communicator_create;
  api.communicator_destroy = &communicator_destroy;
  api.communicator_abort = &communicator_abort;
  api.communicator_poll = &communicator_poll;
  api.collective = &collective;
  return api;
}
constexpr xdev_plugin_api_t kPluginApi = make_plugin_api();

}  // namespace
}  // namespace xdev::sim

// The entry point. Cheap: reads and writes the arguments, starts nothing.
XDEV_PLUGIN_ENTRY_POINT xdev_status_t* xdev_plugin_query(xdev_plugin_query_args_t* args) {
  return xdev::sim::g_host.answer_query(args, xdev::sim::kPluginApi);
}
