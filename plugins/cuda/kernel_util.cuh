// Device-side helpers shared by the cuda plugin's kernels (nvcc only).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

#include "indexing.hpp"
#include "launch.hpp"

namespace xdev::cuda {

inline constexpr int kThreads = 256;

using Bool = uint8_t;  // xdev's bool: one byte, 0 or 1

// Calls f(T{}) with T the element type of `dtype` (Bool for bool) and
// returns its error; cudaErrorNotSupported for any other dtype.
template <typename F>
cudaError_t visit_dtype(xdev_dtype_t dtype, F&& f) {
  switch (dtype) {
    case XDEV_DTYPE_FLOAT32: return f(float{});
    case XDEV_DTYPE_FLOAT64: return f(double{});
    case XDEV_DTYPE_INT32: return f(int32_t{});
    case XDEV_DTYPE_INT64: return f(int64_t{});
    case XDEV_DTYPE_BOOL: return f(Bool{});
    default: return cudaErrorNotSupported;
  }
}

// visit_dtype for the four number dtypes: bool is cudaErrorNotSupported.
template <typename F>
cudaError_t visit_number_dtype(xdev_dtype_t dtype, F&& f) {
  return visit_dtype(dtype, [&f](auto zero) -> cudaError_t {
    if constexpr (std::is_same_v<decltype(zero), Bool>) {
      return cudaErrorNotSupported;
    } else {
      return f(zero);
    }
  });
}

// visit_dtype for float32 and float64: any other dtype is
// cudaErrorNotSupported.
template <typename F>
cudaError_t visit_float_dtype(xdev_dtype_t dtype, F&& f) {
  switch (dtype) {
    case XDEV_DTYPE_FLOAT32: return f(float{});
    case XDEV_DTYPE_FLOAT64: return f(double{});
    default: return cudaErrorNotSupported;
  }
}

// Blocks for a grid-stride loop over `count` items: enough to fill any
// current GPU several times over, never more than the items need.
inline unsigned grid_for(int64_t count, int64_t per_block = kThreads) {
  const int64_t blocks = (count + per_block - 1) / per_block;
  constexpr int64_t kMaxBlocks = int64_t{1} << 16;
  return static_cast<unsigned>(blocks < 1 ? 1 : (blocks > kMaxBlocks ? kMaxBlocks : blocks));
}

// Index of the first item of this thread, and the grid's stride.
template <typename Index>
__device__ __forceinline__ Index first_index() {
  return static_cast<Index>(blockIdx.x) * static_cast<Index>(blockDim.x) +
         static_cast<Index>(threadIdx.x);
}
template <typename Index>
__device__ __forceinline__ Index grid_stride() {
  return static_cast<Index>(gridDim.x) * static_cast<Index>(blockDim.x);
}

// Signed integer arithmetic that wraps (two's complement) instead of being
// undefined on overflow; floating point as IEEE 754.
template <typename T>
__device__ __forceinline__ T wrap_add(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
  } else {
    return a + b;
  }
}
template <typename T>
__device__ __forceinline__ T wrap_sub(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(a) - static_cast<U>(b));
  } else {
    return a - b;
  }
}
template <typename T>
__device__ __forceinline__ T wrap_mul(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(a) * static_cast<U>(b));
  } else {
    return a * b;
  }
}

// The accumulator of sums and products: double for floats, uint64 for
// integers (wrapping, exact modulo 2^64); widen an element into it, narrow
// the result back (integers keep the low bits).
template <typename T>
using WideAcc = std::conditional_t<std::is_floating_point_v<T>, double, uint64_t>;

template <typename T>
__device__ __forceinline__ WideAcc<T> widen(T v) {
  if constexpr (std::is_floating_point_v<T>) {
    return static_cast<double>(v);
  } else {
    return static_cast<uint64_t>(static_cast<int64_t>(v));  // sign-extends
  }
}
template <typename T>
__device__ __forceinline__ T narrow(WideAcc<T> v) {
  if constexpr (std::is_floating_point_v<T>) {
    return static_cast<T>(v);
  } else {
    return static_cast<T>(static_cast<int64_t>(v));  // the low bits
  }
}

}  // namespace xdev::cuda
