// The kernel tables of the files that split ops.cpp's kernels by concept;
// ops.cpp's kernel_list() joins them to its own.
#pragma once

#include <xdev/plugin.h>

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "blas.hpp"

namespace xdev::cuda {

struct KernelTable {
  const xdev_kernel_info_t* items;
  size_t count;
};

// ops_math.cpp: elementwise math, comparisons, logic, Select, ClipByValue.
KernelTable math_kernels() noexcept;
// ops_reduce.cpp: Max ... LogSumExp, ArgMax, ArgMin, CumSum, Softmax, LogSoftmax.
KernelTable reduce_kernels() noexcept;
// ops_movement.cpp: ConcatV2, Pack, Identity, Tile, PadV2, GatherV2.
KernelTable movement_kernels() noexcept;
// ops_nn.cpp: BiasAdd, SoftmaxCrossEntropyWithLogits, LayerNorm.
KernelTable nn_kernels() noexcept;
// ops_indexing.cpp: Slice, StridedSlice, BroadcastTo, Range, OneHot.
KernelTable indexing_kernels() noexcept;
// ops_window.cpp: Conv2D and its gradients, MaxPool, AvgPool and theirs.
KernelTable window_kernels() noexcept;

// Helpers of ops.cpp the other files share.
class Call;

// A strided copy of `x` into the contiguous `out` of the same dtype and a
// shape x broadcasts to (NumPy: x aligned to the right, its axes of size 1
// repeated): cudaMemcpyAsync when x is laid out like out, else a strided
// gather. Copy, Identity, AddN of one input, Slice, StridedSlice, BroadcastTo.
cudaError_t copy_into(const xdev_tensor_t& x, const xdev_tensor_t& out, cudaStream_t stream);

// A row-major operand of a product: op(m)[i][j] = p[i * ld + j], or
// p[j * ld + i] when transposed.
struct RowMajor {
  const void* p;
  int64_t ld;
  bool trans;
};

// Row-major c[m, n] (row stride ldc) = op(a)[m, k] · op(b)[k, n] + beta · c
// in float32 or float64 through cuBLAS (its 64-bit API past 2^31); beta 0
// never reads c. Nothing for m or n of 0; k must be > 0. A cuBLAS failure
// is a status naming the op, the shapes and the device.
xdev_status_t* row_major_gemm(Call& call, const Blas* blas, cublasHandle_t handle,
                              xdev_dtype_t dtype, int64_t m, int64_t n, int64_t k, RowMajor a,
                              RowMajor b, double beta, void* c, int64_t ldc);
// ops_batched.cpp: BatchMatMulV2, TensorScatterAdd.
KernelTable batched_kernels() noexcept;

}  // namespace xdev::cuda
