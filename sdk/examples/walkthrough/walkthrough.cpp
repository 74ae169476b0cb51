// TensorFlow's "Use a GPU" guide, step by step, in xdev (docs/behaviour.md, the
// walkthrough). On a machine without a GPU the same tour runs on the CPU,
// split into two logical CPU devices.
//
//   xdev-walkthrough            # placement log on stderr, results on stdout
#include <algorithm>
#include <cstdint>
#include <iostream>
#include <string>
#include <vector>

#include <xdev/xdev.hpp>

namespace {

std::string plural(size_t n, const std::string& word) {
  return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
}

void print_counts(const std::string& type) {
  std::cout << plural(xdev::list_physical_devices(type).size(), "Physical " + type) << ", "
            << plural(xdev::list_logical_devices(type).size(), "Logical " + type) << "\n";
}

}  // namespace

int main() try {
  // Step 1.
  std::cout << "Num GPUs Available: " << xdev::num_gpus() << "\n";

  // Step 4 and 6 come first: devices can be configured only before they are
  // initialized. Split the first GPU (or, without one, the CPU) into two
  // logical devices of 1024 MiB each, or of a quarter of the device's memory
  // each when it has less than 4 GiB (the guide's 1 GiB halves do not fit a
  // small GPU).
  const std::string type = xdev::num_gpus() > 0 ? "GPU" : "CPU";
  std::vector<xdev::PhysicalDevice> physical = xdev::list_physical_devices(type);
  if (type == "GPU") xdev::set_visible_devices(physical[0], "GPU");
  int64_t half_mib = 1024;
  if (const uint64_t mib = physical[0].memory_limit >> 20; mib > 0 && mib < 4096) {
    half_mib = std::max<int64_t>(1, static_cast<int64_t>(mib / 4));
  }
  xdev::set_logical_device_configuration(physical[0],
                                         {{.memory_limit = half_mib}, {.memory_limit = half_mib}});
  print_counts(type);

  // Step 2: log placement, create a and b, multiply.
  xdev::set_log_device_placement(true);
  xdev::Tensor a = xdev::constant({{1.f, 2.f, 3.f}, {4.f, 5.f, 6.f}});
  xdev::Tensor b = xdev::constant({{1.f, 2.f}, {3.f, 4.f}, {5.f, 6.f}});
  xdev::Tensor c = xdev::matmul(a, b);
  std::cout << c << "\n";

  // Step 3: a and b on /CPU:0, matmul outside the scope.
  {
    xdev::DeviceScope scope("/CPU:0");
    a = xdev::constant({{1.f, 2.f, 3.f}, {4.f, 5.f, 6.f}});
    b = xdev::constant({{1.f, 2.f}, {3.f, 4.f}, {5.f, 6.f}});
  }
  c = xdev::matmul(a, b);
  std::cout << "a on " << a.device().name << ", c on " << c.device().name << "\n";

  // Step 4, after initialization: a configuration change fails cleanly (setting
  // again what is in effect is no error). The CPU grows by default.
  try {
    xdev::set_memory_growth(physical[0], false);
  } catch (const xdev::Error& e) {
    std::cout << "set_memory_growth after initialization: " << e.what() << "\n";
  }

  // Step 5: a device that does not exist.
  xdev::set_soft_device_placement(false);
  try {
    xdev::DeviceScope scope("/device:GPU:2");
    xdev::matmul(a, b);
  } catch (const xdev::Error& e) {
    std::cout << "soft placement off: " << e.what() << "\n";
  }
  xdev::set_soft_device_placement(true);
  {
    xdev::DeviceScope scope("/device:GPU:2");
    c = xdev::matmul(a, b);
  }
  std::cout << "soft placement on: MatMul ran on " << c.device().name << "\n";

  // Step 6: a tower per logical device, add_n on /CPU:0.
  std::vector<xdev::Tensor> towers;
  for (const xdev::Device& device : xdev::list_logical_devices(type)) {
    xdev::DeviceScope scope(device);
    xdev::Tensor x = xdev::constant({{1.f, 2.f, 3.f}, {4.f, 5.f, 6.f}});
    xdev::Tensor y = xdev::constant({{1.f, 2.f}, {3.f, 4.f}, {5.f, 6.f}});
    towers.push_back(xdev::matmul(x, y));
  }
  xdev::Tensor total;
  {
    xdev::DeviceScope scope("/CPU:0");
    total = xdev::add_n(towers);
  }
  std::cout << total << "\n";
  return 0;
} catch (const std::exception& e) {
  std::cerr << "walkthrough: " << e.what() << "\n";
  return 1;
}
