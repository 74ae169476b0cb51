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
//  - kernels MatMul and Add for float32 and float64 only (kernels.hpp): no
//    Cast, so the core must fall back to another device for it.
//
// Every function reached through the table is noexcept and turns failures
// into status objects made with the host's status_create.
#include <xdev/plugin.h>

#include <algorithm>
#include <atomic>
#include <cinttypes>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <mutex>
#include <new>
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
// Host table, statuses, logging

// The host table for calls that have no handle to find their own (a NULL
// handle becomes an INVALID_ARGUMENT status made with it). Set by
// xdev_plugin_query and initialize.
std::atomic<const xdev_host_api_t*> g_host{nullptr};

const xdev_host_api_t* global_host() noexcept { return g_host.load(std::memory_order_acquire); }

bool can_create_status(const xdev_host_api_t* host) noexcept {
  return host != nullptr && XDEV_HAS_FIELD(host, xdev_host_api_t, status_create) &&
         host->status_create != nullptr;
}

// A status with a printf-formatted message; allocates nothing itself. Falls
// back to the global table; NULL only when no table was ever given.
[[gnu::format(printf, 3, 4)]] xdev_status_t* fail(const xdev_host_api_t* host,
                                                  xdev_status_code_t code, const char* format,
                                                  ...) noexcept {
  if (!can_create_status(host)) host = global_host();
  if (!can_create_status(host)) return nullptr;
  char text[1024];
  va_list args;
  va_start(args, format);
  std::vsnprintf(text, sizeof(text), format, args);
  va_end(args);
  return host->status_create(host->host_context, code, text);
}

// A Failure as a status, its message after "<slot>: ".
xdev_status_t* to_status(const xdev_host_api_t* host, const char* slot,
                         const Failure& failure) noexcept {
  if (!failure) return nullptr;
  return fail(host, failure.code, "%s: %s", slot, failure.message.c_str());
}

[[gnu::format(printf, 3, 4)]] void log(const xdev_host_api_t* host, xdev_log_level_t level,
                                       const char* format, ...) noexcept {
  if (host == nullptr || !XDEV_HAS_FIELD(host, xdev_host_api_t, log) || host->log == nullptr) {
    return;
  }
  char text[1024];
  va_list args;
  va_start(args, format);
  std::vsnprintf(text, sizeof(text), format, args);
  va_end(args);
  host->log(host->host_context, level, text);
}

// Called inside a catch block: the exception as a status.
xdev_status_t* unexpected(const xdev_host_api_t* host, const char* slot) noexcept {
  try {
    throw;
  } catch (const std::bad_alloc&) {
    return fail(host, XDEV_STATUS_OUT_OF_MEMORY, "%s: out of host memory", slot);
  } catch (const std::exception& error) {
    return fail(host, XDEV_STATUS_INTERNAL, "%s: unexpected error: %s", slot, error.what());
  } catch (...) {
    return fail(host, XDEV_STATUS_INTERNAL, "%s: unexpected unknown exception", slot);
  }
}

