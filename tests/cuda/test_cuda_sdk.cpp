// The cuda plugin through the public SDK, as a user sees it.
//
// Everywhere: libxdev finds the in-tree cuda plugin, lists it (xdev-smi's
// plugin list) and counts its devices; without a GPU that is 0 devices, a
// reason, and num_gpus() == 0.
//
// With a GPU: every kernel against the cpu plugin's result on random data
// (inputs on /CPU:0; the op once under DeviceScope("/GPU:0"), once under
// "/CPU:0"), RandomUniform bit for bit against the generator of
// docs/ops.md, copies in every direction, ordering across devices, out of
// memory as a clear error, and the walkthrough (sdk/examples/walkthrough)
// with MatMul on GPU:0.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <xdev/plugin.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <iostream>
#include <sstream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <xdev/plugin.h>
#include <xdev/xdev.hpp>

#include "cuda_test_util.hpp"
#include "matmul_bound.hpp"

namespace {

using ::testing::AnyOf;
using ::testing::HasSubstr;
using xdev::DType;
using xdev::Shape;
using xdev::Tensor;
using xdev_cuda_test::GpuMatchesCpu;
using xdev_cuda_test::Same;
using xdev_cuda_test::Tolerance;
using xdev_cuda_test::random_tensor;

constexpr DType kNumberTypes[] = {DType::kFloat32, DType::kFloat64, DType::kInt32,
                                  DType::kInt64};
constexpr DType kAllTypes[] = {DType::kFloat32, DType::kFloat64, DType::kInt32, DType::kInt64,
                               DType::kBool};

std::string text(DType d) { return std::string(xdev::to_string(d)); }

// op(t) of a rank-2 host tensor, row-major, as T.
template <typename T>
std::vector<T> op_matrix(const xdev::HostTensor& t, bool transpose) {
  const int64_t rows = t.shape()[0], cols = t.shape()[1];
  std::vector<T> out(static_cast<size_t>(rows * cols));
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t j = 0; j < cols; ++j) {
      const T v = static_cast<T>(t.value_as_double(i * cols + j));
      out[static_cast<size_t>(transpose ? j * rows + i : i * cols + j)] = v;
    }
  }
  return out;
}

// MatMul on GPU:0 against the exact product: float results within the
// rounding-error bound of their own precision (matmul_bound.hpp), which
// TF32 would miss; integers exactly as the cpu plugin computes them.
::testing::AssertionResult GpuMatMulIsAccurate(const Tensor& a, const Tensor& b, bool ta,
                                               bool tb) {
  if (a.dtype() != DType::kFloat32 && a.dtype() != DType::kFloat64) {
    return GpuMatchesCpu([&] { return xdev::matmul(a, b, ta, tb); });
  }
  Tensor gpu;
  {
    xdev::DeviceScope scope("/GPU:0");
    gpu = xdev::matmul(a, b, ta, tb);
  }
  if (gpu.device().device_type != "GPU") {
    return ::testing::AssertionFailure() << "the op ran on " << gpu.device().name;
  }
  const xdev::HostTensor ha = a.to_host(), hb = b.to_host();
  const int64_t m = ta ? ha.shape()[1] : ha.shape()[0];
  const int64_t k = ta ? ha.shape()[0] : ha.shape()[1];
  const int64_t n = tb ? hb.shape()[0] : hb.shape()[1];
  std::string outside;
  if (a.dtype() == DType::kFloat32) {
    outside = xdev_cuda_test::matmul_outside_bound(op_matrix<float>(ha, ta),
                                                   op_matrix<float>(hb, tb),
                                                   gpu.to_vector<float>(), m, k, n,
                                                   xdev_cuda_test::kFloat32Roundoff);
  } else {
    outside = xdev_cuda_test::matmul_outside_bound(op_matrix<double>(ha, ta),
                                                   op_matrix<double>(hb, tb),
                                                   gpu.to_vector<double>(), m, k, n,
                                                   xdev_cuda_test::kFloat64Roundoff);
  }
  if (outside.empty()) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << outside;
}

