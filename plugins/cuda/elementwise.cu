// Elementwise kernels: Add/Sub/Mul/Div, Neg/Relu, Cast, Copy, Fill and
// RandomUniform (docs/ops.md). Outputs are contiguous; inputs are strided
// (stride 0 on broadcast axes). Each op has a contiguous fast path and a
// general path that splits the output index into coordinates, in 32-bit
// arithmetic when the layout allows.
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <type_traits>

#include "elementwise.cuh"
#include "kernel_util.cuh"
#include "launch.hpp"

namespace xdev::cuda {
namespace {

// ---------------------------------------------------------------------------
// Functors

template <typename T>
struct AddFn {
  __device__ T operator()(T a, T b) const {
    if constexpr (std::is_same_v<T, Bool>) {
      return static_cast<Bool>((a != 0) | (b != 0));  // logical or
    } else {
      return wrap_add(a, b);
    }
  }
};
template <typename T>
struct SubFn {
  __device__ T operator()(T a, T b) const { return wrap_sub(a, b); }
};
template <typename T>
struct MulFn {
  __device__ T operator()(T a, T b) const { return wrap_mul(a, b); }
};
template <typename T>
struct DivFn {
  __device__ T operator()(T a, T b) const {
    if constexpr (std::is_integral_v<T>) {
      // Toward zero; a zero divisor gives 0; MIN / -1 wraps to MIN.
      if (b == 0) return 0;
      if (b == -1) return wrap_sub(T{0}, a);
      return a / b;
    } else {
      return a / b;  // IEEE 754 (nvcc's default -prec-div=true)
    }
  }
};
template <typename T>
struct NegFn {
  __device__ T operator()(T a) const { return wrap_sub(T{0}, a); }
};
template <>
struct NegFn<float> {
  __device__ float operator()(float a) const { return -a; }
};
template <>
struct NegFn<double> {
  __device__ double operator()(double a) const { return -a; }
};
template <typename T>
struct ReluFn {
  // x > 0 ? x : 0, as the conformance reference computes it: NaN and -0.0
  // give +0.
  __device__ T operator()(T a) const { return a > T{0} ? a : T{0}; }
};

template <typename From, typename To>
struct CastFn {
  __device__ To operator()(From x) const {
    if constexpr (std::is_same_v<To, Bool>) {
      return static_cast<Bool>(x != From{0} ? 1 : 0);
    } else if constexpr (std::is_same_v<From, Bool>) {
      return x != 0 ? To{1} : To{0};
    } else {
      // float -> int rounds toward zero (out of range: CUDA saturates).
      return static_cast<To>(x);
    }
  }
};

template <typename T>
cudaError_t binary_typed(BinaryOp op, const ElementwiseLayout& l, const void* x, const void* y,
                         void* out, cudaStream_t stream) {
  switch (op) {
    case BinaryOp::kAdd: return run_binary<T>(l, x, y, out, stream, AddFn<T>{});
    case BinaryOp::kSub: return run_binary<T>(l, x, y, out, stream, SubFn<T>{});
    case BinaryOp::kMul: return run_binary<T>(l, x, y, out, stream, MulFn<T>{});
    case BinaryOp::kDiv: return run_binary<T>(l, x, y, out, stream, DivFn<T>{});
  }
  return cudaErrorInvalidValue;
}

template <typename T>
cudaError_t unary_typed(UnaryOp op, const ElementwiseLayout& l, const void* x, void* out,
                        cudaStream_t stream) {
  switch (op) {
    case UnaryOp::kNeg: return run_unary<T, T>(l, x, out, stream, NegFn<T>{});
    case UnaryOp::kRelu: return run_unary<T, T>(l, x, out, stream, ReluFn<T>{});
  }
  return cudaErrorInvalidValue;
}

template <typename From>
cudaError_t cast_from(xdev_dtype_t to, const ElementwiseLayout& l, const void* x, void* out,
                      cudaStream_t stream) {
  return visit_dtype(to, [&](auto zero) {
    using To = decltype(zero);
    return run_unary<From, To>(l, x, out, stream, CastFn<From, To>{});
  });
}

template <typename T>
struct Identity {
  __device__ T operator()(T x) const { return x; }
};

struct alignas(16) Bytes16 {
  uint64_t lo, hi;
};

template <typename T>
__global__ void fill_kernel(int64_t count, T value, T* __restrict__ out) {
  for (int64_t i = first_index<int64_t>(); i < count; i += grid_stride<int64_t>()) out[i] = value;
}

// ---------------------------------------------------------------------------
// RandomUniform (docs/ops.md), bit for bit: splitmix64 of the row-major
// index, then the top 24 (float32) or 53 (float64) bits scaled to [0, 1).
// The explicitly rounded intrinsics keep nvcc from fusing the multiply and
// the add into an FMA, which would round differently from the host.

__device__ __forceinline__ uint64_t random_bits(uint64_t seed, uint64_t i) {
  uint64_t x = seed + (i + 1) * 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// The rounded operations in float and in double.
__device__ __forceinline__ float sub_rn(float a, float b) { return __fsub_rn(a, b); }
__device__ __forceinline__ double sub_rn(double a, double b) { return __dsub_rn(a, b); }
__device__ __forceinline__ float mul_rn(float a, float b) { return __fmul_rn(a, b); }
__device__ __forceinline__ double mul_rn(double a, double b) { return __dmul_rn(a, b); }
__device__ __forceinline__ float add_rn(float a, float b) { return __fadd_rn(a, b); }
__device__ __forceinline__ double add_rn(double a, double b) { return __dadd_rn(a, b); }

// The top 24 (float) or 53 (double) bits of `bits`, scaled to [0, 1).
__device__ __forceinline__ float unit_interval(float, uint64_t bits) {
  return __fmul_rn(static_cast<float>(bits >> 40), 0x1.0p-24f);
}
__device__ __forceinline__ double unit_interval(double, uint64_t bits) {
  return __dmul_rn(static_cast<double>(bits >> 11), 0x1.0p-53);
}

template <typename T>
__global__ void random_uniform_kernel(int64_t count, uint64_t seed, T minval, T maxval,
                                      T* __restrict__ out) {
  const T range = sub_rn(maxval, minval);
  for (int64_t i = first_index<int64_t>(); i < count; i += grid_stride<int64_t>()) {
    const T u = unit_interval(T{}, random_bits(seed, static_cast<uint64_t>(i)));
    out[i] = add_rn(minval, mul_rn(range, u));
  }
}

}  // namespace

cudaError_t launch_binary(BinaryOp op, xdev_dtype_t dtype, const ElementwiseLayout& layout,
                          const void* x, const void* y, void* out, cudaStream_t stream) {
  return visit_dtype(dtype, [&](auto zero) -> cudaError_t {
    using T = decltype(zero);
    if constexpr (std::is_same_v<T, Bool>) {  // bool has Add (logical or) only
      if (op != BinaryOp::kAdd) return cudaErrorNotSupported;
      return run_binary<Bool>(layout, x, y, out, stream, AddFn<Bool>{});
    } else {
      return binary_typed<T>(op, layout, x, y, out, stream);
    }
  });
}

cudaError_t launch_unary(UnaryOp op, xdev_dtype_t dtype, const ElementwiseLayout& layout,
                         const void* x, void* out, cudaStream_t stream) {
  return visit_number_dtype(dtype, [&](auto zero) {
    return unary_typed<decltype(zero)>(op, layout, x, out, stream);
  });
}

cudaError_t launch_cast(xdev_dtype_t from, xdev_dtype_t to, const ElementwiseLayout& layout,
                        const void* x, void* out, cudaStream_t stream) {
  return visit_dtype(from, [&](auto zero) {
    return cast_from<decltype(zero)>(to, layout, x, out, stream);
  });
}

cudaError_t launch_copy(size_t element_size, const ElementwiseLayout& layout, const void* x,
                        void* out, cudaStream_t stream) {
  switch (element_size) {
    case 1: return run_unary<uint8_t, uint8_t>(layout, x, out, stream, Identity<uint8_t>{});
    case 2: return run_unary<uint16_t, uint16_t>(layout, x, out, stream, Identity<uint16_t>{});
    case 4: return run_unary<uint32_t, uint32_t>(layout, x, out, stream, Identity<uint32_t>{});
    case 8: return run_unary<uint64_t, uint64_t>(layout, x, out, stream, Identity<uint64_t>{});
    case 16: return run_unary<Bytes16, Bytes16>(layout, x, out, stream, Identity<Bytes16>{});
    default: return cudaErrorNotSupported;
  }
}

cudaError_t launch_fill(size_t element_size, uint64_t pattern, void* out, int64_t count,
                        cudaStream_t stream) {
  if (count <= 0) return cudaSuccess;
  const size_t bytes = static_cast<size_t>(count) * element_size;
  if (pattern == 0 || element_size == 1) {
    return cudaMemsetAsync(out, static_cast<int>(pattern & 0xFF), bytes, stream);
  }
  const unsigned grid = grid_for(count);
  switch (element_size) {
    case 2:
      fill_kernel<uint16_t><<<grid, kThreads, 0, stream>>>(count, static_cast<uint16_t>(pattern),
                                                           static_cast<uint16_t*>(out));
      break;
    case 4:
      fill_kernel<uint32_t><<<grid, kThreads, 0, stream>>>(count, static_cast<uint32_t>(pattern),
                                                           static_cast<uint32_t*>(out));
      break;
    case 8:
      fill_kernel<uint64_t><<<grid, kThreads, 0, stream>>>(count, pattern,
                                                           static_cast<uint64_t*>(out));
      break;
    default:
      return cudaErrorNotSupported;
  }
  return cudaGetLastError();
}

cudaError_t launch_random_uniform(xdev_dtype_t dtype, uint64_t seed, double minval, double maxval,
                                  void* out, int64_t count, cudaStream_t stream) {
  if (count <= 0) return cudaSuccess;
  const unsigned grid = grid_for(count);
  if (dtype == XDEV_DTYPE_FLOAT32) {
    random_uniform_kernel<float><<<grid, kThreads, 0, stream>>>(
        count, seed, static_cast<float>(minval), static_cast<float>(maxval),
        static_cast<float*>(out));
  } else if (dtype == XDEV_DTYPE_FLOAT64) {
    random_uniform_kernel<double><<<grid, kThreads, 0, stream>>>(count, seed, minval, maxval,
                                                                 static_cast<double*>(out));
  } else {
    return cudaErrorNotSupported;
  }
  return cudaGetLastError();
}

}  // namespace xdev::cuda
