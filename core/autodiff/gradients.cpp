// The gradient of every op (gradients.hpp), in the op table's order. Each is
// made of SDK ops, so it runs wherever the tape's backward pass puts it (the
// forward op's device, autodiff/tape.cpp) and is itself recorded by an outer
// tape (second derivatives). Formulas follow TensorFlow's gradient registry
// (tensorflow/python/ops/*_grad.py) unless a comment says otherwise.
#include "autodiff/gradients.hpp"

#include <xdev/ops.hpp>
#include <xdev/placement.hpp>

#include <array>
#include <cmath>
#include <cstring>
#include <numbers>

#include "ops/run_op.hpp"

namespace xdev::detail {

// --- recorded attributes -----------------------------------------------------

RecordedAttrs::RecordedAttrs(std::span<const xdev_attr_t> attrs) : attrs_(attrs.begin(), attrs.end()) {
  for (xdev_attr_t& a : attrs_) {
    if (a.kind == XDEV_ATTR_INTS) {
      const int64_t* v = a.value.ints.values;
      ints_.emplace_back(v, v + a.value.ints.count);
      a.value.ints.values = ints_.back().data();
    } else if (a.kind == XDEV_ATTR_STRING) {
      const char* s = a.value.s;
      strings_.emplace_back(s, s + std::strlen(s) + 1);
      a.value.s = strings_.back().data();
    }
  }
}

const xdev_attr_t& RecordedAttrs::find(const char* name, xdev_attr_kind_t kind) const {
  for (const xdev_attr_t& a : attrs_) {
    if (std::strcmp(a.name, name) == 0 && a.kind == kind) return a;
  }
  throw Error(ErrorCode::kInternal, std::string("gradient: the recorded call has no attribute '") +
                                        name + "' of the kind asked for");
}

bool RecordedAttrs::get_bool(const char* name) const { return find(name, XDEV_ATTR_BOOL).value.b != 0; }
int64_t RecordedAttrs::get_int(const char* name) const { return find(name, XDEV_ATTR_INT).value.i; }
double RecordedAttrs::get_float(const char* name) const { return find(name, XDEV_ATTR_FLOAT).value.f; }
std::vector<int64_t> RecordedAttrs::get_ints(const char* name) const {
  const xdev_attr_t& a = find(name, XDEV_ATTR_INTS);
  return {a.value.ints.values, a.value.ints.values + a.value.ints.count};
}
std::string RecordedAttrs::get_string(const char* name) const {
  return find(name, XDEV_ATTR_STRING).value.s;
}

// --- helpers -------------------------------------------------------------------

namespace {

using G = std::vector<Tensor>;

Tensor sc(const Tensor& like, double v) { return scalar_like(like, Literal(v)); }

// Zeros of `shape` and `like`'s dtype on `like`'s device.
Tensor zeros_as(const Tensor& like, const Shape& shape) {
  DeviceScope scope(like.device());
  return zeros(shape, like.dtype());
}
Tensor zeros_like(const Tensor& x) { return zeros_as(x, x.shape()); }

Tensor where(const Tensor& condition, const Tensor& g) { return select(condition, g, sc(g, 0.0)); }

// sum over `axes` (none: x itself; the SDK's empty list means every axis).
Tensor sum_over(const Tensor& x, const std::vector<int>& axes, bool keepdims) {
  return axes.empty() ? x : sum(x, axes, keepdims);
}

std::vector<int> to_int_axes(const std::vector<int64_t>& axes) {
  return std::vector<int>(axes.begin(), axes.end());
}

// x's shape with the reduced axes kept as 1.
Shape kept_shape(const Shape& x, const std::vector<int64_t>& axes) {
  Shape kept = x;
  for (int64_t a : axes) kept[static_cast<size_t>(a)] = 1;
  return kept;
}

// The upstream gradient of a reduction, with its reduced axes as 1.
Tensor kept_grad(const GradContext& c) {
  return reshape(c.grads[0], kept_shape(c.inputs[0].shape(), c.attrs.get_ints(attr::kAxes)));
}
Tensor kept_output(const GradContext& c) {
  return reshape(c.outputs[0], kept_shape(c.inputs[0].shape(), c.attrs.get_ints(attr::kAxes)));
}

const Tensor& x0(const GradContext& c) { return c.inputs[0]; }
const Tensor& g0(const GradContext& c) { return c.grads[0]; }
const Tensor& y0(const GradContext& c) { return c.outputs[0]; }

// Unary ops: dx = g · f'(x, y).
template <Tensor (*Deriv)(const Tensor& x, const Tensor& y)>
G unary_grad(const GradContext& c) {
  return {mul(g0(c), Deriv(x0(c), y0(c)))};
}

// Binary broadcasting ops: each gradient reduced to its input's shape.
G reduced(const GradContext& c, const Tensor& dx, const Tensor& dy) {
  return {reduce_to_shape(dx, c.inputs[0].shape()), reduce_to_shape(dy, c.inputs[1].shape())};
}

// The attributes of Conv2D and the pooling ops, as the SDK takes them.
struct Window {
  std::vector<int64_t> ksize, strides, dilations;
  std::string padding, format;
};
Window window(const GradContext& c, bool pool) {
  Window w;
  w.strides = c.attrs.get_ints(attr::kStrides);
  if (pool) {
    w.ksize = c.attrs.get_ints(attr::kKsize);
  } else {
    w.dilations = c.attrs.get_ints(attr::kDilations);
  }
  w.padding = c.attrs.get_string(attr::kPadding);
  w.format = c.attrs.get_string(attr::kDataFormat);
  return w;
}

// The op `op` run again on other inputs with the recorded attributes.
Tensor rerun(OpId op, std::span<const Tensor* const> inputs, std::span<const xdev_attr_t> raw) {
  Attrs attrs;
  for (const xdev_attr_t& a : raw) {
    switch (a.kind) {
      case XDEV_ATTR_BOOL: attrs.add_bool(a.name, a.value.b != 0); break;
      case XDEV_ATTR_INT: attrs.add_int(a.name, a.value.i); break;
      case XDEV_ATTR_FLOAT: attrs.add_float(a.name, a.value.f); break;
      case XDEV_ATTR_DTYPE: attrs.add_dtype(a.name, static_cast<DType>(a.value.dtype)); break;
      case XDEV_ATTR_INTS: attrs.add_ints(a.name, a.value.ints.values, a.value.ints.count); break;
      case XDEV_ATTR_STRING: attrs.add_string(a.name, a.value.s); break;
      default: throw Error(ErrorCode::kInternal, "gradient: an attribute of an unknown kind");
    }
  }
  return run_defined_op(op, inputs, attrs);
}

// --- the gradient functions, in the op table's order -----------------------------

// The gradients of a product `product(a, b, ta, tb)` (MatMul, BatchMatMulV2),
// each still of the broadcast batch shape.
using Product = Tensor (*)(const Tensor&, const Tensor&, bool, bool);
// d a and d b of product(a, b, ta, tb) for the upstream g; each only when
// the backward pass needs it (c.needs), else an undefined Tensor.
G product_grads(const GradContext& c, Product product, const Tensor& a, const Tensor& b,
                const Tensor& g, bool ta, bool tb) {
  G d(2);
  if (c.needs(0)) {
    d[0] = !ta ? product(g, b, false, !tb) : (!tb ? product(b, g, false, true)
                                                  : product(b, g, true, true));
  }
  if (c.needs(1)) {
    d[1] = !tb ? (!ta ? product(a, g, true, false) : product(a, g, false, false))
               : (!ta ? product(g, a, true, false) : product(g, a, true, true));
  }
  return d;
}

G matmul_grad(const GradContext& c) {
  return product_grads(c, matmul, c.inputs[0], c.inputs[1], g0(c),
                       c.attrs.get_bool(attr::kTransposeA), c.attrs.get_bool(attr::kTransposeB));
}

G add_grad(const GradContext& c) { return reduced(c, g0(c), g0(c)); }
G sub_grad(const GradContext& c) { return reduced(c, g0(c), neg(g0(c))); }
G mul_grad(const GradContext& c) {
  return reduced(c, mul(g0(c), c.inputs[1]), mul(g0(c), c.inputs[0]));
}
G div_grad(const GradContext& c) {
  const Tensor &x = c.inputs[0], &y = c.inputs[1], &g = g0(c);
  return reduced(c, div(g, y), neg(div(mul(g, x), square(y))));
}
G neg_grad(const GradContext& c) { return {neg(g0(c))}; }
G relu_grad(const GradContext& c) { return {where(greater(x0(c), sc(x0(c), 0.0)), g0(c))}; }
G add_n_grad(const GradContext& c) { return G(c.inputs.size(), g0(c)); }
G cast_grad(const GradContext& c) {
  const DType in = x0(c).dtype();
  if (in != DType::kFloat32 && in != DType::kFloat64) return {Tensor()};
  return {cast(g0(c), in)};
}
G sum_grad(const GradContext& c) { return {broadcast_to_copy(kept_grad(c), x0(c).shape())}; }
G mean_grad(const GradContext& c) {
  const int64_t in = x0(c).num_elements(), out = y0(c).num_elements();
  const double count = out == 0 || in == 0 ? 1.0 : static_cast<double>(in / out);
  const Tensor g = div(kept_grad(c), sc(g0(c), count));
  return {broadcast_to_copy(g, x0(c).shape())};
}
G pass_grad(const GradContext& c) { return {g0(c)}; }
G zero_grad(const GradContext& c) { return {zeros_like(x0(c))}; }

Tensor d_abs(const Tensor& x, const Tensor&) { return sign(x); }
Tensor d_square(const Tensor& x, const Tensor&) { return mul(x, sc(x, 2.0)); }
Tensor d_exp(const Tensor&, const Tensor& y) { return y; }
Tensor d_expm1(const Tensor&, const Tensor& y) { return add(y, sc(y, 1.0)); }
Tensor d_log(const Tensor& x, const Tensor&) { return reciprocal(x); }
Tensor d_log1p(const Tensor& x, const Tensor&) { return reciprocal(add(x, sc(x, 1.0))); }
Tensor d_sqrt(const Tensor&, const Tensor& y) { return div(sc(y, 0.5), y); }
Tensor d_rsqrt(const Tensor&, const Tensor& y) { return mul(mul(square(y), y), sc(y, -0.5)); }
Tensor d_reciprocal(const Tensor&, const Tensor& y) { return neg(square(y)); }
Tensor d_sin(const Tensor& x, const Tensor&) { return cos(x); }
Tensor d_cos(const Tensor& x, const Tensor&) { return neg(sin(x)); }
Tensor d_tanh(const Tensor&, const Tensor& y) { return sub(sc(y, 1.0), square(y)); }
Tensor d_sigmoid(const Tensor&, const Tensor& y) { return mul(y, sub(sc(y, 1.0), y)); }
Tensor d_erf(const Tensor& x, const Tensor&) {
  return mul(exp(neg(square(x))), sc(x, 2.0 / std::sqrt(std::numbers::pi)));
}
Tensor d_softplus(const Tensor& x, const Tensor&) { return sigmoid(x); }

G leaky_relu_grad(const GradContext& c) {
  const Tensor& g = g0(c);
  const Tensor scaled = mul(g, sc(g, c.attrs.get_float(attr::kAlpha)));
  return {select(greater(x0(c), sc(x0(c), 0.0)), g, scaled)};
}

G gelu_grad(const GradContext& c) {
  const Tensor& x = x0(c);
  Tensor d;
  if (!c.attrs.get_bool(attr::kApproximate)) {
    // Φ(x) + x φ(x)
    const Tensor cdf = mul(add(erf(mul(x, sc(x, std::numbers::sqrt2 / 2))), sc(x, 1.0)), sc(x, 0.5));
    const Tensor pdf =
        mul(exp(mul(square(x), sc(x, -0.5))), sc(x, 1.0 / std::sqrt(2 * std::numbers::pi)));
    d = add(cdf, mul(x, pdf));
  } else {
    // y = 0.5 x (1 + tanh(u)), u = k (x + 0.044715 x³), k = √(2/π)
    const double k = std::sqrt(2.0 / std::numbers::pi), a = 0.044715;
    const Tensor x2 = square(x);
    const Tensor t = tanh(mul(mul(x, add(mul(x2, sc(x, a)), sc(x, 1.0))), sc(x, k)));
    const Tensor du = mul(add(mul(x2, sc(x, 3 * a)), sc(x, 1.0)), sc(x, k));
    d = add(mul(add(t, sc(x, 1.0)), sc(x, 0.5)),
            mul(mul(mul(x, sc(x, 0.5)), sub(sc(x, 1.0), square(t))), du));
  }
  return {mul(g0(c), d)};
}

G pow_grad(const GradContext& c) {
  const Tensor &x = c.inputs[0], &y = c.inputs[1], &z = y0(c), &g = g0(c);
  const Tensor dx = mul(mul(g, y), pow(x, sub(y, sc(y, 1.0))));
  // ln x where x > 0, else 0 (TensorFlow's choice: the real derivative
  // exists only for positive bases).
  const Tensor positive = greater(x, sc(x, 0.0));
  const Tensor log_x = select(positive, log(select(positive, x, sc(x, 1.0))), sc(x, 0.0));
  return reduced(c, dx, mul(mul(g, z), log_x));
}

G maximum_grad(const GradContext& c) {
  const Tensor &x = c.inputs[0], &y = c.inputs[1];
  return reduced(c, where(greater_equal(x, y), g0(c)), where(less(x, y), g0(c)));
}
G minimum_grad(const GradContext& c) {
  const Tensor &x = c.inputs[0], &y = c.inputs[1];
  return reduced(c, where(less_equal(x, y), g0(c)), where(greater(x, y), g0(c)));
}
G floor_mod_grad(const GradContext& c) {
  const Tensor &x = c.inputs[0], &y = c.inputs[1];
  return reduced(c, g0(c), neg(mul(g0(c), floor_div(x, y))));
}
G squared_difference_grad(const GradContext& c) {
  const Tensor d = mul(mul(g0(c), sub(c.inputs[0], c.inputs[1])), sc(g0(c), 2.0));
  return reduced(c, d, neg(d));
}
G select_grad(const GradContext& c) {
  const Tensor &cond = c.inputs[0], &g = g0(c);
  const Tensor zero = sc(g, 0.0);
  return {Tensor(), reduce_to_shape(select(cond, g, zero), c.inputs[1].shape()),
          reduce_to_shape(select(cond, zero, g), c.inputs[2].shape())};
}
G clip_grad(const GradContext& c) {
  const Tensor &x = c.inputs[0], &lo = c.inputs[1], &hi = c.inputs[2], &g = g0(c);
  const Tensor below = less(x, lo), above = greater(x, hi);
  const Tensor inside = logical_not(logical_or(below, above));
  return {reduce_to_shape(where(inside, g), x.shape()),
          reduce_to_shape(where(below, g), lo.shape()),
          reduce_to_shape(where(above, g), hi.shape())};
}
// Max, Min: the gradient shared equally among the elements equal to the
// extreme (TensorFlow's _MinOrMaxGrad).
G extreme_grad(const GradContext& c) {
  const Tensor& x = x0(c);
  const std::vector<int> axes = to_int_axes(c.attrs.get_ints(attr::kAxes));
  const Tensor hits = cast(equal(x, kept_output(c)), x.dtype());
  const Tensor count = sum(hits, axes, true, EmptyAxes::kNone);
  return {div(mul(hits, kept_grad(c)), count)};
}
// Prod: ∏ of the others, exact with zeros: no zero in the line gives y / x;
// one zero gives that element the product of the others and the rest 0;
// more give 0.
G prod_grad(const GradContext& c) {
  const Tensor& x = x0(c);
  const std::vector<int> axes = to_int_axes(c.attrs.get_ints(attr::kAxes));
  const Tensor zero = sc(x, 0.0);
  const Tensor is_zero = equal(x, zero);
  const Tensor zeros_in_line = sum(cast(is_zero, x.dtype()), axes, true, EmptyAxes::kNone);
  const Tensor nonzero = select(is_zero, sc(x, 1.0), x);
  const Tensor others_nonzero =
      prod(nonzero, axes, true, EmptyAxes::kNone);  // ∏ of the line's nonzero elements
  const Tensor at_zero = select(equal(zeros_in_line, sc(x, 1.0)), others_nonzero, zero);
  const Tensor elsewhere = select(equal(zeros_in_line, zero), div(others_nonzero, nonzero), zero);
  return {mul(kept_grad(c), select(is_zero, at_zero, elsewhere))};
}
G logsumexp_grad(const GradContext& c) {
  return {mul(kept_grad(c), exp(sub(x0(c), kept_output(c))))};
}
G cumsum_grad(const GradContext& c) {
  return {cumsum(g0(c), static_cast<int>(c.attrs.get_int(attr::kAxis)),
                 c.attrs.get_bool(attr::kExclusive), !c.attrs.get_bool(attr::kReverse))};
}
G softmax_grad(const GradContext& c) {
  const Tensor &y = y0(c), &g = g0(c);
  const int axis = static_cast<int>(c.attrs.get_int(attr::kAxis));
  return {mul(y, sub(g, sum(mul(g, y), {axis}, true)))};
}
G log_softmax_grad(const GradContext& c) {
  const Tensor &y = y0(c), &g = g0(c);
  const int axis = static_cast<int>(c.attrs.get_int(attr::kAxis));
  return {sub(g, mul(exp(y), sum(g, {axis}, true)))};
}
// ConcatV2: each input's window of the gradient.
G concat_grad(const GradContext& c) {
  const int axis = static_cast<int>(c.attrs.get_int(attr::kAxis));
  const Tensor& g = g0(c);
  std::vector<int64_t> begin(static_cast<size_t>(g.rank()), 0);
  G out;
  for (const Tensor& in : c.inputs) {
    const std::vector<int64_t> size = in.shape().to_vector();
    out.push_back(slice(g, begin, size));
    begin[static_cast<size_t>(axis)] += size[static_cast<size_t>(axis)];
  }
  return out;
}
G pack_grad(const GradContext& c) {
  const int axis = static_cast<int>(c.attrs.get_int(attr::kAxis));
  const Tensor& g = g0(c);
  std::vector<int64_t> begin(static_cast<size_t>(g.rank()), 0);
  std::vector<int64_t> size = g.shape().to_vector();
  size[static_cast<size_t>(axis)] = 1;
  G out;
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    begin[static_cast<size_t>(axis)] = static_cast<int64_t>(i);
    out.push_back(reshape(slice(g, begin, size), c.inputs[i].shape()));
  }
  return out;
}
// Tile: the copies of each axis summed, one axis at a time.
G tile_grad(const GradContext& c) {
  const std::vector<int64_t> multiples = c.attrs.get_ints(attr::kMultiples);
  const Shape& x = x0(c).shape();
  Tensor g = g0(c);
  for (int k = 0; k < x.rank(); ++k) {
    const int64_t m = multiples[static_cast<size_t>(k)];
    if (m == 1) continue;
    Shape cur = g.shape();
    int64_t before = 1, after = 1;
    for (int j = 0; j < k; ++j) before *= cur[static_cast<size_t>(j)];
    for (int j = k + 1; j < cur.rank(); ++j) after *= cur[static_cast<size_t>(j)];
    const int64_t d = x[static_cast<size_t>(k)];
    g = sum(reshape(g, Shape{before, m, d, after}), {1}, false);
    cur[static_cast<size_t>(k)] = d;
    g = reshape(g, cur);
  }
  return {g};
}
G pad_grad(const GradContext& c) {
  const std::vector<int64_t> paddings = c.attrs.get_ints(attr::kPaddings);
  std::vector<int64_t> begin;
  for (size_t k = 0; k < paddings.size(); k += 2) begin.push_back(paddings[k]);
  return {slice(g0(c), begin, x0(c).shape().to_vector())};
}
// GatherV2: params' gradient adds each picked slice's gradient into the
// slice it came from: the upstream, axis first, scattered into zeros at the
// indices ([rows, pre, post] += [n, pre, post] at [n, 1]).
G gather_grad(const GradContext& c) {
  const Tensor &params = c.inputs[0], &indices = c.inputs[1], &g = g0(c);
  const int axis = static_cast<int>(c.attrs.get_int(attr::kAxis));
  const Shape& p = params.shape();
  int64_t pre = 1, post = 1;
  for (int k = 0; k < axis; ++k) pre *= p[static_cast<size_t>(k)];
  for (int k = axis + 1; k < p.rank(); ++k) post *= p[static_cast<size_t>(k)];
  const int64_t n = indices.num_elements(), rows = p[static_cast<size_t>(axis)];
  const Tensor updates = transpose(reshape(g, Shape{pre, n, post}), {1, 0, 2});
  const Tensor into = zeros_as(g, Shape{rows, pre, post});
  const Tensor summed = tensor_scatter_add(into, reshape(indices, Shape{n, 1}), updates);
  return {reshape(transpose(summed, {1, 0, 2}), p), Tensor()};
}
G bias_add_grad(const GradContext& c) {
  const Tensor& g = g0(c);
  const int channel = c.attrs.get_string(attr::kDataFormat) == "NCHW" ? 1 : g.rank() - 1;
  std::vector<int> axes;
  for (int k = 0; k < g.rank(); ++k) {
    if (k != channel) axes.push_back(k);
  }
  return {g, sum(g, axes, false)};
}
// SoftmaxCrossEntropyWithLogits: from the loss, g · (softmax · Σ labels −
// labels) for the features, which is g · backprop (the op's second output)
// plus a term that vanishes when each row of labels sums to 1 (TensorFlow
// uses backprop alone, exact only then), and −g · log_softmax(features) for
// the labels; from the backprop output (softmax(features) − labels),
// softmax's Jacobian and −1.
G xent_grad(const GradContext& c) {
  const Tensor &f = c.inputs[0], &l = c.inputs[1], &bp = c.outputs[1];
  const Tensor g_loss = reshape(c.grads[0], Shape{c.grads[0].num_elements(), 1});
  const Tensor s = add(bp, l);  // softmax(features), broadcast like backprop
  const Tensor label_mass = sub(sum(l, {1}, true), sc(l, 1.0));
  Tensor df = mul(g_loss, add(bp, mul(s, label_mass)));
  Tensor dl = neg(mul(g_loss, log_softmax(f)));
  const Tensor& g_bp = c.grads[1];
  if (g_bp.defined()) {
    df = add(df, mul(s, sub(g_bp, sum(mul(g_bp, s), {1}, true))));
    dl = sub(dl, g_bp);
  }
  return {reduce_to_shape(df, f.shape()), reduce_to_shape(dl, l.shape())};
}
G layer_norm_grad(const GradContext& c) {
  const Tensor &x = c.inputs[0], &gamma = c.inputs[1], &g = g0(c);
  const int a = static_cast<int>(c.attrs.get_int(attr::kBeginNormAxis));
  std::vector<int> norm, batch;
  for (int k = 0; k < x.rank(); ++k) (k < a ? batch : norm).push_back(k);
  const Tensor xc = sub(x, mean(x, norm, true));
  const Tensor rstd = rsqrt(add(mean(square(xc), norm, true), sc(x, c.attrs.get_float(attr::kEpsilon))));
  const Tensor xhat = mul(xc, rstd);
  const Tensor gx = mul(g, gamma);
  const Tensor dx =
      mul(rstd, sub(sub(gx, mean(gx, norm, true)), mul(xhat, mean(mul(gx, xhat), norm, true))));
  return {dx, sum_over(mul(g, xhat), batch, false), sum_over(g, batch, false)};
}
G slice_grad(const GradContext& c) {
  const std::vector<int64_t> begin = c.attrs.get_ints(attr::kBegin);
  const Shape &x = x0(c).shape(), &y = y0(c).shape();
  std::vector<std::array<int64_t, 2>> paddings;
  for (int k = 0; k < x.rank(); ++k) {
    const size_t i = static_cast<size_t>(k);
    paddings.push_back({begin[i], x[i] - begin[i] - y[i]});
  }
  return {pad(g0(c), paddings)};
}
}  // namespace

