// Fallback is never silent, and a program can ask what a device runs:
// has_kernel / list_kernels answer from the kernels plugins registered; the
// first fallback of each (op, dtypes, device) is warned about once at the
// default log level; the placement counters count every op that fell back, by
// missing kernel; FallbackPolicy::kError (XDEV_FALLBACK=error) makes a
// fallback an error.
//
// Two simulated GPUs (sim: float32 and float64 kernels only, whatever ops it
// registers) and the cpu plugin: an int32 or int64 op on GPU tensors has no
// kernel there and falls back to the CPU. The warnings are remembered for the
// whole process, so each test uses ops of its own.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <xdev/xdev.hpp>

#include "common/log.hpp"
#include "device_names.hpp"
#include "error_matchers.hpp"

namespace {

using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using xdev::DType;
using xdev::Tensor;
using xdev_test::ThrowsError;

using namespace xdev_test::devices;  // kCpu0, kGpu0, kGpu1

// The fallback warnings the log would print (the default level: warning).
class Fallback : public ::testing::Test {
 protected:
  void SetUp() override {
    xdev::set_soft_device_placement(true);
    xdev::set_fallback_policy(xdev::FallbackPolicy::kWarn);
    xdev::reset_placement_counters();
    previous_ = xdev::detail::set_log_sink([this](xdev_log_level_t level, std::string_view m) {
      std::lock_guard lock(mutex_);
      if (m.find("fallback") != std::string_view::npos) warnings_.emplace_back(m);
      EXPECT_EQ(level, XDEV_LOG_WARNING) << m;
    });
  }
  void TearDown() override {
    xdev::detail::set_log_sink(previous_);
    xdev::set_fallback_policy(xdev::FallbackPolicy::kWarn);
  }
  std::vector<std::string> warnings() {
    std::lock_guard lock(mutex_);
    return warnings_;
  }
  static Tensor ints(DType dtype = DType::kInt32) {
    return xdev::constant({1, 2, 3}, dtype);  // on GPU:0, the highest-priority device
  }
  static std::string on(const std::string& device) { return device + " (plugin sim)"; }

