// Comparisons and logic: Equal, NotEqual, Less, LessEqual, Greater,
// GreaterEqual (-> bool), LogicalAnd, LogicalOr, LogicalNot (bool), IsNan,
// IsFinite (float -> bool), Select (condition ? x : y) and ClipByValue.
//
// Inputs come broadcast to the output's shape (stride-0 views), any strides;
// zip, map and zip3 (strided.hpp) give the dense and strided paths and split
// large tensors over oneTBB's threads. NaN compares unequal to everything
// (IEEE, docs/ops.md "Semantics"); ClipByValue is min(max(x, lo), hi) with
// NaN x staying NaN, and hi winning where lo > hi.
#include <xdev/op_names.h>
#include <cmath>
#include <type_traits>

#include "kernels/common.hpp"
#include "kernels/kernels.hpp"
#include "kernels/strided.hpp"

namespace xdev::cpu {
namespace {

// Bool elements compare by truth (any nonzero byte is true).
template <typename T>
T value_of(T v) noexcept {
  if constexpr (std::is_same_v<T, boolean>) return v != 0 ? 1 : 0;
  return v;
}

#define XDEV_COMPARE_OP(Name, expr)                     \
  struct Name {                                        \
    template <typename T>                              \
    boolean operator()(T a, T b) const noexcept {      \
      const T x = value_of(a), y = value_of(b);        \
      return (expr) ? 1 : 0;                           \
    }                                                  \
  };
XDEV_COMPARE_OP(EqualOp, x == y)
XDEV_COMPARE_OP(NotEqualOp, x != y)
XDEV_COMPARE_OP(LessOp, x < y)
XDEV_COMPARE_OP(LessEqualOp, x <= y)
XDEV_COMPARE_OP(GreaterOp, x > y)
XDEV_COMPARE_OP(GreaterEqualOp, x >= y)
XDEV_COMPARE_OP(LogicalAndOp, x != 0 && y != 0)
XDEV_COMPARE_OP(LogicalOrOp, x != 0 || y != 0)
#undef XDEV_COMPARE_OP

// A binary op of inputs in kMask giving bool.
template <typename Op, uint64_t kMask>
xdev_status_t* compare_kernel(const xdev_kernel_call_t* call) noexcept {
  xdev_dtype_t dtype;
  if (xdev_status_t* s =
          check_signature(call, 2, kMask, kNoAttrs, true, &dtype, XDEV_DTYPE_BOOL)) {
    return s;
  }
  return guarded_visit<kMask>(call, dtype, [call](auto zero) {
    zip<decltype(zero), boolean>(*call->inputs[0], *call->inputs[1], *call->outputs[0], Op{});
  });
}

// A test of one input in kMask giving bool.
template <uint64_t kMask, typename F>
xdev_status_t* predicate_kernel(const xdev_kernel_call_t* call, const F& f) noexcept {
  xdev_dtype_t dtype;
  if (xdev_status_t* s =
          check_signature(call, 1, kMask, kNoAttrs, true, &dtype, XDEV_DTYPE_BOOL)) {
    return s;
  }
  return guarded_visit<kMask>(call, dtype, [call, &f](auto zero) {
    map<boolean, decltype(zero)>(*call->inputs[0], *call->outputs[0], f);
  });
}

struct ClipOp {
  template <typename T>
  T operator()(T x, T lo, T hi) const noexcept {
    if constexpr (std::is_floating_point_v<T>) {
      if (x != x) return x;
    }
    const T low = x < lo ? lo : x;
    return hi < low ? hi : low;
  }
};

}  // namespace

XDEV_CPU_KERNEL(kernel_equal, compare_kernel<EqualOp, kAllDtypes | kBytes>)
XDEV_CPU_KERNEL(kernel_not_equal, compare_kernel<NotEqualOp, kAllDtypes | kBytes>)
XDEV_CPU_KERNEL(kernel_less, compare_kernel<LessOp, kArith>)
XDEV_CPU_KERNEL(kernel_less_equal, compare_kernel<LessEqualOp, kArith>)
XDEV_CPU_KERNEL(kernel_greater, compare_kernel<GreaterOp, kArith>)
XDEV_CPU_KERNEL(kernel_greater_equal, compare_kernel<GreaterEqualOp, kArith>)
XDEV_CPU_KERNEL(kernel_logical_and, compare_kernel<LogicalAndOp, kBool>)
XDEV_CPU_KERNEL(kernel_logical_or, compare_kernel<LogicalOrOp, kBool>)

xdev_status_t* kernel_logical_not(void*, const xdev_kernel_call_t* call) noexcept {
  return predicate_kernel<kBool>(call, [](boolean v) -> boolean { return v != 0 ? 0 : 1; });
}
xdev_status_t* kernel_is_nan(void*, const xdev_kernel_call_t* call) noexcept {
  return predicate_kernel<kFloats>(call, [](auto v) -> boolean { return v != v ? 1 : 0; });
}
xdev_status_t* kernel_is_finite(void*, const xdev_kernel_call_t* call) noexcept {
  return predicate_kernel<kFloats>(call,
                                   [](auto v) -> boolean { return std::isfinite(v) ? 1 : 0; });
}

// Select: input 0 the bool condition, inputs 1 and 2 of one dtype, the
// output of theirs.
xdev_status_t* kernel_select(void*, const xdev_kernel_call_t* call) noexcept {
  if (xdev_status_t* s = check_call(call, 3)) return s;
  const char* op = XDEV_OP_Select;
  if (call->inputs[0]->dtype != XDEV_DTYPE_BOOL) {
    return kernel_fail(call, XDEV_STATUS_UNIMPLEMENTED,
                       "%s: the condition is %s; the cpu plugin has a kernel for bool only", op,
                       dtype_name(call->inputs[0]->dtype));
  }
  const xdev_dtype_t dtype = call->inputs[1]->dtype;
  if (!in_mask(dtype, kEveryDtype)) {
    return kernel_fail(call, XDEV_STATUS_UNIMPLEMENTED, "%s: the cpu plugin has no kernel for %s",
                       op, dtype_name(dtype));
  }
  if (call->inputs[2]->dtype != dtype || call->outputs[0]->dtype != dtype) {
    return kernel_fail(call, XDEV_STATUS_INVALID_ARGUMENT,
                       "%s: x is %s, y %s and the output %s; they must agree", op,
                       dtype_name(dtype), dtype_name(call->inputs[2]->dtype),
                       dtype_name(call->outputs[0]->dtype));
  }
  if (xdev_status_t* s = check_same_shapes(call)) return s;
  if (xdev_status_t* s = check_attr_names(call, kNoAttrs)) return s;
  // The chosen element is copied, not read: by its size, for every dtype.
  return guarded(call, [call, dtype] {
    visit_word(itemsize(dtype), [call](auto word) {
      using T = decltype(word);
      zip3<T, boolean, T, T>(*call->inputs[0], *call->inputs[1], *call->inputs[2],
                             *call->outputs[0], [](boolean c, T x, T y) { return c != 0 ? x : y; });
    });
  });
}

xdev_status_t* kernel_clip_by_value(void*, const xdev_kernel_call_t* call) noexcept {
  xdev_dtype_t dtype;
  if (xdev_status_t* s = check_signature(call, 3, kArith, kNoAttrs, true, &dtype)) return s;
  return guarded_visit<kArith>(call, dtype, [call](auto zero) {
    using T = decltype(zero);
    zip3<T, T, T, T>(*call->inputs[0], *call->inputs[1], *call->inputs[2], *call->outputs[0],
                     ClipOp{});
  });
}

}  // namespace xdev::cpu
