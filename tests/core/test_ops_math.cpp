// The elementwise math ops through the public SDK, against values
// computed by hand (NumPy / TensorFlow semantics, docs/ops.md), on the
// cpu plugin: results, edge cases, strided inputs, and refused calls.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <xdev/xdev.hpp>

namespace {

using ::testing::HasSubstr;
using xdev::DType;
using xdev::Shape;
using xdev::Tensor;

const double kNan = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();

Tensor f64(const std::vector<double>& v) {
  return xdev::constant(v, Shape{static_cast<int64_t>(v.size())});
}
Tensor f32(const std::vector<float>& v) {
  return xdev::constant(v, Shape{static_cast<int64_t>(v.size())});
}

// Elementwise within `tol` (absolute), NaN matching NaN.
void expect_near(const std::vector<double>& got, const std::vector<double>& want, double tol) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::isnan(want[i])) {
      EXPECT_TRUE(std::isnan(got[i])) << "element " << i << " is " << got[i];
    } else if (std::isinf(want[i])) {
      EXPECT_EQ(got[i], want[i]) << "element " << i;
    } else {
      EXPECT_NEAR(got[i], want[i], tol) << "element " << i;
    }
  }
}

TEST(OpsMath, TranscendentalFunctionsMatchHandValues) {
  const Tensor x = f64({-1.0, 0.0, 0.5, 2.0});
  expect_near(xdev::exp(x).to_vector<double>(),
              {0.36787944117144233, 1.0, 1.6487212707001282, 7.38905609893065}, 1e-15);
  expect_near(xdev::expm1(f64({1e-10, 0.0})).to_vector<double>(), {1.00000000005e-10, 0.0},
              1e-25);
  expect_near(xdev::log(f64({-1.0, 0.0, 1.0, 2.0})).to_vector<double>(),
              {kNan, -kInf, 0.0, 0.6931471805599453}, 1e-15);
  expect_near(xdev::log1p(f64({1e-10, -1.0})).to_vector<double>(), {9.9999999995e-11, -kInf},
              1e-25);
  expect_near(xdev::sqrt(f64({4.0, -1.0, 2.0})).to_vector<double>(),
              {2.0, kNan, 1.4142135623730951}, 1e-15);
  expect_near(xdev::rsqrt(f64({4.0, 0.0})).to_vector<double>(), {0.5, kInf}, 1e-15);
  expect_near(xdev::reciprocal(f64({4.0, -0.5, 0.0})).to_vector<double>(), {0.25, -2.0, kInf},
              1e-15);
  expect_near(xdev::sin(x).to_vector<double>(),
              {-0.8414709848078965, 0.0, 0.479425538604203, 0.9092974268256817}, 1e-15);
  expect_near(xdev::cos(x).to_vector<double>(),
              {0.5403023058681398, 1.0, 0.8775825618903728, -0.4161468365471424}, 1e-15);
  expect_near(xdev::tanh(x).to_vector<double>(),
              {-0.7615941559557649, 0.0, 0.46211715726000974, 0.9640275800758169}, 1e-15);
  expect_near(xdev::sigmoid(f64({0.0, 2.0, -1000.0, 1000.0})).to_vector<double>(),
              {0.5, 0.8807970779778823, 0.0, 1.0}, 1e-15);
  expect_near(xdev::erf(x).to_vector<double>(),
              {-0.8427007929497149, 0.0, 0.5204998778130465, 0.9953222650189527}, 1e-15);
  // Softplus: ln(1 + e^x) without overflow at 1000 (ln 2 at 0).
  expect_near(xdev::softplus(f64({0.0, 1000.0, -1000.0, 1.0})).to_vector<double>(),
              {0.6931471805599453, 1000.0, 0.0, 1.3132616875182228}, 1e-15);
}

TEST(OpsMath, Float32IsComputedWithinFewUlp) {
  const std::vector<float> got = xdev::exp(f32({1.0f, -2.0f})).to_vector<float>();
  EXPECT_NEAR(got[0], 2.7182817f, 2e-7f * 2.72f);
  EXPECT_NEAR(got[1], 0.13533528f, 2e-7f * 0.14f);
  EXPECT_EQ(xdev::exp(f32({1.0f})).dtype(), DType::kFloat32);
}

