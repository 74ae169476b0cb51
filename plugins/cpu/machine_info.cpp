#include "machine_info.hpp"

#include <sched.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <set>
#include <sstream>
#include <string_view>

namespace xdev::cpu {
namespace {

// Features a kernel author may branch on, in the order they are printed.
// x86 names come from the "flags" line, Arm names from "Features".
constexpr std::array<std::string_view, 19> kSimdFeatures = {
    "sse4_2",      "avx",         "avx2",     "fma",      "f16c",
    "avx512f",     "avx512bw",    "avx512vl", "avx512_vnni", "avx512_bf16",
    "avx512_fp16", "amx_tile",    "amx_bf16", "amx_int8", "asimd",
    "asimdhp",     "sve",         "sve2",     "i8mm"};

std::string_view trim(std::string_view text) {
  const auto first = text.find_first_not_of(" \t");
  if (first == std::string_view::npos) return {};
  const auto last = text.find_last_not_of(" \t\r\n");
  return text.substr(first, last - first + 1);
}

// The value of "key : value" when `line` has that key, else empty.
std::optional<std::string_view> cpuinfo_value(std::string_view line, std::string_view key) {
  const auto colon = line.find(':');
  if (colon == std::string_view::npos) return std::nullopt;
  if (trim(line.substr(0, colon)) != key) return std::nullopt;
  return trim(line.substr(colon + 1));
}

uint32_t usable_cores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) {
    const int count = CPU_COUNT(&set);
    if (count > 0) return static_cast<uint32_t>(count);
  }
  const long online = sysconf(_SC_NPROCESSORS_ONLN);
  return online > 0 ? static_cast<uint32_t>(online) : 1U;
}

}  // namespace

MachineInfo read_machine_info() {
  MachineInfo info;
  std::string model;
  std::set<std::string, std::less<>> features;
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  bool have_features = false;
  while (std::getline(cpuinfo, line)) {
    if (model.empty()) {
      if (auto value = cpuinfo_value(line, "model name")) model = std::string(*value);
    }
    if (!have_features) {
      auto value = cpuinfo_value(line, "flags");
      if (!value) value = cpuinfo_value(line, "Features");
      if (value) {
        std::istringstream words{std::string(*value)};
        std::string word;
        while (words >> word) features.insert(word);
        have_features = true;
      }
    }
    if (!model.empty() && have_features) break;
  }
  info.model_name = model.empty() ? "unknown CPU" : model;

  for (const auto feature : kSimdFeatures) {
    if (features.find(feature) == features.end()) continue;
    if (!info.simd.empty()) info.simd += ' ';
    info.simd += feature;
  }
  if (info.simd.empty()) info.simd = "none detected";

  info.cores = usable_cores();
  info.memory_total = physical_memory_bytes();
  return info;
}

uint64_t physical_memory_bytes() noexcept {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page_size = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page_size <= 0) return 0;
  return static_cast<uint64_t>(pages) * static_cast<uint64_t>(page_size);
}

std::optional<uint64_t> available_memory_bytes() noexcept {
  // fopen/fscanf rather than iostreams: no exceptions, no allocation.
  std::FILE* file = std::fopen("/proc/meminfo", "r");
  if (file == nullptr) return std::nullopt;
  std::optional<uint64_t> result;
  char key[64];
  unsigned long long value = 0;
  char unit[16];
  while (std::fscanf(file, "%63s %llu %15[^\n]", key, &value, unit) >= 2) {
    if (std::string_view(key) == "MemAvailable:") {
      result = static_cast<uint64_t>(value) * 1024U;  // reported in kB
      break;
    }
  }
  std::fclose(file);
  return result;
}

std::string format_gib(uint64_t bytes) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.1f GiB",
                static_cast<double>(bytes) / (1024.0 * 1024.0 * 1024.0));
  return text;
}

}  // namespace xdev::cpu
