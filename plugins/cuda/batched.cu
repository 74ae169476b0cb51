// TensorScatterAdd's kernel (ops_batched.cpp checks the call and the
// indices, and copies the tensor into the output first): one thread per
// element of updates, a grid-stride loop in 64-bit index arithmetic, each
// element added to its place with atomicAdd, so repeated indices
// accumulate (in an order that may differ between runs: docs/ops.md).
#include <cuda_runtime.h>

#include <cstdint>

#include "batched.hpp"
#include "kernel_util.cuh"

namespace xdev::cuda {
namespace {

__device__ inline void atomic_add(float* p, float v) { atomicAdd(p, v); }
__device__ inline void atomic_add(double* p, double v) { atomicAdd(p, v); }
__device__ inline void atomic_add(int32_t* p, int32_t v) {
  atomicAdd(reinterpret_cast<int*>(p), static_cast<int>(v));
}
// int64 as unsigned long long: two's complement addition wraps alike.
__device__ inline void atomic_add(int64_t* p, int64_t v) {
  static_assert(sizeof(unsigned long long) == sizeof(int64_t));
  atomicAdd(reinterpret_cast<unsigned long long*>(p), static_cast<unsigned long long>(v));
}

template <typename T, typename I>
__global__ void scatter_add_kernel(ScatterLayout l, const I* __restrict__ indices,
                                   const T* __restrict__ updates, T* out) {
  const int64_t total = l.rows * l.inner;
  for (int64_t e = first_index<int64_t>(); e < total; e += grid_stride<int64_t>()) {
    const int64_t j = e / l.inner, i = e % l.inner;
    int64_t row = 0;
    for (int32_t d = 0; d < l.depth; ++d) {
      row = row * l.dims[d] + static_cast<int64_t>(indices[j * l.depth + d]);
    }
    atomic_add(out + row * l.inner + i, updates[e]);
  }
}

}  // namespace

cudaError_t launch_scatter_add(xdev_dtype_t dtype, xdev_dtype_t index_dtype,
                               const ScatterLayout& layout, const void* indices,
                               const void* updates, void* out, cudaStream_t stream) {
  const int64_t total = layout.rows * layout.inner;
  if (total <= 0) return cudaSuccess;
  return visit_number_dtype(dtype, [&](auto zero) -> cudaError_t {
    using T = decltype(zero);
    const unsigned grid = grid_for(total);
    const auto* u = static_cast<const T*>(updates);
    auto* o = static_cast<T*>(out);
    if (index_dtype == XDEV_DTYPE_INT32) {
      scatter_add_kernel<T, int32_t><<<grid, kThreads, 0, stream>>>(
          layout, static_cast<const int32_t*>(indices), u, o);
    } else if (index_dtype == XDEV_DTYPE_INT64) {
      scatter_add_kernel<T, int64_t><<<grid, kThreads, 0, stream>>>(
          layout, static_cast<const int64_t*>(indices), u, o);
    } else {
      return cudaErrorNotSupported;
    }
    return cudaGetLastError();
  });
}

}  // namespace xdev::cuda
