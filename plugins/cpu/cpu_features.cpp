#include "cpu_features.hpp"

#include <cstdint>
#include <cstring>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

namespace xdev::cpu {

#if defined(__x86_64__) || defined(__i386__)
namespace {

bool bit(uint32_t word, int n) noexcept { return ((word >> n) & 1U) != 0; }

// XCR0, the set of register states the OS saves (only valid when cpuid
// reports OSXSAVE). xgetbv is encoded by hand: no -mxsave needed.
uint64_t read_xcr0() noexcept {
  uint32_t eax = 0, edx = 0;
  __asm__ volatile(".byte 0x0f, 0x01, 0xd0" : "=a"(eax), "=d"(edx) : "c"(0));
  return (uint64_t{edx} << 32) | eax;
}

// The brand string, with leading and trailing blanks removed (Linux's
// "model name" is the same string, trimmed the same way).
void read_brand(X86Features* f) {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (__get_cpuid(0x80000000, &eax, &ebx, &ecx, &edx) == 0 || eax < 0x80000004) return;
  char text[49] = {};
  for (unsigned leaf = 0; leaf < 3; ++leaf) {
    __cpuid(0x80000002 + leaf, eax, ebx, ecx, edx);
    std::memcpy(text + 16 * leaf + 0, &eax, 4);
    std::memcpy(text + 16 * leaf + 4, &ebx, 4);
    std::memcpy(text + 16 * leaf + 8, &ecx, 4);
    std::memcpy(text + 16 * leaf + 12, &edx, 4);
  }
  std::string brand(text);
  const size_t first = brand.find_first_not_of(' ');
  const size_t last = brand.find_last_not_of(' ');
  f->brand = first == std::string::npos ? "" : brand.substr(first, last - first + 1);
}

}  // namespace

X86Features read_x86_features() {
  X86Features f;
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (__get_cpuid(0, &eax, &ebx, &ecx, &edx) == 0) return f;
  f.x86 = true;
  const unsigned max_leaf = eax;
  char vendor[13] = {};
  std::memcpy(vendor + 0, &ebx, 4);
  std::memcpy(vendor + 4, &edx, 4);
  std::memcpy(vendor + 8, &ecx, 4);
  f.intel = std::strcmp(vendor, "GenuineIntel") == 0;
  f.amd = std::strcmp(vendor, "AuthenticAMD") == 0 || std::strcmp(vendor, "HygonGenuine") == 0;

  if (max_leaf < 1) return f;
  __cpuid(1, eax, ebx, ecx, edx);
  f.ssse3 = bit(ecx, 9);
  f.fma = bit(ecx, 12);
  f.sse4_2 = bit(ecx, 20);
  const bool osxsave = bit(ecx, 27);
  f.avx = bit(ecx, 28);
  f.f16c = bit(ecx, 29);
  if (osxsave) {
    const uint64_t xcr0 = read_xcr0();
    f.os_avx = (xcr0 & 0x6) == 0x6;                   // SSE and YMM state
    f.os_avx512 = f.os_avx && (xcr0 & 0xE0) == 0xE0;  // opmask, ZMM_Hi256, Hi16_ZMM
    f.os_amx = (xcr0 & 0x60000) == 0x60000;           // XTILECFG, XTILEDATA
  }
  read_brand(&f);

  if (max_leaf < 7) return f;
  __cpuid_count(7, 0, eax, ebx, ecx, edx);
  const unsigned max_subleaf = eax;
  f.avx2 = bit(ebx, 5);
  f.avx512f = bit(ebx, 16);
  f.avx512dq = bit(ebx, 17);
  f.avx512cd = bit(ebx, 28);
  f.avx512bw = bit(ebx, 30);
  f.avx512vl = bit(ebx, 31);
  f.avx512_vnni = bit(ecx, 11);
  f.amx_bf16 = bit(edx, 22);
  f.avx512_fp16 = bit(edx, 23);
  f.amx_tile = bit(edx, 24);
  f.amx_int8 = bit(edx, 25);
  if (max_subleaf >= 1) {
    __cpuid_count(7, 1, eax, ebx, ecx, edx);
    f.avx512_bf16 = bit(eax, 5);
  }
  return f;
}
#else
X86Features read_x86_features() { return {}; }
#endif

const X86Features& x86_features() {
  static const X86Features features = read_x86_features();
  return features;
}

}  // namespace xdev::cpu
