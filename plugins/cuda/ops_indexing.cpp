// The cuda plugin's indexing ops (docs/ops.md): Slice, StridedSlice and
// BroadcastTo copy a strided view of their input, bit for bit; Range and
// OneHot make tensors from indices. Checks here, the kernels are
// copy_into's (ops.cpp: a memcpy or the strided gather of elementwise.cu)
// and movement.cu's.
//
// Slice and StridedSlice describe their window as a view of x (an offset,
// x's strides times the steps, which may be negative, and 0 for
// StridedSlice's new axes) of the output's shape; StridedSlice's window is
// xdev/strided_slice.hpp's dense form, the rules the core and the cpu
// plugin use. BroadcastTo's view is x itself, aligned to the right with its
// axes of size 1 repeated (copy_into broadcasts like that).
#include <xdev/plugin.h>
#include <xdev/op_names.h>
#include <xdev/strided_slice.hpp>

#include <cuda_runtime_api.h>

#include <cinttypes>
#include <cstdint>
#include <iterator>

#include "call.hpp"
#include "launch.hpp"
#include "layout.hpp"
#include "ops.hpp"

namespace xdev::cuda {
namespace {

xdev_status_t* shape_mismatch(Call& call) {
  return g_host.fail(call.host(), XDEV_STATUS_INVALID_ARGUMENT,
                     "%s: the output's shape is not the one the attributes give", call.op());
}

// The ints attribute `name`: its values and count, or a status.
xdev_status_t* int_list(Call& call, const char* name, const int64_t** values, int64_t* count) {
  const xdev_attr_t* a = find_attr(call.raw(), name, XDEV_ATTR_INTS);
  if (a == nullptr || a->value.ints.count < 0 ||
      (a->value.ints.count > 0 && a->value.ints.values == nullptr)) {
    return g_host.fail(call.host(), XDEV_STATUS_INVALID_ARGUMENT,
                       "%s: the attribute '%s' must be a list of ints", call.op(), name);
  }
  *values = a->value.ints.values;
  *count = a->value.ints.count;
  return nullptr;
}

// Copies the window `v` of x (the output's shape) into the output (nothing
// for an empty output).
xdev_status_t* copy_view(Call& call, const WindowView& v) {
  const xdev_tensor_t& x = call.input(0);
  const xdev_tensor_t& out = call.output();
  if (element_count(out) == 0) return nullptr;
  xdev_tensor_t view = x;
  view.rank = out.rank;
  view.shape = out.shape;
  view.strides = v.strides;
  view.byte_offset =
      x.byte_offset + static_cast<uint64_t>(v.offset * static_cast<int64_t>(itemsize(x.dtype)));
  return call.launched(copy_into(view, out, call.cuda_stream()));
}

// One input, the output of its dtype (any of the five).
template <typename Body>
xdev_status_t* window_op(const xdev_kernel_call_t* raw, const char* op, Body&& body) noexcept {
  return guarded(raw, op, [&]() -> xdev_status_t* {
    Call call(raw, op);
    if (xdev_status_t* s = call.check(1)) return s;
    if (xdev_status_t* s = call.check_same_dtype(kAll)) return s;
    return body(call);
  });
}

xdev_status_t* kernel_slice(void*, const xdev_kernel_call_t* raw) noexcept {
  return window_op(raw, XDEV_OP_Slice, [](Call& call) -> xdev_status_t* {
    const xdev_tensor_t& x = call.input(0);
    const xdev_tensor_t& out = call.output();
    const int64_t *begin = nullptr, *size = nullptr;
    int64_t begins = 0, sizes = 0;
    if (xdev_status_t* s = int_list(call, XDEV_ATTR_NAME_begin, &begin, &begins)) return s;
    if (xdev_status_t* s = int_list(call, XDEV_ATTR_NAME_size, &size, &sizes)) return s;
    if (begins != x.rank || sizes != x.rank || out.rank != x.rank) return shape_mismatch(call);
    for (int32_t k = 0; k < x.rank; ++k) {
      // In that order nothing overflows: x.shape[k] - begin[k] >= 0.
      if (begin[k] < 0 || begin[k] > x.shape[k] || size[k] < -1 ||
          size[k] > x.shape[k] - begin[k]) {
        return g_host.fail(call.host(), XDEV_STATUS_INVALID_ARGUMENT,
                           "Slice: axis %" PRId32 ": begin %" PRId64 " and size %" PRId64
                           " do not fit its dimension %" PRId64,
                           k, begin[k], size[k], x.shape[k]);
      }
      if (out.shape[k] != (size[k] < 0 ? x.shape[k] - begin[k] : size[k])) {
        return shape_mismatch(call);
      }
    }
    return copy_view(call, slice_view(x, begin));
  });
}

xdev_status_t* kernel_strided_slice(void*, const xdev_kernel_call_t* raw) noexcept {
  return window_op(raw, XDEV_OP_StridedSlice, [raw](Call& call) -> xdev_status_t* {
    const xdev_tensor_t& x = call.input(0);
    const xdev_tensor_t& out = call.output();
    const int64_t *begin = nullptr, *end = nullptr, *steps = nullptr;
    int64_t begins = 0, ends = 0, stride_count = 0;
    if (xdev_status_t* s = int_list(call, XDEV_ATTR_NAME_begin, &begin, &begins)) return s;
    if (xdev_status_t* s = int_list(call, XDEV_ATTR_NAME_end, &end, &ends)) return s;
    if (xdev_status_t* s = int_list(call, XDEV_ATTR_NAME_strides, &steps, &stride_count)) return s;
    if (ends != begins || stride_count != begins) {
      return g_host.fail(call.host(), XDEV_STATUS_INVALID_ARGUMENT,
                         "StridedSlice: begin, end and strides have %" PRId64 ", %" PRId64
                         " and %" PRId64 " values",
                         begins, ends, stride_count);
    }
    static constexpr const char* kMasks[5] = {XDEV_ATTR_NAME_begin_mask, XDEV_ATTR_NAME_end_mask, XDEV_ATTR_NAME_ellipsis_mask,
                                              XDEV_ATTR_NAME_new_axis_mask, XDEV_ATTR_NAME_shrink_axis_mask};
    int64_t masks[5] = {};
    for (int m = 0; m < 5; ++m) {
      const xdev_attr_t* a = find_attr(raw, kMasks[m], XDEV_ATTR_INT);
      masks[m] = a != nullptr ? a->value.i : 0;
    }
    strided_slice_spec::Dense dense;
    strided_slice_spec::make_dense(x.rank, x.shape, begin, end, steps, begins, masks[0],
                                   masks[1], masks[2], masks[3], masks[4], dense);
    if (dense.error[0] != '\0') {
      return g_host.fail(call.host(), XDEV_STATUS_INVALID_ARGUMENT, "StridedSlice: %s",
                         dense.error);
    }
    bool fits = out.rank == dense.output_rank;
    for (int32_t j = 0; j < out.rank && fits; ++j) fits = out.shape[j] == dense.output_shape[j];
    if (!fits) return shape_mismatch(call);
    return copy_view(call, strided_slice_view(x, dense));
  });
}

xdev_status_t* kernel_broadcast_to(void*, const xdev_kernel_call_t* raw) noexcept {
  return window_op(raw, XDEV_OP_BroadcastTo, [](Call& call) -> xdev_status_t* {
    const xdev_tensor_t& x = call.input(0);
    const xdev_tensor_t& out = call.output();
    const int32_t extra = out.rank - x.rank;
    bool fits = extra >= 0;
    for (int32_t k = 0; k < x.rank && fits; ++k) {
      fits = x.shape[k] == out.shape[k + extra] || x.shape[k] == 1;
    }
    if (!fits) return shape_mismatch(call);
    if (element_count(out) == 0) return nullptr;
    return call.launched(copy_into(x, out, call.cuda_stream()));
  });
}

// A number attribute (float, int or bool, as the cpu plugin reads them):
// `fallback` when absent and not required.
xdev_status_t* number_attr(Call& call, const char* name, bool required, double fallback,
                           double* out) {
  for (uint32_t i = 0; i < call.raw()->attr_count; ++i) {
    const xdev_attr_t& a = call.raw()->attrs[i];
    if (a.name == nullptr || std::string_view(a.name) != name) continue;
    switch (a.kind) {
      case XDEV_ATTR_FLOAT: *out = a.value.f; return nullptr;
      case XDEV_ATTR_INT: *out = static_cast<double>(a.value.i); return nullptr;
      case XDEV_ATTR_BOOL: *out = a.value.b != 0 ? 1.0 : 0.0; return nullptr;
      default: break;
    }
  }
  if (!required) {
    *out = fallback;
    return nullptr;
  }
  return g_host.fail(call.host(), XDEV_STATUS_INVALID_ARGUMENT,
                     "%s: the attribute '%s' must be a number", call.op(), name);
}

xdev_status_t* kernel_range(void*, const xdev_kernel_call_t* raw) noexcept {
  constexpr const char* kOp = XDEV_OP_Range;
  return guarded(raw, kOp, [&]() -> xdev_status_t* {
    Call call(raw, kOp);
    if (xdev_status_t* s = call.check(0)) return s;
    const xdev_tensor_t& out = call.output();
    if (!in_mask(kNumbers, out.dtype)) return call.bad_dtype(out.dtype);
    double start = 0, limit = 0, delta = 1;
    if (xdev_status_t* s = number_attr(call, XDEV_ATTR_NAME_start, true, 0.0, &start)) return s;
    if (xdev_status_t* s = number_attr(call, XDEV_ATTR_NAME_limit, true, 0.0, &limit)) return s;
    if (xdev_status_t* s = number_attr(call, XDEV_ATTR_NAME_delta, false, 1.0, &delta)) return s;
    if (out.rank != 1 || delta == 0) {
      return g_host.fail(call.host(), XDEV_STATUS_INVALID_ARGUMENT,
                         "%s: the output must have rank 1 (not %" PRId32
                         ") and delta must not be 0",
                         kOp, out.rank);
    }
    return call.launched(launch_range(out.dtype, start, delta, data_of_output(out),
                                      out.shape[0], call.cuda_stream()));
  });
}

xdev_status_t* kernel_one_hot(void*, const xdev_kernel_call_t* raw) noexcept {
  constexpr const char* kOp = XDEV_OP_OneHot;
  return guarded(raw, kOp, [&]() -> xdev_status_t* {
    Call call(raw, kOp);
    if (xdev_status_t* s = call.check(1)) return s;
    const xdev_tensor_t& indices = call.input(0);
    const xdev_tensor_t& out = call.output();
    if (!in_mask(kInt32 | kInt64, indices.dtype)) return call.bad_dtype(indices.dtype);
    if (!in_mask(kAll, out.dtype)) return call.bad_dtype(out.dtype);
    const xdev_attr_t* depth = find_attr(raw, XDEV_ATTR_NAME_depth, XDEV_ATTR_INT);
    const xdev_attr_t* axis = find_attr(raw, XDEV_ATTR_NAME_axis, XDEV_ATTR_INT);
    if (depth == nullptr || depth->value.i < 0 || axis == nullptr || axis->value.i < 0 ||
        axis->value.i > indices.rank) {
      return g_host.fail(call.host(), XDEV_STATUS_INVALID_ARGUMENT,
                         "%s: the attributes 'depth' (an int >= 0) and 'axis' (an int in "
                         "[0, %" PRId32 "]) are required",
                         kOp, indices.rank);
    }
    double on = 1, off = 0;
    if (xdev_status_t* s = number_attr(call, XDEV_ATTR_NAME_on_value, false, 1.0, &on)) return s;
    if (xdev_status_t* s = number_attr(call, XDEV_ATTR_NAME_off_value, false, 0.0, &off)) return s;
    if (!is_contiguous(indices)) {
      return g_host.fail(call.host(), XDEV_STATUS_INVALID_ARGUMENT,
                         "%s: the indices must be contiguous (the op table says so)", kOp);
    }
    const auto a = static_cast<int32_t>(axis->value.i);
    const int64_t n = depth->value.i;
    bool fits = out.rank == indices.rank + 1 && out.shape[a] == n;
    for (int32_t k = 0; k < indices.rank && fits; ++k) {
      fits = out.shape[k < a ? k : k + 1] == indices.shape[k];
    }
    if (!fits) return shape_mismatch(call);
    int64_t inner = 1;
    for (int32_t k = a; k < indices.rank; ++k) inner *= indices.shape[k];
    return call.launched(launch_one_hot(itemsize(out.dtype), indices.dtype, n, inner,
                                        element_count(out), data_of(indices),
                                        fill_pattern(out.dtype, on), fill_pattern(out.dtype, off),
                                        data_of_output(out), call.cuda_stream()));
  });
}

using ph::kernel_info;

constexpr xdev_kernel_info_t kIndexingKernels[] = {
    kernel_info(XDEV_OP_Slice, kAll, kAll, &kernel_slice),
    kernel_info(XDEV_OP_StridedSlice, kAll, kAll, &kernel_strided_slice),
    kernel_info(XDEV_OP_BroadcastTo, kAll, kAll, &kernel_broadcast_to),
    kernel_info(XDEV_OP_Range, kNumbers, kNumbers, &kernel_range),
    kernel_info(XDEV_OP_OneHot, kInt32 | kInt64, kAll, &kernel_one_hot),
};

}  // namespace

KernelTable indexing_kernels() noexcept {
  return {kIndexingKernels, std::size(kIndexingKernels)};
}

}  // namespace xdev::cuda