Tolerance float_tolerance(DType dtype, double scale) {
  if (dtype == DType::kFloat32) return {1e-5 * scale, 1e-6 * scale};
  if (dtype == DType::kFloat64) return {1e-12 * scale, 1e-14 * scale};
  return {};
}

// ---------------------------------------------------------------------------
// Everywhere

TEST(CudaSdk, ThePluginIsListedWithItsDevicesOrTheReason) {
  const std::vector<xdev::PluginInfo> plugins = xdev::list_plugins();
  const xdev::PluginInfo* cuda = nullptr;
  std::cout << "plugins (as xdev-smi lists them):\n";
  for (const xdev::PluginInfo& p : plugins) {
    std::cout << "  " << (p.name.empty() ? "?" : p.name) << "  " << p.file << "  "
              << (p.loaded ? "loaded" : "skipped: " + p.reason) << "  " << p.status << "  ("
              << p.device_count << " devices)\n";
    if (p.name == "cuda") cuda = &p;
  }
  ASSERT_NE(cuda, nullptr) << "libxdev did not find the in-tree cuda plugin";
  EXPECT_TRUE(cuda->loaded) << cuda->reason;
  EXPECT_EQ(cuda->abi_version, "1." + std::to_string(XDEV_ABI_VERSION_MINOR));
  EXPECT_EQ(cuda->device_count, xdev::num_gpus());
  EXPECT_EQ(static_cast<size_t>(xdev::num_gpus()), xdev::list_physical_devices("GPU").size());
  std::cout << "Num GPUs Available: " << xdev::num_gpus() << "\n";
  if (cuda->device_count == 0) {
    EXPECT_THAT(cuda->status,
                AnyOf(HasSubstr("CUDA driver not found"), HasSubstr("no CUDA-capable device"),
                      HasSubstr("CUDA driver too old"), HasSubstr("CUDA unavailable")));
  } else {
    EXPECT_THAT(cuda->status, HasSubstr(std::to_string(cuda->device_count) + " device"));
  }
}

TEST(CudaSdk, WithoutAGpuEverythingFallsBackToTheCpu) {
  if (xdev::num_gpus() > 0) {
    // With a GPU the helpers return it (the no-GPU path is checked where
    // there is none; no skip here, tools/gpu-check fails on skips).
    EXPECT_EQ(xdev::try_gpu(0).device_type, "GPU");
    EXPECT_EQ(xdev::try_all_gpus().size(), static_cast<size_t>(xdev::num_gpus()));
    return;
  }
  EXPECT_EQ(xdev::num_gpus(), 0);
  EXPECT_TRUE(xdev::list_logical_devices("GPU").empty());
  EXPECT_EQ(xdev::try_gpu(0).device_type, "CPU");
  const std::vector<xdev::Device> all = xdev::try_all_gpus();
  ASSERT_EQ(all.size(), 1U);
  EXPECT_EQ(all[0].device_type, "CPU");
}

// ---------------------------------------------------------------------------
// With a GPU: the devices

TEST(CudaGpu, PhysicalDevicesAreDescribed) {
  XDEV_REQUIRE_GPU();
  for (const xdev::PhysicalDevice& d : xdev::list_physical_devices("GPU")) {
    std::cout << d.name << ": " << d.physical_device_desc << "\n";
    EXPECT_EQ(d.platform, "cuda");
    EXPECT_EQ(d.plugin, "cuda");
    EXPECT_GT(d.memory_limit, 0U);
    EXPECT_THAT(d.physical_device_desc, HasSubstr(", name: " + d.model + ", pci bus id: " +
                                                  d.bus_id + ", compute capability: "));
    EXPECT_EQ(d.properties.count("compute_capability"), 1U);
    EXPECT_EQ(d.properties.count("multiprocessor_count"), 1U);
  }
  // GPU before CPU in the device list (priority).
  EXPECT_EQ(xdev::list_physical_devices().front().device_type, "GPU");
}

