// xdev beside libtorch (Debian's libtorch 1.13, its ATen C++ op layer) in
// one process, on the same inputs and the same thread count, plus direct
// OpenBLAS and oneTBB where those are what a program would call instead
// (docs/performance.md "Beside libtorch"; bench/torch/table.py prints it):
//
//   Add1          1-element float32 add, end to end (output tensor included)
//   MatMul2x3x2   the walkthrough's product
//   Sgemm/n       n×n float32 products, n = 256, 1024, 2048; the direct peer is
//                 cblas_sgemm of the very OpenBLAS the cpu plugin loaded
//                 (with the kernel set it chose), on all cores
//   Add16M        add of 16 Mi float32 (a fresh output each time; libtorch
//                 also into a preallocated one); the direct peer a oneTBB
//                 parallel_for
//   Zeros         a fresh tensor of zeros and its release (allocation + fill +
//                 free), 256 and 1 Mi floats; at::empty shows torch's
//                 allocation alone
//   TrainStep     one training step of a 784-512-512-10 ReLU MLP (float32,
//                 batch 256): forward, mean softmax cross-entropy over int
//                 labels, backward (xdev: GradientTape; libtorch: autograd),
//                 plain SGD (lr 0.01) in place; the same inputs, labels and
//                 initial weights on both sides; libtorch in three thread
//                 settings (BM_TrainStep_Torch says why)
//   Large16M      exp and sum of 16 Mi float32 (libtorch's exp also into a
//                 preallocated output)
//   Softmax       softmax over the last axis of [4096, 1024] float32 (libtorch
//                 also into a preallocated output)
//   Conv2D        a ResNet-style 3×3 layer, 8 images of 56×56×64 → 64, stride
//                 1, SAME: forward, input gradient, filter gradient; xdev in
//                 NHWC, libtorch in NCHW and in channels_last
//
// Threads: libtorch runs on at::set_num_threads(T) (OpenMP) and its OpenBLAS
// (Debian's libblas.so.3, a shim over libopenblas.so.0) on its default of all
// cores; xdev runs on oneTBB's T threads; T = the cores of this process.
// libtorch_cpu links the same libopenblas.so.0 that the cpu plugin loads, and
// the plugin sets it to one thread process-wide at its first product: the
// cases whose libtorch ops reach OpenBLAS put it on T threads while they run
// (TorchBlasThreads), else libtorch's products would run on one core after
// the first xdev product and on all before it (order-dependent). Every timed loop after parallel
// work starts after a 250 ms pause so that spinning OpenMP/OpenBLAS threads
// of the previous benchmark are asleep. The Sgemm, TrainStep, Softmax and
// Conv2D cases check, untimed, that xdev and libtorch give the same result.
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <ATen/core/grad_mode.h>
#include <benchmark/benchmark.h>
#include <cblas.h>
#include <dlfcn.h>
#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/task_arena.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <new>
#include <random>
#include <string>
#include <thread>
#include <tuple>
#include <vector>
#include <xdev/xdev.hpp>

namespace {

void quiesce() { std::this_thread::sleep_for(std::chrono::milliseconds(250)); }

int threads() { return tbb::this_task_arena::max_concurrency(); }

// The untimed check before a timed loop: true when xdev's and libtorch's
// results agree (`worst`, their largest relative difference, within `bound`,
// and as many values on both sides); else the benchmark is skipped, saying so.
bool results_agree(benchmark::State& state, double worst, double bound, bool same_count = true) {
  if (same_count && worst <= bound) return true;
  state.SkipWithError((same_count ? "xdev and libtorch disagree: relative difference " +
                                        std::to_string(worst) + " (bound " +
                                        std::to_string(bound) + ")"
                                  : std::string("xdev and libtorch give different counts"))
                          .c_str());
  return false;
}

// Same values for both sides: uniform in [-1, 1) from a fixed seed.
std::vector<float> random_values(int64_t n, uint64_t seed) {
  std::mt19937_64 engine(seed);
  std::uniform_real_distribution<float> uniform(-1.f, 1.f);
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) x = uniform(engine);
  return v;
}

xdev::Tensor xdev_tensor(const std::vector<float>& v, const xdev::Shape& shape) {
  return xdev::constant(v, shape);
}

at::Tensor torch_tensor(const std::vector<float>& v, at::IntArrayRef shape) {
  return at::from_blob(const_cast<float*>(v.data()), shape, at::kFloat).clone();
}

// Once per process: libtorch's thread count, and the xdev CPU device.
// xdev runs every op of this benchmark on the CPU (a GPU, if any, would
// otherwise get them).
#define XDEV_ON_CPU xdev::DeviceScope xdev_cpu_scope_("/device:CPU:0")

void setup_once() {
  static const bool done = [] {
    at::set_num_threads(threads());
    return true;
  }();
  (void)done;
}

