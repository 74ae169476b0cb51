// The runtime: the loaded plugins and the registry of physical devices.
//
// One global instance serves the SDK functions (Runtime::global()); tests and
// benchmarks construct their own with explicit plugin directories.
#pragma once

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <xdev/config.hpp>
#include <xdev/device.hpp>

#include "devices/logical_device.hpp"
#include "devices/kernel_table.hpp"
#include "loader/plugin_loader.hpp"

namespace xdev::detail {

struct PhysicalDeviceRecord {
  PhysicalDevice info;           // what the SDK returns
  LoadedPlugin* plugin = nullptr;
  uint32_t ordinal = 0;          // the plugin's own device ordinal
  int32_t priority = 0;          // of its device type
  // ABI 1.5 (device properties): one memory_allocate's limit (0: none) and
  // the declared XDEV_MEMORY_KIND_* (0: undeclared, see memory_growth).
  uint64_t max_allocation_bytes = 0;
  int32_t memory_kind = 0;
};

struct RuntimeOptions {
  // Searched first, in order.
  std::vector<std::filesystem::path> plugin_dirs;
  // Then the directories of XDEV_PLUGIN_PATH (':'-separated).
  bool use_environment = true;
  // Then the plugin directory of this build or install (default_plugin_dirs).
  bool use_default_dirs = true;
};

// What the user configured before initialization (B14-B17, B20).
struct DeviceConfig {
  // Per device type: the visible physical ids, in order. Absent: all.
  std::map<std::string, std::vector<int>> visible;
  // Per physical device name ("/physical_device:GPU:0").
  std::map<std::string, bool> memory_growth;
  std::map<std::string, std::vector<LogicalDeviceConfiguration>> logical;
  double memory_fraction = 0.95;
};

// Whether `device`'s memory pool may grow under `config`: what the user set
// with set_memory_growth, else the default of its memory kind (ABI 1.5):
// host memory grows; discrete device memory grows when
// XDEV_FORCE_GPU_ALLOW_GROWTH / TF_FORCE_GPU_ALLOW_GROWTH say so (no when
// unset). Undeclared (plugins before 1.5): derived from the type name as
// before, CPU grows, GPU as discrete memory, other types never grow. The
// runtime opens pools with it and get_memory_growth reports it.
bool memory_growth(const DeviceConfig& config, const PhysicalDeviceRecord& device);

class Runtime {
 public:
  explicit Runtime(const RuntimeOptions& options);
  ~Runtime();
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

  // The process-wide runtime, created on first use with default options and
  // never destroyed (tensors in static storage may outlive main()); its
  // plugins are not shut down at exit.
  static Runtime& global();

  const std::vector<std::filesystem::path>& search_path() const { return search_path_; }
  const std::vector<std::unique_ptr<LoadedPlugin>>& plugins() const { return plugins_; }
  // Ordered by type priority (highest first), then type name, then id.
  const std::vector<PhysicalDeviceRecord>& physical_devices() const { return devices_; }
  // The physical device with this name ("/physical_device:GPU:0"), or throws
  // Error(kNotFound).
  const PhysicalDeviceRecord& physical_device(const std::string& name) const;
  // The physical devices that become logical ones under `config`: type by
  // type, in the configured order (all of a type the config does not name).
  std::vector<const PhysicalDeviceRecord*> visible_devices(const DeviceConfig& config) const;

  // --- configuration (before initialization; throws kFailedPrecondition after) ---
  // Runs `change` on the configuration under the lock, unless initialized.
  // `what` names the setting in the error ("Visible devices").
  template <typename F>
  // After initialization a change is refused, unless it changes nothing the
  // devices were made from (TensorFlow's rule: setting again what is already
  // in effect is no error).
  void configure(const char* what, F&& change) {
    std::lock_guard lock(init_mutex_);
    if (initialized_.load()) {
      DeviceConfig changed = config_;
      change(changed);
      if (!same_effect(changed, config_)) throw_initialized(what);
      return;
    }
    change(config_);
  }
  DeviceConfig config() const {
    std::lock_guard lock(init_mutex_);
    return config_;
  }

  // --- logical devices ---
  bool initialized() const { return initialized_.load(std::memory_order_acquire); }
  // Opens the visible devices and creates the logical devices (once).
  void ensure_initialized() {
    if (!initialized_.load(std::memory_order_acquire)) initialize_devices();
  }
  // Ordered like physical devices; ids numbered per type.
  const std::vector<std::unique_ptr<LogicalDeviceState>>& logical_devices() {
    ensure_initialized();
    return logical_;
  }
  // The first logical device `name` matches (lowest id), or nullptr.
  LogicalDeviceState* find_logical_device(const DeviceName& name);
  // The kernels of one device type of one plugin.
  const KernelTable& kernel_table(const LoadedPlugin* plugin, uint32_t type_index);
  // The kernels one physical device runs: those registered for it alone
  // (ABI 1.5 device_kernels) first, so that lookups prefer them, then its
  // type's.
  const KernelTable& device_kernel_table(const LoadedPlugin* plugin, uint32_t ordinal);

 private:
  [[noreturn]] static void throw_initialized(const char* what);
  // Whether devices initialized under `a` and under `b` would be the same:
  // the same visible devices in the same order, memory growth, logical
  // configurations and memory fraction.
  bool same_effect(const DeviceConfig& a, const DeviceConfig& b) const;
  void apply_visible_devices_variable();
  void read_kernels();
  void number_devices();
  void initialize_devices();

  std::vector<std::filesystem::path> search_path_;
  std::vector<std::unique_ptr<LoadedPlugin>> plugins_;
  std::vector<PhysicalDeviceRecord> devices_;
  std::map<std::pair<const LoadedPlugin*, uint32_t>, std::unique_ptr<KernelTable>> kernels_;
  // By (plugin, device ordinal).
  std::map<std::pair<const LoadedPlugin*, uint32_t>, std::unique_ptr<KernelTable>>
      device_kernels_;

  mutable std::mutex init_mutex_;
  std::atomic<bool> initialized_{false};
  DeviceConfig config_;
  std::vector<std::unique_ptr<LogicalDeviceState>> logical_;
};

// The plugin directories of the running libxdev: in the build tree, the
// build directories of the in-tree plugins; in an installed tree,
// <libdir>/xdev/plugins found relative to libxdev's own file.
std::vector<std::filesystem::path> default_plugin_dirs();

// The order of physical (and logical) devices: highest priority first, then
// type name, then id.
bool placement_order(const PhysicalDeviceRecord& a, const PhysicalDeviceRecord& b);

// Splits a ':'-separated list, dropping empty entries.
std::vector<std::filesystem::path> split_path_list(const std::string& list);

// The logical devices of `rt` by name, "a, b, c" ("none" when there are
// none): what error messages list.
std::string device_list(Runtime& rt);
// The canonical spelling of a device name someone asked for, the parts left
// out filled in ("/job:localhost/replica:0/task:0/device:GPU:*").
std::string requested_name(const DeviceName& name);
// Resolves a user's device name to a logical device of the global runtime or
// throws Error(kNotFound) naming it and listing the devices there are.
LogicalDeviceState* resolve_device(std::string_view name);

}  // namespace xdev::detail
