// Sum and Mean over sorted, unique `axes`, with `keepdims`.
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
// Accumulation: float32 and float64 in double; integers in 64-bit unsigned
// (wrapping, exact modulo 2^64, so order does not matter). Integer Mean is the
// Sum (wrapped to the element type) divided toward zero by the count. Over
// zero elements: Sum 0, Mean NaN for floats and 0 for integers (docs/ops.md).
#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/parallel_for.h>

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <limits>
#include <memory>
#include <type_traits>
#include <vector>

#include "kernels/common.hpp"
#include "kernels/kernels.hpp"
#include "kernels/strided.hpp"

namespace xdev::cpu {
namespace {

constexpr int64_t kBlock = 8192;  // elements per block of path A
constexpr int kLanes = 8;

template <typename T>
using Acc = std::conditional_t<std::is_floating_point_v<T>, double, uint64_t>;

template <typename T>
inline Acc<T> widen(T v) noexcept {
  if constexpr (std::is_floating_point_v<T>) {
    return static_cast<double>(v);
  } else {
    return static_cast<uint64_t>(static_cast<int64_t>(v));  // sign-extends
  }
}

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

// Sum of reduced elements [begin, end) (row-major over the reduced dims) of
// the output whose first element is at `base`.
template <typename T>
Acc<T> sum_range(const Layout<1>& lr, const T* base, int64_t begin, int64_t end) noexcept {
  Acc<T> lanes[kLanes] = {};
  const int64_t s = lr.inner_stride(0) / int64_t{sizeof(T)};
  char* const b[1] = {reinterpret_cast<char*>(const_cast<T*>(base))};
  walk(lr, b, begin, end, [&lanes, s](char* const* p, int64_t count) {
    const T* x = reinterpret_cast<const T*>(p[0]);
    int64_t i = 0;
    if (s == 1) {
      for (; i + kLanes <= count; i += kLanes) {
        for (int j = 0; j < kLanes; ++j) lanes[j] += widen(x[i + j]);
      }
    } else {
      for (; i + kLanes <= count; i += kLanes) {
        for (int j = 0; j < kLanes; ++j) lanes[j] += widen(x[(i + j) * s]);
      }
    }
    for (int j = 0; i < count; ++i, ++j) lanes[j] += widen(x[i * s]);
  });
  Acc<T> total = 0;
  for (int j = 0; j < kLanes; ++j) total += lanes[j];
  return total;
}

// The reduction of one output by path A, blocks in order.
template <typename T>
Acc<T> sum_one(const Layout<1>& lr, const T* base, int64_t count) noexcept {
  Acc<T> total = 0;
  for (int64_t b = 0; b < count; b += kBlock) {
    total += sum_range(lr, base, b, std::min(count, b + kBlock));
  }
  return total;
}

template <typename T, bool kMean>
inline T finish(Acc<T> sum, int64_t count) noexcept {
  if constexpr (std::is_floating_point_v<T>) {
    return static_cast<T>(kMean ? sum / static_cast<double>(count) : sum);
  } else {
    // The sum wraps to the element type first, then divides toward zero (as
    // the cuda plugin and the conformance reference do).
    const T s = static_cast<T>(static_cast<int64_t>(sum));
    if constexpr (kMean) return static_cast<T>(static_cast<int64_t>(s) / count);
    return s;
  }
}

// body(begin, end) over [0, n): in this thread unless `parallel`, else split
// over oneTBB's threads in ranges of `grain` or more.
template <typename Body>
void for_ranges(bool parallel, int64_t n, int64_t grain, const Body& body) {
  if (!parallel) {
    body(int64_t{0}, n);
    return;
  }
  tbb::parallel_for(tbb::blocked_range<int64_t>(0, n, grain),
                    [&](const tbb::blocked_range<int64_t>& r) { body(r.begin(), r.end()); });
}

template <typename T, bool kMean>
void reduce(const xdev_tensor_t& x, const xdev_tensor_t& out, const Plan& p) {
  T* const o = data_of<T>(out);
  const T* const in = data_of<const T>(x);
  if (p.outputs == 0) return;
  if (p.count == 0) {
    T value = T{0};
    if constexpr (kMean && std::is_floating_point_v<T>) {
      value = std::numeric_limits<T>::quiet_NaN();
    }
    std::fill(o, o + p.outputs, value);
    return;
  }
  const int64_t total = p.outputs * p.count;
  const bool parallel = total >= kParallelMinElements;

  if (p.inner_is_kept && p.reduced_rank > 0 && p.kept[p.kept_rank - 1].size >= 16) {
    // Path B: rows of accumulators.
    const Layout<2> lk = dims_layout<2>(p.kept, p.kept_rank, sizeof(T), sizeof(Acc<T>));
    const Layout<1> lr = dims_layout<1>(p.reduced, p.reduced_rank, sizeof(T));
    const int64_t sx = lk.inner_stride(1) / int64_t{sizeof(T)};
    auto slice = [&](int64_t begin, int64_t end) {
      constexpr int64_t kStack = 512;
      Acc<T> stack_acc[kStack];
      std::unique_ptr<Acc<T>[]> heap_acc;
      Acc<T>* acc = stack_acc;
      if (end - begin > kStack) {
        heap_acc.reset(new Acc<T>[static_cast<size_t>(end - begin)]);
        acc = heap_acc.get();
      }
      std::fill(acc, acc + (end - begin), Acc<T>{0});
      // The walk's operand 0 is the accumulator row, indexed like the output.
      char* const base0 = reinterpret_cast<char*>(acc - begin);
      char* const rb[1] = {reinterpret_cast<char*>(const_cast<T*>(in))};
      walk(lr, rb, 0, p.count, [&](char* const* rp, int64_t rcount) {
        const int64_t rs = lr.inner_stride(0);
        for (int64_t r = 0; r < rcount; ++r) {
          char* const base[2] = {base0, rp[0] + r * rs};
          walk(lk, base, begin, end, [sx](char* const* q, int64_t count) {
            Acc<T>* __restrict a = reinterpret_cast<Acc<T>*>(q[0]);
            const T* __restrict v = reinterpret_cast<const T*>(q[1]);
            if (sx == 1) {
              for (int64_t i = 0; i < count; ++i) a[i] += widen(v[i]);
            } else {
              for (int64_t i = 0; i < count; ++i) a[i] += widen(v[i * sx]);
            }
          });
        }
      });
      for (int64_t i = begin; i < end; ++i) o[i] = finish<T, kMean>(acc[i - begin], p.count);
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
    std::vector<Acc<T>> partial(static_cast<size_t>(p.outputs * blocks));
    tbb::parallel_for(tbb::blocked_range<int64_t>(0, p.outputs * blocks, 1),
                      [&](const tbb::blocked_range<int64_t>& r) {
                        for (int64_t t = r.begin(); t < r.end(); ++t) {
                          const int64_t out_index = t / blocks;
                          const int64_t b = (t % blocks) * kBlock;
                          partial[static_cast<size_t>(t)] = sum_range(
                              lr, in + kept_offset(p, out_index), b, std::min(p.count, b + kBlock));
                        }
                      });
    for (int64_t out_index = 0; out_index < p.outputs; ++out_index) {
      Acc<T> sum = 0;
      for (int64_t b = 0; b < blocks; ++b) {
        sum += partial[static_cast<size_t>(out_index * blocks + b)];
      }
      o[out_index] = finish<T, kMean>(sum, p.count);
    }
    return;
  }
  auto outputs = [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      o[i] = finish<T, kMean>(sum_one(lr, in + kept_offset(p, i), p.count), p.count);
    }
  };
  for_ranges(parallel, p.outputs, std::max<int64_t>(1, kParallelGrainElements / p.count),
             outputs);
}

template <bool kMean>
xdev_status_t* reduce_kernel(const xdev_kernel_call_t* call) noexcept {
  static constexpr const char* kKnown[] = {"axes", "keepdims", nullptr};
  xdev_dtype_t dtype;
  if (xdev_status_t* s = check_signature(call, 1, kNumeric, kKnown, false, &dtype)) return s;
  const char* op = kMean ? "Mean" : "Sum";
  const xdev_tensor_t& x = *call->inputs[0];
  const xdev_tensor_t& out = *call->outputs[0];

  const xdev_attr_t* axes = find_attr(call, "axes");
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
  if (find_attr(call, "keepdims") != nullptr) {
    if (xdev_status_t* s = attr_bool(call, "keepdims", false, &keepdims)) return s;
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
  try {
    const Plan plan = make_plan(x, reduced);
    visit_dtypes<kNumeric>(dtype,
                           [&](auto zero) { reduce<decltype(zero), kMean>(x, out, plan); });
    return nullptr;
  } catch (...) {
    return kernel_unexpected(call);
  }
}

}  // namespace

xdev_status_t* kernel_sum(void*, const xdev_kernel_call_t* call) noexcept {
  return reduce_kernel<false>(call);
}
xdev_status_t* kernel_mean(void*, const xdev_kernel_call_t* call) noexcept {
  return reduce_kernel<true>(call);
}

}  // namespace xdev::cpu
