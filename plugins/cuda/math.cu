// Elementwise math, comparisons and logic (docs/ops.md "Elementwise math",
// "Binary math", "Comparisons and logic"): a functor per op with a
// __device__ operator(), run by the shared elementwise kernels
// (elementwise.cuh), so every op has the contiguous, rank-1 and general
// paths of Add. Float math runs in the element type with CUDA's math library
// (float32 in float: expf, erff, ... are within the ulp bounds docs/ops.md
// states), the formulas the cpu plugin uses (plugins/cpu/kernels/math.cpp,
// elementwise.cpp, compare.cpp) so edge cases agree: integer Abs/Square wrap
// (Abs(MIN) = MIN), Sign keeps ±0 and NaN, Round is rint (halves to even),
// Softplus never overflows, Maximum/Minimum propagate NaN, integer
// FloorDiv/FloorMod by 0 give 0 and MIN // -1 wraps.
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <type_traits>

#include "device_math.cuh"
#include "elementwise.cuh"
#include "kernel_util.cuh"
#include "launch.hpp"

namespace xdev::cuda {
namespace {

// ---------------------------------------------------------------------------
// One input

template <MathOp kOp, typename T>
struct MathFn {
  double alpha;  // kLeakyRelu
  __device__ T operator()(T v) const {
    constexpr T one = T{1};
    if constexpr (kOp == MathOp::kAbs) {
      if constexpr (std::is_integral_v<T>) {
        return v < 0 ? wrap_sub(T{0}, v) : v;  // Abs(MIN) = MIN
      } else {
        return m_fabs(v);
      }
    } else if constexpr (kOp == MathOp::kSign) {
      if (v > T{0}) return T{1};
      if (v < T{0}) return T{-1};
      return v;  // 0, -0.0 and NaN stay
    } else if constexpr (kOp == MathOp::kSquare) {
      return wrap_mul(v, v);
    } else if constexpr (kOp == MathOp::kExp) {
      return m_exp(v);
    } else if constexpr (kOp == MathOp::kExpm1) {
      return m_expm1(v);
    } else if constexpr (kOp == MathOp::kLog) {
      return m_log(v);
    } else if constexpr (kOp == MathOp::kLog1p) {
      return m_log1p(v);
    } else if constexpr (kOp == MathOp::kSqrt) {
      return m_sqrt(v);
    } else if constexpr (kOp == MathOp::kRsqrt) {
      return one / m_sqrt(v);  // as the cpu plugin; rsqrtf rounds differently
    } else if constexpr (kOp == MathOp::kReciprocal) {
      return one / v;
    } else if constexpr (kOp == MathOp::kSin) {
      return m_sin(v);
    } else if constexpr (kOp == MathOp::kCos) {
      return m_cos(v);
    } else if constexpr (kOp == MathOp::kTanh) {
      return m_tanh(v);
    } else if constexpr (kOp == MathOp::kSigmoid) {
      return one / (one + m_exp(-v));
    } else if constexpr (kOp == MathOp::kErf) {
      return m_erf(v);
    } else if constexpr (kOp == MathOp::kSoftplus) {
      // ln(1 + e^x) = max(x, 0) + ln(1 + e^-|x|): no overflow for large |x|.
      return (v > T{0} ? v : T{0}) + m_log1p(m_exp(-m_fabs(v)));
    } else if constexpr (kOp == MathOp::kFloor) {
      return m_floor(v);
    } else if constexpr (kOp == MathOp::kCeil) {
      return m_ceil(v);
    } else if constexpr (kOp == MathOp::kRound) {
      return m_rint(v);  // the default rounding mode: halves to even
    } else if constexpr (kOp == MathOp::kLeakyRelu) {
      // NaN stays NaN; the product in double (alpha is any finite double).
      return v > T{0} ? v : static_cast<T>(alpha * static_cast<double>(v));
    } else if constexpr (kOp == MathOp::kGelu) {
      return T(0.5) * v * (one + m_erf(v * T(0.7071067811865476)));  // x Φ(x)
    } else {
      static_assert(kOp == MathOp::kGeluTanh);
      const T inner = T(0.7978845608028654) * (v + T(0.044715) * v * v * v);
      return T(0.5) * v * (one + m_tanh(inner));
    }
  }
};

// Tests giving bool.
template <MathOp kOp, typename T>
struct PredicateFn {
  __device__ Bool operator()(T v) const {
    if constexpr (kOp == MathOp::kLogicalNot) {
      return v != 0 ? 0 : 1;
    } else if constexpr (kOp == MathOp::kIsNan) {
      return v != v ? 1 : 0;
    } else {
      static_assert(kOp == MathOp::kIsFinite);
      return isfinite(v) ? 1 : 0;
    }
  }
};

template <MathOp kOp>
constexpr bool kIntegerMath = kOp == MathOp::kAbs || kOp == MathOp::kSign || kOp == MathOp::kSquare;

template <MathOp kOp>
cudaError_t run_math(xdev_dtype_t dtype, const ElementwiseLayout& l, const void* x, void* out,
                     double alpha, cudaStream_t stream) {
  return visit_dtype(dtype, [&](auto zero) -> cudaError_t {
    using T = decltype(zero);
    if constexpr (kOp == MathOp::kLogicalNot) {
      if constexpr (std::is_same_v<T, Bool>) {
        return run_unary<T, Bool>(l, x, out, stream, PredicateFn<kOp, T>{});
      }
    } else if constexpr (kOp == MathOp::kIsNan || kOp == MathOp::kIsFinite) {
      if constexpr (std::is_floating_point_v<T>)
        return run_unary<T, Bool>(l, x, out, stream, PredicateFn<kOp, T>{});
    } else if constexpr (std::is_floating_point_v<T> ||
                         (kIntegerMath<kOp> && !std::is_same_v<T, Bool>)) {
      return run_unary<T, T>(l, x, out, stream, MathFn<kOp, T>{alpha});
    }
    return cudaErrorNotSupported;
  });
}

// ---------------------------------------------------------------------------
// Two inputs

template <MathBinaryOp kOp, typename T>
struct MathBinaryFn {
  __device__ T operator()(T a, T b) const {
    if constexpr (kOp == MathBinaryOp::kPow) {
      return m_pow(a, b);
    } else if constexpr (kOp == MathBinaryOp::kMaximum || kOp == MathBinaryOp::kMinimum) {
      if (is_nan(a)) return a;
      if (is_nan(b)) return b;
      return (kOp == MathBinaryOp::kMaximum ? a < b : b < a) ? b : a;
    } else if constexpr (kOp == MathBinaryOp::kFloorDiv) {
      if constexpr (std::is_integral_v<T>) {
        if (b == 0) return 0;
        if (b == -1) return wrap_sub(T{0}, a);  // MIN // -1 wraps to MIN
        const T q = a / b;
        return (a % b != 0 && ((a < 0) != (b < 0))) ? static_cast<T>(q - 1) : q;
      } else {
        return m_floor(a / b);
      }
    } else if constexpr (kOp == MathBinaryOp::kFloorMod) {
      if constexpr (std::is_integral_v<T>) {
        if (b == 0 || b == -1) return 0;
        const T r = a % b;
        return (r != 0 && ((r < 0) != (b < 0))) ? static_cast<T>(r + b) : r;
      } else {
        const T r = m_fmod(a, b);
        return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
      }
    } else {
      static_assert(kOp == MathBinaryOp::kSquaredDifference);
      const T d = wrap_sub(a, b);
      return wrap_mul(d, d);
    }
  }
};

template <MathBinaryOp kOp>
cudaError_t run_math_binary(xdev_dtype_t dtype, const ElementwiseLayout& l, const void* x,
                            const void* y, void* out, cudaStream_t stream) {
  return visit_number_dtype(dtype, [&](auto zero) -> cudaError_t {
    using T = decltype(zero);
    if constexpr (kOp == MathBinaryOp::kPow && !std::is_floating_point_v<T>) {
      return cudaErrorNotSupported;
    } else {
      return run_binary<T>(l, x, y, out, stream, MathBinaryFn<kOp, T>{});
    }
  });
}

// Bool elements compare by truth (any nonzero byte is true).
template <typename T>
__device__ __forceinline__ T truth(T v) {
  if constexpr (std::is_same_v<T, Bool>) {
    return v != 0 ? 1 : 0;
  } else {
    return v;
  }
}

template <CompareOp kOp, typename T>
struct CompareFn {
  __device__ Bool operator()(T a, T b) const {
    const T x = truth(a), y = truth(b);
    bool r;
    if constexpr (kOp == CompareOp::kEqual) r = x == y;
    else if constexpr (kOp == CompareOp::kNotEqual) r = x != y;
    else if constexpr (kOp == CompareOp::kLess) r = x < y;
    else if constexpr (kOp == CompareOp::kLessEqual) r = x <= y;
    else if constexpr (kOp == CompareOp::kGreater) r = x > y;
    else if constexpr (kOp == CompareOp::kGreaterEqual) r = x >= y;
    else if constexpr (kOp == CompareOp::kLogicalAnd) r = x != 0 && y != 0;
    else r = x != 0 || y != 0;
    return r ? 1 : 0;
  }
};

template <CompareOp kOp>
cudaError_t run_compare(xdev_dtype_t dtype, const ElementwiseLayout& l, const void* x,
                        const void* y, void* out, cudaStream_t stream) {
  return visit_dtype(dtype, [&](auto zero) -> cudaError_t {
    using T = decltype(zero);
    constexpr bool kIsBool = std::is_same_v<T, Bool>;
    constexpr bool kLogic = kOp == CompareOp::kLogicalAnd || kOp == CompareOp::kLogicalOr;
    constexpr bool kEquality = kOp == CompareOp::kEqual || kOp == CompareOp::kNotEqual;
    if constexpr (kLogic ? kIsBool : (kEquality || !kIsBool)) {
      return run_binary<T, CompareFn<kOp, T>, Bool>(l, x, y, out, stream, CompareFn<kOp, T>{});
    } else {
      return cudaErrorNotSupported;
    }
  });
}

// ---------------------------------------------------------------------------
// Three inputs

template <typename T>
struct SelectFn {
  __device__ T operator()(Bool condition, T x, T y) const { return condition != 0 ? x : y; }
};

template <typename T>
struct ClipFn {
  __device__ T operator()(T x, T lo, T hi) const {
    if (is_nan(x)) return x;
    const T low = x < lo ? lo : x;
    return hi < low ? hi : low;
  }
};

// Calls f(std::integral_constant<E, e>{}) for the enumerator `op` of E in
// [0, count): the op becomes a template argument.
template <typename E, int kI = 0, int kCount, typename F>
cudaError_t visit_enum(E op, F&& f) {
  if constexpr (kI >= kCount) {
    return cudaErrorInvalidValue;
  } else {
    if (static_cast<int>(op) == kI) return f(std::integral_constant<E, static_cast<E>(kI)>{});
    return visit_enum<E, kI + 1, kCount>(op, f);
  }
}

}  // namespace

cudaError_t launch_math(MathOp op, xdev_dtype_t dtype, const ElementwiseLayout& layout,
                        const void* x, void* out, double alpha, cudaStream_t stream) {
  return visit_enum<MathOp, 0, static_cast<int>(MathOp::kIsFinite) + 1>(op, [&](auto k) {
    return run_math<decltype(k)::value>(dtype, layout, x, out, alpha, stream);
  });
}

cudaError_t launch_math_binary(MathBinaryOp op, xdev_dtype_t dtype,
                               const ElementwiseLayout& layout, const void* x, const void* y,
                               void* out, cudaStream_t stream) {
  return visit_enum<MathBinaryOp, 0, static_cast<int>(MathBinaryOp::kSquaredDifference) + 1>(
      op, [&](auto k) {
        return run_math_binary<decltype(k)::value>(dtype, layout, x, y, out, stream);
      });
}

cudaError_t launch_compare(CompareOp op, xdev_dtype_t dtype, const ElementwiseLayout& layout,
                           const void* x, const void* y, void* out, cudaStream_t stream) {
  return visit_enum<CompareOp, 0, static_cast<int>(CompareOp::kLogicalOr) + 1>(op, [&](auto k) {
    return run_compare<decltype(k)::value>(dtype, layout, x, y, out, stream);
  });
}

cudaError_t launch_select(size_t element_size, const ElementwiseLayout& layout,
                          const void* condition, const void* x, const void* y, void* out,
                          cudaStream_t stream) {
  switch (element_size) {
    case 1:
      return run_ternary<Bool, uint8_t, uint8_t, uint8_t>(layout, condition, x, y, out, stream,
                                                          SelectFn<uint8_t>{});
    case 4:
      return run_ternary<Bool, uint32_t, uint32_t, uint32_t>(layout, condition, x, y, out, stream,
                                                             SelectFn<uint32_t>{});
    case 8:
      return run_ternary<Bool, uint64_t, uint64_t, uint64_t>(layout, condition, x, y, out, stream,
                                                             SelectFn<uint64_t>{});
    default:
      return cudaErrorNotSupported;
  }
}

cudaError_t launch_clip(xdev_dtype_t dtype, const ElementwiseLayout& layout, const void* x,
                        const void* lo, const void* hi, void* out, cudaStream_t stream) {
  return visit_number_dtype(dtype, [&](auto zero) {
    using T = decltype(zero);
    return run_ternary<T, T, T, T>(layout, x, lo, hi, out, stream, ClipFn<T>{});
  });
}

}  // namespace xdev::cuda
