// The process bench_startup starts and times: a program that links libxdev
// like a user's, doing one of
//   none    nothing (it calls xdev::version(), which discovers nothing, so the
//           linker keeps libxdev): the cost of loading libxdev and its
//           libraries, the baseline
//   list    xdev::list_physical_devices(): plugin discovery, as a program
//           that lists its devices does it
//   matmul  list, then one 64×64 float32 product on the first device (on
//           the CPU: the cpu plugin loads OpenBLAS here)
// Exit status 0 on success; 2 for a bad argument, 3 when no device was found.
#include <cstdio>
#include <cstring>
#include <vector>

#include <xdev/xdev.hpp>

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s none|list|matmul\n", argv[0]);
    return 2;
  }
  const char* mode = argv[1];
  if (std::strcmp(mode, "none") == 0) return xdev::version().empty() ? 1 : 0;
  if (std::strcmp(mode, "list") != 0 && std::strcmp(mode, "matmul") != 0) {
    std::fprintf(stderr, "unknown mode '%s'\n", mode);
    return 2;
  }
  const std::vector<xdev::PhysicalDevice> devices = xdev::list_physical_devices();
  if (devices.empty()) return 3;
  if (std::strcmp(mode, "matmul") == 0) {
    const std::vector<float> values(64 * 64, 0.5f);
    const xdev::Tensor a = xdev::constant(values, xdev::Shape{64, 64});
    const xdev::HostTensor c = xdev::matmul(a, a).to_host();
    if (c.byte_size() != values.size() * sizeof(float)) return 1;
  }
  return 0;
}
