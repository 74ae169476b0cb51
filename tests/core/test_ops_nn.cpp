// The NN ops through the public SDK, against values computed by hand
// (TensorFlow semantics, docs/ops.md), on the cpu plugin: Softmax and
// LogSoftmax along any axis, large logits, NaN, empty lines, strided views,
// the parallel path, and refused calls; BiasAdd (NHWC and NCHW),
// SoftmaxCrossEntropyWithLogits (two outputs, broadcast labels), LayerNorm and
// dropout the same way.
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

// float32 lines run in 16-lane blocks and a padded last block (the cpu
// plugin's softmax_line_f32): lines of 40 with the special values in a whole
// block and in the last one, and values against a double reference.
TEST(OpsNn, Float32LinesWithNaNInfAndTailsInEveryBlock) {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  constexpr int64_t kCols = 40;
  std::vector<float> v;
  for (int r = 0; r < 7; ++r) {
    for (int64_t c = 0; c < kCols; ++c) v.push_back(static_cast<float>((c * 7 + r) % 11) - 5.f);
  }
  auto at = [&](int r, int64_t c) -> float& { return v[static_cast<size_t>(r * kCols + c)]; };
  at(1, 5) = nan;     // in a whole block
  at(2, 37) = nan;    // in the last, padded block
  at(3, 20) = inf;    // +inf: inf - inf, the line is NaN
  at(4, 3) = -inf;    // -inf entries give 0
  at(4, 38) = -inf;
  for (int64_t c = 0; c < kCols; ++c) at(5, c) = -inf;  // all -inf: NaN
  at(6, 39) = 100.f;  // one large logit in the tail: the rest underflow to 0 or nearly
  const Tensor x = xdev::constant(v, Shape{7, kCols});
  const std::vector<float> got = xdev::softmax(x).to_vector<float>();
  const std::vector<float> log_got = xdev::log_softmax(x).to_vector<float>();
  auto g = [&](const std::vector<float>& w, int r, int64_t c) {
    return w[static_cast<size_t>(r * kCols + c)];
  };
  for (int r : {0, 4, 6}) {
    std::vector<double> line;
    for (int64_t c = 0; c < kCols; ++c) line.push_back(at(r, c));
    const std::vector<double> want = softmax_row(line);
    for (int64_t c = 0; c < kCols; ++c) {
      const double w = want[static_cast<size_t>(c)];
      // A few ulp, or two of the subnormals (2^-149 each) row 6 has.
      EXPECT_NEAR(g(got, r, c), w, 4e-7 * w + 3e-45) << r << ", " << c;
      if (w > 1e-30) {
        EXPECT_NEAR(g(log_got, r, c), std::log(w), 1e-6 * (1 + std::fabs(std::log(w))))
            << r << ", " << c;
      }
    }
  }
  EXPECT_EQ(g(got, 4, 3), 0.f);
  EXPECT_EQ(g(got, 4, 38), 0.f);
  EXPECT_EQ(g(log_got, 4, 3), -inf);
  for (int r : {1, 2, 3, 5}) {
    for (int64_t c = 0; c < kCols; ++c) {
      EXPECT_TRUE(std::isnan(g(got, r, c))) << r << ", " << c;
      EXPECT_TRUE(std::isnan(g(log_got, r, c))) << r << ", " << c;
    }
  }
  // Along the first axis the lines are strided: the same bits as the dense
  // copy of the transpose.
  const Tensor t = xdev::transpose(x);
  const Tensor dense = xdev::constant(t.to_vector<float>(), Shape{kCols, 7});
  const std::vector<float> strided = xdev::softmax(dense, 0).to_vector<float>();
  const std::vector<float> direct = xdev::transpose(xdev::softmax(x)).to_vector<float>();
  ASSERT_EQ(strided.size(), direct.size());
  for (size_t i = 0; i < strided.size(); ++i) {
    if (std::isnan(direct[i])) {
      EXPECT_TRUE(std::isnan(strided[i])) << i;
    } else {
      EXPECT_EQ(strided[i], direct[i]) << i;
    }
  }
}

