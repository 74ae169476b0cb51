// Elementwise math of one input: Abs, Sign, Square (every number dtype),
// Exp, Expm1, Log, Log1p, Sqrt, Rsqrt, Reciprocal, Sin, Cos, Tanh,
// Sigmoid, Erf, Softplus, Floor, Ceil, Round, LeakyRelu, Gelu (float32 and
// float64).
//
// Each op is a functor applied element by element, in the element type (float
// math in float for float32, like the other devices; docs/ops.md states the
// tolerance). Dense inputs take one flat loop (float32 Exp: 16 lanes at a
// time, simd::exp, within 2 ulp as the tolerance allows, so the same bits for
// every element whichever version of the loop runs); strided ones the strided walk
// (strided.hpp). Large tensors are split over oneTBB's threads by
// parallel_range / walk_all, as in elementwise.cpp.
//
// Edge cases (docs/ops.md "Semantics"): integer Abs and Square wrap (Abs(MIN)
// = MIN); Sign keeps ±0 and NaN; Round is half to even (nearbyint in the
// default rounding mode); Softplus never overflows; LeakyRelu propagates NaN.
#include <xdev/op_names.h>
#include <cmath>
#include <type_traits>

#include "kernels/common.hpp"
#include "kernels/kernels.hpp"
#include "kernels/simd.hpp"
#include "kernels/strided.hpp"

// simd.hpp's vectors in a function built for several targets: GCC notes the
// ABI of passing them by value, which no function here does (simd.hpp).
#pragma GCC diagnostic ignored "-Wpsabi"

