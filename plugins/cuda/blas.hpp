// cuBLAS, loaded at run time (a process that never opens a GPU must not map
// cuBLAS, ~100 MiB of code). The implementation library does not link
// libcublas; the first stream loads it with dlopen and looks up the few
// functions MatMul needs. Thread-safe; loaded once per process, never
// unloaded.
#pragma once

#include <cublas_v2.h>

#include <string>

#include <xdev/plugin.h>

namespace xdev::cuda {

// The cuBLAS functions the plugin calls (the _v2 entry points that
// cublas_v2.h maps the plain names to).
struct Blas {
  decltype(&cublasCreate_v2) create;
  decltype(&cublasDestroy_v2) destroy;
  decltype(&cublasSetStream_v2) set_stream;
  decltype(&cublasSetMathMode) set_math_mode;
  decltype(&cublasGetMathMode) get_math_mode;
  decltype(&cublasSetWorkspace_v2) set_workspace;
  decltype(&cublasSgemm_v2) sgemm;
  decltype(&cublasDgemm_v2) dgemm;
  decltype(&cublasSgemm_v2_64) sgemm_64;
  decltype(&cublasDgemm_v2_64) dgemm_64;
  // BatchMatMulV2 (ops_batched.cpp).
  decltype(&cublasSgemmStridedBatched) sgemm_strided_batched;
  decltype(&cublasDgemmStridedBatched) dgemm_strided_batched;
};

// The table, loading libcublas.so.<major> at the first call; NULL (and the
// reason in *error) when it cannot be loaded.
const Blas* load_blas(std::string* error) noexcept;

class Call;
// The stream's cuBLAS handle for one kernel call, its workspace taken from
// the call's scratch (else the handle's default; ops.cpp): MatMul, BatchMatMulV2
// and the convolutions; a status naming the op when there is no
// cuBLAS.
xdev_status_t* blas_for_call(Call& call, const Blas** out_blas, cublasHandle_t* out);

}  // namespace xdev::cuda
