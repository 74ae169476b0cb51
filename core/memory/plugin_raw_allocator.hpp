// A RawAllocator over a plugin's memory_allocate/memory_free for one device.
#pragma once

#include <functional>
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
};

}  // namespace xdev::detail
