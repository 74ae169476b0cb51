// Making a CUDA device current for one plugin call, and putting back exactly
// what the calling thread had before.
//
// The old guard restored "device 0" with cudaSetDevice(0) whenever the thread
// had not chosen a device: since CUDA 12 that creates device 0's primary
// context (about 0.5 GiB), also in a process that hid GPU 0 from xdev. This
// guard works on contexts instead: it remembers the thread's current context
// (none, usually) and rebinds exactly that one afterwards, so a thread that
// had no context ends with none, and no device the program did not use is
// ever touched. It skips the switch when the device's primary context is
// already current.
//
// Host-only and free of CUDA headers: the context operations come in a table
// (common.cpp fills it from the CUDA runtime and driver), so tests can check
// the logic with a fake table and no GPU (tests/cuda/test_cuda_layout.cpp).
#pragma once

namespace xdev::cuda {

// The context operations the guard needs. Contexts are opaque pointers
// (CUcontext); NULL means "no context".
struct ContextOps {
  // The calling thread's current context, or NULL.
  void* (*current)();
  // Binds `context` (NULL: none) to the calling thread; false on failure.
  bool (*bind)(void* context);
  // Makes device `ordinal`'s primary context current, creating it if needed
  // (cudaSetDevice); returns 0 or the CUDA error code, and its context.
  int (*make_current)(int ordinal, void** out_context);
  // The primary context of `ordinal` if this process already made it
  // current once (cached), else NULL; never creates one.
  void* (*known_primary)(int ordinal);
};

// The table made from the CUDA runtime and driver (common.cpp).
const ContextOps& cuda_context_ops() noexcept;

class DeviceGuard {
 public:
  explicit DeviceGuard(int ordinal) noexcept : DeviceGuard(cuda_context_ops(), ordinal) {}
  DeviceGuard(const ContextOps& ops, int ordinal) noexcept : ops_(ops) {
    previous_ = ops_.current();
    void* known = ops_.known_primary(ordinal);
    if (previous_ != nullptr && previous_ == known) return;  // already current
    if (known != nullptr && ops_.bind(known)) {  // cheaper than make_current
      switched_ = true;
      return;
    }
    void* context = nullptr;
    error_ = ops_.make_current(ordinal, &context);
    switched_ = error_ == 0 ? context != previous_ : ops_.current() != previous_;
  }
  ~DeviceGuard() {
    // Put back what was there: another device's context, or none at all.
    if (switched_) (void)ops_.bind(previous_);
  }
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

  // 0 (cudaSuccess) when the device could be made current, else the CUDA
  // error code (a cudaError_t).
  int error() const noexcept { return error_; }

 private:
  const ContextOps& ops_;
  void* previous_ = nullptr;
  bool switched_ = false;
  int error_ = 0;
};

}  // namespace xdev::cuda
