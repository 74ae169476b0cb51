// Devices and their names.
//
// Names follow TensorFlow's spellings (docs/behaviour.md B3): "/device:GPU:1", "/GPU:1",
// "GPU:1", "/gpu:1" (type is case-insensitive), the fully qualified
// "/job:localhost/replica:0/task:0/device:GPU:1", and TensorFlow's physical
// spelling "/physical_device:GPU:1". Partial names match the canonical device.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include <xdev/export.hpp>

namespace xdev {

// A parsed (possibly partial) device name. Fields not written are empty.
struct XDEV_API DeviceName {
  std::optional<std::string> job;
  std::optional<int> replica;
  std::optional<int> task;
  std::optional<std::string> type;  // upper case: "GPU"
  std::optional<int> id;            // empty for "GPU" or "GPU:*"

  // Throws xdev::Error(kInvalidArgument) naming the bad part, e.g.
  //   invalid device name "/gpu:x": device index "x" is not a non-negative integer
  static DeviceName parse(std::string_view text);

  // The name with only the given parts: "/job:localhost/device:GPU:1",
  // "/device:GPU:*"; "" when nothing is set.
  std::string to_string() const;

  // True when every part this name gives equals the part of `full`.
  bool matches(const DeviceName& full) const;

  bool operator==(const DeviceName&) const = default;
};

// "/job:localhost/replica:0/task:0/device:GPU:1"
XDEV_API std::string canonical_device_name(std::string_view type, int id);

XDEV_API std::ostream& operator<<(std::ostream& os, const DeviceName& name);

// A physical device found by a plugin (TensorFlow's PhysicalDevice).
struct PhysicalDevice {
  std::string name;         // "/physical_device:GPU:0"
  std::string device_type;  // "GPU"
  int id = 0;               // index among physical devices of this type
  std::string platform;     // "cuda", "host", ...
  std::string plugin;       // plugin name ("cpu")
  std::string model;        // "NVIDIA H100 80GB HBM3"
  std::uint64_t memory_limit = 0;  // bytes the device has
  std::string bus_id;       // "0000:05:00.0" or ""
  int numa_node = -1;       // -1 when unknown
  std::uint64_t incarnation = 0;   // random, unique per device per process run
  std::string physical_device_desc;  // "device: 0, name: ..., pci bus id: ..."
  std::map<std::string, std::string> properties;
};

// A device ops and tensors can be placed on (TensorFlow's LogicalDevice).
struct Device {
  std::string name;         // "/job:localhost/replica:0/task:0/device:GPU:0"
  std::string device_type;  // "GPU"
  int id = 0;               // index among logical devices of this type

  bool operator==(const Device& other) const { return name == other.name; }
};
using LogicalDevice = Device;

XDEV_API std::ostream& operator<<(std::ostream& os, const PhysicalDevice& device);
XDEV_API std::ostream& operator<<(std::ostream& os, const Device& device);

}  // namespace xdev
