// What every kernel of the cuda plugin does first (ops*.cpp): the checked
// call (host table, stream, the device made current), the exception guard,
// attribute lookup and the dtype masks. Host code.
#pragma once

#include <xdev/plugin.h>
#include <xdev/op_names.h>

#include <cuda_runtime_api.h>

#include <cinttypes>
#include <cmath>
#include <cstring>
#include <limits>
#include <cstdint>
#include <vector>
#include <new>
#include <string_view>
#include <utility>

#include "common.hpp"
#include "launch.hpp"

namespace xdev::cuda {

// The SDK's dtype masks and names (<xdev/plugin_helpers.hpp>).
inline constexpr uint64_t kFloat32 = ph::kF32;
inline constexpr uint64_t kFloat64 = ph::kF64;
inline constexpr uint64_t kInt32 = ph::kI32;
inline constexpr uint64_t kInt64 = ph::kI64;
using ph::kAll;
using ph::kBool;
using ph::kFloats;
using ph::kNumbers;
using ph::dtype_name;

inline size_t itemsize(xdev_dtype_t dtype) { return xdev_plugin_dtype_size(dtype); }

// Runs a kernel's body under the exception guard: an exception becomes a
// status made with the calling stream's instance table (else the fallback;
// the call is only looked at once something was thrown).
template <typename Body>
xdev_status_t* guarded(const xdev_kernel_call_t* raw, const char* op, Body&& body) noexcept {
  try {
    return std::forward<Body>(body)();
  } catch (...) {
    return g_host.unexpected(
        raw != nullptr && raw->stream != nullptr ? raw->stream->device->plugin->host : nullptr, op);
  }
}

inline bool in_mask(uint64_t mask, xdev_dtype_t dtype) {
  return static_cast<unsigned>(dtype) < 64 && (mask & XDEV_DTYPE_BIT(dtype)) != 0;
}

inline const void* data_of(const xdev_tensor_t& t) {
  return static_cast<const char*>(t.data) + t.byte_offset;
}
inline void* data_of_output(const xdev_tensor_t& t) {
  return static_cast<char*>(t.data) + t.byte_offset;
}

inline const xdev_attr_t* find_attr(const xdev_kernel_call_t* call, std::string_view name,
                             xdev_attr_kind_t kind) {
  for (uint32_t i = 0; i < call->attr_count; ++i) {
    const xdev_attr_t& a = call->attrs[i];
    if (a.name != nullptr && name == a.name && a.kind == kind) return &a;
  }
  return nullptr;
}

// ---------------------------------------------------------------------------
// A kernel call, checked: the host table, the stream, the device made
// current for the call's lifetime.

class Call {
 public:
  Call(const xdev_kernel_call_t* call, const char* op) : call_(call), op_(op) {}

  // Checks the call's structure; `inputs` < 0 accepts any count >= 1.
  // `outputs` is the op's exact output count (SoftmaxCrossEntropyWithLogits
  // has 2: the core passes every output, empty ones included).
  xdev_status_t* check(int inputs, uint32_t outputs = 1) {
    if (call_ == nullptr) return g_host.null_argument(g_host.fallback(), op_, "call");
    if (call_->stream == nullptr || call_->stream->device == nullptr) {
      return g_host.null_argument(g_host.fallback(), op_, "call->stream");
    }
    stream_ = call_->stream;
    host_ = stream_->device->plugin->host;
    if (!XDEV_HAS_FIELD(call_, xdev_kernel_call_t, attr_count)) {
      return g_host.fail(host_, XDEV_STATUS_ABI_MISMATCH, "%s: call->struct_size %zu is too small",
                         op_, call_->struct_size);
    }
    if (call_->output_count != outputs || call_->outputs == nullptr) {
      return g_host.fail(host_, XDEV_STATUS_INVALID_ARGUMENT,
                         "%s: expected %" PRIu32 " output%s, got %" PRIu32, op_, outputs,
                         outputs == 1 ? "" : "s", call_->output_count);
    }
    const bool count_ok = inputs < 0 ? call_->input_count >= 1
                                     : call_->input_count == static_cast<uint32_t>(inputs);
    if (!count_ok || (call_->input_count > 0 && call_->inputs == nullptr)) {
      return g_host.fail(
          host_, XDEV_STATUS_INVALID_ARGUMENT, "%s: expected %s%d inputs, got %" PRIu32, op_,
          inputs < 0 ? "at least " : "", inputs < 0 ? 1 : inputs, call_->input_count);
    }
    for (uint32_t i = 0; i < call_->input_count; ++i) {
      const xdev_tensor_t* t = call_->inputs[i];
      if (t == nullptr || t->rank < 0 || t->rank > kMaxRank ||
          (t->rank > 0 && (t->shape == nullptr || t->strides == nullptr))) {
        return g_host.fail(host_, XDEV_STATUS_INVALID_ARGUMENT,
                           "%s: input %" PRIu32 " is NULL or has a bad rank/shape", op_, i);
      }
    }
    for (uint32_t i = 0; i < outputs; ++i) {
      const xdev_tensor_t* out = call_->outputs[i];
      if (out == nullptr || out->rank < 0 || out->rank > kMaxRank ||
          (out->rank > 0 && out->shape == nullptr)) {
        return g_host.fail(host_, XDEV_STATUS_INVALID_ARGUMENT,
                           "%s: output %" PRIu32 " is NULL or has a bad rank/shape", op_, i);
      }
    }
    if (xdev_status_t* s = check_usable(host_, op_, ordinal())) return s;
    guard_.emplace(stream_->device->ordinal);
    if (guard_->error() != cudaSuccess) {
      return cuda_failure(host_, op_, "making the device current", ordinal(),
                          static_cast<cudaError_t>(guard_->error()));
    }
    // A stale error of an earlier, already reported call must not be taken
    // for this call's launch error.
    (void)cudaGetLastError();
    return nullptr;
  }

