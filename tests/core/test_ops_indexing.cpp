// The indexing ops (Slice, StridedSlice, Range, OneHot,
// BroadcastTo) through the public SDK, against values written by hand from
// TensorFlow's tf.slice, tf.strided_slice (NumPy's x[...] for the same
// index), tf.range, tf.one_hot and tf.broadcast_to, on the cpu plugin: windows to the end, every mask, negative
// strides (the op's copy) and forward ones (views), scalars, empty windows,
// every dtype, large outputs on the parallel path, refused calls naming the
// op, the axis and the values.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <numeric>
#include <string>
#include <vector>

#include <xdev/strided_slice.hpp>
#include <xdev/xdev.hpp>

#include "op_values.hpp"

namespace {

using xdev::DType;
using xdev::Shape;
using xdev::Tensor;
using namespace xdev_test;

Tensor iota(const Shape& shape) {
  int64_t n = 1;
  for (int k = 0; k < shape.rank(); ++k) n *= shape[static_cast<size_t>(k)];
  std::vector<int64_t> v(static_cast<size_t>(n));
  std::iota(v.begin(), v.end(), 0);
  return xdev::constant(v.data(), DType::kInt64, shape);
}

std::vector<int64_t> values(const Tensor& t) { return t.to_vector<int64_t>(); }

TEST(OpsIndexing, SliceIsAViewOfTheWindow) {
  const Tensor x = iota(Shape{3, 4});  // [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 11]]
  const Tensor w = xdev::slice(x, {1, 1}, {2, -1});
  EXPECT_EQ(w.shape(), (Shape{2, 3}));
  EXPECT_EQ(values(w), (std::vector<int64_t>{5, 6, 7, 9, 10, 11}));
  EXPECT_EQ(w.strides(), (Shape{4, 1}));  // x's: the same storage
  EXPECT_FALSE(w.is_contiguous());
  EXPECT_EQ(values(xdev::slice(x, {0, 2}, {-1, 1})), (std::vector<int64_t>{2, 6, 10}));
  EXPECT_EQ(xdev::slice(x, {3, 0}, {0, -1}).shape(), (Shape{0, 4}));
  EXPECT_EQ(xdev::slice(x, {1, 4}, {2, -1}).shape(), (Shape{2, 0}));
  EXPECT_EQ(values(xdev::slice(iota(Shape{}), {}, {})), (std::vector<int64_t>{0}));
  // A strided input: the window of xᵀ.
  EXPECT_EQ(values(xdev::slice(xdev::transpose(x), {2, 1}, {2, 2})),
            (std::vector<int64_t>{6, 10, 7, 11}));
  // Ops take the view.
  EXPECT_EQ(values(xdev::sum(w, {1})), (std::vector<int64_t>{18, 30}));
}

// A tensor with an empty axis holds 0 bytes; a window of it past its first
// rows is a view of nothing, not an out-of-buffer one.
TEST(OpsIndexing, WindowsOfATensorWithAnEmptyAxisAreViewsOfNothing) {
  const Tensor x = xdev::zeros(Shape{10, 0, 8}, DType::kFloat32);
  const Tensor w = xdev::slice(x, {5, 0, 0}, {5, -1, -1});
  EXPECT_EQ(w.shape(), (Shape{5, 0, 8}));
  EXPECT_TRUE(w.to_vector<float>().empty());
  EXPECT_EQ(xdev::split(x, 2, 0).at(1).shape(), (Shape{5, 0, 8}));
  EXPECT_EQ(xdev::strided_slice(x, {3}, {9}, {2}).shape(), (Shape{3, 0, 8}));
  EXPECT_EQ(xdev::sum(w, {0}).shape(), (Shape{0, 8}));
  EXPECT_EQ(xdev::concat({w, w}, 0).shape(), (Shape{10, 0, 8}));
}

TEST(OpsIndexing, StridedSliceForwardIsAView) {
  const Tensor x = iota(Shape{3, 4});
  // x[:, ::2]
  const Tensor even = xdev::strided_slice(x, {0, 0}, {0, 0}, {1, 2}, 3, 3);
  EXPECT_EQ(even.shape(), (Shape{3, 2}));
  EXPECT_EQ(even.strides(), (Shape{4, 2}));
  EXPECT_EQ(values(even), (std::vector<int64_t>{0, 2, 4, 6, 8, 10}));
  // x[1:, 1:3] with negative bounds: x[-2:, -3:-1]
  EXPECT_EQ(values(xdev::strided_slice(x, {-2, -3}, {3, -1})),
            (std::vector<int64_t>{5, 6, 9, 10}));
  // Out-of-range bounds are clamped; an empty interval gives an empty axis.
  EXPECT_EQ(values(xdev::strided_slice(x, {-100, 2}, {100, 100})),
            (std::vector<int64_t>{2, 3, 6, 7, 10, 11}));
  EXPECT_EQ(xdev::strided_slice(x, {2}, {1}).shape(), (Shape{0, 4}));
  // x[None, :, :]: a new axis (entry 0), the others masked.
  EXPECT_EQ(xdev::strided_slice(x, {0, 0, 0}, {0, 0, 0}, {1, 1, 1}, 6, 6, 0, 1).shape(),
            (Shape{1, 3, 4}));
  // A scalar: no entries, the whole of it.
  EXPECT_EQ(values(xdev::strided_slice(iota(Shape{}), {}, {})), (std::vector<int64_t>{0}));
}

TEST(OpsIndexing, StridedSliceMasks) {
  const Tensor y = iota(Shape{2, 3, 4});
  // y[..., 1:3]
  const Tensor e = xdev::strided_slice(y, {0, 1}, {0, 3}, {1, 1}, 0, 0, 1);
  EXPECT_EQ(e.shape(), (Shape{2, 3, 2}));
  EXPECT_EQ(values(e), (std::vector<int64_t>{1, 2, 5, 6, 9, 10, 13, 14, 17, 18, 21, 22}));
  // y[1, :, -1]: entries 0 and 2 shrink, entry 1 is masked.
  const Tensor s = xdev::strided_slice(y, {1, 0, -1}, {2, 0, 0}, {1, 1, 1}, 2, 2, 0, 0, 5);
  EXPECT_EQ(s.shape(), (Shape{3}));
  EXPECT_EQ(values(s), (std::vector<int64_t>{15, 19, 23}));
  // y[0, ..., None]: a new axis after the ellipsis counts against it.
  const Tensor n = xdev::strided_slice(y, {0, 0, 0}, {0, 0, 0}, {1, 1, 1}, 0, 0, 2, 4, 1);
  EXPECT_EQ(n.shape(), (Shape{3, 4, 1}));
  EXPECT_EQ(values(n), values(xdev::slice(y, {0, 0, 0}, {1, -1, -1})));
  // y[-1] as a scalar index of the first axis.
  EXPECT_EQ(xdev::strided_slice(y, {-1}, {0}, {1}, 0, 0, 0, 0, 1).shape(), (Shape{3, 4}));
}

TEST(OpsIndexing, NegativeStridesCopyInReverse) {
  const Tensor x = iota(Shape{3, 4});
  // x[:, 3:0:-2]
  const Tensor r = xdev::strided_slice(x, {0, 3}, {3, 0}, {1, -2});
  EXPECT_EQ(r.shape(), (Shape{3, 2}));
  EXPECT_EQ(values(r), (std::vector<int64_t>{3, 1, 7, 5, 11, 9}));
  EXPECT_TRUE(r.is_contiguous());  // the op's output, not a view
  // x[::-1, ::-1] by the masks; x[1, ::-1]; x[-1:-5:-1, 0] (bounds clamped).
  EXPECT_EQ(values(xdev::strided_slice(x, {0, 0}, {0, 0}, {-1, -1}, 3, 3)),
            (std::vector<int64_t>{11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0}));
  EXPECT_EQ(values(xdev::strided_slice(x, {1, 0}, {2, 0}, {1, -1}, 2, 2, 0, 0, 1)),
            (std::vector<int64_t>{7, 6, 5, 4}));
  // x[1, 0::-1]: from 0 backwards, one element.
  EXPECT_EQ(values(xdev::strided_slice(x, {1, 0}, {2, 0}, {1, -1}, 0, 2, 0, 0, 1)),
            (std::vector<int64_t>{4}));
  EXPECT_EQ(values(xdev::strided_slice(x, {-1, 0}, {-5, 0}, {-1, 1}, 0, 0, 0, 0, 2)),
            (std::vector<int64_t>{8, 4, 0}));
  // A strided input reversed: (xᵀ)[::-1] ; an empty reversed window.
  EXPECT_EQ(values(xdev::strided_slice(xdev::transpose(x), {0}, {0}, {-1}, 1, 1)),
            (std::vector<int64_t>{3, 7, 11, 2, 6, 10, 1, 5, 9, 0, 4, 8}));
  EXPECT_EQ(xdev::strided_slice(x, {0}, {2}, {-1}).shape(), (Shape{0, 4}));
  // Large: the copy is split over threads.
  const int64_t n = 100003;
  const Tensor big = xdev::strided_slice(iota(Shape{n}), {0}, {0}, {-1}, 1, 1);
  const std::vector<int64_t> v = values(big);
  ASSERT_EQ(v.size(), static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) ASSERT_EQ(v[static_cast<size_t>(i)], n - 1 - i) << i;
  const Tensor rows = xdev::strided_slice(iota(Shape{1000, 300}), {0, 1}, {0, 0}, {-3, 2}, 1, 3);
  EXPECT_EQ(rows.shape(), (Shape{334, 150}));
  const std::vector<int64_t> w = values(rows);
  EXPECT_EQ(w[0], 999 * 300 + 1);
  EXPECT_EQ(w.back(), 0 * 300 + 299);
}

// A step as large as int64 allows on an axis the window crosses once: the
// step is never taken, and neither the view (positive steps) nor the
// kernel's copy (a reversed axis beside it) may multiply it by the axis'
// stride (that overflowed: signed overflow under UBSan, found by fuzz_ops;
// its input is tests/fuzz/corpus/fuzz_ops/stridedslice-step-int64-min).
TEST(OpsIndexing, StridedSliceTakesAnyStepOnAnAxisOfOneElement) {
  const int64_t kMin = std::numeric_limits<int64_t>::min();
  const int64_t kMax = std::numeric_limits<int64_t>::max();
  const Tensor x = iota(Shape{3, 2});  // [[0, 1], [2, 3], [4, 5]], strides (2, 1)
  // x[2:3:2^63-1, :]: a view.
  const Tensor row = xdev::strided_slice(x, {2, 0}, {3, 2}, {kMax, 1});
  EXPECT_EQ(row.shape(), (Shape{1, 2}));
  EXPECT_EQ(values(row), (std::vector<int64_t>{4, 5}));
  // x[2:0:-2^63, ::-1]: the kernel's copy (axis 1 reversed).
  const Tensor back = xdev::strided_slice(x, {2, 1}, {0, 0}, {kMin, -1}, 0, 2);
  EXPECT_EQ(back.shape(), (Shape{1, 2}));
  EXPECT_EQ(values(back), (std::vector<int64_t>{5, 4}));
}

// The rule behind it, window_stride, which the core, the cpu kernel, cuda and
// opencl share. A signed overflow in a constant expression does not compile,
// so these fail the plain build (not only UBSan) if the rule multiplies a step
// that is never taken.
namespace {
using xdev::strided_slice_spec::window_stride;
constexpr int64_t kLowest = std::numeric_limits<int64_t>::min();
constexpr int64_t kHighest = std::numeric_limits<int64_t>::max();
static_assert(window_stride(kLowest, 1, 2) == 2);
static_assert(window_stride(kHighest, 0, 4) == 4);
static_assert(window_stride(-3, 2, 5) == -15);
}  // namespace

TEST(OpsIndexing, EveryDtype) {
  const Tensor x = iota(Shape{2, 3});
  for (DType dtype : {DType::kFloat32, DType::kFloat64, DType::kInt32, DType::kInt64,
                      DType::kBool}) {
    const Tensor t = xdev::cast(x, dtype);
    const Tensor r = xdev::strided_slice(t, {0, 0}, {0, 0}, {-1, -1}, 3, 3);
    const Tensor want = xdev::cast(xdev::constant(std::vector<int64_t>{5, 4, 3, 2, 1, 0},
                                                  Shape{2, 3}), dtype);
    EXPECT_EQ(r.dtype(), dtype);
    EXPECT_EQ(values(xdev::cast(r, DType::kInt64)), values(xdev::cast(want, DType::kInt64)))
        << xdev::to_string(dtype);
    EXPECT_EQ(values(xdev::cast(xdev::slice(t, {1, 1}, {1, 2}), DType::kInt64)),
              values(xdev::cast(xdev::cast(xdev::constant(std::vector<int64_t>{4, 5},
                                                          Shape{1, 2}), dtype),
                                DType::kInt64)))
        << xdev::to_string(dtype);
  }
}

TEST(OpsIndexing, Range) {
  const Tensor r = xdev::range(0, 10, 3);
  EXPECT_EQ(r.dtype(), DType::kFloat32);
  EXPECT_EQ(r.to_vector<float>(), (std::vector<float>{0, 3, 6, 9}));
  EXPECT_EQ(xdev::range(5, 0, -2, DType::kInt32).to_vector<int32_t>(),
            (std::vector<int32_t>{5, 3, 1}));
  EXPECT_EQ(xdev::range(-1.5, 1.0, 0.5, DType::kFloat64).to_vector<double>(),
            (std::vector<double>{-1.5, -1.0, -0.5, 0.0, 0.5}));
  EXPECT_EQ(xdev::range(3, 3).shape(), (Shape{0}));
  EXPECT_EQ(xdev::range(0, 1, 0.3, DType::kFloat64).shape(), (Shape{4}));  // ⌈1 / 0.3⌉
  // int64 beyond int32, on the parallel path: start + i·delta exactly.
  const int64_t start = int64_t{1} << 40;
  const std::vector<int64_t> big =
      xdev::range(static_cast<double>(start), static_cast<double>(start + 300000), 3,
                  DType::kInt64).to_vector<int64_t>();
  ASSERT_EQ(big.size(), 100000u);
  for (size_t i = 0; i < big.size(); ++i) ASSERT_EQ(big[i], start + 3 * static_cast<int64_t>(i));
}

TEST(OpsIndexing, OneHot) {
  const Tensor indices = xdev::constant({0, 2, -1, 3});
  const Tensor h = xdev::one_hot(indices, 3);
  EXPECT_EQ(h.shape(), (Shape{4, 3}));
  EXPECT_EQ(h.dtype(), DType::kFloat32);
  // -1 and 3 are outside [0, 3): rows of off_value (TF).
  EXPECT_EQ(h.to_vector<float>(), (std::vector<float>{1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0}));
  const Tensor t = xdev::one_hot(indices, 3, 5, -1, 0, DType::kInt64);
  EXPECT_EQ(t.shape(), (Shape{3, 4}));
  EXPECT_EQ(values(t), (std::vector<int64_t>{5, -1, -1, -1, -1, -1, -1, -1, -1, 5, -1, -1}));
  // Indices of rank 2, the new axis in the middle; int64 indices; bool output.
  const Tensor m = xdev::constant(std::vector<int64_t>{1, 0, 1, 1}, Shape{2, 2});
  const Tensor b = xdev::one_hot(m, 2, 1, 0, 1, DType::kBool);
  EXPECT_EQ(b.shape(), (Shape{2, 2, 2}));
  EXPECT_EQ(values(xdev::cast(b, DType::kInt64)), (std::vector<int64_t>{0, 1, 1, 0, 0, 0, 1, 1}));
  EXPECT_EQ(xdev::one_hot(xdev::constant(2), 4).to_vector<float>(),
            (std::vector<float>{0, 0, 1, 0}));
  EXPECT_EQ(xdev::one_hot(indices, 0).shape(), (Shape{4, 0}));
  // Large, on the parallel path.
  const Tensor many = xdev::cast(xdev::range(0, 50000, 1, DType::kInt64), DType::kInt32);
  const Tensor sums = xdev::sum(xdev::one_hot(xdev::floor_mod(many, xdev::scalar_like(many, 7)),
                                              7, 1, 0, -1, DType::kInt64), {0});
  EXPECT_EQ(values(sums), (std::vector<int64_t>{7143, 7143, 7143, 7143, 7143, 7143, 7142}));
}

TEST(OpsIndexing, BroadcastToCopy) {
  const Tensor row = xdev::constant(std::vector<int64_t>{1, 2, 3}, Shape{3});
  const Tensor b = xdev::broadcast_to_copy(row, Shape{2, 3});
  EXPECT_EQ(b.shape(), (Shape{2, 3}));
  EXPECT_TRUE(b.is_contiguous());  // stored, unlike the view
  EXPECT_EQ(b.strides(), (Shape{3, 1}));
  EXPECT_EQ(values(b), (std::vector<int64_t>{1, 2, 3, 1, 2, 3}));
  // A column of a transposed input, new leading axes, a scalar, an empty target.
  const Tensor col = xdev::transpose(xdev::constant(std::vector<int64_t>{5, 6}, Shape{1, 2}));
  EXPECT_EQ(values(xdev::broadcast_to_copy(col, Shape{2, 2, 3})),
            (std::vector<int64_t>{5, 5, 5, 6, 6, 6, 5, 5, 5, 6, 6, 6}));
  EXPECT_EQ(values(xdev::broadcast_to_copy(iota(Shape{}), Shape{2})), (std::vector<int64_t>{0, 0}));
  EXPECT_EQ(xdev::broadcast_to_copy(row, Shape{0, 3}).shape(), (Shape{0, 3}));
  for (DType dtype : {DType::kFloat32, DType::kFloat64, DType::kInt32, DType::kInt64,
                      DType::kBool}) {
    const Tensor t = xdev::cast(xdev::constant(std::vector<int64_t>{0, 1}, Shape{2, 1}), dtype);
    EXPECT_EQ(values(xdev::cast(xdev::broadcast_to_copy(t, Shape{2, 2}), DType::kInt64)),
              (std::vector<int64_t>{0, 0, 1, 1}))
        << xdev::to_string(dtype);
  }
  // Large, on the parallel path: the same values as the view.
  const Tensor big = xdev::broadcast_to_copy(iota(Shape{1, 300}), Shape{1000, 300});
  EXPECT_EQ(values(xdev::sum(big, {0})), values(xdev::sum(xdev::broadcast_to(iota(Shape{1, 300}),
                                                                             Shape{1000, 300}),
                                                          {0})));
  EXPECT_EQ(values(big)[999 * 300 + 299], 299);
}

TEST(OpsIndexing, RefusedCallsNameTheOpTheAxisAndTheValues) {
  const Tensor x = xdev::zeros(Shape{3, 4});
  expect_refused([&] { xdev::slice(x, {1}, {1}); }, {"Slice", "begin {1}", "(3, 4)"});
  expect_refused([&] { xdev::slice(x, {2, 0}, {2, 1}); },
                 {"Slice", "axis 0", "begin 2", "size 2", "dimension 3"});
  expect_refused([&] { xdev::slice(x, {0, 5}, {-1, -1}); }, {"Slice", "axis 1", "begin 5"});
  expect_refused([&] { xdev::slice(x, {-1, 0}, {1, 1}); }, {"Slice", "begin", "-1"});
  expect_refused([&] { xdev::slice(x, {0, 0}, {-2, 1}); }, {"Slice", "size", "-2"});
  expect_refused([&] { xdev::slice(Tensor{}, {}, {}); }, {"Slice"});
  expect_refused([&] { xdev::strided_slice(x, {0}, {1}, {0}); },
                 {"StridedSlice", "strides[0] is 0", "(3, 4)"});
  expect_refused([&] { xdev::strided_slice(x, {5}, {6}, {1}, 0, 0, 0, 0, 1); },
                 {"StridedSlice", "begin[0] = 5", "axis 0 of size 3"});
  expect_refused([&] { xdev::strided_slice(x, {-4}, {0}, {1}, 0, 0, 0, 0, 1); },
                 {"StridedSlice", "begin[0] = -4"});
  expect_refused([&] { xdev::strided_slice(x, {0}, {1}, {-1}, 0, 0, 0, 0, 1); },
                 {"StridedSlice", "strides[0] is -1", "shrunk"});
  expect_refused([&] { xdev::strided_slice(x, {0, 0}, {1, 1}, {1, 1}, 0, 0, 3); },
                 {"StridedSlice", "ellipsis_mask 3"});
  expect_refused([&] { xdev::strided_slice(x, {0, 0, 0}, {1, 1, 1}); },
                 {"StridedSlice", "entry 2", "rank 2"});
  expect_refused([&] { xdev::strided_slice(x, {0}, {1, 2}); },
                 {"StridedSlice", "begin {0}", "end {1, 2}", "same number"});
  expect_refused([&] { xdev::strided_slice(x, {0}, {1}, {1}, -1); },
                 {"StridedSlice", "begin_mask", "-1"});
  expect_refused([&] { xdev::strided_slice(xdev::zeros(Shape{1, 1, 1, 1, 1, 1, 1, 1}), {0}, {0},
                                           {1}, 0, 0, 0, 1); },
                 {"StridedSlice", "more than 8 axes"});
  const std::vector<int64_t> many(33, 0);
  expect_refused([&] { xdev::strided_slice(x, many, many, std::vector<int64_t>(33, 1)); },
                 {"StridedSlice", "33 entries", "at most 32"});
  expect_refused([&] { xdev::range(0, 1, 0); }, {"Range", "delta is 0"});
  expect_refused([&] { xdev::range(5, 1, 1); }, {"Range", "start 5", "limit 1", "delta 1"});
  expect_refused([&] { xdev::range(0, -3, 2); }, {"Range", "runs away"});
  expect_refused([&] { xdev::range(0.5, 3, 1, DType::kInt32); },
                 {"Range", "start 0.5", "not an integer", "int32"});
  expect_refused([&] { xdev::range(0, 3e9, 1, DType::kInt32); }, {"Range", "limit 3000000000", "int32"});
  expect_refused([&] { xdev::range(0, 1e300, 1e-300, DType::kFloat64); },
                 {"Range", "elements", "2^62"});
  expect_refused([&] { xdev::range(0, 1, 1, DType::kBool); }, {"Range", "dtype", "bool"});
  expect_refused([&] { xdev::one_hot(xdev::constant({1.0}), 3); }, {"OneHot", "float64"});
  expect_refused([&] { xdev::one_hot(xdev::constant({1}), -1); }, {"OneHot", "depth", "-1"});
  expect_refused([&] { xdev::one_hot(xdev::constant({1}), 3, 1, 0, 2); },
                 {"OneHot", "axis 2", "rank 1"});
  expect_refused([&] { xdev::one_hot(xdev::zeros(Shape{1, 1, 1, 1, 1, 1, 1, 1}, DType::kInt32), 2); },
                 {"OneHot", "rank 8"});
  expect_refused([&] { xdev::one_hot(Tensor{}, 2); }, {"OneHot", "indices"});
  expect_refused([&] { xdev::broadcast_to_copy(x, Shape{3}); },
                 {"BroadcastTo", "(3, 4)", "fewer axes"});
  expect_refused([&] { xdev::broadcast_to_copy(x, Shape{2, 4}); },
                 {"BroadcastTo", "(2, 4)", "dimension 0 is 3, not 1 or 2"});
  expect_refused([&] { xdev::broadcast_to_copy(x, Shape{3, -4}); }, {"BroadcastTo", "shape", "-4"});
  expect_refused([&] { xdev::broadcast_to_copy(Tensor{}, Shape{2}); }, {"BroadcastTo"});
}

}  // namespace
