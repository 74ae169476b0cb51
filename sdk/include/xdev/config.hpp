// Device configuration and memory (docs/behaviour.md B13-B21). Configuration calls work
// only before the devices are initialized, which happens at the first call
// that needs a logical device (creating a tensor, list_logical_devices,
// get_memory_info); afterwards they throw xdev::Error(kFailedPrecondition)
// and change nothing.
#pragma once

#include <concepts>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include <xdev/device.hpp>
#include <xdev/export.hpp>

namespace xdev {

// One logical device carved out of a physical one (TensorFlow's
// LogicalDeviceConfiguration). `memory_limit` is in MiB.
struct LogicalDeviceConfiguration {
  std::optional<int64_t> memory_limit;
  friend bool operator==(const LogicalDeviceConfiguration&,
                         const LogicalDeviceConfiguration&) = default;
};

// B20: only these physical devices of `device_type` become logical devices
// (in this order). Devices of other types are not affected.
XDEV_API void set_visible_devices(const std::vector<PhysicalDevice>& devices,
                                  std::string_view device_type = "");
// One device, no braces needed: set_visible_devices(gpus[0], "GPU").
template <typename D>
  requires std::same_as<D, PhysicalDevice>
void set_visible_devices(const D& device, std::string_view device_type = "") {
  set_visible_devices(std::vector<PhysicalDevice>{device}, device_type);
}
XDEV_API std::vector<PhysicalDevice> get_visible_devices(std::string_view device_type = "");

// B14: start small and grow on demand instead of reserving up front.
XDEV_API void set_memory_growth(const PhysicalDevice& device, bool enable);
XDEV_API bool get_memory_growth(const PhysicalDevice& device);

// B16: one entry caps the device; several split it into logical devices, each
// with its own pool and limit. A split GPU (any device but the CPU) needs a
// memory_limit in every entry; a CPU entry without one gets the default limit
// of a CPU pool (the CPU's memory is shared, as in TensorFlow).
XDEV_API void set_logical_device_configuration(
    const PhysicalDevice& device, const std::vector<LogicalDeviceConfiguration>& config);
XDEV_API std::vector<LogicalDeviceConfiguration> get_logical_device_configuration(
    const PhysicalDevice& device);

// B15: each pool without an explicit limit is capped at this fraction of its
// device's free memory at initialization (default 0.95), in (0, 1].
XDEV_API void set_per_process_memory_fraction(double fraction);

// True once logical devices exist.
XDEV_API bool devices_initialized();

// B18: memory of one logical device (any spelling: "GPU:0", "/device:CPU:1").
struct MemoryInfo {
  uint64_t current = 0;             // bytes in use now
  uint64_t peak = 0;                // highest `current` since start or reset
  uint64_t num_allocations = 0;     // live allocations
  uint64_t total_allocations = 0;
  uint64_t largest_free_block = 0;
  uint64_t bytes_reserved = 0;      // taken from the plugin
  uint64_t limit = 0;
  bool growth = false;
};
XDEV_API MemoryInfo get_memory_info(std::string_view device);
XDEV_API void reset_memory_stats(std::string_view device);

}  // namespace xdev
