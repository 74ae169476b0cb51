// A place in device memory as the plugin names it (plugin ABI 1.6): the
// allocation memory_allocate returned and a byte offset inside it. For a
// plugin whose memory is addresses the two add up to the address; for one
// that declares XDEV_CAP_HANDLE_MEMORY the allocation is an opaque handle
// and only the plugin may resolve the pair.
#pragma once

#include <cstdint>

namespace xdev::detail {

struct DeviceMemory {
  void* allocation = nullptr;  // what memory_allocate returned (or foreign memory, DLPack)
  uint64_t offset = 0;         // bytes from the start of `allocation`

  // The same allocation, `more` bytes further in.
  DeviceMemory at(uint64_t more) const { return {allocation, offset + more}; }
  // allocation + offset as an address: only for devices whose memory is
  // addresses (never for XDEV_CAP_HANDLE_MEMORY).
  void* address() const {
    return allocation == nullptr ? nullptr : static_cast<char*>(allocation) + offset;
  }
};

}  // namespace xdev::detail
