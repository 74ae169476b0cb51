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
// behaviour). Integer Div rounds toward zero, x / 0 = 0 and MIN / -1 wraps to
// MIN (docs/ops.md). Bool Add is logical or. Relu maps NaN to 0.
#include <cmath>
#include <type_traits>

#include "kernels/common.hpp"
#include "kernels/kernels.hpp"
#include "kernels/strided.hpp"

namespace xdev::cpu {
namespace {

template <typename T>
using Unsigned = std::make_unsigned_t<T>;

struct AddOp {
  template <typename T>
  static T apply(T a, T b) noexcept {
    if constexpr (std::is_same_v<T, boolean>) {
      return (a | b) != 0 ? 1 : 0;
    } else if constexpr (std::is_integral_v<T>) {
      return static_cast<T>(static_cast<Unsigned<T>>(a) + static_cast<Unsigned<T>>(b));
    } else {
      return a + b;
    }
  }
};

struct SubOp {
  template <typename T>
  static T apply(T a, T b) noexcept {
    if constexpr (std::is_integral_v<T>) {
      return static_cast<T>(static_cast<Unsigned<T>>(a) - static_cast<Unsigned<T>>(b));
    } else {
      return a - b;
    }
  }
};

struct MulOp {
  template <typename T>
  static T apply(T a, T b) noexcept {
    if constexpr (std::is_integral_v<T>) {
      return static_cast<T>(static_cast<Unsigned<T>>(a) * static_cast<Unsigned<T>>(b));
    } else {
      return a * b;
    }
  }
};

struct DivOp {
  template <typename T>
  static T apply(T a, T b) noexcept {
    if constexpr (std::is_integral_v<T>) {
      if (b == 0) return 0;
      if (b == -1) return static_cast<T>(Unsigned<T>{0} - static_cast<Unsigned<T>>(a));
      return a / b;  // C++ truncates toward zero
    } else {
      return a / b;
    }
  }
};

struct NegOp {
  template <typename T>
  static T apply(T a) noexcept {
    if constexpr (std::is_integral_v<T>) {
      return static_cast<T>(Unsigned<T>{0} - static_cast<Unsigned<T>>(a));
    } else {
      return -a;
    }
  }
};

// Issue 13's binary ops (docs/ops.md "Semantics"): Maximum and Minimum
// propagate NaN (like tf.maximum); FloorDiv and FloorMod round toward -inf
// (the remainder has the divisor's sign), a zero integer divisor gives 0 and
// MIN / -1 wraps to MIN; SquaredDifference is (x - y)^2, wrapping for ints;
// Pow is float-only.
struct MaximumOp {
  template <typename T>
  static T apply(T a, T b) noexcept {
    if constexpr (std::is_floating_point_v<T>) {
      if (a != a) return a;
      if (b != b) return b;
    }
    return a < b ? b : a;
  }
};

struct MinimumOp {
  template <typename T>
  static T apply(T a, T b) noexcept {
    if constexpr (std::is_floating_point_v<T>) {
      if (a != a) return a;
      if (b != b) return b;
    }
    return b < a ? b : a;
  }
};

struct FloorDivOp {
  template <typename T>
  static T apply(T a, T b) noexcept {
    if constexpr (std::is_integral_v<T>) {
      if (b == 0) return 0;
      if (b == -1) return static_cast<T>(Unsigned<T>{0} - static_cast<Unsigned<T>>(a));
      const T q = a / b;
      return (a % b != 0 && ((a < 0) != (b < 0))) ? static_cast<T>(q - 1) : q;
    } else {
      return std::floor(a / b);
    }
  }
};

struct FloorModOp {
  template <typename T>
  static T apply(T a, T b) noexcept {
    if constexpr (std::is_integral_v<T>) {
      if (b == 0 || b == -1) return 0;
      const T r = a % b;
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
    if constexpr (std::is_integral_v<T>) {
      const auto d = static_cast<Unsigned<T>>(a) - static_cast<Unsigned<T>>(b);
      return static_cast<T>(d * d);
    } else {
      return (a - b) * (a - b);
    }
  }
};

struct PowOp {
  template <typename T>
  static T apply(T a, T b) noexcept {
    if constexpr (std::is_floating_point_v<T>) {
      return std::pow(a, b);
    } else {
      return 0;  // not registered for integers
    }
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
// Binary

template <typename T, typename Op>
void binary(const xdev_tensor_t& x, const xdev_tensor_t& y, const xdev_tensor_t& out) {
  const int64_t n = num_elements(out);
  T* const o = data_of<T>(out);
  const T* const a = data_of<const T>(x);
  const T* const b = data_of<const T>(y);
  const bool x_dense = is_contiguous(x);
  const bool y_dense = is_contiguous(y);
  if (x_dense && y_dense) {
    parallel_range(n, [=](int64_t begin, int64_t end) {
      T* __restrict po = o;
      const T* __restrict pa = a;
      const T* __restrict pb = b;
      for (int64_t i = begin; i < end; ++i) po[i] = Op::apply(pa[i], pb[i]);
    });
    return;
  }
  if (x_dense && is_broadcast_scalar(y)) {
    const T s = *b;
    parallel_range(n, [=](int64_t begin, int64_t end) {
      T* __restrict po = o;
      const T* __restrict pa = a;
      for (int64_t i = begin; i < end; ++i) po[i] = Op::apply(pa[i], s);
    });
    return;
  }
  if (y_dense && is_broadcast_scalar(x)) {
    const T s = *a;
    parallel_range(n, [=](int64_t begin, int64_t end) {
      T* __restrict po = o;
      const T* __restrict pb = b;
      for (int64_t i = begin; i < end; ++i) po[i] = Op::apply(s, pb[i]);
    });
    return;
  }
  int64_t out_strides[XDEV_MAX_RANK];
  int64_t expected = 1;
  for (int32_t k = out.rank - 1; k >= 0; --k) {
    out_strides[k] = expected;
    expected *= out.shape[k];
  }
  constexpr int64_t kSize = sizeof(T);
  const int64_t* const strides[3] = {out_strides, x.strides, y.strides};
  const Layout<3> l = make_layout<3>(out.rank, out.shape, strides, {kSize, kSize, kSize});
  const int64_t sa = l.inner_stride(1) / kSize;
  const int64_t sb = l.inner_stride(2) / kSize;
  char* const base[3] = {reinterpret_cast<char*>(o), reinterpret_cast<char*>(const_cast<T*>(a)),
                         reinterpret_cast<char*>(const_cast<T*>(b))};
  // The output is dense, so its innermost stride is one element.
  walk_all(l, base, [sa, sb](char* const* p, int64_t count) {
    T* __restrict po = reinterpret_cast<T*>(p[0]);
    const T* __restrict pa = reinterpret_cast<const T*>(p[1]);
    const T* __restrict pb = reinterpret_cast<const T*>(p[2]);
    if (sa == 1 && sb == 1) {
      for (int64_t i = 0; i < count; ++i) po[i] = Op::apply(pa[i], pb[i]);
    } else if (sa == 1 && sb == 0) {
      const T s = *pb;
      for (int64_t i = 0; i < count; ++i) po[i] = Op::apply(pa[i], s);
    } else if (sa == 0 && sb == 1) {
      const T s = *pa;
      for (int64_t i = 0; i < count; ++i) po[i] = Op::apply(s, pb[i]);
    } else {
      for (int64_t i = 0; i < count; ++i) po[i] = Op::apply(pa[i * sa], pb[i * sb]);
    }
  });
}

constexpr const char* kNoAttrs[] = {nullptr};

// Dense inputs of the output's shape: one flat loop, with no further checks.
template <typename T, typename Op>
void binary_dense(const xdev_kernel_call_t* call, int64_t n) {
  T* const o = data_of<T>(*call->outputs[0]);
  const T* const a = data_of<const T>(*call->inputs[0]);
  const T* const b = data_of<const T>(*call->inputs[1]);
  parallel_range(n, [=](int64_t begin, int64_t end) {
    T* __restrict po = o;
    const T* __restrict pa = a;
    const T* __restrict pb = b;
    for (int64_t i = begin; i < end; ++i) po[i] = Op::apply(pa[i], pb[i]);
  });
}

template <typename Op>
xdev_status_t* binary_kernel(const xdev_kernel_call_t* call, uint64_t mask) noexcept {
  try {
    xdev_dtype_t dtype;
    int64_t n;
    if (dense_elementwise_call<2>(call, mask, &dtype, &n)) {
      switch (dtype) {
        case XDEV_DTYPE_FLOAT32:
          binary_dense<float, Op>(call, n);
          break;
        case XDEV_DTYPE_FLOAT64:
          binary_dense<double, Op>(call, n);
          break;
        case XDEV_DTYPE_INT32:
          binary_dense<int32_t, Op>(call, n);
          break;
        case XDEV_DTYPE_INT64:
          binary_dense<int64_t, Op>(call, n);
          break;
        case XDEV_DTYPE_BOOL:
          if constexpr (std::is_same_v<Op, AddOp>) binary_dense<boolean, Op>(call, n);
          break;
        default:
          break;
      }
      return nullptr;
    }
  } catch (...) {
    return kernel_unexpected(call);
  }
  if (xdev_status_t* s = check_call(call, 2)) return s;
  xdev_dtype_t dtype;
  if (xdev_status_t* s = check_dtypes(call, mask, &dtype)) return s;
  if (xdev_status_t* s = check_same_shapes(call)) return s;
  if (xdev_status_t* s = check_attr_names(call, kNoAttrs)) return s;
  try {
    const xdev_tensor_t& x = *call->inputs[0];
    const xdev_tensor_t& y = *call->inputs[1];
    const xdev_tensor_t& out = *call->outputs[0];
    switch (dtype) {
      case XDEV_DTYPE_FLOAT32:
        binary<float, Op>(x, y, out);
        break;
      case XDEV_DTYPE_FLOAT64:
        binary<double, Op>(x, y, out);
        break;
      case XDEV_DTYPE_INT32:
        binary<int32_t, Op>(x, y, out);
        break;
      case XDEV_DTYPE_INT64:
        binary<int64_t, Op>(x, y, out);
        break;
      case XDEV_DTYPE_BOOL:
        if constexpr (std::is_same_v<Op, AddOp>) binary<boolean, Op>(x, y, out);
        break;
      default:
        break;
    }
    return nullptr;
  } catch (...) {
    return kernel_unexpected(call);
  }
}

// ---------------------------------------------------------------------------
// Unary

template <typename T, typename Op>
void unary(const xdev_tensor_t& x, const xdev_tensor_t& out) {
  const int64_t n = num_elements(out);
  T* const o = data_of<T>(out);
  const T* const a = data_of<const T>(x);
  if (is_contiguous(x)) {
    parallel_range(n, [=](int64_t begin, int64_t end) {
      T* __restrict po = o;
      const T* __restrict pa = a;
      for (int64_t i = begin; i < end; ++i) po[i] = Op::apply(pa[i]);
    });
    return;
  }
  int64_t out_strides[XDEV_MAX_RANK];
  int64_t expected = 1;
  for (int32_t k = out.rank - 1; k >= 0; --k) {
    out_strides[k] = expected;
    expected *= out.shape[k];
  }
  constexpr int64_t kSize = sizeof(T);
  const int64_t* const strides[2] = {out_strides, x.strides};
  const Layout<2> l = make_layout<2>(out.rank, out.shape, strides, {kSize, kSize});
  const int64_t sa = l.inner_stride(1) / kSize;
  char* const base[2] = {reinterpret_cast<char*>(o), reinterpret_cast<char*>(const_cast<T*>(a))};
  walk_all(l, base, [sa](char* const* p, int64_t count) {
    T* __restrict po = reinterpret_cast<T*>(p[0]);
    const T* __restrict pa = reinterpret_cast<const T*>(p[1]);
    if (sa == 1) {
      for (int64_t i = 0; i < count; ++i) po[i] = Op::apply(pa[i]);
    } else {
      for (int64_t i = 0; i < count; ++i) po[i] = Op::apply(pa[i * sa]);
    }
  });
}

template <typename Op>
xdev_status_t* unary_kernel(const xdev_kernel_call_t* call) noexcept {
  try {
    xdev_dtype_t dtype;
    int64_t n;
    if (dense_elementwise_call<1>(call, kNumeric, &dtype, &n)) {
      auto dense = [call, n](auto zero) {
        using T = decltype(zero);
        T* const o = data_of<T>(*call->outputs[0]);
        const T* const a = data_of<const T>(*call->inputs[0]);
        parallel_range(n, [=](int64_t begin, int64_t end) {
          T* __restrict po = o;
          const T* __restrict pa = a;
          for (int64_t i = begin; i < end; ++i) po[i] = Op::apply(pa[i]);
        });
      };
      switch (dtype) {
        case XDEV_DTYPE_FLOAT32:
          dense(float{});
          break;
        case XDEV_DTYPE_FLOAT64:
          dense(double{});
          break;
        case XDEV_DTYPE_INT32:
          dense(int32_t{});
          break;
        case XDEV_DTYPE_INT64:
          dense(int64_t{});
          break;
        default:
          break;
      }
      return nullptr;
    }
  } catch (...) {
    return kernel_unexpected(call);
  }
  if (xdev_status_t* s = check_call(call, 1)) return s;
  xdev_dtype_t dtype;
  if (xdev_status_t* s = check_dtypes(call, kNumeric, &dtype)) return s;
  if (xdev_status_t* s = check_same_shapes(call)) return s;
  if (xdev_status_t* s = check_attr_names(call, kNoAttrs)) return s;
  try {
    const xdev_tensor_t& x = *call->inputs[0];
    const xdev_tensor_t& out = *call->outputs[0];
    switch (dtype) {
      case XDEV_DTYPE_FLOAT32:
        unary<float, Op>(x, out);
        break;
      case XDEV_DTYPE_FLOAT64:
        unary<double, Op>(x, out);
        break;
      case XDEV_DTYPE_INT32:
        unary<int32_t, Op>(x, out);
        break;
      case XDEV_DTYPE_INT64:
        unary<int64_t, Op>(x, out);
        break;
      default:
        break;
    }
    return nullptr;
  } catch (...) {
    return kernel_unexpected(call);
  }
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
  const int64_t n = num_elements(out);
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
  int64_t expected = 1;
  for (int32_t k = out.rank - 1; k >= 0; --k) {
    out_strides[k] = expected;
    expected *= out.shape[k];
  }
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

xdev_status_t* kernel_add(void*, const xdev_kernel_call_t* call) noexcept {
  return binary_kernel<AddOp>(call, kNumeric | kBool);
}
xdev_status_t* kernel_sub(void*, const xdev_kernel_call_t* call) noexcept {
  return binary_kernel<SubOp>(call, kNumeric);
}
xdev_status_t* kernel_mul(void*, const xdev_kernel_call_t* call) noexcept {
  return binary_kernel<MulOp>(call, kNumeric);
}
xdev_status_t* kernel_div(void*, const xdev_kernel_call_t* call) noexcept {
  return binary_kernel<DivOp>(call, kNumeric);
}
xdev_status_t* kernel_maximum(void*, const xdev_kernel_call_t* call) noexcept {
  return binary_kernel<MaximumOp>(call, kNumeric);
}
xdev_status_t* kernel_minimum(void*, const xdev_kernel_call_t* call) noexcept {
  return binary_kernel<MinimumOp>(call, kNumeric);
}
xdev_status_t* kernel_floor_div(void*, const xdev_kernel_call_t* call) noexcept {
  return binary_kernel<FloorDivOp>(call, kNumeric);
}
xdev_status_t* kernel_floor_mod(void*, const xdev_kernel_call_t* call) noexcept {
  return binary_kernel<FloorModOp>(call, kNumeric);
}
xdev_status_t* kernel_squared_difference(void*, const xdev_kernel_call_t* call) noexcept {
  return binary_kernel<SquaredDifferenceOp>(call, kNumeric);
}
xdev_status_t* kernel_pow(void*, const xdev_kernel_call_t* call) noexcept {
  return binary_kernel<PowOp>(call, kFloats);
}
xdev_status_t* kernel_neg(void*, const xdev_kernel_call_t* call) noexcept {
  return unary_kernel<NegOp>(call);
}
xdev_status_t* kernel_relu(void*, const xdev_kernel_call_t* call) noexcept {
  return unary_kernel<ReluOp>(call);
}

xdev_status_t* kernel_add_n(void*, const xdev_kernel_call_t* call) noexcept {
  if (xdev_status_t* s = check_call(call, -1)) return s;
  xdev_dtype_t dtype;
  if (xdev_status_t* s = check_dtypes(call, kNumeric, &dtype)) return s;
  if (xdev_status_t* s = check_same_shapes(call)) return s;
  if (xdev_status_t* s = check_attr_names(call, kNoAttrs)) return s;
  try {
    switch (dtype) {
      case XDEV_DTYPE_FLOAT32:
        add_n<float>(call);
        break;
      case XDEV_DTYPE_FLOAT64:
        add_n<double>(call);
        break;
      case XDEV_DTYPE_INT32:
        add_n<int32_t>(call);
        break;
      case XDEV_DTYPE_INT64:
        add_n<int64_t>(call);
        break;
      default:
        break;
    }
    return nullptr;
  } catch (...) {
    return kernel_unexpected(call);
  }
}

}  // namespace xdev::cpu