// ---------------------------------------------------------------------------
// With a GPU: every kernel against the cpu plugin

TEST(CudaGpu, MatMulMatchesTheCpu) {
  XDEV_REQUIRE_GPU();
  uint64_t seed = 100;
  for (DType dtype : kNumberTypes) {
    for (bool ta : {false, true}) {
      for (bool tb : {false, true}) {
        for (auto [m, k, n] : {std::tuple<int64_t, int64_t, int64_t>{37, 53, 29},
                               {1, 7, 1}, {2, 3, 2}, {256, 300, 130}}) {
          SCOPED_TRACE(text(dtype) + " transpose_a=" + std::to_string(ta) + " transpose_b=" +
                       std::to_string(tb) + " m,k,n=" + std::to_string(m) + "," +
                       std::to_string(k) + "," + std::to_string(n));
          const Tensor a = random_tensor(dtype, ta ? Shape{k, m} : Shape{m, k}, seed++, -4, 4);
          const Tensor b = random_tensor(dtype, tb ? Shape{n, k} : Shape{k, n}, seed++, -4, 4);
          EXPECT_TRUE(GpuMatMulIsAccurate(a, b, ta, tb));
        }
      }
    }
  }
  // A transposed view as input (the core gathers it before MatMul).
  const Tensor a = random_tensor(DType::kFloat32, {64, 48}, 7);
  const Tensor b = random_tensor(DType::kFloat32, {64, 32}, 8);
  EXPECT_TRUE(GpuMatMulIsAccurate(xdev::transpose(a), b, false, false));
}

TEST(CudaGpu, LargeSgemmIsAccurate) {
  XDEV_REQUIRE_GPU();
  const Tensor a = random_tensor(DType::kFloat32, {1024, 1024}, 1);
  const Tensor b = random_tensor(DType::kFloat32, {1024, 1024}, 2);
  EXPECT_TRUE(GpuMatMulIsAccurate(a, b, false, false));
}

TEST(CudaGpu, ElementwiseWithBroadcastingMatchesTheCpu) {
  XDEV_REQUIRE_GPU();
  const std::vector<std::pair<Shape, Shape>> shapes = {
      {{1000, 33}, {1000, 33}}, {{5, 1, 7}, {1, 6, 7}}, {{4, 3}, {3}}, {{2, 3, 4}, {}},
      {{3, 1}, {1, 4}},         {{1}, {9}},             {{2, 1, 3, 1, 5}, {4, 1, 7, 1}},
      {{300, 1, 200}, {1, 70, 1}}};
  using Fn = Tensor (*)(const Tensor&, const Tensor&);
  const std::pair<const char*, Fn> ops[] = {
      {"add", &xdev::add}, {"sub", &xdev::sub}, {"mul", &xdev::mul}, {"div", &xdev::div}};
  uint64_t seed = 1000;
  for (DType dtype : kAllTypes) {
    for (const auto& [name, fn] : ops) {
      if (dtype == DType::kBool && std::string(name) != "add") continue;
      for (const auto& [sx, sy] : shapes) {
        SCOPED_TRACE(std::string(name) + " " + text(dtype));
        const Tensor x = random_tensor(dtype, sx, seed++, -9, 9);
        // Integer divisors include 0 (defined as 0) and -1.
        const Tensor y = random_tensor(dtype, sy, seed++, -3, 3);
        EXPECT_TRUE(GpuMatchesCpu([&] { return fn(x, y); }));
      }
    }
  }
}

TEST(CudaGpu, NegAndReluMatchTheCpu) {
  XDEV_REQUIRE_GPU();
  uint64_t seed = 2000;
  for (DType dtype : kNumberTypes) {
    SCOPED_TRACE(text(dtype));
    const Tensor x = random_tensor(dtype, {17, 31}, seed++, -5, 5);
    EXPECT_TRUE(GpuMatchesCpu([&] { return xdev::neg(x); }));
    EXPECT_TRUE(GpuMatchesCpu([&] { return xdev::relu(x); }));
    // A strided (broadcast) input.
    const Tensor column = random_tensor(dtype, {17, 1}, seed++, -5, 5);
    EXPECT_TRUE(GpuMatchesCpu([&] { return xdev::relu(xdev::add(column, x)); }));
  }
}