// The OpenBLAS the cpu plugin loaded (after an xdev product that needs it).
struct OpenBlas {
  decltype(&cblas_sgemm) sgemm = nullptr;
  decltype(&openblas_get_num_threads) get_num_threads = nullptr;
  decltype(&openblas_set_num_threads) set_num_threads = nullptr;
  decltype(&openblas_get_corename) get_corename = nullptr;
};
const OpenBlas* plugin_openblas() {
  static const OpenBlas* blas = []() -> const OpenBlas* {
    XDEV_ON_CPU;
    xdev::Tensor a = xdev::ones({64, 64});
    (void)xdev::matmul(a, a).to_host();  // the plugin loads OpenBLAS here
    void* handle = dlopen(XDEV_BENCH_OPENBLAS_SONAME, RTLD_NOW | RTLD_NOLOAD);
    if (handle == nullptr) return nullptr;
    auto* b = new OpenBlas;
    b->sgemm = reinterpret_cast<decltype(&cblas_sgemm)>(dlsym(handle, "cblas_sgemm"));
    b->get_num_threads =
        reinterpret_cast<decltype(&openblas_get_num_threads)>(dlsym(handle, "openblas_get_num_threads"));
    b->set_num_threads =
        reinterpret_cast<decltype(&openblas_set_num_threads)>(dlsym(handle, "openblas_set_num_threads"));
    b->get_corename =
        reinterpret_cast<decltype(&openblas_get_corename)>(dlsym(handle, "openblas_get_corename"));
    if (!b->sgemm || !b->get_num_threads || !b->set_num_threads || !b->get_corename) return nullptr;
    return b;
  }();
  return blas;
}

// libtorch's OpenBLAS on `n` threads (default T) while alive, then back to
// what it was (the cpu plugin's one thread where the plugin loaded the same
// library).
class TorchBlasThreads {
 public:
  explicit TorchBlasThreads(int n = threads()) {
    // The OpenBLAS in the global scope: libtorch_cpu's dependency.
    get_ = reinterpret_cast<decltype(&openblas_get_num_threads)>(
        dlsym(RTLD_DEFAULT, "openblas_get_num_threads"));
    set_ = reinterpret_cast<decltype(&openblas_set_num_threads)>(
        dlsym(RTLD_DEFAULT, "openblas_set_num_threads"));
    if (get_ == nullptr || set_ == nullptr) return;
    saved_ = get_();
    set_(n);
  }
  ~TorchBlasThreads() {
    if (get_ != nullptr && set_ != nullptr) set_(saved_);
  }
  TorchBlasThreads(const TorchBlasThreads&) = delete;
  TorchBlasThreads& operator=(const TorchBlasThreads&) = delete;

 private:
  decltype(&openblas_get_num_threads) get_ = nullptr;
  decltype(&openblas_set_num_threads) set_ = nullptr;
  int saved_ = 1;
};

// libtorch's OpenMP on `n` threads (0: T) while alive, then back to T.
class TorchOmpThreads {
 public:
  explicit TorchOmpThreads(int n) { at::set_num_threads(n == 0 ? threads() : n); }
  ~TorchOmpThreads() { at::set_num_threads(threads()); }
  TorchOmpThreads(const TorchOmpThreads&) = delete;
  TorchOmpThreads& operator=(const TorchOmpThreads&) = delete;
};

// ---------------------------------------------------------------------------
// 1-element add

void BM_Add1_Xdev(benchmark::State& state) {
  setup_once();
  XDEV_ON_CPU;
  const xdev::Tensor a = xdev::constant({1.f});
  const xdev::Tensor b = xdev::constant({2.f});
  for (auto _ : state) {
    xdev::Tensor c = xdev::add(a, b);
    benchmark::DoNotOptimize(c.impl());
  }
  if (xdev::add(a, b).item<float>() != 3.f) state.SkipWithError("wrong result");
}
BENCHMARK(BM_Add1_Xdev);

void BM_Add1_Torch(benchmark::State& state) {
  setup_once();
  const at::Tensor a = at::full({1}, 1.f);
  const at::Tensor b = at::full({1}, 2.f);
  for (auto _ : state) {
    at::Tensor c = at::add(a, b);
    benchmark::DoNotOptimize(c.data_ptr());
  }
  if (at::add(a, b).item<float>() != 3.f) state.SkipWithError("wrong result");
}
BENCHMARK(BM_Add1_Torch);

// ---------------------------------------------------------------------------
// The walkthrough's 2×3 · 3×2

void BM_MatMul2x3x2_Xdev(benchmark::State& state) {
  setup_once();
  XDEV_ON_CPU;
  const xdev::Tensor a = xdev::constant({{1.f, 2.f, 3.f}, {4.f, 5.f, 6.f}});
  const xdev::Tensor b = xdev::constant({{1.f, 2.f}, {3.f, 4.f}, {5.f, 6.f}});
  for (auto _ : state) {
    xdev::Tensor c = xdev::matmul(a, b);
    benchmark::DoNotOptimize(c.impl());
  }
  if (xdev::matmul(a, b).to_vector<float>() != std::vector<float>{22, 28, 49, 64}) {
    state.SkipWithError("wrong result");
  }
}
BENCHMARK(BM_MatMul2x3x2_Xdev);

void BM_MatMul2x3x2_Torch(benchmark::State& state) {
  setup_once();
  const std::vector<float> av{1, 2, 3, 4, 5, 6}, bv{1, 2, 3, 4, 5, 6};
  const at::Tensor a = torch_tensor(av, {2, 3});
  const at::Tensor b = torch_tensor(bv, {3, 2});
  for (auto _ : state) {
    at::Tensor c = at::mm(a, b);
    benchmark::DoNotOptimize(c.data_ptr());
  }
  if (at::mm(a, b)[1][1].item<float>() != 64.f) state.SkipWithError("wrong result");
}
BENCHMARK(BM_MatMul2x3x2_Torch);

// ---------------------------------------------------------------------------
// SGEMM n×n

void set_gemm_counters(benchmark::State& state, int64_t n) {
  const double flops = 2.0 * static_cast<double>(n) * static_cast<double>(n) *
                       static_cast<double>(n);
  state.counters["GFLOP/s"] =
      benchmark::Counter(flops / 1e9, benchmark::Counter::kIsIterationInvariantRate);
}

