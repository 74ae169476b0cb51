// A RawAllocator over a plugin's memory_allocate/memory_free for one device.
//
// When the plugin declares XDEV_CAP_HANDLE_MEMORY (ABI 1.6) its allocations
// are opaque handles, not addresses: this allocator then gives the pool a
// made-up address range per allocation (never dereferenced, never overlapping
// another, aligned as asked) and maps each range back to its handle
// (allocation()). The ranges start at kHandleAddressBase and only grow.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <utility>

#include <xdev/plugin.h>

#include "memory/raw_allocator.hpp"

namespace xdev::detail {

class PluginRawAllocator final : public RawAllocator {
 public:
  // `api` and `device` must outlive this object (both belong to the loaded
  // plugin and its opened device).
  PluginRawAllocator(const xdev_plugin_api_t& api, xdev_device_t* device, std::string device_name,
                     std::string plugin_file);

  // XDEV_STATUS_OUT_OF_MEMORY from the plugin: nullptr. Any other status:
  // xdev::Error with the plugin's code and message, naming the device.
  void* allocate(uint64_t size, uint64_t alignment) override;
  void deallocate(void* ptr) noexcept override;
  void* allocation(void* ptr) const override;

  // Where the made-up ranges of a handle device start: far from any real
  // address a pointer plugin could return, page aligned.
  static constexpr uint64_t kHandleAddressBase = uint64_t{1} << 52;

  // How to wait for the device's queued work (the owner of the device's
  // stream knows, see LogicalDeviceState::wait_for_queued_work); unset: the
  // pool may give memory back at once.
  void set_wait_for_device_work(std::function<bool()> wait) { wait_ = std::move(wait); }
  bool wait_for_device_work() override { return wait_ ? wait_() : true; }

 private:
  const xdev_plugin_api_t& api_;
  xdev_device_t* device_;
  std::string plugin_file_;  // for messages (common/plugin_call.hpp)
  std::function<bool()> wait_;
  // XDEV_CAP_HANDLE_MEMORY: made-up range start -> the plugin's handle.
  bool handles_ = false;
  mutable std::mutex handles_mutex_;
  std::map<uint64_t, void*> handle_of_;
  uint64_t next_address_ = kHandleAddressBase;

  void* plugin_allocate(uint64_t size, uint64_t alignment);
};

}  // namespace xdev::detail
