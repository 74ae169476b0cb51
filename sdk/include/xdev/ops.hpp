// Creating tensors and running ops. Every function places its op by the
// rules of placement.hpp, copies inputs that live elsewhere, and returns a
// tensor on the device that ran it. Shape and dtype errors throw
// xdev::Error(kInvalidArgument) naming the op and the values at fault.
#pragma once

#include <array>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include <xdev/dtype.hpp>
#include <xdev/export.hpp>
#include <xdev/tensor.hpp>

namespace xdev {

// A nested list of numbers for constant(): {{1.f, 2.f}, {3.f, 4.f}}.
// Leaves remember their C++ type: float -> float32, double -> float64,
// int -> int32, int64_t/long -> int64, bool -> bool; mixed leaves promote
// (bool < int32 < int64 < float32 < float64).
class XDEV_API Literal {
 public:
  Literal(float v) : kind_(DType::kFloat32), f_(v) {}
  Literal(double v) : kind_(DType::kFloat64), f_(v) {}
  Literal(int v) : kind_(DType::kInt32), i_(v) {}
  Literal(long v) : kind_(DType::kInt64), i_(v) {}
  Literal(long long v) : kind_(DType::kInt64), i_(static_cast<int64_t>(v)) {}
  Literal(bool v) : kind_(DType::kBool), i_(v ? 1 : 0) {}
  Literal(std::initializer_list<Literal> items) : is_list_(true), items_(items) {}

  bool is_list() const { return is_list_; }
  DType kind() const { return kind_; }
  double as_double() const { return is_float() ? f_ : static_cast<double>(i_); }
  int64_t as_int() const { return is_float() ? static_cast<int64_t>(f_) : i_; }
  const std::vector<Literal>& items() const { return items_; }