// Dense float32 Exp runs 16 lanes at a time (the cpu plugin's vector exp):
// every element, the partial last group too, within 2 ulp of e^x rounded,
// the ends of the range exact (0, inf), NaN kept, and a strided view (the
// element-by-element path) within the same bound.
TEST(OpsMath, Float32ExpOfEveryLaneAndTheTail) {
  std::vector<float> x = {0.0f, -0.0f, 1.0f, -1.0f, 88.7f, 88.8f, -103.9f, -104.5f,
                          -87.0f, -100.0f, 1e-30f, -1e-30f, 10.5f, -10.5f, 0.693147f,
                          std::numeric_limits<float>::infinity(),
                          -std::numeric_limits<float>::infinity(),
                          std::numeric_limits<float>::quiet_NaN()};
  for (int i = 0; i < 19; ++i) x.push_back(-20.0f + 2.17f * static_cast<float>(i));  // 37: a tail
  const auto check = [&x](const std::vector<float>& got, const char* path) {
    ASSERT_EQ(got.size(), x.size());
    for (size_t i = 0; i < x.size(); ++i) {
      const double want = std::exp(static_cast<double>(x[i]));
      const float rounded = static_cast<float>(want);
      if (std::isnan(x[i])) {
        EXPECT_TRUE(std::isnan(got[i])) << path << " element " << i;
      } else if (std::isinf(rounded) || rounded == 0.0f) {
        EXPECT_EQ(got[i], rounded) << path << " e^" << x[i];
      } else {
        // Two ulp of the rounded value (subnormals: two of the smallest).
        const float ulp = std::max(std::nextafter(rounded, INFINITY) - rounded,
                                   std::numeric_limits<float>::denorm_min());
        EXPECT_LE(std::fabs(static_cast<double>(got[i]) - want), 2.0 * ulp)
            << path << " e^" << x[i] << " = " << want << ", got " << got[i];
      }
    }
  };
  check(xdev::exp(f32(x)).to_vector<float>(), "dense");
  // The same values as the rows of a transposed [37, 2] view (strided path).
  std::vector<float> pairs;
  for (float v : x) pairs.insert(pairs.end(), {v, v});
  const Tensor m = xdev::constant(pairs, Shape{static_cast<int64_t>(x.size()), 2});
  const std::vector<float> strided = xdev::exp(xdev::transpose(m)).to_vector<float>();
  check(std::vector<float>(strided.begin(), strided.begin() + static_cast<long>(x.size())),
        "strided");
}

TEST(OpsMath, RoundingOpsFollowNumPy) {
  // Round: halves to even (numpy.round, tf.round).
  EXPECT_EQ(xdev::round(f64({0.5, 1.5, 2.5, -0.5, -1.5, -2.6, 3.4})).to_vector<double>(),
            (std::vector<double>{0, 2, 2, -0.0, -2, -3, 3}));
  EXPECT_EQ(xdev::floor(f64({-1.5, 1.5, -0.0, 2.0})).to_vector<double>(),
            (std::vector<double>{-2, 1, 0, 2}));
  EXPECT_EQ(xdev::ceil(f32({-1.5f, 1.5f, 2.0f})).to_vector<float>(),
            (std::vector<float>{-1, 2, 2}));
  EXPECT_TRUE(std::isnan(xdev::round(f64({kNan})).to_vector<double>()[0]));
}

TEST(OpsMath, AbsSignSquareOfFloatsAndIntegers) {
  const std::vector<double> sign = xdev::sign(f64({-3.0, 0.0, 2.5, kNan})).to_vector<double>();
  EXPECT_EQ(sign[0], -1.0);
  EXPECT_EQ(sign[1], 0.0);
  EXPECT_EQ(sign[2], 1.0);
  EXPECT_TRUE(std::isnan(sign[3]));
  EXPECT_EQ(xdev::abs(f64({-3.0, 2.0, -0.0})).to_vector<double>(),
            (std::vector<double>{3.0, 2.0, 0.0}));
  EXPECT_EQ(xdev::square(f32({-3.0f, 0.5f})).to_vector<float>(), (std::vector<float>{9.0f, 0.25f}));

  constexpr int32_t kMin32 = std::numeric_limits<int32_t>::min();
  const Tensor i32 = xdev::constant(std::vector<int32_t>{kMin32, -7, 0, 5}, Shape{4});
  // tf.abs(INT_MIN) is INT_MIN (two's complement wraps).
  EXPECT_EQ(xdev::abs(i32).to_vector<int32_t>(), (std::vector<int32_t>{kMin32, 7, 0, 5}));
  EXPECT_EQ(xdev::sign(i32).to_vector<int32_t>(), (std::vector<int32_t>{-1, -1, 0, 1}));
  EXPECT_EQ(xdev::square(i32).to_vector<int32_t>(), (std::vector<int32_t>{0, 49, 0, 25}));
  const Tensor i64 = xdev::constant(std::vector<int64_t>{-3000000000, 4}, Shape{2});
  EXPECT_EQ(xdev::abs(i64).to_vector<int64_t>(), (std::vector<int64_t>{3000000000, 4}));
  EXPECT_EQ(xdev::square(i64).to_vector<int64_t>(), (std::vector<int64_t>{9000000000000000000, 16}));
  EXPECT_EQ(xdev::sign(i64).dtype(), DType::kInt64);
}

