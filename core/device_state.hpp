// One logical device: the plugin device behind it, its stream, its memory
// pool and the kernels its type offers.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include <xdev/device.hpp>
#include <xdev/plugin.h>

#include "kernel_table.hpp"
#include "memory/bfc_pool.hpp"
#include "memory/plugin_raw_allocator.hpp"
#include "plugin_loader.hpp"

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
  bool host_addressable() const {
    return (api()->capabilities & XDEV_CAP_HOST_ADDRESSABLE) != 0;
  }

  // From the pool; throws Error(kOutOfMemory) naming this device.
  void* allocate(uint64_t bytes) { return pool_.allocate(bytes); }
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

  // Pinned buffers for host <-> device copies (transfer/staging.hpp).
  StagingBuffers& staging() { return *staging_; }

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
  std::unique_ptr<StagingBuffers> staging_;  // released before the stream
};

}  // namespace xdev::detail
