// Fuzz target: every parser of an environment or configuration value.
//  - <xdev/env_value.hpp> (whole numbers, booleans, choices): the value is
//    always in range, a value accepted without a warning is exactly the text's
//    number, and a warning names the variable and the text;
//  - the core's readers (core/common/env.hpp) over the real environment;
//  - XDEV_PLUGINS (PluginFilter::parse) and XDEV_VISIBLE_DEVICES, XDEV_PLUGIN_PATH
//    (a Runtime that reads them and finds no plugin).
// The first byte picks the parser; the rest is the value.
#include <cstdlib>
#include <string>

#include <xdev/env_value.hpp>
#include <xdev/error.hpp>

#include "common/env.hpp"
#include "common/log.hpp"
#include "devices/runtime.hpp"
#include "fuzz_input.hpp"
#include "loader/plugin_filter.hpp"

namespace {

namespace ev = xdev::env_value;
using xdev_fuzz::fail;

void check_warning(const std::string& warning, const std::string& name, const std::string& text) {
  if (warning.empty()) return;
  if (warning.find(name + "='" + text + "'") != 0) {
    fail("warning \"" + warning + "\" does not start with " + name + "='" + text + "'");
  }
  if (warning.find("; using ") == std::string::npos &&
      warning.find("; ignored") == std::string::npos) {
    fail("warning \"" + warning + "\" does not say what is used instead");
  }
}

void fuzz_uint(xdev_fuzz::Input& in) {
  uint64_t lowest = in.u64();
  uint64_t highest = in.u64();
  if (lowest > highest) std::swap(lowest, highest);
  const uint64_t fallback = lowest + (highest - lowest) / 2;
  const std::string text = in.rest();
  const auto v = ev::parse_uint("XDEV_FUZZ", text.c_str(), fallback, lowest, highest);
  if (v.value < lowest || v.value > highest) fail("parse_uint out of range for '" + text + "'");
  check_warning(v.warning, "XDEV_FUZZ", text);
  if (v.ok() && !text.empty()) {
    if (text.find_first_not_of("0123456789") != std::string::npos) {
      fail("parse_uint accepted '" + text + "'");
    }
    // Accepted digits are the value (leading zeros allowed).
    const size_t nonzero = text.find_first_not_of('0');
    const std::string digits = nonzero == std::string::npos ? "0" : text.substr(nonzero);
    if (digits != std::to_string(v.value)) fail("parse_uint('" + text + "') gave a wrong value");
  }
}

void fuzz_bool(xdev_fuzz::Input& in) {
  const bool fallback = in.flag();
  const std::string text = in.rest();
  const auto v = ev::parse_bool("XDEV_FUZZ", text.c_str(), fallback);
  check_warning(v.warning, "XDEV_FUZZ", text);
  if (!v.ok() && v.value != fallback) fail("parse_bool: a bad value did not give the default");
}

void fuzz_choice(xdev_fuzz::Input& in) {
  const size_t fallback = in.below(4);
  const std::string text = in.rest();
  const auto v = ev::parse_choice("XDEV_FUZZ", text.c_str(), fallback,
                                  {"debug", "info", "warning", "error"});
  check_warning(v.warning, "XDEV_FUZZ", text);
  if (v.value >= 4) fail("parse_choice gave an index past the list");
}

// The core's readers, through the environment itself.
void fuzz_core_readers(xdev_fuzz::Input& in) {
  static const char* const kNames[] = {"XDEV_PROBE_TIMEOUT_MS", "XDEV_PROBE_PLUGINS",
                                       "XDEV_LOG_DEVICE_PLACEMENT", "TF_FORCE_GPU_ALLOW_GROWTH",
                                       "XDEV_FORCE_GPU_ALLOW_GROWTH", "XDEV_LOG_LEVEL"};
  const char* name = kNames[in.below(6)];
  const std::string text = in.rest();
  xdev_fuzz::ScopedEnv env(name, text);
  const auto timeout = xdev::detail::env::probe_timeout().count();
  if (timeout < 1 || static_cast<uint64_t>(timeout) > xdev::detail::env::kMaxProbeTimeoutMs) {
    fail("probe_timeout out of range");
  }
  (void)xdev::detail::env::probe_plugins();
  (void)xdev::detail::env::log_device_placement();
  (void)xdev::detail::env::force_gpu_allow_growth();
  check_warning(xdev::detail::env::log_level_setting().warning, "XDEV_LOG_LEVEL",
                std::getenv("XDEV_LOG_LEVEL") ? std::getenv("XDEV_LOG_LEVEL") : "");
}

void fuzz_plugin_filter(xdev_fuzz::Input& in) {
  const std::string text = in.rest();
  const auto filter = xdev::detail::PluginFilter::parse(text);
  if (filter) {
    (void)filter->selects("/nonexistent/xdev_plugin_cpu.so");
    (void)filter->expected_name("/nonexistent/libxdev_plugin_sim.so");
  }
}

// A runtime that finds no plugin reads XDEV_PLUGIN_PATH and XDEV_VISIBLE_DEVICES.
void fuzz_runtime_lists(xdev_fuzz::Input& in) {
  const bool path = in.flag();
  const char* name = path ? "XDEV_PLUGIN_PATH" : "XDEV_VISIBLE_DEVICES";
  const std::string text = in.rest();
  xdev_fuzz::ScopedEnv env(name, text);
  try {
    xdev::detail::RuntimeOptions options;
    options.use_default_dirs = false;
    xdev::detail::Runtime runtime(options);
    if (!runtime.physical_devices().empty()) fail("a runtime without plugins found devices");
  } catch (const xdev::Error&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  // The warnings are the point, but printing each costs most of the time.
  xdev::detail::set_log_sink([](xdev_log_level_t, std::string_view) {});
  ::setenv("XDEV_PLUGINS", "none-at-all", 1);  // the runtime loads no plugin
  ::setenv("XDEV_PROBE_PLUGINS", "0", 1);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  xdev_fuzz::Input in(data, size);
  switch (in.below(7)) {
    case 0: fuzz_uint(in); break;
    case 1: fuzz_bool(in); break;
    case 2: fuzz_choice(in); break;
    case 3: fuzz_core_readers(in); break;
    case 4: fuzz_plugin_filter(in); break;
    default: fuzz_runtime_lists(in); break;
  }
  return 0;
}
