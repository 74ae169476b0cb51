// Indexing: Slice and StridedSlice (TensorFlow's raw ops; every dtype,
// values copied bit for bit), and the index-made tensors Range and OneHot.
//
// Both copy a window of the input: along each input axis k, `size[k]`
// elements starting at begin[k], `step[k]` apart (StridedSlice's steps may
// be negative: the window is read backwards). The window is described as a
// strided view of the input (its offset and strides times the steps) and
// copied densely into the output with copy_view (strided.hpp), which merges
// contiguous rows, memcpy's dense ones and splits large copies over oneTBB's
// threads. The output has the window's elements in the same order; its own
// axes only differ by axes of size 1 (StridedSlice's shrunk and new axes).
//
// BroadcastTo copies a stride-0 view of its input (x's axes aligned with
// the output's last ones, repeated axes of stride 0) into its dense output.
//
// Range writes start + i·delta (computed in double, converted as Cast
// converts) for each i of its output, whose length the core computed.
// OneHot writes output [o, d, i] = indices[o, i] == d ? on_value : off_value
// (o over the indices' axes before `axis`, i over the others), so an index
// outside [0, depth) gives a row of off_value. Both split their output over
// oneTBB's threads (parallel_range) when it is large.
#include <xdev/op_names.h>
#include <xdev/strided_slice.hpp>

#include <cinttypes>

#include "kernels/common.hpp"
#include "kernels/kernels.hpp"
#include "kernels/strided.hpp"

