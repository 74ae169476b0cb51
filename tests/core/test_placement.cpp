// Placement and the eager layer against the simulated accelerator (type GPU,
// platform "sim", two devices, only MatMul and Add kernels) and the cpu
// plugin: the walkthrough of docs/behaviour.md, B5-B12, B24, X1, X8. Uses only the public
// SDK, linked like a user program.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include <xdev/xdev.hpp>

#include "device_names.hpp"
#include "error_matchers.hpp"

namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::StrEq;
using ::testing::internal::CaptureStderr;
using ::testing::internal::GetCapturedStderr;

using namespace xdev_test::devices;  // kCpu0, kGpu1, ...
using xdev_test::ThrowsError;

class Placement : public ::testing::Test {
 protected:
  void SetUp() override {
    xdev::set_soft_device_placement(true);
    xdev::set_log_device_placement(false);
    xdev::reset_placement_counters();
    xdev::clear_recent_placements();
  }
  void TearDown() override {
    xdev::set_soft_device_placement(true);
    xdev::set_log_device_placement(false);
  }
  static xdev::Tensor a() { return xdev::constant({{1.f, 2.f, 3.f}, {4.f, 5.f, 6.f}}); }
  static xdev::Tensor b() { return xdev::constant({{1.f, 2.f}, {3.f, 4.f}, {5.f, 6.f}}); }
};

TEST_F(Placement, SeesTheSimulatedGpusAndTheCpu) {
  EXPECT_EQ(xdev::num_gpus(), 2);
  auto logical = xdev::list_logical_devices();
  ASSERT_EQ(logical.size(), 3u);
  EXPECT_EQ(logical[0].name, kGpu0);
  EXPECT_EQ(logical[1].name, kGpu1);
  EXPECT_EQ(logical[2].name, kCpu0);
  EXPECT_EQ(xdev::try_gpu(1).name, kGpu1);
  EXPECT_EQ(xdev::try_gpu(5).name, kCpu0);
  EXPECT_EQ(xdev::try_all_gpus().size(), 2u);
}

// Walkthrough step 2 and B5, B9: the log lines are exact.
TEST_F(Placement, MatMulRunsOnTheBestDeviceAndIsLogged) {
  xdev::set_log_device_placement(true);
  CaptureStderr();
  xdev::Tensor c = xdev::matmul(a(), b());
  std::string log = GetCapturedStderr();
  xdev::set_log_device_placement(false);
  EXPECT_EQ(log, "Executing op _EagerConst in device " + kGpu0 + "\n" +
                     "Executing op _EagerConst in device " + kGpu0 + "\n" +
                     "Executing op MatMul in device " + kGpu0 + "\n");
  EXPECT_EQ(c.device().name, kGpu0);
  std::ostringstream printed;
  printed << c;
  EXPECT_EQ(printed.str(), "tf.Tensor([[22. 28.] [49. 64.]], shape=(2, 2), dtype=float32)");
  EXPECT_EQ(c.dtype(), xdev::DType::kFloat32);
  EXPECT_EQ(c.shape(), (xdev::Shape{2, 2}));
}

// Walkthrough step 3, B7, B8, X8.
TEST_F(Placement, InputsCreatedUnderACpuScopeAreCopiedToTheOpsDevice) {
  xdev::Tensor x, y;
  {
    xdev::DeviceScope scope("/CPU:0");
    x = a();
    y = b();
  }
  EXPECT_EQ(x.device().name, kCpu0);
  EXPECT_EQ(y.device().name, kCpu0);
  xdev::reset_placement_counters();
  xdev::Tensor c = xdev::matmul(x, y);
  EXPECT_EQ(c.device().name, kGpu0);
  EXPECT_EQ(c.to_vector<float>(), (std::vector<float>{22, 28, 49, 64}));
  xdev::PlacementCounters counters = xdev::placement_counters();
  EXPECT_EQ(counters.implicit_copies, 2u);
  EXPECT_EQ(counters.implicit_copy_bytes, 48u);
  ASSERT_EQ(counters.implicit_copies_by_pair.size(), 1u);
  EXPECT_EQ(counters.implicit_copies_by_pair[0].from, kCpu0);
  EXPECT_EQ(counters.implicit_copies_by_pair[0].to, kGpu0);
  EXPECT_EQ(counters.implicit_copies_by_pair[0].copies, 2u);
  EXPECT_EQ(counters.read_backs, 1u);
  EXPECT_EQ(counters.read_back_bytes, 16u);
}

