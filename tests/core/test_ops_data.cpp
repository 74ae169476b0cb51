// The data-movement ops (ConcatV2, Pack, Identity) through the public SDK,
// against values written by hand (TensorFlow's tf.concat, tf.stack,
// tf.identity), on the cpu plugin: every axis, negative axes, strided
// (transposed) inputs, empty inputs, every dtype, large inputs on the
// parallel paths, refused calls naming the op and the value at fault.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

#include <xdev/xdev.hpp>

#include "op_values.hpp"

namespace {

using xdev::DType;
using xdev::Shape;
using xdev::Tensor;
using namespace xdev_test;

Tensor iota(const Shape& shape, int64_t start, DType dtype = DType::kInt64) {
  int64_t n = 1;
  for (int k = 0; k < shape.rank(); ++k) n *= shape[static_cast<size_t>(k)];
  std::vector<int64_t> v(static_cast<size_t>(n));
  std::iota(v.begin(), v.end(), start);
  return xdev::cast(xdev::constant(v, shape), dtype);
}

TEST(OpsData, ConcatAlongEachAxis) {
  const Tensor a = xdev::constant({{1.0, 2.0}, {3.0, 4.0}});
  const Tensor b = xdev::constant({{5.0, 6.0}});
  const Tensor rows = xdev::concat({a, b}, 0);
  EXPECT_EQ(rows.shape(), (Shape{3, 2}));
  EXPECT_EQ(rows.to_vector<double>(), (std::vector<double>{1, 2, 3, 4, 5, 6}));
  const Tensor c = xdev::constant({{7.0}, {8.0}});
  const Tensor cols = xdev::concat({a, c, a}, -1);
  EXPECT_EQ(cols.shape(), (Shape{2, 5}));
  EXPECT_EQ(cols.to_vector<double>(), (std::vector<double>{1, 2, 7, 1, 2, 3, 4, 8, 3, 4}));
  // One input: a copy.
  EXPECT_EQ(xdev::concat({a}, 1).to_vector<double>(), (std::vector<double>{1, 2, 3, 4}));
}

TEST(OpsData, ConcatTakesStridedAndEmptyInputs) {
  // aᵀ is a strided view ([[1, 3], [2, 4]]).
  const Tensor a = xdev::constant({{1, 2}, {3, 4}});
  const Tensor t = xdev::transpose(a);
  const Tensor empty = xdev::zeros(Shape{2, 0}, DType::kInt32);
  const Tensor out = xdev::concat({t, empty, a}, 1);
  EXPECT_EQ(out.shape(), (Shape{2, 4}));
  EXPECT_EQ(out.to_vector<int32_t>(), (std::vector<int32_t>{1, 3, 1, 2, 2, 4, 3, 4}));
  const Tensor none = xdev::concat({empty, empty}, 0);
  EXPECT_EQ(none.shape(), (Shape{4, 0}));
}

TEST(OpsData, StackAlongEachNewAxis) {
  const Tensor x = xdev::constant({1, 2, 3});
  const Tensor y = xdev::constant({4, 5, 6});
  const Tensor s0 = xdev::stack({x, y});
  EXPECT_EQ(s0.shape(), (Shape{2, 3}));
  EXPECT_EQ(s0.to_vector<int32_t>(), (std::vector<int32_t>{1, 2, 3, 4, 5, 6}));
  const Tensor s1 = xdev::stack({x, y}, 1);
  EXPECT_EQ(s1.shape(), (Shape{3, 2}));
  EXPECT_EQ(s1.to_vector<int32_t>(), (std::vector<int32_t>{1, 4, 2, 5, 3, 6}));
  EXPECT_EQ(xdev::stack({x, y}, -1).to_vector<int32_t>(), s1.to_vector<int32_t>());
  // Scalars stack into a vector; a strided input keeps its logical order.
  const Tensor v = xdev::stack({xdev::constant(7.5), xdev::constant(-1.0)});
  EXPECT_EQ(v.shape(), (Shape{2}));
  EXPECT_EQ(v.to_vector<double>(), (std::vector<double>{7.5, -1.0}));
  const Tensor m = xdev::constant({{1, 2}, {3, 4}});
  const Tensor st = xdev::stack({xdev::transpose(m), m}, 2);
  EXPECT_EQ(st.shape(), (Shape{2, 2, 2}));
  EXPECT_EQ(st.to_vector<int32_t>(), (std::vector<int32_t>{1, 1, 3, 2, 2, 3, 4, 4}));
  EXPECT_EQ(xdev::stack({xdev::zeros(Shape{0, 2})}, 1).shape(), (Shape{0, 1, 2}));
}

TEST(OpsData, EveryDtypeIsCopiedBitForBit) {
  const Tensor b = flags({true, false});
  EXPECT_EQ(bools(xdev::concat({b, flags({true})}, 0)), (std::vector<bool>{true, false, true}));
  EXPECT_EQ(bools(xdev::stack({b, b}, 1)), (std::vector<bool>{true, true, false, false}));
  EXPECT_EQ(bools(xdev::identity(b)), (std::vector<bool>{true, false}));
  // NaN and -0.0 keep their bits.
  const Tensor f = f32({-0.0f, std::nanf("")});
  const std::vector<float> got = xdev::concat({f, f}, 0).to_vector<float>();
  ASSERT_EQ(got.size(), 4u);
  EXPECT_TRUE(std::signbit(got[2]));
  EXPECT_TRUE(std::isnan(got[3]));
  const Tensor big = i64({INT64_MIN, INT64_MAX});
  EXPECT_EQ(xdev::stack({big}).to_vector<int64_t>(), (std::vector<int64_t>{INT64_MIN, INT64_MAX}));
}

TEST(OpsData, IdentityIsANewContiguousTensor) {
  const Tensor m = xdev::constant({{1.0, 2.0, 3.0}, {4.0, 5.0, 6.0}});
  const Tensor t = xdev::identity(xdev::transpose(m));
  EXPECT_EQ(t.shape(), (Shape{3, 2}));
  EXPECT_EQ(t.to_vector<double>(), (std::vector<double>{1, 4, 2, 5, 3, 6}));
  EXPECT_EQ(xdev::identity(xdev::zeros(Shape{0, 3})).shape(), (Shape{0, 3}));
}

// Large enough for the copies to split over oneTBB's threads.
TEST(OpsData, LargeInputs) {
  const Tensor a = iota(Shape{600, 300}, 0);
  const Tensor b = iota(Shape{600, 100}, 1000000);
  const Tensor c = xdev::concat({a, xdev::transpose(iota(Shape{100, 600}, 2000000))}, 1);
  const std::vector<int64_t> cv = c.to_vector<int64_t>();
  ASSERT_EQ(c.shape(), (Shape{600, 400}));
  EXPECT_EQ(cv[0], 0);
  EXPECT_EQ(cv[299], 299);
  EXPECT_EQ(cv[300], 2000000);          // column 0 of the transposed input
  EXPECT_EQ(cv[301], 2000000 + 600);
  EXPECT_EQ(cv[400 * 599 + 399], 2000000 + 99 * 600 + 599);
  const Tensor s = xdev::stack({b, b}, 1);
  ASSERT_EQ(s.shape(), (Shape{600, 2, 100}));
  const std::vector<int64_t> sv = s.to_vector<int64_t>();
  EXPECT_EQ(sv[200 * 599 + 100 + 99], 1000000 + 599 * 100 + 99);
}

TEST(OpsData, Tile) {
  const Tensor m = xdev::constant({{1, 2}, {3, 4}});
  const Tensor t = xdev::tile(m, {2, 3});
  EXPECT_EQ(t.shape(), (Shape{4, 6}));
  EXPECT_EQ(t.to_vector<int32_t>(),
            (std::vector<int32_t>{1, 2, 1, 2, 1, 2, 3, 4, 3, 4, 3, 4,
                                  1, 2, 1, 2, 1, 2, 3, 4, 3, 4, 3, 4}));
  // A strided input; a zero multiple empties its axis; a scalar tiles by {}.
  EXPECT_EQ(xdev::tile(xdev::transpose(m), {1, 2}).to_vector<int32_t>(),
            (std::vector<int32_t>{1, 3, 1, 3, 2, 4, 2, 4}));
  EXPECT_EQ(xdev::tile(m, {0, 2}).shape(), (Shape{0, 4}));
  EXPECT_EQ(xdev::tile(xdev::constant(2.5), {}).to_vector<double>(), (std::vector<double>{2.5}));
  EXPECT_EQ(bools(xdev::tile(flags({true, false}), {2})), (std::vector<bool>{true, false, true, false}));
  // Large: rows split over threads.
  const Tensor big = xdev::tile(iota(Shape{1000, 3}, 0), {2, 50});
  ASSERT_EQ(big.shape(), (Shape{2000, 150}));
  const std::vector<int64_t> v = big.to_vector<int64_t>();
  EXPECT_EQ(v[150 * 1999 + 149], 999 * 3 + 2);
  EXPECT_EQ(v[150 * 1000 + 4], 1);
}

TEST(OpsData, Pad) {
  const Tensor m = xdev::constant({{1, 2}, {3, 4}});
  const Tensor p = xdev::pad(m, {{1, 0}, {0, 2}}, -1.0);
  EXPECT_EQ(p.shape(), (Shape{3, 4}));
  EXPECT_EQ(p.to_vector<int32_t>(), (std::vector<int32_t>{-1, -1, -1, -1, 1, 2, -1, -1, 3, 4, -1, -1}));
  // The default value is 0; it converts like cast (2.7 → 2 for integers).
  EXPECT_EQ(xdev::pad(xdev::transpose(m), {{0, 1}, {1, 0}}).to_vector<int32_t>(),
            (std::vector<int32_t>{0, 1, 3, 0, 2, 4, 0, 0, 0}));
  EXPECT_EQ(xdev::pad(xdev::constant({7}), {{1, 1}}, 2.7).to_vector<int32_t>(),
            (std::vector<int32_t>{2, 7, 2}));
  EXPECT_EQ(bools(xdev::pad(flags({false}), {{1, 0}}, 1.0)), (std::vector<bool>{true, false}));
  // NaN padding for floats; an empty input gives only padding; a scalar pads by {}.
  const std::vector<double> nan = xdev::pad(f64({1.0}), {{0, 1}}, kNan).to_vector<double>();
  EXPECT_EQ(nan[0], 1.0);
  EXPECT_TRUE(std::isnan(nan[1]));
  EXPECT_EQ(xdev::pad(xdev::zeros(Shape{0, 2}), {{1, 1}, {0, 0}}, 5.0).to_vector<float>(),
            (std::vector<float>{5, 5, 5, 5}));
  EXPECT_EQ(xdev::pad(xdev::constant(3.0), {}).to_vector<double>(), (std::vector<double>{3.0}));
  const Tensor big = xdev::pad(iota(Shape{600, 300}, 0), {{2, 3}, {1, 1}}, 9.0);
  ASSERT_EQ(big.shape(), (Shape{605, 302}));
  const std::vector<int64_t> v = big.to_vector<int64_t>();
  EXPECT_EQ(v[0], 9);
  EXPECT_EQ(v[302 * 2 + 1], 0);
  EXPECT_EQ(v[302 * 601 + 300], 599 * 300 + 299);
  EXPECT_EQ(v[302 * 604 + 301], 9);
}

TEST(OpsData, Gather) {
  const Tensor p = xdev::constant({{1, 2, 3}, {4, 5, 6}});
  const Tensor rows = xdev::gather(p, xdev::constant(std::vector<int64_t>{1, 0, 1}, Shape{3}));
  EXPECT_EQ(rows.shape(), (Shape{3, 3}));
  EXPECT_EQ(rows.to_vector<int32_t>(), (std::vector<int32_t>{4, 5, 6, 1, 2, 3, 4, 5, 6}));
  // int32 indices of rank 2 along the last axis; a scalar index drops the axis.
  const Tensor cols = xdev::gather(p, xdev::constant({{2, 0}, {1, 1}}), -1);
  EXPECT_EQ(cols.shape(), (Shape{2, 2, 2}));
  EXPECT_EQ(cols.to_vector<int32_t>(), (std::vector<int32_t>{3, 1, 2, 2, 6, 4, 5, 5}));
  EXPECT_EQ(xdev::gather(p, xdev::constant(2), 1).to_vector<int32_t>(),
            (std::vector<int32_t>{3, 6}));
  // A strided params (made contiguous by the core), bool, empty indices.
  EXPECT_EQ(xdev::gather(xdev::transpose(p), xdev::constant({2})).to_vector<int32_t>(),
            (std::vector<int32_t>{3, 6}));
  EXPECT_EQ(bools(xdev::gather(flags({true, false}), xdev::constant({1, 1, 0}))),
            (std::vector<bool>{false, false, true}));
  EXPECT_EQ(xdev::gather(p, xdev::zeros(Shape{0}, DType::kInt32)).shape(), (Shape{0, 3}));
  const Tensor big = xdev::gather(iota(Shape{1000, 200}, 0), xdev::constant({999, 0, 500}));
  EXPECT_EQ(big.to_vector<int64_t>()[200 * 2 + 7], 500 * 200 + 7);
}

TEST(OpsData, GatherRefusesAnIndexOutOfRange) {
  const Tensor p = xdev::constant({{1, 2, 3}, {4, 5, 6}});
  for (int64_t bad : {int64_t{2}, int64_t{-1}, INT64_MAX}) {
    const Tensor indices = xdev::constant(std::vector<int64_t>{0, bad}, Shape{2});
    expect_refused([&] { xdev::gather(p, indices).to_vector<int32_t>(); },
                   {"GatherV2", "indices[1] = " + std::to_string(bad), "[0, 2)"});
  }
  expect_refused([&] { xdev::gather(p, xdev::constant({1.0})); }, {"GatherV2", "indices", "float64"});
  expect_refused([&] { xdev::gather(p, xdev::constant({0}), 2); }, {"GatherV2", "axis 2"});
  expect_refused([&] { xdev::gather(xdev::constant(1), xdev::constant({0})); }, {"GatherV2", "axis 0"});
  expect_refused([&] { xdev::gather(xdev::zeros(Shape{2, 1, 1, 1, 1, 1, 1, 1}),
                                    xdev::zeros(Shape{1, 1}, DType::kInt32)); },
                 {"GatherV2", "rank 9"});
}

// ExpandDims, Squeeze, BroadcastTo: views of the same storage, no op run.
TEST(OpsData, ViewsShareTheStorage) {
  const Tensor m = xdev::constant({{1, 2, 3}, {4, 5, 6}});
  const Tensor e0 = xdev::expand_dims(m, 0);
  EXPECT_EQ(e0.shape(), (Shape{1, 2, 3}));
  EXPECT_EQ(xdev::expand_dims(m, -1).shape(), (Shape{2, 3, 1}));
  EXPECT_EQ(xdev::expand_dims(m, 1).shape(), (Shape{2, 1, 3}));
  EXPECT_EQ(xdev::expand_dims(xdev::constant(1.0), 0).shape(), (Shape{1}));
  EXPECT_EQ(xdev::expand_dims(m, 1).to_vector<int32_t>(), m.to_vector<int32_t>());
  EXPECT_TRUE(xdev::expand_dims(m, 2).is_contiguous());
  const Tensor s = xdev::squeeze(xdev::constant(std::vector<int>{7, 8}, Shape{1, 2, 1}));
  EXPECT_EQ(s.shape(), (Shape{2}));
  EXPECT_EQ(s.to_vector<int32_t>(), (std::vector<int32_t>{7, 8}));
  EXPECT_EQ(xdev::squeeze(xdev::zeros(Shape{1, 2, 1}), {-1}).shape(), (Shape{1, 2}));
  EXPECT_EQ(xdev::squeeze(xdev::zeros(Shape{1})).shape(), (Shape{}));
  const Tensor b = xdev::broadcast_to(xdev::constant({1, 2, 3}), Shape{2, 3});
  EXPECT_EQ(b.shape(), (Shape{2, 3}));
  EXPECT_EQ(b.strides(), (Shape{0, 1}));
  EXPECT_EQ(b.to_vector<int32_t>(), (std::vector<int32_t>{1, 2, 3, 1, 2, 3}));
  const Tensor col = xdev::broadcast_to(xdev::transpose(xdev::constant({{5, 6}})), Shape{2, 2, 3});
  EXPECT_EQ(col.to_vector<int32_t>(), (std::vector<int32_t>{5, 5, 5, 6, 6, 6, 5, 5, 5, 6, 6, 6}));
  // Ops take the views (a stride-0 input included).
  EXPECT_EQ(xdev::sum(b, {0}).to_vector<int32_t>(), (std::vector<int32_t>{2, 4, 6}));
  EXPECT_EQ(xdev::concat({b, m}, 0).to_vector<int32_t>(),
            (std::vector<int32_t>{1, 2, 3, 1, 2, 3, 1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(xdev::broadcast_to(xdev::zeros(Shape{1, 3}), Shape{0, 3}).shape(), (Shape{0, 3}));
}

TEST(OpsData, RefusedCallsNameTheOpAndTheValue) {
  const Tensor a = xdev::zeros(Shape{2, 3});
  const Tensor b = xdev::zeros(Shape{2, 4});
  expect_refused([&] { xdev::concat({a, b}, 0); }, {"ConcatV2", "input 1", "(2, 4)", "dimension 1"});
  expect_refused([&] { xdev::concat({a, xdev::zeros(Shape{2})}, 0); }, {"ConcatV2", "input 1", "rank 1"});
  expect_refused([&] { xdev::concat({a, a}, 2); }, {"ConcatV2", "axis 2"});
  expect_refused([&] { xdev::concat({a, a}, -3); }, {"ConcatV2", "axis -3"});
  expect_refused([&] { xdev::concat({xdev::constant(1.0)}, 0); }, {"ConcatV2", "axis 0", "rank 0"});
  expect_refused([&] { xdev::concat({}, 0); }, {"ConcatV2", "at least 1 input", "got 0"});
  expect_refused([&] { xdev::concat({a, xdev::zeros(Shape{2, 3}, DType::kInt32)}, 0); },
                 {"ConcatV2", "float32", "int32"});
  // Empty tensors may have huge dimensions: their sum along the axis is checked.
  const Tensor huge = xdev::zeros(Shape{int64_t{1} << 62, 0});
  expect_refused([&] { xdev::concat({huge, huge}, 0); }, {"ConcatV2", "overflow", "input 1"});
  expect_refused([&] { xdev::stack({a, b}); }, {"Pack", "input 1", "(2, 4)"});
  expect_refused([&] { xdev::stack({a}, 3); }, {"Pack", "axis 3"});
  expect_refused([&] { xdev::stack({a}, -4); }, {"Pack", "axis -4"});
  expect_refused([&] { xdev::stack({}); }, {"Pack", "at least 1 input"});
  expect_refused([&] { xdev::stack({xdev::zeros(Shape{1, 1, 1, 1, 1, 1, 1, 1})}); },
                 {"Pack", "rank 8"});
  expect_refused([&] { xdev::identity(Tensor{}); }, {"Identity"});
  expect_refused([&] { xdev::expand_dims(a, 3); }, {"ExpandDims", "axis 3", "(2, 3)"});
  expect_refused([&] { xdev::expand_dims(a, -4); }, {"ExpandDims", "axis -4"});
  expect_refused([&] { xdev::expand_dims(xdev::zeros(Shape{1, 1, 1, 1, 1, 1, 1, 1}), 0); },
                 {"ExpandDims", "at most 8"});
  expect_refused([&] { xdev::squeeze(a, {0}); }, {"Squeeze", "axis 0", "(2, 3)", "size 2"});
  expect_refused([&] { xdev::squeeze(a, {2}); }, {"Squeeze", "axis 2"});
  expect_refused([&] { xdev::broadcast_to(a, Shape{3}); }, {"BroadcastTo", "(2, 3)", "fewer axes"});
  expect_refused([&] { xdev::broadcast_to(a, Shape{2, 4}); },
                 {"BroadcastTo", "(2, 4)", "dimension 1 is 3"});
  expect_refused([&] { xdev::broadcast_to(Tensor{}, Shape{2}); }, {"BroadcastTo"});
  expect_refused([&] { xdev::tile(a, {2}); }, {"Tile", "multiples {2}", "(2, 3)"});
  expect_refused([&] { xdev::tile(a, {1, -1}); }, {"Tile", "multiples", "-1"});
  expect_refused([&] { xdev::tile(xdev::zeros(Shape{int64_t{1} << 62, 0}), {4, 1}); },
                 {"Tile", "dimension 0", "overflows"});
  expect_refused([&] { xdev::pad(a, {{1, 1}}); }, {"PadV2", "paddings {1, 1}", "(2, 3)"});
  expect_refused([&] { xdev::pad(a, {{0, 0}, {-1, 0}}); }, {"PadV2", "paddings", "-1"});
  expect_refused([&] { xdev::pad(xdev::zeros(Shape{0, INT64_MAX}), {{0, 0}, {0, 1}}); },
                 {"PadV2", "dimension 1", "overflows"});
}

}  // namespace