TEST(OpsNn, RefusedCallsNameTheOpAndTheValue) {
  const Tensor ints = xdev::constant(std::vector<int32_t>{1, 2}, Shape{2});
  expect_refused([&] { (void)xdev::softmax(ints); }, {"Softmax", "int32"});
  const Tensor x = f32({1.0f, 2.0f});
  expect_refused([&] { (void)xdev::log_softmax(x, 1); }, {"LogSoftmax", "axis 1"});
  expect_refused([&] { (void)xdev::softmax(xdev::constant(1.0f)); }, {"Softmax", "axis"});
}

// --- BiasAdd, SoftmaxCrossEntropyWithLogits, LayerNorm, dropout -------------------

TEST(OpsNn, BiasAddAlongTheLastAxisOrAxisOne) {
  const Tensor x = xdev::constant({{1.0, 2.0, 3.0}, {4.0, 5.0, 6.0}});
  const Tensor b = xdev::constant({10.0, 20.0, 30.0});
  EXPECT_EQ(xdev::bias_add(x, b).to_vector<double>(),
            (std::vector<double>{11, 22, 33, 14, 25, 36}));
  // NCHW: [N=1, C=2, W=3], bias along axis 1.
  const Tensor y = xdev::constant(std::vector<float>{1, 2, 3, 4, 5, 6}, Shape{1, 2, 3});
  EXPECT_EQ(xdev::bias_add(y, f32({0.5f, -1.0f}), "NCHW").to_vector<float>(),
            (std::vector<float>{1.5f, 2.5f, 3.5f, 3, 4, 5}));
  // NCHW of rank 2 is axis 1, the last.
  EXPECT_EQ(xdev::bias_add(x, b, "NCHW").to_vector<double>(),
            xdev::bias_add(x, b).to_vector<double>());
  // A transposed (strided) value: the core makes it contiguous first.
  const Tensor t = xdev::transpose(xdev::constant({{1.0, 2.0}, {3.0, 4.0}}));
  EXPECT_EQ(xdev::bias_add(t, xdev::constant({0.0, 100.0})).to_vector<double>(),
            (std::vector<double>{1, 103, 2, 104}));
  EXPECT_EQ(xdev::bias_add(xdev::zeros(Shape{0, 3}), f32({1, 2, 3})).shape(), (Shape{0, 3}));
  // The parallel path: 4 M elements, NHWC and NCHW.
  const Tensor big = xdev::zeros(Shape{64, 8, 64, 128});
  const Tensor bias8 = f32({0, 1, 2, 3, 4, 5, 6, 7});
  const std::vector<float> nchw = xdev::bias_add(big, bias8, "NCHW").to_vector<float>();
  EXPECT_EQ(nchw[5 * 8 * 64 * 128 + 3 * 64 * 128 + 77], 3.0f);
  const Tensor bias128 = xdev::fill(Shape{128}, 2.0);
  EXPECT_EQ(xdev::sum(xdev::bias_add(big, bias128)).to_vector<float>()[0], 2.0f * 64 * 8 * 64 * 128);
}

TEST(OpsNn, BiasAddRefusesWhatTensorFlowRefuses) {
  const Tensor x = f32({1, 2, 3});
  expect_refused([&] { (void)xdev::bias_add(x, f32({1, 2, 3})); }, {"BiasAdd", "rank 1"});
  const Tensor m = xdev::zeros(Shape{2, 3, 4});
  expect_refused([&] { (void)xdev::bias_add(m, f32({1, 2, 3})); },
                 {"BiasAdd", "(3,)", "must be (4,)", "NHWC"});
  expect_refused([&] { (void)xdev::bias_add(m, f32({1, 2}), "NCHW"); },
                 {"BiasAdd", "(2,)", "must be (3,)", "NCHW"});
  expect_refused([&] { (void)xdev::bias_add(m, f32({1, 2, 3, 4}), "NCWH"); },
                 {"BiasAdd", "data_format", "NCWH", "NHWC, NCHW"});
  const Tensor ints = xdev::constant({{1, 2}});
  expect_refused([&] { (void)xdev::bias_add(ints, xdev::constant({1, 2})); }, {"BiasAdd", "int32"});
  expect_refused([&] { (void)xdev::bias_add(xdev::zeros(Shape{2, 2}), xdev::constant({1.0, 2.0})); },
                 {"BiasAdd", "float32", "float64"});
}

