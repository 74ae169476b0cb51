#include "runtime.hpp"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <random>
#include <set>
#include <system_error>

#include <boost/dll/runtime_symbol_info.hpp>

#include "config.hpp"
#include "log.hpp"

namespace fs = std::filesystem;

namespace xdev::detail {
namespace {

std::string physical_description(const PluginDevice& device) {
  return device.description.empty() ? "device: " + std::to_string(device.ordinal) +
                                          ", name: " + device.name
                                    : device.description;
}

}  // namespace

std::vector<fs::path> split_path_list(const std::string& list) {
  std::vector<fs::path> out;
  size_t start = 0;
  while (start <= list.size()) {
    size_t colon = list.find(':', start);
    if (colon == std::string::npos) colon = list.size();
    if (colon > start) out.emplace_back(list.substr(start, colon - start));
    start = colon + 1;
  }
  return out;
}

std::vector<fs::path> default_plugin_dirs() {
  std::error_code ec;
  fs::path self = boost::dll::this_line_location(ec);
  if (ec || self.empty()) return {};
  fs::path dir = fs::canonical(self, ec).parent_path();
  if (ec) return {};
  std::error_code eq_ec;
  if (fs::equivalent(dir, fs::path(XDEV_BUILD_CORE_DIR), eq_ec) && !eq_ec) {
    return split_path_list(XDEV_BUILD_PLUGIN_PATH);
  }
  return {dir / XDEV_PLUGINDIR_FROM_LIBDIR};
}

Runtime::Runtime(const RuntimeOptions& options) {
  search_path_ = options.plugin_dirs;
  if (options.use_environment) {
    if (const char* env = std::getenv("XDEV_PLUGIN_PATH")) {
      for (fs::path& p : split_path_list(env)) search_path_.push_back(std::move(p));
    }
  }
  if (options.use_default_dirs) {
    for (fs::path& p : default_plugin_dirs()) search_path_.push_back(std::move(p));
  }

  std::map<std::string, fs::path> loaded_names;
  for (const fs::path& file : find_plugin_files(search_path_)) {
    std::unique_ptr<LoadedPlugin> plugin = load_plugin(file);
    if (plugin->loaded()) {
      auto [it, fresh] = loaded_names.emplace(plugin->name, plugin->path);
      if (!fresh) {
        plugin->shut_down();
        plugin->state = LoadedPlugin::State::kSkipped;
        plugin->reason = "a plugin named '" + plugin->name + "' is already loaded from " +
                         it->second.string();
        plugin->types.clear();
        plugin->devices.clear();
      }
    }
    if (!plugin->loaded()) {
      log(XDEV_LOG_WARNING, "skipping plugin " + plugin->path.string() + ": " + plugin->reason);
    } else {
      log(XDEV_LOG_DEBUG, "loaded plugin '" + plugin->name + "' from " + plugin->path.string());
    }
    plugins_.push_back(std::move(plugin));
  }

  // Number the devices per type, in plugin load order, then ordinal.
  std::random_device entropy;
  std::mt19937_64 random(
      (static_cast<uint64_t>(entropy()) << 32) ^ entropy() ^
      static_cast<uint64_t>(reinterpret_cast<uintptr_t>(this)));
  std::set<uint64_t> incarnations{0};
  std::map<std::string, int> next_id;
  for (const auto& plugin : plugins_) {
    if (!plugin->loaded()) continue;
    for (const PluginDevice& device : plugin->devices) {
      const PluginDeviceType& type = plugin->types[device.type_index];
      PhysicalDeviceRecord record;
      record.plugin = plugin.get();
      record.ordinal = device.ordinal;
      record.priority = type.priority;
      PhysicalDevice& info = record.info;
      info.device_type = type.type;
      info.id = next_id[type.type]++;
      info.name = "/physical_device:" + type.type + ":" + std::to_string(info.id);
      info.platform = type.platform;
      info.plugin = plugin->name;
      info.model = device.name;
      info.memory_limit = device.memory_total;
      info.bus_id = device.bus_id;
      info.numa_node = device.numa_node;
      info.physical_device_desc = physical_description(device);
      for (const auto& [key, value] : device.properties) info.properties[key] = value;
      uint64_t incarnation = 0;
      while (!incarnations.insert(incarnation = random()).second) {
      }
      info.incarnation = incarnation;
      devices_.push_back(std::move(record));
    }
  }
  std::stable_sort(devices_.begin(), devices_.end(),
                   [](const PhysicalDeviceRecord& a, const PhysicalDeviceRecord& b) {
                     if (a.priority != b.priority) return a.priority > b.priority;
                     if (a.info.device_type != b.info.device_type)
                       return a.info.device_type < b.info.device_type;
                     return a.info.id < b.info.id;
                   });
}

Runtime::~Runtime() {
  // Shut plugins down in reverse load order.
  for (auto it = plugins_.rbegin(); it != plugins_.rend(); ++it) (*it)->shut_down();
}

Runtime& Runtime::global() {
  static Runtime runtime{RuntimeOptions{}};
  return runtime;
}

}  // namespace xdev::detail
