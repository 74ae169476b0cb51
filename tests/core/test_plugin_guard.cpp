// Every call from the core into a plugin is guarded
// (core/common/plugin_call.hpp). The throwing test plugin
// (tests/plugins/throwing) lets C++ exceptions escape from two kernels and a
// slot; each must reach the user as xdev::Error(INTERNAL) naming the plugin
// file, the kernel or slot and the device, and the CPU must keep working.
// Statuses with code OK or an unknown code become INTERNAL too.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include <xdev/xdev.hpp>

#include "common/plugin_call.hpp"
#include "common/status.hpp"

namespace {

using ::testing::HasSubstr;

const std::string kExample = "/job:localhost/replica:0/task:0/device:EXAMPLE:0";
const std::string kCpu0 = "/job:localhost/replica:0/task:0/device:CPU:0";

xdev::Error expect_internal(const std::function<void()>& call) {
  try {
    call();
  } catch (const xdev::Error& e) {
    EXPECT_EQ(e.code(), xdev::ErrorCode::kInternal) << e.what();
    return e;
  } catch (const std::exception& e) {
    ADD_FAILURE() << "a raw " << typeid(e).name() << " reached the user: " << e.what();
    throw;
  }
  ADD_FAILURE() << "no error";
  return xdev::Error(xdev::ErrorCode::kInternal, "");
}

TEST(PluginGuard, KernelThrowingStdExceptionBecomesInternalError) {
  xdev::DeviceScope scope("/EXAMPLE:0");
  xdev::Tensor x = xdev::constant({1.f, 2.f});
  ASSERT_EQ(x.device().name, kExample);
  xdev::Error e = expect_internal([&] { xdev::add(x, x); });
  EXPECT_THAT(e.what(), HasSubstr("kernel Add(float32) of plugin "));
  EXPECT_THAT(e.what(), HasSubstr("xdev_test_throwing.so"));
  EXPECT_THAT(e.what(), HasSubstr("on device " + kExample));
  EXPECT_THAT(e.what(), HasSubstr("std::runtime_error: throwing plugin: the Add kernel throws"));
}

TEST(PluginGuard, KernelThrowingSomethingElseBecomesInternalError) {
  xdev::DeviceScope scope("/EXAMPLE:0");
  xdev::Tensor x = xdev::constant({1.f, 2.f});
  xdev::Error e = expect_internal([&] { xdev::neg(x); });
  EXPECT_THAT(e.what(), HasSubstr("kernel Neg(float32) of plugin "));
  EXPECT_THAT(e.what(), HasSubstr("an exception of type int"));
}

TEST(PluginGuard, SlotThrowingBecomesInternalErrorAndTheCpuKeepsWorking) {
  xdev::Tensor x;
  {
    xdev::DeviceScope scope("/EXAMPLE:0");
    x = xdev::constant({1.f, 2.f});
  }
  xdev::Error e = expect_internal([&] { x.to_vector<float>(); });
  EXPECT_THAT(e.what(), HasSubstr("copy_device_to_host of plugin "));
  EXPECT_THAT(e.what(), HasSubstr("xdev_test_throwing.so on device " + kExample));
  EXPECT_THAT(e.what(), HasSubstr("std::logic_error"));
  // The runtime stays usable: the CPU computes, and the throwing device
  // still takes uploads and runs nothing else wrong.
  xdev::Tensor y = xdev::constant({3.f, 4.f});
  EXPECT_EQ(y.device().name, kCpu0);
  EXPECT_EQ(xdev::add(y, y).to_vector<float>(), (std::vector<float>{6.f, 8.f}));
  {
    xdev::DeviceScope scope("/EXAMPLE:0");
    EXPECT_EQ(xdev::constant({5.f}).device().name, kExample);
  }
  EXPECT_THROW(xdev::add(x, x), xdev::Error);
  EXPECT_EQ(xdev::add(y, y).to_vector<float>(), (std::vector<float>{6.f, 8.f}));
}

TEST(PluginGuard, StatusWithCodeOkOrUnknownCodeBecomesInternal) {
  using namespace xdev::detail;
  const PluginCallSite site{"/p/x.so", "stream_synchronize", "/device:X:0"};
  xdev_status_t* ok = checked_status(site, make_status(XDEV_STATUS_OK, "all fine"));
  ASSERT_NE(ok, nullptr);
  EXPECT_EQ(ok->code, XDEV_STATUS_INTERNAL);
  EXPECT_THAT(take_message(ok),
              HasSubstr("stream_synchronize of plugin /p/x.so on device /device:X:0 returned a "
                        "status with code OK (success is NULL): all fine"));
  // As the host's status_create makes it from a plugin's int (a C plugin
  // may pass any; 77 loaded as the C enum would be undefined in C++).
  xdev_status_t* odd = checked_status(site, make_status_from_int(77, ""));
  EXPECT_THAT(take_message(odd), HasSubstr("unknown code 77: (no message)"));
  EXPECT_EQ(checked_status(site, nullptr), nullptr);
  xdev_status_t* kept = checked_status(site, make_status(XDEV_STATUS_NOT_FOUND, "x"));
  EXPECT_EQ(kept->code, XDEV_STATUS_NOT_FOUND);
  take_message(kept);
  // A void slot: the exception is logged, never thrown.
  EXPECT_NO_THROW(call_plugin_void(site, [] { throw std::runtime_error("x"); }));
}

}  // namespace
