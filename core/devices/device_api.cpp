// The SDK's device functions, over the global runtime.
#include <xdev/xdev.hpp>

#include <algorithm>
#include <cctype>
#include <ostream>

#include "common/text.hpp"
#include "config.hpp"
#include "devices/runtime.hpp"

namespace xdev {
namespace {


}  // namespace

std::string_view version() noexcept { return XDEV_VERSION_STRING; }

std::vector<PhysicalDevice> list_physical_devices(std::string_view device_type) {
  std::string type = detail::to_upper(device_type);
  std::vector<PhysicalDevice> out;
  for (const auto& record : detail::Runtime::global().physical_devices()) {
    if (type.empty() || record.info.device_type == type) out.push_back(record.info);
  }
  return out;
}

std::vector<Device> list_logical_devices(std::string_view device_type) {
  std::string type = detail::to_upper(device_type);
  std::vector<Device> out;
  for (const auto& d : detail::Runtime::global().logical_devices()) {
    if (type.empty() || d->info().device_type == type) out.push_back(d->info());
  }
  return out;
}

// The visible GPUs (set_visible_devices, XDEV_VISIBLE_DEVICES), so that
// try_gpu(i) is a GPU exactly when i < num_gpus().
int num_gpus() { return static_cast<int>(get_visible_devices("GPU").size()); }

Device try_gpu(int i) {
  std::vector<Device> gpus = list_logical_devices("GPU");
  if (i >= 0 && i < num_gpus() && static_cast<size_t>(i) < gpus.size()) {
    return gpus[static_cast<size_t>(i)];
  }
  std::vector<Device> cpus = list_logical_devices("CPU");
  if (cpus.empty()) {
    throw Error(ErrorCode::kNotFound,
                "try_gpu(" + std::to_string(i) + "): no GPU:" + std::to_string(i) +
                    " and no CPU device either (is the cpu plugin installed? see xdev-smi)");
  }
  return cpus.front();
}

std::vector<Device> try_all_gpus() {
  std::vector<Device> gpus = list_logical_devices("GPU");
  if (!gpus.empty()) return gpus;
  return {try_gpu(0)};
}

std::vector<PluginInfo> list_plugins() {
  std::vector<PluginInfo> out;
  for (const auto& plugin : detail::Runtime::global().plugins()) {
    PluginInfo info;
    info.file = plugin->path.string();
    info.loaded = plugin->loaded();
    info.reason = plugin->reason;
    info.name = plugin->name;
    if (plugin->abi_version.major != 0 || plugin->abi_version.minor != 0) {
      info.abi_version = std::to_string(plugin->abi_version.major) + "." +
                         std::to_string(plugin->abi_version.minor);
    }
    info.version = plugin->plugin_version;
    info.status = plugin->status_text;
    info.device_count = static_cast<int>(plugin->devices.size());
    out.push_back(std::move(info));
  }
  return out;
}

std::vector<std::string> plugin_search_path() {
  std::vector<std::string> out;
  for (const auto& p : detail::Runtime::global().search_path()) out.push_back(p.string());
  return out;
}

std::ostream& operator<<(std::ostream& os, const PhysicalDevice& device) {
  return os << "PhysicalDevice(name='" << device.name << "', device_type='"
            << device.device_type << "')";
}

std::ostream& operator<<(std::ostream& os, const Device& device) {
  return os << "LogicalDevice(name='" << device.name << "', device_type='"
            << device.device_type << "')";
}

}  // namespace xdev
