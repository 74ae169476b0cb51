// xdev-smi: the device mapping (like TensorFlow's device_lib.list_local_devices()
// and nvidia-smi): every device with its name, type, memory, locality,
// incarnation and physical description, then every plugin file found with its
// status. `--json` prints the same for machines. Exit status 0 whenever the
// runtime could be queried, even with no plugin at all.
#include <cstdio>
#include <cstdlib>
#include <iomanip>
#include <iostream>
#include <sstream>
#include <string>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <xdev/config.hpp>
#include <xdev/xdev.hpp>

namespace {

std::string human_bytes(std::uint64_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (value >= 1024.0 && unit < 4) {
    value /= 1024.0;
    ++unit;
  }
  std::ostringstream out;
  out << std::fixed << std::setprecision(unit == 0 ? 0 : 1) << value << ' ' << units[unit];
  return out.str();
}

std::string hex(std::uint64_t value) {
  std::ostringstream out;
  out << "0x" << std::hex << std::setw(16) << std::setfill('0') << value;
  return out.str();
}

nlohmann::json to_json(const std::vector<xdev::PhysicalDevice>& devices,
                       const std::vector<xdev::PluginInfo>& plugins) {
  nlohmann::json j;
  j["version"] = std::string(xdev::version());
  j["num_gpus"] = xdev::num_gpus();
  j["devices"] = nlohmann::json::array();
  for (const auto& d : devices) {
    nlohmann::json dev = {
        {"name", xdev::canonical_device_name(d.device_type, d.id)},
        {"physical_name", d.name},
        {"device_type", d.device_type},
        {"id", d.id},
        {"memory_limit", d.memory_limit},
        {"locality", {{"bus_id", d.bus_id}, {"numa_node", d.numa_node}}},
        {"incarnation", d.incarnation},
        {"physical_device_desc", d.physical_device_desc},
        {"model", d.model},
        {"platform", d.platform},
        {"plugin", d.plugin},
        {"properties", d.properties},
    };
    j["devices"].push_back(std::move(dev));
  }
  j["logical_devices"] = nlohmann::json::array();
  for (const auto& d : xdev::list_logical_devices()) {
    xdev::MemoryInfo m = xdev::get_memory_info(d.name);
    j["logical_devices"].push_back({{"name", d.name},
                                    {"device_type", d.device_type},
                                    {"id", d.id},
                                    {"memory",
                                     {{"limit", m.limit},
                                      {"in_use", m.current},
                                      {"peak", m.peak},
                                      {"reserved", m.bytes_reserved},
                                      {"growth", m.growth}}}});
  }
  j["plugins"] = nlohmann::json::array();
  for (const auto& p : plugins) {
    nlohmann::json plugin = {
        {"file", p.file},
        {"status", p.loaded ? "loaded" : "skipped"},
        {"name", p.name},
        {"abi_version", p.abi_version},
        {"version", p.version},
        {"device_count", p.device_count},
    };
    if (p.loaded) {
      plugin["state"] = p.status;
    } else {
      plugin["reason"] = p.reason;
    }
    j["plugins"].push_back(std::move(plugin));
  }
  j["plugin_search_path"] = xdev::plugin_search_path();
  return j;
}

void print_text(const std::vector<xdev::PhysicalDevice>& devices,
                const std::vector<xdev::PluginInfo>& plugins) {
  std::cout << "xdev " << xdev::version() << "\n";
  std::cout << "Num GPUs Available: " << xdev::num_gpus() << "\n\n";
  std::cout << "Devices:\n";
  if (devices.empty()) std::cout << "  (none: no plugin reported a device)\n";
  for (const auto& d : devices) {
    std::cout << "  " << xdev::canonical_device_name(d.device_type, d.id) << "\n"
              << "    device_type: " << d.device_type << "\n"
              << "    memory_limit: " << d.memory_limit << " (" << human_bytes(d.memory_limit)
              << ")\n"
              << "    locality: bus_id \"" << d.bus_id << "\", numa_node " << d.numa_node << "\n"
              << "    incarnation: " << hex(d.incarnation) << "\n"
              << "    physical_device_desc: \"" << d.physical_device_desc << "\"\n"
              << "    plugin: " << d.plugin << " (platform " << d.platform << ")\n";
  }
  std::cout << "\nLogical devices:\n";
  auto logical = xdev::list_logical_devices();
  if (logical.empty()) std::cout << "  (none)\n";
  for (const auto& d : logical) {
    xdev::MemoryInfo m = xdev::get_memory_info(d.name);
    std::cout << "  " << d.name << "\n"
              << "    memory: limit " << human_bytes(m.limit) << ", in use "
              << human_bytes(m.current) << " (peak " << human_bytes(m.peak) << "), reserved "
              << human_bytes(m.bytes_reserved) << ", " << (m.growth ? "grows on demand" : "reserves up front")
              << "\n";
  }
  std::cout << "\nPlugins:\n";
  if (plugins.empty()) {
    std::cout << "  (none found; searched:";
    for (const auto& dir : xdev::plugin_search_path()) std::cout << ' ' << dir;
    std::cout << ")\n";
  }
  for (const auto& p : plugins) {
    if (p.loaded) {
      std::cout << "  loaded   " << p.name << "  " << p.file << "  (ABI " << p.abi_version;
      if (!p.version.empty()) std::cout << ", version " << p.version;
      std::cout << ")";
      if (!p.status.empty()) std::cout << ": " << p.status;
      std::cout << "\n";
    } else {
      std::cout << "  skipped  " << p.file << ": " << p.reason << "\n";
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"xdev-smi: list xdev devices, their memory and the plugins found"};
  bool json = false;
  app.add_flag("--json", json, "Print machine-readable JSON");
  app.set_version_flag("--version", std::string(xdev::version()));
  CLI11_PARSE(app, argc, argv);

  // Skipped plugins are listed with their reasons below; unless the user asked
  // for a log level, do not also print them as warnings.
  setenv("XDEV_LOG_LEVEL", "error", /*overwrite=*/0);

  try {
    auto devices = xdev::list_physical_devices();
    auto plugins = xdev::list_plugins();
    if (json) {
      std::cout << to_json(devices, plugins).dump(2) << "\n";
    } else {
      print_text(devices, plugins);
    }
  } catch (const std::exception& e) {
    std::cerr << "xdev-smi: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