  std::mutex mutex_;
  std::vector<std::string> warnings_;
  xdev::detail::LogSink previous_;
};

TEST_F(Fallback, HasKernelAnswersForTheCpuAndTheSimulatedGpu) {
  // The cpu plugin runs every op on every dtype it is defined for.
  EXPECT_TRUE(xdev::has_kernel("CPU:0", "Exp", DType::kFloat32));
  EXPECT_TRUE(xdev::has_kernel("/device:CPU:0", "MatMul", DType::kInt64));
  EXPECT_TRUE(xdev::has_kernel("CPU:0", "Cast", DType::kFloat32, DType::kInt32));
  EXPECT_TRUE(xdev::has_kernel("CPU:0", "Equal", DType::kFloat32));  // -> bool, its output
  EXPECT_TRUE(xdev::has_kernel("CPU:0", "Equal", DType::kFloat32, DType::kBool));
  EXPECT_TRUE(xdev::has_kernel("CPU:0", "Select", DType::kBool, DType::kInt64));
  EXPECT_TRUE(xdev::has_kernel("CPU:0", "Fill", DType::kInt64));
  // Dtypes an op is not defined for have no kernel anywhere.
  EXPECT_FALSE(xdev::has_kernel("CPU:0", "Exp", DType::kInt32));
  EXPECT_FALSE(xdev::has_kernel("CPU:0", "Equal", DType::kFloat32, DType::kFloat32));
  EXPECT_FALSE(xdev::has_kernel("CPU:0", "Select", DType::kFloat32));  // by the condition
  // The simulated GPU: MatMul and Add on float32/float64, nothing on integers.
  for (const char* gpu : {"GPU:0", "/gpu:1"}) {
    EXPECT_TRUE(xdev::has_kernel(gpu, "MatMul", DType::kFloat32)) << gpu;
    EXPECT_TRUE(xdev::has_kernel(gpu, "Add", DType::kFloat64)) << gpu;
    EXPECT_FALSE(xdev::has_kernel(gpu, "MatMul", DType::kInt32)) << gpu;
    EXPECT_FALSE(xdev::has_kernel(gpu, "Add", DType::kInt64)) << gpu;
  }
}

TEST_F(Fallback, HasKernelNamesWhatItDoesNotKnow) {
  EXPECT_THAT([] { xdev::has_kernel("CPU:0", "exp", DType::kFloat32); },
              ThrowsError(xdev::ErrorCode::kNotFound, HasSubstr("unknown op \"exp\"")));
  EXPECT_THAT([] { xdev::has_kernel("GPU:7", "Exp", DType::kFloat32); },
              ThrowsError(xdev::ErrorCode::kNotFound,
                          HasSubstr("/job:localhost/replica:0/task:0/device:GPU:7 unknown device")));
  EXPECT_THAT([] { xdev::list_kernels("TPU:0"); },
              ThrowsError(xdev::ErrorCode::kNotFound, HasSubstr("device:TPU:0 unknown device")));
  EXPECT_THAT([] { xdev::has_kernel("CPU:0", "Exp", static_cast<DType>(99)); },
              ThrowsError(xdev::ErrorCode::kInvalidArgument,
                          HasSubstr("dtype code 99 is not a dtype")));
}

TEST_F(Fallback, ListKernelsAgreesWithHasKernel) {
  for (const std::string& device : {kCpu0, kGpu0}) {
    const std::vector<xdev::OpKernels> ops = xdev::list_kernels(device);
    ASSERT_FALSE(ops.empty());
    EXPECT_EQ(ops.front().op, "MatMul");  // the op table's order
    for (const xdev::OpKernels& op : ops) {
      for (const xdev::KernelDTypes& d : op.defined) {
        const bool listed =
            std::find(op.available.begin(), op.available.end(), d) != op.available.end();
        EXPECT_EQ(listed, xdev::has_kernel(device, op.op, d.input, d.output))
            << device << " " << op.op << " " << d.input << " -> " << d.output;
      }
      for (const xdev::KernelDTypes& d : op.available) {
        EXPECT_NE(std::find(op.defined.begin(), op.defined.end(), d), op.defined.end()) << op.op;
      }
      if (device == kCpu0) {
        EXPECT_EQ(op.available, op.defined) << op.op;  // the cpu runs all
      }
    }
  }
  // The simulated GPU has some kernels and not all.
  bool some = false, missing = false;
  for (const xdev::OpKernels& op : xdev::list_kernels("GPU:0")) {
    some = some || !op.available.empty();
    missing = missing || op.available != op.defined;
  }
  EXPECT_TRUE(some);
  EXPECT_TRUE(missing);
}

// The first fallback of each (op, dtypes, device) is warned about, once:
// repeated, on another thread, inside a scope or from other inputs' devices.
TEST_F(Fallback, WarnsOncePerOpDtypesAndDevice) {
  const Tensor x = ints();
  ASSERT_EQ(x.device().name, kGpu0);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(xdev::sub(x, x).device().name, kCpu0);
  std::thread([&] { xdev::sub(x, x); }).join();
  {
    xdev::DeviceScope scope("/GPU:0");
    xdev::sub(x, x);
  }
  EXPECT_THAT(warnings(), ElementsAre("fallback: no Sub int32 kernel on " + on(kGpu0) +
                                      ", where its inputs live; running it on " + kCpu0));

  // Another device, another dtype, another op: one warning each.
  const Tensor on_gpu1 = x.to("/GPU:1");
  xdev::sub(on_gpu1, on_gpu1);
  xdev::sub(on_gpu1, on_gpu1);
  const Tensor wide = ints(DType::kInt64);
  xdev::sub(wide, wide);
  xdev::sub(wide, wide);
  xdev::mul(x, x);
  {
    xdev::DeviceScope scope("/GPU:1");
    xdev::mul(x, x);
    xdev::mul(x, x);
  }
  const std::vector<std::string> all = warnings();
  ASSERT_EQ(all.size(), 5u) << ::testing::PrintToString(all);
  EXPECT_EQ(all[1], "fallback: no Sub int32 kernel on " + on(kGpu1) +
                        ", where its inputs live; running it on " + kCpu0);
  EXPECT_EQ(all[2], "fallback: no Sub int64 kernel on " + on(kGpu0) +
                        ", where its inputs live; running it on " + kCpu0);
  EXPECT_EQ(all[3], "fallback: no Mul int32 kernel on " + on(kGpu0) +
                        ", where its inputs live; running it on " + kCpu0);
  EXPECT_EQ(all[4], "fallback: no Mul int32 kernel on " + on(kGpu1) +
                        ", the scope's device; running it on " + kCpu0);
}

// Inputs on the CPU: the op would have run on the highest-priority device.
TEST_F(Fallback, NamesTheHighestPriorityDeviceWhenTheInputsLiveElsewhere) {
  Tensor x;
  {
    xdev::DeviceScope scope("/CPU:0");
    x = ints();
  }
  EXPECT_EQ(xdev::maximum(x, x).device().name, kCpu0);
  EXPECT_THAT(warnings(), ElementsAre("fallback: no Maximum int32 kernel on " + on(kGpu0) +
                                      ", the highest-priority device; running it on " + kCpu0));
  // An op the GPU has a kernel for runs there: no fallback, no warning.
  const Tensor f = xdev::constant({1.0f, 2.0f});
  EXPECT_EQ(xdev::add(f, f).device().name, kGpu0);
  EXPECT_EQ(warnings().size(), 1u);
}

TEST_F(Fallback, CountersCountEveryOpThatFellBackByMissingKernel) {
  const Tensor x = ints();
  const Tensor y = x.to("GPU:1");
  for (int i = 0; i < 3; ++i) xdev::minimum(x, x);
  for (int i = 0; i < 2; ++i) xdev::minimum(y, y);
  const Tensor f = xdev::constant({1.0f, 2.0f});
  xdev::add(f, f);  // has its kernel: not counted
  xdev::PlacementCounters counters = xdev::placement_counters();
  EXPECT_EQ(counters.fallbacks, 5u);
  ASSERT_EQ(counters.fallbacks_by_kernel.size(), 2u);
  const xdev::FallbackCount& first = counters.fallbacks_by_kernel[0];
  EXPECT_EQ(first.op, "Minimum");
  EXPECT_EQ(first.input, DType::kInt32);
  EXPECT_EQ(first.output, DType::kInt32);
  EXPECT_EQ(first.device, kGpu0);
  EXPECT_EQ(first.ran_on, kCpu0);
  EXPECT_EQ(first.ops, 3u);
  EXPECT_EQ(counters.fallbacks_by_kernel[1].device, kGpu1);
  EXPECT_EQ(counters.fallbacks_by_kernel[1].ops, 2u);
  // Warned once each, counted every time.
  EXPECT_EQ(warnings().size(), 2u);
  xdev::reset_placement_counters();
  counters = xdev::placement_counters();
  EXPECT_EQ(counters.fallbacks, 0u);
  EXPECT_THAT(counters.fallbacks_by_kernel, IsEmpty());
}

// The error names the op, its dtypes, the device and that it has no kernel;
// ops with their kernel still run. A decision cached under kWarn is made
// again when the policy changes.
TEST_F(Fallback, ErrorPolicyRefusesToFallBack) {
  const Tensor x = ints();
  xdev::floor_div(x, x);  // cached as a fallback
  xdev::set_fallback_policy(xdev::FallbackPolicy::kError);
  EXPECT_EQ(xdev::fallback_policy(), xdev::FallbackPolicy::kError);
  xdev::reset_placement_counters();
  EXPECT_THAT([&] { xdev::floor_div(x, x); },
              ThrowsError(xdev::ErrorCode::kUnimplemented,
                          AllOf(HasSubstr("FloorDiv(int32) cannot run: no FloorDiv int32 kernel "
                                          "on " + on(kGpu0) + ", where its inputs live"),
                                HasSubstr("XDEV_FALLBACK=error"))));
  {
    xdev::DeviceScope scope("/GPU:1");
    EXPECT_THAT([&] { xdev::floor_mod(x, x); },
                ThrowsError(xdev::ErrorCode::kUnimplemented,
                            HasSubstr("no FloorMod int32 kernel on " + on(kGpu1) +
                                      ", the scope's device")));
  }
  EXPECT_EQ(xdev::placement_counters().fallbacks, 0u);
  const Tensor f = xdev::constant({1.0f, 2.0f});
  EXPECT_EQ(xdev::add(f, f).device().name, kGpu0);
  {
    xdev::DeviceScope scope("/CPU:0");  // on a device with the kernel: no fallback
    EXPECT_EQ(xdev::floor_div(x, x).device().name, kCpu0);
  }
  xdev::set_fallback_policy(xdev::FallbackPolicy::kWarn);
  EXPECT_EQ(xdev::floor_div(x, x).device().name, kCpu0);
  EXPECT_THROW(xdev::set_fallback_policy(static_cast<xdev::FallbackPolicy>(7)), xdev::Error);
}

// Run with XDEV_FALLBACK=error (meson test fallback_environment).
TEST(FallbackEnvironment, ErrorFromTheEnvironment) {
  EXPECT_EQ(xdev::fallback_policy(), xdev::FallbackPolicy::kError);
  const Tensor x = xdev::constant({1, 2, 3});
  EXPECT_THAT([&] { xdev::square(x); },
              ThrowsError(xdev::ErrorCode::kUnimplemented,
                          HasSubstr("no Square int32 kernel on " + kGpu0)));
}

}  // namespace
