// All-reduce across logical CPU devices, and a training step on 1 vs 2 of
// them. Peer in the same run: a plain host reduction of the same bytes
// (copy every replica's buffer to a staging area, sum, copy the result back
// to every replica), which is what a runtime without a shared-memory path
// does.
#include <benchmark/benchmark.h>

#include <cstring>
#include <vector>

#include <xdev/xdev.hpp>

namespace {

std::vector<std::string> cpus(int n) {
  std::vector<std::string> out;
  for (int i = 0; i < n; ++i) out.push_back("/CPU:" + std::to_string(i));
  return out;
}

void BM_AllReduceXdev(benchmark::State& state) {
  const int replicas = static_cast<int>(state.range(0));
  const int64_t floats = state.range(1) / 4;
  xdev::MirroredStrategy strategy(cpus(replicas));
  std::vector<xdev::Tensor> values;
  for (const auto& d : strategy.devices()) {
    xdev::DeviceScope scope(d);
    values.push_back(xdev::fill({floats}, 1.0));
  }
  for (auto _ : state) {
    auto out = strategy.all_reduce(xdev::ReduceOp::kSum, values);
    benchmark::DoNotOptimize(out.data());
  }
  state.SetBytesProcessed(state.iterations() * state.range(1) * replicas);
}

void BM_AllReduceHostMemcpy(benchmark::State& state) {
  const int replicas = static_cast<int>(state.range(0));
  const size_t floats = static_cast<size_t>(state.range(1) / 4);
  std::vector<std::vector<float>> buffers(replicas, std::vector<float>(floats, 1.f));
  std::vector<std::vector<float>> staging(replicas, std::vector<float>(floats));
  std::vector<float> total(floats);
  for (auto _ : state) {
    for (int r = 0; r < replicas; ++r) {
      std::memcpy(staging[r].data(), buffers[r].data(), floats * 4);
    }
    std::memcpy(total.data(), staging[0].data(), floats * 4);
    for (int r = 1; r < replicas; ++r) {
      const float* s = staging[r].data();
      for (size_t i = 0; i < floats; ++i) total[i] += s[i];
    }
    for (int r = 0; r < replicas; ++r) std::memcpy(buffers[r].data(), total.data(), floats * 4);
    benchmark::DoNotOptimize(buffers[0].data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * state.range(1) * replicas);
}

void sizes(benchmark::internal::Benchmark* b) {
  for (int replicas : {2, 4}) {
    for (int64_t bytes : {int64_t{1} << 10, int64_t{1} << 16, int64_t{1} << 20, int64_t{16} << 20,
                          int64_t{64} << 20}) {
      b->Args({replicas, bytes});
    }
  }
  b->ArgNames({"replicas", "bytes"})->Unit(benchmark::kMicrosecond)->UseRealTime();
}
BENCHMARK(BM_AllReduceXdev)->Apply(sizes);
BENCHMARK(BM_AllReduceHostMemcpy)->Apply(sizes);

// One SGD step of a dense layer (MSE, explicit gradients) on a batch of
// 16384 x 256, on one device or mirrored over `replicas` logical CPUs.
void BM_TrainingStep(benchmark::State& state) {
  const int replicas = static_cast<int>(state.range(0));
  xdev::MirroredStrategy strategy(cpus(replicas));
  xdev::Tensor x, y;
  {
    xdev::DeviceScope scope("/CPU:0");
    x = xdev::random_uniform({16384, 256}, -1, 1, xdev::DType::kFloat32, 1);
    y = xdev::random_uniform({16384, 1}, -1, 1, xdev::DType::kFloat32, 2);
  }
  auto xs = strategy.split_batch(x);
  auto ys = strategy.split_batch(y);
  auto w = strategy.create_variable(xdev::zeros({256, 1}));
  for (auto _ : state) {
    auto grads = strategy.run([&](const xdev::ReplicaContext& r) {
      xdev::Tensor error = xdev::matmul(xs[r.replica_id], w.local(r)) - ys[r.replica_id];
      xdev::Tensor d = error * xdev::fill({}, 2.0 / 16384.0);
      return std::vector<xdev::Tensor>{xdev::matmul(xs[r.replica_id], d, true)};
    });
    w.assign_sub(strategy.all_reduce(xdev::ReduceOp::kSum, xdev::per_replica(grads, 0)), 0.2);
    benchmark::DoNotOptimize(w.value().impl());
  }
}
BENCHMARK(BM_TrainingStep)->Arg(1)->Arg(2)->ArgName("replicas")->Unit(benchmark::kMicrosecond)->UseRealTime();

}  // namespace

int main(int argc, char** argv) {
  // Four logical CPUs; configuration must come before any device is used.
  auto cpu = xdev::list_physical_devices("CPU").at(0);
  xdev::set_logical_device_configuration(
      cpu, {{.memory_limit = 1024}, {.memory_limit = 1024}, {.memory_limit = 1024},
            {.memory_limit = 1024}});
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
