// Every call from the core into a plugin is guarded
// (core/common/plugin_call.hpp). The throwing test plugin
// (tests/plugins/throwing) lets C++ exceptions escape from two kernels and a
// slot; each must reach the user as xdev::Error(INTERNAL) naming the plugin
// file, the kernel or slot and the device, and the CPU must keep working.
// Statuses with code OK or an unknown code become INTERNAL too, and the
// host's status_create never lets std::bad_alloc into a plugin.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <new>
#include <string>

#include <xdev/xdev.hpp>

#include "common/plugin_call.hpp"
#include "common/status.hpp"
#include "core_plugin_harness.hpp"
#include "sanitizers.hpp"

// Allocation failure on demand: the next t_allocations_left allocations of
// this thread succeed, the one after throws std::bad_alloc (-1: none fails).
// Not in sanitizer builds, whose runtimes bring their own operator new.
#if !defined(XDEV_TEST_ASAN) && !defined(XDEV_TEST_TSAN)
#define XDEV_TEST_FAILING_NEW 1
namespace {
thread_local int t_allocations_left = -1;
}  // namespace
void* operator new(std::size_t size) {
  if (t_allocations_left == 0) throw std::bad_alloc();
  if (t_allocations_left > 0) --t_allocations_left;
  if (void* p = std::malloc(size != 0 ? size : 1)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
#endif

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

// Out of memory inside the host's status_create (the status, its message or
// its registration): the plugin gets a status with its code and a note that
// the message was lost, never an exception (it would unwind through C), and
// the status is read and released as any other. The guard's own fallbacks
// (a pointer that is no status) do not throw either.
TEST(PluginGuard, StatusCreateOutOfMemoryKeepsTheCodeAndThrowsNothing) {
#if !defined(XDEV_TEST_FAILING_NEW)
  GTEST_SKIP() << "the sanitizer runtime provides operator new; the main build runs this";
#else
  using namespace xdev::detail;
  const xdev_host_api_t* host = xdev_test::process_core_host("oom");
  const std::string message(200, 'm');  // longer than any small-string buffer
  int lost = 0;
  for (int allocations = 0; allocations < 6; ++allocations) {
    xdev_status_t* status = nullptr;
    t_allocations_left = allocations;
    try {
      status = host->status_create(host->host_context, XDEV_STATUS_NOT_FOUND, message.c_str());
    } catch (...) {
      t_allocations_left = -1;
      FAIL() << "status_create threw after " << allocations << " allocations";
    }
    t_allocations_left = -1;
    ASSERT_NE(status, nullptr);
    ASSERT_TRUE(is_host_status(status));
    EXPECT_EQ(status->code, XDEV_STATUS_NOT_FOUND);
    const std::string text = take_message(status);
    if (text != "NOT_FOUND: " + message) {
      ++lost;
      EXPECT_THAT(text, HasSubstr("ran out of memory while recording this error"));
    }
  }
  EXPECT_GE(lost, 2) << "the status and its message each failed to allocate once";
  // An unknown code keeps its value as INTERNAL's stand-in.
  t_allocations_left = 0;
  xdev_status_t* odd = host->status_create(host->host_context,
                                           static_cast<xdev_status_code_t>(77), "x");
  t_allocations_left = -1;
  EXPECT_EQ(odd->code, XDEV_STATUS_INTERNAL);
  take_message(odd);
  const PluginCallSite site{"/p/x.so", "stream_synchronize", "/device:X:0"};
  t_allocations_left = 0;
  xdev_status_t* garbage = checked_status(site, reinterpret_cast<xdev_status_t*>(0x1000));
  t_allocations_left = -1;
  ASSERT_NE(garbage, nullptr);
  EXPECT_EQ(garbage->code, XDEV_STATUS_INTERNAL);
  take_message(garbage);
#endif
}

}  // namespace
