// The cpu plugin's vector helpers (plugins/cpu/kernels/simd.hpp) against the
// C library's double-precision exp, in the clone the processor picks (as the
// plugin's kernels call them) or, built with XDEV_CPU_NO_SIMD_CLONES
// (cpu_simd_baseline), for the baseline target alone.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "kernels/simd.hpp"

#pragma GCC diagnostic ignored "-Wpsabi"  // simd.hpp says why

namespace {

using xdev::cpu::simd::f32x16;
using xdev::cpu::simd::kLanes;

// simd::exp of each of `x` (a multiple of 16 of them), in the version the
// running processor gets (the plugin's kernels call it from such clones).
XDEV_CPU_SIMD_CLONES void exp_all(const float* x, float* y, int64_t n) {
  for (int64_t k = 0; k < n; k += kLanes) {
    xdev::cpu::simd::store(y + k, xdev::cpu::simd::exp(xdev::cpu::simd::load(x + k)));
  }
}

// |got - exp(x)| in units of the last place of the float32 nearest exp(x)
// (subnormals: 2^-149).
double ulps(float got, float x) {
  const double want = std::exp(static_cast<double>(x));
  const float nearest = static_cast<float>(want);
  if (std::isinf(nearest)) return got == nearest ? 0.0 : std::numeric_limits<double>::infinity();
  const float above = std::nextafter(nearest, std::numeric_limits<float>::infinity());
  const double ulp = static_cast<double>(above) - static_cast<double>(nearest);
  return std::fabs(static_cast<double>(got) - want) / ulp;
}

// Every 61st float32 from -104 to 89 (about 17 million of them): within one
// ulp of the exact e^x, subnormal results and overflow to +inf included.
TEST(CpuSimd, ExpIsWithinOneUlpOverItsRange) {
  auto from_bits = [](uint32_t b) {
    float f;
    std::memcpy(&f, &b, sizeof f);
    return f;
  };
  auto bits_of = [](float f) {
    uint32_t b;
    std::memcpy(&b, &f, sizeof b);
    return b;
  };
  std::vector<float> x;
  // Negative floats: the larger the bits, the larger the magnitude.
  for (uint32_t b = bits_of(-104.f); b > 0x80000000u; b -= 61) x.push_back(from_bits(b));
  for (uint32_t b = 0; b < bits_of(89.f); b += 61) x.push_back(from_bits(b));
  while (x.size() % kLanes != 0) x.push_back(0.5f);
  std::vector<float> y(x.size());
  exp_all(x.data(), y.data(), static_cast<int64_t>(x.size()));
  double worst = 0;
  float worst_x = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    const double e = ulps(y[i], x[i]);
    if (!(e <= worst)) {
      worst = e;
      worst_x = x[i];
    }
  }
  EXPECT_LE(worst, 1.0) << "at x = " << worst_x;
}

TEST(CpuSimd, ExpOfSpecialValues) {
  const float inf = std::numeric_limits<float>::infinity();
  const float in[kLanes] = {-inf, inf, std::numeric_limits<float>::quiet_NaN(), -0.f, 0.f,
                            -103.97f, -103.98f, -1e30f, 88.72f, 88.73f, 1e30f, -87.3f,
                            -87.4f, 1.f, -1.f, -149.f * 0.6931472f};
  float out[kLanes];
  exp_all(in, out, kLanes);
  EXPECT_EQ(out[0], 0.f);
  EXPECT_EQ(out[1], inf);
  EXPECT_TRUE(std::isnan(out[2]));
  EXPECT_EQ(out[3], 1.f);
  EXPECT_EQ(out[4], 1.f);
  EXPECT_EQ(out[5], std::exp(-103.97f));  // the smallest subnormal
  EXPECT_EQ(out[6], 0.f);
  EXPECT_EQ(out[7], 0.f);
  EXPECT_EQ(out[8], std::exp(88.72f));
  EXPECT_EQ(out[9], inf);
  EXPECT_EQ(out[10], inf);
  for (int i = 11; i < kLanes; ++i) EXPECT_LE(ulps(out[i], in[i]), 1.0) << "x = " << in[i];
}

}  // namespace
