// Kernel scratch (plugin ABI 1.2, xdev_kernel_call_t::scratch_allocate; 1.6
// scratch_allocate_at, the same block as (allocation, offset)):
// temporary device memory a kernel asks for during its call, from the pool of
// the op's logical device, so it counts against that device's limit and never
// competes with the pool for the device's free memory (reduction partials
// and BLAS workspaces used to be cudaMalloc'ed behind the pool).
//
// One object per kernel call, on the caller's stack. Every block goes back to
// the pool when the object dies, right after the kernel returned: the pool
// hands a block out again only to later work of the same logical device,
// which runs on the same stream after the kernel's work (stream order), and
// it gives memory back to the device only after waiting for the stream
// (LogicalDeviceState::wait_for_queued_work).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include <xdev/error.hpp>

#include "devices/logical_device.hpp"
#include "common/log.hpp"

namespace xdev::detail {

class KernelScratch {
 public:
  explicit KernelScratch(LogicalDeviceState* device) : device_(device) {}
  ~KernelScratch() {
    for (uint32_t i = 0; i < count_ && i < inline_.size(); ++i) device_->deallocate(inline_[i]);
    for (void* block : more_) device_->deallocate(block);
  }
  KernelScratch(const KernelScratch&) = delete;
  KernelScratch& operator=(const KernelScratch&) = delete;

  // The xdev_kernel_call_t::scratch_allocate callback; `context` is a
  // KernelScratch. NULL when the pool cannot provide `size` bytes (logged at
  // debug level with the pool's reason). Never throws.
  static void* allocate(void* context, uint64_t size) noexcept {
    DeviceMemory where;
    return take(context, size, &where) != nullptr ? where.address() : nullptr;
  }
  // The xdev_kernel_call_t::scratch_allocate_at callback (ABI 1.6): the
  // allocation, and the block's offset in it in *out_offset.
  static void* allocate_at(void* context, uint64_t size, uint64_t* out_offset) noexcept {
    DeviceMemory where;
    if (out_offset == nullptr || take(context, size, &where) == nullptr) return nullptr;
    *out_offset = where.offset;
    return where.allocation;
  }

 private:
  // A block from the pool, remembered for the destructor; its place in *where.
  static void* take(void* context, uint64_t size, DeviceMemory* where) noexcept {
    auto* self = static_cast<KernelScratch*>(context);
    if (self == nullptr || size == 0) return nullptr;
    void* block = nullptr;
    try {
      block = self->device_->allocate(size, where);
      if (self->count_ < self->inline_.size()) {
        self->inline_[self->count_] = block;
      } else {
        self->more_.push_back(block);
      }
      ++self->count_;
      return block;
    } catch (const std::exception& e) {
      if (block != nullptr) self->device_->deallocate(block);
      log(XDEV_LOG_DEBUG, "kernel scratch of " + std::to_string(size) + " bytes on " +
                              self->device_->name() + ": " + e.what());
      return nullptr;
    }
  }

  LogicalDeviceState* device_;
  std::array<void*, 4> inline_{};  // the first blocks (a call needs one or two)
  std::vector<void*> more_;
  uint32_t count_ = 0;
};

}  // namespace xdev::detail
