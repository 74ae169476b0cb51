// xdev-smi: the device mapping (like TensorFlow's device_lib.list_local_devices()
// and nvidia-smi): every device with its name, type, memory, locality,
// incarnation and physical description, then every plugin file found with its
// status. `--json` prints the same for machines. Exit status 0 whenever the
// runtime could be queried, even with no plugin at all.
//
// `xdev-smi doctor [--expect TYPE]` explains why a device is or is not there
// (doctor.cpp); `--query FIELD,... --format csv` prints chosen fields per
// device like `nvidia-smi --query-gpu` (query.cpp); `-l SECONDS` repeats
// the report every SECONDS (`--count N` stops after N reports). `--ops
// [DEVICE]` prints which ops and dtypes each device has kernels for (ops.cpp).
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <iomanip>
#include <iostream>
#include <sstream>
#include <string>
#include <thread>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <xdev/config.hpp>
#include <xdev/xdev.hpp>

#include "doctor.hpp"
#include "ops.hpp"
#include "query.hpp"

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
  std::string query;
  app.add_option("--query,--query-gpu", query,
                 "Print these fields per device, comma-separated (--help-query lists them)");
  std::string format = "csv";
  app.add_option("--format", format, "With --query: csv[,noheader][,nounits]");
  bool help_query = false;
  app.add_flag("--help-query", help_query, "List the fields --query accepts");
  double loop_seconds = 0;
  app.add_option("-l,--loop", loop_seconds, "Repeat the report every SECONDS")
      ->check(CLI::PositiveNumber);
  int count = 0;
  app.add_option("--count", count, "With -l: stop after N reports (0: until interrupted)")
      ->check(CLI::NonNegativeNumber);
  std::string ops_device;
  auto* ops = app.add_option("--ops", ops_device,
                             "Print the op x dtype table of kernels of DEVICE (every logical "
                             "device when none is given); with --json as JSON")
                  ->expected(0, 1)
                  ->type_name("[DEVICE]");
  app.set_version_flag("--version", std::string(xdev::version()));
  auto* doctor = app.add_subcommand(
      "doctor", "Explain why devices are or are not there; exit 1 when --expect is missing");
  std::string expect;
  doctor->add_option("--expect", expect, "A device type that must be there (GPU, CPU, ...)");
  CLI11_PARSE(app, argc, argv);

  // Skipped plugins are listed with their reasons below; unless the user asked
  // for a log level, do not also print them as warnings.
  setenv("XDEV_LOG_LEVEL", "error", /*overwrite=*/0);

  if (help_query) {
    for (const auto& [name, what] : xdev_smi::query_fields()) {
      std::cout << "  " << std::left << std::setw(24) << name << what << "\n";
    }
    return 0;
  }
  try {
    if (doctor->parsed()) return xdev_smi::doctor(expect, std::cout);
    if (ops->count() > 0) {
      xdev_smi::print_ops(ops_device, json, std::cout);
      return 0;
    }
    std::vector<std::string> fields;
    xdev_smi::QueryFormat query_format;
    if (!query.empty()) {
      fields = xdev_smi::parse_fields(query);
      query_format = xdev_smi::parse_format(format);
    }
    for (int report = 1;; ++report) {
      if (loop_seconds > 0 && query.empty() && !json) {
        const std::time_t now = std::time(nullptr);
        char stamp[64];
        std::strftime(stamp, sizeof stamp, "%a %b %e %H:%M:%S %Y", std::localtime(&now));
        std::cout << stamp << "\n";
      }
      if (!query.empty()) {
        xdev_smi::print_query(fields, query_format, std::cout);
      } else {
        auto devices = xdev::list_physical_devices();
        auto plugins = xdev::list_plugins();
        if (json) {
          std::cout << to_json(devices, plugins).dump(2) << "\n";
        } else {
          print_text(devices, plugins);
        }
      }
      std::cout.flush();
      if (loop_seconds <= 0 || (count > 0 && report >= count)) break;
      if (!query.empty() && query_format.header) query_format.header = false;  // once, like nvidia-smi
      std::this_thread::sleep_for(std::chrono::duration<double>(loop_seconds));
    }
  } catch (const std::invalid_argument& e) {
    std::cerr << "xdev-smi: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "xdev-smi: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
