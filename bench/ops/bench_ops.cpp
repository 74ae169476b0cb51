// Ops on the CPU through xdev's public SDK, each beside a peer measured in
// the same run (docs/performance.md "Ops on the CPU" has the table):
//
//   Add/1       xdev::add of two 1-element float32 tensors, end to end
//               (placement, output allocation, kernel, result tensor)
//     peer      the cpu plugin's Add kernel called directly through the ABI
//               (xdev_kernel_fn_t on preallocated descriptors): what the
//               kernel itself costs. libtorch's at::add would be the natural
//               third column; Debian's libtorch-dev is not installed here.
//   MatMul/2x3x2  the walkthrough's product: xdev::matmul vs a plain loop
//               vs cblas_sgemm (and the MatMul kernel alone through the ABI)
//   Sgemm/n     n x n float32 products: xdev::matmul (oneTBB tiles over
//               single-threaded OpenBLAS) vs cblas_sgemm with OpenBLAS on
//               as many threads as oneTBB has (2 here): what a program that
//               calls OpenBLAS directly gets
//   Add/16M     xdev::add of 16 Mi float32 vs a plain oneTBB parallel_for
//               (and the Add kernel alone through the ABI on the same kind
//               of buffers as the loop)
//
// The program links libxdev.so like a user (xdev_dep); libxdev finds the
// in-tree cpu plugin by itself. The direct kernel call loads the same file
// (XDEV_BENCH_CPU_PLUGIN) and makes its own plugin instance.
#include <benchmark/benchmark.h>
#include <cblas.h>
#include <dlfcn.h>
#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/task_arena.h>
#include <xdev/plugin.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <thread>
#include <vector>
#include <xdev/xdev.hpp>

namespace {

// Lets threads that spin after parallel work (OpenBLAS's keep spinning for
// ~0.1 s, oneTBB's briefly) go to sleep before a timed loop starts, so that
// one benchmark does not run against the previous one's idle spinners.
void quiesce() { std::this_thread::sleep_for(std::chrono::milliseconds(250)); }

// ---------------------------------------------------------------------------
// The cpu plugin through its raw ABI, with a minimal host table.

struct BenchStatus {
  xdev_status_code_t code;
  std::string message;
};

xdev_status_t* bench_status_create(void*, xdev_status_code_t code, const char* message) {
  auto* s = new BenchStatus{code, message != nullptr ? message : ""};
  return reinterpret_cast<xdev_status_t*>(s);
}
void bench_log(void*, xdev_log_level_t, const char*) {}

// Frees a status; returns its message ("" for success).
std::string take(xdev_status_t* status) {
  if (status == nullptr) return "";
  std::unique_ptr<BenchStatus> s(reinterpret_cast<BenchStatus*>(status));
  return s->message.empty() ? "error" : s->message;
}

class DirectPlugin {
 public:
  static DirectPlugin& get() {
    static DirectPlugin* p = new DirectPlugin;  // kept for the process
    return *p;
  }
  const std::string& error() const { return error_; }
  xdev_device_t* device() const { return device_; }
  xdev_stream_t* stream() const { return stream_; }
  const xdev_kernel_info_t* kernel(const char* op) const {
    for (uint32_t i = 0; i < count_; ++i) {
      if (std::strcmp(kernels_[i]->op, op) == 0) return kernels_[i];
    }
    return nullptr;
  }

