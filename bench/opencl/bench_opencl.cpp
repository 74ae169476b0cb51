// A few ops on the opencl plugin's device (in CI: PoCL's CPU device as a GPU)
// beside the same ops on the cpu plugin, through the public SDK, each
// iteration ending with xdev::synchronize of the device (docs/performance.md
// "OpenCL on PoCL"). No target: PoCL on a few cores is a correctness device;
// the numbers say what it costs.
//
//   Add/N        xdev::add of two N-element float32 tensors
//   Sum/N        xdev::sum of N float32 over every axis
//   SumRows/R    xdev::sum of [R, 1024] float32 over axis 1 (R lines)
//   SumColumns/R xdev::sum of [1024, R] float32 over axis 0 (strided lines)
//   ArgMax/N     xdev::argmax of N float32
//   Softmax/R    xdev::softmax of [R, 1024] float32 along the last axis
//   MatMul/N     N x N float32 products (the opencl plugin: CLBlast)
//
// Each benchmark takes the device as its first argument: 0 = /CPU:0, 1 = the
// first device of platform opencl (the run is skipped when there is none).
#include <benchmark/benchmark.h>

#include <string>
#include <vector>
#include <xdev/xdev.hpp>

namespace {

std::string device_for(int which) {
  if (which == 0) return "/device:CPU:0";
  for (const xdev::PhysicalDevice& d : xdev::list_physical_devices()) {
    if (d.platform == "opencl") return "/device:" + d.device_type + ":" + std::to_string(d.id);
  }
  return "";
}

template <typename Op>
void run(benchmark::State& state, const std::vector<int64_t>& shape, Op op) {
  const std::string device = device_for(static_cast<int>(state.range(0)));
  if (device.empty()) {
    state.SkipWithError("no OpenCL device (XDEV_OPENCL_CPU_DEVICES=GPU shows PoCL's)");
    return;
  }
  state.SetLabel(state.range(0) == 0 ? "cpu" : "opencl");
  xdev::DeviceScope scope(device);
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::vector<float> values(static_cast<size_t>(n));
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i % 97) * 0.01f;
  const xdev::Tensor x = xdev::constant(values, xdev::Shape(shape));
  op(x);  // compiles the kernel (first use) outside the timed loop
  xdev::synchronize(device);
  for (auto _ : state) {
    xdev::Tensor y = op(x);
    xdev::synchronize(device);
    benchmark::DoNotOptimize(y);
  }
  state.SetItemsProcessed(state.iterations() * n);
}

void BM_Add(benchmark::State& state) {
  run(state, {state.range(1)}, [](const xdev::Tensor& x) { return xdev::add(x, x); });
}
void BM_Sum(benchmark::State& state) {
  run(state, {state.range(1)}, [](const xdev::Tensor& x) { return xdev::sum(x); });
}
void BM_SumRows(benchmark::State& state) {
  run(state, {state.range(1), 1024}, [](const xdev::Tensor& x) { return xdev::sum(x, {1}); });
}
void BM_SumColumns(benchmark::State& state) {
  run(state, {1024, state.range(1)}, [](const xdev::Tensor& x) { return xdev::sum(x, {0}); });
}
void BM_ArgMax(benchmark::State& state) {
  run(state, {state.range(1)}, [](const xdev::Tensor& x) { return xdev::argmax(x, 0); });
}
void BM_Softmax(benchmark::State& state) {
  run(state, {state.range(1), 1024}, [](const xdev::Tensor& x) { return xdev::softmax(x); });
}
void BM_MatMul(benchmark::State& state) {
  run(state, {state.range(1), state.range(1)},
      [](const xdev::Tensor& x) { return xdev::matmul(x, x); });
}

BENCHMARK(BM_Add)->ArgsProduct({{0, 1}, {1, 1 << 20}})->UseRealTime();
BENCHMARK(BM_Sum)->ArgsProduct({{0, 1}, {1 << 20}})->UseRealTime();
BENCHMARK(BM_SumRows)->ArgsProduct({{0, 1}, {1024}})->UseRealTime();
BENCHMARK(BM_SumColumns)->ArgsProduct({{0, 1}, {1024}})->UseRealTime();
BENCHMARK(BM_ArgMax)->ArgsProduct({{0, 1}, {1 << 20}})->UseRealTime();
BENCHMARK(BM_Softmax)->ArgsProduct({{0, 1}, {256}})->UseRealTime();
BENCHMARK(BM_MatMul)->ArgsProduct({{0, 1}, {64, 512}})->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
