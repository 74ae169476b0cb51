// The gradient of every differentiable op (core/autodiff/
// gradients.cpp) against central finite differences, in float64; and the
// gradient table covers the op table (every op of XDEV_OPS has an entry, and
// every op with a gradient function has a case here).
//
// Built twice (tests/core/meson.build): on the cpu plugin, and with the sim
// first (`gradcheck_on_sim`), where the linked environment fails the run if
// any op, forward or backward, fell back to the CPU.
//
// Tolerance: the target is Σ w·f(x) with fixed weights w in [0.5, 1.5); the
// numerical derivative is (T(x + h) − T(x − h)) / 2h with h = 1e-6. Its
// truncation error is h²/6·|T'''| ≈ 1e-13 for the O(1..10) third derivatives
// of these cases, its rounding error about ε·|T|/h ≈ 2.2e-16·10/1e-6 ≈ 2e-9.
// A gradient agrees when |analytic − numerical| ≤ 1e-6·(1 + |numerical|):
// 500 times the worst expected error, while a wrong formula (a missing
// factor, a wrong sign, a gradient reduced to the wrong shape) is off by
// O(0.1) or more. Inputs stay away from kinks (Abs, Relu, Max, MaxPool,
// Floor, ...) by more than h.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include <xdev/xdev.hpp>

#include "autodiff/gradients.hpp"
#include "opdefs/op_table.hpp"
#include "ops/run_op.hpp"

