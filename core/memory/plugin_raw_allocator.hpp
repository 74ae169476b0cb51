// A RawAllocator over a plugin's memory_allocate/memory_free for one device.
#pragma once

#include <string>

#include <xdev/plugin.h>

#include "memory/raw_allocator.hpp"

namespace xdev::detail {

class PluginRawAllocator final : public RawAllocator {
 public:
  // `api` and `device` must outlive this object (both belong to the loaded
  // plugin and its opened device).
  PluginRawAllocator(const xdev_plugin_api_t& api, xdev_device_t* device, std::string device_name);

  // XDEV_STATUS_OUT_OF_MEMORY from the plugin: nullptr. Any other status:
  // xdev::Error with the plugin's code and message, naming the device.
  void* allocate(uint64_t size, uint64_t alignment) override;
  void deallocate(void* ptr) noexcept override;

 private:
  const xdev_plugin_api_t& api_;
  xdev_device_t* device_;
};

}  // namespace xdev::detail
