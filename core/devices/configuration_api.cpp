// Device configuration and memory stats (docs/behaviour.md B13-B20, <xdev/config.hpp>).
#include <xdev/config.hpp>
#include <xdev/error.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>

#include "common/checked_math.hpp"
#include "common/text.hpp"
#include "devices/runtime.hpp"

namespace xdev {
namespace {


// The runtime's record of a PhysicalDevice the user passed in.
const detail::PhysicalDeviceRecord& record_of(const PhysicalDevice& device) {
  return detail::Runtime::global().physical_device(device.name);
}

}  // namespace

void set_visible_devices(const std::vector<PhysicalDevice>& devices, std::string_view device_type) {
  std::string type = detail::to_upper(device_type);
  std::map<std::string, std::vector<int>> chosen;
  if (!type.empty()) chosen[type];  // an empty list hides every device of the type
  for (const PhysicalDevice& d : devices) {
    const auto& record = record_of(d);
    if (!type.empty() && record.info.device_type != type) {
      throw Error(ErrorCode::kInvalidArgument,
                  "set_visible_devices: " + d.name + " is not of type " + type);
    }
    auto& ids = chosen[record.info.device_type];
    if (std::find(ids.begin(), ids.end(), record.info.id) == ids.end()) ids.push_back(record.info.id);
  }
  detail::Runtime::global().configure("Visible devices", [&](detail::DeviceConfig& config) {
    for (auto& [t, ids] : chosen) config.visible[t] = ids;
  });
}

std::vector<PhysicalDevice> get_visible_devices(std::string_view device_type) {
  std::string type = detail::to_upper(device_type);
  detail::Runtime& rt = detail::Runtime::global();
  std::vector<PhysicalDevice> out;
  for (const detail::PhysicalDeviceRecord* d : rt.visible_devices(rt.config())) {
    if (type.empty() || d->info.device_type == type) out.push_back(d->info);
  }
  return out;
}

void set_memory_growth(const PhysicalDevice& device, bool enable) {
  const auto& record = record_of(device);
  detail::Runtime::global().configure("Memory growth", [&](detail::DeviceConfig& config) {
    auto l = config.logical.find(record.info.name);
    if (l != config.logical.end() && l->second.size() > 1 && enable) {
      throw Error(ErrorCode::kInvalidArgument,
                  "set_memory_growth: " + record.info.name +
                      " is split into logical devices with fixed limits; growth does not apply");
    }
    config.memory_growth[record.info.name] = enable;
  });
}

bool get_memory_growth(const PhysicalDevice& device) {
  const auto& record = record_of(device);
  return detail::memory_growth(detail::Runtime::global().config(), record);
}

void set_logical_device_configuration(const PhysicalDevice& device,
                                      const std::vector<LogicalDeviceConfiguration>& entries) {
  const auto& record = record_of(device);
  for (size_t i = 0; i < entries.size(); ++i) {
    const auto& limit = entries[i].memory_limit;
    if (limit && *limit <= 0) {
      throw Error(ErrorCode::kInvalidArgument,
                  "set_logical_device_configuration: entry " + std::to_string(i) + " for " +
                      record.info.name + " has memory_limit " + std::to_string(*limit) +
                      " MiB; it must be positive");
    }
    // Logical CPUs share the host's memory; a split device of its own
    // memory must say how it is shared.
    if (entries.size() > 1 && !limit && record.info.device_type != "CPU") {
      throw Error(ErrorCode::kInvalidArgument,
                  "set_logical_device_configuration: " + record.info.name + " is split into " +
                      std::to_string(entries.size()) + " logical devices, so every entry needs a "
                      "memory_limit (entry " + std::to_string(i) + " has none)");
    }
  }
  uint64_t total = 0;  // bytes, checked: a limit in MiB may not fit once shifted
  for (const auto& e : entries) {
    auto bytes = e.memory_limit ? detail::checked_mib_to_bytes(*e.memory_limit) : uint64_t{0};
    auto sum = bytes ? detail::checked_add(total, *bytes) : std::nullopt;
    if (!sum) {
      throw Error(ErrorCode::kInvalidArgument, "set_logical_device_configuration: the limits for " +
                                                   record.info.name + " add up past 2^64 bytes");
    }
    total = *sum;
  }
  if (total > record.info.memory_limit) {
    throw Error(ErrorCode::kInvalidArgument,
                "set_logical_device_configuration: the limits add up to " +
                    std::to_string(total >> 20) + " MiB but " + record.info.name + " has " +
                    std::to_string(record.info.memory_limit >> 20) + " MiB");
  }
  detail::Runtime::global().configure("Virtual devices", [&](detail::DeviceConfig& config) {
    if (entries.empty()) {
      config.logical.erase(record.info.name);
    } else {
      config.logical[record.info.name] = entries;
    }
  });
}

std::vector<LogicalDeviceConfiguration> get_logical_device_configuration(
    const PhysicalDevice& device) {
  const auto& record = record_of(device);
  detail::DeviceConfig config = detail::Runtime::global().config();
  auto it = config.logical.find(record.info.name);
  return it == config.logical.end() ? std::vector<LogicalDeviceConfiguration>{} : it->second;
}

void set_per_process_memory_fraction(double fraction) {
  if (!(fraction > 0.0 && fraction <= 1.0)) {
    throw Error(ErrorCode::kInvalidArgument, "set_per_process_memory_fraction: " +
                                                 std::to_string(fraction) +
                                                 " is not in (0, 1]");
  }
  detail::Runtime::global().configure("Memory fraction", [&](detail::DeviceConfig& config) {
    config.memory_fraction = fraction;
  });
}

bool devices_initialized() { return detail::Runtime::global().initialized(); }

MemoryInfo get_memory_info(std::string_view device) {
  detail::LogicalDeviceState* d = detail::resolve_device(device);
  detail::PoolStats stats = d->pool().stats();
  MemoryInfo info;
  info.current = stats.bytes_in_use;
  info.peak = stats.peak_bytes_in_use;
  info.num_allocations = stats.num_allocations;
  info.total_allocations = stats.total_allocations;
  info.largest_free_block = stats.largest_free_block;
  info.bytes_reserved = stats.bytes_reserved;
  info.limit = stats.limit_bytes;
  info.growth = d->pool().options().allow_growth;
  return info;
}

void reset_memory_stats(std::string_view device) {
  detail::resolve_device(device)->pool().reset_peak();
}

}  // namespace xdev
