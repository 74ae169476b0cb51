// The NN ops of issue 13 through the public SDK, against values computed by
// hand (TensorFlow semantics, docs/ops.md), on the cpu plugin: Softmax and
// LogSoftmax along any axis, large logits, NaN, empty lines, strided views,
// the parallel path, and refused calls.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <xdev/compensated_sum.hpp>
#include <xdev/xdev.hpp>

#include "op_values.hpp"

namespace {

using xdev::DType;
using xdev::Shape;
using xdev::Tensor;
using namespace xdev_test;

// softmax of one row, in double.
std::vector<double> softmax_row(const std::vector<double>& x) {
  double top = -kInf;
  for (double v : x) top = std::max(top, v);
  double sum = 0.0;
  for (double v : x) sum += std::exp(v - top);
  std::vector<double> out;
  for (double v : x) out.push_back(std::exp(v - top) / sum);
  return out;
}

TEST(OpsNn, SoftmaxOfRowsSumsToOne) {
  const Tensor logits = xdev::constant({{1.0, 2.0, 3.0}, {-1.0, 0.0, 1000.0}});
  const std::vector<double> got = xdev::softmax(logits).to_vector<double>();
  const std::vector<double> r0 = softmax_row({1, 2, 3});
  for (size_t i = 0; i < 3; ++i) EXPECT_NEAR(got[i], r0[i], 1e-15);
  // A logit of 1000 does not overflow: the row is (0, 0, 1).
  EXPECT_EQ(got[3], 0.0);
  EXPECT_EQ(got[4], 0.0);
  EXPECT_EQ(got[5], 1.0);
}

// Σ e^(x - max) is a compensated sum (docs/ops.md): on a GPU a float64 line
// of 100000 elements differed from the cpu plugin's plain running sum by
// ~300 ulp. Here 100000 terms of ~1e-17 each vanish when added one by one to
// 1.0 (each is below half an ulp of it): a plain sum gives softmax[0] = 1.0,
// about 4500 ulp from 1 / (1 + n e).
TEST(OpsNn, SoftmaxSumsLongLinesWithCompensation) {
  const int64_t n = 100000;
  std::vector<double> logits(static_cast<size_t>(n) + 1, std::log(1e-17));
  logits[0] = 0.0;
  const Tensor x = xdev::constant(logits.data(), DType::kFloat64, {n + 1});
  const double e = std::exp(std::log(1e-17));  // each small term, as the kernel computes it
  const long double sum = 1.0L + static_cast<long double>(n) * e;
  const double want = static_cast<double>(1.0L / sum);
  const std::vector<double> got = xdev::softmax(x).to_vector<double>();
  EXPECT_NEAR(got[0], want, 4 * std::numeric_limits<double>::epsilon());
  EXPECT_NE(got[0], 1.0);
  const std::vector<double> log_got = xdev::log_softmax(x).to_vector<double>();
  EXPECT_NEAR(log_got[0], static_cast<double>(-std::log(sum)), 4 * std::numeric_limits<double>::epsilon());
}

TEST(CompensatedSum, KeepsWhatRoundingDropsInAnyOrderAndPassesNonFiniteSums) {
  xdev::CompensatedSum s;
  for (double v : {1e16, 1.0, -1e16}) s.add(v);
  EXPECT_EQ(s.value(), 1.0);
  // A tree of partial sums agrees with the sequential sum.
  xdev::CompensatedSum left, right, all;
  for (int i = 0; i < 1000; ++i) {
    const double v = 1.0 / (i + 1);
    (i % 2 == 0 ? left : right).add(v);
    all.add(v);
  }
  left.add(right);
  EXPECT_EQ(left.value(), all.value());
  xdev::CompensatedSum inf;
  inf.add(1.0);
  inf.add(kInf);
  EXPECT_EQ(inf.value(), kInf);
  inf.add(std::nan(""));
  EXPECT_TRUE(std::isnan(inf.value()));
}

TEST(OpsNn, SoftmaxAlongTheFirstAxis) {
  // Columns of [[0, 1], [0, 3]]: (0.5, 0.5) and softmax(1, 3).
  const Tensor x = xdev::constant({{0.0f, 1.0f}, {0.0f, 3.0f}});
  const std::vector<float> got = xdev::softmax(x, 0).to_vector<float>();
  const std::vector<double> col = softmax_row({1, 3});
  EXPECT_FLOAT_EQ(got[0], 0.5f);
  EXPECT_FLOAT_EQ(got[2], 0.5f);
  EXPECT_NEAR(got[1], col[0], 1e-7);
  EXPECT_NEAR(got[3], col[1], 1e-7);
  // -2 is the first axis of a rank-2 tensor.
  EXPECT_EQ(xdev::softmax(x, -2).to_vector<float>(), got);
}

TEST(OpsNn, LogSoftmaxIsStableAndMatchesLogOfSoftmax) {
  const Tensor x = xdev::constant({{1.0, 2.0, 3.0}, {-1000.0, 0.0, 1000.0}});
  const std::vector<double> got = xdev::log_softmax(x).to_vector<double>();
  const std::vector<double> r0 = softmax_row({1, 2, 3});
  for (size_t i = 0; i < 3; ++i) EXPECT_NEAR(got[i], std::log(r0[i]), 1e-14);
  EXPECT_EQ(got[3], -2000.0);  // finite where log(softmax) would be -inf
  EXPECT_EQ(got[4], -1000.0);
  EXPECT_EQ(got[5], 0.0);
}

TEST(OpsNn, NaNMakesItsLineNaNAndEmptyLinesGiveEmptyOutputs) {
  const Tensor x = xdev::constant({{1.0, kNan, 3.0}, {1.0, 2.0, 3.0}});
  const std::vector<double> got = xdev::softmax(x).to_vector<double>();
  for (size_t i = 0; i < 3; ++i) EXPECT_TRUE(std::isnan(got[i])) << i;
  for (size_t i = 3; i < 6; ++i) EXPECT_FALSE(std::isnan(got[i])) << i;
  const Tensor empty = xdev::zeros(Shape{4, 0}, DType::kFloat32);
  EXPECT_EQ(xdev::softmax(empty).shape(), (Shape{4, 0}));
  EXPECT_EQ(xdev::log_softmax(xdev::zeros(Shape{0, 3}, DType::kFloat64), 1).shape(),
            (Shape{0, 3}));
}

TEST(OpsNn, SoftmaxOfATransposedViewAndALargeTensor) {
  // A strided input (a transposed view) gives the same as its dense copy.
  const Tensor x = xdev::constant(
      std::vector<double>{0.5, -1, 2, 3, 4, -5, 6, 7, 8, 0, 1, 1.5}, Shape{3, 4});
  const Tensor t = xdev::transpose(x);
  const Tensor dense = xdev::constant(t.to_vector<double>(), Shape{4, 3});
  EXPECT_EQ(xdev::softmax(t).to_vector<double>(), xdev::softmax(dense).to_vector<double>());
  // 1 M elements take the parallel path; every row still sums to 1.
  const Tensor big = xdev::random_uniform(Shape{1024, 1024}, -5.0, 5.0, DType::kFloat32, 7);
  const Tensor rows = xdev::sum(xdev::softmax(big), {1});
  for (float s : rows.to_vector<float>()) EXPECT_NEAR(s, 1.0f, 1e-5f);
}

TEST(OpsNn, RefusedCallsNameTheOpAndTheValue) {
  const Tensor ints = xdev::constant(std::vector<int32_t>{1, 2}, Shape{2});
  expect_refused([&] { (void)xdev::softmax(ints); }, {"Softmax", "int32"});
  const Tensor x = f32({1.0f, 2.0f});
  expect_refused([&] { (void)xdev::log_softmax(x, 1); }, {"LogSoftmax", "axis 1"});
  expect_refused([&] { (void)xdev::softmax(xdev::constant(1.0f)); }, {"Softmax", "axis"});
}

}  // namespace
