// Reductions over sorted, unique `axes`, with `keepdims`: Sum, Mean, Prod,
// Max, Min (numbers), Any, All (bool), LogSumExp (floats). Each is a reducer
// (identity, lift, combine, finish) run by the paths below.
//
// The input's dims are split into kept ones (the output's, row-major) and
// reduced ones; size-1 dims are dropped and neighbours of one kind that are
// contiguous in the input merge. Then one of two paths:
//
//  A "inner": for each output, sum its reduced elements (the innermost dim
//    is reduced, e.g. row sums or a full sum). The elements are summed in
//    blocks of kBlock in row-major order, each block with 8 running partial
//    sums (vectorizable), the block sums then added in order. The blocks are
//    the same whether they run on one thread or many, so the result does not
//    depend on the thread count. Few outputs with many elements each: the
//    blocks of one output run in parallel; many outputs: outputs in parallel.
//  B "outer": the innermost dim is kept (e.g. column sums): for each reduced
//    index, add a whole slice of kept elements into a row of accumulators
//    (vectorizable, unit stride). Outputs are split over threads; each
//    output's elements are added in reduced-index order on every path.
//
// Sum accumulation: float32 and float64 in double; integers in 64-bit unsigned
// (wrapping, exact modulo 2^64, so order does not matter). Integer Mean is the
// Sum (wrapped to the element type) divided toward zero by the count. Over
// zero elements each gives its identity: Sum 0, Prod 1, Max -inf / lowest,
// Min +inf / highest, Any false, All true, LogSumExp -inf; Mean NaN for
// floats and 0 for integers (docs/ops.md).
#include <xdev/op_names.h>
#include <oneapi/tbb/blocked_range.h>
#include "parallel.hpp"

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <limits>
#include <memory>
#include <type_traits>
#include <utility>
#include <vector>

#include "kernels/common.hpp"
#include "kernels/kernels.hpp"
#include "kernels/strided.hpp"

