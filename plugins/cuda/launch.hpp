// The boundary between the kernels' host code (ops.cpp, compiled by the host
// C++ compiler) and the CUDA kernels (*.cu, compiled by nvcc). Only plain
// types cross it: layouts are passed to kernels by value.
//
// Every launcher enqueues its work on `stream` and returns the launch status
// (cudaGetLastError after the launch); none synchronizes. The caller has made
// the stream's device current.
#pragma once

#include <cstddef>
#include <cstdint>

#include <cuda_runtime_api.h>

#include <xdev/plugin.h>

namespace xdev::cuda {

inline constexpr int kMaxRank = XDEV_MAX_RANK;

// An elementwise problem over a contiguous output of `count` elements, with
// up to two strided inputs, after its axes were simplified (size-1 axes
// dropped, axes that are contiguous in every operand merged). Strides are in
// elements, 0 on broadcast axes. rank 0 means one element.
struct ElementwiseLayout {
  int32_t rank = 0;
  int32_t inputs = 0;
  int64_t count = 0;
  int64_t shape[kMaxRank] = {};
  int64_t strides[2][kMaxRank] = {};
  // count, and every input's largest offset, are below 2^30: kernels use
  // 32-bit index arithmetic (with room for a grid stride).
  bool small = true;
  // Input k is laid out like the output (contiguous).
  bool contiguous[2] = {false, false};
};

// A reduction: the output (contiguous, `outer_count` elements) is indexed by
// the kept axes in order; each output element reduces `inner_count`
// elements over the reduced axes. Both index spaces are simplified like an
// ElementwiseLayout; strides are the input's, in elements.
struct ReduceLayout {
  int32_t outer_rank = 0;
  int32_t inner_rank = 0;
  int64_t outer_count = 1;
  int64_t inner_count = 1;
  int64_t outer_shape[kMaxRank] = {};
  int64_t outer_strides[kMaxRank] = {};
  int64_t inner_shape[kMaxRank] = {};
  int64_t inner_strides[kMaxRank] = {};
  bool small = true;  // counts and offsets below 2^30: 32-bit indices
};

enum class BinaryOp : int32_t { kAdd, kSub, kMul, kDiv };
enum class UnaryOp : int32_t { kNeg, kRelu };

// out = x op y. For bool, only kAdd (logical or). Inputs may alias `out`
// when they are laid out like it (AddN accumulates in place).
cudaError_t launch_binary(BinaryOp op, xdev_dtype_t dtype, const ElementwiseLayout& layout,
                          const void* x, const void* y, void* out, cudaStream_t stream);

// out = op(x) for f32, f64, i32, i64.
cudaError_t launch_unary(UnaryOp op, xdev_dtype_t dtype, const ElementwiseLayout& layout,
                         const void* x, void* out, cudaStream_t stream);

// out = (to)x with the rules of docs/ops.md (float -> int toward zero,
// anything -> bool is x != 0, bool -> number is 0 or 1).
cudaError_t launch_cast(xdev_dtype_t from, xdev_dtype_t to, const ElementwiseLayout& layout,
                        const void* x, void* out, cudaStream_t stream);

// Strided gather of `element_size`-byte elements (1, 2, 4, 8 or 16) into a
// contiguous `out`.
cudaError_t launch_copy(size_t element_size, const ElementwiseLayout& layout, const void* x,
                        void* out, cudaStream_t stream);

// Fills `count` elements of `element_size` bytes (1, 2, 4 or 8) with the
// bit pattern in the low bytes of `pattern`.
cudaError_t launch_fill(size_t element_size, uint64_t pattern, void* out, int64_t count,
                        cudaStream_t stream);

// docs/ops.md's RandomUniform, bit for bit, for f32 and f64.
cudaError_t launch_random_uniform(xdev_dtype_t dtype, uint64_t seed, double minval, double maxval,
                                  void* out, int64_t count, cudaStream_t stream);

// Sum or Mean over ReduceLayout's inner index space, planned by
// reduce_plan.hpp. `scratch` (device memory, `scratch_bytes`, may be NULL)
// holds the partial results of split reductions; `multiprocessors` sizes
// the grid. inner_count may be 0 (Sum 0, Mean NaN for floats, 0 for
// integers).
cudaError_t launch_reduce(bool mean, xdev_dtype_t dtype, const ReduceLayout& layout,
                          const void* x, void* out, void* scratch, size_t scratch_bytes,
                          int multiprocessors, cudaStream_t stream);
// The scratch launch_reduce would use for this reduction (0: none).
size_t reduce_scratch_bytes(xdev_dtype_t dtype, const ReduceLayout& layout, int multiprocessors);

// Integer C[M,N] = A[M,K] * B[K,N] with wrapping arithmetic, for i32 and
// i64. A(i, k) is at a[i * a_row_stride + k * a_col_stride] (transposes are
// folded into the strides), likewise B; C is contiguous row-major.
cudaError_t launch_matmul_int(xdev_dtype_t dtype, int64_t m, int64_t n, int64_t k, const void* a,
                              int64_t a_row_stride, int64_t a_col_stride, const void* b,
                              int64_t b_row_stride, int64_t b_col_stride, void* c,
                              cudaStream_t stream);

}  // namespace xdev::cuda