namespace xdev::cpu {
namespace {

// The ints attribute `name` (NULL values when it has none): a status when it
// is missing or malformed, naming `op`.
xdev_status_t* ints_of(const xdev_kernel_call_t* call, const char* op, const char* name,
                       const int64_t** values, int64_t* count) {
  const xdev_attr_t* a = find_attr(call, name);
  if (a == nullptr || a->kind != XDEV_ATTR_INTS || a->value.ints.count < 0 ||
      (a->value.ints.count > 0 && a->value.ints.values == nullptr)) {
    return kernel_fail(call, XDEV_STATUS_INVALID_ARGUMENT,
                       "%s: the attribute '%s' must be a list of ints", op, name);
  }
  *values = a->value.ints.values;
  *count = a->value.ints.count;
  return nullptr;
}

// Copies the window of x (per input axis: begin, step, size) into the dense
// output, which has the window's element count.
xdev_status_t* copy_window(const xdev_kernel_call_t* call, const int64_t* begin,
                           const int64_t* step, const int64_t* size) {
  const xdev_tensor_t& x = *call->inputs[0];
  const xdev_tensor_t& out = *call->outputs[0];
  return guarded(call, [&] {
    int64_t count = 1;
    for (int32_t k = 0; k < x.rank; ++k) count *= size[k];
    if (count == 0) return;
    int64_t offset = 0, strides[XDEV_MAX_RANK], dense[XDEV_MAX_RANK];
    int64_t expected = 1;
    for (int32_t k = x.rank - 1; k >= 0; --k) {
      offset += begin[k] * x.strides[k];
      strides[k] = strided_slice_spec::window_stride(step[k], size[k], x.strides[k]);
      dense[k] = expected;
      expected *= size[k];
    }
    const int64_t bytes = itemsize(x.dtype);
    copy_view_bytes(bytes, x.rank, size, data_of<const char>(x) + offset * bytes, strides,
                    data_of<char>(out), dense);
  });
}

// check_signature for a window op: one input of any dtype, the output of
// its dtype, only the attributes `known`.
xdev_status_t* check_window_call(const xdev_kernel_call_t* call, const char* const* known) {
  xdev_dtype_t dtype;
  return check_signature(call, 1, kEveryDtype, known, false, &dtype);
}

xdev_status_t* shape_mismatch(const xdev_kernel_call_t* call, const char* op) {
  return kernel_fail(call, XDEV_STATUS_INVALID_ARGUMENT,
                     "%s: the output's shape is not the one the attributes give", op);
}

}  // namespace

xdev_status_t* kernel_slice(void*, const xdev_kernel_call_t* call) noexcept {
  static constexpr const char* kKnown[] = {XDEV_ATTR_NAME_begin, XDEV_ATTR_NAME_size, nullptr};
  if (xdev_status_t* s = check_window_call(call, kKnown)) return s;
  const xdev_tensor_t& x = *call->inputs[0];
  const xdev_tensor_t& out = *call->outputs[0];
  const int64_t *begin = nullptr, *size = nullptr;
  int64_t begins = 0, sizes = 0;
  if (xdev_status_t* s = ints_of(call, XDEV_OP_Slice, XDEV_ATTR_NAME_begin, &begin, &begins)) return s;
  if (xdev_status_t* s = ints_of(call, XDEV_OP_Slice, XDEV_ATTR_NAME_size, &size, &sizes)) return s;
  if (begins != x.rank || sizes != x.rank || out.rank != x.rank) return shape_mismatch(call, XDEV_OP_Slice);
  int64_t sizes_of[XDEV_MAX_RANK], steps[XDEV_MAX_RANK];
  for (int32_t k = 0; k < x.rank; ++k) {
    // In that order, nothing overflows: x.shape[k] - begin[k] >= 0.
    if (begin[k] < 0 || begin[k] > x.shape[k] || size[k] < -1 ||
        size[k] > x.shape[k] - begin[k]) {
      return kernel_fail(call, XDEV_STATUS_INVALID_ARGUMENT,
                         "Slice: axis %" PRId32 ": begin %" PRId64 " and size %" PRId64
                         " do not fit its dimension %" PRId64,
                         k, begin[k], size[k], x.shape[k]);
    }
    sizes_of[k] = size[k] < 0 ? x.shape[k] - begin[k] : size[k];
    steps[k] = 1;
    if (out.shape[k] != sizes_of[k]) return shape_mismatch(call, XDEV_OP_Slice);
  }
  return copy_window(call, begin, steps, sizes_of);
}

xdev_status_t* kernel_strided_slice(void*, const xdev_kernel_call_t* call) noexcept {
  static constexpr const char* kKnown[] = {XDEV_ATTR_NAME_begin, XDEV_ATTR_NAME_end, XDEV_ATTR_NAME_strides, XDEV_ATTR_NAME_begin_mask, XDEV_ATTR_NAME_end_mask,
                                           XDEV_ATTR_NAME_ellipsis_mask, XDEV_ATTR_NAME_new_axis_mask, XDEV_ATTR_NAME_shrink_axis_mask,
                                           nullptr};
  if (xdev_status_t* s = check_window_call(call, kKnown)) return s;
  const xdev_tensor_t& x = *call->inputs[0];
  const xdev_tensor_t& out = *call->outputs[0];
  const int64_t *begin = nullptr, *end = nullptr, *strides = nullptr;
  int64_t begins = 0, ends = 0, steps = 0;
  if (xdev_status_t* s = ints_of(call, XDEV_OP_StridedSlice, XDEV_ATTR_NAME_begin, &begin, &begins)) return s;
  if (xdev_status_t* s = ints_of(call, XDEV_OP_StridedSlice, XDEV_ATTR_NAME_end, &end, &ends)) return s;
  if (xdev_status_t* s = ints_of(call, XDEV_OP_StridedSlice, XDEV_ATTR_NAME_strides, &strides, &steps)) return s;
  if (ends != begins || steps != begins) {
    return kernel_fail(call, XDEV_STATUS_INVALID_ARGUMENT,
                       "StridedSlice: begin, end and strides have %" PRId64 ", %" PRId64
                       " and %" PRId64 " values",
                       begins, ends, steps);
  }
  int64_t masks[5] = {};
  static constexpr const char* kMasks[5] = {XDEV_ATTR_NAME_begin_mask, XDEV_ATTR_NAME_end_mask, XDEV_ATTR_NAME_ellipsis_mask,
                                            XDEV_ATTR_NAME_new_axis_mask, XDEV_ATTR_NAME_shrink_axis_mask};
  for (int m = 0; m < 5; ++m) {
    const xdev_attr_t* a = find_attr(call, kMasks[m]);
    if (a != nullptr && a->kind != XDEV_ATTR_INT) {
      return kernel_fail(call, XDEV_STATUS_INVALID_ARGUMENT,
                         "StridedSlice: the attribute '%s' must be an int", kMasks[m]);
    }
    masks[m] = a != nullptr ? a->value.i : 0;
  }
  strided_slice_spec::Dense dense;
  strided_slice_spec::make_dense(x.rank, x.shape, begin, end, strides, begins, masks[0], masks[1],
                            masks[2], masks[3], masks[4], dense);
  if (dense.error[0] != '\0') {
    return kernel_fail(call, XDEV_STATUS_INVALID_ARGUMENT, "StridedSlice: %s", dense.error);
  }
  bool fits = out.rank == dense.output_rank;
  for (int32_t j = 0; j < out.rank && fits; ++j) fits = out.shape[j] == dense.output_shape[j];
  if (!fits) return shape_mismatch(call, XDEV_OP_StridedSlice);
  int64_t first[XDEV_MAX_RANK], step[XDEV_MAX_RANK], size[XDEV_MAX_RANK];
  for (int32_t k = 0; k < x.rank; ++k) {
    first[k] = dense.axes[k].begin;
    step[k] = dense.axes[k].stride;
    size[k] = dense.axes[k].size;
  }
  return copy_window(call, first, step, size);
}

xdev_status_t* kernel_broadcast_to(void*, const xdev_kernel_call_t* call) noexcept {
  if (xdev_status_t* s = check_window_call(call, kNoAttrs)) return s;
  const xdev_tensor_t& x = *call->inputs[0];
  const xdev_tensor_t& out = *call->outputs[0];
  const int32_t extra = out.rank - x.rank;
  int64_t strides[XDEV_MAX_RANK], dense[XDEV_MAX_RANK];
  bool fits = extra >= 0;
  for (int32_t k = 0; k < out.rank && fits; ++k) {
    const int64_t size = k >= extra ? x.shape[k - extra] : 1;
    fits = size == out.shape[k] || size == 1;
    strides[k] = k >= extra && size == out.shape[k] ? x.strides[k - extra] : 0;
  }
  if (!fits) return shape_mismatch(call, XDEV_OP_BroadcastTo);
  return guarded(call, [&] {
    dense_strides(out, dense);
    copy_view_bytes(itemsize(x.dtype), out.rank, out.shape, data_of<const char>(x), strides,
                    data_of<char>(out), dense);
  });
}

xdev_status_t* kernel_range(void*, const xdev_kernel_call_t* call) noexcept {
  static constexpr const char* kKnown[] = {XDEV_ATTR_NAME_start, XDEV_ATTR_NAME_limit, XDEV_ATTR_NAME_delta, nullptr};
  xdev_dtype_t dtype;
  if (xdev_status_t* s = check_signature(call, 0, kNumeric, kKnown, false, &dtype)) return s;
  double start = 0, limit = 0, delta = 1;
  if (xdev_status_t* s = attr_number(call, XDEV_ATTR_NAME_start, true, 0.0, &start)) return s;
  if (xdev_status_t* s = attr_number(call, XDEV_ATTR_NAME_limit, true, 0.0, &limit)) return s;
  if (xdev_status_t* s = attr_number(call, XDEV_ATTR_NAME_delta, false, 1.0, &delta)) return s;
  const xdev_tensor_t& out = *call->outputs[0];
  if (out.rank != 1 || delta == 0) {
    return kernel_fail(call, XDEV_STATUS_INVALID_ARGUMENT,
                       "Range: the output must have rank 1 (not %" PRId32
                       ") and delta must not be 0",
                       out.rank);
  }
  return guarded_visit<kNumeric>(call, dtype, [&](auto zero) {
    using T = decltype(zero);
    T* const o = data_of<T>(out);
    parallel_range(out.shape[0], [=](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) o[i] = convert<T>(start + static_cast<double>(i) * delta);
    });
  });
}

