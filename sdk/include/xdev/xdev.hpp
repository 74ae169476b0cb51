// xdev C++ SDK: the header a program includes.
//
//   #include <xdev/xdev.hpp>
//   for (const auto& d : xdev::list_physical_devices()) std::cout << d << "\n";
//
// Functions throw xdev::Error (see error.hpp) with a message that names the
// device, plugin or value at fault. Names follow TensorFlow's (docs/behaviour.md).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <xdev/autodiff.hpp>
#include <xdev/config.hpp>
#include <xdev/device.hpp>
#include <xdev/distribute.hpp>
#include <xdev/dtype.hpp>
#include <xdev/error.hpp>
#include <xdev/event.hpp>
#include <xdev/export.hpp>
#include <xdev/indexing.hpp>
#include <xdev/interop.hpp>
#include <xdev/layers.hpp>
#include <xdev/ops.hpp>
#include <xdev/optimizers.hpp>
#include <xdev/placement.hpp>
#include <xdev/tensor.hpp>
#include <xdev/trace.hpp>

namespace xdev {

// The library's version, "0.1.0".
XDEV_API std::string_view version() noexcept;

// Physical devices of `device_type` (case-insensitive; "" for all), ordered
// by type priority (GPU before CPU), then id. Never throws for an unknown
// type: the list is then empty.
XDEV_API std::vector<PhysicalDevice> list_physical_devices(std::string_view device_type = "");

// Devices ops can be placed on, one per physical device unless configured
// otherwise; same order and filter as list_physical_devices.
XDEV_API std::vector<Device> list_logical_devices(std::string_view device_type = "");

// Number of visible GPU devices ("Num GPUs Available: N"): the physical
// GPUs left by set_visible_devices / XDEV_VISIBLE_DEVICES.
XDEV_API int num_gpus();

// GPU `i` if i < num_gpus(), else CPU:0 (d2l's try_gpu).
XDEV_API Device try_gpu(int i = 0);

// All GPUs, or {CPU:0} when there are none (d2l's try_all_gpus).
XDEV_API std::vector<Device> try_all_gpus();

// A plugin file the runtime found, loaded or skipped.
struct PluginInfo {
  std::string file;            // absolute path
  bool loaded = false;
  std::string reason;          // why it was skipped ("" when loaded)
  std::string name;            // the plugin's name ("cpu"), "" if never read
  std::string abi_version;     // "1.0", "" if never read
  std::string version;         // the plugin's own version string
  std::string status;          // the plugin's one-line state ("1 device (...)")
  int device_count = 0;
};

// Every plugin file found, in load order.
XDEV_API std::vector<PluginInfo> list_plugins();

// The directories searched for plugins, in order.
XDEV_API std::vector<std::string> plugin_search_path();

}  // namespace xdev
