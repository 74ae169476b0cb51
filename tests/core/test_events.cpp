// <xdev/event.hpp>: synchronize(device), events recorded on a device's
// stream, waited for, queried and timed (ABI 1.4's event_elapsed_ms), on the
// sim GPUs (asynchronous streams that sleep XDEV_SIM_DELAY_US before each
// copy and kernel), the cpu and the minimal test plugin (no timing).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <xdev/xdev.hpp>

#include "error_matchers.hpp"

namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using xdev_test::ThrowsError;

xdev::Tensor slow_matmul_on(const char* device) {
  xdev::DeviceScope scope(device);
  auto a = xdev::constant({{1.f, 2.f}, {3.f, 4.f}});
  return xdev::matmul(a, a);
}

TEST(Events, SynchronizeADeviceAndAll) {
  auto c = slow_matmul_on("/GPU:0");
  EXPECT_NO_THROW(xdev::synchronize("GPU:0"));
  EXPECT_NO_THROW(xdev::synchronize(c.device()));
  EXPECT_NO_THROW(xdev::synchronize());
  EXPECT_THAT([&] { xdev::synchronize("/GPU:7"); },
              ThrowsError(xdev::ErrorCode::kNotFound, HasSubstr("GPU:7")));
}

TEST(Events, RecordQuerySynchronize) {
  xdev::Event never("/GPU:0");
  EXPECT_FALSE(never.recorded());
  EXPECT_TRUE(never.query());  // a never-recorded event counts as completed
  xdev::Event e("/GPU:0");
  EXPECT_EQ(e.device().name, "/job:localhost/replica:0/task:0/device:GPU:0");
  slow_matmul_on("/GPU:0");
  e.record();
  EXPECT_TRUE(e.recorded());
  e.synchronize();
  EXPECT_TRUE(e.query());
}

TEST(Events, ElapsedMeasuresDeviceTimeNotEnqueueTime) {
  xdev::Event start("/GPU:0"), end("/GPU:0");
  auto a = [] {
    xdev::DeviceScope scope("/GPU:0");
    return xdev::constant({{1.f, 2.f}, {3.f, 4.f}});
  }();
  xdev::synchronize("/GPU:0");
  start.record();
  xdev::Tensor c;
  {
    xdev::DeviceScope scope("/GPU:0");
    c = xdev::matmul(a, a);  // the sim sleeps XDEV_SIM_DELAY_US (20 ms) before it runs
  }
  end.record();
  const double ms = xdev::elapsed_ms(start, end);  // waits for `end`
  EXPECT_GE(ms, 20.0);  // the kernel's sleep lies between the marks
  EXPECT_EQ(c.to_vector<float>(), (std::vector<float>{7.f, 10.f, 15.f, 22.f}));
  EXPECT_LE(xdev::elapsed_ms(end, start), -20.0);  // reversed: negative
}

TEST(Events, ElapsedOnTheCpu) {
  xdev::Event start("/CPU:0"), end("/CPU:0");
  start.record();
  end.record();
  EXPECT_GE(xdev::elapsed_ms(start, end), 0.0);
}

TEST(Events, ElapsedErrorsNameWhatIsWrong) {
  xdev::Event a("/GPU:0"), b("/GPU:1"), unrecorded("/GPU:0");
  a.record();
  b.record();
  EXPECT_THAT([&] { xdev::elapsed_ms(a, b); },
              ThrowsError(xdev::ErrorCode::kInvalidArgument, HasSubstr("two devices")));
  EXPECT_THAT([&] { xdev::elapsed_ms(a, unrecorded); },
              ThrowsError(xdev::ErrorCode::kFailedPrecondition,
                          HasSubstr("end event was never recorded")));
}

TEST(Events, APluginWithoutTimingSaysSo) {
  xdev::Event start("/TEST:0"), end("/TEST:0");
  start.record();
  end.record();
  EXPECT_THAT([&] { xdev::elapsed_ms(start, end); },
              ThrowsError(xdev::ErrorCode::kUnimplemented,
                          AllOf(HasSubstr("plugin minimal"), HasSubstr("XDEV_CAP_EVENT_TIMING"))));
}

TEST(Events, WaitOrdersAnotherDevicesStream) {
  auto c = slow_matmul_on("/GPU:0");
  xdev::Event done("/GPU:0");
  done.record();
  done.wait("/GPU:1");  // GPU:1's later work waits for GPU:0's matmul
  done.wait("/CPU:0");  // another plugin: the host waits
  EXPECT_TRUE(done.query());
}

}  // namespace