 private:
  DirectPlugin() {
    host_.struct_size = XDEV_HOST_API_STRUCT_SIZE;
    host_.abi_version = {XDEV_ABI_VERSION_MAJOR, XDEV_ABI_VERSION_MINOR};
    host_.status_create = &bench_status_create;
    host_.log = &bench_log;
    void* handle = dlopen(XDEV_BENCH_CPU_PLUGIN, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
    if (handle == nullptr) {
      error_ = dlerror();
      return;
    }
    auto query = reinterpret_cast<xdev_plugin_query_fn_t>(dlsym(handle, XDEV_PLUGIN_ENTRY_SYMBOL));
    xdev_plugin_query_args_t args{};
    args.struct_size = XDEV_PLUGIN_QUERY_ARGS_STRUCT_SIZE;
    args.core_min_version = {XDEV_ABI_VERSION_MAJOR, 0};
    args.core_max_version = {XDEV_ABI_VERSION_MAJOR, XDEV_ABI_VERSION_MINOR};
    args.host = &host_;
    if (query == nullptr || !(error_ = take(query(&args))).empty()) return;
    const xdev_plugin_api_t* api = args.plugin_api;
    xdev_plugin_init_args_t init{};
    init.struct_size = XDEV_PLUGIN_INIT_ARGS_STRUCT_SIZE;
    init.host = &host_;
    if (!(error_ = take(api->initialize(&init, &plugin_))).empty()) return;
    if (!(error_ = take(api->device_open(plugin_, 0, &device_))).empty()) return;
    if (!(error_ = take(api->stream_create(device_, &stream_))).empty()) return;
    error_ = take(api->kernels(plugin_, &kernels_, &count_));
  }

  xdev_host_api_t host_{};
  std::string error_;
  xdev_plugin_t* plugin_ = nullptr;
  xdev_device_t* device_ = nullptr;
  xdev_stream_t* stream_ = nullptr;
  const xdev_kernel_info_t* const* kernels_ = nullptr;
  uint32_t count_ = 0;
};

// ---------------------------------------------------------------------------
// 1-element add

void BM_Add1_Xdev(benchmark::State& state) {
  const xdev::Tensor a = xdev::constant({1.f});
  const xdev::Tensor b = xdev::constant({2.f});
  for (auto _ : state) {
    xdev::Tensor c = xdev::add(a, b);
    benchmark::DoNotOptimize(c.impl());
  }
  if (xdev::add(a, b).item<float>() != 3.f) state.SkipWithError("wrong result");
}
BENCHMARK(BM_Add1_Xdev);

void BM_Add1_KernelThroughAbi(benchmark::State& state) {
  DirectPlugin& plugin = DirectPlugin::get();
  const xdev_kernel_info_t* add = plugin.kernel("Add");
  if (add == nullptr) {
    state.SkipWithError(("no Add kernel: " + plugin.error()).c_str());
    return;
  }
  alignas(64) float x[1] = {1.f}, y[1] = {2.f}, z[1] = {0.f};
  const int64_t shape[1] = {1}, strides[1] = {1};
  const xdev_tensor_t tx{x, 0, XDEV_DTYPE_FLOAT32, 1, shape, strides};
  const xdev_tensor_t ty{y, 0, XDEV_DTYPE_FLOAT32, 1, shape, strides};
  const xdev_tensor_t tz{z, 0, XDEV_DTYPE_FLOAT32, 1, shape, strides};
  const xdev_tensor_t* inputs[2] = {&tx, &ty};
  const xdev_tensor_t* outputs[1] = {&tz};
  xdev_kernel_call_t call{};
  call.struct_size = XDEV_KERNEL_CALL_STRUCT_SIZE;
  call.op = add->op;
  call.device = plugin.device();
  call.stream = plugin.stream();
  call.inputs = inputs;
  call.input_count = 2;
  call.outputs = outputs;
  call.output_count = 1;
  for (auto _ : state) {
    xdev_status_t* status = add->fn(add->kernel_context, &call);
    benchmark::DoNotOptimize(status);
    benchmark::ClobberMemory();
  }
  if (z[0] != 3.f) state.SkipWithError("wrong result");
}
BENCHMARK(BM_Add1_KernelThroughAbi);

// ---------------------------------------------------------------------------
// The walkthrough's 2x3 . 3x2 product

const std::vector<float> kA = {1, 2, 3, 4, 5, 6};     // 2x3
const std::vector<float> kB = {7, 8, 9, 10, 11, 12};  // 3x2

void BM_MatMul2x3x2_Xdev(benchmark::State& state) {
  const xdev::Tensor a = xdev::constant(kA, {2, 3});
  const xdev::Tensor b = xdev::constant(kB, {3, 2});
  for (auto _ : state) {
    xdev::Tensor c = xdev::matmul(a, b);
    benchmark::DoNotOptimize(c.impl());
  }
  if (xdev::matmul(a, b).to_vector<float>() != std::vector<float>{58, 64, 139, 154}) {
    state.SkipWithError("wrong result");
  }
}
BENCHMARK(BM_MatMul2x3x2_Xdev);

// The MatMul kernel alone (tiny path), through the ABI.
void BM_MatMul2x3x2_KernelThroughAbi(benchmark::State& state) {
  DirectPlugin& plugin = DirectPlugin::get();
  const xdev_kernel_info_t* matmul = plugin.kernel("MatMul");
  if (matmul == nullptr) {
    state.SkipWithError(("no MatMul kernel: " + plugin.error()).c_str());
    return;
  }
  std::vector<float> a = kA, b = kB, c(4);
  const int64_t sa[2] = {2, 3}, sb[2] = {3, 2}, sc[2] = {2, 2};
  const int64_t ta[2] = {3, 1}, tb[2] = {2, 1}, tc[2] = {2, 1};
  const xdev_tensor_t da{a.data(), 0, XDEV_DTYPE_FLOAT32, 2, sa, ta};
  const xdev_tensor_t db{b.data(), 0, XDEV_DTYPE_FLOAT32, 2, sb, tb};
  const xdev_tensor_t dc{c.data(), 0, XDEV_DTYPE_FLOAT32, 2, sc, tc};
  const xdev_tensor_t* inputs[2] = {&da, &db};
  const xdev_tensor_t* outputs[1] = {&dc};
  xdev_attr_t attrs[2] = {};
  attrs[0].name = "transpose_a";
  attrs[0].kind = XDEV_ATTR_BOOL;
  attrs[1].name = "transpose_b";
  attrs[1].kind = XDEV_ATTR_BOOL;
  xdev_kernel_call_t call{};
  call.struct_size = XDEV_KERNEL_CALL_STRUCT_SIZE;
  call.op = matmul->op;
  call.device = plugin.device();
  call.stream = plugin.stream();
  call.inputs = inputs;
  call.input_count = 2;
  call.outputs = outputs;
  call.output_count = 1;
  call.attrs = attrs;
  call.attr_count = 2;
  for (auto _ : state) {
    benchmark::DoNotOptimize(matmul->fn(matmul->kernel_context, &call));
    benchmark::ClobberMemory();
  }
  if (c != std::vector<float>{58, 64, 139, 154}) state.SkipWithError("wrong result");
}
BENCHMARK(BM_MatMul2x3x2_KernelThroughAbi);

void BM_MatMul2x3x2_PlainLoop(benchmark::State& state) {
  std::vector<float> a = kA, b = kB, c(4);
  for (auto _ : state) {
    benchmark::DoNotOptimize(a.data());
    benchmark::DoNotOptimize(b.data());
    for (int i = 0; i < 2; ++i) {
      for (int j = 0; j < 2; ++j) {
        float s = 0;
        for (int p = 0; p < 3; ++p) s += a[i * 3 + p] * b[p * 2 + j];
        c[i * 2 + j] = s;
      }
    }
    benchmark::DoNotOptimize(c.data());
    benchmark::ClobberMemory();
  }
}
BENCHMARK(BM_MatMul2x3x2_PlainLoop);

void BM_MatMul2x3x2_Cblas(benchmark::State& state) {
  std::vector<float> c(4);
  for (auto _ : state) {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, 2, 2, 3, 1.f, kA.data(), 3, kB.data(), 2,
                0.f, c.data(), 2);
    benchmark::DoNotOptimize(c.data());
    benchmark::ClobberMemory();
  }
}
BENCHMARK(BM_MatMul2x3x2_Cblas);

// ---------------------------------------------------------------------------
// SGEMM n x n

void set_gemm_counters(benchmark::State& state, int64_t n) {
  const double flops =
      2.0 * static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(n);
  state.counters["GFLOP/s"] =
      benchmark::Counter(flops / 1e9, benchmark::Counter::kIsIterationInvariantRate);
}

void BM_Sgemm_Xdev(benchmark::State& state) {
  const int64_t n = state.range(0);
  const xdev::Tensor a = xdev::random_uniform({n, n}, -1, 1, xdev::DType::kFloat32, 1);
  const xdev::Tensor b = xdev::random_uniform({n, n}, -1, 1, xdev::DType::kFloat32, 2);
  xdev::matmul(a, b);  // warm the pool and the threads
  quiesce();
  for (auto _ : state) {
    xdev::Tensor c = xdev::matmul(a, b);
    benchmark::DoNotOptimize(c.impl());
  }
  set_gemm_counters(state, n);
}

void BM_Sgemm_CblasDirect(benchmark::State& state) {
  const int64_t n = state.range(0);
  std::vector<float> a(static_cast<size_t>(n * n)), b(a.size()), c(a.size());
  for (size_t i = 0; i < a.size(); ++i) {
    a[i] = static_cast<float>((i * 7) % 13) / 13.f - 0.5f;
    b[i] = static_cast<float>((i * 5) % 11) / 11.f - 0.5f;
  }
  // A program calling OpenBLAS itself lets it use the cores; the xdev plugin
  // set OpenBLAS to one thread (process-wide), so set it for the peer and
  // put the plugin's setting back afterwards.
  const int plugin_setting = openblas_get_num_threads();
  openblas_set_num_threads(tbb::this_task_arena::max_concurrency());
  const int ni = static_cast<int>(n);
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, ni, ni, ni, 1.f, a.data(), ni, b.data(),
              ni, 0.f, c.data(), ni);
  quiesce();
  for (auto _ : state) {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, ni, ni, ni, 1.f, a.data(), ni, b.data(),
                ni, 0.f, c.data(), ni);
    benchmark::DoNotOptimize(c.data());
    benchmark::ClobberMemory();
  }
  state.counters["blas_threads"] = openblas_get_num_threads();
  openblas_set_num_threads(plugin_setting);
  set_gemm_counters(state, n);
}

