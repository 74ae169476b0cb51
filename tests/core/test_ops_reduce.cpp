// The reductions (Max, Min, Prod, Any, All, LogSumExp) through the
// public SDK, against values computed by hand (NumPy / TensorFlow
// semantics, docs/ops.md), on the cpu plugin: axes and keepdims, empty
// reductions, NaN, large tensors on the parallel paths, refused calls.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
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

TEST(OpsReduce, MaxMinProdOverAxes) {
  // [[1, 5, -2], [4, 0, 3]]
  const Tensor m = xdev::constant({{1.0, 5.0, -2.0}, {4.0, 0.0, 3.0}});
  EXPECT_EQ(xdev::max(m).to_vector<double>(), (std::vector<double>{5.0}));
  EXPECT_EQ(xdev::max(m, {0}).to_vector<double>(), (std::vector<double>{4, 5, 3}));
  EXPECT_EQ(xdev::min(m, {1}).to_vector<double>(), (std::vector<double>{-2, 0}));
  EXPECT_EQ(xdev::prod(m, {-1}).to_vector<double>(), (std::vector<double>{-10, 0}));
  const Tensor k = xdev::min(m, {0}, true);
  EXPECT_EQ(k.shape(), (Shape{1, 3}));
  EXPECT_EQ(k.to_vector<double>(), (std::vector<double>{1, 0, -2}));
  // Integers: int32 product wraps (2^16 · 2^16 = 2^32 → 0).
  const Tensor ints = xdev::constant(std::vector<int32_t>{65536, 65536, 7}, Shape{3});
  EXPECT_EQ(xdev::prod(ints, {0}).to_vector<int32_t>(), (std::vector<int32_t>{0}));
  EXPECT_EQ(xdev::max(ints).to_vector<int32_t>(), (std::vector<int32_t>{65536}));
  EXPECT_EQ(xdev::min(ints).to_vector<int32_t>(), (std::vector<int32_t>{7}));
}

TEST(OpsReduce, NaNAndEmptyReductions) {
  const Tensor x = xdev::constant(std::vector<double>{1.0, kNan, 3.0}, Shape{3});
  EXPECT_TRUE(std::isnan(xdev::max(x).to_vector<double>()[0]));
  EXPECT_TRUE(std::isnan(xdev::min(x).to_vector<double>()[0]));
  // Over zero elements each reduction gives its identity.
  const Tensor empty = xdev::zeros(Shape{2, 0}, DType::kFloat64);
  EXPECT_EQ(xdev::max(empty, {1}).to_vector<double>(), (std::vector<double>{-kInf, -kInf}));
  EXPECT_EQ(xdev::min(empty, {1}).to_vector<double>(), (std::vector<double>{kInf, kInf}));
  EXPECT_EQ(xdev::prod(empty, {1}).to_vector<double>(), (std::vector<double>{1, 1}));
  EXPECT_EQ(xdev::logsumexp(empty, {1}).to_vector<double>(), (std::vector<double>{-kInf, -kInf}));
  const Tensor iempty = xdev::zeros(Shape{0}, DType::kInt64);
  EXPECT_EQ(xdev::max(iempty).to_vector<int64_t>(),
            (std::vector<int64_t>{std::numeric_limits<int64_t>::min()}));
  const Tensor bempty = xdev::zeros(Shape{0}, DType::kBool);
  EXPECT_EQ(xdev::any(bempty).to_vector<bool>(), (std::vector<bool>{false}));
  EXPECT_EQ(xdev::all(bempty).to_vector<bool>(), (std::vector<bool>{true}));
}

TEST(OpsReduce, EmptyAxesMeanAllByDefaultAndNoneWhenAsked) {
  const Tensor m = xdev::constant({{1.0, 5.0, -2.0}, {4.0, 0.0, 3.0}});
  const std::vector<double> values{1, 5, -2, 4, 0, 3};
  EXPECT_EQ(xdev::sum(m, {}).to_vector<double>(), (std::vector<double>{11.0}));
  using xdev::EmptyAxes;
  for (const Tensor& r : {xdev::sum(m, {}, false, EmptyAxes::kNone),
                          xdev::mean(m, {}, false, EmptyAxes::kNone),
                          xdev::max(m, {}, true, EmptyAxes::kNone),
                          xdev::min(m, {}, false, EmptyAxes::kNone),
                          xdev::prod(m, {}, false, EmptyAxes::kNone),
                          xdev::logsumexp(m, {}, false, EmptyAxes::kNone)}) {
    EXPECT_EQ(r.shape(), (Shape{2, 3}));
    EXPECT_EQ(r.to_vector<double>(), values);
  }
  // A listed axis means the same to both.
  EXPECT_EQ(xdev::sum(m, {1}, false, EmptyAxes::kNone).to_vector<double>(),
            (std::vector<double>{4, 7}));
  const Tensor b = flags({true, false}, Shape{2});
  EXPECT_EQ(xdev::all(b, {}, false, EmptyAxes::kNone).to_vector<bool>(),
            (std::vector<bool>{true, false}));
  EXPECT_EQ(xdev::any(b, {}, false, EmptyAxes::kNone).to_vector<bool>(),
            (std::vector<bool>{true, false}));
  // The op's dtype rule still holds over no axis.
  EXPECT_THROW(xdev::any(m, {}, false, EmptyAxes::kNone), xdev::Error);
}

