#include "blas_coretype.hpp"

namespace xdev::cpu {

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
