// Data movement along an axis: ConcatV2 and Pack (TensorFlow's raw ops;
// Identity is Copy's kernel). Every dtype; values are copied bit for bit.
//
// The output is dense; each input (any strides) is copied into its region of
// the output with copy_view (strided.hpp), which memcpy's rows that are dense
// on both sides and splits large inputs over oneTBB's threads.
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
  static constexpr const char* kKnown[] = {"axis", nullptr};
  xdev_dtype_t dtype;
  if (xdev_status_t* s = check_signature(call, -1, kAllDtypes, kKnown, false, &dtype)) return s;
  const xdev_tensor_t& out = *call->outputs[0];
  const xdev_attr_t* a = find_attr(call, "axis");
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

}  // namespace

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
  try {
    int64_t strides[XDEV_MAX_RANK];
    dense_strides(out, strides);
    const int64_t size = itemsize(out.dtype);
    char* const base = data_of<char>(out);
    int64_t offset = 0;  // along the axis
    for (uint32_t i = 0; i < call->input_count; ++i) {
      const xdev_tensor_t& x = *call->inputs[i];
      if (num_elements(x) > 0) {
        copy_view_bytes(size, x.rank, x.shape, data_of<const char>(x), x.strides,
                        base + offset * strides[axis] * size, strides);
      }
      offset += x.shape[axis];
    }
    return nullptr;
  } catch (...) {
    return kernel_unexpected(call);
  }
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
  try {
    int64_t dense[XDEV_MAX_RANK];
    dense_strides(out, dense);
    // The output's strides without the new axis: input i's region.
    int64_t strides[XDEV_MAX_RANK];
    for (int32_t k = 0, j = 0; k < out.rank; ++k) {
      if (k != axis) strides[j++] = dense[k];
    }
    const int64_t size = itemsize(out.dtype);
    char* const base = data_of<char>(out);
    if (num_elements(out) == 0) return nullptr;
    for (uint32_t i = 0; i < call->input_count; ++i) {
      const xdev_tensor_t& x = *call->inputs[i];
      copy_view_bytes(size, x.rank, x.shape, data_of<const char>(x), x.strides,
                      base + static_cast<int64_t>(i) * dense[axis] * size, strides);
    }
    return nullptr;
  } catch (...) {
    return kernel_unexpected(call);
  }
}

}  // namespace xdev::cpu
