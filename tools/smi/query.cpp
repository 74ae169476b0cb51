#include "query.hpp"

#include <ostream>
#include <stdexcept>

#include <xdev/xdev.hpp>

#include "nvml.hpp"

namespace xdev_smi {
namespace {

constexpr uint64_t kMiB = 1024 * 1024;
const char* kNotAvailable = "[N/A]";

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : s + ",") {
    if (c == ',') {
      size_t b = cur.find_first_not_of(' '), e = cur.find_last_not_of(' ');
      if (b != std::string::npos) out.push_back(cur.substr(b, e - b + 1));
      cur.clear();
    } else {
      cur += c;
    }
  }
  return out;
}

bool is_memory(const std::string& field) { return field.rfind("memory.", 0) == 0; }

}  // namespace

const std::vector<std::pair<std::string, std::string>>& query_fields() {
  static const std::vector<std::pair<std::string, std::string>> fields = {
      {"index", "position in xdev-smi's device list"},
      {"name", "physical device name (/physical_device:GPU:0)"},
      {"device_type", "GPU, CPU, ..."},
      {"id", "index among the physical devices of its type"},
      {"model", "the model the plugin reports"},
      {"platform", "cuda, host, sim, ..."},
      {"plugin", "the plugin's name"},
      {"pci.bus_id", "bus id, [N/A] when none"},
      {"numa_node", "-1 when unknown"},
      {"memory.total", "MiB the device has"},
      {"memory.used", "MiB in use on the device, by any process (NVML, cuda only)"},
      {"memory.free", "MiB free on the device (NVML, cuda only)"},
      {"memory.used_by_others", "MiB used by other processes (NVML, cuda only)"},
  };
  return fields;
}

QueryFormat parse_format(const std::string& format) {
  QueryFormat f;
  auto parts = split(format);
  if (parts.empty() || parts[0] != "csv") {
    throw std::invalid_argument("--format \"" + format + "\": only csv is supported "
                                "(csv, csv,noheader, csv,nounits)");
  }
  for (size_t i = 1; i < parts.size(); ++i) {
    if (parts[i] == "noheader") {
      f.header = false;
    } else if (parts[i] == "nounits") {
      f.units = false;
    } else {
      throw std::invalid_argument("--format: unknown option \"" + parts[i] +
                                  "\" (noheader, nounits)");
    }
  }
  return f;
}

std::vector<std::string> parse_fields(const std::string& list) {
  auto fields = split(list);
  if (fields.empty()) throw std::invalid_argument("--query: no field given");
  for (const auto& f : fields) {
    bool known = false;
    for (const auto& [name, what] : query_fields()) known = known || name == f;
    if (!known) {
      std::string all;
      for (const auto& [name, what] : query_fields()) all += (all.empty() ? "" : ", ") + name;
      throw std::invalid_argument("--query: unknown field \"" + f + "\" (fields: " + all + ")");
    }
  }
  return fields;
}

void print_query(const std::vector<std::string>& fields, const QueryFormat& format,
                 std::ostream& out) {
  if (format.header) {
    for (size_t i = 0; i < fields.size(); ++i) {
      out << (i > 0 ? ", " : "") << fields[i];
      if (format.units && is_memory(fields[i])) out << " [MiB]";
    }
    out << "\n";
  }
  const auto devices = xdev::list_physical_devices();
  for (size_t row = 0; row < devices.size(); ++row) {
    const auto& d = devices[row];
    NvmlMemory nv;
    bool nv_read = false;
    auto memory = [&](uint64_t bytes, bool known) -> std::string {
      if (!known) return kNotAvailable;
      return std::to_string(bytes / kMiB) + (format.units ? " MiB" : "");
    };
    auto from_nvml = [&]() -> const NvmlMemory& {
      if (!nv_read && d.platform == "cuda" && !d.bus_id.empty()) nv = nvml_memory(d.bus_id);
      nv_read = true;
      return nv;
    };
    for (size_t i = 0; i < fields.size(); ++i) {
      const std::string& f = fields[i];
      std::string v;
      if (f == "index") v = std::to_string(row);
      else if (f == "name") v = d.name;
      else if (f == "device_type") v = d.device_type;
      else if (f == "id") v = std::to_string(d.id);
      else if (f == "model") v = d.model;
      else if (f == "platform") v = d.platform;
      else if (f == "plugin") v = d.plugin;
      else if (f == "pci.bus_id") v = d.bus_id.empty() ? kNotAvailable : d.bus_id;
      else if (f == "numa_node") v = std::to_string(d.numa_node);
      else if (f == "memory.total") v = memory(d.memory_limit, true);
      else if (f == "memory.used") v = memory(from_nvml().used, from_nvml().known);
      else if (f == "memory.free") v = memory(from_nvml().free, from_nvml().known);
      else if (f == "memory.used_by_others") {
        v = memory(from_nvml().used_by_others, from_nvml().known && from_nvml().others_known);
      }
      out << (i > 0 ? ", " : "") << v;
    }
    out << "\n";
  }
}

}  // namespace xdev_smi
