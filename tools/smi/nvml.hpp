// NVIDIA's management library, opened at run time (dlopen libnvidia-ml.so.1)
// so that xdev-smi needs nothing of CUDA to build or to run: memory of an
// NVIDIA GPU as the driver sees it, including what other processes use.
#pragma once

#include <cstdint>
#include <string>

namespace xdev_smi {

struct NvmlMemory {
  bool known = false;          // NVML answered for this device
  uint64_t total = 0, free = 0, used = 0;
  bool others_known = false;   // the per-process list was readable
  uint64_t used_by_others = 0; // compute processes other than this one
  std::string why;             // why not known
};

// The GPU at PCI bus id `bus_id` ("0000:05:00.0").
NvmlMemory nvml_memory(const std::string& bus_id);

}  // namespace xdev_smi
