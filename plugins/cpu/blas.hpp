// OpenBLAS, loaded by the cpu plugin on its first matrix product.
//
// The plugin links nothing from OpenBLAS: loading it costs milliseconds and
// megabytes (its constructor probes the CPU and starts a thread pool), which
// a process that only lists its devices should not pay. The first MatMul that
// needs BLAS calls blas(), which, once per process:
//   1. when OpenBLAS is already loaded (the program linked it, or an earlier
//      instance of this plugin loaded it), uses it as it is;
//   2. otherwise, unless the user set OPENBLAS_CORETYPE, sets it to the best
//      kernel set the CPU supports (blas_coretype.hpp), and unless the user
//      set OPENBLAS_NUM_THREADS, sets it to 1 (the thread policy below);
//      then dlopen()s the library and restores the environment;
//   3. logs what it loaded at INFO: library, kernel set and who chose it,
//      threads and who chose them.
// setenv/unsetenv are not thread-safe against getenv in other threads
// (glibc); the window is the load itself, once per process, and the
// variables touched are OpenBLAS's own.
//
// Threads: oneTBB owns the plugin's parallelism; OpenBLAS runs in the calling
// thread (one OpenBLAS thread per oneTBB task, no oversubscription) and large
// products are tiled over oneTBB tasks (kernels/matmul.cpp). Set before
// loading, OPENBLAS_NUM_THREADS=1 also keeps OpenBLAS from starting its
// thread pool at all. A user's OPENBLAS_NUM_THREADS wins; with more than one
// thread the kernel makes one BLAS call and lets OpenBLAS split it.
#pragma once

#include <xdev/plugin.h>

#include <cblas.h>

#include <string>

namespace xdev::cpu {

// The functions the plugin uses, resolved with dlsym.
struct BlasApi {
  decltype(&cblas_sgemm) sgemm = nullptr;
  decltype(&cblas_dgemm) dgemm = nullptr;
  decltype(&openblas_get_num_threads) get_num_threads = nullptr;
  decltype(&openblas_set_num_threads) set_num_threads = nullptr;
  decltype(&openblas_get_config) get_config = nullptr;
  decltype(&openblas_get_corename) get_corename = nullptr;
};

// Where blas() writes its log lines (the host's log of the plugin instance
// whose kernel asked first).
using BlasLogFn = void (*)(void* context, xdev_log_level_t level, const char* message);

// OpenBLAS, loaded on the first call; NULL when it cannot be loaded (logged
// once at WARNING; MatMul then uses its plain loops). Thread-safe; after the
// first call one atomic load.
const BlasApi* blas(BlasLogFn log, void* log_context) noexcept;

// OpenBLAS if blas() has loaded it already, else NULL. Loads nothing.
const BlasApi* blas_if_loaded() noexcept;

// Whether OpenBLAS is mapped in this process already (by blas() or by the
// program). Loads nothing.
bool blas_in_process() noexcept;

// The file name dlopen() is given ("libopenblas.so.0").
const char* blas_library_name() noexcept;

// What blas() would do about the kernel set and the threads if it loaded
// OpenBLAS now, for the device's properties: "ZEN (chosen by the cpu plugin:
// the CPU reports AVX2 and FMA (AMD))", "HASWELL (OPENBLAS_CORETYPE)".
std::string planned_blas_core();
std::string planned_blas_threads();

}  // namespace xdev::cpu