namespace xdev::cpu {
namespace {

constexpr int64_t kBlock = 8192;  // elements per block of path A
constexpr int kLanes = 8;

template <typename T>
using SumAcc = std::conditional_t<std::is_floating_point_v<T>, double, uint64_t>;

template <typename T>
inline SumAcc<T> widen(T v) noexcept {
  if constexpr (std::is_floating_point_v<T>) {
    return static_cast<double>(v);
  } else {
    return static_cast<uint64_t>(static_cast<int64_t>(v));  // sign-extends
  }
}

// A reduction: Acc, its identity, lift (one element), combine (associative;
// the paths below combine in a fixed order) and finish (the output element
// from the accumulator and the count of reduced elements).
//
// Sum and Mean: floats in double, integers in uint64 (wrapping, exact modulo
// 2^64). Integer Mean is the Sum wrapped to the element type, divided toward
// zero by the count (as the cuda plugin and the conformance reference do).
template <typename T, bool kMean>
struct SumReducer {
  using Acc = SumAcc<T>;
  static constexpr Acc identity() noexcept { return Acc{0}; }
  static Acc lift(T v) noexcept { return widen(v); }
  static Acc combine(Acc a, Acc b) noexcept { return a + b; }
  static T finish(Acc sum, int64_t count) noexcept {
    if constexpr (std::is_floating_point_v<T>) {
      if (kMean && count == 0) return std::numeric_limits<T>::quiet_NaN();
      return static_cast<T>(kMean ? sum / static_cast<double>(count) : sum);
    } else {
      const T s = static_cast<T>(static_cast<int64_t>(sum));
      if constexpr (kMean) return count == 0 ? T{0} : static_cast<T>(static_cast<int64_t>(s) / count);
      return s;
    }
  }
};

// Prod: floats in double, integers in uint64 (the low bits of the wrapped
// product are the element type's); 1 over zero elements.
template <typename T>
struct ProdReducer {
  using Acc = SumAcc<T>;
  static constexpr Acc identity() noexcept { return Acc{1}; }
  static Acc lift(T v) noexcept { return widen(v); }
  static Acc combine(Acc a, Acc b) noexcept { return a * b; }
  static T finish(Acc p, int64_t) noexcept {
    if constexpr (std::is_floating_point_v<T>) return static_cast<T>(p);
    return static_cast<T>(static_cast<int64_t>(p));
  }
};

// Max (kMax) and Min: NaN if any element is NaN (like Maximum); over zero
// elements the identity: -inf / +inf for floats, the lowest / highest
// integer (tf.reduce_max's values).
template <typename T, bool kMax>
struct ExtremumReducer {
  using Acc = T;
  static constexpr Acc identity() noexcept {
    if constexpr (std::is_floating_point_v<T>) {
      return kMax ? -std::numeric_limits<T>::infinity() : std::numeric_limits<T>::infinity();
    } else {
      return kMax ? std::numeric_limits<T>::lowest() : std::numeric_limits<T>::max();
    }
  }
  static Acc lift(T v) noexcept { return v; }
  static Acc combine(Acc a, Acc b) noexcept {
    if constexpr (std::is_floating_point_v<T>) {
      if (a != a) return a;
      if (b != b) return b;
    }
    return (kMax ? a < b : b < a) ? b : a;
  }
  static T finish(Acc a, int64_t) noexcept { return a; }
};

// Any (kAny) and All of bool: false / true over zero elements.
template <bool kAny>
struct LogicReducer {
  using Acc = uint8_t;
  static constexpr Acc identity() noexcept { return kAny ? 0 : 1; }
  static Acc lift(boolean v) noexcept { return v != 0 ? 1 : 0; }
  static Acc combine(Acc a, Acc b) noexcept { return kAny ? (a | b) : (a & b); }
  static boolean finish(Acc a, int64_t) noexcept { return a; }
};

// LogSumExp of floats, stable: the accumulator is (m, s) with the value
// m + ln s, s the sum of e^(x - m) over the elements so far, m their maximum;
// combining rescales the smaller part (in double). NaN anywhere gives NaN, an
// element +inf gives +inf, zero elements (or all -inf) give -inf.
template <typename T>
struct LogSumExpReducer {
  struct Acc {
    double m = -std::numeric_limits<double>::infinity();
    double s = 0.0;
  };
  static constexpr Acc identity() noexcept { return Acc{}; }
  static Acc lift(T v) noexcept { return Acc{static_cast<double>(v), 1.0}; }
  static Acc combine(Acc a, Acc b) noexcept {
    if (a.m != a.m) return a;
    if (b.m != b.m) return b;
    if (a.m < b.m) std::swap(a, b);  // a.m >= b.m
    if (b.s == 0.0) return a;
    if (std::isinf(a.m)) return Acc{a.m, a.s + (b.m == a.m ? b.s : 0.0)};  // both -inf, or +inf
    return Acc{a.m, a.s + b.s * std::exp(b.m - a.m)};
  }
  static T finish(Acc a, int64_t) noexcept {
    if (a.m != a.m || std::isinf(a.m)) return static_cast<T>(a.m);
    return static_cast<T>(a.m + std::log(a.s));
  }
};

struct Dim {
  int64_t size;
  int64_t stride;  // elements of the input
};

// The kept and reduced dims of a reduction, coalesced.
struct Plan {
  Dim kept[XDEV_MAX_RANK];
  int kept_rank = 0;
  Dim reduced[XDEV_MAX_RANK];
  int reduced_rank = 0;
  bool inner_is_kept = false;  // the last (non-1) input dim is kept
  int64_t outputs = 1;
  int64_t count = 1;  // reduced elements per output
};

Plan make_plan(const xdev_tensor_t& x, const bool (&reduced)[XDEV_MAX_RANK]) noexcept {
  Plan p;
  bool last_kept = false;
  bool have_last = false;
  for (int32_t k = 0; k < x.rank; ++k) {
    const int64_t size = x.shape[k];
    if (reduced[k]) {
      p.count *= size;
    } else {
      p.outputs *= size;
    }
    if (size == 1) continue;
    Dim* dims = reduced[k] ? p.reduced : p.kept;
    int& rank = reduced[k] ? p.reduced_rank : p.kept_rank;
    const bool kept = !reduced[k];
    if (have_last && last_kept == kept && rank > 0 &&
        dims[rank - 1].stride == x.strides[k] * size) {
      dims[rank - 1].size *= size;
      dims[rank - 1].stride = x.strides[k];
    } else {
      dims[rank++] = Dim{size, x.strides[k]};
    }
    have_last = true;
    last_kept = kept;
  }
  p.inner_is_kept = have_last && last_kept;
  return p;
}

// Layout (strided.hpp) of dims `d` for one operand with element size `item`,
// and optionally a second, dense operand of element size `item2`.
template <int N>
Layout<N> dims_layout(const Dim* d, int rank, int64_t item, int64_t item2 = 0) noexcept {
  int64_t shape[XDEV_MAX_RANK];
  int64_t strides0[XDEV_MAX_RANK];
  int64_t strides1[XDEV_MAX_RANK];
  int64_t expected = 1;
  for (int k = rank - 1; k >= 0; --k) {
    shape[k] = d[k].size;
    strides0[k] = d[k].stride;
    strides1[k] = expected;
    expected *= d[k].size;
  }
  if constexpr (N == 1) {
    const int64_t* const s[1] = {strides0};
    return make_layout<1>(rank, shape, s, {item});
  } else {
    const int64_t* const s[2] = {strides1, strides0};
    return make_layout<2>(rank, shape, s, {item2, item});
  }
}

// Element offset of output index `o` (row-major over the kept dims).
inline int64_t kept_offset(const Plan& p, int64_t o) noexcept {
  int64_t offset = 0;
  for (int k = p.kept_rank - 1; k >= 0; --k) {
    offset += (o % p.kept[k].size) * p.kept[k].stride;
    o /= p.kept[k].size;
  }
  return offset;
}

// The reduction of elements [begin, end) (row-major over the reduced dims)
// of the output whose first element is at `base`.
template <typename R, typename T>
typename R::Acc reduce_range(const Layout<1>& lr, const T* base, int64_t begin,
                             int64_t end) noexcept {
  using Acc = typename R::Acc;
  Acc lanes[kLanes];
  for (Acc& lane : lanes) lane = R::identity();
  const int64_t s = lr.inner_stride(0) / int64_t{sizeof(T)};
  char* const b[1] = {reinterpret_cast<char*>(const_cast<T*>(base))};
  walk(lr, b, begin, end, [&lanes, s](char* const* p, int64_t count) {
    const T* x = reinterpret_cast<const T*>(p[0]);
    int64_t i = 0;
    if (s == 1) {
      for (; i + kLanes <= count; i += kLanes) {
        for (int j = 0; j < kLanes; ++j) lanes[j] = R::combine(lanes[j], R::lift(x[i + j]));
      }
    } else {
      for (; i + kLanes <= count; i += kLanes) {
        for (int j = 0; j < kLanes; ++j) {
          lanes[j] = R::combine(lanes[j], R::lift(x[(i + j) * s]));
        }
      }
    }
    for (int j = 0; i < count; ++i, ++j) lanes[j] = R::combine(lanes[j], R::lift(x[i * s]));
  });
  Acc total = R::identity();
  for (int j = 0; j < kLanes; ++j) total = R::combine(total, lanes[j]);
  return total;
}

// The reduction of one output by path A, blocks in order.
template <typename R, typename T>
typename R::Acc reduce_one(const Layout<1>& lr, const T* base, int64_t count) noexcept {
  typename R::Acc total = R::identity();
  for (int64_t b = 0; b < count; b += kBlock) {
    total = R::combine(total, reduce_range<R>(lr, base, b, std::min(count, b + kBlock)));
  }
  return total;
}

// body(begin, end) over [0, n): in this thread unless `parallel`, else split
// over oneTBB's threads in ranges of `grain` or more.
template <typename Body>
void for_ranges(bool parallel, int64_t n, int64_t grain, const Body& body) {
  if (!parallel) {
    body(int64_t{0}, n);
    return;
  }
  cpu::parallel_for(tbb::blocked_range<int64_t>(0, n, grain),
                    [&](const tbb::blocked_range<int64_t>& r) { body(r.begin(), r.end()); });
}

template <typename R, typename T>
void reduce(const xdev_tensor_t& x, const xdev_tensor_t& out, const Plan& p) {
  using Acc = typename R::Acc;
  T* const o = data_of<T>(out);
  const T* const in = data_of<const T>(x);
  if (p.outputs == 0) return;
  if (p.count == 0) {
    std::fill(o, o + p.outputs, R::finish(R::identity(), 0));
    return;
  }
  const int64_t total = p.outputs * p.count;
  const bool parallel = total >= kParallelMinElements;

  if (p.inner_is_kept && p.reduced_rank > 0 && p.kept[p.kept_rank - 1].size >= 16) {
    // Path B: rows of accumulators.
    const Layout<2> lk = dims_layout<2>(p.kept, p.kept_rank, sizeof(T), sizeof(Acc));
    const Layout<1> lr = dims_layout<1>(p.reduced, p.reduced_rank, sizeof(T));
    const int64_t sx = lk.inner_stride(1) / int64_t{sizeof(T)};
    auto slice = [&](int64_t begin, int64_t end) {
      constexpr int64_t kStack = 512;
      Acc stack_acc[kStack];
      std::unique_ptr<Acc[]> heap_acc;
      Acc* acc = stack_acc;
      if (end - begin > kStack) {
        heap_acc.reset(new Acc[static_cast<size_t>(end - begin)]);
        acc = heap_acc.get();
      }
      std::fill(acc, acc + (end - begin), R::identity());
      // The walk's operand 0 is the accumulator row, indexed like the output.
      char* const base0 = reinterpret_cast<char*>(acc - begin);
      char* const rb[1] = {reinterpret_cast<char*>(const_cast<T*>(in))};
      walk(lr, rb, 0, p.count, [&](char* const* rp, int64_t rcount) {
        const int64_t rs = lr.inner_stride(0);
        for (int64_t r = 0; r < rcount; ++r) {
          char* const base[2] = {base0, rp[0] + r * rs};
          walk(lk, base, begin, end, [sx](char* const* q, int64_t count) {
            Acc* __restrict a = reinterpret_cast<Acc*>(q[0]);
            const T* __restrict v = reinterpret_cast<const T*>(q[1]);
            if (sx == 1) {
              for (int64_t i = 0; i < count; ++i) a[i] = R::combine(a[i], R::lift(v[i]));
            } else {
              for (int64_t i = 0; i < count; ++i) a[i] = R::combine(a[i], R::lift(v[i * sx]));
            }
          });
        }
      });
      for (int64_t i = begin; i < end; ++i) o[i] = R::finish(acc[i - begin], p.count);
    };
    for_ranges(parallel, p.outputs, std::max<int64_t>(16, kParallelGrainElements / p.count),
               slice);
    return;
  }

  // Path A.
  const Layout<1> lr = dims_layout<1>(p.reduced, p.reduced_rank, sizeof(T));
  const int64_t blocks = (p.count + kBlock - 1) / kBlock;
  if (parallel && p.outputs < 8 && blocks > 1) {
    // Few outputs, many elements each: blocks in parallel, then in order.
    std::vector<Acc> partial(static_cast<size_t>(p.outputs * blocks));
    cpu::parallel_for(tbb::blocked_range<int64_t>(0, p.outputs * blocks, 1),
                      [&](const tbb::blocked_range<int64_t>& r) {
                        for (int64_t t = r.begin(); t < r.end(); ++t) {
                          const int64_t out_index = t / blocks;
                          const int64_t b = (t % blocks) * kBlock;
                          partial[static_cast<size_t>(t)] = reduce_range<R>(
                              lr, in + kept_offset(p, out_index), b, std::min(p.count, b + kBlock));
                        }
                      });
    for (int64_t out_index = 0; out_index < p.outputs; ++out_index) {
      Acc acc = R::identity();
      for (int64_t b = 0; b < blocks; ++b) {
        acc = R::combine(acc, partial[static_cast<size_t>(out_index * blocks + b)]);
      }
      o[out_index] = R::finish(acc, p.count);
    }
    return;
  }
  auto outputs = [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      o[i] = R::finish(reduce_one<R>(lr, in + kept_offset(p, i), p.count), p.count);
    }
  };
  for_ranges(parallel, p.outputs, std::max<int64_t>(1, kParallelGrainElements / p.count),
             outputs);
}

// A reduction kernel over inputs of kMask; R<T> is the reducer of T.
template <template <typename> class R, uint64_t kMask>
xdev_status_t* reduce_kernel(const xdev_kernel_call_t* call) noexcept {
  static constexpr const char* kKnown[] = {XDEV_ATTR_NAME_axes, XDEV_ATTR_NAME_keepdims, nullptr};
  xdev_dtype_t dtype;
  if (xdev_status_t* s = check_signature(call, 1, kMask, kKnown, false, &dtype)) return s;
  const char* op = call->op != nullptr ? call->op : "reduction";
  const xdev_tensor_t& x = *call->inputs[0];
  const xdev_tensor_t& out = *call->outputs[0];

  const xdev_attr_t* axes = find_attr(call, XDEV_ATTR_NAME_axes);
  if (axes == nullptr || axes->kind != XDEV_ATTR_INTS ||
      (axes->value.ints.count > 0 && axes->value.ints.values == nullptr)) {
    return kernel_fail(call, XDEV_STATUS_INVALID_ARGUMENT,
                       "%s: the attribute 'axes' is missing or not a list of ints", op);
  }
  bool reduced[XDEV_MAX_RANK] = {};
  const int64_t axis_count = axes->value.ints.count;
  for (int64_t i = 0; i < axis_count; ++i) {
    const int64_t a = axes->value.ints.values[i];
    if (a < 0 || a >= x.rank || (i > 0 && a <= axes->value.ints.values[i - 1])) {
      return kernel_fail(call, XDEV_STATUS_INVALID_ARGUMENT,
                         "%s: axes must be sorted, unique and in [0, %" PRId32 "); axis %" PRId64
                         " is not",
                         op, x.rank, a);
    }
    reduced[a] = true;
  }
  bool keepdims = false;
  if (find_attr(call, XDEV_ATTR_NAME_keepdims) != nullptr) {
    if (xdev_status_t* s = attr_bool(call, XDEV_ATTR_NAME_keepdims, false, &keepdims)) return s;
  } else {
    keepdims = axis_count > 0 && out.rank == x.rank;
  }
  // The output's shape follows from the input, the axes and keepdims.
  bool shape_ok = out.rank == (keepdims ? x.rank : x.rank - static_cast<int32_t>(axis_count));
  for (int32_t k = 0, j = 0; k < x.rank && shape_ok; ++k) {
    if (reduced[k] && !keepdims) continue;
    shape_ok = out.shape[j++] == (reduced[k] ? 1 : x.shape[k]);
  }
  if (!shape_ok) {
    return kernel_fail(call, XDEV_STATUS_INVALID_ARGUMENT,
                       "%s: the output's shape does not match the input's without the axes "
                       "(keepdims %s)",
                       op, keepdims ? "true" : "false");
  }
  return guarded(call, [&] {
    const Plan plan = make_plan(x, reduced);
    visit_dtypes<kMask>(dtype, [&](auto zero) {
      using T = decltype(zero);
      reduce<R<T>, T>(x, out, plan);
    });
  });
}

template <typename T> using Sum = SumReducer<T, false>;
template <typename T> using Mean = SumReducer<T, true>;
template <typename T> using Max = ExtremumReducer<T, true>;
template <typename T> using Min = ExtremumReducer<T, false>;
template <typename> using Any = LogicReducer<true>;
template <typename> using All = LogicReducer<false>;

}  // namespace

XDEV_CPU_KERNEL(kernel_sum, reduce_kernel<Sum, kArith>)
XDEV_CPU_KERNEL(kernel_mean, reduce_kernel<Mean, kArith>)
XDEV_CPU_KERNEL(kernel_max, reduce_kernel<Max, kArith>)
XDEV_CPU_KERNEL(kernel_min, reduce_kernel<Min, kArith>)
XDEV_CPU_KERNEL(kernel_prod, reduce_kernel<ProdReducer, kArith>)
XDEV_CPU_KERNEL(kernel_any, reduce_kernel<Any, kBool>)
XDEV_CPU_KERNEL(kernel_all, reduce_kernel<All, kBool>)
XDEV_CPU_KERNEL(kernel_log_sum_exp, reduce_kernel<LogSumExpReducer, kFloats>)

}  // namespace xdev::cpu
