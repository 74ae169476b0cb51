#include "kernels/common.hpp"

#include <cinttypes>
#include <cstdio>

namespace xdev::cpu {
namespace {

const char* op_of(const xdev_kernel_call_t* call) noexcept {
  return call != nullptr && call->op != nullptr ? call->op : "kernel";
}

// "(2, 3)" into `buffer`.
const char* shape_text(const xdev_tensor_t& t, char* buffer, size_t size) noexcept {
  size_t used = 0;
  used += static_cast<size_t>(std::snprintf(buffer, size, "("));
  for (int32_t k = 0; k < t.rank && used < size; ++k) {
    used += static_cast<size_t>(
        std::snprintf(buffer + used, size - used, "%s%" PRId64, k == 0 ? "" : ", ", t.shape[k]));
  }
  if (used < size) {
    std::snprintf(buffer + used, size - used, "%s)", t.rank == 1 ? "," : "");
  }
  return buffer;
}

}  // namespace

void store_converted(double value, xdev_dtype_t dtype, void* out) noexcept {
  visit_element(dtype, [value, out](auto e) {
    using E = decltype(e);
    const typename E::stored s = E::store(convert<typename E::value>(value));
    std::memcpy(out, &s, sizeof s);
  });
}

const char* dtype_list(uint64_t mask) noexcept {
  if (mask == kAllDtypes) return "float32, float64, int32, int64, bool";
  if (mask == kNumeric) return "float32, float64, int32, int64";
  if (mask == kFloats) return "float32, float64";
  if (mask == (kFloats | kHalves)) return "float32, float64, float16, bfloat16";
  if (mask == (kNumeric | kHalves)) return "float32, float64, int32, int64, float16, bfloat16";
  if (mask == kArith) return "float32, float64, int32, int64, uint8, int8";
  if (mask == kSigned) return "float32, float64, int32, int64, int8";
  if (mask == (kArith | kBool)) return "float32, float64, int32, int64, bool, uint8, int8";
  if (mask == kEveryDtype) return "every dtype";
  return "see the plugin's kernel list";
}

xdev_status_t* check_call(const xdev_kernel_call_t* call, int inputs, uint32_t outputs) noexcept {
  if (call == nullptr)
    return kernel_fail(call, XDEV_STATUS_INVALID_ARGUMENT, "kernel: call is NULL");
  const char* op = op_of(call);
  if (!XDEV_HAS_FIELD(call, xdev_kernel_call_t, attr_count)) {
    return kernel_fail(call, XDEV_STATUS_ABI_MISMATCH,
                       "%s: call->struct_size is %zu bytes; ABI v1.0 kernel calls need %zu", op,
                       call->struct_size, static_cast<size_t>(XDEV_KERNEL_CALL_STRUCT_SIZE_1_0));
  }
  if (inputs >= 0 ? call->input_count != static_cast<uint32_t>(inputs) : call->input_count == 0) {
    if (inputs >= 0) {
      return kernel_fail(call, XDEV_STATUS_INVALID_ARGUMENT, "%s: takes %d input%s, got %" PRIu32,
                         op, inputs, inputs == 1 ? "" : "s", call->input_count);
    }
    return kernel_fail(call, XDEV_STATUS_INVALID_ARGUMENT, "%s: takes at least 1 input, got 0", op);
  }
  if (call->output_count != outputs) {
    return kernel_fail(call, XDEV_STATUS_INVALID_ARGUMENT,
                       "%s: has %" PRIu32 " output%s, got %" PRIu32, op, outputs,
                       outputs == 1 ? "" : "s", call->output_count);
  }
  if ((call->input_count > 0 && call->inputs == nullptr) || call->outputs == nullptr) {
    return kernel_fail(call, XDEV_STATUS_INVALID_ARGUMENT, "%s: the %s array is NULL", op,
                       call->outputs == nullptr ? "outputs" : "inputs");
  }
  if (call->attr_count > 0 && call->attrs == nullptr) {
    return kernel_fail(call, XDEV_STATUS_INVALID_ARGUMENT,
                       "%s: attrs is NULL with attr_count %" PRIu32, op, call->attr_count);
  }
  for (uint32_t i = 0; i < call->input_count + outputs; ++i) {
    const bool is_output = i >= call->input_count;
    const uint32_t index = is_output ? i - call->input_count : i;
    const xdev_tensor_t* t = is_output ? call->outputs[index] : call->inputs[i];
    const char* role = is_output ? "output" : "input";
    if (t == nullptr) {
      return kernel_fail(call, XDEV_STATUS_INVALID_ARGUMENT, "%s: %s %" PRIu32 " is NULL", op, role,
                         index);
    }
    if (t->rank < 0 || t->rank > XDEV_MAX_RANK) {
      return kernel_fail(call, XDEV_STATUS_INVALID_ARGUMENT,
                         "%s: %s %" PRIu32 " has rank %" PRId32 " (0 to %d supported)", op, role,
                         index, t->rank, XDEV_MAX_RANK);
    }
    if (t->rank > 0 && (t->shape == nullptr || t->strides == nullptr)) {
      return kernel_fail(call, XDEV_STATUS_INVALID_ARGUMENT,
                         "%s: %s %" PRIu32 " has rank %" PRId32 " but no shape or strides", op,
                         role, index, t->rank);
    }
    bool empty = false;
    for (int32_t k = 0; k < t->rank; ++k) {
      if (t->shape[k] < 0) {
        return kernel_fail(call, XDEV_STATUS_INVALID_ARGUMENT,
                           "%s: %s %" PRIu32 " has dimension %" PRId32 " = %" PRId64, op, role,
                           index, k, t->shape[k]);
      }
      if (t->shape[k] == 0) empty = true;
    }
    if (!empty && t->data == nullptr) {
      return kernel_fail(call, XDEV_STATUS_INVALID_ARGUMENT, "%s: %s %" PRIu32 " has no data", op,
                         role, index);
    }
    // An empty output (SoftmaxCrossEntropyWithLogits' backprop of no
    // classes beside a loss that has elements) has no layout to check.
    if (is_output && !empty && !is_contiguous(*t)) {
      return kernel_fail(call, XDEV_STATUS_INVALID_ARGUMENT,
                         "%s: the output must be contiguous (row-major)", op);
    }
  }
  return nullptr;
}

xdev_status_t* check_dtypes(const xdev_kernel_call_t* call, uint64_t mask, xdev_dtype_t* dtype,
                            xdev_dtype_t output_dtype) noexcept {
  const char* op = op_of(call);
  const xdev_dtype_t out = call->outputs[0]->dtype;
  const xdev_dtype_t in = call->input_count > 0 ? call->inputs[0]->dtype : out;
  if (!in_mask(in, mask)) {
    return kernel_fail(call, XDEV_STATUS_UNIMPLEMENTED,
                       "%s: the cpu plugin has no kernel for dtype %s (it has %s)", op,
                       dtype_name(in), dtype_list(mask));
  }
  for (uint32_t i = 1; i < call->input_count; ++i) {
    if (call->inputs[i]->dtype != in) {
      return kernel_fail(call, XDEV_STATUS_INVALID_ARGUMENT,
                         "%s: input %" PRIu32 " is %s but input 0 is %s", op, i,
                         dtype_name(call->inputs[i]->dtype), dtype_name(in));
    }
  }
  const xdev_dtype_t expected = output_dtype != XDEV_DTYPE_INVALID ? output_dtype : in;
  if (out != expected) {
    return kernel_fail(call, XDEV_STATUS_INVALID_ARGUMENT, "%s: the output is %s, expected %s", op,
                       dtype_name(out), dtype_name(expected));
  }
  *dtype = in;
  return nullptr;
}

xdev_status_t* check_same_shapes(const xdev_kernel_call_t* call) noexcept {
  const xdev_tensor_t& out = *call->outputs[0];
  for (uint32_t i = 0; i < call->input_count; ++i) {
    if (!same_shape(*call->inputs[i], out)) {
      char a[256], b[256];
      return kernel_fail(call, XDEV_STATUS_INVALID_ARGUMENT,
                         "%s: input %" PRIu32
                         " has shape %s, the output %s (inputs come "
                         "broadcast to the output's shape)",
                         op_of(call), i, shape_text(*call->inputs[i], a, sizeof(a)),
                         shape_text(out, b, sizeof(b)));
    }
  }
  return nullptr;
}

const xdev_attr_t* find_attr(const xdev_kernel_call_t* call, const char* name) noexcept {
  for (uint32_t i = 0; i < call->attr_count; ++i) {
    const xdev_attr_t& a = call->attrs[i];
    if (a.name != nullptr && std::strcmp(a.name, name) == 0) return &a;
  }
  return nullptr;
}

xdev_status_t* check_attr_names(const xdev_kernel_call_t* call, const char* const* known) noexcept {
  (void)known;  // the names the kernel reads; any other is ignored (docs/ops.md)
  for (uint32_t i = 0; i < call->attr_count; ++i) {
    if (call->attrs[i].name == nullptr) {
      return kernel_fail(call, XDEV_STATUS_INVALID_ARGUMENT, "%s: attribute %" PRIu32
                         " has no name", op_of(call), i);
    }
  }
  return nullptr;
}

xdev_status_t* check_signature(const xdev_kernel_call_t* call, int inputs, uint64_t mask,
                               const char* const* known, bool same_shapes, xdev_dtype_t* dtype,
                               xdev_dtype_t output_dtype) noexcept {
  if (xdev_status_t* s = check_call(call, inputs)) return s;
  if (xdev_status_t* s = check_dtypes(call, mask, dtype, output_dtype)) return s;
  if (same_shapes) {
    if (xdev_status_t* s = check_same_shapes(call)) return s;
  }
  return check_attr_names(call, known);
}

xdev_status_t* attr_number(const xdev_kernel_call_t* call, const char* name, bool required,
                           double fallback, double* out) noexcept {
  const xdev_attr_t* a = find_attr(call, name);
  if (a == nullptr) {
    if (required) {
      return kernel_fail(call, XDEV_STATUS_INVALID_ARGUMENT, "%s: the attribute '%s' is missing",
                         op_of(call), name);
    }
    *out = fallback;
    return nullptr;
  }
  switch (a->kind) {
    case XDEV_ATTR_FLOAT:
      *out = a->value.f;
      return nullptr;
    case XDEV_ATTR_INT:
      *out = static_cast<double>(a->value.i);
      return nullptr;
    case XDEV_ATTR_BOOL:
      *out = a->value.b != 0 ? 1.0 : 0.0;
      return nullptr;
    default:
      return kernel_fail(call, XDEV_STATUS_INVALID_ARGUMENT,
                         "%s: the attribute '%s' must be a number (kind %d given)", op_of(call),
                         name, static_cast<int>(a->kind));
  }
}

xdev_status_t* attr_bool(const xdev_kernel_call_t* call, const char* name, bool fallback,
                         bool* out) noexcept {
  const xdev_attr_t* a = find_attr(call, name);
  if (a == nullptr) {
    *out = fallback;
    return nullptr;
  }
  if (a->kind == XDEV_ATTR_BOOL) {
    *out = a->value.b != 0;
    return nullptr;
  }
  if (a->kind == XDEV_ATTR_INT) {
    *out = a->value.i != 0;
    return nullptr;
  }
  return kernel_fail(call, XDEV_STATUS_INVALID_ARGUMENT,
                     "%s: the attribute '%s' must be a bool (kind %d given)", op_of(call), name,
                     static_cast<int>(a->kind));
}

}  // namespace xdev::cpu
