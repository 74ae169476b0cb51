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

#include "cpu_features.hpp"

namespace xdev::cpu {

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
