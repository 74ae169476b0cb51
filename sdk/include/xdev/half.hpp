// The 16-bit float dtypes, header-only (plugins, the core and user programs
// include it): IEEE 754 binary16 (`float16`) and bfloat16, their bit-exact
// conversions, and the element types xdev::float16 / xdev::bfloat16.
//
// Widening (to float or double) is exact for every value. Narrowing rounds to
// nearest, ties to even (what NumPy, ml_dtypes and torch do), once: from a
// double or an int64 too (round to odd to float first, which has more than
// two bits beyond either format's, so the final rounding sees the exact
// value's side of every tie). Zero keeps its sign; values past the largest
// finite one round to infinity as IEEE says (float16: from 65520); a NaN
// stays a NaN, its payload kept where it fits, else it becomes a quiet NaN.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

namespace xdev {

// --- bit conversions ---------------------------------------------------------

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
    // Below the smallest normal half (2^-14): a subnormal, m * 2^-24, with m
    // the float's significand M (24 bits) shifted right by 126 - exponent and
    // rounded to nearest, ties to even, in integers: the caller's floating-
    // point rounding mode plays no part. m == 1024 is the smallest normal's
    // encoding, as it should be.
    const uint32_t exponent = ax >> 23;
    if (exponent < 102u) return sign;  // below 2^-25: rounds to zero
    const uint32_t significand = (ax & 0x7fffffu) | 0x800000u;
    const uint32_t shift = 126u - exponent;  // 14 .. 24
    uint32_t m = significand >> shift;
    const uint32_t rest = significand & ((1u << shift) - 1u);
    const uint32_t half = 1u << (shift - 1u);
    if (rest > half || (rest == half && (m & 1u) != 0)) ++m;
    return static_cast<uint16_t>(sign | m);
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

// `d` rounded to float toward zero, with the last bit set when inexact
// ("round to odd"): rounding this to a format with at most 22 bits of
// significand gives the correctly rounded value of `d`. NaN and infinities
// go through as they are; beyond float's range it is the largest float (odd),
// which still rounds to infinity in float16 and bfloat16.
inline float round_to_odd_float(double d) noexcept {
  float f = static_cast<float>(d);
  if (std::isnan(d) || std::isinf(d) || static_cast<double>(f) == d) return f;
  if (std::fabs(static_cast<double>(f)) > std::fabs(d)) f = std::nextafter(f, 0.0f);
  return std::bit_cast<float>(std::bit_cast<uint32_t>(f) | 1u);
}

// An int64 the same way: its top 24 significant bits, the last one set when
// any lower bit is (then exact in float).
inline float round_to_odd_float(int64_t v) noexcept {
  const bool negative = v < 0;
  uint64_t u = negative ? 0 - static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
  int shift = 0;
  while ((u >> shift) >= (uint64_t{1} << 24)) ++shift;
  const uint64_t top = u >> shift;
  const bool sticky = shift > 0 && (u & ((uint64_t{1} << shift) - 1)) != 0;
  const float f = std::ldexp(static_cast<float>(top | (sticky ? 1u : 0u)), shift);
  return negative ? -f : f;
}

inline uint16_t double_to_half(double d) noexcept { return float_to_half(round_to_odd_float(d)); }
inline uint16_t double_to_bfloat16(double d) noexcept {
  return float_to_bfloat16(round_to_odd_float(d));
}

// --- element types -------------------------------------------------------------

namespace detail {

// A 16-bit float stored as its bits; Widen/Narrow are the conversions above.
// Arithmetic goes through float (operator float); constructing from a float,
// double or integer rounds once.
template <float (*Widen)(uint16_t), uint16_t (*Narrow)(float), uint16_t (*NarrowDouble)(double)>
struct Float16Bits {
  uint16_t bits = 0;

  constexpr Float16Bits() noexcept = default;
  explicit Float16Bits(float f) noexcept : bits(Narrow(f)) {}
  explicit Float16Bits(double d) noexcept : bits(NarrowDouble(d)) {}
  explicit Float16Bits(int64_t v) noexcept : bits(Narrow(round_to_odd_float(v))) {}
  explicit Float16Bits(int32_t v) noexcept : bits(NarrowDouble(static_cast<double>(v))) {}
  static constexpr Float16Bits from_bits(uint16_t b) noexcept {
    Float16Bits h;
    h.bits = b;
    return h;
  }
  operator float() const noexcept { return Widen(bits); }  // exact
  // Bitwise equality (for tests and containers; NaN == NaN of the same bits).
  friend constexpr bool same_bits(Float16Bits a, Float16Bits b) noexcept {
    return a.bits == b.bits;
  }
};

}  // namespace detail

// IEEE 754 binary16: 1 sign, 5 exponent, 10 significand bits; largest 65504.
using float16 = detail::Float16Bits<&half_to_float, &float_to_half, &double_to_half>;
// bfloat16: float32's top 16 bits (8 exponent, 7 significand bits).
using bfloat16 = detail::Float16Bits<&bfloat16_to_float, &float_to_bfloat16, &double_to_bfloat16>;

static_assert(sizeof(float16) == 2 && sizeof(bfloat16) == 2);

}  // namespace xdev
