// GradientTape's semantics (watch, persistent, nested, stop_gradient,
// errors, threads, freeing), variables, optimizers against Keras' update
// rules computed by hand, layers, a small MLP trained to a stated accuracy
// and a 10k-step loop whose pool does not grow. Run on the cpu plugin and
// with the sim first (tests/core/meson.build: `autodiff_on_sim` fails if any
// op fell back to the CPU).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <thread>
#include <vector>

#include <xdev/xdev.hpp>

#include "error_matchers.hpp"
#include "sanitizers.hpp"

namespace {

using xdev::DType;
using xdev::GradientTape;
using xdev::Shape;
using xdev::Tensor;
using xdev::Variable;
using ::testing::HasSubstr;

std::vector<double> values(const Tensor& t) { return xdev::cast(t, DType::kFloat64).to_vector<double>(); }

// The device ops land on by default (the sim's GPU in the _on_sim run).
std::string default_device() { return xdev::constant(0.0).device().name; }

TEST(GradientTape, WatchedTensorGetsItsGradient) {
  const Tensor x = xdev::constant({1.0, 2.0, 3.0});
  GradientTape tape;
  tape.watch(x);
  const Tensor y = xdev::sum(x * x * x);
  const Tensor g = tape.gradient(y, x);
  EXPECT_EQ(values(g), (std::vector<double>{3.0, 12.0, 27.0}));
  EXPECT_EQ(g.device().name, x.device().name);
}

TEST(GradientTape, UnwatchedOrUnrelatedSourceGivesAnUndefinedTensor) {
  const Tensor x = xdev::constant({1.0, 2.0}), z = xdev::constant({5.0, 6.0});
  GradientTape tape;
  tape.watch(x);
  const Tensor y = xdev::sum(x * z);
  const std::vector<Tensor> g = tape.gradient(y, {x, z});
  EXPECT_TRUE(g[0].defined());
  EXPECT_FALSE(g[1].defined()) << "z was never watched: TensorFlow gives None";
}

TEST(GradientTape, NonPersistentTapeComputesOnceAndFreesItsRecords) {
  const Tensor x = xdev::constant({1.0, 2.0});
  GradientTape tape;
  tape.watch(x);
  const Tensor y = xdev::sum(xdev::exp(x));
  EXPECT_GT(tape.num_records(), 0u);
  tape.gradient(y, x);
  EXPECT_EQ(tape.num_records(), 0u);
  EXPECT_THAT([&] { tape.gradient(y, x); },
              xdev_test::ThrowsError(xdev::ErrorCode::kFailedPrecondition, HasSubstr("persistent")));
}

TEST(GradientTape, PersistentTapeComputesManyTimes) {
  const Tensor x = xdev::constant({1.0, 2.0});
  GradientTape tape(/*persistent=*/true);
  tape.watch(x);
  const Tensor y = x * x;
  const Tensor z = y * y;
  EXPECT_EQ(values(tape.gradient(xdev::sum(y), x)), (std::vector<double>{2.0, 4.0}));
  EXPECT_EQ(values(tape.gradient(xdev::sum(z), x)), (std::vector<double>{4.0, 32.0}));
  EXPECT_EQ(values(tape.gradient(xdev::sum(z), y)), (std::vector<double>{2.0, 8.0}));
}

TEST(GradientTape, NestedTapesGiveSecondDerivatives) {
  const Tensor x = xdev::constant({1.0, 2.0});
  GradientTape outer;
  outer.watch(x);
  Tensor dy;
  {
    GradientTape inner;
    inner.watch(x);
    const Tensor y = xdev::sum(x * x * x);
    dy = inner.gradient(y, x);  // 3x², recorded by the outer tape
  }
  EXPECT_EQ(values(dy), (std::vector<double>{3.0, 12.0}));
  EXPECT_EQ(values(outer.gradient(xdev::sum(dy), x)), (std::vector<double>{6.0, 12.0}));
}

TEST(GradientTape, OnlyTheGradientsThatLeadToASourceAreComputed) {
  // d w of x w is x^T g; d x (g w^T) is a whole product nothing asked for.
  // An outer tape watching w records every op of the inner backward pass
  // that reads w: computing d x would be one.
  const Tensor x = xdev::constant({{1.0, 2.0}, {3.0, 4.0}});
  const Tensor w = xdev::constant({{5.0}, {6.0}});
  GradientTape outer(/*persistent=*/true);
  outer.watch(w);
  GradientTape inner;
  inner.watch(w);
  const Tensor y = xdev::matmul(x, w);
  const size_t before = outer.num_records();
  const Tensor gw = inner.gradient(y, w);
  EXPECT_EQ(outer.num_records(), before) << "the backward pass computed x's gradient";
  EXPECT_EQ(values(gw), (std::vector<double>{4.0, 6.0}));
  // Both watched: both products, with the transposes' adjoints.
  for (const bool ta : {false, true}) {
    for (const bool tb : {false, true}) {
      const Tensor a = ta ? xdev::transpose(x) : x;
      const Tensor b = tb ? xdev::transpose(xdev::constant({{5.0, 7.0}, {6.0, 8.0}}))
                          : xdev::constant({{5.0, 7.0}, {6.0, 8.0}});
      GradientTape tape;
      tape.watch(a);
      tape.watch(b);
      const Tensor z = xdev::matmul(a, b, ta, tb);
      const std::vector<Tensor> g = tape.gradient(z, std::vector<Tensor>{a, b});
      // d a = 1 (b^T with b as used) and d b = (a as used)^T 1, laid out as a and b.
      EXPECT_EQ(values(g[0]), ta ? (std::vector<double>{12.0, 12.0, 14.0, 14.0})
                                 : (std::vector<double>{12.0, 14.0, 12.0, 14.0}))
          << ta << tb;
      EXPECT_EQ(values(g[1]), tb ? (std::vector<double>{4.0, 6.0, 4.0, 6.0})
                                 : (std::vector<double>{4.0, 4.0, 6.0, 6.0}))
          << ta << tb;
    }
  }
}

TEST(GradientTape, StopGradientCutsThePath) {
  const Tensor x = xdev::constant({2.0, 3.0});
  GradientTape tape;
  tape.watch(x);
  const Tensor y = xdev::sum(x * xdev::stop_gradient(x));
  EXPECT_EQ(values(tape.gradient(y, x)), (std::vector<double>{2.0, 3.0}));
}

TEST(GradientTape, StopRecordingPausesTheTape) {
  const Tensor x = xdev::constant({2.0, 3.0});
  GradientTape tape;
  tape.watch(x);
  Tensor hidden;
  {
    GradientTape::StopRecording pause(tape);
    hidden = x * x;
  }
  const Tensor y = xdev::sum(x + hidden);
  EXPECT_EQ(values(tape.gradient(y, x)), (std::vector<double>{1.0, 1.0}));
}

TEST(GradientTape, ANonDifferentiableOpOnThePathIsAnErrorNamingIt) {
  const Tensor x = xdev::constant({{1.0, 3.0}, {2.0, 0.5}});
  GradientTape tape(true);
  tape.watch(x);
  const Tensor through_argmax = xdev::sum(xdev::cast(xdev::argmax(x, 1), DType::kFloat64));
  EXPECT_THAT([&] { tape.gradient(through_argmax, x); },
              xdev_test::ThrowsError(xdev::ErrorCode::kInvalidArgument,
                                     HasSubstr("op ArgMax, which is not differentiable")));
  const Tensor through_equal = xdev::sum(xdev::cast(xdev::equal(x, x), DType::kFloat64));
  EXPECT_THAT([&] { tape.gradient(through_equal, x); },
              xdev_test::ThrowsError(xdev::ErrorCode::kInvalidArgument, HasSubstr("Equal")));
  const Tensor through_int = xdev::sum(xdev::cast(xdev::cast(x, DType::kInt32), DType::kFloat64));
  EXPECT_THAT([&] { tape.gradient(through_int, x); },
              xdev_test::ThrowsError(xdev::ErrorCode::kInvalidArgument,
                                     HasSubstr("Cast, whose output is int32")));
  // A condition carries no gradient: relu written with select is fine.
  const Tensor relu = xdev::select(xdev::greater(x, xdev::scalar_like(x, 1.0)), x,
                                   xdev::scalar_like(x, 0.0));
  EXPECT_EQ(values(tape.gradient(xdev::sum(relu), x)), (std::vector<double>{0, 1, 1, 0}));
}

TEST(GradientTape, WatchRefusesIntegerTensors) {
  GradientTape tape;
  EXPECT_THAT([&] { tape.watch(xdev::constant({1, 2})); },
              xdev_test::ThrowsError(xdev::ErrorCode::kInvalidArgument, HasSubstr("int32")));
}

TEST(GradientTape, RecordsOnlyItsOwnThread) {
  const Tensor x = xdev::constant({1.0, 2.0});
  GradientTape tape;
  tape.watch(x);
  Tensor y;
  std::thread([&] { y = xdev::sum(x * x); }).join();
  EXPECT_FALSE(tape.gradient(y, x).defined()) << "another thread's op was recorded";
}

TEST(GradientTape, ABroadcastGradientIsReducedToTheInputShape) {
  const Tensor b = xdev::constant({1.0, 2.0, 3.0});
  const Tensor x = xdev::ones({4, 3}, DType::kFloat64);
  GradientTape tape;
  tape.watch(b);
  const Tensor g = tape.gradient(xdev::sum(x + b), b);
  EXPECT_EQ(g.shape(), Shape({3}));
  EXPECT_EQ(values(g), (std::vector<double>{4.0, 4.0, 4.0}));
}

// Over no axis (EmptyAxes::kNone) each element is its own extreme and its
// own product: the Max/Min and Prod gradients re-reduce over the recorded
// axes, which must not read the empty list as every axis.
TEST(GradientTape, AReductionOverNoAxisPassesTheGradientThrough) {
  const Tensor x = xdev::constant({{2.0, -1.0}, {3.0, 0.0}});
  using xdev::EmptyAxes;
  using Reduce = Tensor (*)(const Tensor&, const std::vector<int>&, bool, EmptyAxes);
  for (Reduce fn : {static_cast<Reduce>(xdev::max), static_cast<Reduce>(xdev::min),
                    static_cast<Reduce>(xdev::prod), static_cast<Reduce>(xdev::sum),
                    static_cast<Reduce>(xdev::mean), static_cast<Reduce>(xdev::logsumexp)}) {
    GradientTape tape;
    tape.watch(x);
    const Tensor g = tape.gradient(xdev::sum(fn(x, {}, false, EmptyAxes::kNone)), x);
    EXPECT_EQ(g.shape(), (Shape{2, 2}));
    EXPECT_EQ(values(g), (std::vector<double>{1.0, 1.0, 1.0, 1.0}));
  }
}

// The backward pass lets each record's tensors go as soon as it is past
// them: after gradient() only the gradient and the caller's tensors hold
// memory, while the tape itself is still alive.
TEST(GradientTape, NonPersistentTapeFreesWhatTheBackwardPassNoLongerNeeds) {
  const std::string device = default_device();
  const Tensor x = xdev::random_uniform({256, 256}, 0.0, 1.0, DType::kFloat32, 1);
  const uint64_t before = xdev::get_memory_info(device).current;
  GradientTape tape;
  tape.watch(x);
  Tensor y = x;
  for (int i = 0; i < 10; ++i) y = xdev::tanh(y);  // 10 outputs of 256 KiB held by the tape
  const Tensor loss = xdev::sum(y);
  y = Tensor();
  const uint64_t recorded = xdev::get_memory_info(device).current;
  EXPECT_GE(recorded, before + 10 * 256 * 1024);
  Tensor g = tape.gradient(loss, x);
  const uint64_t after = xdev::get_memory_info(device).current;
  // The gradient (256 KiB) and the loss, scalars and pool rounding: far
  // less than the 10 intermediate results.
  EXPECT_LT(after, before + 2 * 256 * 1024) << "recorded " << recorded;
}

TEST(Variable, LivesOnTheScopesDeviceAndAssigns) {
  const std::string device = default_device();
  Variable v;
  {
    xdev::DeviceScope scope(device);
    v = Variable(xdev::constant({1.0, 2.0}), true, "v");
  }
  EXPECT_EQ(v.device().name, device);
  v.assign_add(xdev::constant({0.5, 0.5}));
  v.assign_sub(xdev::constant(1.0));
  EXPECT_EQ(values(v.read_value()), (std::vector<double>{0.5, 1.5}));
  v.assign(xdev::constant({7.0, 8.0}));
  EXPECT_EQ(values(v), (std::vector<double>{7.0, 8.0}));
  EXPECT_EQ(v.device().name, device);
  EXPECT_THAT([&] { v.assign(xdev::constant({1.0})); },
              xdev_test::ThrowsError(xdev::ErrorCode::kInvalidArgument, HasSubstr("shape")));
}

TEST(Variable, TapesWatchTrainableVariablesWhenRead) {
  Variable w(xdev::constant({1.0, 2.0}));
  Variable frozen(xdev::constant({3.0, 4.0}), /*trainable=*/false);
  GradientTape tape;
  const Tensor y = xdev::sum(Tensor(w) * w * frozen);
  ASSERT_EQ(tape.watched_variables().size(), 1u);
  EXPECT_TRUE(tape.watched_variables()[0].same_as(w));
  const std::vector<Tensor> g = tape.gradient(y, std::vector<Variable>{w, frozen});
  EXPECT_EQ(values(g[0]), (std::vector<double>{6.0, 16.0}));
  EXPECT_FALSE(g[1].defined());
}

TEST(Variable, TensorsAndVariablesTogetherTakeOneBackwardPass) {
  // A non-persistent tape makes one backward pass: tensors and variables as
  // sources of the same gradient() call (tf.GradientTape takes both).
  Variable w(xdev::constant({2.0, 3.0}));
  const Tensor x = xdev::constant({5.0, 7.0});
  const Tensor unrelated = xdev::constant({1.0});
  GradientTape tape;
  tape.watch(x);
  const Tensor y = xdev::sum(Tensor(w) * x * w);  // dy/dw = 2 w x, dy/dx = w^2
  const std::vector<Tensor> g = tape.gradient(y, std::vector<Tensor>{x, unrelated},
                                              std::vector<Variable>{w});
  ASSERT_EQ(g.size(), 3u);
  EXPECT_EQ(values(g[0]), (std::vector<double>{4.0, 9.0}));
  EXPECT_FALSE(g[1].defined());
  EXPECT_EQ(values(g[2]), (std::vector<double>{20.0, 42.0}));
  EXPECT_THROW(tape.gradient(y, std::vector<Tensor>{x}), xdev::Error);  // spent
}

TEST(Variable, AssignmentsAreNotRecorded) {
  Variable w(xdev::constant({1.0}));
  GradientTape tape;
  const Tensor y = xdev::sum(Tensor(w) * 3.0);
  w.assign_add(xdev::constant({1.0}));
  EXPECT_EQ(values(tape.gradient(y, std::vector<Variable>{w})[0]), (std::vector<double>{3.0}));
}

// --- optimizers: one or two steps against Keras' rules computed by hand -------------

TEST(Optimizers, SgdPlainMomentumAndNesterov) {
  const double lr = 0.1, m = 0.9, g = 2.0;
  for (int kind = 0; kind < 3; ++kind) {
    Variable w(xdev::constant({1.0}));
    xdev::SGD opt(lr, kind == 0 ? 0.0 : m, kind == 2);
    double expect = 1.0, v = 0.0;
    for (int step = 0; step < 2; ++step) {
      opt.apply_gradients({xdev::constant({g})}, {w});
      if (kind == 0) {
        expect -= lr * g;
      } else {
        v = m * v - lr * g;
        expect += kind == 2 ? m * v - lr * g : v;
      }
      EXPECT_NEAR(values(w)[0], expect, 1e-12) << "kind " << kind << " step " << step;
    }
    EXPECT_EQ(opt.iterations(), 2);
  }
}

TEST(Optimizers, AdamAndAdamW) {
  const double lr = 0.01, b1 = 0.9, b2 = 0.999, eps = 1e-7, wd = 0.1;
  for (bool decoupled : {false, true}) {
    Variable w(xdev::constant({1.0, -2.0}));
    std::unique_ptr<xdev::Optimizer> opt;
    if (decoupled) {
      opt = std::make_unique<xdev::AdamW>(lr, wd, b1, b2, eps);
    } else {
      opt = std::make_unique<xdev::Adam>(lr, b1, b2, eps);
    }
    std::vector<double> expect{1.0, -2.0}, m{0, 0}, v{0, 0};
    const std::vector<std::vector<double>> grads{{0.5, -1.0}, {0.25, 3.0}};
    for (int t = 1; t <= 2; ++t) {
      const std::vector<double>& g = grads[static_cast<size_t>(t - 1)];
      opt->apply_gradients({xdev::constant(g.data(), DType::kFloat64, {2})}, {w});
      const double a = lr * std::sqrt(1 - std::pow(b2, t)) / (1 - std::pow(b1, t));
      for (size_t i = 0; i < 2; ++i) {
        if (decoupled) expect[i] -= expect[i] * lr * wd;
        m[i] += (g[i] - m[i]) * (1 - b1);
        v[i] += (g[i] * g[i] - v[i]) * (1 - b2);
        expect[i] -= a * m[i] / (std::sqrt(v[i]) + eps);
      }
      const std::vector<double> got = values(w);
      for (size_t i = 0; i < 2; ++i) EXPECT_NEAR(got[i], expect[i], 1e-12) << "step " << t;
    }
  }
}

TEST(Optimizers, RefuseAGradientOfTheWrongShape) {
  Variable w(xdev::constant({1.0, 2.0}), true, "w");
  xdev::SGD opt;
  EXPECT_THAT([&] { opt.apply_gradients({xdev::constant({1.0})}, {w}); },
              xdev_test::ThrowsError(xdev::ErrorCode::kInvalidArgument, HasSubstr("'w'")));
}

// --- layers --------------------------------------------------------------------

TEST(Layers, ShapesAndParameters) {
  xdev::set_random_seed(3);
  xdev::Sequential model;
  model.add<xdev::Conv2D>(1, 4, std::vector<int64_t>{3, 3}, std::vector<int64_t>{1, 1}, "SAME",
                          xdev::Activation::kRelu);
  model.add<xdev::MaxPool>();
  model.add<xdev::Flatten>();
  model.add<xdev::LayerNorm>(4 * 4 * 4);
  model.add<xdev::Dropout>(0.5, 1);
  model.add<xdev::Dense>(4 * 4 * 4, 3);
  const Tensor x = xdev::random_uniform({2, 8, 8, 1});
  EXPECT_EQ(model(x).shape(), Shape({2, 3}));
  EXPECT_EQ(model(x, true).shape(), Shape({2, 3}));
  EXPECT_EQ(model.trainable_variables().size(), 6u);  // conv 2, layer norm 2, dense 2
  GradientTape tape;
  const Tensor loss = xdev::mean_squared_error(xdev::zeros({2, 3}), model(x, true));
  const std::vector<Variable> vars = model.trainable_variables();
  const std::vector<Tensor> g = tape.gradient(loss, vars);
  for (size_t i = 0; i < vars.size(); ++i) {
    ASSERT_TRUE(g[i].defined()) << "parameter " << i;
    EXPECT_EQ(g[i].shape(), vars[i].shape());
  }
  xdev::Embedding embed(10, 4, DType::kFloat32, 5);
  EXPECT_EQ(embed(xdev::constant({{1, 9}, {9, 0}})).shape(), Shape({2, 2, 4}));
}

TEST(Layers, InitialisersHaveKerasLimits) {
  const std::vector<double> g = values(xdev::glorot_uniform({300, 100}, DType::kFloat64, 1));
  const std::vector<double> h = values(xdev::he_uniform({3, 3, 10, 20}, DType::kFloat64, 1));
  const double gl = std::sqrt(6.0 / 400), hl = std::sqrt(6.0 / 90);
  double gmax = 0, hmax = 0;
  for (double v : g) gmax = std::max(gmax, std::abs(v));
  for (double v : h) hmax = std::max(hmax, std::abs(v));
  EXPECT_LE(gmax, gl);
  EXPECT_GT(gmax, 0.95 * gl);
  EXPECT_LE(hmax, hl);
  EXPECT_GT(hmax, 0.95 * hl);
}

// --- training ------------------------------------------------------------------

// Three Gaussian blobs in 2-d, one per class, shuffled.
struct Blobs {
  Tensor x, labels;
  std::vector<int> classes;
};
Blobs blobs(int n, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> noise(0.0f, 0.5f);
  const float centers[3][2] = {{2, 0}, {-1, 1.7f}, {-1, -1.7f}};
  std::vector<float> x;
  std::vector<int> c;
  for (int i = 0; i < n; ++i) {
    const int k = i % 3;
    x.push_back(centers[k][0] + noise(rng));
    x.push_back(centers[k][1] + noise(rng));
    c.push_back(k);
  }
  return {xdev::constant(x, {n, 2}), xdev::constant(c, {n}), c};
}

double accuracy(xdev::Module& model, const Blobs& data) {
  const std::vector<int64_t> predicted = xdev::argmax(model(data.x), 1).to_vector<int64_t>();
  int right = 0;
  for (size_t i = 0; i < predicted.size(); ++i) right += predicted[i] == data.classes[i];
  return static_cast<double>(right) / static_cast<double>(predicted.size());
}

// A 2-16-3 MLP with Adam on 300 points of three separable blobs (the classes'
// centres 2.6 apart, noise 0.5): at least 95% accuracy after 200 full-batch
// steps (a linear classifier can reach ~99%; the bound leaves room for the
// initialisation).
// A label outside [0, classes) is an error, as in TensorFlow and PyTorch,
// not the loss of a row of zeros.
TEST(Layers, SparseCrossEntropyRefusesALabelOutsideTheClasses) {
  const Tensor logits = xdev::constant({{1.0f, 2.0f, 0.5f}, {0.1f, 0.2f, 0.3f}});
  for (const std::vector<int32_t>& bad :
       {std::vector<int32_t>{0, 3}, std::vector<int32_t>{-1, 0}}) {
    try {
      xdev::sparse_softmax_cross_entropy(xdev::constant(bad, Shape{2}), logits);
      ADD_FAILURE() << "a loss for labels " << bad[0] << ", " << bad[1];
    } catch (const xdev::Error& e) {
      EXPECT_EQ(e.code(), xdev::ErrorCode::kInvalidArgument);
      const std::string value = bad[0] == 0 ? "3" : "-1";
      EXPECT_THAT(e.what(), HasSubstr("Received a label value of " + value +
                                      " which is outside the valid range of [0, 3)"));
    }
  }
  const double loss = values(xdev::sparse_softmax_cross_entropy(
      xdev::constant(std::vector<int32_t>{1, 0}, Shape{2}), logits))[0];
  const double row0 = -std::log(std::exp(2.0) / (std::exp(1.0) + std::exp(2.0) + std::exp(0.5)));
  const double row1 = -std::log(std::exp(0.1) / (std::exp(0.1) + std::exp(0.2) + std::exp(0.3)));
  EXPECT_NEAR(loss, (row0 + row1) / 2, 1e-6);
}

TEST(Training, SmallMlpReachesTheStatedAccuracy) {
  xdev::set_random_seed(7);
  const Blobs train = blobs(300, 42);
  xdev::Sequential model;
  model.add<xdev::Dense>(2, 16, xdev::Activation::kRelu);
  model.add<xdev::Dense>(16, 3);
  xdev::Adam opt(0.05);
  const std::vector<Variable> vars = model.trainable_variables();
  double first_loss = 0, last_loss = 0;
  for (int step = 0; step < 200; ++step) {
    GradientTape tape;
    const Tensor loss = xdev::sparse_softmax_cross_entropy(train.labels, model(train.x, true));
    opt.apply_gradients(tape.gradient(loss, vars), vars);
    if (step == 0) first_loss = loss.item<double>();
    last_loss = loss.item<double>();
  }
  EXPECT_LT(last_loss, 0.25 * first_loss);
  EXPECT_GE(accuracy(model, train), 0.95);
  EXPECT_GE(accuracy(model, blobs(150, 43)), 0.95) << "on fresh points";
  for (const Variable& v : vars) EXPECT_EQ(v.device().name, default_device());
}

// Bars: 6x6 images holding one vertical (class 0) or horizontal (class 1)
// bar of ones at a random position, plus noise in [0, 0.3).
Blobs bars(int n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> pos(0, 5);
  std::uniform_real_distribution<float> noise(0.0f, 0.3f);
  std::vector<float> x;
  std::vector<int> c;
  for (int i = 0; i < n; ++i) {
    const int k = i % 2, at = pos(rng);
    for (int r = 0; r < 6; ++r) {
      for (int col = 0; col < 6; ++col) x.push_back(((k == 0 ? col : r) == at ? 1.0f : 0.0f) + noise(rng));
    }
    c.push_back(k);
  }
  return {xdev::constant(x, {n, 6, 6, 1}), xdev::constant(c, {n}), c};
}

// A small CNN (Conv2D 3x3 x4, MaxPool, Flatten, Dense) with Adam: at least
// 95% on fresh images after 60 steps on 64 (a linear model of the pixels
// cannot tell a bar's direction at every position; the convolution can).
TEST(Training, SmallCnnReachesTheStatedAccuracy) {
  xdev::set_random_seed(11);
  const Blobs train = bars(64, 9);
  xdev::Sequential model;
  model.add<xdev::Conv2D>(1, 4, std::vector<int64_t>{3, 3}, std::vector<int64_t>{1, 1}, "SAME",
                          xdev::Activation::kRelu);
  model.add<xdev::MaxPool>();
  model.add<xdev::Flatten>();
  model.add<xdev::Dense>(3 * 3 * 4, 2);
  xdev::Adam opt(0.05);
  const std::vector<Variable> vars = model.trainable_variables();
  for (int step = 0; step < 60; ++step) {
    GradientTape tape;
    const Tensor loss = xdev::sparse_softmax_cross_entropy(train.labels, model(train.x, true));
    opt.apply_gradients(tape.gradient(loss, vars), vars);
  }
  EXPECT_GE(accuracy(model, train), 0.95);
  EXPECT_GE(accuracy(model, bars(100, 10)), 0.95) << "on fresh images";
}

// 10 000 training steps: the pool's bytes in use and live allocations after
// the loop equal those after the first 100 steps (the tape, the optimizer's
// slots and the records let everything go each step). The counts must be
// equal, not close, so one byte kept per step shows after any number of
// steps; the sanitizer lanes (each step 30-60 times as long, looking for
// memory and threading errors on the way) run 1 000.
TEST(Training, ThousandsOfStepsDoNotGrowMemory) {
  const int steps = xdev_test::kSanitized ? 1000 : 10000;
  xdev::set_random_seed(8);
  const std::string device = default_device();
  const Blobs train = blobs(30, 44);
  xdev::Sequential model;
  model.add<xdev::Dense>(2, 8, xdev::Activation::kTanh);
  model.add<xdev::Dense>(8, 3);
  xdev::SGD opt(0.05, 0.9);
  const std::vector<Variable> vars = model.trainable_variables();
  auto step = [&] {
    GradientTape tape;
    const Tensor loss = xdev::sparse_softmax_cross_entropy(train.labels, model(train.x, true));
    opt.apply_gradients(tape.gradient(loss, vars), vars);
  };
  for (int i = 0; i < 100; ++i) step();
  const xdev::MemoryInfo warm = xdev::get_memory_info(device);
  for (int i = 0; i < steps; ++i) step();
  const xdev::MemoryInfo after = xdev::get_memory_info(device);
  EXPECT_EQ(after.current, warm.current);
  EXPECT_EQ(after.num_allocations, warm.num_allocations);
  EXPECT_GT(after.total_allocations, warm.total_allocations + steps)
      << "the steps ran on " << device;
}

}  // namespace
