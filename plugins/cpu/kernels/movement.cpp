// Data movement: ConcatV2, Pack, Tile, PadV2, GatherV2 (TensorFlow's raw ops;
// Identity is Copy's kernel). Every dtype; values are copied bit for bit.
//
// The output is dense. ConcatV2, Pack and PadV2 copy each input (any
// strides) into its region of the output with copy_view (strided.hpp), which
// memcpy's rows that are dense on both sides and splits large inputs over
// oneTBB's threads; PadV2 fills the output with its value first. Tile writes
// the output row by row (rows of its last axis), rows split over oneTBB's
// threads when the output is large. GatherV2 (contiguous inputs) checks every
// index first, then copies one slice of `inner` elements per (outer, index).
#include <xdev/op_names.h>
#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/parallel_for.h>

#include <algorithm>
#include <cinttypes>

#include "kernels/common.hpp"
#include "kernels/kernels.hpp"
#include "kernels/strided.hpp"

namespace xdev::cpu {
namespace {

const char* op_of(const xdev_kernel_call_t* call) noexcept {
  return call->op != nullptr ? call->op : "kernel";
}

// Checks what ConcatV2 and Pack share (inputs of one dtype, the output's,
// only the attribute `axis`, an int in [0, axis_limit)) and reads `axis`.
// `axis_limit` is the output's rank.
xdev_status_t* check_joined(const xdev_kernel_call_t* call, int64_t* axis) {
  static constexpr const char* kKnown[] = {XDEV_ATTR_NAME_axis, nullptr};
  xdev_dtype_t dtype;
  if (xdev_status_t* s = check_signature(call, -1, kEveryDtype, kKnown, false, &dtype)) return s;
  const xdev_tensor_t& out = *call->outputs[0];
  const xdev_attr_t* a = find_attr(call, XDEV_ATTR_NAME_axis);
  if (a == nullptr || a->kind != XDEV_ATTR_INT || a->value.i < 0 || a->value.i >= out.rank) {
    return kernel_fail(call, XDEV_STATUS_INVALID_ARGUMENT,
                       "%s: the attribute 'axis' must be an int in [0, %" PRId32 ")", op_of(call),
                       out.rank);
  }
  *axis = a->value.i;
  return nullptr;
}

xdev_status_t* shape_mismatch(const xdev_kernel_call_t* call, uint32_t input) {
  return kernel_fail(call, XDEV_STATUS_INVALID_ARGUMENT,
                     "%s: input %" PRIu32 "'s shape does not fit the output's and the axis",
                     op_of(call), input);
}

// The ints attribute `name`, of `count` values each >= 0; NULL (and a
// status in *status) when it is missing or malformed.
const int64_t* counts_attr(const xdev_kernel_call_t* call, const char* name, int64_t count,
                           xdev_status_t** status) {
  const xdev_attr_t* a = find_attr(call, name);
  bool ok = a != nullptr && a->kind == XDEV_ATTR_INTS && a->value.ints.count == count &&
            (count == 0 || a->value.ints.values != nullptr);
  for (int64_t k = 0; ok && k < count; ++k) ok = a->value.ints.values[k] >= 0;
  if (!ok) {
    *status = kernel_fail(call, XDEV_STATUS_INVALID_ARGUMENT,
                          "%s: the attribute '%s' must be %" PRId64 " ints >= 0", op_of(call),
                          name, count);
    return nullptr;
  }
  static constexpr int64_t kNone[1] = {0};
  return count == 0 ? kNone : a->value.ints.values;
}

// body(begin, end) over [0, rows) rows of `row` elements, split over
// oneTBB's threads when there are many elements.
template <typename Body>
void for_rows(int64_t rows, int64_t row, const Body& body) {
  if (rows * row < kParallelMinElements) {
    body(int64_t{0}, rows);
    return;
  }
  const int64_t grain = std::max<int64_t>(1, kParallelGrainElements / std::max<int64_t>(1, row));
  tbb::parallel_for(tbb::blocked_range<int64_t>(0, rows, grain),
                    [&](const tbb::blocked_range<int64_t>& r) { body(r.begin(), r.end()); });
}

// Tile's rows: out row r (r indexes the output's axes but the last) repeats
// the input row it maps to (each index modulo the input's dimension).
template <typename Word>
void tile_rows(const xdev_tensor_t& x, const xdev_tensor_t& out) {
  const int32_t rank = out.rank;
  const int64_t row = out.shape[rank - 1], n = x.shape[rank - 1];
  const int64_t stride = x.strides[rank - 1];
  const int64_t rows = element_count(out) / row;
  const Word* const src = data_of<const Word>(x);
  Word* const dst = data_of<Word>(out);
  auto body = [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      int64_t at = 0, index = r;
      for (int32_t k = rank - 2; k >= 0; --k) {
        at += (index % out.shape[k]) % x.shape[k] * x.strides[k];
        index /= out.shape[k];
      }
      const Word* __restrict p = src + at;
      Word* __restrict q = dst + r * row;
      for (int64_t j = 0; j < n; ++j) q[j] = p[j * stride];  // the first copy
      for (int64_t j = n; j < row; j += n) std::memcpy(q + j, q, static_cast<size_t>(n) * sizeof(Word));
    }
  };
  for_rows(rows, row, body);
}

}  // namespace

