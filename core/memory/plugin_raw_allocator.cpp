#include "memory/plugin_raw_allocator.hpp"

#include <algorithm>
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
      plugin_file_(std::move(plugin_file)),
      handles_((api.capabilities & XDEV_CAP_HANDLE_MEMORY) != 0) {}

void* PluginRawAllocator::allocate(uint64_t size, uint64_t alignment) {
  void* block = plugin_allocate(size, alignment);
  if (block == nullptr || !handles_) return block;
  // A made-up range for the handle: aligned as asked (at least a page), a
  // page of gap after it so that no two ranges touch.
  constexpr uint64_t kPage = 4096;
  const uint64_t align = std::max(alignment, kPage);
  std::lock_guard lock(handles_mutex_);
  const uint64_t start = (next_address_ + align - 1) / align * align;
  const uint64_t span = (size + kPage - 1) / kPage * kPage + kPage;
  if (start < next_address_ || span < size || start > UINT64_MAX / 2 - span) {
    call_plugin_void({plugin_file_, "memory_free", device_name}, api_.memory_free, device_, block);
    throw Error(ErrorCode::kOutOfMemory, "device " + device_name +
                                             ": no address range left to name a memory handle of " +
                                             std::to_string(size) + " bytes");
  }
  next_address_ = start + span;
  handle_of_.emplace(start, block);
  return reinterpret_cast<void*>(static_cast<uintptr_t>(start));
}

void* PluginRawAllocator::allocation(void* ptr) const {
  if (!handles_ || ptr == nullptr) return ptr;
  std::lock_guard lock(handles_mutex_);
  auto it = handle_of_.find(reinterpret_cast<uintptr_t>(ptr));
  if (it == handle_of_.end()) {
    throw Error(ErrorCode::kInternal, "device " + device_name + ": no memory handle for pool range " +
                                          std::to_string(reinterpret_cast<uintptr_t>(ptr)));
  }
  return it->second;
}

void* PluginRawAllocator::plugin_allocate(uint64_t size, uint64_t alignment) {
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
  if (ptr != nullptr && handles_) {
    std::lock_guard lock(handles_mutex_);
    auto it = handle_of_.find(reinterpret_cast<uintptr_t>(ptr));
    if (it == handle_of_.end()) return;  // not ours: nothing to free
    ptr = it->second;
    handle_of_.erase(it);
  }
  if (ptr != nullptr) {
    call_plugin_void({plugin_file_, "memory_free", device_name}, api_.memory_free, device_, ptr);
  }
}

}  // namespace xdev::detail
