// Environment values: the one parser (<xdev/env_value.hpp>) and the core's
// readers over it (core/common/env.hpp). A bad value is never wrapped or
// silently dropped: exactly one warning names the variable, the value and
// what is used instead.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include <xdev/env_value.hpp>

#include "common/env.hpp"
#include "common/log.hpp"
#include "loader/plugin_probe.hpp"

namespace xdev::detail {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
namespace ev = ::xdev::env_value;

TEST(EnvValue, WholeNumbers) {
  EXPECT_EQ(ev::parse_uint("V", nullptr, 7, 1, 10).value, 7u);
  EXPECT_TRUE(ev::parse_uint("V", nullptr, 7, 1, 10).ok());
  EXPECT_TRUE(ev::parse_uint("V", "", 7, 1, 10).ok());
  EXPECT_EQ(ev::parse_uint("V", "10", 7, 1, 10).value, 10u);
  EXPECT_TRUE(ev::parse_uint("V", "1", 7, 1, 10).ok());

  auto garbage = ev::parse_uint("V", "ten", 7, 1, 10);
  EXPECT_EQ(garbage.value, 7u);
  EXPECT_EQ(garbage.warning, "V='ten' is not a whole number in [1, 10]; using 7 (the default)");
  for (const char* bad : {" 5", "5 ", "-1", "+1", "1e3", "0x10", "5ms"}) {
    auto v = ev::parse_uint("V", bad, 7, 1, 10);
    EXPECT_EQ(v.value, 7u) << bad;
    EXPECT_THAT(v.warning, HasSubstr(std::string("V='") + bad + "'")) << bad;
  }

  auto above = ev::parse_uint("V", "11", 7, 1, 10);
  EXPECT_EQ(above.value, 10u);
  EXPECT_EQ(above.warning, "V='11' is above the largest value allowed [1, 10]; using 10");
  auto below = ev::parse_uint("V", "0", 7, 1, 10);
  EXPECT_EQ(below.value, 1u);
  EXPECT_EQ(below.warning, "V='0' is below the smallest value allowed [1, 10]; using 1");
  // More than 64 bits: clamped, never wrapped.
  for (const char* huge : {"18446744073709551616", "99999999999999999999999"}) {
    auto v = ev::parse_uint("V", huge, 7, 0, UINT64_MAX);
    EXPECT_EQ(v.value, UINT64_MAX) << huge;
    EXPECT_FALSE(v.ok()) << huge;
  }
  EXPECT_EQ(ev::parse_uint("V", "18446744073709551615", 7, 0, UINT64_MAX).value, UINT64_MAX);
  EXPECT_TRUE(ev::parse_uint("V", "18446744073709551615", 7, 0, UINT64_MAX).ok());
}

TEST(EnvValue, Booleans) {
  for (const char* yes : {"true", "TRUE", "1", "yes", "On"}) {
    EXPECT_TRUE(ev::parse_bool("B", yes, false).value) << yes;
    EXPECT_TRUE(ev::parse_bool("B", yes, false).ok()) << yes;
  }
  for (const char* no : {"false", "0", "no", "OFF"}) {
    EXPECT_FALSE(ev::parse_bool("B", no, true).value) << no;
    EXPECT_TRUE(ev::parse_bool("B", no, true).ok()) << no;
  }
  auto bad = ev::parse_bool("B", "maybe", false);
  EXPECT_FALSE(bad.value);
  EXPECT_EQ(bad.warning,
            "B='maybe' is not a boolean (true/1/yes/on or false/0/no/off); using false (the "
            "default)");
  EXPECT_TRUE(ev::parse_bool("B", nullptr, true).value);
}

TEST(EnvValue, Choices) {
  EXPECT_EQ(ev::parse_choice("C", "Info", 2, {"debug", "info", "warning"}).value, 1u);
  auto bad = ev::parse_choice("C", "loud", 2, {"debug", "info", "warning"});
  EXPECT_EQ(bad.value, 2u);
  EXPECT_EQ(bad.warning, "C='loud' is not one of debug, info, warning; using warning (the default)");
}

// The core's readers: one warning per variable and value, on the log.
class EnvReaders : public ::testing::Test {
 protected:
  void SetUp() override {
    previous_ = set_log_sink([this](xdev_log_level_t level, std::string_view message) {
      if (level == XDEV_LOG_WARNING) warnings_.emplace_back(message);
    });
  }
  void TearDown() override {
    set_log_sink(previous_);
    for (const char* name : {"XDEV_PROBE_TIMEOUT_MS", "XDEV_PROBE_PLUGINS",
                             "XDEV_LOG_DEVICE_PLACEMENT", "XDEV_FORCE_GPU_ALLOW_GROWTH",
                             "TF_FORCE_GPU_ALLOW_GROWTH", "XDEV_FALLBACK"}) {
      ::unsetenv(name);
    }
  }
  std::vector<std::string> warnings_;
  LogSink previous_;
};

// The bug: 10^13 ms overflowed the deadline and every probe "timed out".
TEST_F(EnvReaders, ProbeTimeoutIsBoundedAndWarnedOnce) {
  ::setenv("XDEV_PROBE_TIMEOUT_MS", "10000000000000", 1);
  EXPECT_EQ(env::probe_timeout(), std::chrono::milliseconds(env::kMaxProbeTimeoutMs));
  EXPECT_EQ(probe_settings_from_environment().timeout,
            std::chrono::milliseconds(env::kMaxProbeTimeoutMs));
  // The deadline the probe computes from it does not wrap.
  const auto now = std::chrono::steady_clock::now();
  EXPECT_GT(now + probe_settings_from_environment().timeout, now);
  EXPECT_THAT(warnings_,
              ElementsAre("XDEV_PROBE_TIMEOUT_MS='10000000000000' is above the largest value "
                          "allowed [1, 3600000]; using 3600000"));
  ::setenv("XDEV_PROBE_TIMEOUT_MS", "soon", 1);
  EXPECT_EQ(env::probe_timeout(), std::chrono::milliseconds(env::kDefaultProbeTimeoutMs));
  ASSERT_EQ(warnings_.size(), 2u);
  EXPECT_THAT(warnings_[1], HasSubstr("XDEV_PROBE_TIMEOUT_MS='soon' is not a whole number"));
  EXPECT_THAT(warnings_[1], HasSubstr("using 20000 (the default)"));
}

TEST_F(EnvReaders, ProbeModes) {
  ::setenv("XDEV_PROBE_PLUGINS", "NEVER", 1);
  EXPECT_EQ(env::probe_plugins(), env::ProbeChoice::kOff);
  ::setenv("XDEV_PROBE_PLUGINS", "always", 1);
  EXPECT_EQ(env::probe_plugins(), env::ProbeChoice::kAlways);
  ::setenv("XDEV_PROBE_PLUGINS", "auto", 1);
  EXPECT_EQ(env::probe_plugins(), env::ProbeChoice::kCached);
  EXPECT_TRUE(warnings_.empty());
  ::setenv("XDEV_PROBE_PLUGINS", "sometimes", 1);
  EXPECT_EQ(env::probe_plugins(), env::ProbeChoice::kCached);
  ASSERT_EQ(warnings_.size(), 1u);
  EXPECT_THAT(warnings_[0], HasSubstr("XDEV_PROBE_PLUGINS='sometimes' is not one of"));
  EXPECT_THAT(warnings_[0], HasSubstr("using auto (the default)"));
}

TEST_F(EnvReaders, FallbackPolicy) {
  EXPECT_EQ(env::fallback_policy(), FallbackPolicy::kWarn);  // unset
  ::setenv("XDEV_FALLBACK", "error", 1);
  EXPECT_EQ(env::fallback_policy(), FallbackPolicy::kError);
  ::setenv("XDEV_FALLBACK", "ERROR", 1);
  EXPECT_EQ(env::fallback_policy(), FallbackPolicy::kError);
  ::setenv("XDEV_FALLBACK", "warn", 1);
  EXPECT_EQ(env::fallback_policy(), FallbackPolicy::kWarn);
  EXPECT_TRUE(warnings_.empty());
  ::setenv("XDEV_FALLBACK", "silent", 1);  // fallback is never silent
  EXPECT_EQ(env::fallback_policy(), FallbackPolicy::kWarn);
  EXPECT_THAT(warnings_, ElementsAre("XDEV_FALLBACK='silent' is not one of warn, error; using "
                                     "warn (the default)"));
}

TEST_F(EnvReaders, GrowthVariables) {
  EXPECT_EQ(env::force_gpu_allow_growth(), std::nullopt);
  ::setenv("TF_FORCE_GPU_ALLOW_GROWTH", "true", 1);
  EXPECT_EQ(env::force_gpu_allow_growth(), true);
  ::setenv("XDEV_FORCE_GPU_ALLOW_GROWTH", "false", 1);  // xdev's own wins
  EXPECT_EQ(env::force_gpu_allow_growth(), false);
  EXPECT_TRUE(warnings_.empty());
  ::unsetenv("XDEV_FORCE_GPU_ALLOW_GROWTH");
  ::setenv("TF_FORCE_GPU_ALLOW_GROWTH", "yes please", 1);
  EXPECT_EQ(env::force_gpu_allow_growth(), std::nullopt);
  EXPECT_EQ(env::force_gpu_allow_growth(), std::nullopt);
  EXPECT_THAT(warnings_, ElementsAre("TF_FORCE_GPU_ALLOW_GROWTH='yes please' is not a boolean "
                                     "(true/1/yes/on or false/0/no/off); ignored, as if unset"));
}

TEST_F(EnvReaders, PlacementLogSwitch) {
  ::setenv("XDEV_LOG_DEVICE_PLACEMENT", "on", 1);
  EXPECT_TRUE(env::log_device_placement());
  ::setenv("XDEV_LOG_DEVICE_PLACEMENT", "2", 1);
  EXPECT_FALSE(env::log_device_placement());
  EXPECT_THAT(warnings_, ElementsAre(HasSubstr("XDEV_LOG_DEVICE_PLACEMENT='2' is not a boolean")));
}

TEST(EnvLogLevel, BadLevelIsNamed) {
  ::setenv("XDEV_LOG_LEVEL", "chatty", 1);
  const auto setting = env::log_level_setting();
  ::unsetenv("XDEV_LOG_LEVEL");
  EXPECT_EQ(setting.value, XDEV_LOG_WARNING);
  EXPECT_EQ(setting.warning,
            "XDEV_LOG_LEVEL='chatty' is not one of debug, info, warning, error; using warning "
            "(the default)");
}

}  // namespace
}  // namespace xdev::detail