  const xdev_tensor_t& input(uint32_t i) const { return *call_->inputs[i]; }
  uint32_t input_count() const { return call_->input_count; }
  const xdev_tensor_t& output(uint32_t i = 0) const { return *call_->outputs[i]; }
  uint32_t output_count() const { return call_->output_count; }
  const xdev_kernel_call_t* raw() const { return call_; }
  xdev_stream_t* stream() const { return stream_; }
  cudaStream_t cuda_stream() const { return stream_->stream; }
  const xdev_host_api_t* host() const { return host_; }
  int ordinal() const { return stream_->device->ordinal; }
  // The device's multiprocessors (sizes grids: segment_plan.hpp).
  int multiprocessors() const { return stream_->device->info->multiprocessor_count; }
  const char* op() const { return op_; }

  // Kernel scratch from the core's pool (ABI 1.2), `bytes` aligned to 256;
  // NULL when the core offers none or its pool cannot provide it. Valid for
  // the work this call enqueues; the core takes it back after the call.
  void* scratch(uint64_t bytes) const {
    if (!XDEV_HAS_FIELD(call_, xdev_kernel_call_t, scratch_context) ||
        call_->scratch_allocate == nullptr || bytes == 0) {
      return nullptr;
    }
    return call_->scratch_allocate(call_->scratch_context, bytes);
  }

  xdev_status_t* launched(cudaError_t error, const char* what = "launching the kernel") {
    if (error == cudaSuccess) return nullptr;
    return cuda_failure(host_, op_, what, ordinal(), error);
  }

  xdev_status_t* bad_dtype(xdev_dtype_t dtype) {
    return g_host.fail(host_, XDEV_STATUS_UNIMPLEMENTED,
                       "%s: the cuda plugin has no kernel for dtype %s", op_, dtype_name(dtype));
  }

  // Every input and every further output has the (first) output's dtype
  // (the ops where all share one).
  xdev_status_t* check_same_dtype(uint64_t allowed) {
    const xdev_dtype_t dtype = output().dtype;
    if (!in_mask(allowed, dtype)) return bad_dtype(dtype);
    for (uint32_t i = 0; i < input_count(); ++i) {
      if (input(i).dtype != dtype) {
        return g_host.fail(host_, XDEV_STATUS_INVALID_ARGUMENT,
                           "%s: input %" PRIu32 " is %s but the output is %s", op_, i,
                           dtype_name(input(i).dtype), dtype_name(dtype));
      }
    }
    for (uint32_t i = 1; i < output_count(); ++i) {
      if (output(i).dtype != dtype) {
        return g_host.fail(host_, XDEV_STATUS_INVALID_ARGUMENT,
                           "%s: output %" PRIu32 " is %s but output 0 is %s", op_, i,
                           dtype_name(output(i).dtype), dtype_name(dtype));
      }
    }
    return nullptr;
  }

 private:
  // A std::optional-like holder (DeviceGuard is neither copyable nor movable).
  class OptionalGuard {
   public:
    ~OptionalGuard() {
      if (engaged_) reinterpret_cast<DeviceGuard*>(storage_)->~DeviceGuard();
    }
    void emplace(int ordinal) {
      new (storage_) DeviceGuard(ordinal);
      engaged_ = true;
    }
    DeviceGuard* operator->() { return reinterpret_cast<DeviceGuard*>(storage_); }

   private:
    alignas(DeviceGuard) unsigned char storage_[sizeof(DeviceGuard)];
    bool engaged_ = false;
  };