TEST(OpsNn, SoftmaxCrossEntropyWithLogitsGivesLossAndBackprop) {
  const Tensor features = xdev::constant({{0.0, 0.0}, {1.0, 2.0}});
  const Tensor labels = xdev::constant({{0.5, 0.5}, {0.0, 1.0}});
  const auto [loss, backprop] = xdev::softmax_cross_entropy_with_logits(features, labels);
  ASSERT_EQ(loss.shape(), (Shape{2}));
  ASSERT_EQ(backprop.shape(), (Shape{2, 2}));
  const double e = std::exp(1.0);
  const std::vector<double> l = loss.to_vector<double>();
  EXPECT_NEAR(l[0], std::log(2.0), 1e-15);
  EXPECT_NEAR(l[1], std::log1p(1.0 / e), 1e-15);
  const std::vector<double> bp = backprop.to_vector<double>();
  EXPECT_NEAR(bp[0], 0.0, 1e-16);
  EXPECT_NEAR(bp[1], 0.0, 1e-16);
  EXPECT_NEAR(bp[2], 1.0 / (1.0 + e), 1e-15);
  EXPECT_NEAR(bp[3], e / (1.0 + e) - 1.0, 1e-15);
  // Labels of one row broadcast over the batch; logits of 1000 do not overflow.
  const auto big = xdev::softmax_cross_entropy_with_logits(
      xdev::constant({{1000.0f, 0.0f}, {0.0f, 1000.0f}}), xdev::constant({{1.0f, 0.0f}}));
  EXPECT_EQ(big.loss.to_vector<float>(), (std::vector<float>{0.0f, 1000.0f}));
  EXPECT_EQ(big.backprop.to_vector<float>(), (std::vector<float>{0.0f, 0.0f, -1.0f, 1.0f}));
  // No classes: a loss of 0 per row; no rows: empty outputs.
  const auto none = xdev::softmax_cross_entropy_with_logits(xdev::zeros(Shape{3, 0}),
                                                            xdev::zeros(Shape{3, 0}));
  EXPECT_EQ(none.loss.to_vector<float>(), (std::vector<float>{0, 0, 0}));
  EXPECT_EQ(none.backprop.shape(), (Shape{3, 0}));
  EXPECT_EQ(xdev::softmax_cross_entropy_with_logits(xdev::zeros(Shape{0, 4}), xdev::zeros(Shape{0, 4}))
                .loss.shape(),
            (Shape{0}));
  // The parallel path: each row's backprop sums to 1 − Σ labels = 0.
  const Tensor logits = xdev::random_uniform(Shape{512, 1000}, -5.0, 5.0, DType::kFloat64, 3);
  const Tensor onehot = xdev::cast(xdev::equal(logits, xdev::max(logits, {1}, true)), DType::kFloat64);
  const auto wide = xdev::softmax_cross_entropy_with_logits(logits, onehot);
  for (double v : xdev::sum(wide.backprop, {1}).to_vector<double>()) EXPECT_NEAR(v, 0.0, 1e-12);
  for (double v : wide.loss.to_vector<double>()) EXPECT_GT(v, 0.0);
}

TEST(OpsNn, SoftmaxCrossEntropyWithLogitsRefusesBadShapes) {
  const Tensor v = f32({1, 2});
  expect_refused([&] { (void)xdev::softmax_cross_entropy_with_logits(v, v); },
                 {"SoftmaxCrossEntropyWithLogits", "rank 2", "(2,)"});
  const Tensor a = xdev::zeros(Shape{2, 3});
  const Tensor b = xdev::zeros(Shape{2, 4});
  expect_refused([&] { (void)xdev::softmax_cross_entropy_with_logits(a, b); },
                 {"SoftmaxCrossEntropyWithLogits", "(2, 3)", "(2, 4)", "3 vs 4"});
  expect_refused([&] { (void)xdev::softmax_cross_entropy_with_logits(a, xdev::zeros(Shape{2, 3}, DType::kFloat64)); },
                 {"SoftmaxCrossEntropyWithLogits", "float32", "float64"});
}

