// Reductions and ops along one axis (docs/ops.md "Reductions", "Along one
// axis"): Max, Min, Prod, Any, All, LogSumExp, ArgMax, ArgMin, Softmax,
// LogSoftmax, CumSum.
//
// One kernel shape for all but CumSum: the output elements ("lines", the
// kept index space of a ReduceLayout) are spread over the grid in segments
// of `lanes` threads (1, 32 or 256: segment_plan.hpp); each lane combines
// the line's elements r = lane, lane + lanes, ... and the segment then
// combines its lanes in a fixed tree in shared memory, so results do not
// depend on timing (no atomics). The reducers are the cpu plugin's
// (plugins/cpu/kernels/reduce.cpp): Prod in double (floats) or wrapping
// uint64 (integers), Max/Min NaN-propagating, LogSumExp the stable (max,
// sum) pair, ArgMax/ArgMin the first extreme index with NaN winning.
// Softmax/LogSoftmax take three passes over the line in one kernel: the
// maximum, Σ e^(x - max) in double (compensated), then the outputs (e^(x - max) in the
// element type, as the cpu plugin).
//
// CumSum is a thread per line in axis order (floats accumulate in double and
// docs/ops.md makes the result exact given that order, so it is not split).
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "device_math.cuh"
#include "indexing.hpp"
#include "kernel_util.cuh"
#include "launch.hpp"
#include "segment.cuh"

