// IEEE 754 binary16 (float16) and bfloat16 <-> float32, bit-exact: widening is
// exact for every value; narrowing rounds to nearest, ties to even (what
// NumPy, ml_dtypes and torch do), keeps the sign of zero, infinities and NaN
// (a NaN stays a NaN: its payload is kept where it fits, else it becomes a
// quiet NaN). xdev has no 16-bit dtypes: safetensors files hold them, and
// xdev keeps their values as float32.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>

namespace xdev::detail {

inline float half_to_float(uint16_t h) noexcept {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1fu;
  const uint32_t mant = h & 0x3ffu;
  if (exp == 0) {  // zero or subnormal: mant * 2^-24, exact in float
    const float v = std::ldexp(static_cast<float>(mant), -24);
    return sign != 0 ? -v : v;
  }
  if (exp == 31) return std::bit_cast<float>(sign | 0x7f800000u | (mant << 13));  // inf, NaN
  return std::bit_cast<float>(sign | ((exp + 112) << 23) | (mant << 13));
}

inline uint16_t float_to_half(float f) noexcept {
  const uint32_t x = std::bit_cast<uint32_t>(f);
  const uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
  const uint32_t ax = x & 0x7fffffffu;
  if (ax > 0x7f800000u) {  // NaN: keep the top of the payload, never turn into inf
    uint32_t payload = (ax >> 13) & 0x3ffu;
    if (payload == 0) payload = 0x200u;
    return static_cast<uint16_t>(sign | 0x7c00u | payload);
  }
  if (ax >= 0x47800000u) return static_cast<uint16_t>(sign | 0x7c00u);  // >= 2^16: inf
  if (ax < 0x38800000u) {
    // Below the smallest normal half (2^-14): a subnormal, m * 2^-24. The
    // scaling is exact, nearbyint rounds ties to even; m == 1024 is the
    // smallest normal's encoding, as it should be.
    const float scaled = std::bit_cast<float>(ax) * 16777216.0f;
    return static_cast<uint16_t>(sign | static_cast<uint32_t>(std::nearbyint(scaled)));
  }
  const uint32_t mant = ax & 0x7fffffu;
  uint32_t h = ((((ax >> 23) - 112u) << 10) | (mant >> 13));
  const uint32_t rest = mant & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (h & 1u) != 0)) ++h;  // a carry may reach inf
  return static_cast<uint16_t>(sign | h);
}

inline float bfloat16_to_float(uint16_t b) noexcept {
  return std::bit_cast<float>(static_cast<uint32_t>(b) << 16);
}

inline uint16_t float_to_bfloat16(float f) noexcept {
  const uint32_t x = std::bit_cast<uint32_t>(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) {  // NaN
    uint16_t b = static_cast<uint16_t>(x >> 16);
    if ((b & 0x7fu) == 0) b |= 0x40u;
    return b;
  }
  return static_cast<uint16_t>((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}

}  // namespace xdev::detail
