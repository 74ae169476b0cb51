// The full names of a process's logical devices, as the SDK reports them
// (docs/behaviour.md: "/job:localhost/replica:0/task:0/device:GPU:1").
#pragma once

#include <string>

namespace xdev_test {

inline std::string logical_device_name(const std::string& type, int index) {
  return "/job:localhost/replica:0/task:0/device:" + type + ":" + std::to_string(index);
}

// The names the tests use most ("using namespace xdev_test::devices;").
namespace devices {
inline const std::string kCpu0 = logical_device_name("CPU", 0);
inline const std::string kCpu1 = logical_device_name("CPU", 1);
inline const std::string kGpu0 = logical_device_name("GPU", 0);
inline const std::string kGpu1 = logical_device_name("GPU", 1);
}  // namespace devices

}  // namespace xdev_test