 private:
  bool is_float() const { return kind_ == DType::kFloat32 || kind_ == DType::kFloat64; }
  bool is_list_ = false;
  DType kind_ = DType::kFloat32;
  double f_ = 0;
  int64_t i_ = 0;
  std::vector<Literal> items_;
};

// --- creation (logged as _EagerConst, Fill, RandomUniform) ---

// From a nested list; `dtype` converts the values (default: the leaves' type).
XDEV_API Tensor constant(const Literal& value, std::optional<DType> dtype = std::nullopt);
// The values of a flat or nested list in `shape` (row-major; the counts must
// agree), or one number repeated to fill it (TensorFlow's
// tf.constant(value, shape=...)):
//   auto m = xdev::constant({1.f, 2.f, 3.f, 4.f}, {2, 2});
//   auto z = xdev::constant(0.f, {2, 3});
XDEV_API Tensor constant(const Literal& value, const Shape& shape,
                         std::optional<DType> dtype = std::nullopt);
// A scalar of x's dtype holding `value` (converted), on x's device: what the
// tensor-scalar operators below use (x * 2.0f, 1 - x).
XDEV_API Tensor scalar_like(const Tensor& x, const Literal& value);
// From host memory: `data` holds shape.num_elements() values of `dtype`,
// row-major. The data is copied; the caller keeps ownership.
XDEV_API Tensor constant(const void* data, DType dtype, const Shape& shape);
// T is one of the nine element types (xdev::Element: float, double, int32_t,
// int64_t, bool, xdev::float16, xdev::bfloat16, uint8_t, int8_t): a vector of
// any other type does not compile.
template <Element T>
Tensor constant(std::span<const T> values, const Shape& shape) {
  if (static_cast<int64_t>(values.size()) != shape.num_elements()) {
    throw Error(ErrorCode::kInvalidArgument,
                "constant: " + std::to_string(values.size()) + " values do not fill a shape of " +
                    std::to_string(shape.num_elements()) + " elements");
  }
  return constant(values.data(), dtype_of<T>, shape);
}
template <Element T>
Tensor constant(const std::vector<T>& values, const Shape& shape) {
  return constant(std::span<const T>(values.data(), values.size()), shape);
}

XDEV_API Tensor zeros(const Shape& shape, DType dtype = DType::kFloat32);
XDEV_API Tensor ones(const Shape& shape, DType dtype = DType::kFloat32);
XDEV_API Tensor fill(const Shape& shape, double value, DType dtype = DType::kFloat32);
// Uniform in [minval, maxval). Without a seed, the next value of a process-wide
// counter (set_random_seed) is used. The same seed gives the same values on
// every device (docs/ops.md defines the generator bit for bit).
XDEV_API Tensor random_uniform(const Shape& shape, double minval = 0.0, double maxval = 1.0,
                               DType dtype = DType::kFloat32,
                               std::optional<uint64_t> seed = std::nullopt);
XDEV_API void set_random_seed(uint64_t seed);

// --- ops ---

XDEV_API Tensor matmul(const Tensor& a, const Tensor& b, bool transpose_a = false,
                       bool transpose_b = false);
// TF's raw op BatchMatMulV2 (tf.linalg.matmul on batches of matrices): x
// [..., M, K] times y [..., K, N], for each matrix of the batch axes (all
// but the last two), which broadcast NumPy-style; adj_x / adj_y swap the
// last two axes of x / y first. Rank-2 inputs are a plain matmul.
//   xdev::Tensor q = xdev::ones({8, 1, 16, 64}), k = xdev::ones({8, 4, 32, 64});
//   xdev::Tensor scores = xdev::batch_matmul(q, k, false, true);  // [8, 4, 16, 32]
XDEV_API Tensor batch_matmul(const Tensor& x, const Tensor& y, bool adj_x = false,
                             bool adj_y = false);
// Elementwise with NumPy broadcasting; both inputs must have the same dtype.
XDEV_API Tensor add(const Tensor& x, const Tensor& y);
XDEV_API Tensor sub(const Tensor& x, const Tensor& y);
XDEV_API Tensor mul(const Tensor& x, const Tensor& y);
XDEV_API Tensor div(const Tensor& x, const Tensor& y);
XDEV_API Tensor neg(const Tensor& x);
XDEV_API Tensor relu(const Tensor& x);
// Elementwise math (docs/ops.md defines NaN, zero and overflow cases).
// abs, sign and square take every number dtype; the others float32/float64.
XDEV_API Tensor abs(const Tensor& x);
XDEV_API Tensor sign(const Tensor& x);
XDEV_API Tensor square(const Tensor& x);
XDEV_API Tensor exp(const Tensor& x);
XDEV_API Tensor expm1(const Tensor& x);
XDEV_API Tensor log(const Tensor& x);
XDEV_API Tensor log1p(const Tensor& x);
XDEV_API Tensor sqrt(const Tensor& x);
XDEV_API Tensor rsqrt(const Tensor& x);
XDEV_API Tensor reciprocal(const Tensor& x);
XDEV_API Tensor sin(const Tensor& x);
XDEV_API Tensor cos(const Tensor& x);
XDEV_API Tensor tanh(const Tensor& x);
XDEV_API Tensor sigmoid(const Tensor& x);
XDEV_API Tensor erf(const Tensor& x);
XDEV_API Tensor softplus(const Tensor& x);
XDEV_API Tensor floor(const Tensor& x);
XDEV_API Tensor ceil(const Tensor& x);
// Halves round to even (like tf.round and numpy.round).
XDEV_API Tensor round(const Tensor& x);
XDEV_API Tensor leaky_relu(const Tensor& x, double alpha = 0.2);
// approximate: the tanh form instead of the exact erf form.
XDEV_API Tensor gelu(const Tensor& x, bool approximate = false);
// Binary math with NumPy broadcasting (docs/ops.md "Semantics"): maximum and
// minimum propagate NaN; floor_div and floor_mod round toward -inf (the
// remainder takes y's sign; an integer zero divisor is an error on the cpu
// plugin, 0 on the GPU plugins); pow is
// float32/float64 only.
XDEV_API Tensor pow(const Tensor& x, const Tensor& y);
XDEV_API Tensor maximum(const Tensor& x, const Tensor& y);
XDEV_API Tensor minimum(const Tensor& x, const Tensor& y);
XDEV_API Tensor floor_div(const Tensor& x, const Tensor& y);
XDEV_API Tensor floor_mod(const Tensor& x, const Tensor& y);
XDEV_API Tensor squared_difference(const Tensor& x, const Tensor& y);
// Comparisons with NumPy broadcasting, giving bool (docs/ops.md "Semantics":
// NaN compares unequal to everything). equal and not_equal take every dtype,
// the orderings every number dtype; both inputs must have the same dtype.
XDEV_API Tensor equal(const Tensor& x, const Tensor& y);
XDEV_API Tensor not_equal(const Tensor& x, const Tensor& y);
XDEV_API Tensor less(const Tensor& x, const Tensor& y);
XDEV_API Tensor less_equal(const Tensor& x, const Tensor& y);
XDEV_API Tensor greater(const Tensor& x, const Tensor& y);
XDEV_API Tensor greater_equal(const Tensor& x, const Tensor& y);
// Logic on bool tensors (broadcast).
XDEV_API Tensor logical_and(const Tensor& x, const Tensor& y);
XDEV_API Tensor logical_or(const Tensor& x, const Tensor& y);
XDEV_API Tensor logical_not(const Tensor& x);
// float32/float64 -> bool.
XDEV_API Tensor is_nan(const Tensor& x);
XDEV_API Tensor is_finite(const Tensor& x);
// condition ? x : y element by element, the three broadcast together (like
// tf.where with x and y, TF's SelectV2); condition is bool, x and y of one dtype.
XDEV_API Tensor select(const Tensor& condition, const Tensor& x, const Tensor& y);
// min(max(x, clip_value_min), clip_value_max), the three broadcast together.
XDEV_API Tensor clip_by_value(const Tensor& x, const Tensor& clip_value_min,
                              const Tensor& clip_value_max);
// Sum of tensors of one shape and dtype (they may live on different devices).
XDEV_API Tensor add_n(const std::vector<Tensor>& inputs);
XDEV_API Tensor cast(const Tensor& x, DType dtype);
// Over `axes` (negative counts from the end; empty: all axes).
XDEV_API Tensor sum(const Tensor& x, const std::vector<int>& axes = {}, bool keepdims = false);
XDEV_API Tensor mean(const Tensor& x, const std::vector<int>& axes = {}, bool keepdims = false);
// Reductions over `axes` like sum (docs/ops.md "Semantics": the value over
// zero elements). max, min and prod take every number dtype (max and min give
// NaN if an element is NaN); any and all bool; logsumexp float32/float64,
// ln Σ eˣ computed without overflow.
XDEV_API Tensor max(const Tensor& x, const std::vector<int>& axes = {}, bool keepdims = false);
XDEV_API Tensor min(const Tensor& x, const std::vector<int>& axes = {}, bool keepdims = false);
XDEV_API Tensor prod(const Tensor& x, const std::vector<int>& axes = {}, bool keepdims = false);
XDEV_API Tensor any(const Tensor& x, const std::vector<int>& axes = {}, bool keepdims = false);
XDEV_API Tensor all(const Tensor& x, const std::vector<int>& axes = {}, bool keepdims = false);
XDEV_API Tensor logsumexp(const Tensor& x, const std::vector<int>& axes = {},
                          bool keepdims = false);
// What an empty `axes` list means to a reduction: kAll, every axis (the
// overloads above), or kNone, no axis (the result is x itself, after the op's
// dtype check; TensorFlow's axis=[]). A non-empty list means the same to both.
//   xdev::Tensor same = xdev::sum(x, {}, false, xdev::EmptyAxes::kNone);  // x itself
enum class EmptyAxes { kAll, kNone };
XDEV_API Tensor sum(const Tensor& x, const std::vector<int>& axes, bool keepdims, EmptyAxes empty);
XDEV_API Tensor mean(const Tensor& x, const std::vector<int>& axes, bool keepdims, EmptyAxes empty);
XDEV_API Tensor max(const Tensor& x, const std::vector<int>& axes, bool keepdims, EmptyAxes empty);
XDEV_API Tensor min(const Tensor& x, const std::vector<int>& axes, bool keepdims, EmptyAxes empty);
XDEV_API Tensor prod(const Tensor& x, const std::vector<int>& axes, bool keepdims, EmptyAxes empty);
XDEV_API Tensor any(const Tensor& x, const std::vector<int>& axes, bool keepdims, EmptyAxes empty);
XDEV_API Tensor all(const Tensor& x, const std::vector<int>& axes, bool keepdims, EmptyAxes empty);
XDEV_API Tensor logsumexp(const Tensor& x, const std::vector<int>& axes, bool keepdims,
                          EmptyAxes empty);
// Along one axis (negative counts from the end): the index (int64) of the
// first largest / smallest element (a NaN counts as the extreme, like
// numpy.argmax), and TF's cumsum (exclusive: each element left out of its
// own sum; reverse: summed from the end).
XDEV_API Tensor argmax(const Tensor& x, int axis);
XDEV_API Tensor argmin(const Tensor& x, int axis);
XDEV_API Tensor cumsum(const Tensor& x, int axis, bool exclusive = false, bool reverse = false);
// tf.nn.softmax and tf.nn.log_softmax of float logits along `axis` (default:
// the last): eˣ / Σ eˣ and x − ln Σ eˣ, with the line's maximum subtracted
// first so large logits do not overflow. A NaN makes its whole line NaN.
//   xdev::Tensor p = xdev::softmax(x);   // each row of x sums to 1 in p
XDEV_API Tensor softmax(const Tensor& logits, int axis = -1);
XDEV_API Tensor log_softmax(const Tensor& logits, int axis = -1);
// Data movement (TensorFlow's raw ops; every dtype, values copied bit for
// bit). concat joins tensors of one rank and dtype along an existing axis
// (tf.concat, ConcatV2), stack along a new one (tf.stack, Pack); a negative
// axis counts from the end (stack: of the output's rank). identity is a new
// tensor holding x's values (tf.identity).
XDEV_API Tensor concat(const std::vector<Tensor>& values, int axis);
XDEV_API Tensor stack(const std::vector<Tensor>& values, int axis = 0);
XDEV_API Tensor identity(const Tensor& x);
// tile repeats x multiples[k] times along each axis k (tf.tile: one value
// >= 0 per axis). pad adds paddings[k] = {before, after} elements of
// `constant_value` (converted like cast) around axis k (tf.pad, mode
// CONSTANT; TF's raw op PadV2): xdev::pad(x, {{1, 1}, {0, 2}}, -1.0).
XDEV_API Tensor tile(const Tensor& x, const std::vector<int64_t>& multiples);
XDEV_API Tensor pad(const Tensor& x, const std::vector<std::array<int64_t, 2>>& paddings,
                    double constant_value = 0.0);
// The slices of params along `axis` (negative: from the end) at `indices`
// (int32 or int64, any shape), like tf.gather: the output is params' shape
// with `axis` replaced by the indices' shape. An index outside
// [0, params.shape[axis]) is an error (kInvalidArgument naming it), on every
// device.
XDEV_API Tensor gather(const Tensor& params, const Tensor& indices, int axis = 0);
// tf.tensor_scatter_nd_add (TF's raw op TensorScatterAdd): a copy of
// `tensor` with each slice of `updates` added at its index. indices (int32
// or int64) is [..., D]: each row of D values indexes tensor's first D axes,
// and updates is indices' shape without its last axis, then tensor's shape
// from axis D on. Indices that repeat add all their updates. An index
// outside tensor's shape is an error (kInvalidArgument naming its position
// and value), on every device.
//   xdev::Tensor t = xdev::zeros({4});
//   xdev::Tensor i = xdev::constant({{1}, {3}, {1}}, xdev::DType::kInt32);
//   xdev::tensor_scatter_add(t, i, xdev::constant({1.0f, 2.0f, 5.0f}));  // [0, 6, 0, 2]
XDEV_API Tensor tensor_scatter_add(const Tensor& tensor, const Tensor& indices,
                                   const Tensor& updates);
// --- NN ops (TensorFlow's raw ops; float32 and float64) ----------------------
//
// tf.nn.bias_add (BiasAdd): value (rank >= 2) plus bias (rank 1) along the
// channel axis, the last for data_format "NHWC", axis 1 for "NCHW".
//   xdev::Tensor y = xdev::bias_add(x, w);   // x [N, C], w [C]
XDEV_API Tensor bias_add(const Tensor& value, const Tensor& bias,
                         std::string_view data_format = "NHWC");
// TF's raw op SoftmaxCrossEntropyWithLogits: features (logits) and labels of
// shape [batch, classes] (a dimension of 1 in one of them is broadcast);
// loss[b] = −Σ_c labels[b, c] · log_softmax(features)[b, c] and backprop =
// softmax(features) − labels (the loss's gradient with respect to features).
// The line's maximum is subtracted first; sums accumulate in double.
struct SoftmaxCrossEntropy {
  Tensor loss;      // [batch]
  Tensor backprop;  // [batch, classes]
};
XDEV_API SoftmaxCrossEntropy softmax_cross_entropy_with_logits(const Tensor& features,
                                                               const Tensor& labels);
// Layer normalisation (LayerNorm; tf.keras.layers.LayerNormalization over the
// axes from begin_norm_axis to the last): (x − mean) / √(variance + epsilon)
// · gamma + beta, mean and (population) variance over those axes, computed in
// double. gamma and beta have x's shape from begin_norm_axis on; a negative
// begin_norm_axis counts from the end.
XDEV_API Tensor layer_norm(const Tensor& x, const Tensor& gamma, const Tensor& beta,
                           int begin_norm_axis = -1, double epsilon = 1e-3);
// --- 2-d convolution and pooling (TF's raw ops; float32 and float64) ----------
//
// Images are 4-d: data_format "NHWC" [batch, height, width, channels] or
// "NCHW" [batch, channels, height, width]. strides, dilations and ksize are
// (height, width), or TensorFlow's 4 values in data_format order with 1 for
// batch and channels; empty dilations mean (1, 1). padding "VALID": windows
// inside the input, out = (in − (k − 1)·d − 1 + s) / s; "SAME": out =
// ceil(in / s), padded by max((out − 1)·s + (k − 1)·d + 1 − in, 0) split
// with the odd element after (docs/ops.md, xdev/window_geometry.hpp).

// tf.nn.conv2d (Conv2D): the cross-correlation of input with filter [KH,
// KW, in_channels, out_channels] (TF's layout); in_channels must be input's.
//   xdev::Tensor y = xdev::conv2d(x, w, {1, 1}, "SAME");   // x [N, H, W, C], w [3, 3, C, F]
XDEV_API Tensor conv2d(const Tensor& input, const Tensor& filter,
                       const std::vector<int64_t>& strides, std::string_view padding,
                       std::string_view data_format = "NHWC",
                       const std::vector<int64_t>& dilations = {});
// Conv2DBackpropInput: the gradient of conv2d with respect to an input of
// shape input_sizes, given the filter and the output's gradient.
XDEV_API Tensor conv2d_backprop_input(const std::vector<int64_t>& input_sizes,
                                      const Tensor& filter, const Tensor& out_backprop,
                                      const std::vector<int64_t>& strides,
                                      std::string_view padding,
                                      std::string_view data_format = "NHWC",
                                      const std::vector<int64_t>& dilations = {});
// Conv2DBackpropFilter: the gradient of conv2d with respect to a filter of
// shape filter_sizes, given the input and the output's gradient.
XDEV_API Tensor conv2d_backprop_filter(const Tensor& input,
                                       const std::vector<int64_t>& filter_sizes,
                                       const Tensor& out_backprop,
                                       const std::vector<int64_t>& strides,
                                       std::string_view padding,
                                       std::string_view data_format = "NHWC",
                                       const std::vector<int64_t>& dilations = {});
// tf.nn.max_pool2d (MaxPool): each window's maximum (NaN if it holds one).
XDEV_API Tensor max_pool(const Tensor& input, const std::vector<int64_t>& ksize,
                         const std::vector<int64_t>& strides, std::string_view padding,
                         std::string_view data_format = "NHWC");
// tf.nn.avg_pool2d (AvgPool): each window's mean over its elements inside
// the input (SAME's padding is not counted), summed in double.
XDEV_API Tensor avg_pool(const Tensor& input, const std::vector<int64_t>& ksize,
                         const std::vector<int64_t>& strides, std::string_view padding,
                         std::string_view data_format = "NHWC");
// MaxPoolGrad: max_pool's gradient, each window's grad added to the first
// maximum of orig_input in the window (row-major window order; a NaN wins).
// orig_output is max_pool's result (its shape is checked).
XDEV_API Tensor max_pool_grad(const Tensor& orig_input, const Tensor& orig_output,
                              const Tensor& grad, const std::vector<int64_t>& ksize,
                              const std::vector<int64_t>& strides, std::string_view padding,
                              std::string_view data_format = "NHWC");
// AvgPoolGrad: avg_pool's gradient for an input of shape orig_input_shape,
// each window's grad divided evenly among its elements inside the input.
XDEV_API Tensor avg_pool_grad(const std::vector<int64_t>& orig_input_shape, const Tensor& grad,
                              const std::vector<int64_t>& ksize,
                              const std::vector<int64_t>& strides, std::string_view padding,
                              std::string_view data_format = "NHWC");

// tf.nn.dropout: each element of x kept with probability 1 − rate and then
// scaled by 1 / (1 − rate), else 0; rate in [0, 1). Built from RandomUniform
// (seeded like random_uniform: the same seed gives the same mask), GreaterEqual,
// Mul and Select, so it runs wherever they do. x is float32 or float64.
XDEV_API Tensor dropout(const Tensor& x, double rate,
                        std::optional<uint64_t> seed = std::nullopt);

// The window of x that starts at `begin` (one value >= 0 per axis) and has
// `size` elements along each axis (-1: to the end of the axis), like
// tf.slice (TF's raw op Slice): xdev::slice(x, {1, 0}, {2, -1}). The result
// is a view of x's storage (no copy, like the slice of <xdev/indexing.hpp>).
// A window that does not fit is an error (kInvalidArgument naming the axis
// and the values).
XDEV_API Tensor slice(const Tensor& x, const std::vector<int64_t>& begin,
                      const std::vector<int64_t>& size);
// tf.split (TF's raw ops Split and SplitV): x cut along `axis` (negative:
// from the end) into consecutive pieces, returned in order as views of x's
// storage (no copy). The first form makes `num_split` pieces of equal size
// (x.shape[axis] must divide evenly); the second one piece per entry of
// `sizes`, at most one of them -1 (the rest of the axis). Sizes that do not
// add up to the axis, a -1 beyond the first, or an axis out of range are an
// error (kInvalidArgument naming the op, the values and the shape). A
// braced list of one value, split(x, {4}), is the first form (num_split 4);
// one piece of size 4 is split(x, std::vector<int64_t>{4}).
//   xdev::Tensor qkv = xdev::zeros({8, 128, 3 * 64});
//   std::vector<xdev::Tensor> p = xdev::split(qkv, 3, -1);      // 3 × [8, 128, 64]
//   std::vector<xdev::Tensor> r = xdev::split(qkv, {64, -1}, 2); // [.., 64], [.., 128]
XDEV_API std::vector<Tensor> split(const Tensor& x, int64_t num_split, int axis = 0);
XDEV_API std::vector<Tensor> split(const Tensor& x, const std::vector<int64_t>& sizes,
                                   int axis = 0);
// x[begin:end:strides] with TensorFlow's masks, like tf.strided_slice (TF's
// raw op StridedSlice; <xdev/strided_slice.hpp> has the rules): bit i of
// begin_mask / end_mask ignores begin[i] / end[i], of ellipsis_mask makes
// entry i `...`, of new_axis_mask inserts an axis of size 1, of
// shrink_axis_mask takes element begin[i] and drops the axis. Negative
// bounds count from the end and are clamped; `strides` empty means all 1.
// When every axis is walked forwards the result is a view (no copy); a
// negative stride runs the op, which copies the elements in reverse order.
// Errors (kInvalidArgument) name the entry or axis and the values: a stride
// of 0, a shrunk index out of range, two ellipses, more entries than axes.
XDEV_API Tensor strided_slice(const Tensor& x, const std::vector<int64_t>& begin,
                              const std::vector<int64_t>& end,
                              const std::vector<int64_t>& strides = {}, int64_t begin_mask = 0,
                              int64_t end_mask = 0, int64_t ellipsis_mask = 0,
                              int64_t new_axis_mask = 0, int64_t shrink_axis_mask = 0);
// start, start + delta, start + 2·delta, … up to `limit`, not included, as
// a vector of `dtype` (tf.range; TF's raw op Range): xdev::range(0, 10, 3)
// is {0, 3, 6, 9} (float32), xdev::range(5, 0, -2, DType::kInt32) {5, 3, 1}.
// Element i is start + i·delta computed in double, converted to the dtype.
// delta 0, or one pointing away from `limit`, is an error (kInvalidArgument
// naming the values); so are bounds of an integer dtype that are not
// integers (or exceed 2^53, int32: its range) and lengths beyond 2^62.
XDEV_API Tensor range(double start, double limit, double delta = 1.0,
                      DType dtype = DType::kFloat32);
// The one-hot encoding of `indices` (int32 or int64, any shape), like
// tf.one_hot (TF's raw op OneHot): an axis of `depth` inserted at `axis`
// (-1: the end), holding on_value where the position equals the index and
// off_value elsewhere, both converted to `dtype` as cast converts. An index
// outside [0, depth), negative ones included, gives a row of off_value.
XDEV_API Tensor one_hot(const Tensor& indices, int64_t depth, double on_value = 1.0,
                        double off_value = 0.0, int axis = -1, DType dtype = DType::kFloat32);
// x broadcast to `shape` by NumPy's rules as a new dense tensor: TF's raw op
// BroadcastTo, which copies. xdev::broadcast_to (<xdev/indexing.hpp>) gives
// the same values as a view without a copy and checks the same rule; this
// one is for consumers that need every element stored (DLPack exports, a
// tensor reused by many ops). Errors (kInvalidArgument) name the shapes and
// the dimension at fault.
XDEV_API Tensor broadcast_to_copy(const Tensor& x, const Shape& shape);
// Permutes axes (empty: reverse them). Runs Copy on a strided view.
XDEV_API Tensor transpose(const Tensor& x, const std::vector<int>& perm = {});
// One dimension may be -1 (inferred). Free when x is contiguous.
XDEV_API Tensor reshape(const Tensor& x, const Shape& shape);

// --- what a device can run: its kernels --------------------------------------
//
// A device runs an op itself when its plugin registered a kernel for the op
// and dtypes; otherwise placement falls back to another device (placement.hpp,
// set_fallback_policy). `xdev-smi --ops` prints the same as a table.

// The dtypes a kernel is chosen by: the op's first input (an op without
// inputs, Fill and RandomUniform: its output) and its output. They differ for
// Cast (the target dtype), the comparisons and IsNan/IsFinite (bool),
// ArgMax/ArgMin (int64) and Select (input: the condition, bool; output: x's).
struct KernelDTypes {
  DType input = DType::kFloat32;
  DType output = DType::kFloat32;
  bool operator==(const KernelDTypes&) const = default;
};

// One op on one device.
struct OpKernels {
  std::string op;                       // "MatMul"
  std::vector<KernelDTypes> defined;    // every dtype pair the op is defined for (docs/ops.md)
  std::vector<KernelDTypes> available;  // those the device has a kernel for
};

// Whether `device` (any spelling, "GPU:0") has a kernel for `op` (its name,
// "Exp") on `input`; `output` left out means the op's own output dtype for
// that input (Cast and Select: any output). A dtype the op is not defined for
// is false. Throws xdev::Error(kNotFound) naming an unknown op or device,
// kInvalidArgument for a DType that is none of the nine. Initializes the
// devices, like list_logical_devices().
XDEV_API bool has_kernel(std::string_view device, std::string_view op, DType input,
                         std::optional<DType> output = std::nullopt);
// Every op of the op table, in its order, with the dtypes `device` has
// kernels for. Throws like has_kernel for an unknown device.
XDEV_API std::vector<OpKernels> list_kernels(std::string_view device);

inline Tensor operator+(const Tensor& x, const Tensor& y) { return add(x, y); }
inline Tensor operator-(const Tensor& x, const Tensor& y) { return sub(x, y); }
inline Tensor operator*(const Tensor& x, const Tensor& y) { return mul(x, y); }
inline Tensor operator/(const Tensor& x, const Tensor& y) { return div(x, y); }
inline Tensor operator-(const Tensor& x) { return neg(x); }

// Tensor-scalar arithmetic, both ways round: the number takes the tensor's
// dtype (as a Python number does in TensorFlow), and lives on its device.
//   xdev::Tensor y = x * 2.0f + 1;   xdev::Tensor z = 1.0 / x;
template <typename S>
concept Scalar = std::is_arithmetic_v<S>;
namespace detail {
template <Scalar S>
Literal scalar_literal(S value) {
  if constexpr (std::is_same_v<S, bool>) {
    return Literal(value);
  } else if constexpr (std::is_integral_v<S>) {
    return Literal(static_cast<long long>(value));
  } else {
    return Literal(static_cast<double>(value));
  }
}
}  // namespace detail
template <Scalar S>
Tensor operator+(const Tensor& x, S s) { return add(x, scalar_like(x, detail::scalar_literal(s))); }
template <Scalar S>
Tensor operator+(S s, const Tensor& x) { return add(scalar_like(x, detail::scalar_literal(s)), x); }
template <Scalar S>
Tensor operator-(const Tensor& x, S s) { return sub(x, scalar_like(x, detail::scalar_literal(s))); }
template <Scalar S>
Tensor operator-(S s, const Tensor& x) { return sub(scalar_like(x, detail::scalar_literal(s)), x); }
template <Scalar S>
Tensor operator*(const Tensor& x, S s) { return mul(x, scalar_like(x, detail::scalar_literal(s))); }
template <Scalar S>
Tensor operator*(S s, const Tensor& x) { return mul(scalar_like(x, detail::scalar_literal(s)), x); }
template <Scalar S>
Tensor operator/(const Tensor& x, S s) { return div(x, scalar_like(x, detail::scalar_literal(s))); }
template <Scalar S>
Tensor operator/(S s, const Tensor& x) { return div(scalar_like(x, detail::scalar_literal(s)), x); }

}  // namespace xdev
