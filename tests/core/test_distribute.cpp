// Many devices (docs/behaviour.md B22, B23, B25): replication with add_n, all-reduce,
// the mirrored strategy, models on a device. Runs with the simulated
// accelerator (2 GPUs) and the CPU split into 4 logical devices.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <memory>
#include <numeric>
#include <stdexcept>

#include <xdev/xdev.hpp>

#include "device_names.hpp"
#include "regression.hpp"

namespace {

using ::testing::HasSubstr;

using namespace xdev_test::devices;  // kCpu0, kGpu1, ...

class FourLogicalCpus : public ::testing::Environment {
 public:
  void SetUp() override {
    auto cpu = xdev::list_physical_devices("CPU").at(0);
    xdev::set_logical_device_configuration(
        cpu, {{.memory_limit = 256}, {.memory_limit = 256}, {.memory_limit = 256},
              {.memory_limit = 256}});
  }
};
const auto* const kEnvironment = ::testing::AddGlobalTestEnvironment(new FourLogicalCpus);

xdev::Tensor tower() {
  return xdev::matmul(xdev::constant({{1.f, 2.f, 3.f}, {4.f, 5.f, 6.f}}),
                      xdev::constant({{1.f, 2.f}, {3.f, 4.f}, {5.f, 6.f}}));
}

// B22 on logical CPUs and on the accelerator.
TEST(Replication, TowersCombinedWithAddNOnTheCpu) {
  for (const std::string type : {"CPU", "GPU"}) {
    std::vector<xdev::Tensor> towers;
    for (const xdev::Device& d : xdev::list_logical_devices(type)) {
      xdev::DeviceScope scope(d);
      towers.push_back(tower());
      EXPECT_EQ(towers.back().device().name, d.name);
    }
    ASSERT_GE(towers.size(), 2u) << type;
    xdev::reset_placement_counters();
    xdev::Tensor total;
    {
      xdev::DeviceScope scope("/CPU:0");
      total = xdev::add_n(towers);
    }
    EXPECT_EQ(total.device().name, kCpu0);
    std::vector<float> expected = {22, 28, 49, 64};
    for (float& v : expected) v *= static_cast<float>(towers.size());
    EXPECT_EQ(total.to_vector<float>(), expected) << type;
    // Every tower not already on CPU:0 was copied there, and counted.
    uint64_t copied = type == "CPU" ? towers.size() - 1 : towers.size();
    EXPECT_EQ(xdev::placement_counters().implicit_copies, copied) << type;
  }
}

template <typename T>
std::vector<xdev::Tensor> values_on(const xdev::MirroredStrategy& s, int64_t n, T scale) {
  std::vector<xdev::Tensor> out;
  for (int r = 0; r < s.num_replicas_in_sync(); ++r) {
    std::vector<T> v(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = static_cast<T>((i + 1) * (r + 1)) * scale;
    xdev::DeviceScope scope(s.devices()[static_cast<size_t>(r)]);
    out.push_back(xdev::constant(v, {n}));
  }
  return out;
}

template <typename T>
void check_all_reduce(const xdev::MirroredStrategy& s, int64_t n, T scale) {
  const int replicas = s.num_replicas_in_sync();
  const T factor = static_cast<T>(replicas * (replicas + 1) / 2);  // sum of (r + 1)
  auto values = values_on<T>(s, n, scale);
  auto sums = s.all_reduce(xdev::ReduceOp::kSum, values);
  auto means = s.all_reduce(xdev::ReduceOp::kMean, values);
  ASSERT_EQ(sums.size(), static_cast<size_t>(replicas));
  for (int r = 0; r < replicas; ++r) {
    EXPECT_EQ(sums[static_cast<size_t>(r)].device(), s.devices()[static_cast<size_t>(r)]);
    EXPECT_EQ(means[static_cast<size_t>(r)].device(), s.devices()[static_cast<size_t>(r)]);
    auto sum = sums[static_cast<size_t>(r)].template to_vector<T>();
    auto mean = means[static_cast<size_t>(r)].template to_vector<T>();
    for (int64_t i = 0; i < n; ++i) {
      T base = static_cast<T>(i + 1) * scale;
      EXPECT_EQ(sum[static_cast<size_t>(i)], base * factor);
      EXPECT_EQ(mean[static_cast<size_t>(i)], static_cast<T>(base * factor / static_cast<T>(replicas)));
    }
  }
}

TEST(AllReduce, SumAndMeanForUnevenSizesAndDtypes) {
  for (int replicas : {2, 4}) {
    std::vector<std::string> devices;
    for (int i = 0; i < replicas; ++i) devices.push_back("/CPU:" + std::to_string(i));
    xdev::MirroredStrategy s(devices);
    EXPECT_EQ(s.all_reduce_path(), "shared memory");
    for (int64_t n : {1, 7, 1000, 4099}) {
      check_all_reduce<float>(s, n, 0.5f);
      check_all_reduce<double>(s, n, 0.25);
      check_all_reduce<int32_t>(s, n, 3);
      check_all_reduce<int64_t>(s, n, 5);
    }
  }
}

TEST(AllReduce, AcrossAcceleratorsUsesDirectCopies) {
  xdev::MirroredStrategy gpus;  // default: every logical GPU
  EXPECT_EQ(gpus.num_replicas_in_sync(), 2);
  EXPECT_EQ(gpus.all_reduce_path(), "direct copies");
  std::vector<xdev::Tensor> values;
  for (const auto& d : gpus.devices()) {
    values.push_back(xdev::constant({1.f, 2.f, 3.f}).to(d));
  }
  auto sums = gpus.all_reduce(xdev::ReduceOp::kSum, values);
  EXPECT_EQ(sums[1].device().name, kGpu1);
  EXPECT_EQ(sums[1].to_vector<float>(), (std::vector<float>{2, 4, 6}));
  // MEAN lives on the replica devices like SUM, even though the sim has no
  // Div kernel (the division runs elsewhere and comes back).
  auto means = gpus.all_reduce(xdev::ReduceOp::kMean, values);
  for (size_t r = 0; r < means.size(); ++r) {
    EXPECT_EQ(means[r].device(), gpus.devices()[r]) << r;
    EXPECT_EQ(means[r].to_vector<float>(), (std::vector<float>{1, 2, 3})) << r;
  }
  xdev::MirroredStrategy mixed(std::vector<std::string>{"/GPU:0", "/CPU:1"});
  EXPECT_EQ(mixed.all_reduce_path(), "direct copies");
}

// MAX and MIN, elementwise, on every replica; and reduce() to a destination.
TEST(AllReduce, MaxAndMinOnEveryReplica) {
  for (const std::vector<std::string>& devices :
       {std::vector<std::string>{"/CPU:0", "/CPU:1", "/CPU:2"},
        std::vector<std::string>{"/GPU:0", "/GPU:1", "/CPU:3"}}) {
    xdev::MirroredStrategy s(devices);
    std::vector<xdev::Tensor> values = {xdev::constant({1.f, 9.f, -2.f}).to(s.devices()[0]),
                                        xdev::constant({4.f, 0.f, -7.f}).to(s.devices()[1]),
                                        xdev::constant({2.f, 5.f, 3.f}).to(s.devices()[2])};
    auto maxima = s.all_reduce(xdev::ReduceOp::kMax, values);
    auto minima = s.all_reduce(xdev::ReduceOp::kMin, values);
    for (size_t r = 0; r < values.size(); ++r) {
      EXPECT_EQ(maxima[r].device(), s.devices()[r]) << devices[r];
      EXPECT_EQ(maxima[r].to_vector<float>(), (std::vector<float>{4, 9, 3})) << devices[r];
      EXPECT_EQ(minima[r].device(), s.devices()[r]) << devices[r];
      EXPECT_EQ(minima[r].to_vector<float>(), (std::vector<float>{1, 0, -7})) << devices[r];
    }
    xdev::Tensor on_cpu = s.reduce(xdev::ReduceOp::kMax, values, "/CPU:1");
    EXPECT_EQ(on_cpu.device().name, kCpu1);
    EXPECT_EQ(on_cpu.to_vector<float>(), (std::vector<float>{4, 9, 3}));
  }
  EXPECT_EQ(xdev::to_string(xdev::ReduceOp::kMin), "MIN");
}

TEST(AllReduce, MismatchedValuesAreRejected) {
  xdev::MirroredStrategy s(std::vector<std::string>{"/CPU:0", "/CPU:1"});
  std::vector<xdev::Tensor> bad = {xdev::constant({1.f, 2.f}), xdev::constant({1.f})};
  try {
    s.all_reduce(xdev::ReduceOp::kSum, bad);
    FAIL();
  } catch (const xdev::Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("all_reduce: replica 1 has (1,) float32, replica 0 has (2,) float32"));
  }
  EXPECT_THROW(s.all_reduce(xdev::ReduceOp::kSum, {xdev::constant({1.f})}), xdev::Error);
  EXPECT_THROW(xdev::MirroredStrategy(std::vector<std::string>{"/CPU:0", "cpu:0"}), xdev::Error);
}

TEST(Mirrored, SplitBatchGivesEveryReplicaItsRows) {
  xdev::MirroredStrategy s(std::vector<std::string>{"/CPU:0", "/CPU:1", "/CPU:2", "/CPU:3"});
  std::vector<float> rows(20);
  std::iota(rows.begin(), rows.end(), 0.f);
  auto shards = s.split_batch(xdev::constant(rows, {10, 2}));
  ASSERT_EQ(shards.size(), 4u);
  std::vector<int64_t> sizes;
  std::vector<float> joined;
  for (size_t i = 0; i < shards.size(); ++i) {
    EXPECT_EQ(shards[i].device(), s.devices()[i]);
    sizes.push_back(shards[i].shape()[0]);
    for (float v : shards[i].to_vector<float>()) joined.push_back(v);
  }
  EXPECT_EQ(sizes, (std::vector<int64_t>{3, 3, 2, 2}));
  EXPECT_EQ(joined, rows);
}

TEST(Mirrored, SplitBatchOfABatchWithAnEmptyAxis) {
  xdev::MirroredStrategy s(std::vector<std::string>{"/CPU:0", "/CPU:1"});
  auto shards = s.split_batch(xdev::zeros(xdev::Shape{10, 0, 8}, xdev::DType::kFloat32));
  ASSERT_EQ(shards.size(), 2u);
  for (const auto& shard : shards) EXPECT_EQ(shard.shape(), (xdev::Shape{5, 0, 8}));
}

TEST(Mirrored, RunsEveryReplicaOnItsDevice) {
  xdev::MirroredStrategy s(std::vector<std::string>{"/CPU:0", "/CPU:1", "/CPU:2", "/CPU:3"});
  auto results = s.run([](const xdev::ReplicaContext& r) {
    return std::vector<xdev::Tensor>{xdev::fill({2}, r.replica_id)};
  });
  for (int r = 0; r < 4; ++r) {
    EXPECT_EQ(results[static_cast<size_t>(r)][0].device(), s.devices()[static_cast<size_t>(r)]);
    EXPECT_EQ(results[static_cast<size_t>(r)][0].to_vector<float>(),
              (std::vector<float>{static_cast<float>(r), static_cast<float>(r)}));
  }
}

TEST(Mirrored, AFailingReplicaFailsTheStepAndLeavesVariablesUnchanged) {
  xdev::MirroredStrategy s(std::vector<std::string>{"/CPU:0", "/CPU:1"});
  xdev::MirroredVariable w = s.create_variable(xdev::constant({1.f, 2.f}));
  try {
    auto results = s.run([&](const xdev::ReplicaContext& r) {
      if (r.replica_id == 1) throw std::runtime_error("boom");
      return std::vector<xdev::Tensor>{w.local(r) * w.local(r)};
    });
    w.assign_sub(s.all_reduce(xdev::ReduceOp::kSum, xdev::per_replica(results, 0)));
    FAIL() << "the step succeeded";
  } catch (const xdev::Error& e) {
    EXPECT_STREQ(e.what(), ("MirroredStrategy.run: replica 1 on " + kCpu1 + " failed: boom").c_str());
  }
  for (const auto& v : w.values()) EXPECT_EQ(v.to_vector<float>(), (std::vector<float>{1, 2}));
  // A shape error inside a replica keeps its code.
  try {
    s.run([](const xdev::ReplicaContext&) {
      return std::vector<xdev::Tensor>{xdev::constant({1.f}) + xdev::constant({1.f, 2.f, 3.f}) +
                                       xdev::constant({{1.f, 2.f}})};
    });
    FAIL();
  } catch (const xdev::Error& e) {
    EXPECT_EQ(e.code(), xdev::ErrorCode::kInvalidArgument);
    EXPECT_THAT(e.what(), HasSubstr("replica 0 on " + kCpu0 + " failed: Add: shapes"));
  }
}

TEST(Mirrored, AssignSubKeepsCopiesIdentical) {
  xdev::MirroredStrategy s(std::vector<std::string>{"/CPU:0", "/CPU:1", "/CPU:2"});
  xdev::MirroredVariable w = s.create_variable(xdev::constant({1.0, 2.0}));
  std::vector<xdev::Tensor> deltas;
  for (const auto& d : s.devices()) deltas.push_back(xdev::constant({0.5, 1.0}).to(d));
  w.assign_sub(deltas, 2.0);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(w.local(static_cast<int>(i)).device(), s.devices()[i]);
    EXPECT_EQ(w.local(static_cast<int>(i)).to_vector<double>(), (std::vector<double>{0, 0}));
  }
}

