#include "blas_coretype.hpp"

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

}  // namespace

X86Features read_x86_features() noexcept {
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
  if (osxsave) {
    const uint64_t xcr0 = read_xcr0();
    f.os_avx = (xcr0 & 0x6) == 0x6;            // SSE and YMM state
    f.os_avx512 = f.os_avx && (xcr0 & 0xE0) == 0xE0;  // opmask, ZMM_Hi256, Hi16_ZMM
  }

  if (max_leaf < 7) return f;
  __cpuid_count(7, 0, eax, ebx, ecx, edx);
  const unsigned max_subleaf = eax;
  f.avx2 = bit(ebx, 5);
  f.avx512f = bit(ebx, 16);
  f.avx512dq = bit(ebx, 17);
  f.avx512cd = bit(ebx, 28);
  f.avx512bw = bit(ebx, 30);
  f.avx512vl = bit(ebx, 31);
  if (max_subleaf >= 1) {
    __cpuid_count(7, 1, eax, ebx, ecx, edx);
    f.avx512_bf16 = bit(eax, 5);
  }
  return f;
}
#else
X86Features read_x86_features() noexcept { return {}; }
#endif

CoretypeChoice choose_blas_coretype(const X86Features& cpu) {
  if (!cpu.x86) return {"", "not an x86 processor"};
  const bool avx512 = cpu.avx512f && cpu.avx512dq && cpu.avx512cd && cpu.avx512bw &&
                      cpu.avx512vl && cpu.os_avx512;
  const bool avx2 = cpu.avx && cpu.avx2 && cpu.fma && cpu.os_avx;
  if (avx512 && cpu.avx512_bf16) {
    return {"COOPERLAKE", "the CPU reports AVX-512 F/DQ/CD/BW/VL and AVX512_BF16"};
  }
  if (avx512) return {"SKYLAKEX", "the CPU reports AVX-512 F/DQ/CD/BW/VL"};
  if (avx2 && cpu.amd) return {"ZEN", "the CPU reports AVX2 and FMA (AMD)"};
  if (avx2) return {"HASWELL", "the CPU reports AVX2 and FMA"};
  if (cpu.avx && cpu.os_avx) return {"SANDYBRIDGE", "the CPU reports AVX"};
  if (cpu.sse4_2) return {"NEHALEM", "the CPU reports SSE4.2"};
  if (cpu.ssse3) return {"CORE2", "the CPU reports SSSE3"};
  return {"", "the CPU reports no instruction set newer than SSE3"};
}

}  // namespace xdev::cpu