void BM_Sgemm_Xdev(benchmark::State& state) {
  setup_once();
  XDEV_ON_CPU;
  const int64_t n = state.range(0);
  const xdev::Tensor a = xdev_tensor(random_values(n * n, 1), {n, n});
  const xdev::Tensor b = xdev_tensor(random_values(n * n, 2), {n, n});
  xdev::matmul(a, b);  // warm the pool and the threads
  quiesce();
  for (auto _ : state) {
    xdev::Tensor c = xdev::matmul(a, b);
    benchmark::DoNotOptimize(c.impl());
  }
  set_gemm_counters(state, n);
  // Same result as libtorch's (float32 rounding of different summation orders).
  const at::Tensor reference = at::mm(torch_tensor(random_values(n * n, 1), {n, n}),
                                      torch_tensor(random_values(n * n, 2), {n, n}));
  const std::vector<float> mine = xdev::matmul(a, b).to_vector<float>();
  const float* theirs = reference.data_ptr<float>();
  double worst = 0;
  for (size_t i = 0; i < mine.size(); i += 97) {
    worst = std::max(worst, std::fabs(static_cast<double>(mine[i]) - theirs[i]));
  }
  if (worst > 1e-5 * static_cast<double>(n)) state.SkipWithError("xdev and libtorch disagree");
}

void BM_Sgemm_Torch(benchmark::State& state) {
  setup_once();
  TorchBlasThreads blas_threads;
  const int64_t n = state.range(0);
  const at::Tensor a = torch_tensor(random_values(n * n, 1), {n, n});
  const at::Tensor b = torch_tensor(random_values(n * n, 2), {n, n});
  at::mm(a, b);
  quiesce();
  for (auto _ : state) {
    at::Tensor c = at::mm(a, b);
    benchmark::DoNotOptimize(c.data_ptr());
  }
  set_gemm_counters(state, n);
}

void BM_Sgemm_OpenBlas(benchmark::State& state) {
  setup_once();
  const OpenBlas* blas = plugin_openblas();
  if (blas == nullptr) {
    state.SkipWithError("the cpu plugin loaded no OpenBLAS");
    return;
  }
  const int64_t n = state.range(0);
  const std::vector<float> a = random_values(n * n, 1), b = random_values(n * n, 2);
  std::vector<float> c(a.size());
  // A program calling OpenBLAS itself lets it use every core; the plugin set
  // it to one thread (process-wide): set it for the peer, then put it back.
  const int plugin_setting = blas->get_num_threads();
  blas->set_num_threads(threads());
  const int ni = static_cast<int>(n);
  auto run = [&] {
    blas->sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, ni, ni, ni, 1.f, a.data(), ni,
                b.data(), ni, 0.f, c.data(), ni);
  };
  run();
  quiesce();
  for (auto _ : state) {
    run();
    benchmark::DoNotOptimize(c.data());
    benchmark::ClobberMemory();
  }
  blas->set_num_threads(plugin_setting);
  set_gemm_counters(state, n);
  state.SetLabel(std::string("OpenBLAS kernels ") + blas->get_corename());
}

BENCHMARK(BM_Sgemm_Xdev)->Arg(256)->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK(BM_Sgemm_Torch)->Arg(256)->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK(BM_Sgemm_OpenBlas)->Arg(256)->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK(BM_Sgemm_Xdev)->Arg(1024)->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK(BM_Sgemm_Torch)->Arg(1024)->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK(BM_Sgemm_OpenBlas)->Arg(1024)->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK(BM_Sgemm_Xdev)->Arg(2048)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_Sgemm_Torch)->Arg(2048)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_Sgemm_OpenBlas)->Arg(2048)->Unit(benchmark::kMillisecond)->UseRealTime();

// ---------------------------------------------------------------------------
// Add of 16 Mi floats

constexpr int64_t kBig = int64_t{16} << 20;

void set_stream_counters(benchmark::State& state, int64_t n) {
  // Bytes moved: read x, read y, write z.
  state.counters["GB/s"] = benchmark::Counter(3.0 * 4.0 * static_cast<double>(n) / 1e9,
                                              benchmark::Counter::kIsIterationInvariantRate);
}

void BM_Add16M_Xdev(benchmark::State& state) {
  setup_once();
  XDEV_ON_CPU;
  const xdev::Tensor a = xdev_tensor(random_values(kBig, 3), {kBig});
  const xdev::Tensor b = xdev_tensor(random_values(kBig, 4), {kBig});
  xdev::add(a, b);  // warm the pool (the output block is reused)
  quiesce();
  for (auto _ : state) {
    xdev::Tensor c = xdev::add(a, b);
    benchmark::DoNotOptimize(c.impl());
  }
  set_stream_counters(state, kBig);
}
BENCHMARK(BM_Add16M_Xdev)->Unit(benchmark::kMicrosecond)->UseRealTime();

void BM_Add16M_Torch(benchmark::State& state) {
  setup_once();
  const at::Tensor a = torch_tensor(random_values(kBig, 3), {kBig});
  const at::Tensor b = torch_tensor(random_values(kBig, 4), {kBig});
  at::add(a, b);
  quiesce();
  for (auto _ : state) {
    at::Tensor c = at::add(a, b);
    benchmark::DoNotOptimize(c.data_ptr());
  }
  set_stream_counters(state, kBig);
}
BENCHMARK(BM_Add16M_Torch)->Unit(benchmark::kMicrosecond)->UseRealTime();