// Optimizers on mirrored variables: float64 linear regression, the loss of
// each replica scaled by the global batch so that the summed gradients are
// the full batch's.
struct Regression {
  xdev::Tensor x, y;  // [8, 3], [8, 1] on /CPU:0
};

Regression regression_data() {
  xdev::DeviceScope scope("/CPU:0");
  xdev::Tensor x = xdev::random_uniform({8, 3}, -1.0, 1.0, xdev::DType::kFloat64, 7);
  xdev::Tensor y = xdev::matmul(x, xdev::constant({{2.0}, {-3.0}, {0.5}})) + xdev::constant({1.0});
  return {x, y};
}

using OptimizerFactory = std::function<std::unique_ptr<xdev::Optimizer>()>;

const std::vector<std::pair<std::string, OptimizerFactory>>& optimizer_factories() {
  static const std::vector<std::pair<std::string, OptimizerFactory>> all = {
      {"SGD momentum", [] { return std::make_unique<xdev::SGD>(0.1, 0.9); }},
      {"SGD Nesterov", [] { return std::make_unique<xdev::SGD>(0.1, 0.9, true); }},
      {"Adam", [] { return std::make_unique<xdev::Adam>(0.05); }},
      {"AdamW", [] { return std::make_unique<xdev::AdamW>(0.05, 0.01); }},
  };
  return all;
}