// Interleaved per size so the pair runs close together.
BENCHMARK(BM_Sgemm_Xdev)->Arg(256)->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK(BM_Sgemm_CblasDirect)->Arg(256)->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK(BM_Sgemm_Xdev)->Arg(1024)->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK(BM_Sgemm_CblasDirect)->Arg(1024)->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK(BM_Sgemm_Xdev)->Arg(2048)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_Sgemm_CblasDirect)->Arg(2048)->Unit(benchmark::kMillisecond)->UseRealTime();

// ---------------------------------------------------------------------------
// Elementwise add of 16 Mi floats

constexpr int64_t kBig = int64_t{16} << 20;

void set_stream_counters(benchmark::State& state, int64_t n) {
  // Bytes moved: read x, read y, write z.
  state.counters["GB/s"] = benchmark::Counter(3.0 * 4.0 * static_cast<double>(n) / 1e9,
                                              benchmark::Counter::kIsIterationInvariantRate);
}

void BM_Add16M_Xdev(benchmark::State& state) {
  const xdev::Tensor a = xdev::random_uniform({kBig}, -1, 1, xdev::DType::kFloat32, 3);
  const xdev::Tensor b = xdev::random_uniform({kBig}, -1, 1, xdev::DType::kFloat32, 4);
  xdev::add(a, b);  // warm the pool (the output block is reused)
  quiesce();
  for (auto _ : state) {
    xdev::Tensor c = xdev::add(a, b);
    benchmark::DoNotOptimize(c.impl());
  }
  set_stream_counters(state, kBig);
}
BENCHMARK(BM_Add16M_Xdev)->Unit(benchmark::kMicrosecond)->UseRealTime();