TEST(OpsMath, LeakyReluAndGelu) {
  EXPECT_EQ(xdev::leaky_relu(f64({-2.0, 0.0, 3.0})).to_vector<double>(),
            (std::vector<double>{-0.4, 0.0, 3.0}));  // alpha 0.2 by default
  EXPECT_EQ(xdev::leaky_relu(f64({-2.0, 3.0}), 0.5).to_vector<double>(),
            (std::vector<double>{-1.0, 3.0}));
  EXPECT_TRUE(std::isnan(xdev::leaky_relu(f64({kNan})).to_vector<double>()[0]));
  // A finite alpha beyond float32's range, on float32 (found by fuzz_ops):
  // alpha · 0 is 0, not float(alpha) · 0 = inf · 0 = NaN.
  const std::vector<float> huge =
      xdev::leaky_relu(f32({0.0f, -2.0f, 3.0f}), 1e300).to_vector<float>();
  EXPECT_EQ(huge[0], 0.0f);
  EXPECT_EQ(huge[1], -std::numeric_limits<float>::infinity());
  EXPECT_EQ(huge[2], 3.0f);
  // x Φ(x), exact: Φ(1) = 0.8413447460685429.
  expect_near(xdev::gelu(f64({1.0, -1.0, 0.0})).to_vector<double>(),
              {0.8413447460685429, -0.15865525393145707, 0.0}, 1e-15);
  // The tanh form: 0.5 (1 + tanh(√(2/π) (1 + 0.044715))).
  expect_near(xdev::gelu(f64({1.0}), true).to_vector<double>(), {0.8411919906082768}, 1e-15);
}

