// Ops along one `axis`: ArgMax, ArgMin (int64 index of the first extreme,
// a NaN counting as the extreme, like numpy.argmax), CumSum (TF's
// `exclusive` and `reverse`; floats accumulate in double, integers wrap in
// uint64, each output rounded once), Softmax and LogSoftmax (the line's
// maximum subtracted first, Σ e^(x - max) accumulated in double).
//
// The input (any strides) is seen as `lines` = outer · inner lines of n
// elements along the axis; the output is dense. Lines are split over
// oneTBB's threads when the tensor is large (each line runs in one thread,
// so the results do not depend on the thread count).
#include <xdev/op_names.h>
#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>

#include <xdev/compensated_sum.hpp>

#include "kernels/common.hpp"
#include "kernels/kernels.hpp"
#include "kernels/rows.hpp"
#include "kernels/simd.hpp"

// simd.hpp's vectors in functions built for several targets: GCC notes the
// ABI of passing them by value, which no function here does (simd.hpp).
#pragma GCC diagnostic ignored "-Wpsabi"

namespace xdev::cpu {
namespace {

struct Lines {
  int64_t outer = 1, n = 1, inner = 1;
  int64_t axis_stride = 0;  // elements
  // Element offset of the first element of line `l` (l = o · inner + i).
  const xdev_tensor_t* x = nullptr;
  int32_t axis = 0;
  int64_t first(int64_t l) const noexcept {
    int64_t o = l / inner, i = l % inner, offset = 0;
    for (int32_t k = x->rank - 1; k > axis; --k) {
      offset += (i % x->shape[k]) * x->strides[k];
      i /= x->shape[k];
    }
    for (int32_t k = axis - 1; k >= 0; --k) {
      offset += (o % x->shape[k]) * x->strides[k];
      o /= x->shape[k];
    }
    return offset;
  }
};

// body(line) for every line, in parallel when the tensor is large.
template <typename Body>
void for_lines(const Lines& s, const Body& body) {
  for_rows(s.outer * s.inner, s.n, body);
}

// Checks one input of a dtype in `mask`, one output of `out_dtype` (INVALID:
// the input's), the known attributes, and reads `axis`.
xdev_status_t* check_axis_call(const xdev_kernel_call_t* call, const char* const* known,
                               xdev_dtype_t out_dtype, xdev_dtype_t* dtype, Lines* lines,
                               uint64_t mask = kNumeric) {
  if (xdev_status_t* s = check_call(call, 1)) return s;
  if (xdev_status_t* s = check_dtypes(call, mask, dtype, out_dtype)) return s;
  if (xdev_status_t* s = check_attr_names(call, known)) return s;
  const char* op = call->op != nullptr ? call->op : "kernel";
  const xdev_attr_t* a = find_attr(call, XDEV_ATTR_NAME_axis);
  const xdev_tensor_t& x = *call->inputs[0];
  if (a == nullptr || a->kind != XDEV_ATTR_INT || a->value.i < 0 || a->value.i >= x.rank) {
    return kernel_fail(call, XDEV_STATUS_INVALID_ARGUMENT,
                       "%s: the attribute 'axis' must be an int in [0, %" PRId32 ")", op, x.rank);
  }
  const auto axis = static_cast<int32_t>(a->value.i);
  const xdev_tensor_t& out = *call->outputs[0];
  const bool drops = out_dtype != XDEV_DTYPE_INVALID;
  bool shape_ok = out.rank == (drops ? x.rank - 1 : x.rank);
  for (int32_t k = 0, j = 0; k < x.rank && shape_ok; ++k) {
    if (k == axis && drops) continue;
    shape_ok = out.shape[j++] == x.shape[k];
  }
  if (!shape_ok) {
    return kernel_fail(call, XDEV_STATUS_INVALID_ARGUMENT,
                       "%s: the output's shape does not follow from the input's and axis %" PRId32,
                       op, axis);
  }
  if (drops && x.shape[axis] == 0 && element_count(out) > 0) {
    return kernel_fail(call, XDEV_STATUS_INVALID_ARGUMENT, "%s: axis %" PRId32 " is empty", op,
                       axis);
  }
  lines->x = &x;
  lines->axis = axis;
  for (int32_t k = 0; k < x.rank; ++k) {
    if (k < axis) lines->outer *= x.shape[k];
    if (k > axis) lines->inner *= x.shape[k];
  }
  lines->n = x.shape[axis];
  lines->axis_stride = x.strides[axis];
  return nullptr;
}

template <bool kMax>
xdev_status_t* arg_kernel(const xdev_kernel_call_t* call) noexcept {
  static constexpr const char* kKnown[] = {XDEV_ATTR_NAME_axis, nullptr};
  xdev_dtype_t dtype;
  Lines s;
  if (xdev_status_t* st =
          check_axis_call(call, kKnown, XDEV_DTYPE_INT64, &dtype, &s, kArith | kBool)) {
    return st;
  }
  return guarded_visit<kArith | kBool>(call, dtype, [&](auto zero) {
    using T = decltype(zero);
    const T* x = data_of<const T>(*call->inputs[0]);
    int64_t* o = data_of<int64_t>(*call->outputs[0]);
    if (element_count(*call->outputs[0]) == 0) return;
    for_lines(s, [&](int64_t l) {
      const T* p = x + s.first(l);
      int64_t best = 0;
      T v = p[0];
      for (int64_t k = 1; k < s.n; ++k) {
        if constexpr (std::is_floating_point_v<T>) {
          if (v != v) break;  // the first NaN wins
        }
        const T e = p[k * s.axis_stride];
        const bool better = kMax ? (e > v) : (e < v);
        bool nan = false;
        if constexpr (std::is_floating_point_v<T>) nan = e != e;
        if (better || nan) {
          v = e;
          best = k;
        }
      }
      o[l] = best;
    });
  });
}

// --- Softmax, LogSoftmax ------------------------------------------------------------

// One dense float32 line of n > 0 elements: Softmax (log false) or LogSoftmax
// into q (which may be p). Vectorised (simd.hpp: 16 lanes, the same bits on
// every processor; built for AVX-512, AVX2 and the baseline): the maximum,
// then e^(x - max) (within an ulp, simd::exp) and Σ e^(x - max) in one pass,
// compensated in double per lane and the lanes merged in order; then each
// output rounded once from double, as for float64.
XDEV_CPU_SIMD_CLONES void softmax_line_f32(const float* p, float* q, int64_t n, bool log) {
  using namespace simd;
  const int64_t whole = n / kLanes * kLanes;
  // The maximum of the numbers. A NaN is not looked for: its e^(x - top)
  // is NaN, so Σ is, and every output with it (the line is NaN, as the
  // contract says). Two sets of lanes, so that consecutive blocks do not
  // wait on each other.
  f32x16 top0 = splat(-std::numeric_limits<float>::infinity()), top1 = top0;
  int64_t k = 0;
  for (; k + 2 * kLanes <= whole; k += 2 * kLanes) {
    const f32x16 v0 = load(p + k), v1 = load(p + k + kLanes);
    top0 = select(v0 > top0, v0, top0);
    top1 = select(v1 > top1, v1, top1);
  }
  if (k < whole) {
    const f32x16 v = load(p + k);
    top0 = select(v > top0, v, top0);
  }
  float top = -std::numeric_limits<float>::infinity();
  for (int i = 0; i < kLanes; ++i) top = std::max({top, top0[i], top1[i]});
  for (k = whole; k < n; ++k) top = std::max(top, p[k]);
  // e^(x - top) (kept in q for Softmax) and its sum, in double in 16 lanes
  // (each lane the running sum of every 16th term). The terms are float32
  // values in [0, 1], so each lane is off by at most n/16 roundings of
  // double, a relative 2^-57 · n: below 1/100 of a float32 ulp for any line
  // shorter than 2^27, as good as the compensated sum float64 lines need.
  // The last partial block is padded with -inf, whose e^ is 0 and adds
  // nothing. (No lambda here: it would be built for the baseline only.)
  f64x8 low{}, high{};
  for (k = 0; k < n; k += kLanes) {
    f32x16 x;
    if (k < whole) {
      x = load(p + k);
    } else {
      float tail[kLanes];
      for (int64_t i = 0; i < kLanes; ++i) {
        tail[i] = k + i < n ? p[k + i] : -std::numeric_limits<float>::infinity();
      }
      x = load(tail);
    }
    const f32x16 e = exp(x - top);
    const F64x16 wide = widen(e);
    low += wide.low;
    high += wide.high;
    if (log) continue;
    if (k < whole) {
      store(q + k, e);
    } else {
      for (int64_t i = 0; k + i < n; ++i) q[k + i] = e[i];
    }
  }
  // The lanes folded in order, compensated.
  CompensatedSum total;
  for (int i = 0; i < 8; ++i) total.add(low[i]);
  for (int i = 0; i < 8; ++i) total.add(high[i]);
  const double sum = total.value();
  if (log) {
    const double log_sum = std::log(sum);
    for (k = 0; k < n; ++k) q[k] = static_cast<float>(static_cast<double>(p[k] - top) - log_sum);
  } else {
    const double inverse = 1.0 / sum;
    for (k = 0; k < n; ++k) q[k] = static_cast<float>(static_cast<double>(q[k]) * inverse);
  }
}

// Softmax (kLog false) or LogSoftmax along the axis, line by line. float32
// lines go through softmax_line_f32 (a strided line copied to a dense one
// and back); float64 lines are computed here with std::exp.
template <bool kLog>
xdev_status_t* softmax_kernel(const xdev_kernel_call_t* call) noexcept {
  static constexpr const char* kKnown[] = {XDEV_ATTR_NAME_axis, nullptr};
  xdev_dtype_t dtype;
  Lines s;
  if (xdev_status_t* st = check_axis_call(call, kKnown, XDEV_DTYPE_INVALID, &dtype, &s, kFloats)) {
    return st;
  }
  return guarded_visit<kFloats>(call, dtype, [&](auto zero) {
    using T = decltype(zero);
    const T* x = data_of<const T>(*call->inputs[0]);
    T* out = data_of<T>(*call->outputs[0]);
    if (s.n == 0) return;  // every line is empty: nothing to write
    const int64_t xs = s.axis_stride, qs = s.inner;
    if constexpr (std::is_same_v<T, float>) {
      for_lines(s, [&](int64_t l) {
        const float* p = x + s.first(l);
        float* q = out + (l / s.inner) * s.n * s.inner + l % s.inner;
        if (xs == 1 && qs == 1) {
          softmax_line_f32(p, q, s.n, kLog);
          return;
        }
        std::vector<float> line(static_cast<size_t>(s.n));
        for (int64_t k = 0; k < s.n; ++k) line[static_cast<size_t>(k)] = p[k * xs];
        softmax_line_f32(line.data(), line.data(), s.n, kLog);
        for (int64_t k = 0; k < s.n; ++k) q[k * qs] = line[static_cast<size_t>(k)];
      });
      return;
    }
    for_lines(s, [&](int64_t l) {
      const T* p = x + s.first(l);
      T* q = out + (l / s.inner) * s.n * s.inner + l % s.inner;
      T top = p[0];  // a NaN, once met, stays: the whole line is NaN
      for (int64_t k = 1; k < s.n; ++k) {
        const T e = p[k * xs];
        if (e > top || e != e) top = e;
      }
      // Compensated: a plain running sum of 100000 float64 terms differed
      // from the GPU's tree of partial sums by ~300 ulp.
      CompensatedSum compensated;
      for (int64_t k = 0; k < s.n; ++k) {
        const T e = std::exp(p[k * xs] - top);
        if constexpr (!kLog) q[k * qs] = e;
        compensated.add(static_cast<double>(e));
      }
      const double sum = compensated.value();
      if constexpr (kLog) {
        const double log_sum = std::log(sum);
        for (int64_t k = 0; k < s.n; ++k) {
          q[k * qs] = static_cast<T>(static_cast<double>(p[k * xs] - top) - log_sum);
        }
      } else {
        const double inverse = 1.0 / sum;
        for (int64_t k = 0; k < s.n; ++k) {
          q[k * qs] = static_cast<T>(static_cast<double>(q[k * qs]) * inverse);
        }
      }
    });
  });
}

}  // namespace

XDEV_CPU_KERNEL(kernel_softmax, softmax_kernel<false>)
XDEV_CPU_KERNEL(kernel_log_softmax, softmax_kernel<true>)
XDEV_CPU_KERNEL(kernel_arg_max, arg_kernel<true>)
XDEV_CPU_KERNEL(kernel_arg_min, arg_kernel<false>)

xdev_status_t* kernel_cum_sum(void*, const xdev_kernel_call_t* call) noexcept {
  static constexpr const char* kKnown[] = {XDEV_ATTR_NAME_axis, XDEV_ATTR_NAME_exclusive, XDEV_ATTR_NAME_reverse, nullptr};
  xdev_dtype_t dtype;
  Lines s;
  if (xdev_status_t* st = check_axis_call(call, kKnown, XDEV_DTYPE_INVALID, &dtype, &s, kArith)) {
    return st;
  }
  bool exclusive = false, reverse = false;
  if (xdev_status_t* st = attr_bool(call, XDEV_ATTR_NAME_exclusive, false, &exclusive)) return st;
  if (xdev_status_t* st = attr_bool(call, XDEV_ATTR_NAME_reverse, false, &reverse)) return st;
  return guarded_visit<kArith>(call, dtype, [&](auto zero) {
    using T = decltype(zero);
    using Acc = std::conditional_t<std::is_floating_point_v<T>, double, uint64_t>;
    const T* x = data_of<const T>(*call->inputs[0]);
    T* out = data_of<T>(*call->outputs[0]);
    for_lines(s, [&](int64_t l) {
      const T* p = x + s.first(l);
      // The output is dense: element k of line (o, i) is at (o · n + k) · inner + i.
      T* q = out + (l / s.inner) * s.n * s.inner + l % s.inner;
      Acc acc = 0;
      for (int64_t j = 0; j < s.n; ++j) {
        const int64_t k = reverse ? s.n - 1 - j : j;
        Acc v;
        if constexpr (std::is_floating_point_v<T>) v = static_cast<double>(p[k * s.axis_stride]);
        else v = static_cast<uint64_t>(static_cast<int64_t>(p[k * s.axis_stride]));
        if (!exclusive) acc += v;
        if constexpr (std::is_floating_point_v<T>) q[k * s.inner] = static_cast<T>(acc);
        else q[k * s.inner] = static_cast<T>(static_cast<int64_t>(acc));
        if (exclusive) acc += v;
      }
    });
  });
}

}  // namespace xdev::cpu
