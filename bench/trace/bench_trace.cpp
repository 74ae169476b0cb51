// The cost of tracing (core/trace, docs/performance.md "Tracing"):
//
//   Add/off      xdev::add of two 1-element float32 tensors on the CPU with
//                tracing off: the baseline, which pays one predicted branch
//                per op, copy and allocation
//   Add/on       the same op while a trace is being written (to /dev/null):
//                the difference is the per-op cost of tracing (an op, a
//                placement decision, an allocation and a free event)
//   Event/instant  one trace::instant event alone, while on
//
// The bound: <= 1 us per op when on.
#include <benchmark/benchmark.h>

#include <xdev/xdev.hpp>

#include "trace/trace.hpp"

namespace {

void BM_AddTracingOff(benchmark::State& state) {
  xdev::DeviceScope cpu("/CPU:0");
  auto a = xdev::constant({1.f});
  auto b = xdev::constant({2.f});
  for (auto _ : state) benchmark::DoNotOptimize(xdev::add(a, b));
}
BENCHMARK(BM_AddTracingOff)->Name("Add/off");

void BM_AddTracingOn(benchmark::State& state) {
  xdev::DeviceScope cpu("/CPU:0");
  auto a = xdev::constant({1.f});
  auto b = xdev::constant({2.f});
  xdev::trace::start("/dev/null");
  for (auto _ : state) benchmark::DoNotOptimize(xdev::add(a, b));
  xdev::trace::stop();
}
BENCHMARK(BM_AddTracingOn)->Name("Add/on");

void BM_InstantEvent(benchmark::State& state) {
  xdev::trace::start("/dev/null");
  xdev::detail::trace::Args args;
  args.str("op", "Add").num("bytes", uint64_t{4});
  for (auto _ : state) {
    xdev::detail::trace::instant(xdev::detail::trace::host_track(), "bench", "event", args);
  }
  xdev::trace::stop();
}
BENCHMARK(BM_InstantEvent)->Name("Event/instant");

}  // namespace

BENCHMARK_MAIN();
