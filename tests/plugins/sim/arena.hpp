// The memory of one simulated device: a fixed-size block of host memory
// with a first-fit allocator over it, handing out tagged device addresses
// (common.hpp, kAddressTag) and checking every address it is given.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "common.hpp"

namespace xdev::sim {

class Arena {
 public:
  // Smallest alignment and size granule of every allocation.
  static constexpr uint64_t kGranule = 64;

  // Maps `size` bytes (a multiple of the page size) of zeroed host memory for
  // the device called `label` ("Sim Accelerator 0 (sim:00)" in messages).
  static Failure create(uint64_t size, std::string label, std::unique_ptr<Arena>* out);
  ~Arena();
  Arena(const Arena&) = delete;
  Arena& operator=(const Arena&) = delete;

  const std::string& label() const noexcept { return label_; }
  uint64_t size() const noexcept { return size_; }
  // Device addresses of this arena are [first_address, first_address + size).
  uint64_t first_address() const noexcept { return base_ + kAddressTag; }

  // All functions below are thread-safe.

  // Reserves `size` (> 0) bytes aligned to `alignment` (a power of two;
  // below kGranule means kGranule). OUT_OF_MEMORY names the request, the
  // device and what is free.
  Failure allocate(uint64_t size, uint64_t alignment, uint64_t* out_address);
  // Releases the allocation that starts at `address`; false when no live
  // allocation starts there (nothing changes then).
  bool free(uint64_t address) noexcept;
  void query(uint64_t* out_free, uint64_t* out_total) const;
  uint64_t live_allocations() const;

  // Checks that the `size` bytes at device address `address` lie inside one
  // live allocation (for size 0: that `address` lies in or at the end of
  // one) and returns their host address. INVALID_ARGUMENT names `role`
  // ("destination") and the address otherwise.
  Failure resolve(uint64_t address, uint64_t size, const char* role, std::byte** out_host) const;

  // Marks the live allocation holding `address` as used by queued work for
  // as long as the returned token lives (work items capture it). free() of
  // an allocation with a live token is a violation of the ABI's
  // memory_free ("all work that uses it has completed"): it is recorded and
  // take_violation() returns it once. NULL when no allocation holds
  // `address` (the caller has already reported that).
  std::shared_ptr<const void> pin(uint64_t address) const;
  // The first violation since the last call (an empty Failure when none).
  Failure take_violation() const;

 private:
  struct Block {
    uint64_t reserved;   // bytes taken from the free list (size rounded up)
    uint64_t requested;  // bytes the caller asked for: the usable range
    uint64_t id;         // unique per allocation: a token outlives a free
  };

  Arena(uint64_t base, uint64_t size, std::string label);
  // Puts [offset, offset + size) back on the free list, merging neighbours.
  void release_locked(uint64_t offset, uint64_t size);
  uint64_t largest_free_locked() const;

  const uint64_t base_;  // host address of the mapping
  const uint64_t size_;
  const std::string label_;

  mutable std::mutex mutex_;
  std::map<uint64_t, uint64_t> free_;  // offset -> bytes, never adjacent
  std::map<uint64_t, Block> live_;     // offset -> allocation
  uint64_t free_bytes_;
  uint64_t next_id_ = 1;
  mutable std::map<uint64_t, uint32_t> pins_;  // Block::id -> live tokens
  mutable Failure violation_;
};

}  // namespace xdev::sim