// Element j of x gets out's gradient at the i with source[i] == j, else 0.
Tensor selection_grad(const Tensor& g, const std::vector<int64_t>& source, const Shape& x_shape) {
  const int64_t n = static_cast<int64_t>(source.size());
  std::vector<int64_t> inverse(static_cast<size_t>(x_shape.num_elements()), n);
  for (int64_t i = 0; i < n; ++i) inverse[static_cast<size_t>(source[static_cast<size_t>(i)])] = i;
  DeviceScope scope(g.device());
  const Tensor padded = concat({reshape(g, Shape{n}), zeros(Shape{1}, g.dtype())}, 0);
  const Tensor index = constant(inverse, Shape{static_cast<int64_t>(inverse.size())});
  return reshape(gather(padded, index, 0), x_shape);
}

namespace {

// StridedSlice: which element of x each output element is, found by running
// the same StridedSlice over x's flat indices.
G strided_slice_grad(const GradContext& c) {
  const Tensor& x = x0(c);
  const int64_t n = x.num_elements();
  Tensor flat;
  {
    DeviceScope scope(x.device());
    flat = reshape(range(0, static_cast<double>(n), 1, DType::kInt64), x.shape());
  }
  const Tensor* const inputs[1] = {&flat};
  std::span<const xdev_attr_t> raw = c.attrs.raw();
  const std::vector<int64_t> source = rerun(OpId::kStridedSlice, inputs, raw).to_vector<int64_t>();
  return {selection_grad(g0(c), source, x.shape())};
}
G broadcast_to_grad(const GradContext& c) { return {reduce_to_shape(g0(c), x0(c).shape())}; }
G conv2d_grad(const GradContext& c) {
  const Tensor &x = c.inputs[0], &w = c.inputs[1], &g = g0(c);
  const Window win = window(c, false);
  return {conv2d_backprop_input(x.shape().to_vector(), w, g, win.strides, win.padding, win.format,
                                win.dilations),
          conv2d_backprop_filter(x, w.shape().to_vector(), g, win.strides, win.padding, win.format,
                                 win.dilations)};
}
// Conv2DBackpropInput(filter, dy) is linear in both: the gradients are
// Conv2DBackpropFilter and Conv2D with its output's gradient as the image.
G conv2d_backprop_input_grad(const GradContext& c) {
  const Tensor &w = c.inputs[0], &dy = c.inputs[1], &g = g0(c);
  const Window win = window(c, false);
  return {conv2d_backprop_filter(g, w.shape().to_vector(), dy, win.strides, win.padding,
                                 win.format, win.dilations),
          conv2d(g, w, win.strides, win.padding, win.format, win.dilations)};
}
G conv2d_backprop_filter_grad(const GradContext& c) {
  const Tensor &x = c.inputs[0], &dy = c.inputs[1], &g = g0(c);
  const Window win = window(c, false);
  return {conv2d_backprop_input(x.shape().to_vector(), g, dy, win.strides, win.padding,
                                win.format, win.dilations),
          conv2d(x, g, win.strides, win.padding, win.format, win.dilations)};
}
G max_pool_grad_fn(const GradContext& c) {
  const Window win = window(c, true);
  return {max_pool_grad(x0(c), y0(c), g0(c), win.ksize, win.strides, win.padding, win.format)};
}
G avg_pool_grad_fn(const GradContext& c) {
  const Window win = window(c, true);
  return {avg_pool_grad(x0(c).shape().to_vector(), g0(c), win.ksize, win.strides, win.padding,
                        win.format)};
}
// AvgPoolGrad is linear in its gradient input: its own gradient is AvgPool.
G avg_pool_grad_grad(const GradContext& c) {
  const Window win = window(c, true);
  return {avg_pool(g0(c), win.ksize, win.strides, win.padding, win.format)};
}

// BatchMatMulV2: MatMul's gradients with the adjoints for transposes,
// summed over the batch axes each input broadcast along.
G batch_matmul_grad(const GradContext& c) {
  const Tensor &x = c.inputs[0], &y = c.inputs[1];
  const G d = product_grads(c, batch_matmul, x, y, g0(c), c.attrs.get_bool(attr::kAdjX),
                            c.attrs.get_bool(attr::kAdjY));
  return {d[0].defined() ? reduce_to_shape(d[0], x.shape()) : Tensor(),
          d[1].defined() ? reduce_to_shape(d[1], y.shape()) : Tensor()};
}
// TensorScatterAdd: the tensor's gradient is the upstream; each update's is
// the upstream's slice at its index row, a gather from the upstream as
// [slices, slice elements] at the rows' linear (row-major) indices.
G tensor_scatter_add_grad(const GradContext& c) {
  const Tensor &indices = c.inputs[1], &updates = c.inputs[2], &g = g0(c);
  const Shape& t = g.shape();
  const int64_t depth = indices.shape()[static_cast<size_t>(indices.rank() - 1)];
  if (depth == 0) return {g, Tensor(), broadcast_to_copy(g, updates.shape())};
  const int64_t rows = indices.num_elements() / depth;
  const Tensor idx = reshape(cast(indices, DType::kInt64), Shape{rows, depth});
  Tensor linear;
  int64_t slices = 1;
  for (int64_t d = 0; d < depth; ++d) {
    const int64_t extent = t[static_cast<size_t>(d)];
    const Tensor column = reshape(slice(idx, {0, d}, {rows, 1}), Shape{rows});
    linear = d == 0 ? column : add(mul(linear, scalar_like(linear, extent)), column);
    slices *= extent;
  }
  const int64_t slice_elements = slices == 0 ? 0 : t.num_elements() / slices;
  const Tensor picked = gather(reshape(g, Shape{slices, slice_elements}), linear, 0);
  return {g, Tensor(), reshape(picked, updates.shape())};
}

// --- the table ---------------------------------------------------------------

constexpr const char* kBoolResult = "its result is bool (a comparison, a test or logic)";
constexpr const char* kIndexResult = "its result is an index (int64)";
constexpr const char* kNoInputs = "it makes its values from its attributes (it has no inputs)";

constexpr GradientDef fn(OpId op, GradientFn f, uint32_t no_gradient_inputs = 0) {
  return GradientDef{op, f, nullptr, no_gradient_inputs};
}
constexpr GradientDef none(OpId op, const char* why) { return GradientDef{op, nullptr, why, 0}; }

const GradientDef kGradients[] = {
    fn(OpId::kMatMul, matmul_grad),
    fn(OpId::kAdd, add_grad),
    fn(OpId::kSub, sub_grad),
    fn(OpId::kMul, mul_grad),
    fn(OpId::kDiv, div_grad),
    fn(OpId::kNeg, neg_grad),
    fn(OpId::kRelu, relu_grad),
    fn(OpId::kAddN, add_n_grad),
    fn(OpId::kCast, cast_grad),
    fn(OpId::kSum, sum_grad),
    fn(OpId::kMean, mean_grad),
    fn(OpId::kCopy, pass_grad),
    none(OpId::kFill, kNoInputs),
    none(OpId::kRandomUniform, kNoInputs),
    fn(OpId::kAbs, unary_grad<d_abs>),
    // Piecewise constant: 0 wherever the derivative exists (tf: zeros).
    fn(OpId::kSign, zero_grad),
    fn(OpId::kSquare, unary_grad<d_square>),
    fn(OpId::kExp, unary_grad<d_exp>),
    fn(OpId::kExpm1, unary_grad<d_expm1>),
    fn(OpId::kLog, unary_grad<d_log>),
    fn(OpId::kLog1p, unary_grad<d_log1p>),
    fn(OpId::kSqrt, unary_grad<d_sqrt>),
    fn(OpId::kRsqrt, unary_grad<d_rsqrt>),
    fn(OpId::kReciprocal, unary_grad<d_reciprocal>),
    fn(OpId::kSin, unary_grad<d_sin>),
    fn(OpId::kCos, unary_grad<d_cos>),
    fn(OpId::kTanh, unary_grad<d_tanh>),
    fn(OpId::kSigmoid, unary_grad<d_sigmoid>),
    fn(OpId::kErf, unary_grad<d_erf>),
    fn(OpId::kSoftplus, unary_grad<d_softplus>),
    fn(OpId::kFloor, zero_grad),
    fn(OpId::kCeil, zero_grad),
    fn(OpId::kRound, zero_grad),
    fn(OpId::kLeakyRelu, leaky_relu_grad),
    fn(OpId::kGelu, gelu_grad),
    fn(OpId::kPow, pow_grad),
    fn(OpId::kMaximum, maximum_grad),
    fn(OpId::kMinimum, minimum_grad),
    none(OpId::kFloorDiv, "its result is a whole number of divisors, a step function "
                          "(TensorFlow defines no gradient either)"),
    fn(OpId::kFloorMod, floor_mod_grad),
    fn(OpId::kSquaredDifference, squared_difference_grad),
    none(OpId::kEqual, kBoolResult),
    none(OpId::kNotEqual, kBoolResult),
    none(OpId::kLess, kBoolResult),
    none(OpId::kLessEqual, kBoolResult),
    none(OpId::kGreater, kBoolResult),
    none(OpId::kGreaterEqual, kBoolResult),
    none(OpId::kLogicalAnd, kBoolResult),
    none(OpId::kLogicalOr, kBoolResult),
    none(OpId::kLogicalNot, kBoolResult),
    none(OpId::kIsNan, kBoolResult),
    none(OpId::kIsFinite, kBoolResult),
    fn(OpId::kSelect, select_grad, 1u << 0),  // the condition
    fn(OpId::kClipByValue, clip_grad),
    fn(OpId::kMax, extreme_grad),
    fn(OpId::kMin, extreme_grad),
    fn(OpId::kProd, prod_grad),
    none(OpId::kAny, kBoolResult),
    none(OpId::kAll, kBoolResult),
    fn(OpId::kLogSumExp, logsumexp_grad),
    none(OpId::kArgMax, kIndexResult),
    none(OpId::kArgMin, kIndexResult),
    fn(OpId::kCumSum, cumsum_grad),
    fn(OpId::kSoftmax, softmax_grad),
    fn(OpId::kLogSoftmax, log_softmax_grad),
    fn(OpId::kConcatV2, concat_grad),
    fn(OpId::kPack, pack_grad),
    fn(OpId::kIdentity, pass_grad),
    fn(OpId::kTile, tile_grad),
    fn(OpId::kPadV2, pad_grad),
    fn(OpId::kGatherV2, gather_grad, 1u << 1),  // the indices
    fn(OpId::kBiasAdd, bias_add_grad),
    fn(OpId::kSoftmaxCrossEntropyWithLogits, xent_grad),
    fn(OpId::kLayerNorm, layer_norm_grad),
    fn(OpId::kSlice, slice_grad),
    fn(OpId::kStridedSlice, strided_slice_grad),
    none(OpId::kRange, kNoInputs),
    none(OpId::kOneHot, "its input is integer indices; its result does not vary with them "
                        "continuously"),
    fn(OpId::kBroadcastTo, broadcast_to_grad),
    fn(OpId::kConv2D, conv2d_grad),
    fn(OpId::kConv2DBackpropInput, conv2d_backprop_input_grad),
    fn(OpId::kConv2DBackpropFilter, conv2d_backprop_filter_grad),
    fn(OpId::kMaxPool, max_pool_grad_fn),
    fn(OpId::kAvgPool, avg_pool_grad_fn),
    none(OpId::kMaxPoolGrad, "its gradient would be MaxPoolGradGrad, which the op table does not "
                             "define (no second derivative of MaxPool)"),
    fn(OpId::kAvgPoolGrad, avg_pool_grad_grad),
    fn(OpId::kBatchMatMulV2, batch_matmul_grad),
    fn(OpId::kTensorScatterAdd, tensor_scatter_add_grad, 1u << 1),  // the indices
};

// The entries by OpId; an op without one has op == kCount.
struct ByOp {
  std::array<const GradientDef*, kOpCount> entries{};
  ByOp() {
    for (const GradientDef& d : kGradients) {
      const auto i = static_cast<size_t>(d.op);
      if (entries[i] != nullptr) {
        throw Error(ErrorCode::kInternal,
                    "gradient table: two entries for " + std::string(op_name(d.op)));
      }
      entries[i] = &d;
    }
  }
};

const ByOp& by_op() {
  static const ByOp table;
  return table;
}

}  // namespace

bool has_gradient_def(OpId op) noexcept {
  return static_cast<size_t>(op) < static_cast<size_t>(kOpCount) &&
         by_op().entries[static_cast<size_t>(op)] != nullptr;
}

const GradientDef& gradient_def(OpId op) {
  if (!has_gradient_def(op)) {
    throw Error(ErrorCode::kInternal, "op " + std::string(op_name(op)) +
                                          " has no entry in the gradient table "
                                          "(core/autodiff/gradients.cpp)");
  }
  return *by_op().entries[static_cast<size_t>(op)];
}

Tensor reduce_to_shape(const Tensor& grad, const Shape& shape) {
  const Shape& g = grad.shape();
  if (g == shape) return grad;
  const int extra = g.rank() - shape.rank();
  std::vector<int> axes;
  for (int k = 0; k < g.rank(); ++k) {
    if (k < extra || (shape[static_cast<size_t>(k - extra)] == 1 && g[static_cast<size_t>(k)] != 1)) {
      axes.push_back(k);
    }
  }
  const Tensor summed = axes.empty() ? grad : sum(grad, axes, true);
  return reshape(summed, shape);
}

}  // namespace xdev::detail
