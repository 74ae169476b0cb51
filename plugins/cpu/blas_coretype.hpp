// Which OpenBLAS kernel set ("coretype") the cpu plugin asks for, from what
// cpuid says the processor can run and what the OS saves on a context switch.
//
// Debian's OpenBLAS (DYNAMIC_ARCH) picks its kernels from the CPU's model
// number and falls back to its SSE3 "Prescott" kernels for models it does not
// know, e.g. recent Intel server CPUs: SGEMM then runs at about a fifth of
// the speed of its AVX-512 kernels. A kernel set chosen by instruction set
// works on every model. OpenBLAS does not check a forced coretype against the
// CPU (OPENBLAS_CORETYPE=SKYLAKEX on a CPU without AVX-512 loads, then dies
// with SIGILL), so only sets whose every instruction is reported are chosen.
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
  // XCR0 (xgetbv): the OS saves the SSE and AVX (YMM) state, and the
  // AVX-512 state (opmask, ZMM 0-15 upper halves, ZMM 16-31). Without them
  // the instructions fault even where cpuid lists them.
  bool os_avx = false;
  bool os_avx512 = false;
};

// Reads cpuid leaves 0, 1, 7.0 and 7.1 and XCR0. Never fails.
X86Features read_x86_features() noexcept;

// The choice: `coretype` is the value for OPENBLAS_CORETYPE, empty to leave
// the choice to OpenBLAS; `reason` says why, for the log
// ("the CPU reports AVX2 and FMA (AMD)").
struct CoretypeChoice {
  std::string coretype;
  std::string reason;
};

// The best kernel set of OpenBLAS 0.3.13 and later (Debian 11 and 12) whose
// instructions the CPU and the OS support, best first:
//   COOPERLAKE   AVX-512 F/DQ/CD/BW/VL + AVX512_BF16, OS saves AVX-512 state
//   SKYLAKEX     AVX-512 F/DQ/CD/BW/VL, OS saves AVX-512 state
//   ZEN          AMD (or Hygon) with AVX2 + FMA, OS saves AVX state
//   HASWELL      AVX2 + FMA, OS saves AVX state
//   SANDYBRIDGE  AVX, OS saves AVX state
//   NEHALEM      SSE4.2
//   CORE2        SSSE3
// and otherwise none (OpenBLAS's own choice). SAPPHIRERAPIDS is left out:
// Debian 12's 0.3.21 was built without it, and an unknown name makes
// OpenBLAS print "Core not found" and pick by model again.
CoretypeChoice choose_blas_coretype(const X86Features& cpu);

}  // namespace xdev::cpu
