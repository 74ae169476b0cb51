// The raw memory a pool sits on: one device's allocate/free, nothing more.
//
// The memory may not be addressable from the host (device memory): a pool
// treats every pointer it gets from here as an opaque address and never reads
// or writes through it. The pool does arithmetic on these addresses (it
// carves blocks out of them), so they must be distinct address ranges; a raw
// allocator over memory that is handles (plugin ABI 1.6,
// XDEV_CAP_HANDLE_MEMORY) hands out made-up ranges and says through
// allocation() which handle each one stands for.
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

  // The device's own name for the block `ptr` that allocate() returned (what
  // the plugin's memory_allocate returned for it): `ptr` itself unless the
  // device's memory is handles. The pool asks once per region. Thread-safe.
  virtual void* allocation(void* ptr) const { return ptr; }

  // Device work is asynchronous: a block the pool holds as free may still be
  // read by work queued before its tensor was freed (stream order makes
  // reusing it safe, handing it back to the device is not). The pool calls
  // this before it gives regions back with deallocate() while the device may
  // be busy (its out-of-memory retry, release_free_regions): true once all
  // work queued so far that may use this memory has completed, false when
  // that cannot be waited for now (the pool then gives nothing back). May
  // throw xdev::Error (a device fault). Called with the pool's lock held.
  // The default (host memory, test allocators) has nothing to wait for.
  virtual bool wait_for_device_work() { return true; }

  // The device in messages, e.g. "/job:localhost/replica:0/task:0/device:GPU:0".
  std::string device_name;
};

}  // namespace xdev::detail