xdev_status_t* null_argument(const xdev_host_api_t* host, const char* slot,
                             const char* argument) noexcept {
  return fail(host, XDEV_STATUS_INVALID_ARGUMENT, "%s: %s is NULL", slot, argument);
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

// Reads a whole decimal number from the environment; unset or empty means
// `fallback`.
Failure read_env(const char* name, uint64_t fallback, uint64_t lowest, uint64_t highest,
                 uint64_t* out) {
  const char* text = std::getenv(name);
  if (text == nullptr || *text == '\0') {
    *out = fallback;
    return {};
  }
  uint64_t value = 0;
  bool valid = true;
  for (const char* c = text; *c != '\0' && valid; ++c) {
    valid = *c >= '0' && *c <= '9' && value <= (UINT64_MAX - 9) / 10;
    if (valid) value = value * 10 + static_cast<uint64_t>(*c - '0');
  }
  if (!valid || value < lowest || value > highest) {
    return make_failure(XDEV_STATUS_INVALID_ARGUMENT,
                        "%s='%s' is not a whole number in [%" PRIu64 ", %" PRIu64 "]", name, text,
                        lowest, highest);
  }
  *out = value;
  return {};
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
    text.bus_id = printf_string("sim:%02" PRIu32, i);
    text.description = "device: " + std::to_string(i) + ", name: " + text.name +
                       ", pci bus id: " + text.bus_id + ", compute capability: 0.0";
    text.label = text.name + " (" + text.bus_id + ")";
    text.property_text = {
        {"compute_capability", "0.0"},
        {"simulated", "true"},
        {"address_tag", printf_string("0x%016" PRIx64, kAddressTag)},
        {"memory_mb", std::to_string(config.memory_mb)},
        {"delay_us", std::to_string(config.delay.count())},
    };
    text.properties.clear();
    for (const auto& [key, value] : text.property_text) {
      text.properties.push_back({key.c_str(), value.c_str()});
    }
  }
  plugin.status_line = std::to_string(config.device_count) + " simulated device" +
                       (config.device_count == 1 ? "" : "s") + ", " +
                       std::to_string(config.memory_mb) + " MiB each";
  if (config.delay.count() > 0) {
    plugin.status_line += ", " + std::to_string(config.delay.count()) + " us delay per operation";
  }
}

xdev_status_t* matmul_kernel(void* context, const xdev_kernel_call_t* call) noexcept;
xdev_status_t* add_kernel(void* context, const xdev_kernel_call_t* call) noexcept;

void register_kernels(xdev_plugin_t& plugin) {
  auto info = [&](const char* op, xdev_kernel_fn_t fn) {
    xdev_kernel_info_t kernel{};
    kernel.struct_size = XDEV_KERNEL_INFO_STRUCT_SIZE;
    kernel.ext = nullptr;
    kernel.op = op;
    kernel.type_index = 0;
    kernel.input_dtypes = kKernelDtypes;
    kernel.output_dtypes = kKernelDtypes;
    kernel.fn = fn;
    kernel.kernel_context = &plugin;
    return kernel;
  };
  plugin.kernel_infos = {info("MatMul", &matmul_kernel), info("Add", &add_kernel)};
  plugin.kernels.clear();
  for (const xdev_kernel_info_t& kernel : plugin.kernel_infos) plugin.kernels.push_back(&kernel);
}

// ---------------------------------------------------------------------------
// Life cycle

void device_close(xdev_device_t* device) noexcept;

xdev_status_t* initialize(const xdev_plugin_init_args_t* args,
                          xdev_plugin_t** out_plugin) noexcept {
  constexpr const char* kSlot = "initialize";
  const xdev_host_api_t* host = global_host();
  if (out_plugin == nullptr) return null_argument(host, kSlot, "out_plugin");
  *out_plugin = nullptr;
  if (args == nullptr) return null_argument(host, kSlot, "args");
  if (!XDEV_HAS_FIELD(args, xdev_plugin_init_args_t, host)) {
    return fail(host, XDEV_STATUS_ABI_MISMATCH,
                "%s: args->struct_size is %zu bytes; ABI v1.0 init arguments need %zu", kSlot,
                args->struct_size, static_cast<size_t>(XDEV_PLUGIN_INIT_ARGS_STRUCT_SIZE));
  }
  if (!can_create_status(args->host)) {
    return fail(host, XDEV_STATUS_INVALID_ARGUMENT,
                "%s: args->host is NULL or has no status_create", kSlot);
  }
  host = args->host;
  g_host.store(host, std::memory_order_release);
  try {
    auto plugin = std::make_unique<xdev_plugin_t>();
    plugin->host = host;
    if (Failure failure = read_config(&plugin->config)) return to_status(host, kSlot, failure);
    describe(*plugin);
    plugin->type.struct_size = XDEV_DEVICE_TYPE_INFO_STRUCT_SIZE;
    plugin->type.ext = nullptr;
    plugin->type.type = "GPU";
    plugin->type.platform = "sim";
    plugin->type.priority = XDEV_PRIORITY_GPU;
    plugin->type.dlpack_device_type = XDEV_DLPACK_EXT_DEV;
    register_kernels(*plugin);
    plugin->open.assign(plugin->config.device_count, nullptr);
    log(host, XDEV_LOG_DEBUG, "initialized: %s", plugin->status_line.c_str());
    *out_plugin = plugin.release();
    return nullptr;
  } catch (...) {
    return unexpected(host, kSlot);
  }
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
    log(plugin->host, XDEV_LOG_WARNING, "shutdown: %s is still open; closing it",
        device->text->label.c_str());
    device_close(device);
  }
  const xdev_host_api_t* expected = plugin->host;
  g_host.compare_exchange_strong(expected, nullptr, std::memory_order_acq_rel);
  delete plugin;
}