TEST_F(Placement, NestedScopesInnermostWinsAndScopesArePerThread) {
  xdev::DeviceScope outer("/GPU:1");
  {
    xdev::DeviceScope inner("cpu:0");
    EXPECT_EQ(xdev::add(a(), a()).device().name, kCpu0);
  }
  EXPECT_EQ(xdev::add(a(), a()).device().name, kGpu1);
  std::string other_thread;
  std::thread([&] { other_thread = xdev::add(a(), a()).device().name; }).join();
  EXPECT_EQ(other_thread, kGpu0);
}

// B6: Cast has only a CPU kernel; it falls back even inside a GPU scope.
TEST_F(Placement, CastFallsBackToTheCpu) {
  xdev::Tensor x = a();
  EXPECT_EQ(x.device().name, kGpu0);
  xdev::Tensor unscoped = xdev::cast(x, xdev::DType::kInt32);
  EXPECT_EQ(unscoped.device().name, kCpu0);
  {
    xdev::DeviceScope scope("/GPU:0");
    xdev::Tensor scoped = xdev::cast(x, xdev::DType::kInt32);
    EXPECT_EQ(scoped.device().name, kCpu0);
    EXPECT_EQ(scoped.to_vector<int32_t>(), (std::vector<int32_t>{1, 2, 3, 4, 5, 6}));
  }
  xdev::PlacementCounters counters = xdev::placement_counters();
  EXPECT_EQ(counters.fallbacks, 2u);
  EXPECT_EQ(counters.soft_placements, 1u);
  auto records = xdev::recent_placements();
  ASSERT_FALSE(records.empty());
  const xdev::PlacementRecord& last = records.back();
  EXPECT_EQ(last.op, "Cast");
  EXPECT_EQ(last.device, kCpu0);
  EXPECT_EQ(last.requested, kGpu0);
  EXPECT_EQ(last.rule, "fallback");
  ASSERT_FALSE(last.rejected.empty());
  EXPECT_EQ(last.rejected[0].first, kGpu0);
  EXPECT_THAT(last.rejected[0].second,
              HasSubstr("has no kernel for Cast(float32 to int32) (type GPU, plugin sim)"));
  EXPECT_EQ(last.bytes_copied, 24u);
}

// B10 and B11: an unknown device.
TEST_F(Placement, UnknownDeviceFailsWithSoftPlacementOffAndIsRedirectedWithItOn) {
  xdev::Tensor x = a();
  xdev::Tensor y = b();
  xdev::set_soft_device_placement(false);
  {
    xdev::DeviceScope scope("/device:GPU:2");
    const std::string gpu2 = xdev_test::logical_device_name("GPU", 2);
    EXPECT_THAT([&] { xdev::matmul(x, y); },
                ThrowsError(xdev::ErrorCode::kNotFound, HasSubstr(gpu2 + " unknown device")));
    EXPECT_THROW(xdev::constant({1.f}), xdev::Error);
  }
  {
    // No kernel on the scope's device, soft placement off: an error too.
    xdev::DeviceScope scope("/GPU:0");
    EXPECT_THAT([&] { xdev::cast(x, xdev::DType::kInt32); },
                ThrowsError(xdev::ErrorCode::kUnimplemented,
                            HasSubstr(kGpu0 + " has no kernel for Cast(float32 to int32)")));
  }
  xdev::set_soft_device_placement(true);
  xdev::reset_placement_counters();
  CaptureStderr();
  xdev::Tensor c;
  {
    xdev::DeviceScope scope("/device:GPU:2");
    c = xdev::matmul(x, y);
  }
  std::string warning = GetCapturedStderr();
  EXPECT_EQ(c.device().name, kGpu0);
  EXPECT_THAT(warning, HasSubstr("soft placement: MatMul(float32) asked for "
                                 "/job:localhost/replica:0/task:0/device:GPU:2, which is an "
                                 "unknown device; running it on " + kGpu0));
  EXPECT_EQ(xdev::placement_counters().soft_placements, 1u);
  // The warning is given once.
  CaptureStderr();
  {
    xdev::DeviceScope scope("/device:GPU:2");
    xdev::matmul(x, y);
  }
  EXPECT_EQ(GetCapturedStderr(), "");
}

