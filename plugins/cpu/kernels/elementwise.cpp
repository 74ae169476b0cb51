// Add, Sub, Mul, Div, Neg, Relu, AddN.
//
// Paths, in the order they are tried:
//  1. every input dense (row-major) -> one flat loop the compiler vectorizes;
//  2. one input dense, the other one broadcast value -> flat loop with a scalar;
//  3. anything else -> the strided walk (strided.hpp) over coalesced dims,
//     with the inner loop specialized for unit and zero strides.
// Below kParallelMinElements all of it runs in the calling thread without
// allocating; above, the elements are split over oneTBB's threads.
//
// Integers wrap on overflow (computed in the unsigned type: no undefined
// behaviour). Integer Div rounds toward zero and MIN / -1 wraps to MIN; an
// integer Div, FloorDiv or FloorMod by zero fails the call (INVALID_ARGUMENT,
// as TensorFlow's CPU kernels do) (docs/ops.md). Bool Add is logical or. Relu
// maps NaN to 0.
#include <atomic>
#include <cmath>
#include <type_traits>

#include "kernels/common.hpp"
#include "kernels/kernels.hpp"
#include "kernels/strided.hpp"

namespace xdev::cpu {
namespace {

struct AddOp {
  template <typename T>
  static T apply(T a, T b) noexcept {
    if constexpr (std::is_same_v<T, boolean>) {
      return (a | b) != 0 ? 1 : 0;
    } else {
      return wrapping(a, b, std::plus<>{});
    }
  }
};

struct SubOp {
  template <typename T>
  static T apply(T a, T b) noexcept {
    return wrapping(a, b, std::minus<>{});
  }
};

struct MulOp {
  template <typename T>
  static T apply(T a, T b) noexcept {
    return wrapping(a, b, std::multiplies<>{});
  }
};

struct NegOp {
  template <typename T>
  static T apply(T a) noexcept {
    return wrapping_neg(a);
  }
};

struct DivOp {
  template <typename T>
  static T apply(T a, T b) noexcept {
    if constexpr (std::is_integral_v<T>) {
      if (b == 0) return 0;  // division_kernel fails the call
      if constexpr (std::is_signed_v<T>) {
        if (b == -1) return wrapping_neg(a);
      }
    }
    return static_cast<T>(a / b);  // C++ truncates integers toward zero
  }
};

// Binary math (docs/ops.md "Semantics"): Maximum and Minimum propagate NaN
// (like tf.maximum); FloorDiv and FloorMod round toward -inf (the remainder
// has the divisor's sign), a zero integer divisor fails the call and MIN / -1
// wraps to MIN; SquaredDifference is (x - y)^2, wrapping for ints; Pow is
// float-only.

// NaN-propagating maximum (kMax) or minimum.
template <bool kMax>
struct ExtremumOp {
  template <typename T>
  static T apply(T a, T b) noexcept {
    if constexpr (std::is_floating_point_v<T>) {
      if (a != a) return a;
      if (b != b) return b;
    }
    return (kMax ? a < b : b < a) ? b : a;
  }
};
using MaximumOp = ExtremumOp<true>;
using MinimumOp = ExtremumOp<false>;

struct FloorDivOp {
  template <typename T>
  static T apply(T a, T b) noexcept {
    if constexpr (std::is_unsigned_v<T>) {
      return DivOp::apply(a, b);
    } else if constexpr (std::is_integral_v<T>) {
      if (b == 0 || b == -1) return DivOp::apply(a, b);  // 0, or -a wrapping
      const T q = static_cast<T>(a / b);
      return (a % b != 0 && ((a < 0) != (b < 0))) ? static_cast<T>(q - 1) : q;
    } else {
      return std::floor(a / b);
    }
  }
};

struct FloorModOp {
  template <typename T>
  static T apply(T a, T b) noexcept {
    if constexpr (std::is_unsigned_v<T>) {
      return b == 0 ? T{0} : static_cast<T>(a % b);
    } else if constexpr (std::is_integral_v<T>) {
      if (b == 0 || b == -1) return 0;
      const T r = static_cast<T>(a % b);
      return (r != 0 && ((r < 0) != (b < 0))) ? static_cast<T>(r + b) : r;
    } else {
      const T r = std::fmod(a, b);
      return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
    }
  }
};

struct SquaredDifferenceOp {
  template <typename T>
  static T apply(T a, T b) noexcept {
    const T d = wrapping(a, b, std::minus<>{});
    return wrapping(d, d, std::multiplies<>{});
  }
};

struct PowOp {  // registered for float32 and float64 only
  template <typename T>
  static T apply(T a, T b) noexcept {
    return std::pow(a, b);
  }
};

// max(x, 0) as `x > 0 ? x : 0`: NaN and -0.0 give +0, like the cuda plugin
// and the conformance reference (docs/ops.md does not say).
struct ReluOp {
  template <typename T>
  static T apply(T a) noexcept {
    return a > T{0} ? a : T{0};
  }
};

// ---------------------------------------------------------------------------
// Unary and binary kernels: the dense fast path first (checked inline), then
// the general path, which validates everything and walks any strides.

template <typename Op>
struct Apply {
  template <typename... T>
  auto operator()(T... v) const noexcept {
    return Op::apply(v...);
  }
};

// An elementwise op of N inputs and dtypes kMask: a call that passes the
// inline dense check runs dense(T{}, n); any other is validated in full and
// runs strided(T{}).
template <uint32_t N, uint64_t kMask, typename Dense, typename Strided>
xdev_status_t* elementwise_kernel(const xdev_kernel_call_t* call, const Dense& dense,
                                  const Strided& strided) noexcept {
  try {
    xdev_dtype_t dtype;
    int64_t n;
    if (dense_elementwise_call<N>(call, kMask, &dtype, &n)) {
      visit_dtypes<kMask>(dtype, [&dense, n](auto zero) { dense(zero, n); });
      return nullptr;
    }
  } catch (...) {
    return kernel_unexpected(call);
  }
  xdev_dtype_t dtype;
  if (xdev_status_t* s = check_signature(call, N, kMask, kNoAttrs, true, &dtype)) return s;
  return guarded_visit<kMask>(call, dtype, strided);
}

template <typename Op, uint64_t kMask>
xdev_status_t* binary_kernel(const xdev_kernel_call_t* call) noexcept {
  return elementwise_kernel<2, kMask>(
      call,
      [call](auto zero, int64_t n) {
        using T = decltype(zero);
        zip_dense(data_of<T>(*call->outputs[0]), data_of<const T>(*call->inputs[0]),
                  data_of<const T>(*call->inputs[1]), n, Apply<Op>{});
      },
      [call](auto zero) {
        zip<decltype(zero)>(*call->inputs[0], *call->inputs[1], *call->outputs[0], Apply<Op>{});
      });
}

// Div, FloorDiv, FloorMod: Op, except that an integer zero divisor is noted
// in `zero` (the element gets 0, and the call then fails).
template <typename Op>
struct CheckedDivision {
  std::atomic<bool>* zero;
  template <typename T>
  T operator()(T a, T b) const noexcept {
    if constexpr (std::is_integral_v<T>) {
      if (b == 0) {
        zero->store(true, std::memory_order_relaxed);
        return T{0};
      }
    }
    return Op::apply(a, b);
  }
};

template <typename Op, uint64_t kMask>
xdev_status_t* division_kernel(const xdev_kernel_call_t* call) noexcept {
  std::atomic<bool> zero{false};
  const CheckedDivision<Op> f{&zero};
  xdev_status_t* s = elementwise_kernel<2, kMask>(
      call,
      [call, f](auto z, int64_t n) {
        using T = decltype(z);
        zip_dense(data_of<T>(*call->outputs[0]), data_of<const T>(*call->inputs[0]),
                  data_of<const T>(*call->inputs[1]), n, f);
      },
      [call, f](auto z) {
        zip<decltype(z)>(*call->inputs[0], *call->inputs[1], *call->outputs[0], f);
      });
  if (s != nullptr || !zero.load(std::memory_order_relaxed)) return s;
  return kernel_fail(call, XDEV_STATUS_INVALID_ARGUMENT,
                     "%s: integer division by zero (y holds a 0; x is %s)",
                     call->op != nullptr ? call->op : "kernel",
                     dtype_name(call->inputs[0]->dtype));
}

template <typename Op, uint64_t kMask>
xdev_status_t* unary_kernel(const xdev_kernel_call_t* call) noexcept {
  return elementwise_kernel<1, kMask>(
      call,
      [call](auto zero, int64_t n) {
        using T = decltype(zero);
        map_dense(data_of<T>(*call->outputs[0]), data_of<const T>(*call->inputs[0]), n,
                  Apply<Op>{});
      },
      [call](auto zero) {
        using T = decltype(zero);
        map<T, T>(*call->inputs[0], *call->outputs[0], Apply<Op>{});
      });
}

// ---------------------------------------------------------------------------
// AddN: out = x0 + x1 + ... in input order (the same order on every path).

// Elements per block of the dense path: the block of `out` stays in L1
// while every input is added to it.
constexpr int64_t kAddNBlock = 2048;

template <typename T>
void add_n(const xdev_kernel_call_t* call) {
  const xdev_tensor_t& out = *call->outputs[0];
  const uint32_t inputs = call->input_count;
  const int64_t n = element_count(out);
  T* const o = data_of<T>(out);
  bool dense = true;
  for (uint32_t i = 0; i < inputs && dense; ++i) dense = is_contiguous(*call->inputs[i]);
  if (dense) {
    parallel_range(n, [=](int64_t begin, int64_t end) {
      for (int64_t b = begin; b < end; b += kAddNBlock) {
        const int64_t e = std::min(end, b + kAddNBlock);
        T* __restrict po = o;
        const T* __restrict p0 = data_of<const T>(*call->inputs[0]);
        if (inputs == 1) {
          for (int64_t i = b; i < e; ++i) po[i] = p0[i];
          continue;
        }
        const T* __restrict p1 = data_of<const T>(*call->inputs[1]);
        for (int64_t i = b; i < e; ++i) po[i] = AddOp::apply(p0[i], p1[i]);
        for (uint32_t k = 2; k < inputs; ++k) {
          const T* __restrict pk = data_of<const T>(*call->inputs[k]);
          for (int64_t i = b; i < e; ++i) po[i] = AddOp::apply(po[i], pk[i]);
        }
      }
    });
    return;
  }
  // Some input is strided: out = x0, then out += xk for each further input.
  int64_t out_strides[XDEV_MAX_RANK];
  dense_strides(out, out_strides);
  constexpr int64_t kSize = sizeof(T);
  for (uint32_t k = 0; k < inputs; ++k) {
    const xdev_tensor_t& x = *call->inputs[k];
    const int64_t* const strides[2] = {out_strides, x.strides};
    const Layout<2> l = make_layout<2>(out.rank, out.shape, strides, {kSize, kSize});
    const int64_t sx = l.inner_stride(1) / kSize;
    char* const base[2] = {reinterpret_cast<char*>(o), reinterpret_cast<char*>(data_of<T>(x))};
    const bool first = k == 0;
    walk_all(l, base, [sx, first](char* const* p, int64_t count) {
      T* po = reinterpret_cast<T*>(p[0]);
      const T* px = reinterpret_cast<const T*>(p[1]);
      if (first) {
        for (int64_t i = 0; i < count; ++i) po[i] = px[i * sx];
      } else {
        for (int64_t i = 0; i < count; ++i) po[i] = AddOp::apply(po[i], px[i * sx]);
      }
    });
  }
}

}  // namespace

XDEV_CPU_KERNEL(kernel_add, binary_kernel<AddOp, kArith | kBool>)
XDEV_CPU_KERNEL(kernel_sub, binary_kernel<SubOp, kArith>)
XDEV_CPU_KERNEL(kernel_mul, binary_kernel<MulOp, kArith>)
XDEV_CPU_KERNEL(kernel_div, division_kernel<DivOp, kArith>)
XDEV_CPU_KERNEL(kernel_maximum, binary_kernel<MaximumOp, kArith>)
XDEV_CPU_KERNEL(kernel_minimum, binary_kernel<MinimumOp, kArith>)
XDEV_CPU_KERNEL(kernel_floor_div, division_kernel<FloorDivOp, kArith>)
XDEV_CPU_KERNEL(kernel_floor_mod, division_kernel<FloorModOp, kArith>)
XDEV_CPU_KERNEL(kernel_squared_difference, binary_kernel<SquaredDifferenceOp, kNumeric>)
XDEV_CPU_KERNEL(kernel_pow, binary_kernel<PowOp, kFloats>)
XDEV_CPU_KERNEL(kernel_neg, unary_kernel<NegOp, kSigned>)
XDEV_CPU_KERNEL(kernel_relu, unary_kernel<ReluOp, kArith>)

xdev_status_t* kernel_add_n(void*, const xdev_kernel_call_t* call) noexcept {
  xdev_dtype_t dtype;
  if (xdev_status_t* s = check_signature(call, -1, kArith, kNoAttrs, true, &dtype)) return s;
  return guarded_visit<kArith>(call, dtype, [call](auto zero) { add_n<decltype(zero)>(call); });
}

}  // namespace xdev::cpu