TEST(OpsNn, LayerNormOverTheLastAxes) {
  const Tensor x = xdev::constant({{1.0, 2.0, 3.0}, {4.0, 4.0, 4.0}});
  const Tensor gamma = xdev::constant({1.0, 2.0, 3.0});
  const Tensor beta = xdev::constant({0.5, 0.0, -1.0});
  const std::vector<double> y = xdev::layer_norm(x, gamma, beta, -1, 0.0).to_vector<double>();
  const double r = 1.0 / std::sqrt(2.0 / 3.0);
  EXPECT_NEAR(y[0], -r + 0.5, 1e-15);
  EXPECT_NEAR(y[1], 0.0, 1e-15);
  EXPECT_NEAR(y[2], 3 * r - 1.0, 1e-15);
  // A constant row with epsilon 0 is 0 / 0; with the default epsilon it is beta.
  EXPECT_TRUE(std::isnan(y[3]));
  EXPECT_EQ(xdev::layer_norm(x, gamma, beta).to_vector<double>()[4], 0.0);
  // begin_norm_axis 0: one group of all six elements (mean 3, variance 4/3).
  const Tensor ones = xdev::ones(Shape{2, 3}, DType::kFloat64);
  const Tensor zeros = xdev::zeros(Shape{2, 3}, DType::kFloat64);
  const std::vector<double> all = xdev::layer_norm(x, ones, zeros, 0, 0.0).to_vector<double>();
  EXPECT_NEAR(all[0], -2.0 / std::sqrt(4.0 / 3.0), 1e-15);
  EXPECT_NEAR(all[5], 1.0 / std::sqrt(4.0 / 3.0), 1e-15);
  EXPECT_EQ(xdev::layer_norm(xdev::zeros(Shape{0, 5}), xdev::ones(Shape{5}), xdev::zeros(Shape{5})).shape(),
            (Shape{0, 5}));
  // The parallel path: every row of the result has mean 0 and variance ~1.
  const Tensor big = xdev::random_uniform(Shape{512, 1024}, -3.0, 7.0, DType::kFloat32, 11);
  const Tensor n = xdev::layer_norm(big, xdev::ones(Shape{1024}), xdev::zeros(Shape{1024}), 1, 0.0);
  for (float m : xdev::mean(n, {1}).to_vector<float>()) EXPECT_NEAR(m, 0.0f, 1e-5f);
  for (float v : xdev::mean(xdev::square(n), {1}).to_vector<float>()) EXPECT_NEAR(v, 1.0f, 1e-4f);
}

TEST(OpsNn, LayerNormRefusesBadParametersAndAxes) {
  const Tensor x = xdev::zeros(Shape{2, 3});
  const Tensor p3 = xdev::ones(Shape{3});
  expect_refused([&] { (void)xdev::layer_norm(x, xdev::ones(Shape{2}), p3); },
                 {"LayerNorm", "gamma", "(2,)", "must be (3,)"});
  expect_refused([&] { (void)xdev::layer_norm(x, p3, p3, 0); },
                 {"LayerNorm", "gamma", "(3,)", "must be (2, 3)"});
  expect_refused([&] { (void)xdev::layer_norm(x, p3, p3, 2); }, {"LayerNorm", "begin_norm_axis 2"});
  expect_refused([&] { (void)xdev::layer_norm(x, p3, p3, -1, -1e-3); },
                 {"LayerNorm", "epsilon", "-0.001"});
  expect_refused([&] { (void)xdev::layer_norm(x, p3, p3, -1, kNan); }, {"LayerNorm", "epsilon"});
}

