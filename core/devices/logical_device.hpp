// One logical device: the plugin device behind it, its stream, its memory
// pool and the kernels its type offers.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include <xdev/device.hpp>
#include <xdev/plugin.h>

#include "common/plugin_call.hpp"
#include "devices/kernel_table.hpp"
#include "memory/bfc_pool.hpp"
#include "memory/plugin_raw_allocator.hpp"
#include "loader/plugin_loader.hpp"
#include "trace/trace.hpp"

namespace xdev::detail {

struct PhysicalDeviceRecord;
class StagingBuffers;  // transfer/staging.hpp

// A physical device opened through its plugin (shared by its logical devices).
struct OpenedDevice {
  LoadedPlugin* plugin = nullptr;
  uint32_t ordinal = 0;
  xdev_device_t* handle = nullptr;
  ~OpenedDevice();
};

class LogicalDeviceState {
 public:
  LogicalDeviceState(Device info, int index, const PhysicalDeviceRecord& physical,
                     std::shared_ptr<OpenedDevice> opened, const KernelTable& kernels,
                     PoolOptions pool_options);
  ~LogicalDeviceState();

  const Device& info() const { return info_; }
  const std::string& name() const { return info_.name; }
  int index() const { return index_; }
  int32_t priority() const { return priority_; }
  const PhysicalDeviceRecord& physical() const { return *physical_; }
  const KernelTable& kernels() const { return *kernels_; }
  const xdev_plugin_api_t* api() const { return opened_->plugin->api; }
  xdev_device_t* handle() const { return opened_->handle; }
  LoadedPlugin* plugin() const { return opened_->plugin; }
  // Names a call into this device's plugin (common/plugin_call.hpp).
  PluginCallSite call_site(std::string_view slot) const {
    return {plugin()->path.native(), slot, info_.name};
  }
  bool host_addressable() const {
    return (api()->capabilities & XDEV_CAP_HOST_ADDRESSABLE) != 0;
  }
  // ABI 1.6: the device's memory is handles (XDEV_CAP_HANDLE_MEMORY): never
  // form an address from a DeviceMemory of it (transfer/ uses the *_at copy
  // slots, kernels get scratch only as scratch_allocate_at).
  // (Set in the .cpp: tests/abi/v1_0 compiles this header against the 1.0
  // plugin.h, which has no such bit.)
  bool handle_memory() const { return handle_memory_; }

  // From the pool; throws Error(kOutOfMemory) naming this device. The
  // returned pointer is the pool's key for the block (pass it to
  // deallocate); *where, when given, is the block as the plugin names it
  // (memory/device_memory.hpp). Traced (trace/trace.hpp) as "alloc" and
  // "free" on the device's track.
  void* allocate(uint64_t bytes, DeviceMemory* where = nullptr) {
    void* ptr = pool_.allocate(bytes, where);
    if (trace::on()) trace_memory("alloc", ptr);
    return ptr;
  }
  void deallocate(void* ptr) noexcept;
  BfcPool& pool() { return pool_; }

  // The plugin lets several threads use one stream at once.
  bool concurrent_streams() const { return concurrent_streams_; }
  // The device's stream. Use it only while holding stream_mutex(), unless
  // concurrent_streams().
  xdev_stream_t* stream() const { return stream_; }
  std::mutex& stream_mutex() { return stream_mutex_; }
  // Waits for all work on the stream; throws naming the device.
  void synchronize();

  // --- Ordering of the pool's give-backs (cuda readiness) ---
  // Holds the stream (stream_mutex()) and marks this thread as its user, so
  // that the pool's out-of-memory retry, reached from inside a kernel call
  // (kernel scratch), can wait for the stream without locking it again.
  class StreamLock {
   public:
    explicit StreamLock(LogicalDeviceState& device);
    ~StreamLock();
    StreamLock(const StreamLock&) = delete;
    StreamLock& operator=(const StreamLock&) = delete;

   private:
    std::lock_guard<std::mutex> lock_;
    LogicalDeviceState* previous_;
  };
  // Blocks until the work enqueued so far on the stream completed, through
  // an event (events carry no errors: a pending asynchronous error stays for
  // the next synchronize). False when another thread is using the stream
  // right now: waiting for it could deadlock with the pool's lock, so the
  // caller gives up (the pool then keeps its regions). Throws on a device
  // failure, naming the device.
  bool wait_for_queued_work();
  // Where transfer/ keeps this device's pinned buffers for host <-> device
  // copies (staging_buffers() in transfer/staging.hpp makes them at the first
  // staged copy); released here before the stream.
  struct StagingSlot {
    std::once_flag once;
    std::shared_ptr<StagingBuffers> buffers;
  };
  StagingSlot& staging_slot() { return staging_; }

 private:
  Device info_;
  int index_;
  const PhysicalDeviceRecord* physical_;
  int32_t priority_;
  std::shared_ptr<OpenedDevice> opened_;
  const KernelTable* kernels_;
  PluginRawAllocator raw_;
  BfcPool pool_;
  std::mutex stream_mutex_;
  xdev_stream_t* stream_ = nullptr;
  bool concurrent_streams_ = false;
  bool handle_memory_ = false;
  // Marks the end of the stream for wait_for_queued_work (created with it).
  xdev_event_t* queue_event_ = nullptr;
  StagingSlot staging_;  // released before the stream

  void trace_memory(const char* what, void* ptr) noexcept;
};

}  // namespace xdev::detail