// libtorch's default CPU allocator gives a fresh 64 MiB output back to the
// OS at every free (glibc mmap), so each at::add pays its page faults; xdev's
// pool keeps the block. at::add_out into a preallocated output shows
// libtorch's kernel alone.
void BM_Add16M_TorchOut(benchmark::State& state) {
  setup_once();
  const at::Tensor a = torch_tensor(random_values(kBig, 3), {kBig});
  const at::Tensor b = torch_tensor(random_values(kBig, 4), {kBig});
  at::Tensor c = at::add(a, b);
  quiesce();
  for (auto _ : state) {
    at::add_out(c, a, b);
    benchmark::DoNotOptimize(c.data_ptr());
    benchmark::ClobberMemory();
  }
  set_stream_counters(state, kBig);
}
BENCHMARK(BM_Add16M_TorchOut)->Unit(benchmark::kMicrosecond)->UseRealTime();

void BM_Add16M_TbbLoop(benchmark::State& state) {
  setup_once();
  const size_t n = static_cast<size_t>(kBig);
  // Page-aligned like the pool's blocks, and touched before timing.
  auto alloc = [n] {
    return std::unique_ptr<float[], void (*)(float*)>(
        static_cast<float*>(::operator new[](n * sizeof(float), std::align_val_t{4096})),
        [](float* p) { ::operator delete[](p, std::align_val_t{4096}); });
  };
  auto x = alloc(), y = alloc(), z = alloc();
  const std::vector<float> xv = random_values(kBig, 3), yv = random_values(kBig, 4);
  std::memcpy(x.get(), xv.data(), n * sizeof(float));
  std::memcpy(y.get(), yv.data(), n * sizeof(float));
  std::memset(z.get(), 0, n * sizeof(float));
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

// ---------------------------------------------------------------------------
// A fresh tensor of zeros and its release

void BM_Zeros_Xdev(benchmark::State& state) {
  setup_once();
  XDEV_ON_CPU;
  const int64_t n = state.range(0);
  quiesce();
  for (auto _ : state) {
    xdev::Tensor t = xdev::zeros({n});
    benchmark::DoNotOptimize(t.impl());
  }
}
BENCHMARK(BM_Zeros_Xdev)->Arg(256)->Arg(int64_t{1} << 20)->UseRealTime();

void BM_Zeros_Torch(benchmark::State& state) {
  setup_once();
  const int64_t n = state.range(0);
  quiesce();
  for (auto _ : state) {
    at::Tensor t = at::zeros({n});
    benchmark::DoNotOptimize(t.data_ptr());
  }
}
BENCHMARK(BM_Zeros_Torch)->Arg(256)->Arg(int64_t{1} << 20)->UseRealTime();

void BM_Empty_Torch(benchmark::State& state) {
  setup_once();
  const int64_t n = state.range(0);
  for (auto _ : state) {
    at::Tensor t = at::empty({n});
    benchmark::DoNotOptimize(t.data_ptr());
  }
}
BENCHMARK(BM_Empty_Torch)->Arg(256)->Arg(int64_t{1} << 20)->UseRealTime();

// ---------------------------------------------------------------------------
// One training step of a 784-512-512-10 MLP, batch 256
//
// xdev uses its public SDK as a program would: Sequential of Dense layers
// (kernel [in, out], bias [out], ReLU on the hidden ones), sparse_softmax_
// cross_entropy, GradientTape::gradient over the model's Variables and
// SGD::apply_gradients. libtorch uses ATen ops with autograd as its C++ users
// (and torch.nn.Linear) would: addmm(bias, x, kernel) and relu,
// cross_entropy_loss (mean), loss.backward(), then under NoGradGuard
// w.add_(w.grad(), -lr) and the gradient dropped (zero_grad(set_to_none)).
// Both keep the kernel in [in, out] layout so that the same values are copied
// into both.

constexpr int64_t kBatch = 256;
constexpr int64_t kMlpWidths[] = {784, 512, 512, 10};
constexpr int kMlpLayers = 3;
constexpr double kLearningRate = 0.01;
// Steps the setup trains before timing, to check that the loss falls.
constexpr int kSanitySteps = 20;

struct MlpData {
  std::vector<float> inputs;       // [batch, 784], uniform in [-1, 1)
  std::vector<int64_t> labels;     // [batch], classes 0..9
  std::vector<std::vector<float>> kernels, biases;  // Glorot-uniform; small uniform
  // f(in, out, kernel values, bias values, hidden) for each layer in order;
  // hidden layers have a ReLU.
  template <typename F>
  void each_layer(F&& f) const {
    for (int l = 0; l < kMlpLayers; ++l) {
      f(kMlpWidths[l], kMlpWidths[l + 1], kernels[l], biases[l], l + 1 < kMlpLayers);
    }
  }
};

const MlpData& mlp_data() {
  static const MlpData data = [] {
    MlpData d;
    d.inputs = random_values(kBatch * kMlpWidths[0], 10);
    std::mt19937_64 engine(11);
    std::uniform_int_distribution<int64_t> cls(0, kMlpWidths[kMlpLayers] - 1);
    for (int64_t i = 0; i < kBatch; ++i) d.labels.push_back(cls(engine));
    for (int l = 0; l < kMlpLayers; ++l) {
      const int64_t in = kMlpWidths[l], out = kMlpWidths[l + 1];
      const float limit = std::sqrt(6.f / static_cast<float>(in + out));
      std::vector<float> k = random_values(in * out, 20 + static_cast<uint64_t>(l));
      for (float& v : k) v *= limit;
      std::vector<float> b = random_values(out, 30 + static_cast<uint64_t>(l));
      for (float& v : b) v *= 0.1f;
      d.kernels.push_back(std::move(k));
      d.biases.push_back(std::move(b));
    }
    return d;
  }();
  return data;
}

class XdevMlp {
 public:
  XdevMlp() {
    const MlpData& d = mlp_data();
    d.each_layer([this](int64_t in, int64_t out, const std::vector<float>& kernel,
                        const std::vector<float>& bias, bool hidden) {
      model_.add<xdev::Dense>(xdev_tensor(kernel, {in, out}), xdev_tensor(bias, {out}),
                              hidden ? xdev::Activation::kRelu : xdev::Activation::kLinear);
    });
    variables_ = model_.trainable_variables();
    inputs_ = xdev_tensor(d.inputs, {kBatch, kMlpWidths[0]});
    labels_ = xdev::constant(d.labels, {kBatch});
  }
  // One step; returns the loss before the update.
  xdev::Tensor step() {
    xdev::GradientTape tape;
    xdev::Tensor loss = xdev::sparse_softmax_cross_entropy(labels_, model_(inputs_, true));
    optimizer_.apply_gradients(tape.gradient(loss, variables_), variables_);
    return loss;
  }

 private:
  xdev::Sequential model_;
  std::vector<xdev::Variable> variables_;
  xdev::SGD optimizer_{kLearningRate};
  xdev::Tensor inputs_, labels_;
};

class TorchMlp {
 public:
  TorchMlp() {
    const MlpData& d = mlp_data();
    d.each_layer([this](int64_t in, int64_t out, const std::vector<float>& kernel,
                        const std::vector<float>& bias, bool) {
      parameters_.push_back(torch_tensor(kernel, {in, out}).set_requires_grad(true));
      parameters_.push_back(torch_tensor(bias, {out}).set_requires_grad(true));
    });
    inputs_ = torch_tensor(d.inputs, {kBatch, kMlpWidths[0]});
    labels_ = at::from_blob(const_cast<int64_t*>(d.labels.data()), {kBatch}, at::kLong).clone();
  }
  at::Tensor step() {
    at::Tensor h = inputs_;
    for (int l = 0; l < kMlpLayers; ++l) {
      h = at::addmm(parameters_[2 * l + 1], h, parameters_[2 * l]);
      if (l + 1 < kMlpLayers) h = at::relu(h);
    }
    at::Tensor loss = at::cross_entropy_loss(h, labels_);
    loss.backward();
    at::NoGradGuard no_grad;
    for (at::Tensor& p : parameters_) {
      p.add_(p.grad(), -kLearningRate);
      p.mutable_grad().reset();
    }
    return loss;
  }

 private:
  std::vector<at::Tensor> parameters_;  // kernel, bias per layer
  at::Tensor inputs_, labels_;
};

// The losses of the first `steps` steps of a fresh model.
template <typename Mlp, typename ToFloat>
std::vector<float> train_losses(int steps, ToFloat to_float) {
  Mlp mlp;
  std::vector<float> losses;
  for (int i = 0; i < steps; ++i) losses.push_back(to_float(mlp.step()));
  return losses;
}
std::vector<float> xdev_losses(int steps) {
  XDEV_ON_CPU;
  return train_losses<XdevMlp>(steps, [](const xdev::Tensor& t) { return t.item<float>(); });
}
std::vector<float> torch_losses(int steps) {
  TorchBlasThreads blas_threads;
  return train_losses<TorchMlp>(steps, [](const at::Tensor& t) { return t.item<float>(); });
}

// Not a timed assertion: the setup's check that the steps train (the loss
// of a fixed batch falls by at least 5 %: 2.35 -> 2.17 in 20 steps) before the timed loop.
bool loss_fell(benchmark::State& state, const std::vector<float>& losses) {
  const float first = losses.front(), last = losses.back();
  if (!(std::isfinite(last) && last < 0.95f * first)) {
    state.SkipWithError(("the loss did not fall: " + std::to_string(first) + " -> " +
                         std::to_string(last) + " in " + std::to_string(losses.size()) + " steps")
                            .c_str());
    return false;
  }
  state.counters["loss0"] = first;
  state.counters["loss20"] = last;
  return true;
}

void BM_TrainStep_Xdev(benchmark::State& state) {
  setup_once();
  const std::vector<float> mine = xdev_losses(kSanitySteps);
  if (!loss_fell(state, mine)) return;
  // The same training as libtorch's, step by step (float32 rounding of
  // different summation orders apart).
  const std::vector<float> theirs = torch_losses(kSanitySteps);
  for (size_t i = 0; i < mine.size(); ++i) {
    if (!(std::fabs(mine[i] - theirs[i]) <= 1e-3f * std::fabs(theirs[i]))) {
      state.SkipWithError(("xdev and libtorch disagree at step " + std::to_string(i) + ": loss " +
                           std::to_string(mine[i]) + " vs " + std::to_string(theirs[i]))
                              .c_str());
      return;
    }
  }
  XDEV_ON_CPU;
  XdevMlp mlp;
  mlp.step();  // warm the pool and the threads
  quiesce();
  for (auto _ : state) {
    xdev::Tensor loss = mlp.step();
    benchmark::DoNotOptimize(loss.impl());
  }
  if (!std::isfinite(mlp.step().item<float>())) state.SkipWithError("the loss is not finite");
}
BENCHMARK(BM_TrainStep_Xdev)->Unit(benchmark::kMillisecond)->UseRealTime();

// libtorch's step mixes OpenMP-parallel ops (T threads that spin a while
// after each region) with OpenBLAS products (T threads of its own): on few
// cores the two pools contend. The case runs in three settings, and the table
// compares xdev with the fastest: libtorch's defaults (OpenMP T, OpenBLAS T),
// OpenBLAS on one thread (what the cpu plugin's process-wide setting gives
// libtorch), and OpenMP on one thread (products on T threads, the rest on one).
// omp_threads / blas_threads: 0 = T.
void BM_TrainStep_Torch(benchmark::State& state, int omp_threads, int blas_threads) {
  setup_once();
  if (!loss_fell(state, torch_losses(kSanitySteps))) return;
  TorchBlasThreads blas(blas_threads == 0 ? threads() : blas_threads);
  TorchOmpThreads omp(omp_threads);
  TorchMlp mlp;
  mlp.step();
  quiesce();
  for (auto _ : state) {
    at::Tensor loss = mlp.step();
    benchmark::DoNotOptimize(loss.data_ptr());
  }
  if (!std::isfinite(mlp.step().item<float>())) state.SkipWithError("the loss is not finite");
}
BENCHMARK_CAPTURE(BM_TrainStep_Torch, defaults, 0, 0)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_TrainStep_Torch, blas1, 0, 1)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_TrainStep_Torch, omp1, 1, 0)->Unit(benchmark::kMillisecond)->UseRealTime();