xdev_status_t* kernel_gather_v2(void*, const xdev_kernel_call_t* call) noexcept {
  static constexpr const char* kKnown[] = {XDEV_ATTR_NAME_axis, nullptr};
  if (xdev_status_t* s = check_call(call, 2)) return s;
  if (xdev_status_t* s = check_attr_names(call, kKnown)) return s;
  const xdev_tensor_t& params = *call->inputs[0];
  const xdev_tensor_t& indices = *call->inputs[1];
  const xdev_tensor_t& out = *call->outputs[0];
  if (!in_mask(params.dtype, kEveryDtype) || out.dtype != params.dtype ||
      !in_mask(indices.dtype, kI32 | kI64)) {
    return kernel_fail(call, XDEV_STATUS_UNIMPLEMENTED,
                       "GatherV2: the cpu plugin has no kernel for params %s, indices %s, output %s",
                       dtype_name(params.dtype), dtype_name(indices.dtype), dtype_name(out.dtype));
  }
  const xdev_attr_t* a = find_attr(call, XDEV_ATTR_NAME_axis);
  if (a == nullptr || a->kind != XDEV_ATTR_INT || a->value.i < 0 || a->value.i >= params.rank) {
    return kernel_fail(call, XDEV_STATUS_INVALID_ARGUMENT,
                       "GatherV2: the attribute 'axis' must be an int in [0, %" PRId32 ")",
                       params.rank);
  }
  const auto axis = static_cast<int32_t>(a->value.i);
  if (!is_contiguous(params) || !is_contiguous(indices)) {
    return kernel_fail(call, XDEV_STATUS_INVALID_ARGUMENT,
                       "GatherV2: the inputs must be contiguous (the op table says so)");
  }
  bool fits = out.rank == params.rank - 1 + indices.rank;
  for (int32_t k = 0, j = 0; k < params.rank && fits; ++k) {
    if (k != axis) {
      fits = out.shape[j++] == params.shape[k];
      continue;
    }
    for (int32_t i = 0; i < indices.rank && fits; ++i) fits = out.shape[j++] == indices.shape[i];
  }
  if (!fits) return shape_mismatch(call, 1);
  int64_t outer = 1, inner = 1;
  for (int32_t k = 0; k < params.rank; ++k) {
    if (k < axis) outer *= params.shape[k];
    if (k > axis) inner *= params.shape[k];
  }
  const int64_t n = params.shape[axis], count = element_count(indices);
  auto index = [&](int64_t j) -> int64_t {
    return indices.dtype == XDEV_DTYPE_INT32 ? data_of<const int32_t>(indices)[j]
                                             : data_of<const int64_t>(indices)[j];
  };
  // docs/ops.md: an index out of range is an error, reported before any write.
  for (int64_t j = 0; j < count; ++j) {
    const int64_t v = index(j);
    if (v < 0 || v >= n) {
      return kernel_fail(call, XDEV_STATUS_INVALID_ARGUMENT,
                         "GatherV2: indices[%" PRId64 "] = %" PRId64
                         " is out of range [0, %" PRId64 ") for axis %" PRId32,
                         j, v, n, axis);
    }
  }
  return guarded(call, [&] {
    if (element_count(out) == 0) return;
    const auto bytes = static_cast<size_t>(inner * itemsize(params.dtype));
    const char* const src = data_of<const char>(params);
    char* const dst = data_of<char>(out);
    for_rows(outer * count, inner, [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) {
        const int64_t o = r / count, j = r % count;
        std::memcpy(dst + static_cast<size_t>(r) * bytes,
                    src + static_cast<size_t>(o * n + index(j)) * bytes, bytes);
      }
    });
    return;
  });
}

xdev_status_t* kernel_tile(void*, const xdev_kernel_call_t* call) noexcept {
  static constexpr const char* kKnown[] = {XDEV_ATTR_NAME_multiples, nullptr};
  xdev_dtype_t dtype;
  if (xdev_status_t* s = check_signature(call, 1, kEveryDtype, kKnown, false, &dtype)) return s;
  const xdev_tensor_t& x = *call->inputs[0];
  const xdev_tensor_t& out = *call->outputs[0];
  xdev_status_t* status = nullptr;
  const int64_t* m = counts_attr(call, XDEV_ATTR_NAME_multiples, x.rank, &status);
  if (m == nullptr) return status;
  bool fits = out.rank == x.rank;
  // Compared by division: x.shape[k] · m[k] may overflow (the core refuses
  // such calls; a direct caller may not).
  for (int32_t k = 0; k < x.rank && fits; ++k) {
    fits = x.shape[k] == 0 || m[k] == 0
               ? out.shape[k] == 0
               : out.shape[k] % x.shape[k] == 0 && out.shape[k] / x.shape[k] == m[k];
  }
  if (!fits) return shape_mismatch(call, 0);
  return guarded(call, [&] {
    if (element_count(out) == 0) return;
    const int64_t size = itemsize(dtype);
    if (x.rank == 0) {
      std::memcpy(data_of<char>(out), data_of<const char>(x), static_cast<size_t>(size));
      return;
    }
    visit_word(size, [&](auto word) { tile_rows<decltype(word)>(x, out); });
    return;
  });
}

