// What the x86 processor and the OS support, read with cpuid and xgetbv:
// for the OpenBLAS kernel set (blas_coretype.hpp) and the device's
// description (machine_info.hpp).
#pragma once

#include <string>

namespace xdev::cpu {

// What cpuid (and xgetbv) report, reduced to what the choice needs. All
// false on a processor that is not x86.
struct X86Features {
  bool x86 = false;    // cpuid was read at all
  bool intel = false;  // vendor "GenuineIntel"
  bool amd = false;    // vendor "AuthenticAMD" or "HygonGenuine"
  bool ssse3 = false;
  bool sse4_2 = false;
  bool avx = false;
  bool fma = false;
  bool avx2 = false;
  bool avx512f = false;
  bool avx512dq = false;
  bool avx512cd = false;
  bool avx512bw = false;
  bool avx512vl = false;
  bool avx512_bf16 = false;
  // Only for the "simd" property (machine_info.cpp).
  bool f16c = false;
  bool avx512_vnni = false;
  bool avx512_fp16 = false;
  bool amx_tile = false;
  bool amx_bf16 = false;
  bool amx_int8 = false;
  // XCR0 (xgetbv): the OS saves the SSE and AVX (YMM) state, and the
  // AVX-512 state (opmask, ZMM 0-15 upper halves, ZMM 16-31). Without them
  // the instructions fault even where cpuid lists them.
  bool os_avx = false;
  bool os_avx512 = false;
  bool os_amx = false;  // XTILECFG and XTILEDATA state
  // The processor brand string (leaves 0x80000002-4), trimmed as Linux
  // trims it for "model name"; empty when there is none.
  std::string brand;
};

// Reads cpuid leaves 0, 1, 7.0, 7.1 and 0x80000000-4, and XCR0. No system
// call, unlike /proc/cpuinfo (whose generation costs ~0.2 ms). Never fails.
X86Features read_x86_features();

// read_x86_features() of the first call, kept for the process (each cpuid is
// a trap to the hypervisor in a VM: ~1 µs, about 20 of them).
const X86Features& x86_features();

}  // namespace xdev::cpu