const char* describe_status(xdev_plugin_t* plugin) noexcept {
  return plugin != nullptr ? plugin->status_line.c_str() : "";
}

// ---------------------------------------------------------------------------
// Types and devices

xdev_status_t* device_types(xdev_plugin_t* plugin,
                            const xdev_device_type_info_t* const** out_types,
                            uint32_t* out_count) noexcept {
  constexpr const char* kSlot = "device_types";
  if (plugin == nullptr) return null_argument(global_host(), kSlot, "plugin");
  if (out_types == nullptr || out_count == nullptr) {
    return null_argument(plugin->host, kSlot, out_types == nullptr ? "out_types" : "out_count");
  }
  *out_types = plugin->types;
  *out_count = 1;
  return nullptr;
}

xdev_status_t* device_count(xdev_plugin_t* plugin, uint32_t* out_count) noexcept {
  constexpr const char* kSlot = "device_count";
  if (plugin == nullptr) return null_argument(global_host(), kSlot, "plugin");
  if (out_count == nullptr) return null_argument(plugin->host, kSlot, "out_count");
  *out_count = plugin->config.device_count;
  return nullptr;
}

xdev_status_t* no_such_device(const xdev_plugin_t* plugin, const char* slot,
                              uint32_t ordinal) noexcept {
  return fail(plugin->host, XDEV_STATUS_NOT_FOUND,
              "%s: no device with ordinal %" PRIu32 " (the sim plugin has %" PRIu32
              " devices; XDEV_SIM_DEVICES sets how many)",
              slot, ordinal, plugin->config.device_count);
}

xdev_status_t* device_get_properties(xdev_plugin_t* plugin, uint32_t ordinal,
                                     xdev_device_properties_t* out) noexcept {
  constexpr const char* kSlot = "device_get_properties";
  if (plugin == nullptr) return null_argument(global_host(), kSlot, "plugin");
  if (out == nullptr) return null_argument(plugin->host, kSlot, "out_props");
  if (ordinal >= plugin->config.device_count) return no_such_device(plugin, kSlot, ordinal);
  const DeviceText& text = plugin->devices[ordinal];
  // Fill only what the core's struct covers.
#define XDEV_SIM_SET(field, value) \
  if (XDEV_HAS_FIELD(out, xdev_device_properties_t, field)) out->field = (value)
  XDEV_SIM_SET(type_index, 0u);
  XDEV_SIM_SET(name, text.name.c_str());
  XDEV_SIM_SET(memory_total, plugin->config.memory_mb << 20);
  XDEV_SIM_SET(bus_id, text.bus_id.c_str());
  XDEV_SIM_SET(numa_node, -1);
  XDEV_SIM_SET(description, text.description.c_str());
  XDEV_SIM_SET(properties, text.properties.data());
  XDEV_SIM_SET(property_count, static_cast<uint32_t>(text.properties.size()));
#undef XDEV_SIM_SET
  return nullptr;
}