constexpr int kOptimizerSteps = 12;

TEST(MirroredOptimizer, TwoReplicasEndWithTheSingleDeviceWeights) {
  const Regression data = regression_data();
  xdev::MirroredStrategy s(std::vector<std::string>{"/CPU:0", "/CPU:1"});
  for (const auto& [label, make] : optimizer_factories()) {
    SCOPED_TRACE(label);
    auto single = make();
    const std::vector<double> expected =
        xdev_test::train_regression_on_one_device(*single, data.x, data.y, kOptimizerSteps);
    auto opt = make();
    const xdev_test::MirroredRegression m =
        xdev_test::train_regression_mirrored(s, *opt, data.x, data.y, kOptimizerSteps);
    const xdev::MirroredVariable &w = m.w, &b = m.b;
    EXPECT_EQ(opt->iterations(), kOptimizerSteps);
    const std::vector<double> got = m.weights();
    ASSERT_EQ(got.size(), expected.size());
    for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], expected[i], 1e-9) << i;
    // Training moved the weights (the comparison is not between zeros).
    EXPECT_GT(std::abs(got[0]), 0.1);
    // Every copy on its own device, bit for bit the same as replica 0's.
    for (int r = 0; r < 2; ++r) {
      EXPECT_EQ(w.local(r).device(), s.devices()[static_cast<size_t>(r)]);
      EXPECT_EQ(b.local(r).device(), s.devices()[static_cast<size_t>(r)]);
      EXPECT_EQ(w.local(r).to_vector<double>(), w.local(0).to_vector<double>());
      EXPECT_EQ(b.local(r).to_vector<double>(), b.local(0).to_vector<double>());
    }
  }
}

