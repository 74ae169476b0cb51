// The CUDA math library by element type (expf for float, exp for double),
// shared by math.cu and reduce_ops.cu. nvcc only.
#pragma once

#include <cuda_runtime.h>

#include <type_traits>

namespace xdev::cuda {

// The CUDA math function of the element type: expf for float, exp for
// double (one overload pair per function).
#define XDEV_CUDA_MATH(name, f32, f64)                                       \
  __device__ __forceinline__ float name(float v) { return f32(v); }           \
  __device__ __forceinline__ double name(double v) { return f64(v); }
XDEV_CUDA_MATH(m_fabs, fabsf, fabs)
XDEV_CUDA_MATH(m_exp, expf, exp)
XDEV_CUDA_MATH(m_expm1, expm1f, expm1)
XDEV_CUDA_MATH(m_log, logf, log)
XDEV_CUDA_MATH(m_log1p, log1pf, log1p)
XDEV_CUDA_MATH(m_sqrt, sqrtf, sqrt)
XDEV_CUDA_MATH(m_sin, sinf, sin)
XDEV_CUDA_MATH(m_cos, cosf, cos)
XDEV_CUDA_MATH(m_tanh, tanhf, tanh)
XDEV_CUDA_MATH(m_erf, erff, erf)
XDEV_CUDA_MATH(m_floor, floorf, floor)
XDEV_CUDA_MATH(m_ceil, ceilf, ceil)
XDEV_CUDA_MATH(m_rint, rintf, rint)
#undef XDEV_CUDA_MATH
__device__ __forceinline__ float m_pow(float a, float b) { return powf(a, b); }
__device__ __forceinline__ double m_pow(double a, double b) { return pow(a, b); }
__device__ __forceinline__ float m_fmod(float a, float b) { return fmodf(a, b); }
__device__ __forceinline__ double m_fmod(double a, double b) { return fmod(a, b); }

template <typename T>
__device__ __forceinline__ bool is_nan(T v) {
  if constexpr (std::is_floating_point_v<T>) {
    return v != v;
  } else {
    return false;
  }
}

}  // namespace xdev::cuda
