// The kernel tables of the files that split ops.cpp's kernels by concept;
// ops.cpp's kernel_list() joins them to its own.
#pragma once

#include <xdev/plugin.h>

#include <cstddef>

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
// ops_batched.cpp: BatchMatMulV2, TensorScatterAdd.
KernelTable batched_kernels() noexcept;

}  // namespace xdev::cuda
