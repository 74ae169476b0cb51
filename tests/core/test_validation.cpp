// The validation layer (XDEV_VALIDATE=1, core/validation) against plugins
// that load fine but misbehave (tests/plugins/validation): each misdeed is
// reported naming the plugin file, the slot or op, the device and the tensor.
// Each test runs in its own process with one plugin (tests/core/meson.build).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include <xdev/xdev.hpp>

#include "devices/runtime.hpp"
#include "validation/core_layer.hpp"

namespace xdev::detail {
namespace {

using ::testing::AllOf;
using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

// a + b on the plugin's TEST device (priority 50, above the cpu's).
std::vector<float> add_on_test_device() {
  xdev::DeviceScope scope("/TEST:0");
  auto a = xdev::constant({1.f, 2.f, 3.f, 4.f});
  auto b = xdev::constant({10.f, 20.f, 30.f, 40.f});
  auto c = xdev::add(a, b);
  EXPECT_EQ(c.device().name, "/job:localhost/replica:0/task:0/device:TEST:0");
  return c.to_vector<float>();
}

TEST(Validation, IsOn) { EXPECT_TRUE(validation_enabled()); }

TEST(Validation, CatchesAKernelThatWritesNothing) {
  add_on_test_device();
  EXPECT_THAT(validation_reports(),
              Contains(AllOf(HasSubstr("xdev_test_writes_nothing.so"), HasSubstr("kernel Add"),
                             HasSubstr("device 0 (Test Device Zero)"),
                             HasSubstr("output 0 [4] float32"),
                             HasSubstr("never wrote the output"))));
}

TEST(Validation, CatchesAKernelThatWritesPastItsOutput) {
  EXPECT_EQ(add_on_test_device(), (std::vector<float>{11.f, 22.f, 33.f, 44.f}));
  EXPECT_THAT(validation_reports(),
              Contains(AllOf(HasSubstr("xdev_test_writes_past.so"), HasSubstr("kernel Add"),
                             HasSubstr("device 0 (Test Device Zero)"),
                             HasSubstr("output 0 [4] float32"),
                             HasSubstr("wrote outside its output"),
                             HasSubstr("after its end"))));
}

TEST(Validation, ACorrectKernelIsNotReported) {
  // The leaky plugin's kernel is right: nothing is reported while it runs.
  EXPECT_EQ(add_on_test_device(), (std::vector<float>{11.f, 22.f, 33.f, 44.f}));
  EXPECT_THAT(validation_reports(), IsEmpty());
}

TEST(Validation, CatchesAPluginThatLeaksAtShutdown) {
  {
    RuntimeOptions options;
    options.use_default_dirs = false;  // XDEV_PLUGIN_PATH and XDEV_PLUGINS say which
    Runtime runtime(options);
    int loaded = 0;
    for (const auto& p : runtime.plugins()) loaded += p->loaded() && p->name == "leaks";
    ASSERT_EQ(loaded, 1);
    runtime.ensure_initialized();  // opens the devices: a stream each
    EXPECT_THAT(validation_reports(), IsEmpty());
  }  // closes them: the plugin kept its streams' memory
  EXPECT_THAT(validation_reports(),
              Contains(AllOf(HasSubstr("xdev_test_leaks.so"), HasSubstr("device_close"),
                             HasSubstr("device 0 (Test Device Zero)"),
                             HasSubstr("bytes less free than at device_open"),
                             HasSubstr("the plugin leaks"))));
}

}  // namespace
}  // namespace xdev::detail