TEST(CudaGpu, AddNMatchesTheCpu) {
  XDEV_REQUIRE_GPU();
  uint64_t seed = 3000;
  for (DType dtype : kNumberTypes) {
    for (size_t n : {1, 2, 3, 7}) {
      SCOPED_TRACE(text(dtype) + " n=" + std::to_string(n));
      std::vector<Tensor> inputs;
      for (size_t i = 0; i < n; ++i) inputs.push_back(random_tensor(dtype, {13, 70}, seed++));
      EXPECT_TRUE(GpuMatchesCpu([&] { return xdev::add_n(inputs); }));
    }
  }
}

TEST(CudaGpu, CastMatchesTheCpuForEveryPair) {
  XDEV_REQUIRE_GPU();
  uint64_t seed = 4000;
  for (DType from : kAllTypes) {
    const Tensor x = random_tensor(from, {257, 3}, seed++, -100, 100);
    for (DType to : kAllTypes) {
      SCOPED_TRACE(text(from) + " -> " + text(to));
      EXPECT_TRUE(GpuMatchesCpu([&] { return xdev::cast(x, to); }));
    }
  }
}

TEST(CudaGpu, SumAndMeanMatchTheCpu) {
  XDEV_REQUIRE_GPU();
  struct Case {
    Shape shape;
    std::vector<int> axes;
  };
  const std::vector<Case> cases = {
      {{6, 7, 8}, {}},      {{6, 7, 8}, {0}},        {{6, 7, 8}, {1}},
      {{6, 7, 8}, {2}},     {{6, 7, 8}, {0, 2}},     {{6, 7, 8}, {0, 1, 2}},
      {{1 << 20}, {0}},     {{64, 4096}, {1}},       {{4096, 64}, {0}},
      {{3, 1 << 18}, {1}},  {{1 << 17, 3}, {0}},     {{100000, 5}, {1}},
      {{5, 0}, {1}},        {{0, 4}, {0}},           {{2, 3, 4, 5}, {1, 3}},
      // The reduction plans' shapes: many short rows (a warp per row), few wide
      // columns (column tiles, split into chunks), a square both ways.
      {{1 << 17, 64}, {1}}, {{65536, 64}, {0}},      {{1024, 1024}, {0}},
      {{1024, 1024}, {1}},  {{33, 70, 40}, {0, 1}},  {{3000, 100}, {1}},
  };
  uint64_t seed = 5000;
  for (DType dtype : kNumberTypes) {
    for (const Case& c : cases) {
      for (bool keepdims : {false, true}) {
        std::ostringstream trace;
        trace << text(dtype) << " shape " << c.shape << " axes " << c.axes.size()
              << " keepdims " << keepdims;
        SCOPED_TRACE(trace.str());
        const Tensor x = random_tensor(dtype, c.shape, seed++, -10, 10);
        const double n = std::max<double>(2.0, static_cast<double>(c.shape.num_elements()));
        const Tolerance tol = float_tolerance(dtype, 10.0 * std::log2(n));
        EXPECT_TRUE(GpuMatchesCpu([&] { return xdev::sum(x, c.axes, keepdims); }, tol));
        EXPECT_TRUE(GpuMatchesCpu([&] { return xdev::mean(x, c.axes, keepdims); }, tol));
      }
    }
  }
}