TEST(OpsReduce, AnyAndAll) {
  const Tensor b = flags({true, false, false, false, true, true}, Shape{2, 3});
  EXPECT_EQ(xdev::any(b, {1}).to_vector<bool>(), (std::vector<bool>{true, true}));
  EXPECT_EQ(xdev::all(b, {1}).to_vector<bool>(), (std::vector<bool>{false, false}));
  EXPECT_EQ(xdev::any(b, {0}).to_vector<bool>(), (std::vector<bool>{true, true, true}));
  EXPECT_EQ(xdev::all(b, {0}).to_vector<bool>(), (std::vector<bool>{false, false, false}));
  EXPECT_EQ(xdev::all(flags({true, true}, Shape{2})).to_vector<bool>(), (std::vector<bool>{true}));
}

TEST(OpsReduce, LogSumExpIsStable) {
  // ln(e^1 + e^2 + e^3) = 3.40760596444438; shifted by 1000 it does not overflow.
  const Tensor x = xdev::constant(std::vector<double>{1.0, 2.0, 3.0}, Shape{3});
  EXPECT_NEAR(xdev::logsumexp(x).to_vector<double>()[0], 3.40760596444438, 1e-14);
  const Tensor big = xdev::constant(std::vector<double>{1001.0, 1002.0, 1003.0}, Shape{3});
  EXPECT_NEAR(xdev::logsumexp(big).to_vector<double>()[0], 1003.40760596444438, 1e-12);
  const Tensor small = xdev::constant(std::vector<float>{-1000.0f, -1000.0f}, Shape{2});
  EXPECT_NEAR(xdev::logsumexp(small).to_vector<float>()[0], -999.30685f, 1e-3f);
  const Tensor inf = xdev::constant(std::vector<double>{1.0, kInf}, Shape{2});
  EXPECT_EQ(xdev::logsumexp(inf).to_vector<double>()[0], kInf);
  const Tensor ninf = xdev::constant(std::vector<double>{-kInf, -kInf}, Shape{2});
  EXPECT_EQ(xdev::logsumexp(ninf).to_vector<double>()[0], -kInf);
}

TEST(OpsReduce, LargeTensorsOnTheParallelPaths) {
  // 1 Mi elements, [1024, 1024]: whole, row-wise (inner path) and column-wise
  // (outer path), against plain loops.
  const int64_t n = int64_t{1} << 20;
  std::vector<double> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    v[static_cast<size_t>(i)] = static_cast<double>((i * 7919) % 1000) + static_cast<double>(i) * 1e-9;
  }
  const Tensor x = xdev::constant(v, Shape{1024, 1024});
  EXPECT_EQ(xdev::max(x).to_vector<double>()[0], *std::max_element(v.begin(), v.end()));
  EXPECT_EQ(xdev::min(x).to_vector<double>()[0], *std::min_element(v.begin(), v.end()));
  std::vector<double> row_max(1024, -kInf), col_min(1024, kInf);
  for (size_t r = 0; r < 1024; ++r) {
    for (size_t c = 0; c < 1024; ++c) {
      row_max[r] = std::max(row_max[r], v[r * 1024 + c]);
      col_min[c] = std::min(col_min[c], v[r * 1024 + c]);
    }
  }
  EXPECT_EQ(xdev::max(x, {1}).to_vector<double>(), row_max);
  EXPECT_EQ(xdev::min(x, {0}).to_vector<double>(), col_min);
}