namespace {

using xdev::DType;
using xdev::Shape;
using xdev::Tensor;

constexpr double kStep = 1e-6;
constexpr double kTolerance = 1e-6;

struct Input {
  Shape shape;
  std::vector<double> values;  // row-major
  DType dtype = DType::kFloat64;
  bool differentiable = true;
};

struct Case {
  std::string op;       // the op whose gradient it checks ("view:..." for views)
  std::string variant;  // what distinguishes it from the op's other cases
  std::vector<Input> inputs;
  std::function<std::vector<Tensor>(const std::vector<Tensor>&)> f;
};

std::mt19937_64& rng() {
  static std::mt19937_64 r(19);
  return r;
}

// Values uniform in [lo, hi); with `signed_` a random sign too (|x| >= lo).
Input uniform(Shape shape, double lo = -1.0, double hi = 1.0, bool signed_ = false) {
  std::uniform_real_distribution<double> u(lo, hi);
  std::bernoulli_distribution coin(0.5);
  Input in{shape, {}};
  for (int64_t i = 0; i < shape.num_elements(); ++i) {
    const double v = u(rng());
    in.values.push_back(signed_ && coin(rng()) ? -v : v);
  }
  return in;
}
Input away_from_zero(Shape shape) { return uniform(shape, 0.2, 1.5, true); }
Input positive(Shape shape) { return uniform(shape, 0.5, 2.0); }
Input given(Shape shape, std::vector<double> values, DType dtype = DType::kFloat64,
            bool differentiable = true) {
  return Input{shape, std::move(values), dtype, differentiable};
}
Input indices(Shape shape, std::vector<double> values) {
  return given(shape, std::move(values), DType::kInt32, false);
}
Input condition(Shape shape, std::vector<double> values) {
  return given(shape, std::move(values), DType::kBool, false);
}

Tensor make(const Input& in, const std::vector<double>& values) {
  const Tensor t = xdev::constant(values.data(), DType::kFloat64, in.shape);
  return in.dtype == DType::kFloat64 ? t : xdev::cast(t, in.dtype);
}

// A one-output op by name, run through the op table with `attrs` (for ops the
// SDK reaches only as views: Slice).
Tensor run_named(xdev::detail::OpId op, const std::vector<Tensor>& inputs,
                 const xdev::detail::Attrs& attrs) {
  std::vector<const Tensor*> ptrs;
  for (const Tensor& t : inputs) ptrs.push_back(&t);
  return xdev::detail::run_defined_op(op, ptrs, attrs);
}

using V = std::vector<Tensor>;
#define F(expr) [](const V& x) -> V { return {expr}; }

std::vector<Case> cases() {
  namespace attr = xdev::detail::attr;
  std::vector<Case> c;
  const Shape s23{2, 3};
  // Binary ops, with broadcasting of both kinds.
  c.push_back({"MatMul", "nn", {uniform({2, 3}), uniform({3, 4})}, F(xdev::matmul(x[0], x[1]))});
  c.push_back({"MatMul", "tn", {uniform({3, 2}), uniform({3, 4})}, F(xdev::matmul(x[0], x[1], true))});
  c.push_back({"MatMul", "nt", {uniform({2, 3}), uniform({4, 3})}, F(xdev::matmul(x[0], x[1], false, true))});
  c.push_back({"MatMul", "tt", {uniform({3, 2}), uniform({4, 3})}, F(xdev::matmul(x[0], x[1], true, true))});
  c.push_back({"Add", "broadcast", {uniform({2, 1, 3}), uniform({4, 1})}, F(x[0] + x[1])});
  c.push_back({"Sub", "broadcast", {uniform({3}), uniform({2, 3})}, F(x[0] - x[1])});
  c.push_back({"Mul", "broadcast", {uniform({2, 3}), uniform({1, 3})}, F(x[0] * x[1])});
  c.push_back({"Div", "broadcast", {uniform(s23), away_from_zero({2, 1})}, F(x[0] / x[1])});
  c.push_back({"Neg", "", {uniform(s23)}, F(-x[0])});
  c.push_back({"Relu", "", {away_from_zero(s23)}, F(xdev::relu(x[0]))});
  c.push_back({"AddN", "", {uniform(s23), uniform(s23), uniform(s23)}, F(xdev::add_n({x[0], x[1], x[2]}))});
  c.push_back({"Cast", "float64", {uniform(s23)}, F(xdev::cast(x[0], DType::kFloat64))});
  c.push_back({"Sum", "axis1", {uniform({2, 3, 2})}, F(xdev::sum(x[0], {1}))});
  c.push_back({"Sum", "all keepdims", {uniform(s23)}, F(xdev::sum(x[0], {}, true))});
  c.push_back({"Mean", "axes 0 2", {uniform({2, 3, 2})}, F(xdev::mean(x[0], {0, 2}))});
  c.push_back({"Copy", "transpose", {uniform({2, 3, 2})}, F(xdev::transpose(x[0], {2, 0, 1}))});
  c.push_back({"Abs", "", {away_from_zero(s23)}, F(xdev::abs(x[0]))});
  c.push_back({"Sign", "", {away_from_zero(s23)}, F(xdev::sign(x[0]))});
  c.push_back({"Square", "", {uniform(s23)}, F(xdev::square(x[0]))});
  c.push_back({"Exp", "", {uniform(s23)}, F(xdev::exp(x[0]))});
  c.push_back({"Expm1", "", {uniform(s23)}, F(xdev::expm1(x[0]))});
  c.push_back({"Log", "", {positive(s23)}, F(xdev::log(x[0]))});
  c.push_back({"Log1p", "", {positive(s23)}, F(xdev::log1p(x[0]))});
  c.push_back({"Sqrt", "", {positive(s23)}, F(xdev::sqrt(x[0]))});
  c.push_back({"Rsqrt", "", {positive(s23)}, F(xdev::rsqrt(x[0]))});
  c.push_back({"Reciprocal", "", {away_from_zero(s23)}, F(xdev::reciprocal(x[0]))});
  c.push_back({"Sin", "", {uniform(s23, -3, 3)}, F(xdev::sin(x[0]))});
  c.push_back({"Cos", "", {uniform(s23, -3, 3)}, F(xdev::cos(x[0]))});
  c.push_back({"Tanh", "", {uniform(s23, -2, 2)}, F(xdev::tanh(x[0]))});
  c.push_back({"Sigmoid", "", {uniform(s23, -3, 3)}, F(xdev::sigmoid(x[0]))});
  c.push_back({"Erf", "", {uniform(s23, -2, 2)}, F(xdev::erf(x[0]))});
  c.push_back({"Softplus", "", {uniform(s23, -3, 3)}, F(xdev::softplus(x[0]))});
  // Piecewise constant: zero, away from the steps.
  const std::vector<double> off_steps{-1.7, -0.3, 0.2, 0.7, 1.3, 2.8};
  c.push_back({"Floor", "", {given(s23, off_steps)}, F(xdev::floor(x[0]))});
  c.push_back({"Ceil", "", {given(s23, off_steps)}, F(xdev::ceil(x[0]))});
  c.push_back({"Round", "", {given(s23, off_steps)}, F(xdev::round(x[0]))});
  c.push_back({"LeakyRelu", "", {away_from_zero(s23)}, F(xdev::leaky_relu(x[0], 0.3))});
  c.push_back({"Gelu", "erf", {uniform(s23, -2, 2)}, F(xdev::gelu(x[0]))});
  c.push_back({"Gelu", "tanh", {uniform(s23, -2, 2)}, F(xdev::gelu(x[0], true))});
  c.push_back({"Pow", "broadcast", {positive(s23), uniform({3}, -2, 2)}, F(xdev::pow(x[0], x[1]))});
  c.push_back({"Maximum", "broadcast", {uniform(s23), uniform({3})}, F(xdev::maximum(x[0], x[1]))});
  c.push_back({"Minimum", "broadcast", {uniform(s23), uniform({2, 1})}, F(xdev::minimum(x[0], x[1]))});
  c.push_back({"FloorMod", "", {given(s23, {5.3, -5.3, 2.2, 7.9, -0.4, 3.3}), given(s23, {2.0, 2.0, -1.5, 3.0, 1.1, -2.5})},
               F(xdev::floor_mod(x[0], x[1]))});
  c.push_back({"SquaredDifference", "broadcast", {uniform(s23), uniform({3})}, F(xdev::squared_difference(x[0], x[1]))});
  c.push_back({"Select", "broadcast", {condition({3}, {1, 0, 1}), uniform(s23), uniform({2, 1})},
               F(xdev::select(x[0], x[1], x[2]))});
  c.push_back({"ClipByValue", "", {given(s23, {-2.0, -0.5, 0.1, 0.4, 1.5, 0.9}), given({}, {-1.0}), given({3}, {0.5, 0.2, 1.0})},
               F(xdev::clip_by_value(x[0], x[1], x[2]))});
  c.push_back({"Max", "axis1", {uniform({2, 3, 2})}, F(xdev::max(x[0], {1}))});
  c.push_back({"Max", "ties", {given(s23, {1.0, 3.0, 3.0, 2.0, 2.0, 0.5})}, F(xdev::max(x[0], {1}))});
  c.push_back({"Min", "keepdims", {uniform({2, 3, 2})}, F(xdev::min(x[0], {0, 2}, true))});
  c.push_back({"Prod", "no zero", {uniform({2, 3, 2})}, F(xdev::prod(x[0], {1}))});
  c.push_back({"Prod", "zeros", {given({3, 3}, {0.0, 2.0, 3.0, 0.0, 0.0, 1.5, 0.7, -1.2, 2.0})}, F(xdev::prod(x[0], {1}))});
  c.push_back({"LogSumExp", "", {uniform({2, 3, 2}, -3, 3)}, F(xdev::logsumexp(x[0], {1, 2}))});
  c.push_back({"CumSum", "", {uniform({2, 4})}, F(xdev::cumsum(x[0], 1))});
  c.push_back({"CumSum", "exclusive reverse", {uniform({3, 2})}, F(xdev::cumsum(x[0], 0, true, true))});
  c.push_back({"Softmax", "axis0", {uniform({3, 2}, -2, 2)}, F(xdev::softmax(x[0], 0))});
  c.push_back({"LogSoftmax", "", {uniform({2, 4}, -2, 2)}, F(xdev::log_softmax(x[0]))});
  c.push_back({"ConcatV2", "axis1", {uniform({2, 1}), uniform({2, 3})}, F(xdev::concat({x[0], x[1]}, 1))});
  c.push_back({"Pack", "axis1", {uniform(s23), uniform(s23)}, F(xdev::stack({x[0], x[1]}, 1))});
  c.push_back({"Identity", "", {uniform(s23)}, F(xdev::identity(x[0]))});
  c.push_back({"Tile", "", {uniform({2, 1, 3})}, F(xdev::tile(x[0], {2, 3, 1}))});
  c.push_back({"PadV2", "", {uniform(s23)}, F(xdev::pad(x[0], {{1, 0}, {2, 1}}, 0.5))});
  c.push_back({"GatherV2", "axis0 last", {uniform({3, 2}), indices({2, 2}, {2, 0, 2, 1})},
               F(xdev::gather(x[0], x[1], 0))});
  c.push_back({"GatherV2", "axis1 repeated", {uniform({2, 4, 2}), indices({2, 2}, {3, 0, 3, 1})},
               F(xdev::gather(x[0], x[1], 1))});
  c.push_back({"BiasAdd", "NHWC", {uniform({2, 2, 3}), uniform({3})}, F(xdev::bias_add(x[0], x[1]))});
  c.push_back({"BiasAdd", "NCHW", {uniform({2, 3, 2}), uniform({3})}, F(xdev::bias_add(x[0], x[1], "NCHW"))});
  c.push_back({"SoftmaxCrossEntropyWithLogits", "both outputs",
               {uniform({2, 3}, -2, 2), uniform({2, 3}, 0, 1)}, [](const V& x) -> V {
                 auto r = xdev::softmax_cross_entropy_with_logits(x[0], x[1]);
                 return {r.loss, r.backprop};
               }});
  c.push_back({"SoftmaxCrossEntropyWithLogits", "broadcast labels",
               {uniform({3, 4}, -2, 2), uniform({1, 4}, 0, 1)}, [](const V& x) -> V {
                 return {xdev::softmax_cross_entropy_with_logits(x[0], x[1]).loss};
               }});
  c.push_back({"LayerNorm", "axis1", {uniform({2, 3, 2}), uniform({3, 2}), uniform({3, 2})},
               F(xdev::layer_norm(x[0], x[1], x[2], 1, 1e-3))});
  c.push_back({"Slice", "op", {uniform({3, 4})}, [](const V& x) -> V {
                 const std::vector<int64_t> begin{1, 1}, size{2, 2};
                 xdev::detail::Attrs a;
                 a.add_ints(attr::kBegin, begin.data(), 2).add_ints(attr::kSize, size.data(), 2);
                 return {run_named(xdev::detail::OpId::kSlice, x, a)};
               }});
  c.push_back({"StridedSlice", "reversed", {uniform({3, 4})},
               F(xdev::strided_slice(x[0], {2, 0}, {0, 4}, {-1, 2}))});
  c.push_back({"BroadcastTo", "", {uniform({3, 1})}, F(xdev::broadcast_to_copy(x[0], {2, 3, 4}))});
  c.push_back({"Conv2D", "SAME stride 2", {uniform({1, 5, 5, 2}), uniform({3, 3, 2, 2})},
               F(xdev::conv2d(x[0], x[1], {2, 2}, "SAME"))});
  c.push_back({"Conv2D", "VALID dilated NCHW", {uniform({1, 2, 5, 5}), uniform({2, 2, 2, 1})},
               F(xdev::conv2d(x[0], x[1], {1, 1}, "VALID", "NCHW", {2, 2}))});
  c.push_back({"Conv2DBackpropInput", "", {uniform({3, 3, 2, 2}), uniform({1, 3, 3, 2})},
               F(xdev::conv2d_backprop_input({1, 5, 5, 2}, x[0], x[1], {2, 2}, "SAME"))});
  c.push_back({"Conv2DBackpropFilter", "", {uniform({1, 5, 5, 2}), uniform({1, 3, 3, 2})},
               F(xdev::conv2d_backprop_filter(x[0], {3, 3, 2, 2}, x[1], {2, 2}, "SAME"))});
  c.push_back({"MaxPool", "SAME", {uniform({1, 4, 5, 2})}, F(xdev::max_pool(x[0], {2, 2}, {2, 2}, "SAME"))});
  c.push_back({"AvgPool", "VALID", {uniform({1, 4, 5, 2})}, F(xdev::avg_pool(x[0], {2, 3}, {1, 2}, "VALID"))});
  c.push_back({"AvgPoolGrad", "", {uniform({1, 2, 2, 2})},
               F(xdev::avg_pool_grad({1, 4, 4, 2}, x[0], {2, 2}, {2, 2}, "VALID"))});
  // Views made without an op, and copies.
  c.push_back({"view:reshape", "", {uniform({2, 3, 2})}, F(xdev::reshape(x[0], {3, 4}))});
  c.push_back({"view:slice", "", {uniform({3, 4})}, F(xdev::slice(x[0], {1, 1}, {2, 3}))});
  c.push_back({"view:strided_slice", "step 2", {uniform({3, 5})},
               F(xdev::strided_slice(x[0], {0, 1}, {3, 5}, {2, 2}))});
  c.push_back({"view:expand_squeeze", "", {uniform({2, 3})},
               F(xdev::squeeze(xdev::expand_dims(x[0], 1)) * xdev::expand_dims(x[0], 0))});
  c.push_back({"view:broadcast_to", "", {uniform({3, 1})}, F(xdev::broadcast_to(x[0], {2, 3, 4}) * 1.0)});
  c.push_back({"view:of a view", "", {uniform({4, 4})},
               F(xdev::slice(xdev::transpose(x[0]), {1, 0}, {2, 3}) * 1.0)});
  c.push_back({"BatchMatMulV2", "broadcast batch", {uniform({2, 1, 2, 3}), uniform({3, 3, 4})},
               F(xdev::batch_matmul(x[0], x[1]))});
  c.push_back({"BatchMatMulV2", "adj_y", {uniform({2, 2, 3}), uniform({2, 4, 3})},
               F(xdev::batch_matmul(x[0], x[1], false, true))});
  c.push_back({"BatchMatMulV2", "adj_x rank-2 y", {uniform({2, 3, 2}), uniform({3, 4})},
               F(xdev::batch_matmul(x[0], x[1], true, false))});
  c.push_back({"BatchMatMulV2", "adj_x adj_y size-1 batch", {uniform({2, 3, 2}), uniform({1, 4, 3})},
               F(xdev::batch_matmul(x[0], x[1], true, true))});
  c.push_back({"TensorScatterAdd", "depth1 repeated",
               {uniform({4, 2}), indices({3, 1}, {1, 3, 1}), uniform({3, 2})},
               F(xdev::tensor_scatter_add(x[0], x[1], x[2]))});
  c.push_back({"TensorScatterAdd", "depth2",
               {uniform({3, 2, 2}), indices({2, 2}, {2, 1, 0, 0}), uniform({2, 2})},
               F(xdev::tensor_scatter_add(x[0], x[1], x[2]))});
  c.push_back({"TensorScatterAdd", "batched indices",
               {uniform({3, 2}), indices({2, 2, 2}, {2, 1, 0, 0, 2, 1, 1, 0}), uniform({2, 2})},
               F(xdev::tensor_scatter_add(x[0], x[1], x[2]))});
  c.push_back({"copy", "", {uniform(s23)}, F(x[0].copy_to(x[0].device()) * 2.0)});
  c.push_back({"Dropout", "composite", {uniform(s23)}, F(xdev::dropout(x[0], 0.5, 7))});
  return c;
}
#undef F

// Fixed weights per output: T = Σ_o Σ w_o · y_o.
double target_value(const std::vector<Tensor>& outs, const std::vector<std::vector<double>>& w) {
  double total = 0;
  for (size_t o = 0; o < outs.size(); ++o) {
    const std::vector<double> v = xdev::cast(outs[o], DType::kFloat64).to_vector<double>();
    for (size_t i = 0; i < v.size(); ++i) total += w[o][i] * v[i];
  }
  return total;
}

const std::vector<Case>& all_cases() {
  static const std::vector<Case> c = cases();
  return c;
}

class Gradcheck : public ::testing::TestWithParam<size_t> {};

TEST_P(Gradcheck, MatchesCentralDifferences) {
  const Case& k = all_cases()[GetParam()];
  std::vector<Tensor> inputs;
  for (const Input& in : k.inputs) inputs.push_back(make(in, in.values));
  // Weights for each output.
  std::vector<std::vector<double>> w;
  std::vector<Tensor> w_tensors;
  {
    const std::vector<Tensor> outs = k.f(inputs);
    std::uniform_real_distribution<double> u(0.5, 1.5);
    for (const Tensor& o : outs) {
      std::vector<double> v;
      for (int64_t i = 0; i < o.num_elements(); ++i) v.push_back(u(rng()));
      w_tensors.push_back(xdev::constant(v.data(), DType::kFloat64, o.shape()));
      w.push_back(std::move(v));
    }
  }
  // Analytic.
  std::vector<Tensor> sources;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (k.inputs[i].differentiable) sources.push_back(inputs[i]);
  }
  std::vector<Tensor> grads;
  {
    xdev::GradientTape tape;
    for (const Tensor& s : sources) tape.watch(s);
    const std::vector<Tensor> outs = k.f(inputs);
    Tensor target;
    for (size_t o = 0; o < outs.size(); ++o) {
      const Tensor term = xdev::sum(outs[o] * w_tensors[o]);
      target = target.defined() ? target + term : term;
    }
    grads = tape.gradient(target, sources);
  }
  // Numerical, one element at a time.
  size_t s = 0;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!k.inputs[i].differentiable) continue;
    ASSERT_TRUE(grads[s].defined()) << "input " << i << " got no gradient";
    ASSERT_EQ(grads[s].shape(), k.inputs[i].shape) << "input " << i;
    const std::vector<double> analytic = grads[s].to_vector<double>();
    for (size_t e = 0; e < k.inputs[i].values.size(); ++e) {
      auto at = [&](double delta) {
        std::vector<Tensor> moved = inputs;
        std::vector<double> v = k.inputs[i].values;
        v[e] += delta;
        moved[i] = make(k.inputs[i], v);
        return target_value(k.f(moved), w);
      };
      const double numerical = (at(kStep) - at(-kStep)) / (2 * kStep);
      EXPECT_NEAR(analytic[e], numerical, kTolerance * (1 + std::abs(numerical)))
          << "input " << i << ", element " << e;
    }
    ++s;
  }
}