namespace xdev::cpu {
namespace {

// Functors: `kMask` is the dtypes they are registered for; `attrs` lists
// the attributes the op reads; `init` reads them (nullptr status: fine).
struct NoAttrs {
  static constexpr const char* const* attrs = kNoAttrs;
  xdev_status_t* init(const xdev_kernel_call_t*) noexcept { return nullptr; }
};

struct AbsOp : NoAttrs {
  static constexpr uint64_t kMask = kSigned;
  template <typename T>
  T operator()(T v) const noexcept {
    if constexpr (std::is_integral_v<T>) {
      return v < 0 ? wrapping_neg(v) : v;  // Abs(MIN) = MIN
    } else {
      return std::fabs(v);
    }
  }
};

struct SignOp : NoAttrs {
  static constexpr uint64_t kMask = kSigned;
  template <typename T>
  T operator()(T v) const noexcept {
    if (v > T{0}) return T{1};
    if (v < T{0}) return T{-1};
    return v;  // 0, -0.0 and NaN stay
  }
};

struct SquareOp : NoAttrs {
  static constexpr uint64_t kMask = kArith;
  template <typename T>
  T operator()(T v) const noexcept {
    return wrapping(v, v, std::multiplies<>{});
  }
};

// Float-only ops, one line each.
#define XDEV_FLOAT_OP(Name, expr)                 \
  struct Name : NoAttrs {                         \
    static constexpr uint64_t kMask = kFloats;    \
    template <typename T>                         \
    T operator()(T v) const noexcept {            \
      return expr;                                \
    }                                             \
  };
XDEV_FLOAT_OP(ExpOp, std::exp(v))
XDEV_FLOAT_OP(Expm1Op, std::expm1(v))
XDEV_FLOAT_OP(LogOp, std::log(v))
XDEV_FLOAT_OP(Log1pOp, std::log1p(v))
XDEV_FLOAT_OP(SqrtOp, std::sqrt(v))
XDEV_FLOAT_OP(RsqrtOp, T{1} / std::sqrt(v))
XDEV_FLOAT_OP(ReciprocalOp, T{1} / v)
XDEV_FLOAT_OP(SinOp, std::sin(v))
XDEV_FLOAT_OP(CosOp, std::cos(v))
XDEV_FLOAT_OP(TanhOp, std::tanh(v))
XDEV_FLOAT_OP(SigmoidOp, T{1} / (T{1} + std::exp(-v)))
XDEV_FLOAT_OP(ErfOp, std::erf(v))
// ln(1 + e^x) = max(x, 0) + ln(1 + e^-|x|): no overflow for large |x|.
XDEV_FLOAT_OP(SoftplusOp, (v > T{0} ? v : T{0}) + std::log1p(std::exp(-std::fabs(v))))
XDEV_FLOAT_OP(FloorOp, std::floor(v))
XDEV_FLOAT_OP(CeilOp, std::ceil(v))
XDEV_FLOAT_OP(RoundOp, std::nearbyint(v))  // the default mode rounds halves to even
#undef XDEV_FLOAT_OP

constexpr const char* kLeakyReluAttrs[] = {XDEV_ATTR_NAME_alpha, nullptr};
struct LeakyReluOp {
  static constexpr uint64_t kMask = kFloats;
  static constexpr const char* const* attrs = kLeakyReluAttrs;
  double alpha = 0.2;
  xdev_status_t* init(const xdev_kernel_call_t* call) noexcept {
    return attr_number(call, XDEV_ATTR_NAME_alpha, false, 0.2, &alpha);
  }
  template <typename T>
  T operator()(T v) const noexcept {
    // NaN stays NaN. The product in double, then rounded: alpha is any
    // finite double, and float(1e300) * 0 would be NaN where alpha · 0 is 0.
    return v > T{0} ? v : static_cast<T>(alpha * static_cast<double>(v));
  }
};

constexpr const char* kGeluAttrs[] = {XDEV_ATTR_NAME_approximate, nullptr};
struct GeluOp {
  static constexpr uint64_t kMask = kFloats;
  static constexpr const char* const* attrs = kGeluAttrs;
  bool approximate = false;
  xdev_status_t* init(const xdev_kernel_call_t* call) noexcept {
    return attr_bool(call, XDEV_ATTR_NAME_approximate, false, &approximate);
  }
  template <typename T>
  T operator()(T v) const noexcept {
    if (approximate) {
      // 0.5 x (1 + tanh(√(2/π) (x + 0.044715 x³)))
      const T inner = T(0.7978845608028654) * (v + T(0.044715) * v * v * v);
      return T(0.5) * v * (T{1} + std::tanh(inner));
    }
    return T(0.5) * v * (T{1} + std::erf(v * T(0.7071067811865476)));  // x Φ(x)
  }
};

// e^x of n dense floats, 16 at a time; the last partial group padded, so that
// every element goes through the same vector code.
XDEV_CPU_SIMD_CLONES void exp_f32_dense(float* __restrict out, const float* __restrict in,
                                        int64_t n) noexcept {
  const int64_t whole = n - n % simd::kLanes;
  for (int64_t i = 0; i < whole; i += simd::kLanes) {
    simd::store(out + i, simd::exp(simd::load(in + i)));
  }
  if (whole == n) return;
  float tail[simd::kLanes] = {};
  for (int64_t i = whole; i < n; ++i) tail[i - whole] = in[i];
  simd::store(tail, simd::exp(simd::load(tail)));
  for (int64_t i = whole; i < n; ++i) out[i] = tail[i - whole];
}

template <typename Op>
xdev_status_t* math_kernel(const xdev_kernel_call_t* call) noexcept {
  constexpr uint64_t kMask = Op::kMask;
  xdev_dtype_t dtype;
  if (xdev_status_t* s = check_signature(call, 1, kMask, Op::attrs, true, &dtype)) return s;
  Op op;
  if (xdev_status_t* s = op.init(call)) return s;
  return guarded_visit<kMask>(call, dtype, [call, &op](auto zero) {
    using T = decltype(zero);
    const xdev_tensor_t& x = *call->inputs[0];
    if constexpr (std::is_same_v<Op, ExpOp> && std::is_same_v<T, float>) {
      if (is_contiguous(x)) {
        float* const o = data_of<float>(*call->outputs[0]);
        const float* const a = data_of<const float>(x);
        parallel_range(element_count(*call->outputs[0]), [o, a](int64_t begin, int64_t end) {
          exp_f32_dense(o + begin, a + begin, end - begin);
        });
        return;
      }
    }
    map<T, T>(x, *call->outputs[0], op);
  });
}

}  // namespace

XDEV_CPU_KERNEL(kernel_abs, math_kernel<AbsOp>)
XDEV_CPU_KERNEL(kernel_sign, math_kernel<SignOp>)
XDEV_CPU_KERNEL(kernel_square, math_kernel<SquareOp>)
XDEV_CPU_KERNEL(kernel_exp, math_kernel<ExpOp>)
XDEV_CPU_KERNEL(kernel_expm1, math_kernel<Expm1Op>)
XDEV_CPU_KERNEL(kernel_log, math_kernel<LogOp>)
XDEV_CPU_KERNEL(kernel_log1p, math_kernel<Log1pOp>)
XDEV_CPU_KERNEL(kernel_sqrt, math_kernel<SqrtOp>)
XDEV_CPU_KERNEL(kernel_rsqrt, math_kernel<RsqrtOp>)
XDEV_CPU_KERNEL(kernel_reciprocal, math_kernel<ReciprocalOp>)
XDEV_CPU_KERNEL(kernel_sin, math_kernel<SinOp>)
XDEV_CPU_KERNEL(kernel_cos, math_kernel<CosOp>)
XDEV_CPU_KERNEL(kernel_tanh, math_kernel<TanhOp>)
XDEV_CPU_KERNEL(kernel_sigmoid, math_kernel<SigmoidOp>)
XDEV_CPU_KERNEL(kernel_erf, math_kernel<ErfOp>)
XDEV_CPU_KERNEL(kernel_softplus, math_kernel<SoftplusOp>)
XDEV_CPU_KERNEL(kernel_floor, math_kernel<FloorOp>)
XDEV_CPU_KERNEL(kernel_ceil, math_kernel<CeilOp>)
XDEV_CPU_KERNEL(kernel_round, math_kernel<RoundOp>)
XDEV_CPU_KERNEL(kernel_leaky_relu, math_kernel<LeakyReluOp>)
XDEV_CPU_KERNEL(kernel_gelu, math_kernel<GeluOp>)

}  // namespace xdev::cpu
