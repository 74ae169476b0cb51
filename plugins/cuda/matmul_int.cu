// Integer MatMul (cuBLAS has none for i32/i64 with wrapping results): a
// shared-memory tiled kernel over strided operands (transposes are folded
// into the strides by the caller). Arithmetic wraps (two's complement).
#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

#include "kernel_util.cuh"
#include "launch.hpp"

namespace xdev::cuda {
namespace {

constexpr int kTile = 16;
constexpr int64_t kMaxGridY = 65535;

template <typename T>
__global__ void matmul_int_kernel(const T* __restrict__ a, int64_t a_row, int64_t a_col,
                                  const T* __restrict__ b, int64_t b_row, int64_t b_col,
                                  T* __restrict__ c, int64_t m, int64_t n, int64_t k) {
  using U = std::make_unsigned_t<T>;
  __shared__ U a_tile[kTile][kTile + 1];
  __shared__ U b_tile[kTile][kTile + 1];
  const int tx = static_cast<int>(threadIdx.x);
  const int ty = static_cast<int>(threadIdx.y);
  const int64_t col = static_cast<int64_t>(blockIdx.x) * kTile + tx;
  const int64_t row_blocks = (m + kTile - 1) / kTile;
  // Rows beyond the grid's 65535 blocks loop (the loop bound is uniform per
  // block, so every thread reaches the barriers).
  for (int64_t row_block = blockIdx.y; row_block < row_blocks; row_block += gridDim.y) {
    const int64_t row = row_block * kTile + ty;
    U acc = 0;
    for (int64_t t = 0; t < k; t += kTile) {
      const int64_t ka = t + tx;  // A(row, ka)
      a_tile[ty][tx] = (row < m && ka < k) ? static_cast<U>(a[row * a_row + ka * a_col]) : U{0};
      const int64_t kb = t + ty;  // B(kb, col)
      b_tile[ty][tx] = (kb < k && col < n) ? static_cast<U>(b[kb * b_row + col * b_col]) : U{0};
      __syncthreads();
#pragma unroll
      for (int i = 0; i < kTile; ++i) acc += static_cast<U>(a_tile[ty][i] * b_tile[i][tx]);
      __syncthreads();
    }
    if (row < m && col < n) c[row * n + col] = static_cast<T>(acc);
  }
}

template <typename T>
cudaError_t run(int64_t m, int64_t n, int64_t k, const void* a, int64_t a_row, int64_t a_col,
                const void* b, int64_t b_row, int64_t b_col, void* c, cudaStream_t stream) {
  const int64_t col_blocks = (n + kTile - 1) / kTile;
  const int64_t row_blocks = (m + kTile - 1) / kTile;
  if (col_blocks > 0x7FFFFFFF) return cudaErrorInvalidConfiguration;
  const dim3 grid(static_cast<unsigned>(col_blocks),
                  static_cast<unsigned>(row_blocks < kMaxGridY ? row_blocks : kMaxGridY));
  const dim3 block(kTile, kTile);
  matmul_int_kernel<T><<<grid, block, 0, stream>>>(static_cast<const T*>(a), a_row, a_col,
                                                   static_cast<const T*>(b), b_row, b_col,
                                                   static_cast<T*>(c), m, n, k);
  return cudaGetLastError();
}

}  // namespace

cudaError_t launch_matmul_int(xdev_dtype_t dtype, int64_t m, int64_t n, int64_t k, const void* a,
                              int64_t a_row_stride, int64_t a_col_stride, const void* b,
                              int64_t b_row_stride, int64_t b_col_stride, void* c,
                              cudaStream_t stream) {
  if (m <= 0 || n <= 0) return cudaSuccess;
  switch (dtype) {
    case XDEV_DTYPE_INT32:
      return run<int32_t>(m, n, k, a, a_row_stride, a_col_stride, b, b_row_stride, b_col_stride,
                          c, stream);
    case XDEV_DTYPE_INT64:
      return run<int64_t>(m, n, k, a, a_row_stride, a_col_stride, b, b_row_stride, b_col_stride,
                          c, stream);
    default:
      return cudaErrorNotSupported;
  }
}

}  // namespace xdev::cuda