void BM_Add16M_TbbLoop(benchmark::State& state) {
  const size_t n = static_cast<size_t>(kBig);
  // Page-aligned like the pool's blocks, and touched before timing.
  auto alloc = [n] {
    return std::unique_ptr<float[], void (*)(float*)>(
        static_cast<float*>(::operator new[](n * sizeof(float), std::align_val_t{4096})),
        [](float* p) { ::operator delete[](p, std::align_val_t{4096}); });
  };
  auto x = alloc(), y = alloc(), z = alloc();
  for (size_t i = 0; i < n; ++i) {
    x[i] = static_cast<float>(i % 1000) * 1e-3f;
    y[i] = 1.f;
    z[i] = 0.f;
  }
  float* px = x.get();
  float* py = y.get();
  float* pz = z.get();
  auto loop = [=] {
    tbb::parallel_for(tbb::blocked_range<size_t>(0, n), [=](const tbb::blocked_range<size_t>& r) {
      for (size_t i = r.begin(); i < r.end(); ++i) pz[i] = px[i] + py[i];
    });
  };
  loop();
  quiesce();
  for (auto _ : state) {
    loop();
    benchmark::ClobberMemory();
  }
  set_stream_counters(state, kBig);
}
BENCHMARK(BM_Add16M_TbbLoop)->Unit(benchmark::kMicrosecond)->UseRealTime();