xdev_status_t* kernel_one_hot(void*, const xdev_kernel_call_t* call) noexcept {
  static constexpr const char* kKnown[] = {XDEV_ATTR_NAME_depth, XDEV_ATTR_NAME_on_value, XDEV_ATTR_NAME_off_value, XDEV_ATTR_NAME_axis, nullptr};
  if (xdev_status_t* s = check_call(call, 1)) return s;
  if (xdev_status_t* s = check_attr_names(call, kKnown)) return s;
  const xdev_tensor_t& indices = *call->inputs[0];
  const xdev_tensor_t& out = *call->outputs[0];
  if (!in_mask(indices.dtype, kI32 | kI64) || !in_mask(out.dtype, kEveryDtype)) {
    return kernel_fail(call, XDEV_STATUS_UNIMPLEMENTED,
                       "OneHot: the cpu plugin has no kernel for indices %s, output %s",
                       dtype_name(indices.dtype), dtype_name(out.dtype));
  }
  const xdev_attr_t* depth = find_attr(call, XDEV_ATTR_NAME_depth);
  const xdev_attr_t* axis = find_attr(call, XDEV_ATTR_NAME_axis);
  if (depth == nullptr || depth->kind != XDEV_ATTR_INT || depth->value.i < 0 || axis == nullptr ||
      axis->kind != XDEV_ATTR_INT || axis->value.i < 0 || axis->value.i > indices.rank) {
    return kernel_fail(call, XDEV_STATUS_INVALID_ARGUMENT,
                       "OneHot: the attributes 'depth' (an int >= 0) and 'axis' (an int in "
                       "[0, %" PRId32 "]) are required",
                       indices.rank);
  }
  double on = 1, off = 0;
  if (xdev_status_t* s = attr_number(call, XDEV_ATTR_NAME_on_value, false, 1.0, &on)) return s;
  if (xdev_status_t* s = attr_number(call, XDEV_ATTR_NAME_off_value, false, 0.0, &off)) return s;
  if (!is_contiguous(indices)) {
    return kernel_fail(call, XDEV_STATUS_INVALID_ARGUMENT,
                       "OneHot: the indices must be contiguous (the op table says so)");
  }
  const auto a = static_cast<int32_t>(axis->value.i);
  const int64_t n = depth->value.i;
  bool fits = out.rank == indices.rank + 1 && out.shape[a] == n;
  for (int32_t k = 0; k < indices.rank && fits; ++k) fits = out.shape[k < a ? k : k + 1] == indices.shape[k];
  if (!fits) return shape_mismatch(call, XDEV_OP_OneHot);
  int64_t inner = 1;
  for (int32_t k = a; k < indices.rank; ++k) inner *= indices.shape[k];
  return guarded(call, [&] {
    visit_word(itemsize(out.dtype), [&](auto word) {
      using T = decltype(word);
      T on_t, off_t;
      unsigned char bytes[2][8];
      store_converted(on, out.dtype, bytes[0]);
      store_converted(off, out.dtype, bytes[1]);
      std::memcpy(&on_t, bytes[0], sizeof on_t);
      std::memcpy(&off_t, bytes[1], sizeof off_t);
      T* const o = data_of<T>(out);
      auto write = [&](const auto* index) {
        parallel_range(element_count(out), [=](int64_t begin, int64_t end) {
          for (int64_t j = begin; j < end; ++j) {
            const int64_t i = j % inner, rest = j / inner;
            o[j] = static_cast<int64_t>(index[rest / n * inner + i]) == rest % n ? on_t : off_t;
          }
        });
      };
      if (indices.dtype == XDEV_DTYPE_INT32) write(data_of<const int32_t>(indices));
      else write(data_of<const int64_t>(indices));
    });
  });
}

}  // namespace xdev::cpu