TEST(CudaGpu, CopyOfStridedViewsMatchesTheCpu) {
  XDEV_REQUIRE_GPU();
  uint64_t seed = 6000;
  for (DType dtype : kAllTypes) {
    SCOPED_TRACE(text(dtype));
    const Tensor x = random_tensor(dtype, {5, 6, 7}, seed++);
    EXPECT_TRUE(GpuMatchesCpu([&] { return xdev::transpose(x, {2, 0, 1}); }));
    EXPECT_TRUE(GpuMatchesCpu([&] { return xdev::transpose(x); }));
    const Tensor big = random_tensor(dtype, {1500, 1700}, seed++);
    EXPECT_TRUE(GpuMatchesCpu([&] { return xdev::transpose(big); }));
  }
}

TEST(CudaGpu, FillMatchesTheCpu) {
  XDEV_REQUIRE_GPU();
  for (DType dtype : kAllTypes) {
    for (double value : {0.0, 1.0, -2.75, 2.7, 1e10}) {
      if (dtype == DType::kInt32 && value == 1e10) continue;  // out of range: unspecified
      SCOPED_TRACE(text(dtype) + " " + std::to_string(value));
      EXPECT_TRUE(GpuMatchesCpu([&] { return xdev::fill({3, 1001}, value, dtype); }));
    }
    EXPECT_TRUE(GpuMatchesCpu([&] { return xdev::ones({7}, dtype); }));
    EXPECT_TRUE(GpuMatchesCpu([&] { return xdev::zeros({7, 9}, dtype); }));
  }
}

TEST(CudaGpu, RandomUniformIsTheGeneratorOfOpsMdBitForBit) {
  XDEV_REQUIRE_GPU();
  const uint64_t seed = 1234;
  const Shape shape = {1000, 3};
  for (DType dtype : {DType::kFloat32, DType::kFloat64}) {
    SCOPED_TRACE(text(dtype));
    Tensor gpu;
    {
      xdev::DeviceScope scope("/GPU:0");
      gpu = xdev::random_uniform(shape, -1.0, 3.0, dtype, seed);
    }
    ASSERT_EQ(gpu.device().device_type, "GPU");
    xdev::HostTensor want(dtype, shape);
    for (int64_t i = 0; i < shape.num_elements(); ++i) {
      const uint64_t x = xdev_cuda_test::random_bits(seed, static_cast<uint64_t>(i));
      if (dtype == DType::kFloat32) {
        const float u = static_cast<float>(x >> 40) * 0x1.0p-24f;
        const float lo = -1.0f, hi = 3.0f;
        const float v = lo + (hi - lo) * u;
        std::memcpy(want.bytes() + i * 4, &v, 4);
      } else {
        const double u = static_cast<double>(x >> 11) * 0x1.0p-53;
        const double v = -1.0 + (3.0 - -1.0) * u;
        std::memcpy(want.bytes() + i * 8, &v, 8);
      }
    }
    EXPECT_TRUE(Same(gpu.to_host(), want));
    EXPECT_TRUE(GpuMatchesCpu(
        [&] { return xdev::random_uniform(shape, -1.0, 3.0, dtype, seed); }));
  }
}

// ---------------------------------------------------------------------------
// With a GPU: copies, ordering, memory

TEST(CudaGpu, CopiesInEveryDirection) {
  XDEV_REQUIRE_GPU();
  for (int64_t n : {1, 3, 1001, 1 << 20}) {
    SCOPED_TRACE(n);
    const Tensor host = random_tensor(DType::kFloat64, {n}, static_cast<uint64_t>(n));
    const Tensor on_gpu = host.to("/GPU:0");                  // host -> device
    EXPECT_EQ(on_gpu.device().device_type, "GPU");
    EXPECT_EQ(on_gpu.to("/GPU:0").impl(), on_gpu.impl());     // same device: no copy
    const Tensor again = on_gpu.copy_to("/GPU:0");            // device -> device
    EXPECT_NE(again.impl(), on_gpu.impl());
    const Tensor back = again.to("/CPU:0");                   // device -> host
    EXPECT_TRUE(Same(back.to_host(), host.to_host()));
    EXPECT_TRUE(Same(again.to_host(), host.to_host()));       // device -> user memory
    const int gpus = xdev::num_gpus();
    if (gpus >= 2) {
      const Tensor peer = on_gpu.to("/GPU:1");                 // device -> device (peer)
      EXPECT_EQ(peer.device().id, 1);
      EXPECT_TRUE(Same(peer.to_host(), host.to_host()));
    }
  }
}

