#include "blas.hpp"

#include <dlfcn.h>
#include <link.h>
#include <strings.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "blas_coretype.hpp"
#include "cpu_plugin_config.hpp"

namespace xdev::cpu {
namespace {

constexpr const char* kCoretypeVariable = "OPENBLAS_CORETYPE";
constexpr const char* kThreadsVariable = "OPENBLAS_NUM_THREADS";

std::once_flag g_once;
BlasApi g_api;                              // filled once, under g_once
std::atomic<const BlasApi*> g_blas{nullptr};  // &g_api once it works

void emit(BlasLogFn log, void* context, xdev_log_level_t level, const std::string& text) {
  if (log != nullptr) log(context, level, text.c_str());
}

// Sets `name` to `value` unless it is set (to anything, even ""); true when
// this call set it.
bool set_unless_user_did(const char* name, const char* value) {
  if (std::getenv(name) != nullptr) return false;
  return setenv(name, value, /*overwrite=*/0) == 0 && std::strcmp(std::getenv(name), value) == 0;
}

// Takes back what set_unless_user_did put into the environment, so that
// child processes see the user's environment. OpenBLAS read it while it
// loaded and never reads it again.
void take_back(const char* name, const char* value) {
  const char* now = std::getenv(name);
  if (now != nullptr && std::strcmp(now, value) == 0) unsetenv(name);
}

// dlerror() as a string ("" when there is none).
std::string dl_error() {
  const char* text = dlerror();
  return text != nullptr ? text : "";
}

template <typename Fn>
bool resolve(void* handle, const char* symbol, Fn* out) {
  *out = reinterpret_cast<Fn>(dlsym(handle, symbol));
  return *out != nullptr;
}

constexpr const char* kPypiOpenblasPrefix = "scipy_";
constexpr const char* kPypiOpenblasName = "libscipy_openblas.so (PyPI scipy-openblas32)";

// The file of scipy-openblas32 beside this package ("" outside the Python
// package: XDEV_PYPI_OPENBLAS is empty there).
std::string pypi_openblas_path() {
  if (std::strlen(XDEV_PYPI_OPENBLAS) == 0) return "";
  Dl_info info{};
  if (dladdr(reinterpret_cast<const void*>(&pypi_openblas_path), &info) == 0 ||
      info.dli_fname == nullptr) {
    return "";
  }
  std::string self = info.dli_fname;
  const size_t slash = self.rfind('/');
  if (slash == std::string::npos) return "";
  return self.substr(0, slash + 1) + XDEV_PYPI_OPENBLAS;
}

// Loads OpenBLAS as blas.hpp describes. Runs once per process.
void load(BlasLogFn log, void* context) {
  const auto start = std::chrono::steady_clock::now();
  const char* name = blas_library_name();
  std::string prefix;  // of every symbol: "" for OpenBLAS, "scipy_" for the PyPI wheel
  std::string core_how;
  std::string threads_how;
  std::string chosen;  // the coretype this plugin asked for, if any
  void* handle = dlopen(name, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
  const bool preloaded = handle != nullptr;
  const bool user_threads = std::getenv(kThreadsVariable) != nullptr;
  if (preloaded) {
    core_how = "chosen when the library was loaded before the cpu plugin needed it; "
               "OPENBLAS_CORETYPE cannot change it any more";
  } else {
    bool set_core = false;
    if (const char* user = std::getenv(kCoretypeVariable)) {
      core_how = std::string(kCoretypeVariable) + "=" + user + " set by the user";
    } else {
      const CoretypeChoice choice = choose_blas_coretype(x86_features());
      if (!choice.coretype.empty() && set_unless_user_did(kCoretypeVariable,
                                                          choice.coretype.c_str())) {
        set_core = true;
        chosen = choice.coretype;
        core_how = std::string(kCoretypeVariable) + "=" + chosen + " set by the cpu plugin: " +
                   choice.reason;
      } else {
        core_how = "OpenBLAS's own choice: " + choice.reason;
      }
    }
    const bool set_threads = !user_threads && set_unless_user_did(kThreadsVariable, "1");
    handle = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    const std::string first_error = handle == nullptr ? dl_error() : "";
    if (handle == nullptr && std::strlen(XDEV_OPENBLAS_LIBDIR) > 0) {
      // Not on the loader's path: the directory the plugin was built against.
      const std::string path = std::string(XDEV_OPENBLAS_LIBDIR) + "/" + name;
      handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    }
    if (handle == nullptr) {
      // The Python package, installed where the system has no OpenBLAS: the
      // PyPI wheel scipy-openblas32 (a dependency of the package), whose
      // symbols carry the prefix scipy_, relative to this plugin's file.
      const std::string wheel = pypi_openblas_path();
      if (!wheel.empty()) {
        handle = dlopen(wheel.c_str(), RTLD_NOW | RTLD_LOCAL);
        if (handle != nullptr) {
          prefix = kPypiOpenblasPrefix;
          name = kPypiOpenblasName;
        }
      }
    }
    if (set_core) take_back(kCoretypeVariable, chosen.c_str());
    if (set_threads) take_back(kThreadsVariable, "1");
    if (handle == nullptr) {
      emit(log, context, XDEV_LOG_WARNING,
           std::string("cannot load OpenBLAS (") + name + "): " + first_error +
               "; MatMul uses its plain loops (much slower for large products)");
      return;
    }
  }
  BlasApi api;
  auto sym = [&](const char* symbol) { return (prefix + symbol); };
  const bool complete =
      resolve(handle, sym("cblas_sgemm").c_str(), &api.sgemm) &&
      resolve(handle, sym("cblas_dgemm").c_str(), &api.dgemm) &&
      resolve(handle, sym("openblas_get_num_threads").c_str(), &api.get_num_threads) &&
      resolve(handle, sym("openblas_set_num_threads").c_str(), &api.set_num_threads) &&
      resolve(handle, sym("openblas_get_config").c_str(), &api.get_config) &&
      resolve(handle, sym("openblas_get_corename").c_str(), &api.get_corename);
  if (!complete) {
    // The handle stays open: a library that was half used must stay mapped.
    emit(log, context, XDEV_LOG_WARNING,
         std::string(name) + " lacks a BLAS or OpenBLAS function the cpu plugin uses (" +
             dl_error() + "); MatMul uses its plain loops");
    return;
  }
  if (user_threads) {
    threads_how = std::string(kThreadsVariable) + "=" + std::getenv(kThreadsVariable) +
                  " set by the user";
  } else {
    // Already 1 when this plugin loaded the library; set for a library the
    // program loaded itself (process-wide: OpenBLAS has one setting).
    api.set_num_threads(1);
    threads_how = "set by the cpu plugin: oneTBB tasks each run a single-threaded BLAS call";
  }
  const char* core = api.get_corename();
  const char* config = api.get_config();
  const int threads = api.get_num_threads();
  std::string what;
  if (preloaded) {
    what = std::string("using the OpenBLAS this process had already loaded (") + name;
  } else {
    const double ms = std::chrono::duration<double, std::milli>(
                          std::chrono::steady_clock::now() - start).count();
    char timing[32];
    std::snprintf(timing, sizeof(timing), " in %.1f ms", ms);
    what = std::string("loaded OpenBLAS at the first matrix product (") + name + timing;
  }
  emit(log, context, XDEV_LOG_INFO,
       what + "; " + (config != nullptr ? config : "unknown configuration") + "): kernels " +
           (core != nullptr ? core : "unknown") + " (" + core_how + "); " +
           std::to_string(threads) + (threads == 1 ? " thread (" : " threads (") +
           threads_how + ")");
  if (!chosen.empty() && (core == nullptr || strcasecmp(core, chosen.c_str()) != 0)) {
    emit(log, context, XDEV_LOG_WARNING,
         "OpenBLAS was asked for its " + chosen + " kernels but uses " +
             (core != nullptr ? core : "unknown") +
             " (this OpenBLAS build may lack them or refuse them on this CPU)");
  }
  if (preloaded && core != nullptr && std::strcmp(core, "Prescott") == 0) {
    const CoretypeChoice better = choose_blas_coretype(x86_features());
    if (!better.coretype.empty() && better.coretype != "CORE2" && better.coretype != "NEHALEM") {
      emit(log, context, XDEV_LOG_INFO,
           "OpenBLAS runs its Prescott (SSE3) kernels although " + better.reason +
               "; set OPENBLAS_CORETYPE=" + better.coretype +
               " before the program starts for much faster matrix products");
    }
  }
  g_api = api;
  g_blas.store(&g_api, std::memory_order_release);
}

}  // namespace

const char* blas_library_name() noexcept { return XDEV_OPENBLAS_SONAME; }

const BlasApi* blas(BlasLogFn log, void* log_context) noexcept {
  if (const BlasApi* api = g_blas.load(std::memory_order_acquire)) return api;
  try {
    std::call_once(g_once, [&] { load(log, log_context); });
  } catch (...) {
    // Out of memory building a log line, or call_once failing: no BLAS.
  }
  return g_blas.load(std::memory_order_acquire);
}

const BlasApi* blas_if_loaded() noexcept { return g_blas.load(std::memory_order_acquire); }

bool blas_in_process() noexcept {
  if (blas_if_loaded() != nullptr) return true;
  // The loaded objects' names, compared by file name: no system call
  // (dlopen with RTLD_NOLOAD searches the library path, ~30 µs).
  auto visit = [](dl_phdr_info* info, size_t, void*) -> int {
    const char* path = info->dlpi_name;
    if (path == nullptr) return 0;
    const char* slash = std::strrchr(path, '/');
    return std::strcmp(slash != nullptr ? slash + 1 : path, blas_library_name()) == 0 ? 1 : 0;
  };
  return dl_iterate_phdr(visit, nullptr) != 0;
}

std::string planned_blas_core() {
  if (const BlasApi* api = blas_if_loaded()) {
    const char* core = api->get_corename();
    return core != nullptr ? core : "unknown";
  }
  if (const char* user = std::getenv(kCoretypeVariable)) {
    return std::string(user) + " (OPENBLAS_CORETYPE; OpenBLAS loads at the first matrix product)";
  }
  const CoretypeChoice choice = choose_blas_coretype(x86_features());
  if (choice.coretype.empty()) {
    return "OpenBLAS's own choice (" + choice.reason + "; OpenBLAS loads at the first matrix "
           "product)";
  }
  return choice.coretype + " (chosen by the cpu plugin: " + choice.reason +
         "; OpenBLAS loads at the first matrix product)";
}

std::string planned_blas_threads() {
  if (const BlasApi* api = blas_if_loaded()) {
    const char* user = std::getenv(kThreadsVariable);
    return std::to_string(api->get_num_threads()) +
           (user != nullptr ? " (set by OPENBLAS_NUM_THREADS)" : " (set by the cpu plugin)");
  }
  if (const char* user = std::getenv(kThreadsVariable)) {
    return std::string(user) + " (set by OPENBLAS_NUM_THREADS)";
  }
  return "1 (set by the cpu plugin)";
}

}  // namespace xdev::cpu