// B12: to() on the same device is the same tensor; copy_to always copies.
TEST_F(Placement, SameDeviceRule) {
  xdev::Tensor x = a();
  xdev::Tensor same = x.to("/GPU:0");
  EXPECT_EQ(same.impl(), x.impl());
  xdev::MemoryInfo before = xdev::get_memory_info("GPU:0");
  xdev::Tensor again = x.to(xdev::try_gpu(0));
  EXPECT_EQ(again.impl(), x.impl());
  EXPECT_EQ(xdev::get_memory_info("GPU:0").num_allocations, before.num_allocations);
  xdev::Tensor copy = x.copy_to("/GPU:0");
  EXPECT_NE(copy.impl(), x.impl());
  EXPECT_EQ(copy.to_vector<float>(), x.to_vector<float>());
  xdev::Tensor moved = x.to("/GPU:1");
  EXPECT_EQ(moved.device().name, kGpu1);
  EXPECT_EQ(moved.to_vector<float>(), x.to_vector<float>());
  EXPECT_EQ(xdev::placement_counters().explicit_copies, 2u);
}

TEST_F(Placement, StrictModeMakesImplicitCopiesAnError) {
  xdev::Tensor x, y;
  {
    xdev::DeviceScope scope("/CPU:0");
    x = a();
  }
  y = b();  // on GPU:0
  {
    xdev::StrictPlacement strict;
    EXPECT_THAT([&] { xdev::matmul(x, y); },
                ThrowsError(xdev::ErrorCode::kFailedPrecondition,
                            HasSubstr("MatMul: input 0 lives on " + kCpu0 +
                                      " but the op runs on " + kGpu0)));
    // Explicit moves are fine.
    EXPECT_EQ(xdev::matmul(x.to("/GPU:0"), y).device().name, kGpu0);
  }
  // Outside the strict scope the copy happens again.
  EXPECT_EQ(xdev::matmul(x, y).device().name, kGpu0);
}

// When the op leaves its inputs' device because that device has no kernel
// for it, the strict-placement error says so instead of blaming where the
// input lives.
TEST_F(Placement, StrictModeNamesTheMissingKernel) {
  xdev::Tensor x = a();  // on GPU:0; the sim has no Sub kernel
  xdev::StrictPlacement strict;
  EXPECT_THAT([&] { xdev::sub(x, x); },
              ThrowsError(xdev::ErrorCode::kFailedPrecondition,
                          AllOf(HasSubstr("no kernel for op Sub on device " + kGpu0 +
                                          " (dtype float32)"),
                                HasSubstr("it would run on " + kCpu0))));
}

