#include "kernels/widen.hpp"

#include <algorithm>
#include <limits>
#include <memory>
#include <vector>

#include "kernels/strided.hpp"

namespace xdev::cpu {
namespace {

const char* op_name(const xdev_kernel_call_t* call) { return call->op != nullptr ? call->op : "kernel"; }

// A float32 stand-in for one 16-bit float tensor: dense, same shape.
struct Wide {
  xdev_tensor_t tensor{};
  int64_t strides[XDEV_MAX_RANK] = {};
  std::unique_ptr<float[]> data;
};

template <typename F>
void visit_half(xdev_dtype_t dtype, F&& f) {
  if (dtype == XDEV_DTYPE_FLOAT16) {
    f(float16{});
  } else {
    f(bfloat16{});
  }
}

xdev_status_t* make_wide(const xdev_kernel_call_t* call, const xdev_tensor_t& t, Wide& w) {
  const int64_t n = element_count(t);
  if (n > std::numeric_limits<int64_t>::max() / 4) {
    return kernel_fail(call, XDEV_STATUS_INVALID_ARGUMENT,
                       "%s: %lld elements do not fit a float32 buffer", op_name(call),
                       static_cast<long long>(n));
  }
  w.data = std::make_unique<float[]>(static_cast<size_t>(n));
  dense_strides(t, w.strides);
  w.tensor = t;
  w.tensor.data = w.data.get();
  w.tensor.byte_offset = 0;
  w.tensor.dtype = XDEV_DTYPE_FLOAT32;
  w.tensor.strides = t.rank > 0 ? w.strides : t.strides;
  return nullptr;
}

xdev_status_t* run(xdev_kernel_fn_t fn, void* context, const xdev_kernel_call_t* call,
                   xdev_dtype_t half) {
  const uint32_t inputs = call->input_count, outputs = call->output_count;
  std::vector<Wide> wide(inputs + outputs);
  std::vector<const xdev_tensor_t*> in(inputs);
  std::vector<const xdev_tensor_t*> out(outputs);
  for (uint32_t i = 0; i < inputs; ++i) {
    const xdev_tensor_t& t = *call->inputs[i];
    in[i] = &t;
    if (t.dtype != half) continue;
    if (xdev_status_t* s = make_wide(call, t, wide[i])) return s;
    visit_half(half, [&](auto h) {
      using H = decltype(h);
      map<float, H>(t, wide[i].tensor, [](H v) { return static_cast<float>(v); });
    });
    in[i] = &wide[i].tensor;
  }
  for (uint32_t o = 0; o < outputs; ++o) {
    const xdev_tensor_t& t = *call->outputs[o];
    out[o] = &t;
    if (t.dtype != half) continue;
    if (xdev_status_t* s = make_wide(call, t, wide[inputs + o])) return s;
    out[o] = &wide[inputs + o].tensor;
  }
  // The caller's struct, as long as it is (a v1.0 call stays one).
  xdev_kernel_call_t copy{};
  std::memcpy(&copy, call, std::min(sizeof copy, call->struct_size));
  copy.inputs = in.data();
  copy.outputs = out.data();
  if (xdev_status_t* s = fn(context, &copy)) return s;
  for (uint32_t o = 0; o < outputs; ++o) {
    const xdev_tensor_t& t = *call->outputs[o];
    if (t.dtype != half) continue;
    visit_half(half, [&](auto h) {
      using H = decltype(h);
      map<H, float>(wide[inputs + o].tensor, t, [](float v) { return H(v); });
    });
  }
  return nullptr;
}

}  // namespace

xdev_status_t* run_widened(xdev_kernel_fn_t fn, void* context,
                           const xdev_kernel_call_t* call) noexcept {
  if (xdev_status_t* s = check_call(call, -1, call->output_count)) return s;
  // One 16-bit float dtype; float32 beside it would be taken for it.
  xdev_dtype_t half = XDEV_DTYPE_INVALID;
  const uint32_t total = call->input_count + call->output_count;
  for (uint32_t i = 0; i < total; ++i) {
    const xdev_tensor_t& t =
        i < call->input_count ? *call->inputs[i] : *call->outputs[i - call->input_count];
    const bool is_half = in_mask(t.dtype, kHalves);
    if (half == XDEV_DTYPE_INVALID && is_half) half = t.dtype;
    if ((is_half && t.dtype != half) || t.dtype == XDEV_DTYPE_FLOAT32) {
      return kernel_fail(call, XDEV_STATUS_INVALID_ARGUMENT,
                         "%s: %s %u is %s in a call of %s tensors", op_name(call),
                         i < call->input_count ? "input" : "output",
                         i < call->input_count ? i : i - call->input_count, dtype_name(t.dtype),
                         dtype_name(half == XDEV_DTYPE_INVALID ? t.dtype : half));
    }
  }
  try {
    return run(fn, context, call, half);
  } catch (...) {
    return kernel_unexpected(call);
  }
}

}  // namespace xdev::cpu