xdev_status_t* kernel_pad_v2(void*, const xdev_kernel_call_t* call) noexcept {
  static constexpr const char* kKnown[] = {XDEV_ATTR_NAME_paddings, XDEV_ATTR_NAME_constant_values, nullptr};
  xdev_dtype_t dtype;
  if (xdev_status_t* s = check_signature(call, 1, kEveryDtype, kKnown, false, &dtype)) return s;
  const xdev_tensor_t& x = *call->inputs[0];
  const xdev_tensor_t& out = *call->outputs[0];
  xdev_status_t* status = nullptr;
  const int64_t* p = counts_attr(call, XDEV_ATTR_NAME_paddings, 2 * int64_t{x.rank}, &status);
  if (p == nullptr) return status;
  double value = 0;
  if (xdev_status_t* s = attr_number(call, XDEV_ATTR_NAME_constant_values, false, 0.0, &value)) return s;
  bool fits = out.rank == x.rank;
  for (int32_t k = 0; k < x.rank && fits; ++k) {
    // In that order, none overflows: out.shape[k] and x.shape[k] are sizes.
    fits = p[2 * k] <= out.shape[k] - x.shape[k] &&
           p[2 * k + 1] == out.shape[k] - x.shape[k] - p[2 * k];
  }
  if (!fits) return shape_mismatch(call, 0);
  return guarded(call, [&] {
    fill_converted(out, value);
    if (element_count(x) == 0) return;
    int64_t strides[XDEV_MAX_RANK];
    dense_strides(out, strides);
    const int64_t size = itemsize(dtype);
    int64_t at = 0;
    for (int32_t k = 0; k < x.rank; ++k) at += p[2 * k] * strides[k];
    copy_view_bytes(size, x.rank, x.shape, data_of<const char>(x), x.strides,
                    data_of<char>(out) + at * size, strides);
    return;
  });
}

xdev_status_t* kernel_concat_v2(void*, const xdev_kernel_call_t* call) noexcept {
  int64_t axis = 0;
  if (xdev_status_t* s = check_joined(call, &axis)) return s;
  const xdev_tensor_t& out = *call->outputs[0];
  int64_t along = 0;
  for (uint32_t i = 0; i < call->input_count; ++i) {
    const xdev_tensor_t& x = *call->inputs[i];
    bool fits = x.rank == out.rank;
    for (int32_t k = 0; k < x.rank && fits; ++k) fits = k == axis || x.shape[k] == out.shape[k];
    if (!fits) return shape_mismatch(call, i);
    along += x.shape[axis];
  }
  if (along != out.shape[axis]) return shape_mismatch(call, call->input_count - 1);
  return guarded(call, [&] {
    int64_t strides[XDEV_MAX_RANK];
    dense_strides(out, strides);
    const int64_t size = itemsize(out.dtype);
    char* const base = data_of<char>(out);
    int64_t offset = 0;  // along the axis
    for (uint32_t i = 0; i < call->input_count; ++i) {
      const xdev_tensor_t& x = *call->inputs[i];
      if (element_count(x) > 0) {
        copy_view_bytes(size, x.rank, x.shape, data_of<const char>(x), x.strides,
                        base + offset * strides[axis] * size, strides);
      }
      offset += x.shape[axis];
    }
    return;
  });
}

xdev_status_t* kernel_pack(void*, const xdev_kernel_call_t* call) noexcept {
  int64_t axis = 0;
  if (xdev_status_t* s = check_joined(call, &axis)) return s;
  const xdev_tensor_t& out = *call->outputs[0];
  if (out.shape[axis] != call->input_count) return shape_mismatch(call, 0);
  for (uint32_t i = 0; i < call->input_count; ++i) {
    const xdev_tensor_t& x = *call->inputs[i];
    bool fits = x.rank + 1 == out.rank;
    for (int32_t k = 0; k < x.rank && fits; ++k) {
      fits = x.shape[k] == out.shape[k < axis ? k : k + 1];
    }
    if (!fits) return shape_mismatch(call, i);
  }
  return guarded(call, [&] {
    int64_t dense[XDEV_MAX_RANK];
    dense_strides(out, dense);
    // The output's strides without the new axis: input i's region.
    int64_t strides[XDEV_MAX_RANK];
    for (int32_t k = 0, j = 0; k < out.rank; ++k) {
      if (k != axis) strides[j++] = dense[k];
    }
    const int64_t size = itemsize(out.dtype);
    char* const base = data_of<char>(out);
    if (element_count(out) == 0) return;
    for (uint32_t i = 0; i < call->input_count; ++i) {
      const xdev_tensor_t& x = *call->inputs[i];
      copy_view_bytes(size, x.rank, x.shape, data_of<const char>(x), x.strides,
                      base + static_cast<int64_t>(i) * dense[axis] * size, strides);
    }
    return;
  });
}

}  // namespace xdev::cpu