std::string case_name(const ::testing::TestParamInfo<size_t>& info) {
  const Case& k = all_cases()[info.param];
  std::string name = k.op + (k.variant.empty() ? "" : "_" + k.variant);
  for (char& ch : name) {
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  }
  return name + "_" + std::to_string(info.param);
}

INSTANTIATE_TEST_SUITE_P(EveryDifferentiableOp, Gradcheck,
                         ::testing::Range<size_t>(0, all_cases().size()), case_name);

// The gradient table has an entry for every op of XDEV_OPS, and every op it
// calls differentiable has a case above.
TEST(GradientTable, CoversTheOpTable) {
  std::set<std::string> checked;
  for (const Case& k : all_cases()) checked.insert(k.op);
#define XDEV_CHECK_GRADIENT(name)                                                            \
  {                                                                                          \
    const auto id = xdev::detail::OpId::k##name;                                             \
    ASSERT_TRUE(xdev::detail::has_gradient_def(id))                                          \
        << #name << " has no entry in core/autodiff/gradients.cpp: give it a gradient "     \
                    "function or say why it is not differentiable";                         \
    const auto& def = xdev::detail::gradient_def(id);                                        \
    EXPECT_NE(def.fn == nullptr, def.not_differentiable == nullptr) << #name;                \
    if (def.fn != nullptr) {                                                                 \
      EXPECT_TRUE(checked.count(#name)) << #name << " has no gradcheck case";                \
    }                                                                                        \
  }
  XDEV_OPS(XDEV_CHECK_GRADIENT)
#undef XDEV_CHECK_GRADIENT
}

}  // namespace