  const xdev_kernel_call_t* call_;
  const char* op_;
  xdev_stream_t* stream_ = nullptr;
  const xdev_host_api_t* host_ = nullptr;
  OptionalGuard guard_;
};

// The `axes` attribute of a reduction: reduced[d] for each listed axis
// (every axis when there is no attribute; the core always sends one).
// The indices of GatherV2 or TensorScatterAdd (int32 or int64, contiguous)
// copied into `host`, after the work before them on the call's stream: the
// plugin checks them there (gather_check.hpp) before it launches anything.
inline xdev_status_t* indices_to_host(Call& call, const xdev_tensor_t& indices,
                                      std::vector<unsigned char>& host) {
  int64_t count = 1;
  for (int32_t d = 0; d < indices.rank; ++d) count *= indices.shape[d];
  host.resize(static_cast<size_t>(count) * itemsize(indices.dtype));
  if (count == 0) return nullptr;
  if (xdev_status_t* s = call.launched(
          cudaMemcpyAsync(host.data(), data_of(indices), host.size(), cudaMemcpyDeviceToHost,
                          call.cuda_stream()),
          "copying the indices to the host")) {
    return s;
  }
  return call.launched(cudaStreamSynchronize(call.cuda_stream()), "waiting for the indices");
}

inline xdev_status_t* read_axes(Call& call, int32_t rank, bool (&reduced)[kMaxRank]) {
  if (const xdev_attr_t* a = find_attr(call.raw(), XDEV_ATTR_NAME_axes, XDEV_ATTR_INTS)) {
    for (int64_t i = 0; i < a->value.ints.count; ++i) {
      const int64_t axis = a->value.ints.values[i];
      if (axis < 0 || axis >= rank) {
        return g_host.fail(call.host(), XDEV_STATUS_INVALID_ARGUMENT,
                           "%s: axis %" PRId64 " is out of range for rank %" PRId32, call.op(),
                           axis, rank);
      }
      reduced[axis] = true;
    }
  } else {
    for (int32_t d = 0; d < rank; ++d) reduced[d] = true;
  }
  return nullptr;
}

// The int attribute `axis`, in [0, limit).
inline xdev_status_t* read_axis(Call& call, int32_t limit, int32_t* axis) {
  const xdev_attr_t* a = find_attr(call.raw(), XDEV_ATTR_NAME_axis, XDEV_ATTR_INT);
  if (a == nullptr || a->value.i < 0 || a->value.i >= limit) {
    return g_host.fail(call.host(), XDEV_STATUS_INVALID_ARGUMENT,
                       "%s: the attribute 'axis' must be an int in [0, %" PRId32 ")", call.op(),
                       limit);
  }
  *axis = static_cast<int32_t>(a->value.i);
  return nullptr;
}

// A string attribute (ABI 1.x XDEV_ATTR_STRING: BiasAdd's data_format),
// NULL when absent (or of another kind).
inline const char* string_attr(const Call& call, std::string_view name) {
  const xdev_attr_t* a = find_attr(call.raw(), name, XDEV_ATTR_STRING);
  return a != nullptr ? a->value.s : nullptr;
}

// A bool attribute, false when absent.
inline bool bool_attr(const Call& call, std::string_view name) {
  const xdev_attr_t* a = find_attr(call.raw(), name, XDEV_ATTR_BOOL);
  return a != nullptr && a->value.b != 0;
}

// double -> integer rounding toward zero; NaN gives 0 and out-of-range values
// saturate (docs/ops.md leaves them unspecified; this avoids undefined
// behaviour on the host).
template <typename I>
inline I to_integer(double v) {
  if (std::isnan(v)) return 0;
  constexpr double lo = static_cast<double>(std::numeric_limits<I>::min());
  constexpr double hi = static_cast<double>(std::numeric_limits<I>::max());
  if (v <= lo) return std::numeric_limits<I>::min();
  if (v >= hi) return std::numeric_limits<I>::max();
  return static_cast<I>(v);
}

// The bit pattern (in the low bytes) of `value` converted to `dtype` as Cast
// converts (docs/ops.md): Fill's value, PadV2's constant_values.
inline uint64_t fill_pattern(xdev_dtype_t dtype, double value) {
  switch (dtype) {
    case XDEV_DTYPE_FLOAT32: {
      const float f = static_cast<float>(value);
      uint32_t bits;
      std::memcpy(&bits, &f, sizeof(bits));
      return bits;
    }
    case XDEV_DTYPE_FLOAT64: {
      uint64_t bits;
      std::memcpy(&bits, &value, sizeof(bits));
      return bits;
    }
    case XDEV_DTYPE_INT32: return static_cast<uint32_t>(to_integer<int32_t>(value));
    case XDEV_DTYPE_INT64: return static_cast<uint64_t>(to_integer<int64_t>(value));
    default: return value != 0.0 ? 1 : 0;  // bool
  }
}

}  // namespace xdev::cuda
