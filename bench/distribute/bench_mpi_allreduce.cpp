// All-reduce (SUM, float32) across MPI ranks, 1 KiB ... 256 MiB, three ways in
// the same run on the same sizes:
//   MpiAllreduce       raw MPI_Allreduce in place on a host buffer (the peer);
//   Transport          xdev's transport on the same kind of buffer: header
//                      exchange, then chunked, pipelined MPI_Iallreduce polled
//                      against the deadline (core/distribute/mpi/communicator);
//   Strategy           MultiWorkerMirroredStrategy::all_reduce of a tensor on
//                      /CPU:0: the transport plus staging (to_host, upload).
// Every rank runs the same fixed iteration counts (collectives must match);
// rank 0 reports. Run (docs/performance.md):
//   XDEV_PLUGINS=cpu mpirun -np 2 build/bench/distribute/bench_mpi_allreduce
// (as root, with OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1).
#include <benchmark/benchmark.h>
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <vector>

#include <xdev/multi_worker.hpp>
#include <xdev/xdev.hpp>

#include "communicator.hpp"

namespace {

xdev::MultiWorkerMirroredStrategy* g_strategy = nullptr;
xdev::mpi::Communicator* g_transport = nullptr;

int64_t iterations_for(int64_t bytes) {
  return std::clamp<int64_t>((int64_t(1) << 30) / bytes, 4, 2000);
}

void BM_MpiAllreduce(benchmark::State& state) {
  std::vector<float> buffer(static_cast<size_t>(state.range(0) / 4), 1.f);
  for (auto _ : state) {
    MPI_Allreduce(MPI_IN_PLACE, buffer.data(), static_cast<int>(buffer.size()), MPI_FLOAT, MPI_SUM,
                  MPI_COMM_WORLD);
    std::fill_n(buffer.data(), 1, 1.f);
  }
  state.SetBytesProcessed(state.iterations() * state.range(0));
}

void BM_Transport(benchmark::State& state) {
  std::vector<float> buffer(static_cast<size_t>(state.range(0) / 4), 1.f);
  xdev::mpi::CallInfo call;
  call.kind = xdev::mpi::Collective::kAllReduce;
  call.shape = xdev::Shape{static_cast<int64_t>(buffer.size())};
  call.name = "bench";
  for (auto _ : state) {
    g_transport->all_reduce(buffer.data(), buffer.data(), state.range(0), xdev::DType::kFloat32,
                            xdev::ReduceOp::kSum, call);
  }
  state.SetBytesProcessed(state.iterations() * state.range(0));
}

void BM_Strategy(benchmark::State& state) {
  xdev::Tensor value;
  {
    xdev::DeviceScope scope("/CPU:0");
    value = xdev::fill({state.range(0) / 4}, 1.0);
  }
  for (auto _ : state) {
    auto out = g_strategy->all_reduce(xdev::ReduceOp::kSum, {value}, "bench");
    benchmark::DoNotOptimize(out.data());
  }
  state.SetBytesProcessed(state.iterations() * state.range(0));
}


}  // namespace

int main(int argc, char** argv) {
  // The strategy starts MPI as it does for users (its settings included); it
  // is finalized at exit.
  xdev::MultiWorkerMirroredStrategy strategy({"/CPU:0"});
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank != 0) std::freopen("/dev/null", "w", stdout);
  {
    xdev::mpi::Communicator transport(MPI_COMM_WORLD, rank, xdev::mpi::Settings::from_environment());
    g_strategy = &strategy;
    g_transport = &transport;
    for (int64_t bytes = 1024; bytes <= (int64_t(256) << 20); bytes *= 4) {
      // Interleaved per size, so that a noisy neighbour hits all three alike.
      benchmark::RegisterBenchmark("MpiAllreduce", BM_MpiAllreduce)
          ->Arg(bytes)->Iterations(iterations_for(bytes))->UseRealTime();
      benchmark::RegisterBenchmark("Transport", BM_Transport)
          ->Arg(bytes)->Iterations(iterations_for(bytes))->UseRealTime();
      benchmark::RegisterBenchmark("Strategy", BM_Strategy)
          ->Arg(bytes)->Iterations(iterations_for(bytes))->UseRealTime();
    }
    benchmark::Initialize(&argc, argv);
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
  }
  return 0;
}
