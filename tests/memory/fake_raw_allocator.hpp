// A raw allocator for pool tests. It hands out addresses inside a PROT_NONE
// reservation, so a pool that touched the memory it manages would crash, and
// it counts calls and bytes. `capacity` plays the device's memory size.
#pragma once

#include <sys/mman.h>

#include <cstdint>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include <xdev/error.hpp>

#include "memory/raw_allocator.hpp"

namespace xdev::testing {

class FakeRawAllocator final : public detail::RawAllocator {
 public:
  static constexpr uint64_t kReservation = uint64_t{16} << 30;

  explicit FakeRawAllocator(uint64_t capacity = uint64_t{1} << 40, std::string name = "FAKE:0")
      : RawAllocator(std::move(name)), capacity_(capacity) {
    void* p = mmap(nullptr, kReservation, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) throw std::runtime_error("FakeRawAllocator: mmap of the reservation failed");
    base_ = reinterpret_cast<uintptr_t>(p);
    next_ = base_;
  }
  ~FakeRawAllocator() override { munmap(reinterpret_cast<void*>(base_), kReservation); }

  void* allocate(uint64_t size, uint64_t alignment) override {
    std::lock_guard lock(mu_);
    ++allocate_calls_;
    requested_sizes_.push_back(size);
    if (throw_next_) {
      throw_next_ = false;
      throw Error(ErrorCode::kUnavailable, "fake device lost");
    }
    if (outstanding_ + size > capacity_) {
      ++failed_calls_;
      return nullptr;
    }
    // Honour the alignment up to `max_alignment_`, then add `misalign_`.
    const uint64_t align = std::min(alignment, max_alignment_);
    uint64_t p = (next_ + align - 1) & ~(align - 1);
    p += misalign_;
    if (p + size > base_ + kReservation) throw std::runtime_error("FakeRawAllocator: reservation exhausted");
    next_ = p + size;
    live_[p] = size;
    outstanding_ += size;
    peak_outstanding_ = std::max(peak_outstanding_, outstanding_);
    return reinterpret_cast<void*>(p);
  }

  void deallocate(void* ptr) noexcept override {
    if (ptr == nullptr) return;
    std::lock_guard lock(mu_);
    ++deallocate_calls_;
    calls_.push_back('f');
    auto it = live_.find(reinterpret_cast<uintptr_t>(ptr));
    if (it == live_.end()) {
      ++bad_frees_;
      return;
    }
    outstanding_ -= it->second;
    live_.erase(it);
  }

  // Plays a device with queued work: counts the waits and answers
  // `wait_result_` (false: "cannot wait now").
  bool wait_for_device_work() override {
    std::lock_guard lock(mu_);
    ++wait_calls_;
    calls_.push_back('w');
    return wait_result_;
  }

  // Whether [ptr, ptr+size) lies inside one live raw block.
  bool owns(uint64_t ptr, uint64_t size) const {
    std::lock_guard lock(mu_);
    auto it = live_.upper_bound(ptr);
    if (it == live_.begin()) return false;
    --it;
    return ptr >= it->first && ptr + size <= it->first + it->second;
  }

  void set_capacity(uint64_t capacity) { std::lock_guard lock(mu_); capacity_ = capacity; }
  void set_max_alignment(uint64_t a) { std::lock_guard lock(mu_); max_alignment_ = a; }
  void set_misalign(uint64_t m) { std::lock_guard lock(mu_); misalign_ = m; }
  void throw_on_next_allocate() { std::lock_guard lock(mu_); throw_next_ = true; }
  void set_wait_result(bool result) { std::lock_guard lock(mu_); wait_result_ = result; }
  uint64_t wait_calls() const { std::lock_guard lock(mu_); return wait_calls_; }
  // 'w' for each wait_for_device_work, 'f' for each deallocate, in order.
  std::string calls() const { std::lock_guard lock(mu_); return calls_; }

  uint64_t outstanding() const { std::lock_guard lock(mu_); return outstanding_; }
  uint64_t peak_outstanding() const { std::lock_guard lock(mu_); return peak_outstanding_; }
  uint64_t allocate_calls() const { std::lock_guard lock(mu_); return allocate_calls_; }
  uint64_t failed_calls() const { std::lock_guard lock(mu_); return failed_calls_; }
  uint64_t deallocate_calls() const { std::lock_guard lock(mu_); return deallocate_calls_; }
  uint64_t bad_frees() const { std::lock_guard lock(mu_); return bad_frees_; }
  size_t live_blocks() const { std::lock_guard lock(mu_); return live_.size(); }
  std::vector<uint64_t> requested_sizes() const { std::lock_guard lock(mu_); return requested_sizes_; }
  // Sizes of the blocks handed out and still live, in address order.
  std::vector<uint64_t> live_sizes() const {
    std::lock_guard lock(mu_);
    std::vector<uint64_t> sizes;
    for (const auto& [p, s] : live_) sizes.push_back(s);
    return sizes;
  }

 private:
  mutable std::mutex mu_;
  uintptr_t base_ = 0;
  uintptr_t next_ = 0;
  uint64_t capacity_;
  uint64_t max_alignment_ = uint64_t{1} << 20;
  uint64_t misalign_ = 0;
  bool throw_next_ = false;
  std::map<uint64_t, uint64_t> live_;
  std::vector<uint64_t> requested_sizes_;
  uint64_t outstanding_ = 0;
  uint64_t peak_outstanding_ = 0;
  uint64_t allocate_calls_ = 0;
  uint64_t failed_calls_ = 0;
  uint64_t deallocate_calls_ = 0;
  uint64_t bad_frees_ = 0;
  uint64_t wait_calls_ = 0;
  bool wait_result_ = true;
  std::string calls_;
};

}  // namespace xdev::testing
