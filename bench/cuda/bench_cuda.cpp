// GPU benchmarks of the cuda plugin, each beside a bare CUDA peer measured in
// the same binary and run (targets in brackets):
//
//   Sgemm/{Xdev,Cublas}/n      n = 1024 ... 8192, float32, C = A B; TFLOP/s
//                              [xdev >= 0.97x cuBLAS]
//   CopyH2D|CopyD2H/...        host <-> device bandwidth, pinned and pageable:
//     .../PluginPinned|PluginPageable   the plugin's copy slots (what the core
//                              calls) vs .../CudaPinned|CudaPageable, bare
//                              cudaMemcpyAsync + sync          [>= 0.9x]
//     .../Sdk                  what a user writes: xdev::constant(host data)
//                              on GPU:0, and tensor.to_host()
//   Launch/{Xdev,Bare}         a small elementwise op (add of 1024 float32):
//                              host time per op, synchronizing every 256 ops;
//   Latency/{Xdev,Bare}        the same op, synchronized each time
//   Reduce/Xdev/case           xdev::sum of 256 MiB of float32 (case 0: rows
//                              [1Mi, 64] over axis 1, a warp per row; 1: the
//                              same over axis 0, column tiles; 2, 3: [8192,
//                              8192] over axis 1, axis 0); bytes read per
//                              second vs Reduce/ReadPeer, a bare kernel
//                              reading the same bytes once
//   Broadcast/Xdev/case        xdev::add of [8192, 8192] and a broadcast row
//                              (case 0) or column (case 1); bytes read and
//                              written per second vs Broadcast/CopyPeer,
//                              cudaMemcpyAsync of the same bytes
//
// Without a CUDA device it prints why and exits 0. xdev's GPU pool grows on
// demand here (XDEV_FORCE_GPU_ALLOW_GROWTH=true unless set), so the bare
// CUDA peers in the same process still find free device memory.
#include <dlfcn.h>

#include <benchmark/benchmark.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>  // the typed cudaMalloc overloads

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include <xdev/plugin.h>
#include <xdev/xdev.hpp>

#include "bench_kernels.hpp"

// The benchmark's own host table creates these (the plugin only passes them
// back): opaque to the plugin, defined here.
struct xdev_status_t {
  xdev_status_code_t code;
  std::string message;
};