namespace xdev::cuda {
namespace {

// Reducers: Acc, identity, lift (an element and its index in the line),
// combine (associative), finish (the output element).
template <typename T>
struct ProdReducer {
  using Acc = WideAcc<T>;
  using Out = T;
  __device__ static Acc identity() { return Acc{1}; }
  __device__ static Acc lift(T v, int64_t) { return widen(v); }
  __device__ static Acc combine(Acc a, Acc b) { return a * b; }
  __device__ static Out finish(Acc a) { return narrow<T>(a); }
};

template <typename T, bool kMax>
struct ExtremumReducer {
  using Acc = T;
  using Out = T;
  __device__ static Acc identity() {
    if constexpr (std::is_floating_point_v<T>) {
      return kMax ? -static_cast<T>(INFINITY) : static_cast<T>(INFINITY);
    } else {
      return kMax ? std::numeric_limits<T>::lowest() : std::numeric_limits<T>::max();
    }
  }
  __device__ static Acc lift(T v, int64_t) { return v; }
  __device__ static Acc combine(Acc a, Acc b) {
    if (is_nan(a)) return a;
    if (is_nan(b)) return b;
    return (kMax ? a < b : b < a) ? b : a;
  }
  __device__ static Out finish(Acc a) { return a; }
};

template <bool kAny>
struct LogicReducer {
  using Acc = Bool;
  using Out = Bool;
  __device__ static Acc identity() { return kAny ? 0 : 1; }
  __device__ static Acc lift(Bool v, int64_t) { return v != 0 ? 1 : 0; }
  __device__ static Acc combine(Acc a, Acc b) { return kAny ? (a | b) : (a & b); }
  __device__ static Out finish(Acc a) { return a; }
};

// m + ln s: s the sum of e^(x - m) over the elements so far, m their
// maximum; combining rescales the smaller part. NaN anywhere gives NaN, +inf
// gives +inf, zero elements (or all -inf) -inf.
template <typename T>
struct LogSumExpReducer {
  struct Acc {
    double m;
    double s;
  };
  using Out = T;
  __device__ static Acc identity() { return Acc{-static_cast<double>(INFINITY), 0.0}; }
  __device__ static Acc lift(T v, int64_t) { return Acc{static_cast<double>(v), 1.0}; }
  __device__ static Acc combine(Acc a, Acc b) {
    if (a.m != a.m) return a;
    if (b.m != b.m) return b;
    if (a.m < b.m) {
      const Acc t = a;
      a = b;
      b = t;
    }
    if (b.s == 0.0) return a;
    if (isinf(a.m)) return Acc{a.m, a.s + (b.m == a.m ? b.s : 0.0)};  // both -inf, or +inf
    return Acc{a.m, a.s + b.s * exp(b.m - a.m)};
  }
  __device__ static Out finish(Acc a) {
    if (a.m != a.m || isinf(a.m)) return static_cast<T>(a.m);
    return static_cast<T>(a.m + log(a.s));
  }
};

// The first index of the largest (kMax) or smallest element; the first NaN
// wins over everything.
template <typename T, bool kMax>
struct ArgReducer {
  struct Acc {
    T v;
    int64_t i;  // -1: no element yet
  };
  using Out = int64_t;
  __device__ static Acc identity() { return Acc{T{}, -1}; }
  __device__ static Acc lift(T v, int64_t i) { return Acc{v, i}; }
  __device__ static Acc combine(Acc a, Acc b) {
    if (a.i < 0) return b;
    if (b.i < 0) return a;
    const bool an = is_nan(a.v), bn = is_nan(b.v);
    if (an || bn) {
      if (an && bn) return a.i < b.i ? a : b;
      return an ? a : b;
    }
    if (kMax ? a.v > b.v : a.v < b.v) return a;
    if (kMax ? b.v > a.v : b.v < a.v) return b;
    return a.i < b.i ? a : b;
  }
  __device__ static Out finish(Acc a) { return a.i < 0 ? 0 : a.i; }
};

template <typename T, typename R>
__global__ void line_reduce_kernel(ReduceLayout l, const T* __restrict__ x,
                                   typename R::Out* __restrict__ out, int lanes) {
  using Acc = typename R::Acc;
  Acc* shared = shared_slots<Acc>();
  auto combine = [](Acc a, Acc b) { return R::combine(a, b); };
  for_segment_lines(l.outer_count, lanes, [&](int64_t line, bool active, int lane) {
    Acc acc = R::identity();
    if (active) {
      const T* p = x + outer_offset<int64_t>(l, line);
      for (int64_t r = lane; r < l.inner_count; r += lanes) {
        acc = R::combine(acc, R::lift(p[inner_offset<int64_t>(l, r)], r));
      }
    }
    acc = segment_reduce(acc, shared, lanes, combine);
    if (active && lane == 0) out[line] = R::finish(acc);
  });
}

template <typename T, bool kLog>
__global__ void softmax_kernel(ReduceLayout in, ReduceLayout ol, const T* __restrict__ x,
                               T* __restrict__ out, int lanes) {
  using Max = ExtremumReducer<T, true>;
  T* top_slots = shared_slots<T>();
  const int64_t n = in.inner_count;
  for_segment_lines(in.outer_count, lanes, [&](int64_t line, bool active, int lane) {
    const T* p = active ? x + outer_offset<int64_t>(in, line) : x;
    T* q = active ? out + outer_offset<int64_t>(ol, line) : out;
    T top = Max::identity();
    if (active) {
      for (int64_t r = lane; r < n; r += lanes)
        top = Max::combine(top, p[inner_offset<int64_t>(in, r)]);
    }
    top = segment_reduce(top, top_slots, lanes, [](T a, T b) { return Max::combine(a, b); });
    CompensatedSum partial;
    if (active) {
      for (int64_t r = lane; r < n; r += lanes) {
        partial.add(static_cast<double>(m_exp(p[inner_offset<int64_t>(in, r)] - top)));
      }
    }
    const double sum = segment_sum(partial, lanes);
    if (active) {
      if constexpr (kLog) {
        const double log_sum = log(sum);
        for (int64_t r = lane; r < n; r += lanes) {
          q[inner_offset<int64_t>(ol, r)] =
              static_cast<T>(static_cast<double>(p[inner_offset<int64_t>(in, r)] - top) - log_sum);
        }
      } else {
        const double inverse = 1.0 / sum;
        for (int64_t r = lane; r < n; r += lanes) {
          const T e = m_exp(p[inner_offset<int64_t>(in, r)] - top);
          q[inner_offset<int64_t>(ol, r)] = static_cast<T>(static_cast<double>(e) * inverse);
        }
      }
    }
  });
}

template <typename T>
__global__ void cumsum_kernel(ReduceLayout in, ReduceLayout ol, bool exclusive, bool reverse,
                              const T* __restrict__ x, T* __restrict__ out) {
  const int64_t n = in.inner_count;
  for (int64_t line = first_index<int64_t>(); line < in.outer_count;
       line += grid_stride<int64_t>()) {
    const T* p = x + outer_offset<int64_t>(in, line);
    T* q = out + outer_offset<int64_t>(ol, line);
    WideAcc<T> acc = 0;
    for (int64_t j = 0; j < n; ++j) {
      const int64_t k = reverse ? n - 1 - j : j;
      const WideAcc<T> v = widen(p[inner_offset<int64_t>(in, k)]);
      if (!exclusive) acc += v;
      q[inner_offset<int64_t>(ol, k)] = narrow<T>(acc);
      if (exclusive) acc += v;
    }
  }
}

template <typename T, typename R>
cudaError_t run_line_reduce(const ReduceLayout& l, const void* x, void* out, int lanes,
                            cudaStream_t stream) {
  line_reduce_kernel<T, R><<<segment_grid(l.outer_count, lanes), kThreads, 0, stream>>>(
      l, static_cast<const T*>(x), static_cast<typename R::Out*>(out), lanes);
  return cudaGetLastError();
}

}  // namespace

cudaError_t launch_line_reduce(LineReduceOp op, xdev_dtype_t dtype, const ReduceLayout& layout,
                               const void* x, void* out, int lanes, cudaStream_t stream) {
  if (!valid_lanes(lanes)) return cudaErrorInvalidValue;
  if (layout.outer_count <= 0) return cudaSuccess;
  return visit_dtype(dtype, [&](auto zero) -> cudaError_t {
    using T = decltype(zero);
    constexpr bool kFloat = std::is_floating_point_v<T>;
    constexpr bool kBool = std::is_same_v<T, Bool>;
    switch (op) {
      case LineReduceOp::kAny:
      case LineReduceOp::kAll:
        if constexpr (kBool) {
          return op == LineReduceOp::kAny
                     ? run_line_reduce<T, LogicReducer<true>>(layout, x, out, lanes, stream)
                     : run_line_reduce<T, LogicReducer<false>>(layout, x, out, lanes, stream);
        }
        break;
      case LineReduceOp::kLogSumExp:
        if constexpr (kFloat) {
          return run_line_reduce<T, LogSumExpReducer<T>>(layout, x, out, lanes, stream);
        }
        break;
      default:
        if constexpr (!kBool) {
          switch (op) {
            case LineReduceOp::kMax:
              return run_line_reduce<T, ExtremumReducer<T, true>>(layout, x, out, lanes, stream);
            case LineReduceOp::kMin:
              return run_line_reduce<T, ExtremumReducer<T, false>>(layout, x, out, lanes, stream);
            case LineReduceOp::kProd:
              return run_line_reduce<T, ProdReducer<T>>(layout, x, out, lanes, stream);
            case LineReduceOp::kArgMax:
              return run_line_reduce<T, ArgReducer<T, true>>(layout, x, out, lanes, stream);
            case LineReduceOp::kArgMin:
              return run_line_reduce<T, ArgReducer<T, false>>(layout, x, out, lanes, stream);
            default: break;
          }
        }
        break;
    }
    return cudaErrorNotSupported;
  });
}

cudaError_t launch_softmax(bool log, xdev_dtype_t dtype, const ReduceLayout& in,
                           const ReduceLayout& out_layout, const void* x, void* out, int lanes,
                           cudaStream_t stream) {
  if (!valid_lanes(lanes)) return cudaErrorInvalidValue;
  if (in.outer_count <= 0 || in.inner_count <= 0) return cudaSuccess;
  return visit_float_dtype(dtype, [&](auto zero) -> cudaError_t {
    using T = decltype(zero);
    const unsigned grid = segment_grid(in.outer_count, lanes);
    const auto* px = static_cast<const T*>(x);
    auto* po = static_cast<T*>(out);
    if (log) {
      softmax_kernel<T, true><<<grid, kThreads, 0, stream>>>(in, out_layout, px, po, lanes);
    } else {
      softmax_kernel<T, false><<<grid, kThreads, 0, stream>>>(in, out_layout, px, po, lanes);
    }
    return cudaGetLastError();
  });
}

cudaError_t launch_cumsum(xdev_dtype_t dtype, const ReduceLayout& in,
                          const ReduceLayout& out_layout, bool exclusive, bool reverse,
                          const void* x, void* out, cudaStream_t stream) {
  if (in.outer_count <= 0 || in.inner_count <= 0) return cudaSuccess;
  return visit_number_dtype(dtype, [&](auto zero) -> cudaError_t {
    using T = decltype(zero);
    cumsum_kernel<T><<<grid_for(in.outer_count), kThreads, 0, stream>>>(
        in, out_layout, exclusive, reverse, static_cast<const T*>(x), static_cast<T*>(out));
    return cudaGetLastError();
  });
}

}  // namespace xdev::cuda
