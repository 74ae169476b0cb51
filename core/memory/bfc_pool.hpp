// BfcPool: the memory pool of one logical device.
//
// Best-fit with coalescing over regions taken from a RawAllocator, in the
// spirit of TensorFlow's BFC allocator: free blocks sit in size-class bins
// ordered by (size, address), an allocation takes the smallest free block
// that fits (lowest address on ties) and splits off the rest, a free merges
// the block with free neighbours. In front of it, each thread keeps a small
// cache of freed blocks per size class, so a tensor-sized allocate/free pair
// takes no lock and no atomic read-modify-write.
//
// The pool never reads or writes the memory it manages (it may be device
// memory): every piece of bookkeeping lives in host memory, out of band.
//
// Thread-safety: every member function may be called from any number of
// threads at once, except the destructor.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "memory/device_memory.hpp"
#include "memory/raw_allocator.hpp"

namespace xdev::detail {

struct PoolOptions {
  // Hard cap on bytes reserved from the raw allocator. Never exceeded.
  uint64_t limit_bytes = 0;
  // true: start with `initial_bytes` and grow in chunks (each twice the last,
  // at least what the request needs), never returning memory while growing.
  // false: reserve `limit_bytes` (or as much of it as the raw allocator gives)
  // on the first allocation.
  bool allow_growth = true;
  // Growth: size of the first region; 0 means 2 MiB. Capped by the limit.
  uint64_t initial_bytes = 0;
  // The most the raw allocator can give in one call (a device's
  // max_allocation_bytes, plugin ABI 1.5); 0: no such limit. No region is
  // larger (rounded down to the granule), so a request that does not fit in
  // one fails with Error(kOutOfMemory) naming this limit; without growth the
  // limit is reserved up front in as many regions as it takes.
  uint64_t max_region_bytes = 0;
  // Every returned pointer is aligned to this (a power of two). Sizes are
  // rounded up to max(alignment, 256) bytes.
  uint64_t alignment = 256;
  // Per-thread caches of freed blocks (the lock-free fast path). Off: every
  // call takes the pool's lock. Also off where the kernel lacks membarrier(2)
  // or when more than 64 pools with caches exist at once.
  bool thread_cache = true;
};

// A snapshot. bytes_* count rounded sizes (allocation_size), not requests.
// Exact; the one approximation: when an allocation raises the peak while a
// free runs at that very moment on another thread, the free may be counted as
// happening after the allocation (the peak is never below the true one).
struct PoolStats {
  uint64_t bytes_in_use = 0;        // held by callers now
  uint64_t peak_bytes_in_use = 0;   // highest bytes_in_use since creation or reset_peak
  uint64_t num_allocations = 0;     // live allocations
  uint64_t total_allocations = 0;   // successful allocate() calls since creation
  uint64_t bytes_reserved = 0;      // taken from the raw allocator (<= limit_bytes)
  uint64_t largest_free_block = 0;  // largest contiguous free block
  uint64_t limit_bytes = 0;
};

class BfcPoolImpl;

class BfcPool {
 public:
  // Reserves nothing yet. Throws Error(kInvalidArgument) when `alignment` is
  // not a power of two. `raw` must outlive the pool.
  BfcPool(RawAllocator& raw, PoolOptions options);
  // Returns every region to the raw allocator, also those with blocks still
  // allocated (logged as a warning).
  ~BfcPool();
  BfcPool(const BfcPool&) = delete;
  BfcPool& operator=(const BfcPool&) = delete;

  // `bytes` rounded up to the alignment granule, aligned to
  // options.alignment. Best fit, except that the calling thread's cache may
  // return a block it freed of the same size class (at most 1/8 larger). bytes == 0 returns nullptr (as TensorFlow does) and
  // counts nothing. Throws Error(kOutOfMemory) naming the device, the request,
  // the bytes in use, the limit and the largest free block when neither the
  // free blocks, nor growth within the limit, nor giving fully free regions
  // back to the raw allocator and retrying once can satisfy it; the pool's
  // stats are then unchanged (except bytes_reserved when regions were given
  // back for the retry). Errors from the raw allocator propagate.
  void* allocate(uint64_t bytes);
  // The same, and the block as the device names it (plugin ABI 1.6): the
  // allocation of the region it lies in (RawAllocator::allocation) and its
  // offset there, written to *where ({nullptr, 0} for bytes == 0).
  void* allocate(uint64_t bytes, DeviceMemory* where);

  // nullptr: no-op. A pointer this pool did not return, or returned and was
  // already given back, throws Error(kInvalidArgument) (a double free is
  // detected until the block is handed out again).
  void deallocate(void* ptr);

  // Rounded size reserved for `ptr` (0 for nullptr); same errors as deallocate.
  uint64_t allocation_size(void* ptr) const;

  // Exact snapshot. Returns blocks cached by threads to the free bins first
  // (so largest_free_block is what a request could get), which stops other
  // threads' fast paths for a few microseconds: not for per-allocation use.
  PoolStats stats() const;

  // peak_bytes_in_use = bytes_in_use.
  void reset_peak();

  // Gives every fully free region back to the raw allocator (after returning
  // cached blocks) and returns the bytes given back.
  uint64_t release_free_regions();

  const PoolOptions& options() const;
  const std::string& device_name() const;
  // Whether this pool uses per-thread caches (see PoolOptions::thread_cache).
  bool thread_cache_enabled() const;

 private:
  std::unique_ptr<BfcPoolImpl> impl_;
};

}  // namespace xdev::detail
