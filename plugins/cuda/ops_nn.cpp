// The cuda plugin's NN ops (docs/ops.md "NN ops"): BiasAdd (Add's
// elementwise kernel with the bias broadcast), SoftmaxCrossEntropyWithLogits
// (two outputs) and LayerNorm (nn.cu). Checks and layouts here; the checks
// are the cpu plugin's (plugins/cpu/kernels/nn.cpp). Inputs may have any
// strides (the core passes them contiguous: the op table's
// contiguous_inputs); outputs are dense.
#include <xdev/plugin.h>
#include <xdev/op_names.h>

#include <cinttypes>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <iterator>

#include "call.hpp"
#include "launch.hpp"
#include "layout.hpp"
#include "ops.hpp"
#include "segment_plan.hpp"

namespace xdev::cuda {
namespace {

xdev_status_t* invalid(const Call& call, const char* what) {
  return g_host.fail(call.host(), XDEV_STATUS_INVALID_ARGUMENT, "%s: %s", call.op(), what);
}

// The checked call of an NN op: `inputs` inputs and `outputs` outputs, all
// float32 or all float64; then body(call).
template <typename Body>
xdev_status_t* nn_kernel(const xdev_kernel_call_t* raw, const char* op, int inputs,
                         uint32_t outputs, Body&& body) noexcept {
  return guarded(raw, op, [&]() -> xdev_status_t* {
    Call call(raw, op);
    if (xdev_status_t* s = call.check(inputs, outputs)) return s;
    if (xdev_status_t* s = call.check_same_dtype(kFloats)) return s;
    return body(call);
  });
}

// --- BiasAdd ----------------------------------------------------------------------------

// data_format: NHWC (the default) puts the channel last, NCHW at axis 1.
xdev_status_t* read_nchw(const Call& call, bool* nchw) {
  *nchw = false;
  const char* f = string_attr(call, XDEV_ATTR_NAME_data_format);
  if (f == nullptr) return nullptr;
  if (std::strcmp(f, "NHWC") != 0 && std::strcmp(f, "NCHW") != 0) {
    return invalid(call, "the attribute 'data_format' must be the string NHWC or NCHW");
  }
  *nchw = std::strcmp(f, "NCHW") == 0;
  return nullptr;
}

xdev_status_t* kernel_bias_add(void*, const xdev_kernel_call_t* raw) noexcept {
  return nn_kernel(raw, XDEV_OP_BiasAdd, 2, 1, [&](Call& call) -> xdev_status_t* {
    bool nchw = false;
    if (xdev_status_t* s = read_nchw(call, &nchw)) return s;
    const xdev_tensor_t& value = call.input(0);
    const xdev_tensor_t& bias = call.input(1);
    const xdev_tensor_t& out = call.output();
    if (value.rank < 2 || bias.rank != 1 || !same_shape(value, out)) {
      return invalid(call, "value needs rank >= 2 and the output its shape, bias rank 1");
    }
    const int32_t channel = nchw ? 1 : value.rank - 1;
    if (bias.shape[0] != value.shape[channel]) {
      return g_host.fail(call.host(), XDEV_STATUS_INVALID_ARGUMENT,
                         "%s: bias has %" PRId64 " elements, value's channel axis %" PRId32
                         " has %" PRId64,
                         call.op(), bias.shape[0], channel, value.shape[channel]);
    }
    // One addition in the dtype, as Add: exact on every device.
    const ElementwiseLayout l = bias_add_layout(out, value, bias, channel);
    return call.launched(launch_binary(BinaryOp::kAdd, out.dtype, l, data_of(value),
                                       data_of(bias), data_of_output(out), call.cuda_stream()));
  });
}

// --- SoftmaxCrossEntropyWithLogits ------------------------------------------------------

bool broadcasts_to(const xdev_tensor_t& t, int64_t rows, int64_t cols) {
  return t.rank == 2 && (t.shape[0] == rows || t.shape[0] == 1) &&
         (t.shape[1] == cols || t.shape[1] == 1);
}

xdev_status_t* kernel_softmax_cross_entropy(void*, const xdev_kernel_call_t* raw) noexcept {
  return nn_kernel(raw, XDEV_OP_SoftmaxCrossEntropyWithLogits, 2, 2, [&](Call& call) -> xdev_status_t* {
    const xdev_tensor_t& features = call.input(0);
    const xdev_tensor_t& labels = call.input(1);
    const xdev_tensor_t& loss = call.output(0);
    const xdev_tensor_t& backprop = call.output(1);
    if (backprop.rank != 2 || loss.rank != 1 || loss.shape[0] != backprop.shape[0]) {
      return invalid(call, "loss must be [batch] and backprop [batch, classes]");
    }
    const int64_t rows = backprop.shape[0], cols = backprop.shape[1];
    if (!broadcasts_to(features, rows, cols) || !broadcasts_to(labels, rows, cols)) {
      return invalid(call, "features and labels must broadcast to backprop's shape");
    }
    const XentLayout l = xent_layout(features, labels, rows, cols);
    const int lanes = segment_lanes(rows, cols, call.multiprocessors());
    return call.launched(launch_xent(loss.dtype, l, data_of(features), data_of(labels),
                                     data_of_output(loss), data_of_output(backprop), lanes,
                                     call.cuda_stream()));
  });
}

// --- LayerNorm --------------------------------------------------------------------------

xdev_status_t* kernel_layer_norm(void*, const xdev_kernel_call_t* raw) noexcept {
  return nn_kernel(raw, XDEV_OP_LayerNorm, 3, 1, [&](Call& call) -> xdev_status_t* {
    const xdev_tensor_t& x = call.input(0);
    const xdev_tensor_t& out = call.output();
    const xdev_attr_t* a = find_attr(raw, XDEV_ATTR_NAME_begin_norm_axis, XDEV_ATTR_INT);
    if (a == nullptr || a->value.i < 0 || a->value.i >= x.rank) {
      return g_host.fail(call.host(), XDEV_STATUS_INVALID_ARGUMENT,
                         "%s: the attribute 'begin_norm_axis' must be an int in [0, %" PRId32 ")",
                         call.op(), x.rank);
    }
    const xdev_attr_t* e = find_attr(raw, XDEV_ATTR_NAME_epsilon, XDEV_ATTR_FLOAT);
    if (e == nullptr || !(e->value.f >= 0.0) || !std::isfinite(e->value.f)) {
      return invalid(call, "the attribute 'epsilon' must be a float, finite and >= 0");
    }
    const auto axis = static_cast<int32_t>(a->value.i);
    if (!same_shape(x, out)) return invalid(call, "the output must have x's shape");
    for (uint32_t i = 1; i < 3; ++i) {
      const xdev_tensor_t& p = call.input(i);
      bool ok = p.rank == x.rank - axis;
      for (int32_t k = 0; k < p.rank && ok; ++k) ok = p.shape[k] == x.shape[axis + k];
      if (!ok) return invalid(call, "gamma and beta must have x's shape from begin_norm_axis");
    }
    const LayerNormLayout l = layer_norm_layout(x, call.input(1), call.input(2), axis);
    const int lanes = segment_lanes(l.x.outer_count, l.x.inner_count, call.multiprocessors());
    return call.launched(launch_layer_norm(out.dtype, l, e->value.f, data_of(x),
                                           data_of(call.input(1)), data_of(call.input(2)),
                                           data_of_output(out), lanes, call.cuda_stream()));
  });
}

using ph::kernel_info;

constexpr xdev_kernel_info_t kNnKernels[] = {
    kernel_info(XDEV_OP_BiasAdd, kFloats, kFloats, &kernel_bias_add),
    kernel_info(XDEV_OP_SoftmaxCrossEntropyWithLogits, kFloats, kFloats,
                &kernel_softmax_cross_entropy),
    kernel_info(XDEV_OP_LayerNorm, kFloats, kFloats, &kernel_layer_norm),
};

}  // namespace

KernelTable nn_kernels() noexcept { return {kNnKernels, std::size(kNnKernels)}; }

}  // namespace xdev::cuda
