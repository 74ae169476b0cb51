// The runtime: the loaded plugins and the registry of physical devices.
//
// One global instance serves the SDK functions (Runtime::global()); tests and
// benchmarks construct their own with explicit plugin directories.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <xdev/device.hpp>

#include "plugin_loader.hpp"

namespace xdev::detail {

struct PhysicalDeviceRecord {
  PhysicalDevice info;           // what the SDK returns
  LoadedPlugin* plugin = nullptr;
  uint32_t ordinal = 0;          // the plugin's own device ordinal
  int32_t priority = 0;          // of its device type
};

struct RuntimeOptions {
  // Searched first, in order.
  std::vector<std::filesystem::path> plugin_dirs;
  // Then the directories of XDEV_PLUGIN_PATH (':'-separated).
  bool use_environment = true;
  // Then the plugin directory of this build or install (default_plugin_dirs).
  bool use_default_dirs = true;
};

class Runtime {
 public:
  explicit Runtime(const RuntimeOptions& options);
  ~Runtime();
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

  // The process-wide runtime, created on first use with default options.
  static Runtime& global();

  const std::vector<std::filesystem::path>& search_path() const { return search_path_; }
  const std::vector<std::unique_ptr<LoadedPlugin>>& plugins() const { return plugins_; }
  // Ordered by type priority (highest first), then type name, then id.
  const std::vector<PhysicalDeviceRecord>& physical_devices() const { return devices_; }

 private:
  std::vector<std::filesystem::path> search_path_;
  std::vector<std::unique_ptr<LoadedPlugin>> plugins_;
  std::vector<PhysicalDeviceRecord> devices_;
};

// The plugin directories of the running libxdev: in the build tree, the
// build directories of the in-tree plugins; in an installed tree,
// <libdir>/xdev/plugins found relative to libxdev's own file.
std::vector<std::filesystem::path> default_plugin_dirs();

// Splits a ':'-separated list, dropping empty entries.
std::vector<std::filesystem::path> split_path_list(const std::string& list);

}  // namespace xdev::detail