TEST(MirroredOptimizer, AllUndefinedGradientsLeaveTheVariableAlone) {
  xdev::MirroredStrategy s(std::vector<std::string>{"/CPU:0", "/CPU:1"});
  xdev::MirroredVariable w = s.create_variable(xdev::constant({1.0, 2.0}));
  xdev::MirroredVariable b = s.create_variable(xdev::constant({3.0}));
  xdev::SGD opt(0.5);
  std::vector<xdev::Tensor> ones;
  for (const auto& d : s.devices()) ones.push_back(xdev::constant({1.0, 1.0}).to(d));
  opt.apply_gradients(s, {ones, {xdev::Tensor(), xdev::Tensor()}}, {&w, &b});
  // The sum over two replicas: 2 · 0.5 = 1 off each element.
  for (int r = 0; r < 2; ++r) {
    EXPECT_EQ(w.local(r).to_vector<double>(), (std::vector<double>{0.0, 1.0}));
    EXPECT_EQ(b.local(r).to_vector<double>(), (std::vector<double>{3.0}));
  }
}

TEST(MirroredOptimizer, MismatchesAreRefusedAndChangeNothing) {
  xdev::MirroredStrategy s(std::vector<std::string>{"/CPU:0", "/CPU:1"});
  xdev::MirroredStrategy other(std::vector<std::string>{"/CPU:2", "/CPU:3"});
  xdev::MirroredVariable w = s.create_variable(xdev::constant({1.0, 2.0}));
  xdev::MirroredVariable elsewhere = other.create_variable(xdev::constant({1.0, 2.0}));
  xdev::MirroredVariable empty;
  xdev::Adam opt(0.1);
  auto on_replicas = [&](const xdev::Tensor& t) {
    return std::vector<xdev::Tensor>{t.to(s.devices()[0]), t.to(s.devices()[1])};
  };
  const std::vector<xdev::Tensor> good = on_replicas(xdev::constant({1.0, 1.0}));
  auto refused = [&](const std::vector<std::vector<xdev::Tensor>>& grads,
                     const std::vector<xdev::MirroredVariable*>& vars, const std::string& what) {
    try {
      opt.apply_gradients(s, grads, vars);
      ADD_FAILURE() << "accepted: " << what;
    } catch (const xdev::Error& e) {
      EXPECT_EQ(e.code(), xdev::ErrorCode::kInvalidArgument);
      EXPECT_THAT(e.what(), HasSubstr(what));
    }
  };
  refused({good, good}, {&w}, "apply_gradients: 2 gradient lists for 1 mirrored variables");
  refused({{good[0]}}, {&w}, "1 gradients for mirrored variable 0 on 2 local replicas");
  refused({on_replicas(xdev::constant({1.0, 1.0, 1.0}))}, {&w},
          "the gradient of mirrored variable 0 on replica 0 (" + kCpu0 +
              ") is float64 of shape (3,), the variable is float64 of shape (2,)");
  refused({{good[0], xdev::constant({1.f, 1.f}).to(s.devices()[1])}}, {&w},
          "the gradient of mirrored variable 0 on replica 1 (" + kCpu1 +
              ") is float32 of shape (2,), the variable is float64 of shape (2,)");
  refused({{good[0], xdev::Tensor()}}, {&w},
          "the gradient of mirrored variable 0 on replica 1 (" + kCpu1 +
              ") is undefined while other replicas have one");
  refused({good, good}, {&w, &elsewhere},
          "mirrored variable 1 has its copy for replica 0 on " +
              xdev_test::logical_device_name("CPU", 2));
  refused({good}, {&empty}, "mirrored variable 0 is empty");
  refused({good, good}, {&w, &w}, "mirrored variable 1 is mirrored variable 0 again");
  EXPECT_EQ(opt.iterations(), 0);
  for (int r = 0; r < 2; ++r) {
    EXPECT_EQ(w.local(r).to_vector<double>(), (std::vector<double>{1.0, 2.0}));
  }
}

