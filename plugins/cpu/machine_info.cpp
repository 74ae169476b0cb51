#include "machine_info.hpp"

#include <sched.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <set>
#include <sstream>
#include <string_view>
#include <utility>

#include "cpu_features.hpp"

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

// "model name" and the "flags" (x86) or "Features" (Arm) of the first
// processor in /proc/cpuinfo. Only where cpuid cannot say: iostreams set up
// their locale on first use, and generating the file is slow.
void read_cpuinfo(std::string* model, std::set<std::string, std::less<>>* features) {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  bool have_features = false;
  while (std::getline(cpuinfo, line)) {
    if (model->empty()) {
      if (auto value = cpuinfo_value(line, "model name")) *model = std::string(*value);
    }
    if (!have_features) {
      auto value = cpuinfo_value(line, "flags");
      if (!value) value = cpuinfo_value(line, "Features");
      if (value) {
        std::istringstream words{std::string(*value)};
        std::string word;
        while (words >> word) features->insert(word);
        have_features = true;
      }
    }
    if (!model->empty() && have_features) break;
  }
}

// The SIMD features of kSimdFeatures an x86 CPU has, from cpuid, counting
// only those whose registers the OS saves (as Linux's "flags" do).
std::set<std::string, std::less<>> x86_simd(const X86Features& f) {
  const std::pair<const char*, bool> known[] = {
      {"sse4_2", f.sse4_2},
      {"avx", f.avx && f.os_avx},
      {"avx2", f.avx2 && f.os_avx},
      {"fma", f.fma && f.os_avx},
      {"f16c", f.f16c && f.os_avx},
      {"avx512f", f.avx512f && f.os_avx512},
      {"avx512bw", f.avx512bw && f.os_avx512},
      {"avx512vl", f.avx512vl && f.os_avx512},
      {"avx512_vnni", f.avx512_vnni && f.os_avx512},
      {"avx512_bf16", f.avx512_bf16 && f.os_avx512},
      {"avx512_fp16", f.avx512_fp16 && f.os_avx512},
      {"amx_tile", f.amx_tile && f.os_amx},
      {"amx_bf16", f.amx_bf16 && f.os_amx},
      {"amx_int8", f.amx_int8 && f.os_amx},
  };
  std::set<std::string, std::less<>> out;
  for (const auto& [name, present] : known) {
    if (present) out.insert(name);
  }
  return out;
}

}  // namespace

MachineInfo read_machine_info() {
  MachineInfo info;
  std::string model;
  std::set<std::string, std::less<>> features;
  // x86: cpuid, no system call. Generating /proc/cpuinfo costs ~0.2 ms (the
  // kernel asks every CPU for its clock), a seventh of the start-up budget.
  const X86Features& x86 = x86_features();
  if (x86.x86 && !x86.brand.empty()) {
    model = x86.brand;
    features = x86_simd(x86);
  }
  if (model.empty()) read_cpuinfo(&model, &features);
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
