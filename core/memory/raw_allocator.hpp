// The raw memory a pool sits on: one device's allocate/free, nothing more.
//
// The memory may not be addressable from the host (device memory): a pool
// treats every pointer it gets from here as an opaque address and never reads
// or writes through it.
#pragma once

#include <cstdint>
#include <string>
#include <utility>

namespace xdev::detail {

class RawAllocator {
 public:
  explicit RawAllocator(std::string device_name) : device_name(std::move(device_name)) {}
  virtual ~RawAllocator() = default;
  RawAllocator(const RawAllocator&) = delete;
  RawAllocator& operator=(const RawAllocator&) = delete;

  // Returns `size` bytes (> 0) aligned to at least `alignment` (a power of
  // two), or nullptr when the device is out of memory. Any other failure
  // throws xdev::Error. Thread-safe.
  virtual void* allocate(uint64_t size, uint64_t alignment) = 0;

  // Frees memory from allocate(). nullptr is a no-op. Thread-safe.
  virtual void deallocate(void* ptr) noexcept = 0;

  // The device in messages, e.g. "/job:localhost/replica:0/task:0/device:GPU:0".
  std::string device_name;
};

}  // namespace xdev::detail