TEST(CudaGpu, StreamOrderingAcrossDevices) {
  XDEV_REQUIRE_GPU();
  if (xdev::num_gpus() < 2) {
    GTEST_SKIP() << "needs 2 GPUs, this machine has " << xdev::num_gpus();
  }
  const Tensor x = random_tensor(DType::kFloat32, {1024, 1024}, 11);
  const Tensor y = random_tensor(DType::kFloat32, {1024, 1024}, 12);
  auto pipeline = [&](const char* first, const char* second) {
    Tensor t;
    {
      xdev::DeviceScope scope(first);
      t = xdev::relu(xdev::sub(xdev::matmul(x, y), x));
      for (int i = 0; i < 5; ++i) t = xdev::add(t, t);
    }
    const Tensor moved = t.to(second);  // GPU:0 -> GPU:1 right after queueing
    xdev::DeviceScope scope(second);
    return xdev::sum(xdev::mul(moved, moved), {1});
  };
  const Tensor gpu = pipeline("/GPU:0", "/GPU:1");
  const Tensor cpu = pipeline("/CPU:0", "/CPU:0");
  EXPECT_EQ(gpu.device().id, 1);
  EXPECT_TRUE(Same(gpu.to_host(), cpu.to_host(), {1e-3, 1e-3}));
}

TEST(CudaGpu, OutOfMemoryIsAClearError) {
  XDEV_REQUIRE_GPU();
  xdev::DeviceScope scope("/GPU:0");
  try {
    const Tensor huge = xdev::zeros({int64_t{1} << 40}, DType::kFloat32);  // 4 TiB
    FAIL() << "allocated 4 TiB on " << huge.device().name;
  } catch (const xdev::Error& e) {
    EXPECT_EQ(e.code(), xdev::ErrorCode::kOutOfMemory) << e.what();
    EXPECT_THAT(e.what(), HasSubstr("GPU:0"));
    std::cout << "the error: " << e.what() << "\n";
  }
  // The device still works.
  const Tensor small = xdev::ones({16}, DType::kFloat32);
  EXPECT_EQ(small.to_vector<float>(), std::vector<float>(16, 1.0f));
}

TEST(CudaGpu, MemoryInfoCountsGpuTensors) {
  XDEV_REQUIRE_GPU();
  const uint64_t before = xdev::get_memory_info("GPU:0").current;
  Tensor t;
  {
    xdev::DeviceScope scope("/GPU:0");
    t = xdev::zeros({1 << 20}, DType::kFloat32);
  }
  const xdev::MemoryInfo info = xdev::get_memory_info("GPU:0");
  EXPECT_GE(info.current, before + (4u << 20));
  EXPECT_GE(info.peak, info.current);
}

// cuBLAS's workspace and a split reduction's partials are kernel scratch
// from GPU:0's pool (counted against its limit), back in the pool when
// the op returns.
TEST(CudaGpu, KernelScratchComesFromThePool) {
  XDEV_REQUIRE_GPU();
  xdev::DeviceScope scope("/GPU:0");
  const Tensor a = xdev::random_uniform({256, 256}, -1.0, 1.0, DType::kFloat32, 3);
  const Tensor rows = xdev::random_uniform({64, 8192}, -1.0, 1.0, DType::kFloat32, 4);
  const uint64_t output_bytes = 256 * 256 * 4;
  for (int round = 0; round < 2; ++round) {  // the second reuses pooled blocks
    xdev::reset_memory_stats("GPU:0");
    const xdev::MemoryInfo before = xdev::get_memory_info("GPU:0");
    const Tensor c = xdev::matmul(a, a);
    const xdev::MemoryInfo after = xdev::get_memory_info("GPU:0");
    EXPECT_EQ(after.total_allocations, before.total_allocations + 2);  // output + workspace
    EXPECT_EQ(after.current, before.current + output_bytes);
    EXPECT_GE(after.peak, before.current + output_bytes + (uint64_t{4} << 20));
    const Tensor s = xdev::sum(rows, {1});  // 64 long rows: split, partials in scratch
    EXPECT_EQ(xdev::get_memory_info("GPU:0").total_allocations, after.total_allocations + 2);
  }
}