// Tensor creations are placement records too (_EagerConst).
TEST_F(Placement, RecentPlacementsIncludeEagerConst) {
  xdev::clear_recent_placements();
  xdev::Tensor x = a();
  {
    xdev::DeviceScope scope("/GPU:1");
    xdev::Tensor y = b();
  }
  auto records = xdev::recent_placements();
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0].op, "_EagerConst");
  EXPECT_EQ(records[0].device, kGpu0);
  EXPECT_EQ(records[0].rule, "priority");
  EXPECT_EQ(records[1].op, "_EagerConst");
  EXPECT_EQ(records[1].device, kGpu1);
  EXPECT_EQ(records[1].requested, kGpu1);
  EXPECT_EQ(records[1].rule, "scope");
  {
    xdev::DeviceScope scope("/GPU:9");
    xdev::Tensor z = b();
  }
  const xdev::PlacementRecord soft = xdev::recent_placements().back();
  EXPECT_EQ(soft.op, "_EagerConst");
  EXPECT_EQ(soft.rule, "soft placement");
  EXPECT_EQ(soft.requested, "/job:localhost/replica:0/task:0/device:GPU:9");
}

// Inputs on one device of the best type stay there (B25's basis).
TEST_F(Placement, OpsFollowTheirInputsAmongDevicesOfTheBestType) {
  xdev::Tensor x = a().to("/GPU:1");
  xdev::Tensor y = b().to("/GPU:1");
  xdev::reset_placement_counters();
  xdev::Tensor c = xdev::matmul(x, y);
  EXPECT_EQ(c.device().name, kGpu1);
  EXPECT_EQ(xdev::placement_counters().implicit_copies, 0u);
  EXPECT_EQ(xdev::recent_placements().back().rule, "inputs");
}

// Add with broadcasting on the simulated device (stride-0 inputs).
TEST_F(Placement, BroadcastAddOnTheAccelerator) {
  xdev::Tensor row = xdev::constant({10.f, 20.f, 30.f});
  xdev::Tensor sum = a() + row;
  EXPECT_EQ(sum.device().name, kGpu0);
  EXPECT_EQ(sum.to_vector<float>(), (std::vector<float>{11, 22, 33, 14, 25, 36}));
}

TEST_F(Placement, AddNCombinesTensorsFromDifferentDevices) {
  xdev::Tensor on_gpu1 = xdev::matmul(a().to("/GPU:1"), b().to("/GPU:1"));
  xdev::Tensor on_gpu0 = xdev::matmul(a(), b());
  xdev::Tensor total;
  {
    xdev::DeviceScope scope("/CPU:0");
    total = xdev::add_n({on_gpu0, on_gpu1});
  }
  EXPECT_EQ(total.device().name, kCpu0);
  EXPECT_EQ(total.to_vector<float>(), (std::vector<float>{44, 56, 98, 128}));
}

TEST_F(Placement, ThePlacementCallbackSeesEveryOp) {
  std::vector<std::string> seen;
  xdev::set_placement_callback([&](const xdev::PlacementRecord& r) { seen.push_back(r.op); });
  xdev::matmul(a(), b());
  xdev::set_placement_callback(nullptr);
  xdev::matmul(a(), b());
  // Creations are placements too (_EagerConst in the records).
  EXPECT_EQ(seen, (std::vector<std::string>{"_EagerConst", "_EagerConst", "MatMul"}));
}

TEST_F(Placement, ConfigurationAfterInitializationFails) {
  xdev::list_logical_devices();
  auto gpus = xdev::list_physical_devices("GPU");
  EXPECT_THAT([&] { xdev::set_visible_devices({gpus[0]}, "GPU"); },
              ThrowsError(xdev::ErrorCode::kFailedPrecondition,
                          StrEq("Visible devices cannot be modified after being initialized")));
  EXPECT_THROW(xdev::set_memory_growth(gpus[0], true), xdev::Error);
  EXPECT_THROW(xdev::set_logical_device_configuration(gpus[0], {{.memory_limit = 64}}),
               xdev::Error);
  EXPECT_FALSE(xdev::get_memory_growth(gpus[0]));
  EXPECT_TRUE(xdev::get_logical_device_configuration(gpus[0]).empty());
  EXPECT_EQ(xdev::list_logical_devices("GPU").size(), 2u);
}

}  // namespace
