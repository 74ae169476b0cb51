#include "memory/plugin_raw_allocator.hpp"

#include <utility>

#include <xdev/error.hpp>

#include "common/log.hpp"
#include "common/plugin_call.hpp"
#include "common/status.hpp"

namespace xdev::detail {

PluginRawAllocator::PluginRawAllocator(const xdev_plugin_api_t& api, xdev_device_t* device,
                                       std::string device_name, std::string plugin_file)
    : RawAllocator(std::move(device_name)),
      api_(api),
      device_(device),
      plugin_file_(std::move(plugin_file)) {}

void* PluginRawAllocator::allocate(uint64_t size, uint64_t alignment) {
  void* ptr = nullptr;
  const PluginCallSite site{plugin_file_, "memory_allocate", device_name};
  xdev_status_t* status = call_plugin(site, api_.memory_allocate, device_, size, alignment, &ptr);
  if (status == nullptr) {
    if (ptr == nullptr) {
      throw Error(ErrorCode::kInternal, "memory_allocate of " + std::to_string(size) + " bytes on device " +
                                            device_name + " returned success and a null pointer");
    }
    return ptr;
  }
  if (status->code == XDEV_STATUS_OUT_OF_MEMORY) {
    log(XDEV_LOG_DEBUG, "memory_allocate of " + std::to_string(size) + " bytes on device " + device_name +
                            ": " + take_message(status));
    return nullptr;
  }
  check(status, describe(site) + " (" + std::to_string(size) + " bytes)");
  return nullptr;  // not reached: check() throws for a non-null status
}

void PluginRawAllocator::deallocate(void* ptr) noexcept {
  if (ptr != nullptr) {
    call_plugin_void({plugin_file_, "memory_free", device_name}, api_.memory_free, device_, ptr);
  }
}

}  // namespace xdev::detail