xdev_status_t* device_open(xdev_plugin_t* plugin, uint32_t ordinal,
                           xdev_device_t** out_device) noexcept {
  constexpr const char* kSlot = "device_open";
  if (plugin == nullptr) return null_argument(global_host(), kSlot, "plugin");
  if (out_device == nullptr) return null_argument(plugin->host, kSlot, "out_device");
  *out_device = nullptr;
  if (ordinal >= plugin->config.device_count) return no_such_device(plugin, kSlot, ordinal);
  try {
    std::lock_guard lock(plugin->mutex);
    const DeviceText& text = plugin->devices[ordinal];
    if (plugin->open[ordinal] != nullptr) {
      return fail(plugin->host, XDEV_STATUS_FAILED_PRECONDITION, "%s: %s is already open", kSlot,
                  text.label.c_str());
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
  } catch (...) {
    return unexpected(plugin->host, kSlot);
  }
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
    log(host, XDEV_LOG_WARNING, "device_close: %s: destroying %zu streams the core left alive",
        label, streams.size());
  }
  for (xdev_stream_t* stream : streams) stream_destroy(stream);
  if (!events.empty()) {
    log(host, XDEV_LOG_WARNING, "device_close: %s: destroying %zu events the core left alive",
        label, events.size());
  }
  for (xdev_event_t* event : events) event_destroy(event);
  if (!host_blocks.empty()) {
    log(host, XDEV_LOG_WARNING, "device_close: %s: freeing %zu host memory blocks the core "
        "left allocated", label, host_blocks.size());
  }
  for (void* block : host_blocks) std::free(block);
  const uint64_t live = device->arena->live_allocations();
  if (live > 0) {
    log(host, XDEV_LOG_WARNING, "device_close: %s: %" PRIu64
        " device allocations were never freed; they go with the device", label, live);
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
  if (device == nullptr) return null_argument(global_host(), kSlot, "device");
  const xdev_host_api_t* host = host_of(device);
  if (out_ptr == nullptr) return null_argument(host, kSlot, "out_ptr");
  *out_ptr = nullptr;
  const char* label = device->text->label.c_str();
  if (size == 0) {
    return fail(host, XDEV_STATUS_INVALID_ARGUMENT, "%s: %s: size is 0 (must be > 0)", kSlot,
                label);
  }
  if (alignment == 0 || (alignment & (alignment - 1)) != 0) {
    return fail(host, XDEV_STATUS_INVALID_ARGUMENT,
                "%s: %s: alignment %" PRIu64 " is not a power of two", kSlot, label, alignment);
  }
  try {
    uint64_t address = 0;
    if (Failure failure = device->arena->allocate(size, alignment, &address)) {
      return to_status(host, kSlot, failure);
    }
    *out_ptr = reinterpret_cast<void*>(address);
    return nullptr;
  } catch (...) {
    return unexpected(host, kSlot);
  }
}

void memory_free(xdev_device_t* device, void* ptr) noexcept {
  if (device == nullptr || ptr == nullptr) return;
  if (!device->arena->free(address_of(ptr))) {
    log(host_of(device), XDEV_LOG_ERROR,
        "memory_free: 0x%" PRIx64 " is not the start of a live allocation of %s; ignored",
        address_of(ptr), device->text->label.c_str());
  }
}

xdev_status_t* memory_query(xdev_device_t* device, uint64_t* out_free,
                            uint64_t* out_total) noexcept {
  constexpr const char* kSlot = "memory_query";
  if (device == nullptr) return null_argument(global_host(), kSlot, "device");
  if (out_free == nullptr || out_total == nullptr) {
    return null_argument(host_of(device), kSlot, out_free == nullptr ? "out_free" : "out_total");
  }
  device->arena->query(out_free, out_total);
  return nullptr;
}

xdev_status_t* host_memory_allocate(xdev_device_t* device, uint64_t size,
                                    void** out_ptr) noexcept {
  constexpr const char* kSlot = "host_memory_allocate";
  if (device == nullptr) return null_argument(global_host(), kSlot, "device");
  const xdev_host_api_t* host = host_of(device);
  if (out_ptr == nullptr) return null_argument(host, kSlot, "out_ptr");
  *out_ptr = nullptr;
  if (size == 0) {
    return fail(host, XDEV_STATUS_INVALID_ARGUMENT, "%s: size is 0 (must be > 0)", kSlot);
  }
  if (size > UINT64_MAX - kHostMemoryAlignment) {
    return fail(host, XDEV_STATUS_OUT_OF_MEMORY, "%s: cannot allocate %" PRIu64 " bytes", kSlot,
                size);
  }
  try {
    const uint64_t rounded = (size + kHostMemoryAlignment - 1) / kHostMemoryAlignment *
                             kHostMemoryAlignment;
    void* block = nullptr;
    if (rounded > SIZE_MAX || posix_memalign(&block, kHostMemoryAlignment, rounded) != 0) {
      return fail(host, XDEV_STATUS_OUT_OF_MEMORY,
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
  } catch (...) {
    return unexpected(host, kSlot);
  }
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
    log(host_of(device), XDEV_LOG_ERROR,
        "host_memory_free: %p is not host memory allocated for %s; ignored", ptr,
        device->text->label.c_str());
  }
}

// ---------------------------------------------------------------------------
// Streams and events

xdev_status_t* stream_create(xdev_device_t* device, xdev_stream_t** out_stream) noexcept {
  constexpr const char* kSlot = "stream_create";
  if (device == nullptr) return null_argument(global_host(), kSlot, "device");
  const xdev_host_api_t* host = host_of(device);
  if (out_stream == nullptr) return null_argument(host, kSlot, "out_stream");
  *out_stream = nullptr;
  try {
    auto stream = std::make_unique<xdev_stream_t>();
    stream->device = device;
    stream->queue = std::make_unique<WorkQueue>(device->text->label + " stream",
                                                device->plugin->config.delay);
    {
      std::lock_guard lock(device->mutex);
      device->streams.insert(stream.get());
    }
    *out_stream = stream.release();
    return nullptr;
  } catch (...) {
    return unexpected(host, kSlot);
  }
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
      log(host_of(device), XDEV_LOG_WARNING,
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
  if (stream == nullptr) return null_argument(global_host(), kSlot, "stream");
  const xdev_host_api_t* host = host_of(stream);
  try {
    const Failure failure = stream->queue->synchronize();
    if (!failure) return nullptr;
    return fail(host, failure.code, "%s: asynchronous work failed: %s", kSlot,
                failure.message.c_str());
  } catch (...) {
    return unexpected(host, kSlot);
  }
}

xdev_status_t* event_create(xdev_device_t* device, xdev_event_t** out_event) noexcept {
  constexpr const char* kSlot = "event_create";
  if (device == nullptr) return null_argument(global_host(), kSlot, "device");
  const xdev_host_api_t* host = host_of(device);
  if (out_event == nullptr) return null_argument(host, kSlot, "out_event");
  *out_event = nullptr;
  try {
    auto event = std::make_unique<xdev_event_t>();
    event->device = device;
    {
      std::lock_guard lock(device->mutex);
      device->events.insert(event.get());
    }
    *out_event = event.release();
    return nullptr;
  } catch (...) {
    return unexpected(host, kSlot);
  }
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
  if (event == nullptr) return null_argument(global_host(), kSlot, "event");
  const xdev_host_api_t* host = host_of(event->device);
  if (stream == nullptr) return null_argument(host, kSlot, "stream");
  if (stream->device->plugin != event->device->plugin) {
    return fail(host, XDEV_STATUS_INVALID_ARGUMENT,
                "%s: the stream belongs to another instance of the sim plugin", kSlot);
  }
  try {
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
  } catch (...) {
    return unexpected(host, kSlot);
  }
}

xdev_status_t* stream_wait_event(xdev_stream_t* stream, xdev_event_t* event) noexcept {
  constexpr const char* kSlot = "stream_wait_event";
  if (stream == nullptr) return null_argument(global_host(), kSlot, "stream");
  const xdev_host_api_t* host = host_of(stream);
  if (event == nullptr) return null_argument(host, kSlot, "event");
  if (stream->device->plugin != event->device->plugin) {
    return fail(host, XDEV_STATUS_INVALID_ARGUMENT,
                "%s: the event belongs to another instance of the sim plugin", kSlot);
  }
  try {
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
  } catch (...) {
    return unexpected(host, kSlot);
  }
}

xdev_status_t* event_synchronize(xdev_event_t* event) noexcept {
  constexpr const char* kSlot = "event_synchronize";
  if (event == nullptr) return null_argument(global_host(), kSlot, "event");
  try {
    if (std::shared_ptr<Mark> mark = current_mark(event)) mark->wait();
    return nullptr;
  } catch (...) {
    return unexpected(host_of(event->device), kSlot);
  }
}

xdev_status_t* event_query(xdev_event_t* event, int32_t* out_done) noexcept {
  constexpr const char* kSlot = "event_query";
  if (event == nullptr) return null_argument(global_host(), kSlot, "event");
  if (out_done == nullptr) return null_argument(host_of(event->device), kSlot, "out_done");
  try {
    std::shared_ptr<Mark> mark = current_mark(event);
    *out_done = mark == nullptr || mark->done() ? 1 : 0;
    return nullptr;
  } catch (...) {
    return unexpected(host_of(event->device), kSlot);
  }
}

// ---------------------------------------------------------------------------
// Copies. Each checks its addresses now (a status for the caller) and again
// when it runs (a failure for stream_synchronize, e.g. memory freed early).

bool ranges_overlap(uint64_t a, uint64_t b, uint64_t size) noexcept {
  return a < b + size && b < a + size;
}

xdev_status_t* copy_host_to_device(xdev_stream_t* stream, void* dst, const void* src,
                                   uint64_t size) noexcept {
  static constexpr const char* kSlot = "copy_host_to_device";
  if (stream == nullptr) return null_argument(global_host(), kSlot, "stream");
  const xdev_host_api_t* host = host_of(stream);
  if (size == 0) return nullptr;
  if (src == nullptr) return null_argument(host, kSlot, "src");
  try {
    if (Failure failure = check_host_pointer(src, "source")) {
      return to_status(host, kSlot, failure);
    }
    const Arena& arena = *stream->device->arena;
    std::byte* unused = nullptr;
    if (Failure failure = arena.resolve(address_of(dst), size, "destination", &unused)) {
      return to_status(host, kSlot, failure);
    }
    // `src` is read when the copy runs: the ABI says the caller keeps it
    // valid and unchanged until then, and a snapshot would hide a core that
    // does not.
    stream->queue->enqueue(
        [&arena, dst = address_of(dst), src, size]() -> Failure {
          std::byte* target = nullptr;
          if (Failure failure = arena.resolve(dst, size, "destination", &target)) {
            return prefixed(kSlot, std::move(failure));
          }
          std::memcpy(target, src, size);
          return {};
        },
        /*delayed=*/true);
    return nullptr;
  } catch (...) {
    return unexpected(host, kSlot);
  }
}

xdev_status_t* copy_device_to_host(xdev_stream_t* stream, void* dst, const void* src,
                                   uint64_t size) noexcept {
  static constexpr const char* kSlot = "copy_device_to_host";
  if (stream == nullptr) return null_argument(global_host(), kSlot, "stream");
  const xdev_host_api_t* host = host_of(stream);
  if (size == 0) return nullptr;
  if (dst == nullptr) return null_argument(host, kSlot, "dst");
  try {
    if (Failure failure = check_host_pointer(dst, "destination")) {
      return to_status(host, kSlot, failure);
    }
    const Arena& arena = *stream->device->arena;
    std::byte* unused = nullptr;
    if (Failure failure = arena.resolve(address_of(src), size, "source", &unused)) {
      return to_status(host, kSlot, failure);
    }
    stream->queue->enqueue(
        [&arena, dst, src = address_of(src), size]() -> Failure {
          std::byte* source = nullptr;
          if (Failure failure = arena.resolve(src, size, "source", &source)) {
            return prefixed(kSlot, std::move(failure));
          }
          std::memcpy(dst, source, size);
          return {};
        },
        /*delayed=*/true);
    return nullptr;
  } catch (...) {
    return unexpected(host, kSlot);
  }
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
    return fail(host, XDEV_STATUS_INVALID_ARGUMENT,
                "%s: the %" PRIu64 "-byte regions at 0x%" PRIx64 " (source) and 0x%" PRIx64
                " (destination) overlap",
                slot, size, src, dst);
  }
  stream->queue->enqueue(
      [slot, &source_arena, &target_arena, dst, src, size]() -> Failure {
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
  if (stream == nullptr) return null_argument(global_host(), kSlot, "stream");
  if (size == 0) return nullptr;
  try {
    return copy_between_devices(kSlot, stream, address_of(dst), *stream->device->arena,
                                address_of(src), size);
  } catch (...) {
    return unexpected(host_of(stream), kSlot);
  }
}

xdev_status_t* copy_peer(xdev_stream_t* stream, void* dst, xdev_device_t* src_device,
                         const void* src, uint64_t size) noexcept {
  constexpr const char* kSlot = "copy_peer";
  if (stream == nullptr) return null_argument(global_host(), kSlot, "stream");
  const xdev_host_api_t* host = host_of(stream);
  if (src_device == nullptr) return null_argument(host, kSlot, "src_device");
  if (src_device->plugin != stream->device->plugin) {
    return fail(host, XDEV_STATUS_INVALID_ARGUMENT,
                "%s: src_device belongs to another instance of the sim plugin", kSlot);
  }
  if (size == 0) return nullptr;
  try {
    return copy_between_devices(kSlot, stream, address_of(dst), *src_device->arena,
                                address_of(src), size);
  } catch (...) {
    return unexpected(host, kSlot);
  }
}

// ---------------------------------------------------------------------------
// Kernels

xdev_status_t* kernels(xdev_plugin_t* plugin, const xdev_kernel_info_t* const** out_kernels,
                       uint32_t* out_count) noexcept {
  constexpr const char* kSlot = "kernels";
  if (plugin == nullptr) return null_argument(global_host(), kSlot, "plugin");
  if (out_kernels == nullptr || out_count == nullptr) {
    return null_argument(plugin->host, kSlot,
                         out_kernels == nullptr ? "out_kernels" : "out_count");
  }
  *out_kernels = plugin->kernels.data();
  *out_count = static_cast<uint32_t>(plugin->kernels.size());
  return nullptr;
}

using EnqueueFn = Failure (*)(const xdev_kernel_call_t&, const Arena&, WorkQueue&);

xdev_status_t* run_kernel(void* context, const xdev_kernel_call_t* call, const char* op,
                          EnqueueFn enqueue) noexcept {
  const auto* plugin = static_cast<const xdev_plugin_t*>(context);
  const xdev_host_api_t* host = plugin != nullptr ? plugin->host : global_host();
  if (call == nullptr) return null_argument(host, op, "call");
  if (!XDEV_HAS_FIELD(call, xdev_kernel_call_t, attr_count)) {
    return fail(host, XDEV_STATUS_ABI_MISMATCH,
                "%s: call->struct_size is %zu bytes; a v1.0 kernel call needs %zu", op,
                call->struct_size, static_cast<size_t>(XDEV_KERNEL_CALL_STRUCT_SIZE));
  }
  if (call->device == nullptr) return null_argument(host, op, "call->device");
  if (call->stream == nullptr) return null_argument(host, op, "call->stream");
  if (call->stream->device != call->device) {
    return fail(host, XDEV_STATUS_INVALID_ARGUMENT,
                "%s: the stream belongs to %s, but the call is for %s", op,
                call->stream->device->text->label.c_str(), call->device->text->label.c_str());
  }
  if (call->op == nullptr || std::strcmp(call->op, op) != 0) {
    return fail(host, XDEV_STATUS_INVALID_ARGUMENT, "%s: the %s kernel was called for op '%s'",
                op, op, call->op != nullptr ? call->op : "(NULL)");
  }
  try {
    const Failure failure = enqueue(*call, *call->device->arena, *call->stream->queue);
    if (!failure) return nullptr;
    return fail(host, failure.code, "%s", failure.message.c_str());
  } catch (...) {
    return unexpected(host, op);
  }
}

xdev_status_t* matmul_kernel(void* context, const xdev_kernel_call_t* call) noexcept {
  return run_kernel(context, call, "MatMul", &enqueue_matmul);
}

xdev_status_t* add_kernel(void* context, const xdev_kernel_call_t* call) noexcept {
  return run_kernel(context, call, "Add", &enqueue_add);
}

// ---------------------------------------------------------------------------
// The table

bool version_at_most(xdev_version_t a, xdev_version_t b) noexcept {
  return a.major < b.major || (a.major == b.major && a.minor <= b.minor);
}

constexpr xdev_plugin_api_t kPluginApi = {
    .struct_size = XDEV_PLUGIN_API_STRUCT_SIZE,
    .ext = nullptr,
    .abi_version = {XDEV_ABI_VERSION_MAJOR, XDEV_ABI_VERSION_MINOR},
    .name = "sim",
    .plugin_version = XDEV_SIM_PLUGIN_VERSION,
    .capabilities = XDEV_CAP_EVENTS | XDEV_CAP_PEER_COPY | XDEV_CAP_HOST_MEMORY,
    .initialize = &initialize,
    .shutdown = &shutdown,
    .describe_status = &describe_status,
    .device_types = &device_types,
    .device_count = &device_count,
    .device_get_properties = &device_get_properties,
    .device_open = &device_open,
    .device_close = &device_close,
    .memory_allocate = &memory_allocate,
    .memory_free = &memory_free,
    .memory_query = &memory_query,
    .host_memory_allocate = &host_memory_allocate,
    .host_memory_free = &host_memory_free,
    .stream_create = &stream_create,
    .stream_destroy = &stream_destroy,
    .stream_synchronize = &stream_synchronize,
    .event_create = &event_create,
    .event_destroy = &event_destroy,
    .event_record = &event_record,
    .stream_wait_event = &stream_wait_event,
    .event_synchronize = &event_synchronize,
    .event_query = &event_query,
    .copy_host_to_device = &copy_host_to_device,
    .copy_device_to_host = &copy_device_to_host,
    .copy_device_to_device = &copy_device_to_device,
    .copy_peer = &copy_peer,
    .kernels = &kernels,
    .stream_native_handle = nullptr,  // ABI 1.3: its streams are nobody else's
};

}  // namespace
}  // namespace xdev::sim

// The entry point. Cheap: reads and writes the arguments, starts nothing.
extern "C" XDEV_PLUGIN_EXPORT xdev_status_t* xdev_plugin_query(xdev_plugin_query_args_t* args) {
  using namespace xdev::sim;
  constexpr const char* kSlot = "xdev_plugin_query";
  // With no arguments there is nowhere to write and no host to report with.
  if (args == nullptr) return nullptr;
  const xdev_host_api_t* host = nullptr;
  if (XDEV_HAS_FIELD(args, xdev_plugin_query_args_t, host)) host = args->host;
  if (can_create_status(host)) g_host.store(host, std::memory_order_release);
  if (!XDEV_HAS_FIELD(args, xdev_plugin_query_args_t, plugin_api)) {
    return fail(host, XDEV_STATUS_ABI_MISMATCH,
                "%s: args->struct_size is %zu bytes; ABI v1.0 query arguments need %zu", kSlot,
                args->struct_size, static_cast<size_t>(XDEV_PLUGIN_QUERY_ARGS_STRUCT_SIZE));
  }
  args->plugin_api = nullptr;
  const xdev_version_t mine = {XDEV_ABI_VERSION_MAJOR, XDEV_ABI_VERSION_MINOR};
  const xdev_version_t lowest = args->core_min_version;
  const xdev_version_t highest = args->core_max_version;
  if (!version_at_most(lowest, mine) || highest.major < mine.major) {
    return fail(host, XDEV_STATUS_ABI_MISMATCH,
                "%s: the sim plugin implements ABI %" PRIu32 ".%" PRIu32
                "; the core accepts %" PRIu32 ".%" PRIu32 " to %" PRIu32 ".%" PRIu32,
                kSlot, mine.major, mine.minor, lowest.major, lowest.minor, highest.major,
                highest.minor);
  }
  args->plugin_api = &kPluginApi;
  return nullptr;
}
