#include "arena.hpp"

#include <sys/mman.h>

#include <cerrno>
#include <cinttypes>
#include <cstring>
#include <iterator>
#include <new>
#include <utility>

namespace xdev::sim {
namespace {

// Rounds up to a multiple of `alignment` (a power of two); false on overflow.
bool align_up(uint64_t value, uint64_t alignment, uint64_t* out) noexcept {
  const uint64_t mask = alignment - 1;
  if (value > UINT64_MAX - mask) return false;
  *out = (value + mask) & ~mask;
  return true;
}

}  // namespace

Failure Arena::create(uint64_t size, std::string label, std::unique_ptr<Arena>* out) {
  // Anonymous pages: zeroed, committed only when touched, and page aligned,
  // so any alignment up to the page size costs no padding at the start.
  void* mapping = ::mmap(nullptr, size, PROT_READ | PROT_WRITE,
                         MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (mapping == MAP_FAILED) {
    const int error = errno;
    return make_failure(XDEV_STATUS_OUT_OF_MEMORY,
                        "%s: cannot map %" PRIu64 " bytes of host memory for the device: %s",
                        label.c_str(), size, std::strerror(error));
  }
  try {
    out->reset(new Arena(reinterpret_cast<uint64_t>(mapping), size, std::move(label)));
  } catch (...) {
    ::munmap(mapping, size);
    throw;
  }
  return {};
}

Arena::Arena(uint64_t base, uint64_t size, std::string label)
    : base_(base), size_(size), label_(std::move(label)), free_bytes_(size) {
  free_.emplace(0, size);
}

Arena::~Arena() { ::munmap(reinterpret_cast<void*>(base_), size_); }

Failure Arena::allocate(uint64_t size, uint64_t alignment, uint64_t* out_address) {
  if (alignment < kGranule) alignment = kGranule;
  std::lock_guard lock(mutex_);
  uint64_t reserved = 0;
  if (size <= size_ && alignment <= size_ && align_up(size, kGranule, &reserved)) {
    for (auto it = free_.begin(); it != free_.end(); ++it) {
      const uint64_t begin = it->first;
      const uint64_t end = begin + it->second;
      // Align the host address: the tag keeps it aligned as a device address.
      uint64_t aligned_host = 0;
      if (!align_up(base_ + begin, alignment, &aligned_host)) continue;
      const uint64_t offset = aligned_host - base_;
      if (offset > end || end - offset < reserved) continue;
      // Split the free block into [begin, offset) | allocation | rest. Both
      // pieces stay granule-aligned: every offset and size here is. The
      // steps that allocate come first, so a bad_alloc changes nothing.
      live_.emplace(offset, Block{reserved, size, next_id_++});
      if (offset + reserved < end) {
        try {
          free_.emplace(offset + reserved, end - offset - reserved);
        } catch (...) {
          live_.erase(offset);
          throw;
        }
      }
      auto node = free_.extract(it);
      if (offset > begin) {
        node.key() = begin;
        node.mapped() = offset - begin;
        free_.insert(std::move(node));
      }
      free_bytes_ -= reserved;
      *out_address = base_ + offset + kAddressTag;
      return {};
    }
  }
  return make_failure(XDEV_STATUS_OUT_OF_MEMORY,
                      "%s: out of memory allocating %" PRIu64 " bytes (alignment %" PRIu64
                      "): %" PRIu64 " of %" PRIu64 " bytes free, largest free block %" PRIu64
                      " bytes, %zu allocations live",
                      label_.c_str(), size, alignment, free_bytes_, size_, largest_free_locked(),
                      live_.size());
}

bool Arena::free(uint64_t address) noexcept {
  const uint64_t offset = address - kAddressTag - base_;  // wraps when outside
  std::lock_guard lock(mutex_);
  auto it = live_.find(offset);
  if (it == live_.end()) return false;
  if (auto pinned = pins_.find(it->second.id); pinned != pins_.end() && !violation_) {
    try {
      violation_ = make_failure(
          XDEV_STATUS_INVALID_ARGUMENT,
          "%s: the allocation at 0x%" PRIx64 " (%" PRIu64 " bytes) was freed while %" PRIu32
          " queued operations still use it (memory_free before the work that uses it completed)",
          label_.c_str(), address, it->second.requested, pinned->second);
    } catch (...) {
      violation_ = Failure{XDEV_STATUS_INVALID_ARGUMENT, {}};
    }
  }
  const uint64_t reserved = it->second.reserved;
  live_.erase(it);
  free_bytes_ += reserved;
  try {
    release_locked(offset, reserved);
  } catch (...) {
    // A map node could not be allocated: the range stays unusable, which
    // only costs simulated memory. free_bytes_ must then not count it.
    free_bytes_ -= reserved;
  }
  return true;
}

void Arena::release_locked(uint64_t offset, uint64_t size) {
  auto next = free_.lower_bound(offset);
  if (next != free_.begin()) {
    auto previous = std::prev(next);
    if (previous->first + previous->second == offset) {
      // Grow the previous block in place: no allocation, cannot throw.
      previous->second += size;
      if (next != free_.end() && previous->first + previous->second == next->first) {
        previous->second += next->second;
        free_.erase(next);
      }
      return;
    }
  }
  if (next != free_.end() && offset + size == next->first) {
    // Move the next block's node to the new start: no allocation either.
    auto node = free_.extract(next);
    node.key() = offset;
    node.mapped() += size;
    free_.insert(std::move(node));
    return;
  }
  free_.emplace(offset, size);
}

std::shared_ptr<const void> Arena::pin(uint64_t address) const {
  const uint64_t offset = address - first_address();  // wraps when outside
  std::lock_guard lock(mutex_);
  auto it = live_.upper_bound(offset);
  if (it == live_.begin()) return nullptr;
  --it;
  if (offset - it->first > it->second.requested) return nullptr;
  const uint64_t id = it->second.id;
  ++pins_[id];
  // A token with no object: only its deleter matters.
  return std::shared_ptr<const void>(nullptr, [this, id](const void*) {
    std::lock_guard unpin_lock(mutex_);
    if (auto p = pins_.find(id); p != pins_.end() && --p->second == 0) pins_.erase(p);
  });
}

Failure Arena::take_violation() const {
  std::lock_guard lock(mutex_);
  return std::exchange(violation_, Failure{});
}

uint64_t Arena::largest_free_locked() const {
  uint64_t largest = 0;
  for (const auto& [offset, bytes] : free_) largest = bytes > largest ? bytes : largest;
  return largest;
}

void Arena::query(uint64_t* out_free, uint64_t* out_total) const {
  std::lock_guard lock(mutex_);
  *out_free = free_bytes_;
  *out_total = size_;
}

uint64_t Arena::live_allocations() const {
  std::lock_guard lock(mutex_);
  return live_.size();
}

Failure Arena::resolve(uint64_t address, uint64_t size, const char* role,
                       std::byte** out_host) const {
  if (address < first_address() || address - first_address() >= size_) {
    return make_failure(XDEV_STATUS_INVALID_ARGUMENT,
                        "%s address 0x%" PRIx64 " is not in the memory of %s (its device "
                        "addresses are 0x%" PRIx64 " to 0x%" PRIx64 ")",
                        role, address, label_.c_str(), first_address(),
                        first_address() + size_ - 1);
  }
  const uint64_t offset = address - first_address();
  std::lock_guard lock(mutex_);
  auto it = live_.upper_bound(offset);
  if (it == live_.begin()) {
    return make_failure(XDEV_STATUS_INVALID_ARGUMENT,
                        "%s address 0x%" PRIx64 " of %s is in no live allocation (never "
                        "allocated or already freed)",
                        role, address, label_.c_str());
  }
  --it;
  const uint64_t start = it->first;
  const uint64_t usable = it->second.requested;
  const uint64_t into = offset - start;
  if (into > usable || (into == usable && size > 0)) {
    return make_failure(XDEV_STATUS_INVALID_ARGUMENT,
                        "%s address 0x%" PRIx64 " of %s is in no live allocation (never "
                        "allocated or already freed; the nearest one below starts at 0x%" PRIx64
                        " and has %" PRIu64 " bytes)",
                        role, address, label_.c_str(), start + first_address(), usable);
  }
  if (size > usable - into) {
    return make_failure(XDEV_STATUS_INVALID_ARGUMENT,
                        "%s range of %" PRIu64 " bytes at 0x%" PRIx64
                        " overruns the allocation of %" PRIu64 " bytes at 0x%" PRIx64
                        " on %s by %" PRIu64 " bytes",
                        role, size, address, usable, start + first_address(), label_.c_str(),
                        size - (usable - into));
  }
  *out_host = reinterpret_cast<std::byte*>(base_ + offset);
  return {};
}

}  // namespace xdev::sim
