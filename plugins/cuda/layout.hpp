// From the tensors of a kernel call to the simplified layouts the kernels
// take (launch.hpp). Host code; tests/cuda checks it without a GPU.
#pragma once

#include <cstdint>

#include <xdev/plugin.h>

#include "launch.hpp"

namespace xdev::cuda {

// Number of elements of a tensor view.
int64_t element_count(const xdev_tensor_t& t);

// The elementwise layout of `count` (1 to kMaxElementwiseInputs) inputs against the contiguous
// output `out`. An input of a lower rank is aligned to the right (NumPy);
// its missing axes, and its axes of size 1, broadcast (stride 0).
ElementwiseLayout elementwise_layout(const xdev_tensor_t& out, const xdev_tensor_t* const* inputs,
                                     int count);

// The row-major strides (in elements) of a tensor of t's shape.
void dense_strides(const xdev_tensor_t& t, int64_t (&strides)[kMaxRank]);

// The reduction of `x` over the axes d with reduced[d] (kMaxRank entries).
ReduceLayout reduce_layout(const xdev_tensor_t& x, const bool* reduced);

// An op along `axis` whose dense output has x's shape (Softmax, CumSum):
// the reduction layouts over that axis of the input and of the output.
// Both enumerate the lines (kept coordinates) and the axis in the same
// row-major order, so line i and element r are the same logical element
// in both, whatever axes each simplified.
struct LineLayouts {
  ReduceLayout in;
  ReduceLayout out;
};
LineLayouts line_layouts(const xdev_tensor_t& x, int32_t axis);

// A rank-2 operand as BLAS sees it: row-major with leading dimension `ld`
// (element (i, j) at i * ld + j) or column-major (at i + j * ld); ok is
// false when it is neither.
struct MatrixOperand {
  bool ok = false;
  bool column_major = false;
  int64_t ld = 0;
};
MatrixOperand matrix_operand(const xdev_tensor_t& t);

}  // namespace xdev::cuda