// A zero integer divisor is an error, as in TensorFlow's CPU kernels (it
// used to give 0, a silent wrong value); float division by zero stays IEEE.
TEST(OpsMath, IntegerDivisionByZeroIsAnError) {
  const auto message = [](auto&& f) {
    try {
      (void)f();
    } catch (const xdev::Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  for (DType dtype : {DType::kInt32, DType::kInt64, DType::kInt8, DType::kUInt8}) {
    const Tensor x = xdev::cast(xdev::constant(std::vector<int32_t>{6, 1, 4}, Shape{3}), dtype);
    const Tensor y = xdev::cast(xdev::constant(std::vector<int32_t>{3, 0, 2}, Shape{3}), dtype);
    for (auto op : {&xdev::div, &xdev::floor_div, &xdev::floor_mod}) {
      EXPECT_THAT(message([&] { return op(x, y); }), HasSubstr("integer division by zero"))
          << xdev::to_string(dtype);
    }
    // A broadcast zero is found too.
    const Tensor zero = xdev::cast(xdev::constant(std::vector<int32_t>{0}, Shape{1}), dtype);
    EXPECT_THAT(message([&] { return xdev::div(x, zero); }), HasSubstr("integer division by zero"));
    EXPECT_EQ(xdev::cast(xdev::div(x, xdev::cast(xdev::constant(std::vector<int32_t>{3, 1, 2},
                                                                  Shape{3}), dtype)),
                         DType::kInt32).to_vector<int32_t>(),
              (std::vector<int32_t>{2, 1, 2}));
  }
  EXPECT_EQ(xdev::div(f64({1.0}), f64({0.0})).to_vector<double>()[0], kInf);
}

TEST(OpsMath, BinaryMathFollowsTensorFlow) {
  // Maximum / Minimum propagate NaN (tf.maximum), with broadcasting.
  const std::vector<double> mx =
      xdev::maximum(f64({1.0, kNan, -3.0, 2.0}), f64({0.0})).to_vector<double>();
  EXPECT_EQ(mx[0], 1.0);
  EXPECT_TRUE(std::isnan(mx[1]));
  EXPECT_EQ(mx[2], 0.0);
  EXPECT_EQ(mx[3], 2.0);
  EXPECT_TRUE(std::isnan(xdev::minimum(f64({1.0}), f64({kNan})).to_vector<double>()[0]));
  EXPECT_EQ(xdev::minimum(f64({1.0, -4.0}), f64({0.5, 2.0})).to_vector<double>(),
            (std::vector<double>{0.5, -4.0}));
  // Floor division and modulo: Python's // and %, the remainder has y's sign.
  const Tensor xi = xdev::constant(std::vector<int32_t>{7, -7, 7, -7, 5, -2147483647 - 1}, Shape{6});
  const Tensor yi = xdev::constant(std::vector<int32_t>{2, 2, -2, -2, 3, -1}, Shape{6});
  EXPECT_EQ(xdev::floor_div(xi, yi).to_vector<int32_t>(),
            (std::vector<int32_t>{3, -4, -4, 3, 1, -2147483647 - 1}));
  EXPECT_EQ(xdev::floor_mod(xi, yi).to_vector<int32_t>(),
            (std::vector<int32_t>{1, 1, -1, -1, 2, 0}));
  EXPECT_EQ(xdev::floor_div(f64({7.0, -7.0, 7.5}), f64({2.0, 2.0, -2.0})).to_vector<double>(),
            (std::vector<double>{3.0, -4.0, -4.0}));
  EXPECT_EQ(xdev::floor_mod(f64({7.0, -7.0, 7.5}), f64({2.0, 2.0, -2.0})).to_vector<double>(),
            (std::vector<double>{1.0, 1.0, -0.5}));
  const std::vector<double> by_zero =
      xdev::floor_div(f64({1.0, 0.0}), f64({0.0, 0.0})).to_vector<double>();
  EXPECT_EQ(by_zero[0], kInf);
  EXPECT_TRUE(std::isnan(by_zero[1]));
  // SquaredDifference and Pow, broadcast over rows.
  const Tensor m = xdev::constant({{1.0, 2.0}, {3.0, 4.0}});
  EXPECT_EQ(xdev::squared_difference(m, f64({4.0, 0.0})).to_vector<double>(),
            (std::vector<double>{9, 4, 1, 16}));
  EXPECT_EQ(xdev::squared_difference(xi, yi).to_vector<int32_t>()[0], 25);
  expect_near(xdev::pow(f64({2.0, 4.0, -8.0, -2.0}), f64({10.0, 0.5, 1.0 / 3.0, 2.0}))
                  .to_vector<double>(),
              {1024.0, 2.0, kNan, 4.0}, 1e-15);
  EXPECT_THAT(
      [&] {
        try {
          (void)xdev::pow(xi, yi);
        } catch (const xdev::Error& e) {
          return std::string(e.what());
        }
        return std::string();
      }(),
      HasSubstr("Pow"));
}

TEST(OpsMath, StridedInputs) {
  // A transposed view runs the strided path of the kernel.
  const Tensor m = xdev::constant({{1.0, 2.0, 3.0}, {4.0, 5.0, 6.0}});
  const Tensor t = xdev::transpose(m);
  const Tensor r = xdev::square(t);
  EXPECT_EQ(r.shape(), (Shape{3, 2}));
  EXPECT_EQ(r.to_vector<double>(), (std::vector<double>{1, 16, 4, 25, 9, 36}));
}

TEST(OpsMath, RefusedCallsNameTheOpAndTheDtype) {
  const Tensor ints = xdev::constant(std::vector<int32_t>{1, 2}, Shape{2});
  for (auto fn : {&xdev::exp, &xdev::log, &xdev::sqrt, &xdev::round, &xdev::sigmoid}) {
    try {
      (void)fn(ints);
      ADD_FAILURE() << "an int32 input was accepted";
    } catch (const xdev::Error& e) {
      EXPECT_EQ(e.code(), xdev::ErrorCode::kInvalidArgument);
      EXPECT_THAT(e.what(), HasSubstr("int32"));
    }
  }
  try {
    (void)xdev::exp(ints);
  } catch (const xdev::Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("Exp"));
  }
  try {
    (void)xdev::leaky_relu(f64({1.0}), kNan);
    ADD_FAILURE() << "a NaN alpha was accepted";
  } catch (const xdev::Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("LeakyRelu"));
    EXPECT_THAT(e.what(), HasSubstr("alpha"));
  }
  const Tensor flags = xdev::constant({true, false});
  try {
    (void)xdev::abs(flags);
    ADD_FAILURE() << "a bool input was accepted";
  } catch (const xdev::Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("Abs"));
  }
}

}  // namespace
