// Scopes belong to the thread that made them. A DeviceScope or
// StrictPlacement destroyed on another thread must not touch either
// thread's stack (it used to pop the destroying thread's empty vector: UB,
// usually a crash); the error is logged and the owning thread's next
// placement call throws xdev::Error(kFailedPrecondition) once.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <thread>

#include <xdev/xdev.hpp>

#include "device_names.hpp"
#include "error_matchers.hpp"

namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::internal::CaptureStderr;
using ::testing::internal::GetCapturedStderr;
using xdev_test::ThrowsError;
using namespace xdev_test::devices;  // kCpu0, kGpu1


xdev::Tensor one() { return xdev::constant({1.f, 2.f}); }

TEST(ScopeThreads, DeviceScopeDestroyedOnAnotherThreadIsReportedNotUndefined) {
  auto scope = std::make_unique<xdev::DeviceScope>("/GPU:1");
  EXPECT_EQ(one().device().name, kGpu1);
  // Another thread, with its own (empty) stack and its own scope, destroys it.
  CaptureStderr();
  std::thread other([&] {
    xdev::DeviceScope own("/CPU:0");
    scope.reset();
    // The other thread's own stack is intact: its scope still rules.
    EXPECT_EQ(one().device().name, kCpu0);
  });
  other.join();
  std::string log = GetCapturedStderr();
  EXPECT_THAT(log, HasSubstr("DeviceScope #"));
  EXPECT_THAT(log, HasSubstr("was destroyed on thread #"));
  EXPECT_THAT(log, HasSubstr("scopes belong to the thread that made them"));
  // This thread learns it at its next placement call, once.
  EXPECT_THAT([] { one(); },
              ThrowsError(xdev::ErrorCode::kFailedPrecondition,
                          AllOf(HasSubstr("DeviceScope(\"/GPU:1\") made on this thread"),
                                HasSubstr("destroyed on another thread"))));
  // Then the stack is back to what it was before the scope: no scope.
  EXPECT_NE(one().device().name, kGpu1);
  EXPECT_TRUE(xdev::recent_placements().size() > 0);
}

TEST(ScopeThreads, OuterScopesSurviveAnInnerOneDestroyedElsewhere) {
  xdev::DeviceScope outer("/CPU:0");
  auto inner = std::make_unique<xdev::DeviceScope>("/GPU:1");
  CaptureStderr();
  std::thread([&] { inner.reset(); }).join();
  GetCapturedStderr();
  EXPECT_THROW(one(), xdev::Error);
  EXPECT_EQ(one().device().name, kCpu0);
}

TEST(ScopeThreads, ScopeOfAnExitedThreadDestroyedLaterIsOnlyLogged) {
  std::unique_ptr<xdev::DeviceScope> scope;
  std::thread([&] { scope = std::make_unique<xdev::DeviceScope>("/GPU:1"); }).join();
  CaptureStderr();
  scope.reset();
  std::string log = GetCapturedStderr();
  EXPECT_THAT(log, HasSubstr("That thread has exited"));
  EXPECT_NO_THROW(one());
}

TEST(ScopeThreads, StrictPlacementDestroyedOnAnotherThread) {
  auto strict = std::make_unique<xdev::StrictPlacement>();
  CaptureStderr();
  std::thread([&] { strict.reset(); }).join();
  std::string log = GetCapturedStderr();
  EXPECT_THAT(log, HasSubstr("StrictPlacement #"));
  EXPECT_THAT([] { one(); }, ThrowsError(xdev::ErrorCode::kFailedPrecondition,
                                         HasSubstr("StrictPlacement made on this thread")));
  // Strict placement is off again: a cross-device op copies instead of failing.
  xdev::Tensor a = one().to("/GPU:1");
  xdev::Tensor b = one().to("/CPU:0");
  EXPECT_NO_THROW(xdev::add(a, b));
}

TEST(ScopeThreads, ScopesDestroyedOutOfOrderOnTheirThreadRemoveThemselves) {
  auto first = std::make_unique<xdev::DeviceScope>("/GPU:1");
  auto second = std::make_unique<xdev::DeviceScope>("/CPU:0");
  CaptureStderr();
  first.reset();
  std::string log = GetCapturedStderr();
  EXPECT_THAT(log, HasSubstr("destroyed before the scopes made after it"));
  EXPECT_EQ(one().device().name, kCpu0);
  second.reset();
  EXPECT_NE(one().device().name, kCpu0);  // no scope left: the best device
}

}  // namespace
