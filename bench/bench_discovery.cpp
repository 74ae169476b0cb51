// Plugin discovery + init of the cpu plugin: what every program pays at start.
//
//   Cold   the first discovery in this process (dlopen of the plugin and its
//          library oneTBB; OpenBLAS loads only at the first matrix product),
//          measured once. bench/startup measures whole processes.
//   Warm   a whole Runtime again (find files, load, validate, initialize, read
//          devices, shut down); the libraries are mapped already.
//   Reference: a bare dlopen + dlsym + dlclose of the same file, the least any
//          loader can do.
#include <dlfcn.h>

#include <benchmark/benchmark.h>

#include <chrono>

#include "devices/runtime.hpp"

namespace {

xdev::detail::RuntimeOptions cpu_only() {
  xdev::detail::RuntimeOptions options;
  options.plugin_dirs = {XDEV_BENCH_CPU_PLUGIN_DIR};
  options.use_environment = false;
  options.use_default_dirs = false;
  return options;
}

void BM_DiscoveryCold(benchmark::State& state) {
  for (auto _ : state) {
    xdev::detail::Runtime runtime(cpu_only());
    if (runtime.physical_devices().empty()) state.SkipWithError("cpu plugin not found");
    benchmark::DoNotOptimize(runtime.physical_devices().data());
  }
}
// Registered first and run once: nothing is mapped yet.
BENCHMARK(BM_DiscoveryCold)->Iterations(1)->Unit(benchmark::kMicrosecond);

void BM_DiscoveryWarm(benchmark::State& state) {
  for (auto _ : state) {
    xdev::detail::Runtime runtime(cpu_only());
    benchmark::DoNotOptimize(runtime.physical_devices().data());
  }
}
BENCHMARK(BM_DiscoveryWarm)->Unit(benchmark::kMicrosecond);

void BM_ReferenceDlopenDlsym(benchmark::State& state) {
  const char* path = XDEV_BENCH_CPU_PLUGIN_DIR "/xdev_plugin_cpu.so";
  for (auto _ : state) {
    void* handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) state.SkipWithError(dlerror());
    benchmark::DoNotOptimize(dlsym(handle, "xdev_plugin_query"));
    dlclose(handle);
  }
}
BENCHMARK(BM_ReferenceDlopenDlsym)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
