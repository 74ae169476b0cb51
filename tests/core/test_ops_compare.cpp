// The comparison and logic ops through the public SDK, against values
// computed by hand (NumPy / TensorFlow semantics, docs/ops.md), on the cpu
// plugin: results, NaN, broadcasting, strided inputs, refused calls.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <xdev/xdev.hpp>

#include "op_values.hpp"

namespace {

using xdev::DType;
using xdev::Shape;
using xdev::Tensor;
using namespace xdev_test;

TEST(OpsCompare, ComparisonsOfFloatsWithNaN) {
  const Tensor x = f64({1.0, 2.0, kNan, -0.0, kInf});
  const Tensor y = f64({2.0, 2.0, kNan, 0.0, kInf});
  EXPECT_EQ(bools(xdev::equal(x, y)), (std::vector<bool>{false, true, false, true, true}));
  EXPECT_EQ(bools(xdev::not_equal(x, y)), (std::vector<bool>{true, false, true, false, false}));
  EXPECT_EQ(bools(xdev::less(x, y)), (std::vector<bool>{true, false, false, false, false}));
  EXPECT_EQ(bools(xdev::less_equal(x, y)), (std::vector<bool>{true, true, false, true, true}));
  EXPECT_EQ(bools(xdev::greater(x, y)), (std::vector<bool>{false, false, false, false, false}));
  EXPECT_EQ(bools(xdev::greater_equal(x, y)), (std::vector<bool>{false, true, false, true, true}));
}

TEST(OpsCompare, ComparisonsOfIntegersAndBoolsBroadcast) {
  // int64 values past 2^53 compare exactly; [2, 1] against [3] broadcasts to [2, 3].
  const int64_t big = (int64_t{1} << 53) + 1;
  EXPECT_EQ(bools(xdev::equal(i64({big}), i64({big - 1}))), (std::vector<bool>{false}));
  EXPECT_EQ(bools(xdev::less(i64({big - 1}), i64({big}))), (std::vector<bool>{true}));
  const Tensor col = xdev::reshape(i64({1, 3}), Shape{2, 1});
  const Tensor row = i64({0, 1, 3});
  const Tensor r = xdev::greater_equal(col, row);
  EXPECT_EQ(r.shape(), (Shape{2, 3}));
  EXPECT_EQ(bools(r), (std::vector<bool>{true, true, false, true, true, true}));
  EXPECT_EQ(bools(xdev::equal(flags({true, false, true}), flags({true, true, false}))),
            (std::vector<bool>{true, false, false}));
  EXPECT_EQ(bools(xdev::not_equal(flags({true, false}), flags({true}))),
            (std::vector<bool>{false, true}));
}

TEST(OpsCompare, Logic) {
  const Tensor a = flags({true, true, false, false});
  const Tensor b = flags({true, false, true, false});
  EXPECT_EQ(bools(xdev::logical_and(a, b)), (std::vector<bool>{true, false, false, false}));
  EXPECT_EQ(bools(xdev::logical_or(a, b)), (std::vector<bool>{true, true, true, false}));
  EXPECT_EQ(bools(xdev::logical_not(a)), (std::vector<bool>{false, false, true, true}));
  EXPECT_EQ(bools(xdev::logical_and(a, flags({true}))), (std::vector<bool>{true, true, false, false}));
}

TEST(OpsCompare, IsNanAndIsFinite) {
  const Tensor x = f64({0.0, kNan, kInf, -kInf, -1.5});
  EXPECT_EQ(bools(xdev::is_nan(x)), (std::vector<bool>{false, true, false, false, false}));
  EXPECT_EQ(bools(xdev::is_finite(x)), (std::vector<bool>{true, false, false, false, true}));
  const Tensor f = xdev::constant(std::vector<float>{1.0f, std::nanf("")}, Shape{2});
  EXPECT_EQ(bools(xdev::is_nan(f)), (std::vector<bool>{false, true}));
}

TEST(OpsCompare, SelectBroadcastsItsThreeInputs) {
  // condition [2, 1], x [3], y scalar -> [2, 3].
  const Tensor cond = xdev::reshape(flags({true, false}), Shape{2, 1});
  const Tensor x = f64({1.0, 2.0, 3.0});
  const Tensor y = xdev::constant(-1.0);
  const Tensor r = xdev::select(cond, x, y);
  EXPECT_EQ(r.shape(), (Shape{2, 3}));
  EXPECT_EQ(r.dtype(), DType::kFloat64);
  EXPECT_EQ(r.to_vector<double>(), (std::vector<double>{1, 2, 3, -1, -1, -1}));
  // Integers, element by element.
  EXPECT_EQ(xdev::select(flags({false, true}), i64({1, 2}), i64({10, 20})).to_vector<int64_t>(),
            (std::vector<int64_t>{10, 2}));
}

TEST(OpsCompare, ClipByValue) {
  const Tensor x = f64({-5.0, 0.5, 7.0, kNan});
  const Tensor r = xdev::clip_by_value(x, xdev::constant(0.0), xdev::constant(1.0));
  const std::vector<double> got = r.to_vector<double>();
  EXPECT_EQ(got[0], 0.0);
  EXPECT_EQ(got[1], 0.5);
  EXPECT_EQ(got[2], 1.0);
  EXPECT_TRUE(std::isnan(got[3]));
  // Per-element bounds, integers; where min > max the max wins.
  EXPECT_EQ(xdev::clip_by_value(i64({-3, 4, 9}), i64({0, 5, 3}), i64({2, 6, 1}))
                .to_vector<int64_t>(),
            (std::vector<int64_t>{0, 5, 1}));
}

TEST(OpsCompare, StridedInputs) {
  // A transposed view runs the strided path of the kernels.
  const Tensor m = xdev::constant({{1.0, 2.0, 3.0}, {4.0, 5.0, 6.0}});
  const Tensor t = xdev::transpose(m);  // [[1, 4], [2, 5], [3, 6]]
  EXPECT_EQ(bools(xdev::less(t, f64({2.5, 4.5}))),
            (std::vector<bool>{true, true, true, false, false, false}));
  EXPECT_EQ(xdev::clip_by_value(t, xdev::constant(2.0), xdev::constant(5.0)).to_vector<double>(),
            (std::vector<double>{2, 4, 2, 5, 3, 5}));
  EXPECT_EQ(xdev::select(xdev::greater(t, xdev::constant(3.0)), t, xdev::constant(0.0))
                .to_vector<double>(),
            (std::vector<double>{0, 4, 0, 5, 0, 6}));
}

TEST(OpsCompare, RefusedCallsNameTheOpAndTheDtype) {
  const Tensor b = flags({true});
  const Tensor d = f64({1.0});
  expect_refused([&] { (void)xdev::less(b, b); }, {"Less", "bool"});
  expect_refused([&] { (void)xdev::greater_equal(b, b); }, {"GreaterEqual", "bool"});
  expect_refused([&] { (void)xdev::equal(d, i64({1})); }, {"Equal", "float64", "int64"});
  expect_refused([&] { (void)xdev::logical_and(d, d); }, {"LogicalAnd", "float64"});
  expect_refused([&] { (void)xdev::logical_not(i64({1})); }, {"LogicalNot", "int64"});
  expect_refused([&] { (void)xdev::is_nan(i64({1})); }, {"IsNan", "int64"});
  expect_refused([&] { (void)xdev::is_finite(b); }, {"IsFinite", "bool"});
  expect_refused([&] { (void)xdev::select(d, d, d); }, {"Select", "condition", "float64"});
  expect_refused([&] { (void)xdev::select(b, d, i64({1})); }, {"Select", "float64", "int64"});
  expect_refused([&] { (void)xdev::clip_by_value(b, b, b); }, {"ClipByValue", "bool"});
  expect_refused([&] { (void)xdev::equal(f64({1, 2}), f64({1, 2, 3})); },
                 {"Equal", "cannot be broadcast"});
}

}  // namespace