// ---------------------------------------------------------------------------
// A unary op and a reduction over 16 Mi floats (target: >= 0.9x libtorch)
//
// Exp (elementwise, a fresh output each time; libtorch also into a
// preallocated one, as for the add) and Sum of every element (a scalar: the
// read alone, so the pool plays no part). Each xdev case first checks, untimed,
// that it agrees with libtorch.

enum class Large { kExp, kSum };

xdev::Tensor xdev_large(Large op, const xdev::Tensor& x) {
  return op == Large::kExp ? xdev::exp(x) : xdev::sum(x);
}

at::Tensor torch_large(Large op, const at::Tensor& x) {
  return op == Large::kExp ? at::exp(x) : at::sum(x);
}

void set_large_counters(benchmark::State& state, Large op) {
  // Bytes moved: read x (and write y for Exp).
  const double passes = op == Large::kExp ? 2.0 : 1.0;
  state.counters["GB/s"] = benchmark::Counter(passes * 4.0 * static_cast<double>(kBig) / 1e9,
                                              benchmark::Counter::kIsIterationInvariantRate);
}

void BM_Large16M_Xdev(benchmark::State& state, Large op) {
  setup_once();
  XDEV_ON_CPU;
  const std::vector<float> values = random_values(kBig, 5);
  const xdev::Tensor x = xdev_tensor(values, {kBig});
  const std::vector<float> mine = xdev_large(op, x).to_vector<float>();
  const at::Tensor reference = torch_large(op, torch_tensor(values, {kBig}));
  const float* theirs = reference.data_ptr<float>();
  // Exp: each element within 1e-6 relative. Sum: the two orders of summation
  // within 1e-6 of Σ|x| (about 8 M here).
  double worst = 0, scale = 1;
  if (op == Large::kSum) {
    scale = 0;
    for (float v : values) scale += std::fabs(v);
  }
  for (size_t i = 0; i < mine.size(); ++i) {
    const double denominator = op == Large::kExp ? std::fabs(theirs[i]) : scale;
    worst = std::max(worst, std::fabs(static_cast<double>(mine[i]) - theirs[i]) / denominator);
  }
  if (!results_agree(state, worst, 1e-6, mine.size() == static_cast<size_t>(reference.numel()))) {
    return;
  }
  quiesce();
  for (auto _ : state) {
    xdev::Tensor y = xdev_large(op, x);
    benchmark::DoNotOptimize(y.impl());
  }
  set_large_counters(state, op);
}
BENCHMARK_CAPTURE(BM_Large16M_Xdev, exp, Large::kExp)->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_Large16M_Xdev, sum, Large::kSum)->Unit(benchmark::kMicrosecond)->UseRealTime();