TEST(OpsReduce, ArgMaxAndArgMinGiveTheFirstExtreme) {
  // [[1, 5, 5], [4, 0, 4]]
  const Tensor m = xdev::constant({{1.0, 5.0, 5.0}, {4.0, 0.0, 4.0}});
  const Tensor am = xdev::argmax(m, 1);
  EXPECT_EQ(am.dtype(), DType::kInt64);
  EXPECT_EQ(am.shape(), (Shape{2}));
  EXPECT_EQ(am.to_vector<int64_t>(), (std::vector<int64_t>{1, 0}));  // ties: the first
  EXPECT_EQ(xdev::argmin(m, -1).to_vector<int64_t>(), (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(xdev::argmax(m, 0).to_vector<int64_t>(), (std::vector<int64_t>{1, 0, 0}));
  // A NaN is the extreme (numpy.argmax); integers.
  EXPECT_EQ(xdev::argmin(f64({3.0, kNan, -1.0}), 0).to_vector<int64_t>(), (std::vector<int64_t>{1}));
  EXPECT_EQ(xdev::argmax(i64({-5, 7, 7, 2}), 0).to_vector<int64_t>(), (std::vector<int64_t>{1}));
  // Strided: the transposed view's axis 0 is m's axis 1.
  EXPECT_EQ(xdev::argmax(xdev::transpose(m), 0).to_vector<int64_t>(), (std::vector<int64_t>{1, 0}));
}

TEST(OpsReduce, CumSumFollowsTensorFlow) {
  const Tensor x = f64({1.0, 2.0, 3.0, 4.0});
  EXPECT_EQ(xdev::cumsum(x, 0).to_vector<double>(), (std::vector<double>{1, 3, 6, 10}));
  EXPECT_EQ(xdev::cumsum(x, 0, true).to_vector<double>(), (std::vector<double>{0, 1, 3, 6}));
  EXPECT_EQ(xdev::cumsum(x, 0, false, true).to_vector<double>(), (std::vector<double>{10, 9, 7, 4}));
  EXPECT_EQ(xdev::cumsum(x, 0, true, true).to_vector<double>(), (std::vector<double>{9, 7, 4, 0}));
  // Along axis 0 of [[1, 2], [3, 4]], and int32 wrapping.
  const Tensor m = xdev::constant({{1, 2}, {3, 4}});
  EXPECT_EQ(xdev::cumsum(m, 0).to_vector<int32_t>(), (std::vector<int32_t>{1, 2, 4, 6}));
  const Tensor big = xdev::constant(std::vector<int32_t>{2147483647, 1}, Shape{2});
  EXPECT_EQ(xdev::cumsum(big, 0).to_vector<int32_t>(),
            (std::vector<int32_t>{2147483647, -2147483647 - 1}));
}

TEST(OpsReduce, AlongAxisOnLargeTensors) {
  // [512, 512]: every row is 0 .. 511 rotated by the row index.
  std::vector<int64_t> v(512 * 512);
  for (int64_t r = 0; r < 512; ++r) {
    for (int64_t c = 0; c < 512; ++c) v[static_cast<size_t>(r * 512 + c)] = (c + r) % 512;
  }
  const Tensor x = xdev::constant(v, Shape{512, 512});
  const std::vector<int64_t> am = xdev::argmax(x, 1).to_vector<int64_t>();
  const std::vector<int64_t> cs = xdev::cumsum(x, 1).to_vector<int64_t>();
  for (int64_t r = 0; r < 512; ++r) {
    EXPECT_EQ(am[static_cast<size_t>(r)], (511 - r + 512) % 512) << "row " << r;
    EXPECT_EQ(cs[static_cast<size_t>(r * 512 + 511)], 511 * 512 / 2) << "row " << r;
  }
}

// ArgMax and ArgMin take bool, as in TensorFlow (true is the larger).
TEST(OpsReduce, ArgMaxOfBools) {
  const Tensor b = flags({false, true, true, false}, Shape{4});
  EXPECT_EQ(xdev::argmax(b, 0).to_vector<int64_t>(), (std::vector<int64_t>{1}));
  EXPECT_EQ(xdev::argmin(b, 0).to_vector<int64_t>(), (std::vector<int64_t>{0}));
}

TEST(OpsReduce, RefusedCallsNameTheOpAndTheDtype) {
  const Tensor d = xdev::constant(std::vector<double>{1.0}, Shape{1});
  const Tensor i = xdev::constant(std::vector<int64_t>{1}, Shape{1});
  const Tensor b = flags({true}, Shape{1});
  expect_refused([&] { (void)xdev::max(b); }, {"Max", "bool"});
  expect_refused([&] { (void)xdev::prod(b); }, {"Prod", "bool"});
  expect_refused([&] { (void)xdev::any(d); }, {"Any", "float64"});
  expect_refused([&] { (void)xdev::all(i); }, {"All", "int64"});
  expect_refused([&] { (void)xdev::logsumexp(i); }, {"LogSumExp", "int64"});
  expect_refused([&] { (void)xdev::min(d, {3}); }, {"Min", "3"});
  expect_refused([&] { (void)xdev::cumsum(d, 1); }, {"CumSum", "axis 1"});
  expect_refused([&] { (void)xdev::argmin(xdev::zeros(Shape{2, 0}), 1); }, {"ArgMin", "empty"});
}

}  // namespace
