// float16, bfloat16, uint8 and int8 through the SDK: constants and read-back
// of the element types of <xdev/half.hpp>, Cast between all nine dtypes, and
// float ops on 16-bit floats computed in float32 with one rounding
// (docs/ops.md "Dtypes"). Run on the cpu plugin and (test_ops_half_on_sim)
// on the simulated GPU, which must not fall back.
#include <gtest/gtest.h>

#include <bit>
#include <cfenv>
#include <cmath>
#include <cstdint>
#include <sstream>
#include <vector>

#include <xdev/xdev.hpp>

namespace {

using xdev::bfloat16;
using xdev::DType;
using xdev::float16;
using xdev::Shape;
using xdev::Tensor;

std::vector<float16> f16(const std::vector<double>& values) {
  std::vector<float16> out;
  for (double v : values) out.emplace_back(v);
  return out;
}

std::vector<double> as_double(const Tensor& t) {
  std::vector<double> out;
  const xdev::HostTensor host = t.to_host();
  for (int64_t i = 0; i < host.num_elements(); ++i) out.push_back(host.value_as_double(i));
  return out;
}

// Floats below the smallest normal half become subnormals rounded to nearest,
// ties to even, whatever rounding mode the caller has set.
TEST(OpsHalf, SubnormalRoundingDoesNotDependOnTheRoundingMode) {
  std::vector<float> samples;
  for (uint32_t bits = 0; bits < 0x38800000u; bits += 4099u) {
    samples.push_back(std::bit_cast<float>(bits));
  }
  for (uint32_t m = 0; m <= 1024; ++m) {  // the exact halfway points m + 1/2 (times 2^-24)
    samples.push_back(static_cast<float>(std::ldexp(m + 0.5, -24)));
    samples.push_back(static_cast<float>(std::ldexp(static_cast<double>(m), -24)));
  }
  std::vector<uint16_t> expected;
  for (float f : samples) {
    const double scaled = std::ldexp(static_cast<double>(f), 24);  // exact
    double m = std::floor(scaled);
    const double rest = scaled - m;
    if (rest > 0.5 || (rest == 0.5 && std::fmod(m, 2.0) != 0.0)) m += 1.0;
    expected.push_back(static_cast<uint16_t>(m));
  }
  const int saved = std::fegetround();
  for (int mode : {FE_TONEAREST, FE_UPWARD, FE_DOWNWARD, FE_TOWARDZERO}) {
    std::fesetround(mode);
    for (size_t i = 0; i < samples.size(); ++i) {
      const uint16_t got = xdev::float_to_half(samples[i]);
      const uint16_t negative = xdev::float_to_half(-samples[i]);
      if (got != expected[i] || negative != (expected[i] | 0x8000u)) {
        std::fesetround(saved);
        FAIL() << "rounding mode " << mode << ": " << samples[i] << " gave " << got
               << ", expected " << expected[i];
      }
    }
  }
  std::fesetround(saved);
}

TEST(OpsHalf, ConstantsReadBackBitForBit) {
  const std::vector<float16> values = f16({1.0, -0.1, 65504.0, 0.0});
  const Tensor t = xdev::constant(values, Shape{2, 2});
  EXPECT_EQ(t.dtype(), DType::kFloat16);
  EXPECT_EQ(xdev::to_string(t.dtype()), "float16");
  const std::vector<float16> back = t.to_vector<float16>();
  ASSERT_EQ(back.size(), values.size());
  for (size_t i = 0; i < values.size(); ++i) EXPECT_EQ(back[i].bits, values[i].bits) << i;
  EXPECT_EQ(xdev::itemsize(DType::kBFloat16), 2U);
  EXPECT_FLOAT_EQ(xdev::constant(std::vector<bfloat16>{bfloat16(3.0f)}, Shape{}).item<float>(), 3.0f);
  // A literal converted to float16: rounded once.
  EXPECT_EQ(xdev::constant(0.1, DType::kFloat16).to_vector<float16>()[0].bits,
            xdev::double_to_half(0.1));
  std::ostringstream printed;
  printed << xdev::constant(f16({1.0, 0.5}), Shape{2}).to_host();
  EXPECT_EQ(printed.str(), "[1. 0.5]");
  const Tensor u = xdev::constant(std::vector<uint8_t>{0, 200, 255}, Shape{3});
  EXPECT_EQ(u.dtype(), DType::kUInt8);
  EXPECT_EQ(u.to_vector<uint8_t>(), (std::vector<uint8_t>{0, 200, 255}));
}

TEST(OpsHalf, CastBetweenAllNineDtypes) {
  const DType all[] = {DType::kFloat32, DType::kFloat64, DType::kInt32,    DType::kInt64,
                       DType::kBool,    DType::kFloat16, DType::kBFloat16, DType::kUInt8,
                       DType::kInt8};
  // Values every dtype holds exactly (bool: 0 and 1 only, so they come back
  // as x != 0).
  const Tensor x = xdev::constant({0.0, 1.0, 3.0, 100.0, 0.0, 7.0});
  const std::vector<double> want = {0, 1, 3, 100, 0, 7};
  for (DType from : all) {
    for (DType to : all) {
      SCOPED_TRACE(std::string(xdev::to_string(from)) + " -> " + std::string(xdev::to_string(to)));
      const Tensor y = xdev::cast(xdev::cast(x, from), to);
      EXPECT_EQ(y.dtype(), to);
      std::vector<double> expected = want;
      if (from == DType::kBool || to == DType::kBool) {
        for (double& v : expected) v = v != 0 ? 1 : 0;
      }
      EXPECT_EQ(as_double(y), expected);
    }
  }
  // The rules at the edges: saturation, modulo, one rounding.
  EXPECT_EQ(xdev::cast(xdev::constant({300.5, -3.0}), DType::kUInt8).to_vector<uint8_t>(),
            (std::vector<uint8_t>{255, 0}));
  EXPECT_EQ(xdev::cast(xdev::constant(std::vector<int32_t>{300, -1}, Shape{2}), DType::kUInt8)
                .to_vector<uint8_t>(),
            (std::vector<uint8_t>{44, 255}));
  EXPECT_EQ(xdev::cast(xdev::constant({-300.0, 127.9}), DType::kInt8).to_vector<int8_t>(),
            (std::vector<int8_t>{-128, 127}));
  EXPECT_TRUE(std::isinf(xdev::cast(xdev::constant(70000.0f), DType::kFloat16).item<float>()));
}

TEST(OpsHalf, FloatOpsComputeInFloat32AndRoundOnce) {
  for (DType dtype : {DType::kFloat16, DType::kBFloat16}) {
    SCOPED_TRACE(std::string(xdev::to_string(dtype)));
    // 1000 ones: a 16-bit accumulator would stop at 2048 (float16) or 256
    // (bfloat16); in float32 the sum is exact.
    const Tensor ones = xdev::ones(Shape{1000}, dtype);
    EXPECT_EQ(xdev::sum(ones).item<double>(), 1000.0);
    const Tensor row = xdev::ones(Shape{1, 1000}, dtype), col = xdev::ones(Shape{1000, 1}, dtype);
    EXPECT_EQ(xdev::matmul(row, col).item<double>(), 1000.0);
    // Softmax of a row sums to 1 within a few 16-bit ulp.
    const Tensor logits = xdev::cast(xdev::constant({{1.0, 2.0, 3.0, 4.0}}), dtype);
    const Tensor p = xdev::softmax(logits);
    EXPECT_EQ(p.dtype(), dtype);
    double total = 0;
    for (double v : as_double(p)) total += v;
    EXPECT_NEAR(total, 1.0, 4 * (dtype == DType::kFloat16 ? 0x1p-10 : 0x1p-7));
    // Comparisons give bool; a tensor-scalar product keeps the dtype.
    const Tensor twice = logits * 2.0f;
    EXPECT_EQ(twice.dtype(), dtype);
    EXPECT_EQ(as_double(twice), (std::vector<double>{2, 4, 6, 8}));
    const Tensor less = xdev::less(logits, twice);
    EXPECT_EQ(less.dtype(), DType::kBool);
    EXPECT_EQ(as_double(less), (std::vector<double>{1, 1, 1, 1}));
  }
  // float16 2048 + 1: the float32 sum 2049 is a tie, rounded to even.
  const Tensor a = xdev::constant(f16({2048.0, 2048.0}), Shape{2});
  const Tensor b = xdev::constant(f16({1.0, 3.0}), Shape{2});
  EXPECT_EQ(as_double(xdev::add(a, b)), (std::vector<double>{2048.0, 2052.0}));
}

}  // namespace
