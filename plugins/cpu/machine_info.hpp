// What the cpu plugin reports about the host: processor model, SIMD
// features, usable cores and memory, read from Linux (/proc, sysconf).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace xdev::cpu {

struct MachineInfo {
  // "model name" of the first processor in /proc/cpuinfo, or "unknown CPU".
  std::string model_name;
  // Space-separated SIMD features worth knowing for kernels ("avx2 fma
  // avx512f ..."), in a fixed order; "none detected" when none is known.
  std::string simd;
  // Logical CPUs this process may run on (its affinity mask), at least 1.
  uint32_t cores = 1;
  // Physical RAM in bytes.
  uint64_t memory_total = 0;
};

// Reads everything once; never fails (unknown values get fallbacks).
MachineInfo read_machine_info();

// Physical RAM in bytes (sysconf), 0 when unknown.
uint64_t physical_memory_bytes() noexcept;

// MemAvailable from /proc/meminfo in bytes; empty when it cannot be read.
std::optional<uint64_t> available_memory_bytes() noexcept;

// "23.4 GiB".
std::string format_gib(uint64_t bytes);

}  // namespace xdev::cpu
