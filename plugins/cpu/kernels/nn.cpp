// NN ops (docs/ops.md): BiasAdd, SoftmaxCrossEntropyWithLogits, LayerNorm.
// Their inputs are contiguous (the op table asks the core for it); the work
// is split by rows over oneTBB's threads (for_rows). Sums accumulate in
// double, compensated (xdev/compensated_sum.hpp: a GPU's tree of partial
// sums then agrees with them within about an ulp, where a plain running sum
// of 100000 float64 terms may be hundreds of ulp off), each output is
// rounded once.
#include <xdev/op_names.h>
#include <cinttypes>
#include <cmath>
#include <cstring>
#include <limits>

#include <xdev/compensated_sum.hpp>

#include "kernels/common.hpp"
#include "kernels/kernels.hpp"
#include "kernels/rows.hpp"

namespace xdev::cpu {
namespace {

const char* op_name(const xdev_kernel_call_t* call) noexcept {
  return call->op != nullptr ? call->op : "kernel";
}

// Every input with elements is row-major (the op table's contiguous_inputs).
xdev_status_t* check_contiguous_inputs(const xdev_kernel_call_t* call) noexcept {
  for (uint32_t i = 0; i < call->input_count; ++i) {
    if (element_count(*call->inputs[i]) > 0 && !is_contiguous(*call->inputs[i])) {
      return kernel_fail(call, XDEV_STATUS_INVALID_ARGUMENT,
                         "%s: input %" PRIu32 " must be contiguous (row-major)", op_name(call), i);
    }
  }
  return nullptr;
}

xdev_status_t* shape_mismatch(const xdev_kernel_call_t* call, const char* what) noexcept {
  return kernel_fail(call, XDEV_STATUS_INVALID_ARGUMENT, "%s: %s", op_name(call), what);
}

// --- BiasAdd -------------------------------------------------------------------------

xdev_status_t* bias_add(const xdev_kernel_call_t* call) noexcept {
  static constexpr const char* kKnown[] = {XDEV_ATTR_NAME_data_format, nullptr};
  xdev_dtype_t dtype;
  if (xdev_status_t* s = check_signature(call, 2, kFloats, kKnown, false, &dtype)) return s;
  if (xdev_status_t* s = check_contiguous_inputs(call)) return s;
  bool nchw = false;
  if (const xdev_attr_t* f = find_attr(call, XDEV_ATTR_NAME_data_format)) {
    const bool known = f->kind == XDEV_ATTR_STRING && f->value.s != nullptr &&
                       (std::strcmp(f->value.s, "NHWC") == 0 || std::strcmp(f->value.s, "NCHW") == 0);
    if (!known) {
      return kernel_fail(call, XDEV_STATUS_INVALID_ARGUMENT,
                         "%s: the attribute 'data_format' must be the string NHWC or NCHW",
                         op_name(call));
    }
    nchw = std::strcmp(f->value.s, "NCHW") == 0;
  }
  const xdev_tensor_t& value = *call->inputs[0];
  const xdev_tensor_t& bias = *call->inputs[1];
  const xdev_tensor_t& out = *call->outputs[0];
  if (value.rank < 2 || bias.rank != 1 || !same_shape(value, out)) {
    return shape_mismatch(call, "value needs rank >= 2 and the output its shape, bias rank 1");
  }
  const int32_t channel = nchw ? 1 : value.rank - 1;
  const int64_t channels = value.shape[channel];
  if (bias.shape[0] != channels) {
    return kernel_fail(call, XDEV_STATUS_INVALID_ARGUMENT,
                       "%s: bias has %" PRId64 " elements, value's channel axis %" PRId32
                       " has %" PRId64,
                       op_name(call), bias.shape[0], channel, channels);
  }
  int64_t inner = 1;  // elements per channel in one row (NHWC: 1)
  for (int32_t k = channel + 1; k < value.rank; ++k) inner *= value.shape[k];
  const int64_t total = element_count(out);
  return guarded_visit<kFloats>(call, dtype, [&](auto zero) {
    using T = decltype(zero);
    const T* x = data_of<const T>(value);
    const T* b = data_of<const T>(bias);
    T* y = data_of<T>(out);
    if (total == 0) return;
    if (!nchw) {  // rows of `channels` elements, bias along each
      for_rows(total / channels, channels, [&](int64_t r) {
        const T* xr = x + r * channels;
        T* yr = y + r * channels;
        for (int64_t c = 0; c < channels; ++c) yr[c] = xr[c] + b[c];
      });
      return;
    }
    // NCHW: rows of `inner` elements, row r of channel r % channels.
    for_rows(total / inner, inner, [&](int64_t r) {
      const T* xr = x + r * inner;
      T* yr = y + r * inner;
      const T add = b[r % channels];
      for (int64_t i = 0; i < inner; ++i) yr[i] = xr[i] + add;
    });
  });
}

// --- SoftmaxCrossEntropyWithLogits -------------------------------------------------

// One of features or labels: [rows, cols], a dimension of 1 broadcast to the
// output's; element (b, c) read through the strides of a broadcast view.
struct Matrix {
  int64_t row_step, col_step;
  explicit Matrix(const xdev_tensor_t& t)
      : row_step(t.shape[0] == 1 ? 0 : t.shape[1]), col_step(t.shape[1] == 1 ? 0 : 1) {}
};

bool broadcasts_to(const xdev_tensor_t& t, int64_t rows, int64_t cols) {
  return t.rank == 2 && (t.shape[0] == rows || t.shape[0] == 1) &&
         (t.shape[1] == cols || t.shape[1] == 1);
}

xdev_status_t* softmax_cross_entropy(const xdev_kernel_call_t* call) noexcept {
  if (xdev_status_t* s = check_call(call, 2, 2)) return s;
  xdev_dtype_t dtype;
  if (xdev_status_t* s = check_dtypes(call, kFloats, &dtype)) return s;
  if (call->outputs[1]->dtype != dtype) {
    return shape_mismatch(call, "backprop must have the features' dtype");
  }
  if (xdev_status_t* s = check_attr_names(call, kNoAttrs)) return s;
  if (xdev_status_t* s = check_contiguous_inputs(call)) return s;
  const xdev_tensor_t& features = *call->inputs[0];
  const xdev_tensor_t& labels = *call->inputs[1];
  const xdev_tensor_t& loss = *call->outputs[0];
  const xdev_tensor_t& backprop = *call->outputs[1];
  if (backprop.rank != 2 || loss.rank != 1 || loss.shape[0] != backprop.shape[0]) {
    return shape_mismatch(call, "loss must be [batch] and backprop [batch, classes]");
  }
  const int64_t rows = backprop.shape[0], cols = backprop.shape[1];
  if (!broadcasts_to(features, rows, cols) || !broadcasts_to(labels, rows, cols)) {
    return shape_mismatch(call, "features and labels must broadcast to backprop's shape");
  }
  const Matrix f(features), l(labels);
  return guarded_visit<kFloats>(call, dtype, [&](auto zero) {
    using T = decltype(zero);
    const T* fx = data_of<const T>(features);
    const T* lx = data_of<const T>(labels);
    T* lo = data_of<T>(loss);
    T* bp = data_of<T>(backprop);
    for_rows(rows, cols, [&](int64_t r) {
      const T* fr = fx + r * f.row_step;
      const T* lr = lx + r * l.row_step;
      T* br = bp + r * cols;
      // The row's maximum (a NaN, once met, stays: the whole row is NaN).
      double top = -std::numeric_limits<double>::infinity();
      for (int64_t c = 0; c < cols; ++c) {
        const double v = static_cast<double>(fr[c * f.col_step]);
        if (v > top || v != v) top = v;
        if (top != top) break;
      }
      // Compensated sums (as Softmax's): a device that adds in another
      // order agrees within about an ulp however long the row.
      CompensatedSum exps;
      for (int64_t c = 0; c < cols; ++c) {
        exps.add(std::exp(static_cast<double>(fr[c * f.col_step]) - top));
      }
      const double sum = exps.value();
      const double log_sum = std::log(sum);
      CompensatedSum row_loss;
      for (int64_t c = 0; c < cols; ++c) {
        const double shifted = static_cast<double>(fr[c * f.col_step]) - top;
        const double label = static_cast<double>(lr[c * l.col_step]);
        row_loss.add(label * (log_sum - shifted));
        br[c] = static_cast<T>(std::exp(shifted) / sum - label);
      }
      lo[r] = static_cast<T>(row_loss.value());
    });
  });
}

// --- LayerNorm -----------------------------------------------------------------------

xdev_status_t* layer_norm(const xdev_kernel_call_t* call) noexcept {
  static constexpr const char* kKnown[] = {XDEV_ATTR_NAME_begin_norm_axis, XDEV_ATTR_NAME_epsilon, nullptr};
  xdev_dtype_t dtype;
  if (xdev_status_t* s = check_signature(call, 3, kFloats, kKnown, false, &dtype)) return s;
  if (xdev_status_t* s = check_contiguous_inputs(call)) return s;
  const xdev_tensor_t& x = *call->inputs[0];
  const xdev_tensor_t& out = *call->outputs[0];
  const xdev_attr_t* a = find_attr(call, XDEV_ATTR_NAME_begin_norm_axis);
  if (a == nullptr || a->kind != XDEV_ATTR_INT || a->value.i < 0 || a->value.i >= x.rank) {
    return kernel_fail(call, XDEV_STATUS_INVALID_ARGUMENT,
                       "%s: the attribute 'begin_norm_axis' must be an int in [0, %" PRId32 ")",
                       op_name(call), x.rank);
  }
  double epsilon = 0.0;
  if (xdev_status_t* s = attr_number(call, XDEV_ATTR_NAME_epsilon, true, 0.0, &epsilon)) return s;
  if (!(epsilon >= 0.0) || !std::isfinite(epsilon)) {
    return shape_mismatch(call, "the attribute 'epsilon' must be finite and >= 0");
  }
  const auto axis = static_cast<int32_t>(a->value.i);
  int64_t n = 1;
  for (int32_t k = axis; k < x.rank; ++k) n *= x.shape[k];
  if (!same_shape(x, out)) return shape_mismatch(call, "the output must have x's shape");
  for (uint32_t i = 1; i < 3; ++i) {
    const xdev_tensor_t& p = *call->inputs[i];
    bool ok = p.rank == x.rank - axis;
    for (int32_t k = 0; k < p.rank && ok; ++k) ok = p.shape[k] == x.shape[axis + k];
    if (!ok) return shape_mismatch(call, "gamma and beta must have x's shape from begin_norm_axis");
  }
  const int64_t total = element_count(out);
  return guarded_visit<kFloats>(call, dtype, [&](auto zero) {
    using T = decltype(zero);
    const T* xs = data_of<const T>(x);
    const T* gamma = data_of<const T>(*call->inputs[1]);
    const T* beta = data_of<const T>(*call->inputs[2]);
    T* y = data_of<T>(out);
    if (total == 0) return;
    for_rows(total / n, n, [&](int64_t r) {
      const T* xr = xs + r * n;
      T* yr = y + r * n;
      CompensatedSum sum;  // as Softmax's: order-independent within an ulp
      for (int64_t i = 0; i < n; ++i) sum.add(static_cast<double>(xr[i]));
      const double mean = sum.value() / static_cast<double>(n);
      CompensatedSum squares;
      for (int64_t i = 0; i < n; ++i) {
        const double d = static_cast<double>(xr[i]) - mean;
        squares.add(d * d);
      }
      const double rstd = 1.0 / std::sqrt(squares.value() / static_cast<double>(n) + epsilon);
      for (int64_t i = 0; i < n; ++i) {
        yr[i] = static_cast<T>((static_cast<double>(xr[i]) - mean) * rstd *
                                   static_cast<double>(gamma[i]) +
                               static_cast<double>(beta[i]));
      }
    });
  });
}

}  // namespace

XDEV_CPU_KERNEL(kernel_bias_add, bias_add)
XDEV_CPU_KERNEL(kernel_softmax_cross_entropy_with_logits, softmax_cross_entropy)
XDEV_CPU_KERNEL(kernel_layer_norm, layer_norm)

}  // namespace xdev::cpu