// `preallocated`: at::exp_out / at::sum_out into an output made once.
void BM_Large16M_Torch(benchmark::State& state, Large op, bool preallocated) {
  setup_once();
  const at::Tensor x = torch_tensor(random_values(kBig, 5), {kBig});
  at::Tensor y = torch_large(op, x);
  quiesce();
  for (auto _ : state) {
    if (!preallocated) {
      y = torch_large(op, x);
    } else if (op == Large::kExp) {
      at::exp_out(y, x);
    } else {
      at::sum_out(y, x, at::IntArrayRef{});
    }
    benchmark::DoNotOptimize(y.data_ptr());
    benchmark::ClobberMemory();
  }
  set_large_counters(state, op);
}
BENCHMARK_CAPTURE(BM_Large16M_Torch, exp, Large::kExp, false)
    ->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_Large16M_Torch, exp_out, Large::kExp, true)
    ->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_Large16M_Torch, sum, Large::kSum, false)
    ->Unit(benchmark::kMicrosecond)->UseRealTime();

// ---------------------------------------------------------------------------
// Softmax over [4096, 1024] float32, along the last axis
//
// xdev::softmax against at::softmax (OpenMP on T threads; no product, so no
// OpenBLAS), and at::_softmax_out into a preallocated output: libtorch's
// allocator gives a fresh 16 MiB output back to the OS at every free (as for
// the large add), so the second shows its kernel alone.