// The Add kernel alone on the same kind of buffers as the oneTBB loop: tells
// the kernel's share from the core's (output allocation, placement).
void BM_Add16M_KernelThroughAbi(benchmark::State& state) {
  DirectPlugin& plugin = DirectPlugin::get();
  const xdev_kernel_info_t* add = plugin.kernel("Add");
  if (add == nullptr) {
    state.SkipWithError(("no Add kernel: " + plugin.error()).c_str());
    return;
  }
  const size_t n = static_cast<size_t>(kBig);
  auto alloc = [n] {
    return std::unique_ptr<float[], void (*)(float*)>(
        static_cast<float*>(::operator new[](n * sizeof(float), std::align_val_t{4096})),
        [](float* p) { ::operator delete[](p, std::align_val_t{4096}); });
  };
  auto x = alloc(), y = alloc(), z = alloc();
  for (size_t i = 0; i < n; ++i) {
    x[i] = static_cast<float>(i % 1000) * 1e-3f;
    y[i] = 1.f;
    z[i] = 0.f;
  }
  const int64_t shape[1] = {kBig}, strides[1] = {1};
  const xdev_tensor_t tx{x.get(), 0, XDEV_DTYPE_FLOAT32, 1, shape, strides};
  const xdev_tensor_t ty{y.get(), 0, XDEV_DTYPE_FLOAT32, 1, shape, strides};
  const xdev_tensor_t tz{z.get(), 0, XDEV_DTYPE_FLOAT32, 1, shape, strides};
  const xdev_tensor_t* inputs[2] = {&tx, &ty};
  const xdev_tensor_t* outputs[1] = {&tz};
  xdev_kernel_call_t call{};
  call.struct_size = XDEV_KERNEL_CALL_STRUCT_SIZE;
  call.op = add->op;
  call.device = plugin.device();
  call.stream = plugin.stream();
  call.inputs = inputs;
  call.input_count = 2;
  call.outputs = outputs;
  call.output_count = 1;
  add->fn(add->kernel_context, &call);
  quiesce();
  for (auto _ : state) {
    benchmark::DoNotOptimize(add->fn(add->kernel_context, &call));
    benchmark::ClobberMemory();
  }
  set_stream_counters(state, kBig);
}
BENCHMARK(BM_Add16M_KernelThroughAbi)->Unit(benchmark::kMicrosecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