namespace {

constexpr uint64_t kSeed = 42;

#define CUDA_OK(expr)                                                                  \
  do {                                                                                 \
    const cudaError_t e_ = (expr);                                                     \
    if (e_ != cudaSuccess) {                                                           \
      state.SkipWithError((std::string(#expr) + ": " + cudaGetErrorString(e_)).c_str()); \
      return;                                                                          \
    }                                                                                  \
  } while (0)

// Waits for everything queued on GPU:0's stream: reading back one element
// of a tensor on GPU:0 synchronizes that stream (it is in order).
void sync_gpu0() {
  static const xdev::Tensor marker = [] {
    xdev::DeviceScope scope("/GPU:0");
    return xdev::zeros({1}, xdev::DType::kFloat32);
  }();
  benchmark::DoNotOptimize(marker.to_host().bytes());
}

int gemm_batch(int64_t n) { return n <= 1024 ? 16 : n <= 2048 ? 8 : n <= 4096 ? 2 : 1; }

void set_gemm_counters(benchmark::State& state, int64_t n, int batch) {
  state.counters["TFLOP/s"] = benchmark::Counter(
      2.0 * static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(n) * batch /
          1e12,
      benchmark::Counter::kIsIterationInvariantRate);
  state.counters["gemms/iter"] = batch;
}

// ---------------------------------------------------------------------------
// SGEMM

void BM_Sgemm_Xdev(benchmark::State& state) {
  const int64_t n = state.range(0);
  const int batch = gemm_batch(n);
  xdev::DeviceScope scope("/GPU:0");
  const xdev::Tensor a = xdev::random_uniform({n, n}, 0.0, 1.0, xdev::DType::kFloat32, kSeed);
  const xdev::Tensor b = xdev::random_uniform({n, n}, 0.0, 1.0, xdev::DType::kFloat32, kSeed + 1);
  xdev::Tensor c = xdev::matmul(a, b);  // warm-up: cuBLAS handle, pool
  sync_gpu0();
  for (auto _ : state) {
    for (int i = 0; i < batch; ++i) c = xdev::matmul(a, b);
    sync_gpu0();
  }
  set_gemm_counters(state, n, batch);
}

void BM_Sgemm_Cublas(benchmark::State& state) {
  const int64_t n = state.range(0);
  const int batch = gemm_batch(n);
  CUDA_OK(cudaSetDevice(0));
  cudaStream_t stream;
  CUDA_OK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  float *a, *b, *c;
  const size_t bytes = static_cast<size_t>(n * n) * sizeof(float);
  CUDA_OK(cudaMalloc(&a, bytes));
  CUDA_OK(cudaMalloc(&b, bytes));
  CUDA_OK(cudaMalloc(&c, bytes));
  CUDA_OK(xdev_bench::fill_random(a, n * n, kSeed, stream));
  CUDA_OK(xdev_bench::fill_random(b, n * n, kSeed + 1, stream));
  cublasHandle_t handle;
  if (cublasCreate(&handle) != CUBLAS_STATUS_SUCCESS) {
    state.SkipWithError("cublasCreate failed");
    return;
  }
  cublasSetStream(handle, stream);
  cublasSetMathMode(handle, CUBLAS_DEFAULT_MATH);  // as the plugin: no TF32
  const float alpha = 1.0f, beta = 0.0f;
  const int ni = static_cast<int>(n);
  auto gemm = [&] {
    // Row-major C = A B as column-major C^T = B^T A^T, like the plugin.
    cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, ni, ni, ni, &alpha, b, ni, a, ni, &beta, c, ni);
  };
  gemm();
  CUDA_OK(cudaStreamSynchronize(stream));
  for (auto _ : state) {
    for (int i = 0; i < batch; ++i) gemm();
    CUDA_OK(cudaStreamSynchronize(stream));
  }
  set_gemm_counters(state, n, batch);
  cublasDestroy(handle);
  cudaFree(c);
  cudaFree(b);
  cudaFree(a);
  cudaStreamDestroy(stream);
}

// ---------------------------------------------------------------------------
// Copies through the plugin's ABI (dlopen'ed, as the core does)

xdev_status_t* bench_status_create(void*, xdev_status_code_t code, const char* message) {
  return new xdev_status_t{code, message != nullptr ? message : ""};
}
void bench_log(void*, xdev_log_level_t level, const char* message) {
  if (level >= XDEV_LOG_WARNING) std::fprintf(stderr, "cuda plugin: %s\n", message);
}

std::string take(xdev_status_t* status) {
  if (status == nullptr) return "";
  std::string message = status->message.empty() ? "error" : status->message;
  delete status;
  return message;
}

// One instance of the cuda plugin with device 0 open and one stream.
struct Plugin {
  const xdev_plugin_api_t* api = nullptr;
  xdev_plugin_t* plugin = nullptr;
  xdev_device_t* device = nullptr;
  xdev_stream_t* stream = nullptr;
  std::string error;

  static Plugin& get() {
    static Plugin* p = new Plugin;  // never torn down (CUDA keeps running)
    return *p;
  }

 private:
  Plugin() {
    static xdev_host_api_t host{};
    host.struct_size = XDEV_HOST_API_STRUCT_SIZE;
    host.abi_version = {XDEV_ABI_VERSION_MAJOR, XDEV_ABI_VERSION_MINOR};
    host.status_create = &bench_status_create;
    host.log = &bench_log;
    void* handle = dlopen(XDEV_BENCH_CUDA_PLUGIN, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
    if (handle == nullptr) {
      error = dlerror();
      return;
    }
    auto query = reinterpret_cast<xdev_plugin_query_fn_t>(dlsym(handle, XDEV_PLUGIN_ENTRY_SYMBOL));
    if (query == nullptr) {
      error = "no xdev_plugin_query";
      return;
    }
    xdev_plugin_query_args_t args{};
    args.struct_size = XDEV_PLUGIN_QUERY_ARGS_STRUCT_SIZE;
    args.core_min_version = {XDEV_ABI_VERSION_MAJOR, 0};
    args.core_max_version = {XDEV_ABI_VERSION_MAJOR, XDEV_ABI_VERSION_MINOR};
    args.host = &host;
    if (!(error = take(query(&args))).empty()) return;
    api = args.plugin_api;
    xdev_plugin_init_args_t init{};
    init.struct_size = XDEV_PLUGIN_INIT_ARGS_STRUCT_SIZE;
    init.host = &host;
    if (!(error = take(api->initialize(&init, &plugin))).empty()) return;
    if (!(error = take(api->device_open(plugin, 0, &device))).empty()) return;
    error = take(api->stream_create(device, &stream));
  }
};

enum class Memory { kPinned, kPageable };
enum class Direction { kH2D, kD2H };

void plugin_copy(benchmark::State& state, Direction direction, Memory memory) {
  Plugin& p = Plugin::get();
  if (!p.error.empty()) {
    state.SkipWithError(p.error.c_str());
    return;
  }
  const uint64_t size = static_cast<uint64_t>(state.range(0));
  void* device = nullptr;
  std::string error = take(p.api->memory_allocate(p.device, size, 256, &device));
  void* host = nullptr;
  std::vector<char> pageable;
  if (memory == Memory::kPinned) {
    if (error.empty()) error = take(p.api->host_memory_allocate(p.device, size, &host));
  } else {
    pageable.assign(size, 1);
    host = pageable.data();
  }
  if (!error.empty()) {
    state.SkipWithError(error.c_str());
    return;
  }
  std::memset(host, 1, size);
  for (auto _ : state) {
    xdev_status_t* s = direction == Direction::kH2D
                           ? p.api->copy_host_to_device(p.stream, device, host, size)
                           : p.api->copy_device_to_host(p.stream, host, device, size);
    if (s == nullptr) s = p.api->stream_synchronize(p.stream);
    if (s != nullptr) {
      state.SkipWithError(take(s).c_str());
      break;
    }
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(size));
  if (memory == Memory::kPinned) p.api->host_memory_free(p.device, host);
  p.api->memory_free(p.device, device);
}

void cuda_copy(benchmark::State& state, Direction direction, Memory memory) {
  const size_t size = static_cast<size_t>(state.range(0));
  CUDA_OK(cudaSetDevice(0));
  cudaStream_t stream;
  CUDA_OK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  void* device = nullptr;
  CUDA_OK(cudaMalloc(&device, size));
  void* host = nullptr;
  std::vector<char> pageable;
  if (memory == Memory::kPinned) {
    CUDA_OK(cudaHostAlloc(&host, size, cudaHostAllocPortable));
  } else {
    pageable.assign(size, 1);
    host = pageable.data();
  }
  std::memset(host, 1, size);
  for (auto _ : state) {
    if (direction == Direction::kH2D) {
      CUDA_OK(cudaMemcpyAsync(device, host, size, cudaMemcpyHostToDevice, stream));
    } else {
      CUDA_OK(cudaMemcpyAsync(host, device, size, cudaMemcpyDeviceToHost, stream));
    }
    CUDA_OK(cudaStreamSynchronize(stream));
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(size));
  if (memory == Memory::kPinned) cudaFreeHost(host);
  cudaFree(device);
  cudaStreamDestroy(stream);
}

void BM_CopyH2D_PluginPinned(benchmark::State& s) { plugin_copy(s, Direction::kH2D, Memory::kPinned); }
void BM_CopyH2D_CudaPinned(benchmark::State& s) { cuda_copy(s, Direction::kH2D, Memory::kPinned); }
void BM_CopyH2D_PluginPageable(benchmark::State& s) { plugin_copy(s, Direction::kH2D, Memory::kPageable); }
void BM_CopyH2D_CudaPageable(benchmark::State& s) { cuda_copy(s, Direction::kH2D, Memory::kPageable); }
void BM_CopyD2H_PluginPinned(benchmark::State& s) { plugin_copy(s, Direction::kD2H, Memory::kPinned); }
void BM_CopyD2H_CudaPinned(benchmark::State& s) { cuda_copy(s, Direction::kD2H, Memory::kPinned); }
void BM_CopyD2H_PluginPageable(benchmark::State& s) { plugin_copy(s, Direction::kD2H, Memory::kPageable); }
void BM_CopyD2H_CudaPageable(benchmark::State& s) { cuda_copy(s, Direction::kD2H, Memory::kPageable); }

// What a user writes: host data to a tensor on GPU:0, a tensor back to the host.
void BM_CopyH2D_Sdk(benchmark::State& state) {
  const int64_t n = state.range(0) / 4;
  std::vector<float> host(static_cast<size_t>(n), 1.0f);
  xdev::DeviceScope scope("/GPU:0");
  for (auto _ : state) {
    const xdev::Tensor t = xdev::constant(host.data(), xdev::DType::kFloat32, {n});
    benchmark::DoNotOptimize(t.impl());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * n * 4);
}

void BM_CopyD2H_Sdk(benchmark::State& state) {
  const int64_t n = state.range(0) / 4;
  xdev::DeviceScope scope("/GPU:0");
  const xdev::Tensor t = xdev::ones({n}, xdev::DType::kFloat32);
  for (auto _ : state) {
    const xdev::HostTensor host = t.to_host();
    benchmark::DoNotOptimize(host.bytes());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * n * 4);
}

// ---------------------------------------------------------------------------
// Launch overhead of a small elementwise op

constexpr int64_t kSmall = 1024;
constexpr int kOpsPerSync = 256;

void BM_Launch_Xdev(benchmark::State& state) {
  xdev::DeviceScope scope("/GPU:0");
  const xdev::Tensor x = xdev::ones({kSmall}, xdev::DType::kFloat32);
  const xdev::Tensor y = xdev::ones({kSmall}, xdev::DType::kFloat32);
  xdev::Tensor z = xdev::add(x, y);
  sync_gpu0();
  int64_t ops = 0;
  for (auto _ : state) {
    z = xdev::add(x, y);
    if (++ops % kOpsPerSync == 0) sync_gpu0();
  }
  sync_gpu0();
}

void BM_Launch_Bare(benchmark::State& state) {
  CUDA_OK(cudaSetDevice(0));
  cudaStream_t stream;
  CUDA_OK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  float *x, *y, *z;
  CUDA_OK(cudaMalloc(&x, kSmall * 4));
  CUDA_OK(cudaMalloc(&y, kSmall * 4));
  CUDA_OK(cudaMalloc(&z, kSmall * 4));
  int64_t ops = 0;
  for (auto _ : state) {
    CUDA_OK(xdev_bench::add(x, y, z, kSmall, stream));
    if (++ops % kOpsPerSync == 0) CUDA_OK(cudaStreamSynchronize(stream));
  }
  CUDA_OK(cudaStreamSynchronize(stream));
  cudaFree(z);
  cudaFree(y);
  cudaFree(x);
  cudaStreamDestroy(stream);
}

void BM_Latency_Xdev(benchmark::State& state) {
  xdev::DeviceScope scope("/GPU:0");
  const xdev::Tensor x = xdev::ones({kSmall}, xdev::DType::kFloat32);
  const xdev::Tensor y = xdev::ones({kSmall}, xdev::DType::kFloat32);
  xdev::Tensor z = xdev::add(x, y);
  sync_gpu0();
  for (auto _ : state) {
    z = xdev::add(x, y);
    sync_gpu0();
  }
}

void BM_Latency_Bare(benchmark::State& state) {
  CUDA_OK(cudaSetDevice(0));
  cudaStream_t stream;
  CUDA_OK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  float *x, *y, *z, host = 0;
  CUDA_OK(cudaMalloc(&x, kSmall * 4));
  CUDA_OK(cudaMalloc(&y, kSmall * 4));
  CUDA_OK(cudaMalloc(&z, kSmall * 4));
  for (auto _ : state) {
    // Like sync_gpu0: the op, then a 4-byte read-back.
    CUDA_OK(xdev_bench::add(x, y, z, kSmall, stream));
    CUDA_OK(cudaMemcpyAsync(&host, z, 4, cudaMemcpyDeviceToHost, stream));
    CUDA_OK(cudaStreamSynchronize(stream));
  }
  cudaFree(z);
  cudaFree(y);
  cudaFree(x);
  cudaStreamDestroy(stream);
}

// ---------------------------------------------------------------------------
// Reduction and broadcast bandwidth

struct ReduceCase {
  int64_t rows, cols;
  int axis;
};
constexpr ReduceCase kReduceCases[] = {
    {int64_t{1} << 20, 64, 1}, {int64_t{1} << 20, 64, 0}, {8192, 8192, 1}, {8192, 8192, 0}};

void BM_Reduce_Xdev(benchmark::State& state) {
  const ReduceCase c = kReduceCases[state.range(0)];
  xdev::DeviceScope scope("/GPU:0");
  const xdev::Tensor x =
      xdev::random_uniform({c.rows, c.cols}, 0.0, 1.0, xdev::DType::kFloat32, kSeed);
  xdev::Tensor s = xdev::sum(x, {c.axis});
  sync_gpu0();
  for (auto _ : state) {
    s = xdev::sum(x, {c.axis});
    sync_gpu0();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * c.rows * c.cols * 4);
}

void BM_Reduce_ReadPeer(benchmark::State& state) {
  const ReduceCase c = kReduceCases[state.range(0)];
  const int64_t n = c.rows * c.cols;
  CUDA_OK(cudaSetDevice(0));
  cudaStream_t stream;
  CUDA_OK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  float *x, *sink;
  CUDA_OK(cudaMalloc(&x, static_cast<size_t>(n) * 4));
  CUDA_OK(cudaMalloc(&sink, 4));
  CUDA_OK(xdev_bench::fill_random(x, n, kSeed, stream));
  for (auto _ : state) {
    CUDA_OK(xdev_bench::read_all(x, n, sink, stream));
    CUDA_OK(cudaStreamSynchronize(stream));
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * n * 4);
  cudaFree(sink);
  cudaFree(x);
  cudaStreamDestroy(stream);
}

constexpr int64_t kBroadcastN = 8192;

void BM_Broadcast_Xdev(benchmark::State& state) {
  const bool column = state.range(0) == 1;
  xdev::DeviceScope scope("/GPU:0");
  const xdev::Tensor x = xdev::random_uniform({kBroadcastN, kBroadcastN}, 0.0, 1.0,
                                              xdev::DType::kFloat32, kSeed);
  const xdev::Tensor y =
      xdev::random_uniform(column ? xdev::Shape{kBroadcastN, 1} : xdev::Shape{kBroadcastN}, 0.0,
                           1.0, xdev::DType::kFloat32, kSeed + 1);
  xdev::Tensor z = xdev::add(x, y);
  sync_gpu0();
  for (auto _ : state) {
    z = xdev::add(x, y);
    sync_gpu0();
  }
  // x read once, z written once (y is small).
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * kBroadcastN * kBroadcastN *
                          8);
}

void BM_Broadcast_CopyPeer(benchmark::State& state) {
  const size_t bytes = static_cast<size_t>(kBroadcastN * kBroadcastN) * 4;
  CUDA_OK(cudaSetDevice(0));
  cudaStream_t stream;
  CUDA_OK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  void *x, *z;
  CUDA_OK(cudaMalloc(&x, bytes));
  CUDA_OK(cudaMalloc(&z, bytes));
  for (auto _ : state) {
    CUDA_OK(cudaMemcpyAsync(z, x, bytes, cudaMemcpyDeviceToDevice, stream));
    CUDA_OK(cudaStreamSynchronize(stream));
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * bytes * 2));
  cudaFree(z);
  cudaFree(x);
  cudaStreamDestroy(stream);
}

void register_benchmarks() {
  for (int64_t n : {1024, 2048, 4096, 8192}) {
    benchmark::RegisterBenchmark("Sgemm/Xdev", BM_Sgemm_Xdev)->Arg(n)->UseRealTime()
        ->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark("Sgemm/Cublas", BM_Sgemm_Cublas)->Arg(n)->UseRealTime()
        ->Unit(benchmark::kMillisecond);
  }
  struct Copy {
    const char* name;
    void (*fn)(benchmark::State&);
  };
  const Copy copies[] = {
      {"CopyH2D/PluginPinned", BM_CopyH2D_PluginPinned},
      {"CopyH2D/CudaPinned", BM_CopyH2D_CudaPinned},
      {"CopyH2D/PluginPageable", BM_CopyH2D_PluginPageable},
      {"CopyH2D/CudaPageable", BM_CopyH2D_CudaPageable},
      {"CopyH2D/Sdk", BM_CopyH2D_Sdk},
      {"CopyD2H/PluginPinned", BM_CopyD2H_PluginPinned},
      {"CopyD2H/CudaPinned", BM_CopyD2H_CudaPinned},
      {"CopyD2H/PluginPageable", BM_CopyD2H_PluginPageable},
      {"CopyD2H/CudaPageable", BM_CopyD2H_CudaPageable},
      {"CopyD2H/Sdk", BM_CopyD2H_Sdk},
  };
  for (const Copy& c : copies) {
    benchmark::RegisterBenchmark(c.name, c.fn)
        ->Arg(int64_t{1} << 20)
        ->Arg(int64_t{16} << 20)
        ->Arg(int64_t{256} << 20)
        ->UseRealTime()
        ->Unit(benchmark::kMicrosecond);
  }
  benchmark::RegisterBenchmark("Launch/Xdev", BM_Launch_Xdev)->UseRealTime()
      ->Unit(benchmark::kMicrosecond);
  benchmark::RegisterBenchmark("Launch/Bare", BM_Launch_Bare)->UseRealTime()
      ->Unit(benchmark::kMicrosecond);
  benchmark::RegisterBenchmark("Latency/Xdev", BM_Latency_Xdev)->UseRealTime()
      ->Unit(benchmark::kMicrosecond);
  benchmark::RegisterBenchmark("Latency/Bare", BM_Latency_Bare)->UseRealTime()
      ->Unit(benchmark::kMicrosecond);
  for (int64_t c = 0; c < static_cast<int64_t>(std::size(kReduceCases)); ++c) {
    benchmark::RegisterBenchmark("Reduce/Xdev", BM_Reduce_Xdev)->Arg(c)->UseRealTime()
        ->Unit(benchmark::kMicrosecond);
    benchmark::RegisterBenchmark("Reduce/ReadPeer", BM_Reduce_ReadPeer)->Arg(c)->UseRealTime()
        ->Unit(benchmark::kMicrosecond);
  }
  for (int64_t c : {0, 1}) {
    benchmark::RegisterBenchmark("Broadcast/Xdev", BM_Broadcast_Xdev)->Arg(c)->UseRealTime()
        ->Unit(benchmark::kMicrosecond);
  }
  benchmark::RegisterBenchmark("Broadcast/CopyPeer", BM_Broadcast_CopyPeer)->UseRealTime()
      ->Unit(benchmark::kMicrosecond);
}

std::string cuda_status() {
  for (const xdev::PluginInfo& p : xdev::list_plugins()) {
    if (p.name == "cuda") return p.loaded ? p.status : "not loaded: " + p.reason;
  }
  return "the cuda plugin was not found";
}

}  // namespace

int main(int argc, char** argv) {
  setenv("XDEV_FORCE_GPU_ALLOW_GROWTH", "true", /*overwrite=*/0);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  if (xdev::num_gpus() == 0) {
    std::printf("bench_cuda: skipped: no CUDA device (cuda plugin: %s)\n", cuda_status().c_str());
    return 0;
  }
  for (const xdev::PhysicalDevice& d : xdev::list_physical_devices("GPU")) {
    benchmark::AddCustomContext(d.name, d.physical_device_desc);
  }
  register_benchmarks();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