constexpr int64_t kSoftmaxRows = 4096, kSoftmaxCols = 1024;

void set_softmax_counters(benchmark::State& state) {
  // Bytes moved at least: read x, write y.
  state.counters["GB/s"] =
      benchmark::Counter(2.0 * 4.0 * static_cast<double>(kSoftmaxRows * kSoftmaxCols) / 1e9,
                         benchmark::Counter::kIsIterationInvariantRate);
}

void BM_Softmax_Xdev(benchmark::State& state) {
  setup_once();
  XDEV_ON_CPU;
  const std::vector<float> values = random_values(kSoftmaxRows * kSoftmaxCols, 40);
  const xdev::Tensor x = xdev_tensor(values, {kSoftmaxRows, kSoftmaxCols});
  // Untimed: the same probabilities as libtorch's, within float32 rounding.
  const std::vector<float> mine = xdev::softmax(x).to_vector<float>();
  const at::Tensor reference = at::softmax(torch_tensor(values, {kSoftmaxRows, kSoftmaxCols}), 1);
  const float* theirs = reference.data_ptr<float>();
  double worst = 0;
  for (size_t i = 0; i < mine.size(); ++i) {
    worst = std::max(worst, std::fabs(static_cast<double>(mine[i]) - theirs[i]) /
                                static_cast<double>(theirs[i]));
  }
  if (!results_agree(state, worst, 1e-5)) return;
  quiesce();
  for (auto _ : state) {
    xdev::Tensor y = xdev::softmax(x);
    benchmark::DoNotOptimize(y.impl());
  }
  set_softmax_counters(state);
}
BENCHMARK(BM_Softmax_Xdev)->Unit(benchmark::kMicrosecond)->UseRealTime();

// `preallocated`: at::_softmax_out into an output made once.
void BM_Softmax_Torch(benchmark::State& state, bool preallocated) {
  setup_once();
  const at::Tensor x = torch_tensor(random_values(kSoftmaxRows * kSoftmaxCols, 40),
                                    {kSoftmaxRows, kSoftmaxCols});
  at::Tensor y = at::softmax(x, 1);
  quiesce();
  for (auto _ : state) {
    if (preallocated) {
      at::_softmax_out(y, x, 1, false);
    } else {
      y = at::softmax(x, 1);
    }
    benchmark::DoNotOptimize(y.data_ptr());
    benchmark::ClobberMemory();
  }
  set_softmax_counters(state);
}
BENCHMARK_CAPTURE(BM_Softmax_Torch, fresh, false)->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_Softmax_Torch, out, true)->Unit(benchmark::kMicrosecond)->UseRealTime();

// ---------------------------------------------------------------------------
// Conv2D of a ResNet-style 3×3 layer: 8 images of 56×56×64 → 64 channels,
// stride 1, SAME padding (1 on each side), no bias; and its two gradients
// (Conv2DBackpropInput, Conv2DBackpropFilter) for an output gradient dy
//
// xdev: NHWC images, HWIO filter (TensorFlow's layouts): xdev::conv2d,
// conv2d_backprop_input, conv2d_backprop_filter. libtorch: at::conv2d and
// at::convolution_backward (asking for the one gradient) on the same values,
// in its two layouts: NCHW (contiguous) and channels_last (NHWC in memory),
// on libtorch's OpenMP threads (T; its oneDNN path runs on them), and
// channels_last on one OpenMP thread as well (on a loaded machine T
// OpenMP threads that wait for each other at every barrier can take longer
// than one); the table compares xdev with the fastest of the three.
// TorchBlasThreads puts OpenBLAS on T, should a path reach it.

constexpr int64_t kConvN = 8, kConvH = 56, kConvW = 56, kConvC = 64, kConvF = 64, kConvK = 3;

enum class ConvPass { kForward, kInputGrad, kFilterGrad };

struct ConvData {
  std::vector<float> input;   // NHWC
  std::vector<float> filter;  // HWIO, scaled by 1/sqrt(fan in)
  std::vector<float> dy;      // NHWC, the output's gradient
};

const ConvData& conv_data() {
  static const ConvData data = [] {
    ConvData d;
    d.input = random_values(kConvN * kConvH * kConvW * kConvC, 50);
    d.filter = random_values(kConvK * kConvK * kConvC * kConvF, 51);
    const float scale = 1.f / std::sqrt(static_cast<float>(kConvK * kConvK * kConvC));
    for (float& v : d.filter) v *= scale;
    d.dy = random_values(kConvN * kConvH * kConvW * kConvF, 52);
    return d;
  }();
  return data;
}

void set_conv_counters(benchmark::State& state) {
  // Each of the three passes is one product of the same size.
  const double flops = 2.0 * kConvN * kConvH * kConvW * kConvF * kConvK * kConvK * kConvC;
  state.counters["GFLOP/s"] =
      benchmark::Counter(flops / 1e9, benchmark::Counter::kIsIterationInvariantRate);
}

class XdevConv {
 public:
  XdevConv()
      : x_(xdev_tensor(conv_data().input, {kConvN, kConvH, kConvW, kConvC})),
        w_(xdev_tensor(conv_data().filter, {kConvK, kConvK, kConvC, kConvF})),
        dy_(xdev_tensor(conv_data().dy, {kConvN, kConvH, kConvW, kConvF})) {}
  xdev::Tensor run(ConvPass pass) const {
    switch (pass) {
      case ConvPass::kForward:
        return xdev::conv2d(x_, w_, {1, 1}, "SAME");
      case ConvPass::kInputGrad:
        return xdev::conv2d_backprop_input({kConvN, kConvH, kConvW, kConvC}, w_, dy_, {1, 1},
                                           "SAME");
      case ConvPass::kFilterGrad:
        return xdev::conv2d_backprop_filter(x_, {kConvK, kConvK, kConvC, kConvF}, dy_, {1, 1},
                                            "SAME");
    }
    return {};
  }

