#include "blas.hpp"

#include <dlfcn.h>

#include <mutex>
#include <new>

#include "cuda_plugin_config.hpp"

namespace xdev::cuda {
namespace {

struct Loaded {
  Blas table{};
  bool ok = false;
  std::string error;
};

template <typename F>
bool find(void* library, const char* name, F* out, std::string* error) {
  *out = reinterpret_cast<F>(dlsym(library, name));
  if (*out == nullptr && error->empty()) *error = std::string("libcublas has no ") + name;
  return *out != nullptr;
}

Loaded load() {
  Loaded loaded;
  // The soname first (LD_LIBRARY_PATH, this library's RUNPATH, the system),
  // then the toolkit the plugin was built with.
  const std::string soname = "libcublas.so." + std::to_string(CUBLAS_VER_MAJOR);
  void* library = dlopen(soname.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  std::string first_error;
  if (library == nullptr) {
    const char* e = dlerror();
    first_error = e != nullptr ? e : "?";
    const std::string fallback = std::string(XDEV_CUDA_LIBDIR) + "/" + soname;
    if (!std::string(XDEV_CUDA_LIBDIR).empty()) {
      library = dlopen(fallback.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
    }
  }
  if (library == nullptr) {
    loaded.error = "cuBLAS could not be loaded: " + first_error;
    return loaded;
  }
  Blas& t = loaded.table;
  std::string& error = loaded.error;
  loaded.ok = find(library, "cublasCreate_v2", &t.create, &error) &
              find(library, "cublasDestroy_v2", &t.destroy, &error) &
              find(library, "cublasSetStream_v2", &t.set_stream, &error) &
              find(library, "cublasSetMathMode", &t.set_math_mode, &error) &
              find(library, "cublasGetMathMode", &t.get_math_mode, &error) &
              find(library, "cublasSetWorkspace_v2", &t.set_workspace, &error) &
              find(library, "cublasSgemm_v2", &t.sgemm, &error) &
              find(library, "cublasDgemm_v2", &t.dgemm, &error) &
              find(library, "cublasSgemm_v2_64", &t.sgemm_64, &error) &
              find(library, "cublasDgemm_v2_64", &t.dgemm_64, &error) &
              find(library, "cublasSgemmStridedBatched", &t.sgemm_strided_batched, &error) &
              find(library, "cublasDgemmStridedBatched", &t.dgemm_strided_batched, &error);
  return loaded;
}

}  // namespace

const Blas* load_blas(std::string* error) noexcept {
  static std::once_flag once;
  static Loaded* loaded = nullptr;
  try {
    std::call_once(once, [] { loaded = new Loaded(load()); });
  } catch (...) {
    if (error != nullptr) *error = "cuBLAS could not be loaded: out of host memory";
    return nullptr;
  }
  if (loaded == nullptr || !loaded->ok) {
    if (error != nullptr) *error = loaded != nullptr ? loaded->error : "cuBLAS not loaded";
    return nullptr;
  }
  return &loaded->table;
}

}  // namespace xdev::cuda
