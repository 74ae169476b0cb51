// Indexing and slicing with NumPy's (and TensorFlow's) basic rules:
//
//   using xdev::Index;
//   xdev::slice(t, {Index(1)});                          // t[1]
//   xdev::slice(t, {Index::range(1, 3)});                // t[1:3]
//   xdev::slice(t, {Index::all(), Index::range({}, {}, 2)});  // t[:, ::2]
//   xdev::slice(t, {Index::ellipsis(), Index::new_axis()});   // t[..., None]
//
// The result is a view of the same memory (no copy, no op), like NumPy's
// basic indexing; xdev tensors are immutable, so it behaves like
// TensorFlow's copy.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <span>
#include <vector>

#include <xdev/export.hpp>
#include <xdev/tensor.hpp>

namespace xdev {

// One entry of an index: an integer (removes its axis; negative counts from
// the end), a range start:stop:step (keeps the axis; bounds as in Python,
// clamped, empty meaning the end), a new axis of size 1 (None), or the
// ellipsis (...: the axes no other entry names).
struct Index {
  enum class Kind { kInteger, kRange, kNewAxis, kEllipsis };
  Kind kind = Kind::kRange;
  int64_t index = 0;
  std::optional<int64_t> start, stop;
  int64_t step = 1;

  Index(int64_t i) : kind(Kind::kInteger), index(i) {}  // NOLINT: t[1]
  static Index range(std::optional<int64_t> start, std::optional<int64_t> stop,
                     int64_t step = 1) {
    Index r(0);
    r.kind = Kind::kRange;
    r.start = start;
    r.stop = stop;
    r.step = step;
    return r;
  }
  static Index all() { return range(std::nullopt, std::nullopt); }
  static Index new_axis() {
    Index r(0);
    r.kind = Kind::kNewAxis;
    return r;
  }
  static Index ellipsis() {
    Index r(0);
    r.kind = Kind::kEllipsis;
    return r;
  }
};

// The view `x[indices...]`. Throws Error(kInvalidArgument) naming the axis for
// an integer out of range, a step of 0, more than one ellipsis, or more
// indices than axes; Error(kUnimplemented) for a negative step (a reversed
// view needs negative strides, which kernels are not promised to take).
XDEV_API Tensor slice(const Tensor& x, std::span<const Index> indices);
inline Tensor slice(const Tensor& x, std::initializer_list<Index> indices) {
  return slice(x, std::span<const Index>(indices.begin(), indices.size()));
}

// Views without a copy or an op, like slice (TensorFlow's ExpandDims,
// Squeeze, BroadcastTo). expand_dims inserts an axis of size 1 at `axis`
// (negative: counted from the end of the result's rank, -1 appends one).
// squeeze removes the axes in `axes` (each must have size 1; negative counts
// from the end), or every axis of size 1 when `axes` is empty. broadcast_to
// gives x the shape `shape` by NumPy's rules (x's axes align with the last
// ones; an axis of size 1 repeats): the repeated axes have stride 0, so all
// their elements are the same memory. Each throws Error(kInvalidArgument)
// naming the function, the shape and the axis or dimension at fault.
XDEV_API Tensor expand_dims(const Tensor& x, int axis);
XDEV_API Tensor squeeze(const Tensor& x, const std::vector<int>& axes = {});
XDEV_API Tensor broadcast_to(const Tensor& x, const Shape& shape);

}  // namespace xdev
