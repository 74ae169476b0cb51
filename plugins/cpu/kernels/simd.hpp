// Portable SIMD for the cpu kernels: GCC/Clang vector extensions of a fixed
// width (16 floats, 8 doubles), which the compiler lowers to whatever the
// target has (4 SSE registers, 2 AVX ones, 1 AVX-512 one). Lane by lane the
// operations are the IEEE ones, so a function gives the same bits whichever
// instructions run it: a kernel may build several versions of one function
// (XDEV_CPU_SIMD_CLONES) and pick the widest the processor has at load time.
#pragma once

#include <cstdint>
#include <cstring>
#include <limits>

// The attribute that builds a function for AVX-512, AVX2 and the baseline,
// chosen when the library loads (GCC's ifunc; x86-64 with glibc only;
// elsewhere the baseline alone). Not with Clang: Clang 14 refuses the
// 64-byte vectors of the inlined helpers in the AVX2 and baseline clones
// ("AVX vector return ... changes the ABI", an error), so a Clang build (the
// fuzz lane's) runs the baseline version, which gives the same bits.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && \
    defined(__gnu_linux__) && !defined(XDEV_CPU_NO_SIMD_CLONES)
#define XDEV_CPU_SIMD_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define XDEV_CPU_SIMD_CLONES
#endif

// Every helper is inlined into its caller, so that it is compiled for the
// caller's target: a 64-byte vector passed by value between functions built
// for different targets would not be passed the same way (GCC's -Wpsabi
// note, silenced below for that reason).
#define XDEV_CPU_SIMD_INLINE [[gnu::always_inline]] inline

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpsabi"

namespace xdev::cpu::simd {

inline constexpr int kLanes = 16;  // floats of an f32x16

using f32x16 = float __attribute__((vector_size(64)));
using i32x16 = int32_t __attribute__((vector_size(64)));
using f32x8 = float __attribute__((vector_size(32)));
using f64x8 = double __attribute__((vector_size(64)));
using i64x8 = int64_t __attribute__((vector_size(64)));

XDEV_CPU_SIMD_INLINE f32x16 load(const float* p) noexcept {
  f32x16 v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
XDEV_CPU_SIMD_INLINE void store(float* p, f32x16 v) noexcept { std::memcpy(p, &v, sizeof v); }
XDEV_CPU_SIMD_INLINE f32x16 splat(float x) noexcept { return f32x16{} + x; }

// Lanes of `yes` where `mask` is all ones, else of `no` (masks as the
// comparisons give them: -1 or 0 per lane).
XDEV_CPU_SIMD_INLINE f32x16 select(i32x16 mask, f32x16 yes, f32x16 no) noexcept {
  return reinterpret_cast<f32x16>((mask & reinterpret_cast<i32x16>(yes)) |
                                  (~mask & reinterpret_cast<i32x16>(no)));
}
XDEV_CPU_SIMD_INLINE f64x8 select(i64x8 mask, f64x8 yes, f64x8 no) noexcept {
  return reinterpret_cast<f64x8>((mask & reinterpret_cast<i64x8>(yes)) |
                                 (~mask & reinterpret_cast<i64x8>(no)));
}

// The 16 lanes widened to double (exactly): lanes 0-7 and 8-15. (One
// conversion of the whole vector: converting each half separately is
// lowered lane group by lane group.)
struct F64x16 {
  f64x8 low, high;
};
XDEV_CPU_SIMD_INLINE F64x16 widen(f32x16 v) noexcept {
  using f64x16 = double __attribute__((vector_size(128)));
  const f64x16 w = __builtin_convertvector(v, f64x16);
  F64x16 out;
  std::memcpy(&out, &w, sizeof out);
  return out;
}

// e^x in each lane, float32, within 2 ulp of the exact value for every float
// (Cephes' expf: x = n·ln 2 + r with |r| <= ln 2 / 2, a degree-7 polynomial
// for e^r, times 2^n; tests/cpu_plugin checks the bound over the range).
// e^x of x < -103.98 rounds to 0 (results below 2^-126 are subnormals,
// rounded once), of x > 88.72 to +inf; -inf gives 0, NaN gives NaN.
XDEV_CPU_SIMD_INLINE f32x16 exp(f32x16 x) noexcept {
  // Clamped so that n fits the exponent arithmetic below; a NaN stays (no
  // comparison holds for it) and makes every step below NaN.
  f32x16 c = select(x < -104.f, splat(-104.f), x);
  c = select(c > 88.8f, splat(88.8f), c);
  // n = round(x / ln 2): adding 1.5 · 2^23 rounds to an integer (to nearest
  // even) for |x / ln 2| < 2^22, held in the low bits of the sum's
  // significand; subtracting it again gives n as a float.
  const f32x16 magic = splat(12582912.f);
  const f32x16 shifted = c * 1.44269504088896341f + magic;
  const f32x16 n = shifted - magic;
  const i32x16 ni = reinterpret_cast<i32x16>(shifted) - 0x4B400000;
  // r = x - n · ln 2 in two steps (C1 has 9 significant bits: n · C1 is exact).
  f32x16 r = c - n * 0.693359375f;
  r = r - n * -2.12194440e-4f;
  f32x16 p = splat(1.9875691500e-4f);
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  f32x16 y = p * (r * r) + r + 1.f;
  // · 2^n as two powers of two (each a normal float), so that results below
  // 2^-126 are rounded once, by the second product.
  const i32x16 n1 = ni >> 1;
  const i32x16 n2 = ni - n1;
  y = y * reinterpret_cast<f32x16>((n1 + 127) << 23);
  return y * reinterpret_cast<f32x16>((n2 + 127) << 23);
}

}  // namespace xdev::cpu::simd

#pragma GCC diagnostic pop