 private:
  xdev::Tensor x_, w_, dy_;
};

class TorchConv {
 public:
  // NHWC / HWIO values as NCHW / OIHW tensors in `format` (Contiguous or
  // ChannelsLast).
  explicit TorchConv(at::MemoryFormat format)
      : x_(image(conv_data().input, kConvC, format)),
        w_(torch_tensor(conv_data().filter, {kConvK, kConvK, kConvC, kConvF})
               .permute({3, 2, 0, 1})
               .contiguous(format)),
        dy_(image(conv_data().dy, kConvF, format)) {}
  at::Tensor run(ConvPass pass) const {
    if (pass == ConvPass::kForward) return at::conv2d(x_, w_, {}, {1, 1}, {1, 1});
    const bool input = pass == ConvPass::kInputGrad;
    auto grads = at::convolution_backward(dy_, x_, w_, c10::nullopt, {1, 1}, {1, 1}, {1, 1},
                                          false, {0, 0}, 1, {input, !input, false});
    return input ? std::get<0>(grads) : std::get<1>(grads);
  }
  // run(pass) in xdev's layout (NHWC images, HWIO filter), dense.
  at::Tensor run_in_xdev_layout(ConvPass pass) const {
    const at::Tensor t = run(pass);
    return (pass == ConvPass::kFilterGrad ? t.permute({2, 3, 1, 0}) : t.permute({0, 2, 3, 1}))
        .contiguous();
  }

 private:
  static at::Tensor image(const std::vector<float>& nhwc, int64_t channels,
                          at::MemoryFormat format) {
    return torch_tensor(nhwc, {kConvN, kConvH, kConvW, channels})
        .permute({0, 3, 1, 2})
        .contiguous(format);
  }
  at::Tensor x_, w_, dy_;
};

void BM_Conv2D_Xdev(benchmark::State& state, ConvPass pass) {
  setup_once();
  XDEV_ON_CPU;
  const XdevConv conv;
  // Untimed: the same result as libtorch's, within float32 rounding of sums
  // of 576 products (forward, input gradient) or 25088 (filter gradient).
  const std::vector<float> mine = conv.run(pass).to_vector<float>();
  at::Tensor theirs_t;
  {
    TorchBlasThreads blas_threads;
    theirs_t = TorchConv(at::MemoryFormat::Contiguous).run_in_xdev_layout(pass);
  }
  const float* theirs = theirs_t.data_ptr<float>();
  double worst = 0, largest = 0;
  for (size_t i = 0; i < mine.size(); ++i) {
    worst = std::max(worst, std::fabs(static_cast<double>(mine[i]) - theirs[i]));
    largest = std::max(largest, std::fabs(static_cast<double>(theirs[i])));
  }
  if (mine.size() != static_cast<size_t>(theirs_t.numel()) || !(worst <= 1e-5 * (1 + largest))) {
    state.SkipWithError(("xdev and libtorch disagree: difference " + std::to_string(worst) +
                         " (largest value " + std::to_string(largest) + ")")
                            .c_str());
    return;
  }
  quiesce();
  for (auto _ : state) {
    xdev::Tensor y = conv.run(pass);
    benchmark::DoNotOptimize(y.impl());
  }
  set_conv_counters(state);
}

// omp_threads: libtorch's OpenMP threads, 0 = T.
void BM_Conv2D_Torch(benchmark::State& state, ConvPass pass, at::MemoryFormat format,
                     int omp_threads) {
  setup_once();
  TorchBlasThreads blas_threads;
  TorchOmpThreads omp(omp_threads);
  const TorchConv conv(format);
  conv.run(pass);
  quiesce();
  for (auto _ : state) {
    at::Tensor y = conv.run(pass);
    benchmark::DoNotOptimize(y.data_ptr());
  }
  set_conv_counters(state);
}

#define XDEV_CONV_BENCHMARKS(name, pass)                                                     \
  BENCHMARK_CAPTURE(BM_Conv2D_Xdev, name, pass)->Unit(benchmark::kMillisecond)->UseRealTime(); \
  BENCHMARK_CAPTURE(BM_Conv2D_Torch, name##_nchw, pass, at::MemoryFormat::Contiguous, 0)     \
      ->Unit(benchmark::kMillisecond)                                                        \
      ->UseRealTime();                                                                       \
  BENCHMARK_CAPTURE(BM_Conv2D_Torch, name##_channels_last, pass, at::MemoryFormat::ChannelsLast, \
                    0)                                                                       \
      ->Unit(benchmark::kMillisecond)                                                        \
      ->UseRealTime();                                                                       \
  BENCHMARK_CAPTURE(BM_Conv2D_Torch, name##_channels_last_omp1, pass,                        \
                    at::MemoryFormat::ChannelsLast, 1)                                       \
      ->Unit(benchmark::kMillisecond)                                                        \
      ->UseRealTime()
XDEV_CONV_BENCHMARKS(forward, ConvPass::kForward);
XDEV_CONV_BENCHMARKS(input_grad, ConvPass::kInputGrad);
XDEV_CONV_BENCHMARKS(filter_grad, ConvPass::kFilterGrad);

}  // namespace

BENCHMARK_MAIN();
