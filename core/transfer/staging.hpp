// Host <-> device copies through pinned host buffers.
//
// A device whose memory the host cannot address (a GPU, the sim plugin)
// copies from and to page-locked ("pinned") host memory at full speed and
// asynchronously; from ordinary (pageable) memory the driver has to stage
// every byte itself, synchronously. So when the plugin offers pinned memory
// (XDEV_CAP_HOST_MEMORY), the core copies a host buffer to such a device in
// chunks through two pinned buffers of its own, double-buffered: while the
// device copies chunk i out of one buffer, the host fills the other with
// chunk i+1 (and the other way round for device -> host). A copy is cut into
// at least two chunks, so even a copy smaller than two buffers overlaps its
// two halves. Host memory that is already pinned memory the core handed out
// (PinnedHostBuffer) is copied directly, without staging.
//
// Each logical device gets its buffers at its first staged copy (two of
// kStagingBufferBytes, plus two events) and frees them when it is destroyed.
// Staged copies to one device are serialized (they share its buffers);
// other work on the device's stream goes on between their chunks.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>

#include <xdev/plugin.h>

#include "memory/device_memory.hpp"

namespace xdev::detail {

class LogicalDeviceState;

// Size of each of a device's two staging buffers: the largest chunk.
inline constexpr uint64_t kStagingBufferBytes = uint64_t{4} << 20;  // 4 MiB
// Copies smaller than this go directly: for them the extra host copy and the
// per-chunk bookkeeping cost more than the driver's own staging.
inline constexpr uint64_t kStagingMinBytes = uint64_t{64} << 10;  // 64 KiB
// Chunks are multiples of this (but the last), so they stay page-aligned.
inline constexpr uint64_t kStagingChunkGranule = uint64_t{4} << 10;  // 4 KiB

// The chunk size for a staged copy of `bytes` (>= kStagingMinBytes): half
// the copy rounded up to kStagingChunkGranule, at most kStagingBufferBytes.
uint64_t staging_chunk_bytes(uint64_t bytes);

// A device's staging buffers and the events that say when the device is done
// with each. Made by staging_buffers() at the first staged copy.
class StagingBuffers {
 public:
  explicit StagingBuffers(LogicalDeviceState& device);
  ~StagingBuffers();  // waits for both buffers, frees them and the events
  StagingBuffers(const StagingBuffers&) = delete;
  StagingBuffers& operator=(const StagingBuffers&) = delete;

  // Copies `bytes` of host memory to `device_dst` (upload) or back
  // (download), synchronously like detail::upload/download. False (nothing
  // copied) when staging does not apply: the device offers no pinned memory,
  // the copy is smaller than kStagingMinBytes, or the host side is pinned
  // memory from the core (then the caller copies directly).
  bool upload(DeviceMemory device_dst, const void* host_src, uint64_t bytes);
  bool download(void* host_dst, DeviceMemory device_src, uint64_t bytes);

 private:
  // Whether a copy of `bytes` to or from `host` should be staged: large
  // enough, the device has pinned memory, and `host` is not core-pinned
  // memory already (that copy goes direct, and is counted).
  bool worth_staging(const void* host, uint64_t bytes) const;
  // Allocates the buffers and events once; false (logged once) when the
  // plugin has no pinned memory to give: copies then go directly.
  bool ensure_buffers();
  void wait_for(int buffer);   // until the device is done with `buffer`
  void enqueue_h2d(int buffer, DeviceMemory dst, uint64_t bytes);
  void enqueue_d2h(int buffer, DeviceMemory src, uint64_t bytes);
  void drain() noexcept;       // waits for both buffers, ignoring errors
  // Runs `chunks` (a copy's pipelined chunks), then synchronizes the device;
  // drains both buffers when either throws. Both buffers are free after.
  void run_pipelined(const std::function<void()>& chunks);

  LogicalDeviceState& device_;
  std::mutex mutex_;  // one staged copy at a time
  void* buffers_[2] = {nullptr, nullptr};
  xdev_event_t* events_[2] = {nullptr, nullptr};
  bool in_use_[2] = {false, false};  // a copy using the buffer may be running
  bool unavailable_ = false;         // allocating the buffers failed
};

// True when [ptr, ptr + bytes) lies inside pinned host memory the core
// handed out (a live PinnedHostBuffer).
bool is_core_pinned(const void* ptr, uint64_t bytes);

// Pinned host memory of a device's plugin, for data the program copies to
// and from that device: copies from and to it skip the staging buffers.
// Throws Error(kUnimplemented) when the plugin offers no pinned memory.
class PinnedHostBuffer {
 public:
  PinnedHostBuffer(LogicalDeviceState& device, uint64_t bytes);
  ~PinnedHostBuffer();
  PinnedHostBuffer(const PinnedHostBuffer&) = delete;
  PinnedHostBuffer& operator=(const PinnedHostBuffer&) = delete;

  void* data() const { return data_; }
  uint64_t size() const { return bytes_; }

 private:
  LogicalDeviceState& device_;
  void* data_ = nullptr;
  uint64_t bytes_ = 0;
};

// What the staging code did since the process started (for tests and
// benchmarks): staged copies, their chunks, direct copies of core-pinned
// memory, and pinned buffers allocated for staging.
struct StagingStats {
  uint64_t staged_uploads = 0;
  uint64_t staged_downloads = 0;
  uint64_t chunks = 0;
  uint64_t staged_bytes = 0;
  uint64_t direct_pinned_copies = 0;
  uint64_t buffers_allocated = 0;
};
StagingStats staging_stats();

// `device`'s staging buffers, made at the first call (thread-safe; a failure
// to make them throws, and the next call tries again).
StagingBuffers& staging_buffers(LogicalDeviceState& device);

}  // namespace xdev::detail