// SoftmaxCrossEntropyWithLogits and LayerNorm sum with compensation, like
// Softmax (docs/ops.md), so a GPU's tree of partial sums agrees with the cpu
// plugin. A plain running sum loses what each of these inputs relies on.
TEST(OpsNn, SoftmaxCrossEntropyAndLayerNormSumWithCompensation) {
  // 100000 terms of ~1e-17 beside e^0 = 1: a plain sum stays 1.0, giving a
  // loss of ln 1 = 0 and backprop[0] = 1 − 1 = 0.
  const int64_t n = 100000;
  std::vector<double> logits(static_cast<size_t>(n) + 1, std::log(1e-17));
  logits[0] = 0.0;
  std::vector<double> one_hot(logits.size(), 0.0);
  one_hot[0] = 1.0;
  const auto xent = xdev::softmax_cross_entropy_with_logits(
      xdev::constant(logits.data(), DType::kFloat64, {1, n + 1}),
      xdev::constant(one_hot.data(), DType::kFloat64, {1, n + 1}));
  const double e = std::exp(std::log(1e-17));  // each small term, as the kernel computes it
  const long double tail = static_cast<long double>(n) * e;
  const double want_loss = static_cast<double>(std::log1p(tail));   // ln s − 0
  const double want_backprop = static_cast<double>(-tail / (1.0L + tail));  // 1/s − 1
  EXPECT_NEAR(xent.loss.to_vector<double>()[0], want_loss, 1e-3 * want_loss);
  EXPECT_NEAR(xent.backprop.to_vector<double>()[0], want_backprop, 1e-3 * -want_backprop);
  // x = (1e16, 1, −1e16, 0): the mean is 1/4 (a plain sum loses the 1: 0),
  // so y[1] = (1 − 1/4) · rstd and y[3] = −1/4 · rstd.
  const Tensor x = xdev::constant({1e16, 1.0, -1e16, 0.0});
  const std::vector<double> y =
      xdev::layer_norm(x, xdev::ones(Shape{4}, DType::kFloat64),
                       xdev::zeros(Shape{4}, DType::kFloat64), 0, 0.0)
          .to_vector<double>();
  const long double variance =
      (2.0L * 1e16L * 1e16L + 0.75L * 0.75L + 0.25L * 0.25L + 0.125L) / 4.0L;
  const double rstd = static_cast<double>(1.0L / std::sqrt(variance));
  EXPECT_NEAR(y[1], 0.75 * rstd, 1e-12 * rstd);
  EXPECT_NEAR(y[3], -0.25 * rstd, 1e-12 * rstd);
}

TEST(OpsNn, DropoutKeepsAndScalesOrZeroes) {
  const Tensor x = xdev::ones(Shape{100, 100}, DType::kFloat64);
  EXPECT_EQ(xdev::dropout(x, 0.0, 5).to_vector<double>(), x.to_vector<double>());
  const std::vector<double> y = xdev::dropout(x, 0.75, 5).to_vector<double>();
  size_t kept = 0;
  for (double v : y) {
    EXPECT_TRUE(v == 0.0 || v == 4.0) << v;
    kept += v != 0.0;
  }
  // 10000 draws, keep probability 0.25: within 5 standard deviations (43).
  EXPECT_NEAR(static_cast<double>(kept), 2500.0, 220.0);
  // The same seed, the same mask; the mask is RandomUniform's values >= rate.
  EXPECT_EQ(xdev::dropout(x, 0.75, 5).to_vector<double>(), y);
  const std::vector<double> u =
      xdev::random_uniform(Shape{100, 100}, 0.0, 1.0, DType::kFloat64, 5).to_vector<double>();
  for (size_t i = 0; i < u.size(); ++i) EXPECT_EQ(y[i] != 0.0, u[i] >= 0.75) << i;
  expect_refused([&] { (void)xdev::dropout(x, 1.0, 1); }, {"Dropout", "rate 1"});
  expect_refused([&] { (void)xdev::dropout(xdev::constant({1, 2}), 0.5, 1); },
                 {"Dropout", "int32"});
}

}  // namespace
