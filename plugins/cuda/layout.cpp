#include "layout.hpp"

#include <algorithm>
#include <utility>
#include <cstdlib>
#include <iterator>

namespace xdev::cuda {
namespace {

// Below this, kernels index in int32: a grid-stride loop adds at most 2^24
// (65536 blocks x 256 threads) to an index below 2^30, so it never
// overflows.
constexpr uint64_t kSmallLimit = uint64_t{1} << 30;

// Largest offset an operand reaches: sum of |stride| * (dim - 1).
uint64_t span_of(int32_t rank, const int64_t* shape, const int64_t* strides) {
  uint64_t span = 0;
  for (int32_t d = 0; d < rank; ++d) {
    if (shape[d] <= 1) continue;
    span += static_cast<uint64_t>(std::llabs(strides[d])) * static_cast<uint64_t>(shape[d] - 1);
  }
  return span;
}

// Drops size-1 axes and merges an axis into the one outside it when it
// steps contiguously across the pair; clears the unused tail.
int32_t simplify(int32_t rank, int64_t* shape, int64_t* strides) {
  int32_t merged = 0;
  for (int32_t d = 0; d < rank; ++d) {
    if (shape[d] == 1) continue;
    if (merged > 0 && strides[merged - 1] == strides[d] * shape[d]) {
      shape[merged - 1] *= shape[d];
      strides[merged - 1] = strides[d];
      continue;
    }
    shape[merged] = shape[d];
    strides[merged] = strides[d];
    ++merged;
  }
  for (int32_t d = merged; d < kMaxRank; ++d) {
    shape[d] = 1;
    strides[d] = 0;
  }
  return merged;
}

}  // namespace

ElementwiseLayout elementwise_layout(const xdev_tensor_t& out, const xdev_tensor_t* const* inputs,
                                     int count) {
  ElementwiseLayout l;
  l.inputs = count;
  l.count = element_count(out);
  // Size-1 axes of the output go (their stride never matters).
  int32_t rank = 0;
  for (int32_t d = 0; d < out.rank; ++d) {
    const int64_t dim = out.shape[d];
    if (dim == 1) continue;
    l.shape[rank] = dim;
    for (int n = 0; n < count; ++n) {
      const xdev_tensor_t& t = *inputs[n];
      const int32_t td = d - (out.rank - t.rank);
      l.strides[n][rank] = (td >= 0 && t.shape[td] != 1) ? t.strides[td] : 0;
    }
    ++rank;
  }
  // Merge an axis into the one outside it when every input steps
  // contiguously across the pair (the output always does).
  int32_t merged = 0;
  for (int32_t d = 0; d < rank; ++d) {
    if (merged > 0) {
      const int32_t outer = merged - 1;
      bool mergeable = true;
      for (int n = 0; n < count; ++n) {
        if (l.strides[n][outer] != l.strides[n][d] * l.shape[d]) mergeable = false;
      }
      if (mergeable) {
        l.shape[outer] *= l.shape[d];
        for (int n = 0; n < count; ++n) l.strides[n][outer] = l.strides[n][d];
        continue;
      }
    }
    l.shape[merged] = l.shape[d];
    for (int n = 0; n < count; ++n) l.strides[n][merged] = l.strides[n][d];
    ++merged;
  }
  l.rank = merged;
  for (int32_t d = merged; d < kMaxRank; ++d) {
    l.shape[d] = 1;
    for (int n = 0; n < kMaxElementwiseInputs; ++n) l.strides[n][d] = 0;
  }
  l.small = static_cast<uint64_t>(l.count) < kSmallLimit;
  for (int n = 0; n < count; ++n) {
    if (span_of(l.rank, l.shape, l.strides[n]) >= kSmallLimit) l.small = false;
    l.contiguous[n] = l.rank == 0 || (l.rank == 1 && l.strides[n][0] == 1);
  }
  return l;
}

void dense_strides(const xdev_tensor_t& t, int64_t (&strides)[kMaxRank]) {
  int64_t stride = 1;
  for (int32_t d = t.rank - 1; d >= 0; --d) {
    strides[d] = stride;
    stride *= t.shape[d];
  }
}

ReduceLayout reduce_layout(const xdev_tensor_t& x, const bool* reduced) {
  ReduceLayout l;
  for (int32_t d = 0; d < x.rank; ++d) {
    if (reduced[d]) {
      l.inner_shape[l.inner_rank] = x.shape[d];
      l.inner_strides[l.inner_rank] = x.strides[d];
      ++l.inner_rank;
    } else {
      l.outer_shape[l.outer_rank] = x.shape[d];
      l.outer_strides[l.outer_rank] = x.strides[d];
      ++l.outer_rank;
    }
  }
  l.inner_count = 1;
  for (int32_t d = 0; d < l.inner_rank; ++d) l.inner_count *= l.inner_shape[d];
  l.outer_count = 1;
  for (int32_t d = 0; d < l.outer_rank; ++d) l.outer_count *= l.outer_shape[d];
  l.inner_rank = simplify(l.inner_rank, l.inner_shape, l.inner_strides);
  l.outer_rank = simplify(l.outer_rank, l.outer_shape, l.outer_strides);
  const uint64_t span = span_of(l.inner_rank, l.inner_shape, l.inner_strides) +
                        span_of(l.outer_rank, l.outer_shape, l.outer_strides);
  l.small = span < kSmallLimit && static_cast<uint64_t>(l.outer_count) < kSmallLimit &&
            static_cast<uint64_t>(l.inner_count) < kSmallLimit;
  return l;
}

LineLayouts line_layouts(const xdev_tensor_t& x, int32_t axis) {
  bool reduced[kMaxRank] = {};
  reduced[axis] = true;
  return line_layouts(x, reduced);
}

LineLayouts line_layouts(const xdev_tensor_t& x, const bool* reduced) {
  int64_t dense[kMaxRank] = {};
  dense_strides(x, dense);
  xdev_tensor_t view = x;
  view.strides = dense;
  view.byte_offset = 0;
  return {reduce_layout(x, reduced), reduce_layout(view, reduced)};
}

WindowView slice_view(const xdev_tensor_t& x, const int64_t* begin) {
  WindowView v;
  for (int32_t k = 0; k < x.rank; ++k) {
    v.offset += begin[k] * x.strides[k];
    v.strides[k] = x.strides[k];
  }
  return v;
}

WindowView strided_slice_view(const xdev_tensor_t& x, const strided_slice_spec::Dense& dense) {
  WindowView v;
  bool empty = false;
  for (int32_t k = 0; k < x.rank; ++k) {
    v.offset += dense.axes[k].begin * x.strides[k];
    empty = empty || dense.axes[k].size == 0;
  }
  if (empty) v.offset = 0;
  for (int32_t j = 0; j < dense.output_rank; ++j) {
    v.strides[j] = dense.view_stride(j, x.strides);
  }
  return v;
}

bool same_shape(const xdev_tensor_t& a, const xdev_tensor_t& b) {
  if (a.rank != b.rank) return false;
  for (int32_t d = 0; d < a.rank; ++d) {
    if (a.shape[d] != b.shape[d]) return false;
  }
  return true;
}

ElementwiseLayout bias_add_layout(const xdev_tensor_t& out, const xdev_tensor_t& value,
                                  const xdev_tensor_t& bias, int32_t channel) {
  int64_t shape[kMaxRank] = {};
  int64_t strides[kMaxRank] = {};
  for (int32_t d = 0; d < value.rank; ++d) {
    shape[d] = d == channel ? bias.shape[0] : 1;
    strides[d] = d == channel ? bias.strides[0] : 0;
  }
  xdev_tensor_t view = bias;
  view.rank = value.rank;
  view.shape = shape;
  view.strides = strides;
  const xdev_tensor_t* inputs[2] = {&value, &view};
  return elementwise_layout(out, inputs, 2);
}

namespace {

// The (row, column) steps of a [rows or 1, cols or 1] operand.
void xent_steps(const xdev_tensor_t& t, int64_t* row, int64_t* col) {
  const bool empty = element_count(t) == 0;
  *row = empty || t.shape[0] == 1 ? 0 : t.strides[0];
  *col = empty || t.shape[1] == 1 ? 0 : t.strides[1];
}

}  // namespace

XentLayout xent_layout(const xdev_tensor_t& features, const xdev_tensor_t& labels, int64_t rows,
                       int64_t cols) {
  XentLayout l;
  l.rows = rows;
  l.cols = cols;
  xent_steps(features, &l.features_row, &l.features_col);
  xent_steps(labels, &l.labels_row, &l.labels_col);
  return l;
}

LayerNormLayout layer_norm_layout(const xdev_tensor_t& x, const xdev_tensor_t& gamma,
                                  const xdev_tensor_t& beta, int32_t axis) {
  bool group[kMaxRank] = {};
  for (int32_t d = axis; d < x.rank; ++d) group[d] = true;
  const LineLayouts lines = line_layouts(x, group);
  bool all[kMaxRank];
  std::fill(std::begin(all), std::end(all), true);
  return {lines.in, lines.out, reduce_layout(gamma, all), reduce_layout(beta, all)};
}

MatrixOperand matrix_operand(const xdev_tensor_t& t) {
  const int64_t rows = t.shape[0], cols = t.shape[1];
  const int64_t s0 = t.strides[0], s1 = t.strides[1];
  MatrixOperand m;
  if ((cols <= 1 || s1 == 1) && (rows <= 1 || s0 >= std::max<int64_t>(cols, 1))) {
    m.ok = true;
    m.ld = rows <= 1 ? std::max<int64_t>(cols, 1) : s0;
  } else if ((rows <= 1 || s0 == 1) && (cols <= 1 || s1 >= std::max<int64_t>(rows, 1))) {
    m.ok = true;
    m.column_major = true;
    m.ld = cols <= 1 ? std::max<int64_t>(rows, 1) : s1;
  }
  return m;
}

void operand_strides(const MatrixOperand& m, bool transposed, int64_t* row, int64_t* col) {
  int64_t r = m.column_major ? 1 : m.ld;  // stored (i, j) at i*r + j*q
  int64_t q = m.column_major ? m.ld : 1;
  if (transposed) std::swap(r, q);
  *row = r;
  *col = q;
}

}  // namespace xdev::cuda
