// Every op of the op table as a function, with TensorFlow's names and
// arguments (xdev.add, xdev.matmul, xdev.reduce_sum, xdev.argmax, ...). Tensor
// arguments also take tensor-likes (numbers, lists, NumPy arrays), converted
// like TensorFlow converts them; the op itself runs without the GIL.
#include "bindings.hpp"

#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <array>
#include <string>
#include <variant>
#include <vector>

namespace xdev::python {
namespace {

using BinaryFn = Tensor (*)(const Tensor&, const Tensor&);
using UnaryFn = Tensor (*)(const Tensor&);
using ReduceFn = Tensor (*)(const Tensor&, const std::vector<int>&, bool, xdev::EmptyAxes);
using AxisFn = Tensor (*)(const Tensor&, int);

// Both operands as tensors; Python numbers take the other operand's dtype.
std::pair<Tensor, Tensor> operands(nb::handle x, nb::handle y) {
  if (nb::isinstance<Tensor>(x)) {
    Tensor a = nb::cast<Tensor>(x);
    return {a, to_tensor(y, a.dtype())};
  }
  if (nb::isinstance<Tensor>(y)) {
    Tensor b = nb::cast<Tensor>(y);
    return {to_tensor(x, b.dtype()), b};
  }
  Tensor a = to_tensor(x);
  return {a, to_tensor(y, a.dtype())};
}

// `name` for tensors (the GIL released for the whole call) and for tensor-likes
// (converted with the GIL held, run without it); one overload per kind of op.
void def_op(nb::module_& m, const char* name, BinaryFn fn, const char* doc) {
  m.def(name, [fn](const Tensor& x, const Tensor& y) { return fn(x, y); }, nb::arg("x"),
        nb::arg("y"), release_gil(), doc);
  m.def(name, [fn](nb::handle x, nb::handle y) {
    auto [a, b] = operands(x, y);
    nb::gil_scoped_release release;
    return fn(a, b);
  }, nb::arg("x"), nb::arg("y"), doc);
}

void def_op(nb::module_& m, const char* name, UnaryFn fn, const char* doc) {
  m.def(name, [fn](const Tensor& x) { return fn(x); }, nb::arg("x"), release_gil(), doc);
  m.def(name, [fn](nb::handle x) {
    Tensor a = to_tensor(x);
    nb::gil_scoped_release release;
    return fn(a);
  }, nb::arg("x"), doc);
}

// tf.nn's activations with one attribute: f(features, attribute).
template <typename Attr, Tensor (*Fn)(const Tensor&, Attr)>
void def_activation(nb::module_& m, const char* name, nb::arg_v attr, const char* doc) {
  m.def(name, [](nb::handle features, Attr a) {
    Tensor x = to_tensor(features);
    nb::gil_scoped_release release;
    return Fn(x, a);
  }, nb::arg("features"), attr, doc);
}

// tf.nn's strides, ksize and dilations: None (dilations: 1), an int for both
// spatial axes, or a list of 1, 2 or 4 ints (4: data_format order).
std::vector<int64_t> window_ints(nb::handle v) {
  std::vector<int64_t> out;
  if (v.is_none()) return out;
  if (PyIndex_Check(v.ptr())) {
    const auto n = nb::cast<int64_t>(nb::int_(v));
    return {n, n};
  }
  for (nb::handle x : v) out.push_back(nb::cast<int64_t>(nb::int_(x)));
  if (out.size() == 1) out.push_back(out[0]);
  return out;
}

// An int, or anything that is one (__index__: a NumPy integer, a 0-d array or
// tensor); nullopt for anything else, a list or a 1-d array among them.
std::optional<int64_t> index_value(nb::handle v) {
  if (!PyIndex_Check(v.ptr())) return std::nullopt;
  PyObject* i = PyNumber_Index(v.ptr());
  if (i == nullptr) {
    PyErr_Clear();  // an array of more than one element: not an int
    return std::nullopt;
  }
  return nb::cast<int64_t>(nb::steal(i));
}

// A shape argument (input_sizes, filter_sizes, orig_input_shape): ints.
std::vector<int64_t> sizes_of(nb::handle v) {
  std::vector<int64_t> out;
  for (nb::handle x : v) out.push_back(nb::cast<int64_t>(nb::int_(x)));
  return out;
}

// tf.nn.max_pool, tf.nn.avg_pool: f(input, ksize, strides, padding, data_format).
using PoolFn = Tensor (*)(const Tensor&, const std::vector<int64_t>&, const std::vector<int64_t>&,
                          std::string_view, std::string_view);
template <PoolFn Fn>
void def_pool(nb::module_& m, const char* name, const char* doc) {
  m.def(name, [](nb::handle input, nb::handle ksize, nb::handle strides,
                 const std::string& padding, const std::string& data_format) {
    Tensor x = to_tensor(input);
    const std::vector<int64_t> k = window_ints(ksize), s = window_ints(strides);
    nb::gil_scoped_release release;
    return Fn(x, k, s, padding, data_format);
  }, nb::arg("input"), nb::arg("ksize"), nb::arg("strides"), nb::arg("padding"),
        nb::arg("data_format") = "NHWC", doc);
}

// f(<tensor_arg>, shape): reshape, broadcast_to and broadcast_to_copy.
template <Tensor (*Fn)(const Tensor&, const Shape&)>
void def_shape_op(nb::module_& m, const char* name, const char* tensor_arg, const char* doc) {
  m.def(name, [](nb::handle x, const std::vector<int64_t>& shape) {
    Tensor t = to_tensor(x);
    nb::gil_scoped_release release;
    return Fn(t, Shape(shape));
  }, nb::arg(tensor_arg), nb::arg("shape"), doc);
}

// TensorFlow's axis argument: None (all axes), an int (or anything with
// __index__: a NumPy integer, an integer scalar tensor), or a list of them.
std::vector<int> axes_of(nb::handle axis) {
  std::vector<int> axes;
  if (axis.is_none()) return axes;
  // NumPy arrays and tensors have __index__ at every rank: one of rank 0 is
  // an axis, one of rank 1 (even empty) a list of them.
  const bool ranked = nb::hasattr(axis, "ndim") && nb::cast<int>(axis.attr("ndim")) != 0;
  if (PyIndex_Check(axis.ptr()) && !ranked) {
    axes.push_back(nb::cast<int>(nb::int_(axis)));
    return axes;
  }
  for (nb::handle a : axis) axes.push_back(nb::cast<int>(nb::int_(a)));
  return axes;
}

// One axis: an int (or an integer scalar tensor, a NumPy integer); None means
// `if_none`, as TensorFlow defaults it per op.
int axis_of(nb::handle axis, int if_none) {
  return axis.is_none() ? if_none : nb::cast<int>(nb::int_(axis));
}

// tf.math.reduce_*(input_tensor, axis=None, keepdims=False). As in
// TensorFlow, None reduces every axis and an empty list none (x itself).
void def_op(nb::module_& m, const char* name, ReduceFn fn, const char* doc) {
  m.def(name, [fn](nb::handle x, nb::handle axis, bool keepdims) {
    Tensor t = to_tensor(x);
    std::vector<int> axes = axes_of(axis);
    const xdev::EmptyAxes empty = axis.is_none() ? xdev::EmptyAxes::kAll : xdev::EmptyAxes::kNone;
    nb::gil_scoped_release release;
    return fn(t, axes, keepdims, empty);
  }, nb::arg("input_tensor"), nb::arg("axis").none() = nb::none(), nb::arg("keepdims") = false,
        doc);
}

// tf.math.argmax / argmin(input, axis=None (0), output_type=int64).
template <AxisFn Fn>
void def_arg_reduce(nb::module_& m, const char* name, const char* op, const char* doc) {
  m.def(name, [op](nb::handle input, nb::handle axis, nb::handle output_type) {
    const DType out = to_dtype(output_type);
    if (out != DType::kInt64 && out != DType::kInt32) {
      throw Error(ErrorCode::kInvalidArgument, std::string(op) + ": output_type must be int32 or "
                                                   "int64, not " + std::string(to_string(out)));
    }
    Tensor t = to_tensor(input);
    const int a = axis_of(axis, 0);
    nb::gil_scoped_release release;
    Tensor index = Fn(t, a);
    return out == DType::kInt64 ? index : cast(index, out);
  }, nb::arg("input"), nb::arg("axis").none() = nb::none(),
        nb::arg("output_type") = DType::kInt64, doc);
}

// tf.nn.softmax / log_softmax(logits, axis=None (-1)).
template <AxisFn Fn>
void def_softmax(nb::module_& m, const char* name, const char* doc) {
  m.def(name, [](nb::handle logits, nb::handle axis) {
    Tensor t = to_tensor(logits);
    const int a = axis_of(axis, -1);
    nb::gil_scoped_release release;
    return Fn(t, a);
  }, nb::arg("logits"), nb::arg("axis").none() = nb::none(), doc);
}

Tensor truediv_op(const Tensor& x, const Tensor& y) {
  if (x.dtype() == y.dtype() &&
      (x.dtype() == DType::kInt32 || x.dtype() == DType::kInt64 || x.dtype() == DType::kBool)) {
    return div(cast(x, DType::kFloat64), cast(y, DType::kFloat64));
  }
  return div(x, y);
}

// The ops bound as they are: name, SDK function, docstring.
struct OpBinding {
  const char* name;
  std::variant<UnaryFn, BinaryFn, ReduceFn> fn;
  const char* doc;
};
const OpBinding kOps[] = {
    {"abs", xdev::abs, "|x| (Abs)."},
    {"sign", xdev::sign, "-1, 0 or 1 by the sign of x; NaN stays NaN (Sign)."},
    {"square", xdev::square, "x * x (Square)."},
    {"exp", xdev::exp, "eˣ (Exp)."},
    {"expm1", xdev::expm1, "eˣ - 1, exact near 0 (Expm1)."},
    {"log", xdev::log, "ln x (Log)."},
    {"log1p", xdev::log1p, "ln(1 + x), exact near 0 (Log1p)."},
    {"sqrt", xdev::sqrt, "√x (Sqrt)."},
    {"rsqrt", xdev::rsqrt, "1 / √x (Rsqrt)."},
    {"reciprocal", xdev::reciprocal, "1 / x (Reciprocal)."},
    {"sin", xdev::sin, "sin x (Sin)."},
    {"cos", xdev::cos, "cos x (Cos)."},
    {"tanh", xdev::tanh, "tanh x (Tanh)."},
    {"sigmoid", xdev::sigmoid, "1 / (1 + e⁻ˣ) (Sigmoid)."},
    {"erf", xdev::erf, "The error function (Erf)."},
    {"softplus", xdev::softplus, "ln(1 + eˣ) (Softplus)."},
    {"floor", xdev::floor, "The largest integer ≤ x (Floor)."},
    {"ceil", xdev::ceil, "The smallest integer ≥ x (Ceil)."},
    {"round", xdev::round, "x rounded to the nearest integer, halves to even (Round)."},
    {"logical_not", xdev::logical_not, "not x, for bool x (LogicalNot)."},
    {"is_nan", xdev::is_nan, "Whether x is NaN, for float x (IsNan)."},
    {"is_finite", xdev::is_finite, "Whether x is neither inf nor NaN (IsFinite)."},
    {"pow", xdev::pow, "xʸ for float32/float64 (Pow)."},
    {"maximum", xdev::maximum, "The larger of x and y; NaN propagates (Maximum)."},
    {"minimum", xdev::minimum, "The smaller of x and y; NaN propagates (Minimum)."},
    {"floordiv", xdev::floor_div, "x / y rounded toward -inf (FloorDiv)."},
    {"floormod", xdev::floor_mod,
     "x - floordiv(x, y) * y: the remainder takes y's sign (FloorMod)."},
    {"squared_difference", xdev::squared_difference, "(x - y)² (SquaredDifference)."},
    {"equal", xdev::equal, "x == y, a bool tensor (Equal)."},
    {"not_equal", xdev::not_equal, "x != y, a bool tensor (NotEqual)."},
    {"less", xdev::less, "x < y, a bool tensor (Less)."},
    {"less_equal", xdev::less_equal, "x <= y, a bool tensor (LessEqual)."},
    {"greater", xdev::greater, "x > y, a bool tensor (Greater)."},
    {"greater_equal", xdev::greater_equal, "x >= y, a bool tensor (GreaterEqual)."},
    {"logical_and", xdev::logical_and, "x and y, for bool x and y (LogicalAnd)."},
    {"logical_or", xdev::logical_or, "x or y, for bool x and y (LogicalOr)."},
    {"reduce_sum", static_cast<ReduceFn>(xdev::sum),
     "The sum over `axis` (None: all axes; []: none, x itself) (Sum)."},
    {"reduce_mean", static_cast<ReduceFn>(xdev::mean),
     "The mean over `axis` (None: all axes; []: none, x itself) (Mean)."},
    {"reduce_max", static_cast<ReduceFn>(xdev::max),
     "The largest element over `axis`; NaN wins (Max)."},
    {"reduce_min", static_cast<ReduceFn>(xdev::min),
     "The smallest element over `axis`; NaN wins (Min)."},
    {"reduce_prod", static_cast<ReduceFn>(xdev::prod),
     "The product over `axis` (Prod)."},
    {"reduce_any", static_cast<ReduceFn>(xdev::any),
     "Whether any element over `axis` is true (Any)."},
    {"reduce_all", static_cast<ReduceFn>(xdev::all),
     "Whether every element over `axis` is true (All)."},
    {"reduce_logsumexp", static_cast<ReduceFn>(xdev::logsumexp),
     "ln Σ eˣ over `axis`, without overflow (LogSumExp)."},
    {"relu", xdev::relu, "max(x, 0) (Relu)."},
    {"add", xdev::add, "x + y with NumPy broadcasting (Add)."},
    {"subtract", xdev::sub, "x - y with NumPy broadcasting (Sub)."},
    {"multiply", xdev::mul, "x * y with NumPy broadcasting (Mul)."},
    {"divide", truediv_op, "x / y, true division: integers are divided as float64 (Div)."},
    {"truncatediv", xdev::div, "x / y in the inputs' dtype; integers round toward zero (Div)."},
    {"negative", xdev::neg, "-x (Neg)."},
};

// The ops with arguments of their own.
void bind_math(nb::module_& m) {
  m.def("where", [](nb::handle condition, nb::handle x, nb::handle y) {
    Tensor c = to_tensor(condition);
    auto [a, b] = operands(x, y);
    nb::gil_scoped_release release;
    return select(c, a, b);
  }, nb::arg("condition"), nb::arg("x"), nb::arg("y"),
        "x where condition is true, else y; the three broadcast together (Select).");
  m.def("clip_by_value", [](nb::handle t, nb::handle clip_value_min, nb::handle clip_value_max) {
    Tensor x = to_tensor(t);
    Tensor lo = to_tensor(clip_value_min, x.dtype());
    Tensor hi = to_tensor(clip_value_max, x.dtype());
    nb::gil_scoped_release release;
    return clip_by_value(x, lo, hi);
  }, nb::arg("t"), nb::arg("clip_value_min"), nb::arg("clip_value_max"),
        "min(max(t, clip_value_min), clip_value_max), broadcast together (ClipByValue).");

  def_arg_reduce<xdev::argmax>(m, "argmax", "ArgMax",
                               "The index of the first largest element along `axis` (None: 0); "
                               "a NaN counts as the largest (ArgMax).");
  def_arg_reduce<xdev::argmin>(m, "argmin", "ArgMin",
                               "The index of the first smallest element along `axis` (None: 0); "
                               "a NaN counts as the smallest (ArgMin).");
  m.def("cumsum", [](nb::handle x, nb::handle axis, bool exclusive, bool reverse) {
    Tensor t = to_tensor(x);
    const int a = axis_of(axis, 0);
    nb::gil_scoped_release release;
    return cumsum(t, a, exclusive, reverse);
  }, nb::arg("x"), nb::arg("axis") = 0, nb::arg("exclusive") = false, nb::arg("reverse") = false,
        "The running sum along `axis`; exclusive leaves each element out of its own sum, "
        "reverse sums from the end (CumSum).");
}

void bind_nn(nb::module_& m) {
  def_activation<double, xdev::leaky_relu>(m, "leaky_relu", nb::arg("alpha") = 0.2,
                                           "x if x > 0 else alpha * x (LeakyRelu).");
  def_activation<bool, xdev::gelu>(m, "gelu", nb::arg("approximate") = false,
                                   "x Φ(x), or its tanh form when approximate (Gelu).");
  def_softmax<xdev::softmax>(m, "softmax", "eˣ / Σ eˣ along `axis` (None: the last) (Softmax).");
  def_softmax<xdev::log_softmax>(m, "log_softmax",
                                 "x - ln Σ eˣ along `axis` (None: the last) (LogSoftmax).");
  m.def("bias_add", [](nb::handle value, nb::handle bias, const std::string& data_format) {
    auto [v, b] = operands(value, bias);
    nb::gil_scoped_release release;
    if (!is_floating(v.dtype()) && v.dtype() != DType::kBool && b.rank() == 1 &&
        (data_format == "NHWC" || data_format == "NCHW")) {
      // Integers (BiasAdd's kernels are float-only): the broadcast Add, bias
      // along the last axis (NHWC) or axis 1 (NCHW), as TensorFlow's BiasAdd.
      if (data_format == "NHWC" || v.rank() < 3) return xdev::add(v, b);
      std::vector<int64_t> along(static_cast<size_t>(v.rank() - 1), 1);
      along[0] = b.shape()[0];
      return xdev::add(v, xdev::reshape(b, along));
    }
    return xdev::bias_add(v, b, data_format);
  }, nb::arg("value"), nb::arg("bias"), nb::arg("data_format") = "NHWC",
        "value + bias along the last axis (NHWC) or axis 1 (NCHW) (BiasAdd; integers: the "
        "broadcast Add).");
  m.def("softmax_cross_entropy_with_logits_raw", [](nb::handle features, nb::handle labels) {
    auto [f, l] = operands(features, labels);
    SoftmaxCrossEntropy out;
    {
      nb::gil_scoped_release release;
      out = xdev::softmax_cross_entropy_with_logits(f, l);
    }
    return nb::make_tuple(out.loss, out.backprop);
  }, nb::arg("features"), nb::arg("labels"),
        "TF's raw op: (loss [batch], backprop [batch, classes]) of [batch, classes] features "
        "and labels (SoftmaxCrossEntropyWithLogits).");
  m.def("layer_norm", [](nb::handle x, nb::handle gamma, nb::handle beta, int begin_norm_axis,
                         double epsilon) {
    Tensor t = to_tensor(x);
    Tensor g = to_tensor(gamma, t.dtype());
    Tensor b = to_tensor(beta, t.dtype());
    nb::gil_scoped_release release;
    return xdev::layer_norm(t, g, b, begin_norm_axis, epsilon);
  }, nb::arg("x"), nb::arg("gamma"), nb::arg("beta"), nb::arg("begin_norm_axis") = -1,
        nb::arg("epsilon") = 1e-3,
        "(x - mean) / sqrt(variance + epsilon) * gamma + beta over the axes from "
        "begin_norm_axis (LayerNorm).");
  m.def("dropout", [](nb::handle x, double rate, std::optional<uint64_t> seed) {
    Tensor t = to_tensor(x);
    nb::gil_scoped_release release;
    return xdev::dropout(t, rate, seed);
  }, nb::arg("x"), nb::arg("rate"), nb::arg("seed").none() = nb::none(),
        "x / (1 - rate) where a uniform sample is >= rate, else 0 (tf.nn.dropout).");
  m.def("conv2d", [](nb::handle input, nb::handle filters, nb::handle strides,
                     const std::string& padding, const std::string& data_format,
                     nb::handle dilations) {
    auto [x, w] = operands(input, filters);
    const std::vector<int64_t> s = window_ints(strides), d = window_ints(dilations);
    nb::gil_scoped_release release;
    return xdev::conv2d(x, w, s, padding, data_format, d);
  }, nb::arg("input"), nb::arg("filters"), nb::arg("strides"), nb::arg("padding"),
        nb::arg("data_format") = "NHWC", nb::arg("dilations").none() = nb::none(),
        "2-d cross-correlation of an NHWC (or NCHW) input with filters [KH, KW, in, out] "
        "(Conv2D).");
  m.def("conv2d_backprop_input", [](nb::handle input_sizes, nb::handle filter,
                                    nb::handle out_backprop, nb::handle strides,
                                    const std::string& padding, const std::string& data_format,
                                    nb::handle dilations) {
    auto [w, dy] = operands(filter, out_backprop);
    const std::vector<int64_t> n = sizes_of(input_sizes), s = window_ints(strides),
                               d = window_ints(dilations);
    nb::gil_scoped_release release;
    return xdev::conv2d_backprop_input(n, w, dy, s, padding, data_format, d);
  }, nb::arg("input_sizes"), nb::arg("filter"), nb::arg("out_backprop"), nb::arg("strides"),
        nb::arg("padding"), nb::arg("data_format") = "NHWC",
        nb::arg("dilations").none() = nb::none(),
        "The gradient of conv2d with respect to an input of shape input_sizes "
        "(Conv2DBackpropInput).");
  m.def("conv2d_backprop_filter", [](nb::handle input, nb::handle filter_sizes,
                                     nb::handle out_backprop, nb::handle strides,
                                     const std::string& padding, const std::string& data_format,
                                     nb::handle dilations) {
    auto [x, dy] = operands(input, out_backprop);
    const std::vector<int64_t> n = sizes_of(filter_sizes), s = window_ints(strides),
                               d = window_ints(dilations);
    nb::gil_scoped_release release;
    return xdev::conv2d_backprop_filter(x, n, dy, s, padding, data_format, d);
  }, nb::arg("input"), nb::arg("filter_sizes"), nb::arg("out_backprop"), nb::arg("strides"),
        nb::arg("padding"), nb::arg("data_format") = "NHWC",
        nb::arg("dilations").none() = nb::none(),
        "The gradient of conv2d with respect to a filter of shape filter_sizes "
        "(Conv2DBackpropFilter).");
  def_pool<xdev::max_pool>(m, "max_pool", "The maximum of each window (MaxPool).");
  def_pool<xdev::avg_pool>(m, "avg_pool",
                           "The mean of each window's elements inside the input (AvgPool).");
  m.def("max_pool_grad", [](nb::handle orig_input, nb::handle orig_output, nb::handle grad,
                            nb::handle ksize, nb::handle strides, const std::string& padding,
                            const std::string& data_format) {
    Tensor x = to_tensor(orig_input);
    Tensor y = to_tensor(orig_output, x.dtype());
    Tensor g = to_tensor(grad, x.dtype());
    const std::vector<int64_t> k = window_ints(ksize), s = window_ints(strides);
    nb::gil_scoped_release release;
    return xdev::max_pool_grad(x, y, g, k, s, padding, data_format);
  }, nb::arg("orig_input"), nb::arg("orig_output"), nb::arg("grad"), nb::arg("ksize"),
        nb::arg("strides"), nb::arg("padding"), nb::arg("data_format") = "NHWC",
        "max_pool's gradient, routed to each window's first maximum (MaxPoolGrad).");
  m.def("avg_pool_grad", [](nb::handle orig_input_shape, nb::handle grad, nb::handle ksize,
                            nb::handle strides, const std::string& padding,
                            const std::string& data_format) {
    Tensor g = to_tensor(grad);
    const std::vector<int64_t> n = sizes_of(orig_input_shape), k = window_ints(ksize),
                               s = window_ints(strides);
    nb::gil_scoped_release release;
    return xdev::avg_pool_grad(n, g, k, s, padding, data_format);
  }, nb::arg("orig_input_shape"), nb::arg("grad"), nb::arg("ksize"), nb::arg("strides"),
        nb::arg("padding"), nb::arg("data_format") = "NHWC",
        "avg_pool's gradient, spread over each window's elements inside the input "
        "(AvgPoolGrad).");
}

// A list of tensor-likes as tensors: numbers and NumPy arrays take the dtype
// of the first Tensor among them (as add_n does).
std::vector<Tensor> tensors_of(nb::handle values) {
  std::optional<DType> like;
  for (nb::handle h : values) {
    if (nb::isinstance<Tensor>(h)) {
      like = nb::cast<const Tensor&>(h).dtype();
      break;
    }
  }
  std::vector<Tensor> tensors;
  for (nb::handle h : values) tensors.push_back(to_tensor(h, like));
  return tensors;
}

// Indices (gather, one_hot, tensor_scatter_nd_add): a Tensor as it is (int32
// or int64), anything else converted to int64.
Tensor index_tensor(nb::handle indices) {
  return nb::isinstance<Tensor>(indices) ? nb::cast<Tensor>(indices)
                                         : to_tensor(indices, DType::kInt64);
}

// Data movement (TensorFlow's names and arguments): every dtype, values
// copied bit for bit; expand_dims, squeeze and broadcast_to are views.
void bind_data(nb::module_& m) {
  m.def("concat", [](nb::handle values, nb::handle axis) {
    std::vector<Tensor> tensors = tensors_of(values);
    const int a = axis_of(axis, 0);
    nb::gil_scoped_release release;
    return concat(tensors, a);
  }, nb::arg("values"), nb::arg("axis"),
        "The tensors joined along an existing `axis` (negative: from the end) (ConcatV2).");
  m.def("stack", [](nb::handle values, nb::handle axis) {
    std::vector<Tensor> tensors = tensors_of(values);
    const int a = axis_of(axis, 0);
    nb::gil_scoped_release release;
    return stack(tensors, a);
  }, nb::arg("values"), nb::arg("axis") = 0,
        "The tensors stacked along a new `axis` of the output (Pack).");
  m.def("identity", [](nb::handle input) {
    Tensor t = to_tensor(input);
    nb::gil_scoped_release release;
    return identity(t);
  }, nb::arg("input"), "A new tensor holding input's values (Identity).");
  m.def("tile", [](nb::handle input, const std::vector<int64_t>& multiples) {
    Tensor t = to_tensor(input);
    nb::gil_scoped_release release;
    return tile(t, multiples);
  }, nb::arg("input"), nb::arg("multiples"),
        "input repeated multiples[k] times along each axis k (Tile).");
  m.def("pad", [](nb::handle tensor, const std::vector<std::vector<int64_t>>& paddings,
                  const std::string& mode, double constant_values) {
    if (mode != "CONSTANT" && mode != "constant") {
      throw Error(ErrorCode::kUnimplemented,
                  "PadV2: mode '" + mode + "' is not supported; only CONSTANT is");
    }
    std::vector<std::array<int64_t, 2>> pairs;
    for (const std::vector<int64_t>& p : paddings) {
      if (p.size() != 2) {
        throw Error(ErrorCode::kInvalidArgument,
                    "PadV2: each padding is [before, after], not " + std::to_string(p.size()) +
                        " values");
      }
      pairs.push_back({p[0], p[1]});
    }
    Tensor t = to_tensor(tensor);
    nb::gil_scoped_release release;
    return pad(t, pairs, constant_values);
  }, nb::arg("tensor"), nb::arg("paddings"), nb::arg("mode") = "CONSTANT",
        nb::arg("constant_values") = 0.0,
        "tensor with paddings[k] = [before, after] elements of constant_values around "
        "axis k (PadV2).");
  m.def("gather", [](nb::handle params, nb::handle indices, nb::handle axis) {
    Tensor p = to_tensor(params);
    Tensor i = index_tensor(indices);
    const int a = axis_of(axis, 0);
    nb::gil_scoped_release release;
    return gather(p, i, a);
  }, nb::arg("params"), nb::arg("indices"), nb::arg("axis").none() = nb::none(),
        "The slices of params along `axis` (None: 0) at `indices`; an index out of range "
        "is an error (GatherV2).");
  m.def("slice", [](nb::handle input, const std::vector<int64_t>& begin,
                    const std::vector<int64_t>& size) {
    Tensor t = to_tensor(input);
    nb::gil_scoped_release release;
    return slice(t, begin, size);
  }, nb::arg("input_"), nb::arg("begin"), nb::arg("size"),
        "The window of input_ at `begin` of `size` (-1: to the end of the axis), a view "
        "(Slice).");
  m.def("strided_slice", [](nb::handle input, const std::vector<int64_t>& begin,
                            const std::vector<int64_t>& end,
                            std::optional<std::vector<int64_t>> strides, int64_t begin_mask,
                            int64_t end_mask, int64_t ellipsis_mask, int64_t new_axis_mask,
                            int64_t shrink_axis_mask) {
    Tensor t = to_tensor(input);
    const std::vector<int64_t> steps = strides.value_or(std::vector<int64_t>{});
    nb::gil_scoped_release release;
    return strided_slice(t, begin, end, steps, begin_mask, end_mask, ellipsis_mask,
                         new_axis_mask, shrink_axis_mask);
  }, nb::arg("input_"), nb::arg("begin"), nb::arg("end"), nb::arg("strides").none() = nb::none(),
        nb::arg("begin_mask") = 0, nb::arg("end_mask") = 0, nb::arg("ellipsis_mask") = 0,
        nb::arg("new_axis_mask") = 0, nb::arg("shrink_axis_mask") = 0,
        "input_[begin:end:strides] with TensorFlow's masks (None strides: 1); a view unless "
        "a stride is negative (StridedSlice).");
  m.def("range", [](nb::handle start, nb::handle limit, nb::handle delta, nb::handle dtype) {
    // tf.range(n) is range(0, n); without a dtype, Python ints give int32, else float32.
    const bool one = limit.is_none();
    const nb::int_ zero(0);
    nb::handle first = one ? nb::handle(zero) : start, last = one ? start : limit;
    const bool ints = nb::isinstance<nb::int_>(first) && nb::isinstance<nb::int_>(last) &&
                      nb::isinstance<nb::int_>(delta);
    const DType d = dtype.is_none() ? (ints ? DType::kInt32 : DType::kFloat32) : to_dtype(dtype);
    const double s = nb::cast<double>(first), l = nb::cast<double>(last);
    const double step = nb::cast<double>(delta);
    nb::gil_scoped_release release;
    // float16 and bfloat16: the float32 sequence, rounded (Range has float32,
    // float64, int32 and int64 kernels).
    if (d == DType::kFloat16 || d == DType::kBFloat16) return cast(range(s, l, step, DType::kFloat32), d);
    return range(s, l, step, d);
  }, nb::arg("start"), nb::arg("limit").none() = nb::none(), nb::arg("delta") = 1,
        nb::arg("dtype").none() = nb::none(),
        "start, start + delta, ... up to limit, not included (one argument: 0 to it); Python "
        "ints give int32, else float32 (Range).");
  m.def("one_hot", [](nb::handle indices, int64_t depth, std::optional<double> on_value,
                      std::optional<double> off_value, nb::handle axis, nb::handle dtype) {
    Tensor i = index_tensor(indices);
    const int a = axis_of(axis, -1);
    const DType d = dtype.is_none() ? DType::kFloat32 : to_dtype(dtype);
    nb::gil_scoped_release release;
    return one_hot(i, depth, on_value.value_or(1.0), off_value.value_or(0.0), a, d);
  }, nb::arg("indices"), nb::arg("depth"), nb::arg("on_value").none() = nb::none(),
        nb::arg("off_value").none() = nb::none(), nb::arg("axis").none() = nb::none(),
        nb::arg("dtype").none() = nb::none(),
        "on_value where the index equals the position along a new axis of depth, else "
        "off_value; an index out of range gives off_value (OneHot).");
  m.def("tensor_scatter_nd_add", [](nb::handle tensor, nb::handle indices, nb::handle updates) {
    Tensor t = to_tensor(tensor);
    Tensor i = index_tensor(indices);
    Tensor u = to_tensor(updates, t.dtype());
    nb::gil_scoped_release release;
    return tensor_scatter_add(t, i, u);
  }, nb::arg("tensor"), nb::arg("indices"), nb::arg("updates"),
        "A copy of tensor with each slice of updates added at its index (rows of indices "
        "[..., D] index tensor's first D axes; repeated indices add up); an index out of "
        "range is an error (TensorScatterAdd).");
  m.def("split", [](nb::handle value, nb::handle num_or_size_splits, nb::handle axis,
                    std::optional<int64_t> num) {
    Tensor t = to_tensor(value);
    const int a = axis_of(axis, 0);
    std::vector<Tensor> pieces;
    const std::optional<int64_t> count = index_value(num_or_size_splits);
    const bool equal_pieces = count.has_value();
    if (equal_pieces) {
      nb::gil_scoped_release release;
      pieces = split(t, *count, a);
    } else {
      const std::vector<int64_t> sizes = sizes_of(num_or_size_splits);
      nb::gil_scoped_release release;
      pieces = split(t, sizes, a);
    }
    if (num && *num != static_cast<int64_t>(pieces.size())) {
      throw Error(ErrorCode::kInvalidArgument,
                  std::string(equal_pieces ? "Split" : "SplitV") + ": num is " +
                      std::to_string(*num) + " but num_or_size_splits gives " +
                      std::to_string(pieces.size()) + " pieces");
    }
    return pieces;
  }, nb::arg("value"), nb::arg("num_or_size_splits"), nb::arg("axis") = 0,
        nb::arg("num").none() = nb::none(),
        "value cut along `axis` into a list of views (no copy): an int makes that many equal "
        "pieces (Split), a list one piece per size, at most one of them -1 (SplitV).");
  def_shape_op<xdev::broadcast_to_copy>(
      m, "broadcast_to_copy", "input",
      "input broadcast to `shape` as a new dense tensor, every element stored (BroadcastTo).");
  m.def("expand_dims", [](nb::handle input, nb::handle axis) {
    Tensor t = to_tensor(input);
    const int a = axis_of(axis, 0);
    nb::gil_scoped_release release;
    return expand_dims(t, a);
  }, nb::arg("input"), nb::arg("axis"), "A view with an axis of size 1 inserted at `axis`.");
  m.def("squeeze", [](nb::handle input, nb::handle axis) {
    Tensor t = to_tensor(input);
    std::vector<int> axes = axes_of(axis);
    nb::gil_scoped_release release;
    return squeeze(t, axes);
  }, nb::arg("input"), nb::arg("axis").none() = nb::none(),
        "A view without the axes of size 1 in `axis` (None: all of them).");
  def_shape_op<xdev::broadcast_to>(m, "broadcast_to", "input",
                                   "A view of input broadcast to `shape` (stride 0).");
}

}  // namespace

Tensor tf_matmul(const Tensor& a, const Tensor& b, bool transpose_a, bool transpose_b) {
  if (a.rank() > 2 || b.rank() > 2) return batch_matmul(a, b, transpose_a, transpose_b);
  return matmul(a, b, transpose_a, transpose_b);
}

void bind_ops(nb::module_& m) {
  // --- creation ---
  m.def("zeros", [](const std::vector<int64_t>& shape, nb::handle dtype) {
    const DType d = to_dtype(dtype);
    nb::gil_scoped_release release;
    return zeros(Shape(shape), d);
  }, nb::arg("shape"), nb::arg("dtype") = DType::kFloat32, "Zeros (logged as Fill).");
  m.def("ones", [](const std::vector<int64_t>& shape, nb::handle dtype) {
    const DType d = to_dtype(dtype);
    nb::gil_scoped_release release;
    return ones(Shape(shape), d);
  }, nb::arg("shape"), nb::arg("dtype") = DType::kFloat32, "Ones (logged as Fill).");
  m.def("_fill", [](const std::vector<int64_t>& shape, double value, DType dtype) {
    return fill(Shape(shape), value, dtype);
  }, nb::arg("shape"), nb::arg("value"), nb::arg("dtype"), release_gil());
  m.def("_random_uniform", [](const std::vector<int64_t>& shape, double minval, double maxval,
                              DType dtype, std::optional<uint64_t> seed) {
    return random_uniform(Shape(shape), minval, maxval, dtype, seed);
  }, nb::arg("shape"), nb::arg("minval"), nb::arg("maxval"), nb::arg("dtype"),
        nb::arg("seed").none(), release_gil());
  m.def("_set_random_seed", &set_random_seed, nb::arg("seed"));

  // --- ops ---
  m.def("matmul", [](nb::handle a, nb::handle b, bool ta, bool tb, bool adj_a, bool adj_b) {
    // Real dtypes only: the adjoint is the transpose (TF refuses both at once).
    if ((ta && adj_a) || (tb && adj_b)) {
      throw nb::value_error("matmul: only one of transpose_a and adjoint_a (transpose_b and "
                            "adjoint_b) can be True");
    }
    auto [x, y] = operands(a, b);
    nb::gil_scoped_release release;
    return tf_matmul(x, y, ta || adj_a, tb || adj_b);
  }, nb::arg("a"), nb::arg("b"), nb::arg("transpose_a") = false, nb::arg("transpose_b") = false,
        nb::arg("adjoint_a") = false, nb::arg("adjoint_b") = false,
        "The matrix product a · b (MatMul); inputs of rank > 2 are batches of matrices whose "
        "batch axes broadcast (BatchMatMulV2), like tf.linalg.matmul.");
  m.def("batch_matmul", [](nb::handle x, nb::handle y, bool adj_x, bool adj_y) {
    auto [a, b] = operands(x, y);
    nb::gil_scoped_release release;
    return batch_matmul(a, b, adj_x, adj_y);
  }, nb::arg("x"), nb::arg("y"), nb::arg("adj_x") = false, nb::arg("adj_y") = false,
        "x [..., M, K] · y [..., K, N] per matrix of the batch axes, which broadcast; adj_x / "
        "adj_y swap the last two axes first (BatchMatMulV2).");
  m.def("add_n", [](nb::handle inputs) {
    std::vector<Tensor> tensors = tensors_of(inputs);
    nb::gil_scoped_release release;
    return add_n(tensors);
  }, nb::arg("inputs"), "The sum of tensors of one shape and dtype, on any devices (AddN).");
  m.def("cast", [](nb::handle x, nb::handle dtype) {
    const DType d = to_dtype(dtype);
    Tensor t = to_tensor(x);
    nb::gil_scoped_release release;
    return cast(t, d);
  }, nb::arg("x"), nb::arg("dtype"), "x converted to dtype (Cast).");
  for (const OpBinding& op : kOps) {
    std::visit([&](auto fn) { def_op(m, op.name, fn, op.doc); }, op.fn);
  }
  bind_math(m);
  bind_nn(m);
  bind_data(m);
  m.def("transpose", [](nb::handle x, std::optional<std::vector<int>> perm) {
    Tensor t = to_tensor(x);
    nb::gil_scoped_release release;
    return transpose(t, perm.value_or(std::vector<int>{}));
  }, nb::arg("a"), nb::arg("perm").none() = nb::none(),
        "Axes permuted (None: reversed), as a new contiguous tensor (Copy).");
  def_shape_op<xdev::reshape>(
      m, "reshape", "tensor",
      "The same values in a new shape; one dimension may be -1 (free when contiguous).");
}

}  // namespace xdev::python
