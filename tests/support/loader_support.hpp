// What the tests of the core's plugin loader share (core-internal: the
// test links the core's static library).
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "devices/runtime.hpp"
#include "loader/plugin_loader.hpp"

namespace xdev_test {

// Options of a runtime that searches `dirs` only: neither XDEV_PLUGIN_PATH
// nor the build's or install's default plugin directories.
inline xdev::detail::RuntimeOptions only_dirs(std::vector<std::filesystem::path> dirs) {
  xdev::detail::RuntimeOptions options;
  options.plugin_dirs = std::move(dirs);
  options.use_environment = false;
  options.use_default_dirs = false;
  return options;
}

// Loads `file` and expects the loader to skip it with exactly `reason`: not
// loaded, no table, no devices.
inline void expect_skipped(const std::filesystem::path& file, const std::string& reason) {
  auto plugin = xdev::detail::load_plugin(file);
  EXPECT_FALSE(plugin->loaded());
  EXPECT_EQ(plugin->reason, reason);
  EXPECT_EQ(plugin->api, nullptr);
  EXPECT_TRUE(plugin->devices.empty());
}

// "major.minor", to compare a plugin's ABI version in one expectation.
inline std::string version_text(const xdev_version_t& v) {
  return std::to_string(v.major) + "." + std::to_string(v.minor);
}

}  // namespace xdev_test
