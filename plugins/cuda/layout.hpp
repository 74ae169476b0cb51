// From the tensors of a kernel call to the simplified layouts the kernels
// take (launch.hpp). Host code; tests/cuda checks it without a GPU.
#pragma once

#include <cstdint>

#include <xdev/plugin.h>
#include <xdev/strided_slice.hpp>

#include "launch.hpp"

namespace xdev::cuda {

// Number of elements of a tensor view.
int64_t element_count(const xdev_tensor_t& t);
// Row-major dense (axes of size 1 may have any stride; an empty view is).
bool is_contiguous(const xdev_tensor_t& t);

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
// The same over the axes d with reduced[d] (LayerNorm's group of axes).
LineLayouts line_layouts(const xdev_tensor_t& x, const bool* reduced);

// The window Slice or StridedSlice copies, as a view of x with the output's
// shape: the element offset of its first element (0 for an empty window)
// and a stride per output axis (x's stride times the step; 0 for a new
// axis of size 1).
struct WindowView {
  int64_t offset = 0;
  int64_t strides[kMaxRank] = {};
};
// Slice: `begin` per axis of x, steps of 1, the output's axes are x's.
WindowView slice_view(const xdev_tensor_t& x, const int64_t* begin);
// StridedSlice: the dense form of its attributes (xdev/strided_slice.hpp)
// for x's shape.
WindowView strided_slice_view(const xdev_tensor_t& x, const strided_slice_spec::Dense& dense);

// Whether a and b have one shape.
bool same_shape(const xdev_tensor_t& a, const xdev_tensor_t& b);

// BiasAdd: the elementwise layout of value + bias into the dense `out` of
// value's shape, bias (rank 1) broadcast along every axis but `channel`
// (stride 0 there, its own stride along `channel`).
ElementwiseLayout bias_add_layout(const xdev_tensor_t& out, const xdev_tensor_t& value,
                                  const xdev_tensor_t& bias, int32_t channel);

// SoftmaxCrossEntropyWithLogits: features and labels (rank 2, each
// dimension equal to [rows, cols] or 1) read through their strides, a
// step of 0 on a dimension of 1 (broadcast) and for an input without
// elements (never read).
XentLayout xent_layout(const xdev_tensor_t& features, const xdev_tensor_t& labels, int64_t rows,
                       int64_t cols);

// LayerNorm: x's lines (axes before `axis`) and groups (axes from `axis`
// on), the dense output's, and gamma's and beta's (x's shape from `axis`
// on, every axis a group axis).
LayerNormLayout layer_norm_layout(const xdev_tensor_t& x, const xdev_tensor_t& gamma,
                                  const xdev_tensor_t& beta, int32_t axis);

// A rank-2 operand as BLAS sees it: row-major with leading dimension `ld`
// (element (i, j) at i * ld + j) or column-major (at i + j * ld); ok is
// false when it is neither.
struct MatrixOperand {
  bool ok = false;
  bool column_major = false;
  int64_t ld = 0;
};
MatrixOperand matrix_operand(const xdev_tensor_t& t);
// The element strides of op(t) for the integer kernel (launch_matmul_int):
// element (i, j) of op(t) at i * row + j * col, op the transpose or not.
void operand_strides(const MatrixOperand& m, bool transposed, int64_t* row, int64_t* col);

}  // namespace xdev::cuda
