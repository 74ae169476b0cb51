// The cuda plugin's reductions and ops along one axis (docs/ops.md
// "Reductions", "Along one axis"): Max, Min, Prod, Any, All, LogSumExp
// over `axes`; ArgMax, ArgMin, CumSum, Softmax, LogSoftmax along
// `axis`. Checks and layouts here, kernels in reduce_ops.cu.
#include <xdev/plugin.h>
#include <xdev/op_names.h>

#include <cinttypes>
#include <cstdint>
#include <iterator>

#include "call.hpp"
#include "launch.hpp"
#include "layout.hpp"
#include "ops.hpp"
#include "segment_plan.hpp"

namespace xdev::cuda {
namespace {

struct ReduceInfo {
  const char* name;
  uint64_t mask;
};
constexpr ReduceInfo reduce_info(LineReduceOp op) {
  switch (op) {
    case LineReduceOp::kMax: return {XDEV_OP_Max, kNumbers};
    case LineReduceOp::kMin: return {XDEV_OP_Min, kNumbers};
    case LineReduceOp::kProd: return {XDEV_OP_Prod, kNumbers};
    case LineReduceOp::kAny: return {XDEV_OP_Any, kBool};
    case LineReduceOp::kAll: return {XDEV_OP_All, kBool};
    case LineReduceOp::kLogSumExp: return {XDEV_OP_LogSumExp, kFloats};
    case LineReduceOp::kArgMax: return {XDEV_OP_ArgMax, kNumbers};
    case LineReduceOp::kArgMin: return {XDEV_OP_ArgMin, kNumbers};
  }
  return {"?", 0};
}
constexpr bool is_arg(LineReduceOp op) {
  return op == LineReduceOp::kArgMax || op == LineReduceOp::kArgMin;
}

// The output's element count against the kept axes of the layout.
xdev_status_t* check_outputs(Call& call, int64_t want) {
  if (element_count(call.output()) == want) return nullptr;
  return g_host.fail(call.host(), XDEV_STATUS_INVALID_ARGUMENT,
                     "%s: the output has %" PRId64
                     " elements; the input and the axes make %" PRId64,
                     call.op(), element_count(call.output()), want);
}

// Max ... LogSumExp over `axes`; ArgMax/ArgMin along `axis` (int64 output).
template <LineReduceOp kOp>
xdev_status_t* kernel_reduce(void*, const xdev_kernel_call_t* raw) noexcept {
  constexpr ReduceInfo info = reduce_info(kOp);
  return guarded(raw, info.name, [&]() -> xdev_status_t* {
    Call call(raw, info.name);
    if (xdev_status_t* s = call.check(1)) return s;
    const xdev_tensor_t& x = call.input(0);
    const xdev_tensor_t& out = call.output();
    if (!in_mask(info.mask, x.dtype)) return call.bad_dtype(x.dtype);
    const xdev_dtype_t want = is_arg(kOp) ? XDEV_DTYPE_INT64 : x.dtype;
    if (out.dtype != want) return call.bad_dtype(out.dtype);
    bool reduced[kMaxRank] = {};
    if constexpr (is_arg(kOp)) {
      int32_t axis = 0;
      if (xdev_status_t* s = read_axis(call, x.rank, &axis)) return s;
      reduced[axis] = true;
      if (x.shape[axis] == 0) {
        return g_host.fail(call.host(), XDEV_STATUS_INVALID_ARGUMENT,
                           "%s: axis %" PRId32 " is empty", info.name, axis);
      }
    } else {
      if (xdev_status_t* s = read_axes(call, x.rank, reduced)) return s;
    }
    const ReduceLayout l = reduce_layout(x, reduced);
    if (xdev_status_t* s = check_outputs(call, l.outer_count)) return s;
    const int lanes = segment_lanes(l.outer_count, l.inner_count, call.multiprocessors());
    return call.launched(launch_line_reduce(kOp, x.dtype, l, data_of(x), data_of_output(out),
                                            lanes, call.cuda_stream()));
  });
}

// Checks an op along `axis` whose output has the input's shape and dtype.
xdev_status_t* check_along_axis(Call& call, uint64_t mask, int32_t* axis) {
  if (xdev_status_t* s = call.check(1)) return s;
  if (xdev_status_t* s = call.check_same_dtype(mask)) return s;
  const xdev_tensor_t& x = call.input(0);
  if (xdev_status_t* s = read_axis(call, x.rank, axis)) return s;
  return check_outputs(call, element_count(x));
}

template <bool kLog>
xdev_status_t* kernel_softmax(void*, const xdev_kernel_call_t* raw) noexcept {
  const char* name = kLog ? XDEV_OP_LogSoftmax : XDEV_OP_Softmax;
  return guarded(raw, name, [&]() -> xdev_status_t* {
    Call call(raw, name);
    int32_t axis = 0;
    if (xdev_status_t* s = check_along_axis(call, kFloats, &axis)) return s;
    const xdev_tensor_t& x = call.input(0);
    const LineLayouts l = line_layouts(x, axis);
    const int lanes = segment_lanes(l.in.outer_count, l.in.inner_count, call.multiprocessors());
    return call.launched(launch_softmax(kLog, x.dtype, l.in, l.out, data_of(x),
                                        data_of_output(call.output()), lanes,
                                        call.cuda_stream()));
  });
}

xdev_status_t* kernel_cum_sum(void*, const xdev_kernel_call_t* raw) noexcept {
  constexpr const char* kOp = XDEV_OP_CumSum;
  return guarded(raw, kOp, [&]() -> xdev_status_t* {
    Call call(raw, kOp);
    int32_t axis = 0;
    if (xdev_status_t* s = check_along_axis(call, kNumbers, &axis)) return s;
    const xdev_tensor_t& x = call.input(0);
    const LineLayouts l = line_layouts(x, axis);
    return call.launched(launch_cumsum(x.dtype, l.in, l.out, bool_attr(call, XDEV_ATTR_NAME_exclusive),
                                       bool_attr(call, XDEV_ATTR_NAME_reverse), data_of(x),
                                       data_of_output(call.output()), call.cuda_stream()));
  });
}

using ph::kernel_info;

template <LineReduceOp kOp>
constexpr xdev_kernel_info_t reduce_entry() {
  constexpr ReduceInfo info = reduce_info(kOp);
  return kernel_info(info.name, info.mask, is_arg(kOp) ? kInt64 : info.mask, &kernel_reduce<kOp>);
}

constexpr xdev_kernel_info_t kReduceKernels[] = {
    reduce_entry<LineReduceOp::kMax>(),
    reduce_entry<LineReduceOp::kMin>(),
    reduce_entry<LineReduceOp::kProd>(),
    reduce_entry<LineReduceOp::kAny>(),
    reduce_entry<LineReduceOp::kAll>(),
    reduce_entry<LineReduceOp::kLogSumExp>(),
    reduce_entry<LineReduceOp::kArgMax>(),
    reduce_entry<LineReduceOp::kArgMin>(),
    kernel_info(XDEV_OP_CumSum, kNumbers, kNumbers, &kernel_cum_sum),
    kernel_info(XDEV_OP_Softmax, kFloats, kFloats, &kernel_softmax<false>),
    kernel_info(XDEV_OP_LogSoftmax, kFloats, kFloats, &kernel_softmax<true>),
};

}  // namespace

KernelTable reduce_kernels() noexcept { return {kReduceKernels, std::size(kReduceKernels)}; }

}  // namespace xdev::cuda
