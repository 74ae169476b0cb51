#include "transfer/staging.hpp"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <functional>
#include <map>
#include <string>

#include "devices/logical_device.hpp"
#include "common/log.hpp"
#include "common/plugin_call.hpp"
#include "common/status.hpp"
#include "transfer/copy_slots.hpp"

namespace xdev::detail {
namespace {

std::atomic<uint64_t> g_staged_uploads{0};
std::atomic<uint64_t> g_staged_downloads{0};
std::atomic<uint64_t> g_chunks{0};
std::atomic<uint64_t> g_staged_bytes{0};
std::atomic<uint64_t> g_direct_pinned{0};
std::atomic<uint64_t> g_buffers_allocated{0};

// Live PinnedHostBuffers: start address -> end address.
struct PinnedRegistry {
  std::mutex mutex;
  std::map<uintptr_t, uintptr_t> ranges;
};
PinnedRegistry& pinned_registry() {
  static PinnedRegistry* registry = new PinnedRegistry;  // outlives every device
  return *registry;
}

bool has_pinned_memory(LogicalDeviceState& device) {
  return (device.api()->capabilities & XDEV_CAP_HOST_MEMORY) != 0 &&
         device.api()->host_memory_allocate != nullptr &&
         device.api()->host_memory_free != nullptr;
}

std::string mib(uint64_t bytes) { return std::to_string(bytes >> 20) + " MiB"; }

}  // namespace

uint64_t staging_chunk_bytes(uint64_t bytes) {
  const uint64_t half = bytes / 2 + bytes % 2;
  const uint64_t rounded =
      (half + kStagingChunkGranule - 1) / kStagingChunkGranule * kStagingChunkGranule;
  return std::min(rounded, kStagingBufferBytes);
}

bool is_core_pinned(const void* ptr, uint64_t bytes) {
  const auto begin = reinterpret_cast<uintptr_t>(ptr);
  PinnedRegistry& registry = pinned_registry();
  std::lock_guard lock(registry.mutex);
  auto it = registry.ranges.upper_bound(begin);
  if (it == registry.ranges.begin()) return false;
  --it;
  return begin >= it->first && begin < it->second && bytes <= it->second - begin;
}

StagingStats staging_stats() {
  StagingStats s;
  s.staged_uploads = g_staged_uploads.load();
  s.staged_downloads = g_staged_downloads.load();
  s.chunks = g_chunks.load();
  s.staged_bytes = g_staged_bytes.load();
  s.direct_pinned_copies = g_direct_pinned.load();
  s.buffers_allocated = g_buffers_allocated.load();
  return s;
}

// ---------------------------------------------------------------------------
// StagingBuffers

StagingBuffers::StagingBuffers(LogicalDeviceState& device) : device_(device) {}

StagingBuffers::~StagingBuffers() {
  drain();
  const xdev_plugin_api_t* api = device_.api();
  for (int b = 0; b < 2; ++b) {
    if (events_[b] != nullptr) {
      call_plugin_void(device_.call_site("event_destroy"), api->event_destroy, events_[b]);
    }
    if (buffers_[b] != nullptr) {
      call_plugin_void(device_.call_site("host_memory_free"), api->host_memory_free,
                       device_.handle(), buffers_[b]);
    }
  }
}

bool StagingBuffers::ensure_buffers() {
  if (buffers_[1] != nullptr) return true;
  if (unavailable_) return false;
  const xdev_plugin_api_t* api = device_.api();
  for (int b = 0; b < 2; ++b) {
    if (buffers_[b] == nullptr) {
      if (xdev_status_t* s =
              call_plugin(device_.call_site("host_memory_allocate"), api->host_memory_allocate,
                          device_.handle(), kStagingBufferBytes, &buffers_[b])) {
        buffers_[b] = nullptr;
        unavailable_ = true;
        log(XDEV_LOG_WARNING, "cannot allocate " + mib(kStagingBufferBytes) +
                                  " of pinned host memory to stage copies for " +
                                  device_.name() + " (" + take_message(s) +
                                  "); copying without staging");
        return false;
      }
      g_buffers_allocated.fetch_add(1, std::memory_order_relaxed);
    }
    if (events_[b] == nullptr) {
      check(call_plugin(device_.call_site("event_create"), api->event_create, device_.handle(),
                        &events_[b]),
            "creating an event for the staging buffers of " + device_.name());
    }
  }
  log(XDEV_LOG_DEBUG, "staging host copies for " + device_.name() + " through 2 pinned buffers of " +
                          mib(kStagingBufferBytes));
  return true;
}

void StagingBuffers::wait_for(int buffer) {
  if (!in_use_[buffer]) return;
  if ((device_.api()->capabilities & XDEV_CAP_EVENTS) != 0) {
    check(call_plugin(device_.call_site("event_synchronize"), device_.api()->event_synchronize,
                      events_[buffer]),
          "waiting for a staged copy on " + device_.name());
  } else {
    // Events that are not really asynchronous cannot say when the stream
    // passed them: wait for the whole stream.
    device_.synchronize();
  }
  in_use_[buffer] = false;
}

void StagingBuffers::enqueue_h2d(int buffer, DeviceMemory dst, uint64_t bytes) {
  std::lock_guard lock(device_.stream_mutex());
  in_use_[buffer] = true;  // from here on the device may read it
  check(enqueue_host_to_device(device_, dst, buffers_[buffer], bytes),
        "copying " + std::to_string(bytes) + " bytes to " + device_.name());
  check(call_plugin(device_.call_site("event_record"), device_.api()->event_record,
                    events_[buffer], device_.stream()),
        "recording an event on " + device_.name());
  g_chunks.fetch_add(1, std::memory_order_relaxed);
}

void StagingBuffers::enqueue_d2h(int buffer, DeviceMemory src, uint64_t bytes) {
  std::lock_guard lock(device_.stream_mutex());
  in_use_[buffer] = true;
  check(enqueue_device_to_host(device_, buffers_[buffer], src, bytes),
        "copying " + std::to_string(bytes) + " bytes from " + device_.name());
  check(call_plugin(device_.call_site("event_record"), device_.api()->event_record,
                    events_[buffer], device_.stream()),
        "recording an event on " + device_.name());
  g_chunks.fetch_add(1, std::memory_order_relaxed);
}

void StagingBuffers::drain() noexcept {
  if (!in_use_[0] && !in_use_[1]) return;
  try {
    device_.synchronize();
  } catch (const std::exception& e) {
    log(XDEV_LOG_WARNING, std::string("after a failed staged copy: ") + e.what());
  }
  in_use_[0] = in_use_[1] = false;
}

bool StagingBuffers::worth_staging(const void* host, uint64_t bytes) const {
  if (bytes < kStagingMinBytes || !has_pinned_memory(device_)) return false;
  if (is_core_pinned(host, bytes)) {
    g_direct_pinned.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  return true;
}

void StagingBuffers::run_pipelined(const std::function<void()>& chunks) {
  try {
    chunks();
    // Synchronous like a direct copy (and it reports asynchronous errors).
    device_.synchronize();
  } catch (...) {
    drain();
    throw;
  }
  in_use_[0] = in_use_[1] = false;
}

bool StagingBuffers::upload(DeviceMemory dst, const void* host_src, uint64_t bytes) {
  if (!worth_staging(host_src, bytes)) return false;
  std::lock_guard lock(mutex_);
  if (!ensure_buffers()) return false;
  const uint64_t chunk = staging_chunk_bytes(bytes);
  const auto* src = static_cast<const char*>(host_src);
  run_pipelined([&] {
    int b = 0;
    for (uint64_t offset = 0; offset < bytes; offset += chunk, b ^= 1) {
      const uint64_t n = std::min(chunk, bytes - offset);
      wait_for(b);  // the device is done reading the chunk before last
      std::memcpy(buffers_[b], src + offset, n);
      enqueue_h2d(b, dst.at(offset), n);
    }
  });
  g_staged_uploads.fetch_add(1, std::memory_order_relaxed);
  g_staged_bytes.fetch_add(bytes, std::memory_order_relaxed);
  return true;
}

bool StagingBuffers::download(void* host_dst, DeviceMemory src, uint64_t bytes) {
  if (!worth_staging(host_dst, bytes)) return false;
  std::lock_guard lock(mutex_);
  if (!ensure_buffers()) return false;
  const uint64_t chunk = staging_chunk_bytes(bytes);
  const uint64_t count = (bytes + chunk - 1) / chunk;
  auto* dst = static_cast<char*>(host_dst);
  auto length = [&](uint64_t i) { return std::min(chunk, bytes - i * chunk); };
  run_pipelined([&] {
    // Two chunks in flight; while the host copies one out of its buffer,
    // the device fills the other.
    enqueue_d2h(0, src, length(0));
    if (count > 1) enqueue_d2h(1, src.at(chunk), length(1));
    for (uint64_t i = 0; i < count; ++i) {
      const int b = static_cast<int>(i % 2);
      wait_for(b);
      std::memcpy(dst + i * chunk, buffers_[b], length(i));
      if (i + 2 < count) enqueue_d2h(b, src.at((i + 2) * chunk), length(i + 2));
    }
  });
  g_staged_downloads.fetch_add(1, std::memory_order_relaxed);
  g_staged_bytes.fetch_add(bytes, std::memory_order_relaxed);
  return true;
}

// ---------------------------------------------------------------------------
// PinnedHostBuffer

PinnedHostBuffer::PinnedHostBuffer(LogicalDeviceState& device, uint64_t bytes)
    : device_(device), bytes_(bytes) {
  if (!has_pinned_memory(device)) {
    throw Error(ErrorCode::kUnimplemented,
                device.name() + " (plugin " + device.plugin()->name +
                    ") offers no pinned host memory");
  }
  if (bytes == 0) {
    throw Error(ErrorCode::kInvalidArgument, "pinned host buffer of 0 bytes for " + device.name());
  }
  check(call_plugin(device.call_site("host_memory_allocate"), device.api()->host_memory_allocate,
                    device.handle(), bytes, &data_),
        "allocating " + std::to_string(bytes) + " bytes of pinned host memory for " +
            device.name());
  PinnedRegistry& registry = pinned_registry();
  try {
    std::lock_guard lock(registry.mutex);
    const auto begin = reinterpret_cast<uintptr_t>(data_);
    registry.ranges[begin] = begin + bytes;
  } catch (...) {
    call_plugin_void(device.call_site("host_memory_free"), device.api()->host_memory_free,
                     device.handle(), data_);
    throw;
  }
}

PinnedHostBuffer::~PinnedHostBuffer() {
  {
    PinnedRegistry& registry = pinned_registry();
    std::lock_guard lock(registry.mutex);
    registry.ranges.erase(reinterpret_cast<uintptr_t>(data_));
  }
  call_plugin_void(device_.call_site("host_memory_free"), device_.api()->host_memory_free,
                   device_.handle(), data_);
}

StagingBuffers& staging_buffers(LogicalDeviceState& device) {
  LogicalDeviceState::StagingSlot& slot = device.staging_slot();
  std::call_once(slot.once, [&] { slot.buffers = std::make_shared<StagingBuffers>(device); });
  return *slot.buffers;
}

}  // namespace xdev::detail