// ---------------------------------------------------------------------------
// The walkthrough (sdk/examples/walkthrough), steps 1-3 and 5, with MatMul on GPU:0

TEST(CudaGpu, Walkthrough) {
  XDEV_REQUIRE_GPU();
  std::cout << "Num GPUs Available: " << xdev::num_gpus() << "\n";
  const std::string gpu0 = "/job:localhost/replica:0/task:0/device:GPU:0";

  // Step 2: placement logging; constants and MatMul go to the best device.
  xdev::set_log_device_placement(true);
  ::testing::internal::CaptureStderr();
  Tensor c;
  {
    const Tensor a = xdev::constant({{1.f, 2.f, 3.f}, {4.f, 5.f, 6.f}});
    const Tensor b = xdev::constant({{1.f, 2.f}, {3.f, 4.f}, {5.f, 6.f}});
    c = xdev::matmul(a, b);
  }
  const std::string log = ::testing::internal::GetCapturedStderr();
  xdev::set_log_device_placement(false);
  std::cout << log;
  EXPECT_THAT(log, HasSubstr("Executing op _EagerConst in device " + gpu0));
  EXPECT_THAT(log, HasSubstr("Executing op MatMul in device " + gpu0));
  EXPECT_EQ(c.device().name, gpu0);
  EXPECT_EQ(c.shape(), (Shape{2, 2}));
  EXPECT_EQ(c.dtype(), DType::kFloat32);
  EXPECT_EQ(c.to_vector<float>(), (std::vector<float>{22, 28, 49, 64}));
  std::ostringstream printed;
  printed << c;
  std::cout << printed.str() << "\n";
  EXPECT_THAT(printed.str(), HasSubstr("[[22. 28.] [49. 64.]]"));

  // Step 3: inputs on /CPU:0, MatMul outside the scope runs on GPU:0 and the
  // inputs are copied there automatically.
  Tensor a, b;
  {
    xdev::DeviceScope scope("/CPU:0");
    a = xdev::constant({{1.f, 2.f, 3.f}, {4.f, 5.f, 6.f}});
    b = xdev::constant({{1.f, 2.f}, {3.f, 4.f}, {5.f, 6.f}});
  }
  EXPECT_EQ(a.device().device_type, "CPU");
  xdev::reset_placement_counters();
  c = xdev::matmul(a, b);
  EXPECT_EQ(c.device().name, gpu0);
  EXPECT_EQ(xdev::placement_counters().implicit_copies, 2U);
  EXPECT_EQ(c.to_vector<float>(), (std::vector<float>{22, 28, 49, 64}));

  // Step 5: a GPU that does not exist.
  const std::string missing = "/device:GPU:" + std::to_string(xdev::num_gpus());
  xdev::set_soft_device_placement(false);
  try {
    xdev::DeviceScope scope(missing);
    (void)xdev::matmul(a, b);
    ADD_FAILURE() << "MatMul on " << missing << " did not fail";
  } catch (const xdev::Error& e) {
    EXPECT_THAT(e.what(), HasSubstr(missing));
    EXPECT_THAT(e.what(), HasSubstr("unknown device"));
  }
  xdev::set_soft_device_placement(true);
  {
    xdev::DeviceScope scope(missing);
    c = xdev::matmul(a, b);
  }
  EXPECT_EQ(c.to_vector<float>(), (std::vector<float>{22, 28, 49, 64}));
}

}  // namespace
