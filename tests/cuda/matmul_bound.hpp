// How far a floating-point MatMul may be from the exact product (the old
// tolerance, 1e-5 * 16 k relative, let TF32 pass unnoticed).
//
// For C = A B with inner dimension k, any summation order, with or without
// fused multiply-adds, computed in a format of unit roundoff u (2^-24 for
// float32, 2^-53 for float64), every element satisfies
//     |c_ij - exact_ij| <= gamma_k * sum_p |a_ip| |b_pj|,  gamma_k = k u / (1 - k u)
// (Higham, Accuracy and Stability of Numerical Algorithms, 3.5). The check
// below allows that bound against an exact reference (long double), with the
// inputs exactly as given: a float32 GEMM always meets it; TF32 (inputs
// rounded to 10-bit mantissas, u = 2^-11 on every product) misses it by
// orders of magnitude (tests/cuda/test_cuda_layout.cpp shows that on the
// shapes of MatMulMatchesTheCpu). Plain C++, no xdev or CUDA.
#pragma once

#include <cmath>
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

namespace xdev_cuda_test {

// Row-major m x k, k x n (transposes already applied by the caller), and
// the m x n result to judge. Returns "" when every element is within the
// bound, else a description of the first element that is not.
template <typename T>
std::string matmul_outside_bound(const std::vector<T>& a, const std::vector<T>& b,
                                 const std::vector<T>& c, int64_t m, int64_t k, int64_t n,
                                 double unit_roundoff) {
  const long double ku = static_cast<long double>(k) * unit_roundoff;
  const long double gamma = ku / (1.0L - ku);
  int64_t bad = 0;
  std::ostringstream first;
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      long double exact = 0;
      long double magnitude = 0;
      for (int64_t p = 0; p < k; ++p) {
        const long double x = a[static_cast<size_t>(i * k + p)];
        const long double y = b[static_cast<size_t>(p * n + j)];
        exact += x * y;
        magnitude += std::fabs(x * y);
      }
      const long double got = c[static_cast<size_t>(i * n + j)];
      const long double error = std::fabs(got - exact);
      if (!(error <= gamma * magnitude)) {
        if (bad++ == 0) {
          first.precision(10);
          first << "C[" << i << "][" << j << "] = " << static_cast<double>(got) << ", exact "
                << static_cast<double>(exact) << ": error " << static_cast<double>(error)
                << " > bound " << static_cast<double>(gamma * magnitude) << " (k = " << k
                << ")";
        }
      }
    }
  }
  if (bad == 0) return "";
  return std::to_string(bad) + " of " + std::to_string(m * n) +
         " elements outside the error bound; first: " + first.str();
}

// Unit roundoff of float32 and float64.
inline constexpr double kFloat32Roundoff = 0x1p-24;
inline constexpr double kFloat64Roundoff = 0x1p-53;

// Rounds a float to TF32 (10 explicit mantissa bits, round to nearest even):
// what tensor cores do to float32 MatMul inputs in TF32 mode.
inline float to_tf32(float x) {
  if (!std::isfinite(x)) return x;
  uint32_t bits;
  static_assert(sizeof(bits) == sizeof(x));
  __builtin_memcpy(&bits, &x, sizeof(bits));
  const uint32_t lsb = (bits >> 13) & 1u;
  bits += 0x0FFFu + lsb;
  bits &= ~uint32_t{0x1FFF};
  __builtin_memcpy(&x, &bits, sizeof(bits));
  return x;
}

}  // namespace xdev_cuda_test
