// Logical GPUs with memory limits (docs/user-guide.md; walkthrough step
// 6). Configuration happens once per process, before the devices are
// initialized, so this is its own test program and its tests run in order.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <iostream>
#include <string>
#include <vector>

#include <xdev/xdev.hpp>

#include "cuda_test_util.hpp"

namespace {

using ::testing::HasSubstr;
using xdev::DType;
using xdev::Tensor;

// Step 6: one physical GPU as two logical GPUs of 1024 MiB each.
TEST(CudaLogical, OnePhysicalGpuAsTwoLogicalGpus) {
  XDEV_REQUIRE_GPU();
  const std::vector<xdev::PhysicalDevice> gpus = xdev::list_physical_devices("GPU");
  ASSERT_FALSE(xdev::devices_initialized());
  xdev::set_logical_device_configuration(gpus[0], {{.memory_limit = 1024}, {.memory_limit = 1024}});
  const std::vector<xdev::Device> logical = xdev::list_logical_devices("GPU");
  std::cout << gpus.size() << " Physical GPU, " << logical.size() << " Logical GPUs\n";
  ASSERT_EQ(logical.size(), gpus.size() + 1);
  EXPECT_EQ(xdev::get_memory_info("GPU:0").limit, uint64_t{1024} << 20);
  EXPECT_EQ(xdev::get_memory_info("GPU:1").limit, uint64_t{1024} << 20);

  // A matmul tower on each logical GPU of the first physical one, summed on
  // the CPU: [[44, 56], [98, 128]].
  std::vector<Tensor> towers;
  for (const char* device : {"/GPU:0", "/GPU:1"}) {
    xdev::DeviceScope scope(device);
    const Tensor a = xdev::constant({{1.f, 2.f, 3.f}, {4.f, 5.f, 6.f}});
    const Tensor b = xdev::constant({{1.f, 2.f}, {3.f, 4.f}, {5.f, 6.f}});
    towers.push_back(xdev::matmul(a, b));
    EXPECT_EQ(towers.back().device().name,
              "/job:localhost/replica:0/task:0/device:" + std::string(device).substr(1));
  }
  Tensor total;
  {
    xdev::DeviceScope scope("/CPU:0");
    total = xdev::add_n(towers);
  }
  EXPECT_EQ(total.device().device_type, "CPU");
  EXPECT_EQ(total.to_vector<float>(), (std::vector<float>{44, 56, 98, 128}));
}

TEST(CudaLogical, ALimitIsEnforcedWithAClearError) {
  XDEV_REQUIRE_GPU();
  ASSERT_TRUE(xdev::devices_initialized()) << "runs after OnePhysicalGpuAsTwoLogicalGpus";
  xdev::DeviceScope scope("/GPU:0");
  const Tensor fits = xdev::zeros({int64_t{512} << 18}, DType::kFloat32);  // 512 MiB
  try {
    const Tensor too_big = xdev::zeros({int64_t{600} << 18}, DType::kFloat32);  // 600 MiB more
    FAIL() << "went past the 1024 MiB limit of GPU:0";
  } catch (const xdev::Error& e) {
    std::cout << "the error: " << e.what() << "\n";
    EXPECT_EQ(e.code(), xdev::ErrorCode::kOutOfMemory);
    EXPECT_THAT(e.what(), HasSubstr("GPU:0"));
  }
  // The other logical GPU has its own pool.
  xdev::DeviceScope other("/GPU:1");
  const Tensor elsewhere = xdev::zeros({int64_t{600} << 18}, DType::kFloat32);
  EXPECT_EQ(elsewhere.device().id, 1);
}

// Step 7: one dense layer (MSE, SGD 0.2) trained mirrored over the two
// logical GPUs ends with the weights of single-device training on the CPU.
std::vector<Tensor> gradients(const Tensor& w, const Tensor& b, const Tensor& x, const Tensor& y,
                              int64_t total_rows) {
  const Tensor error = xdev::matmul(x, w) + b - y;
  const Tensor d_pred = error * xdev::fill({}, 2.0 / static_cast<double>(total_rows));
  return {xdev::matmul(x, d_pred, /*transpose_a=*/true), xdev::sum(d_pred, {0})};
}

TEST(CudaLogical, MirroredTrainingOverTheLogicalGpusMatchesOneDevice) {
  XDEV_REQUIRE_GPU();
  constexpr int64_t kBatch = 64;
  constexpr int kSteps = 30;
  constexpr double kRate = 0.2;
  Tensor x, y;
  {
    xdev::DeviceScope cpu("/CPU:0");
    x = xdev::random_uniform({kBatch, 3}, -1.0, 1.0, DType::kFloat32, 42);
    y = xdev::matmul(x, xdev::constant({{2.f}, {-3.f}, {0.5f}})) + xdev::constant({1.f});
  }
  std::vector<float> single;
  {
    xdev::DeviceScope cpu("/CPU:0");
    Tensor w = xdev::zeros({3, 1}), b = xdev::zeros({1});
    for (int step = 0; step < kSteps; ++step) {
      const auto g = gradients(w, b, x, y, kBatch);
      w = w - g[0] * xdev::fill({}, kRate);
      b = b - g[1] * xdev::fill({}, kRate);
    }
    single = w.to_vector<float>();
    single.push_back(b.to_vector<float>()[0]);
  }
  xdev::MirroredStrategy strategy(std::vector<std::string>{"/GPU:0", "/GPU:1"});
  ASSERT_EQ(strategy.num_replicas_in_sync(), 2);
  xdev::MirroredVariable w = strategy.create_variable(xdev::zeros({3, 1}));
  xdev::MirroredVariable b = strategy.create_variable(xdev::zeros({1}));
  const std::vector<Tensor> xs = strategy.split_batch(x);
  const std::vector<Tensor> ys = strategy.split_batch(y);
  std::cout << "all-reduce path: " << strategy.all_reduce_path() << "\n";
  for (int step = 0; step < kSteps; ++step) {
    const auto results = strategy.run([&](const xdev::ReplicaContext& r) {
      EXPECT_EQ(r.device.device_type, "GPU");
      return gradients(w.local(r), b.local(r), xs[r.replica_id], ys[r.replica_id], kBatch);
    });
    w.assign_sub(strategy.all_reduce(xdev::ReduceOp::kSum, xdev::per_replica(results, 0)), kRate);
    b.assign_sub(strategy.all_reduce(xdev::ReduceOp::kSum, xdev::per_replica(results, 1)), kRate);
  }
  EXPECT_EQ(w.local(0).device().device_type, "GPU");
  EXPECT_EQ(w.local(1).to_vector<float>(), w.local(0).to_vector<float>());
  std::vector<float> mirrored = w.value().to_vector<float>();
  mirrored.push_back(b.value().to_vector<float>()[0]);
  ASSERT_EQ(mirrored.size(), single.size());
  for (size_t i = 0; i < single.size(); ++i) EXPECT_NEAR(mirrored[i], single[i], 1e-4) << i;
}

TEST(CudaLogical, ConfiguringAfterInitializationFails) {
  XDEV_REQUIRE_GPU();
  const std::vector<xdev::PhysicalDevice> gpus = xdev::list_physical_devices("GPU");
  try {
    xdev::set_logical_device_configuration(gpus[0], {{.memory_limit = 512}});
    FAIL() << "reconfigured after initialization";
  } catch (const xdev::Error& e) {
    EXPECT_EQ(e.code(), xdev::ErrorCode::kFailedPrecondition);
    EXPECT_THAT(e.what(), HasSubstr("cannot be modified after being initialized"));
  }
  try {
    xdev::set_visible_devices(std::vector<xdev::PhysicalDevice>{}, "GPU");  // hides every GPU
    FAIL() << "changed visible devices after initialization";
  } catch (const xdev::Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("Visible devices cannot be modified after being initialized"));
  }
  EXPECT_EQ(xdev::list_logical_devices("GPU").size(), gpus.size() + 1);
}

}  // namespace
