#include "nvml.hpp"

#include <dlfcn.h>
#include <unistd.h>

#include <vector>

namespace xdev_smi {
namespace {

// The few NVML declarations used, spelled out (nvml.h is not needed):
// nvmlReturn_t is an int, NVML_SUCCESS 0, NVML_ERROR_INSUFFICIENT_SIZE 7.
using nvmlDevice_t = void*;
struct nvmlMemory_t {
  unsigned long long total, free, used;
};
struct nvmlProcessInfo_v2_t {
  unsigned int pid;
  unsigned long long usedGpuMemory;
  unsigned int gpuInstanceId;
  unsigned int computeInstanceId;
};
constexpr unsigned long long kNotAvailable = ~0ULL;  // NVML_VALUE_NOT_AVAILABLE

struct Nvml {
  bool ok = false;
  std::string why;
  int (*device_by_bus_id)(const char*, nvmlDevice_t*) = nullptr;
  int (*memory_info)(nvmlDevice_t, nvmlMemory_t*) = nullptr;
  int (*processes)(nvmlDevice_t, unsigned int*, nvmlProcessInfo_v2_t*) = nullptr;
};

const Nvml& nvml() {
  static const Nvml n = [] {
    Nvml out;
    void* lib = ::dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) {
      out.why = "NVML (libnvidia-ml.so.1) not found";
      return out;
    }
    auto init = reinterpret_cast<int (*)()>(::dlsym(lib, "nvmlInit_v2"));
    out.device_by_bus_id = reinterpret_cast<int (*)(const char*, nvmlDevice_t*)>(
        ::dlsym(lib, "nvmlDeviceGetHandleByPciBusId_v2"));
    out.memory_info =
        reinterpret_cast<int (*)(nvmlDevice_t, nvmlMemory_t*)>(::dlsym(lib, "nvmlDeviceGetMemoryInfo"));
    out.processes = reinterpret_cast<int (*)(nvmlDevice_t, unsigned int*, nvmlProcessInfo_v2_t*)>(
        ::dlsym(lib, "nvmlDeviceGetComputeRunningProcesses_v2"));
    if (init == nullptr || out.device_by_bus_id == nullptr || out.memory_info == nullptr) {
      out.why = "NVML lacks nvmlInit_v2, nvmlDeviceGetHandleByPciBusId_v2 or nvmlDeviceGetMemoryInfo";
      return out;
    }
    if (int rc = init(); rc != 0) {
      out.why = "nvmlInit_v2 failed (NVML error " + std::to_string(rc) + ")";
      return out;
    }
    out.ok = true;
    return out;
  }();
  return n;
}

}  // namespace

NvmlMemory nvml_memory(const std::string& bus_id) {
  NvmlMemory m;
  const Nvml& n = nvml();
  if (!n.ok) {
    m.why = n.why;
    return m;
  }
  nvmlDevice_t device = nullptr;
  if (int rc = n.device_by_bus_id(bus_id.c_str(), &device); rc != 0) {
    m.why = "NVML knows no GPU at bus id " + bus_id + " (error " + std::to_string(rc) + ")";
    return m;
  }
  nvmlMemory_t info{};
  if (int rc = n.memory_info(device, &info); rc != 0) {
    m.why = "nvmlDeviceGetMemoryInfo failed (error " + std::to_string(rc) + ")";
    return m;
  }
  m.known = true;
  m.total = info.total;
  m.free = info.free;
  m.used = info.used;
  if (n.processes != nullptr) {
    std::vector<nvmlProcessInfo_v2_t> procs(64);
    unsigned int count = static_cast<unsigned int>(procs.size());
    if (n.processes(device, &count, procs.data()) == 0) {
      m.others_known = true;
      const unsigned int self = static_cast<unsigned int>(::getpid());
      for (unsigned int i = 0; i < count && i < procs.size(); ++i) {
        if (procs[i].pid != self && procs[i].usedGpuMemory != kNotAvailable) {
          m.used_by_others += procs[i].usedGpuMemory;
        }
      }
    }
  }
  return m;
}

}  // namespace xdev_smi