TEST(MirroredOptimizer, AFailedSumChangesNoVariableSlotOrStep) {
  xdev::MirroredStrategy s(std::vector<std::string>{"/CPU:0", "/CPU:1"});
  xdev::MirroredVariable w = s.create_variable(xdev::constant({1.0, 2.0}));
  xdev::MirroredVariable b = s.create_variable(xdev::constant({3.0}));
  xdev::SGD opt(0.5, 0.9);
  xdev::CrossReplicaSum sum = xdev::cross_replica_sum(s);
  xdev::CrossReplicaSum failing = sum;
  failing.sum = [&](const std::vector<xdev::Tensor>& values, const std::string& name) {
    if (name == "apply_gradients/variable_1") {
      throw xdev::Error(xdev::ErrorCode::kUnavailable, "lost task 1");
    }
    return sum.sum(values, name);
  };
  auto grads = [&](double g, int64_t n) {
    std::vector<xdev::Tensor> out;
    for (const auto& d : s.devices()) {
      out.push_back(xdev::fill({n}, g, xdev::DType::kFloat64).to(d));
    }
    return out;
  };
  EXPECT_THROW(opt.apply_gradients(failing, {grads(1.0, 2), grads(1.0, 1)}, {&w, &b}),
               xdev::Error);
  EXPECT_EQ(opt.iterations(), 0);
  for (int r = 0; r < 2; ++r) {
    EXPECT_EQ(w.local(r).to_vector<double>(), (std::vector<double>{1.0, 2.0}));
  }
  // The momentum slot was not started either: the first real step is plain SGD
  // (v = −lr·g = −1 after summing 2 replicas), not one on top of a lost step.
  opt.apply_gradients(sum, {grads(1.0, 2), grads(1.0, 1)}, {&w, &b});
  EXPECT_EQ(opt.iterations(), 1);
  for (int r = 0; r < 2; ++r) {
    EXPECT_EQ(w.local(r).to_vector<double>(), (std::vector<double>{0.0, 1.0}));
    EXPECT_EQ(b.local(r).to_vector<double>(), (std::vector<double>{2.0}));
  }
}

// B25: a model moves to a device as a unit and stays there when run.
TEST(Module, ParametersMoveAsAUnitAndRunningKeepsEverythingThere) {
  xdev::Dense model(xdev::constant({{1.f}, {2.f}}), xdev::constant({0.5f}));
  model.to("/GPU:1");
  for (const xdev::Variable& p : model.parameters()) EXPECT_EQ(p.device().name, kGpu1);
  xdev::Tensor x = xdev::constant({{1.f, 1.f}, {2.f, 0.f}}).to("/GPU:1");
  xdev::reset_placement_counters();
  xdev::Tensor y = model(x);
  EXPECT_EQ(y.device().name, kGpu1);
  EXPECT_EQ(xdev::placement_counters().implicit_copies, 0u);
  EXPECT_EQ(y.to_vector<float>(), (std::vector<float>{3.5f, 2.5f}));
  // Moving again to the same device copies nothing.
  const xdev::detail::TensorImpl* before = model.kernel().read_value().impl();
  model.to(xdev::try_gpu(1));
  EXPECT_EQ(model.kernel().read_value().impl(), before);
}

}  // namespace
