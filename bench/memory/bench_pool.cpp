// Tensor-sized allocate+free pairs (64 B, 1 MiB): xdev's BfcPool against glibc
// malloc/free and oneTBB's scalable_malloc/scalable_free, in the same binary
// and the same run, on 1 and 2 threads.
//
//   build/bench/memory/bench_pool --benchmark_min_time=0.2
//
// The pool sits on a raw allocator that hands out fabricated addresses: the
// pool never touches the memory it manages, so nothing is lost by that.
#include <benchmark/benchmark.h>

#include <oneapi/tbb/scalable_allocator.h>

#include <cstdint>
#include <cstdlib>
#include <mutex>

#include "memory/bfc_pool.hpp"
#include "memory/raw_allocator.hpp"

namespace {

using xdev::detail::BfcPool;
using xdev::detail::PoolOptions;

// Bump allocator over a made-up address range (never dereferenced).
class FabricatedRaw final : public xdev::detail::RawAllocator {
 public:
  FabricatedRaw() : RawAllocator("BENCH:0") {}
  void* allocate(uint64_t size, uint64_t alignment) override {
    std::lock_guard lock(mu_);
    next_ = (next_ + alignment - 1) & ~(alignment - 1);
    const uint64_t p = next_;
    next_ += size;
    return reinterpret_cast<void*>(p);
  }
  void deallocate(void*) noexcept override {}

 private:
  std::mutex mu_;
  uint64_t next_ = uint64_t{1} << 44;
};

BfcPool& pool(bool thread_cache) {
  static FabricatedRaw raw;
  static BfcPool cached(raw, PoolOptions{uint64_t{1} << 30, true, 0, 256, true});
  static BfcPool locked(raw, PoolOptions{uint64_t{1} << 30, true, 0, 256, false});
  return thread_cache ? cached : locked;
}

void BM_Pool(benchmark::State& state) {
  BfcPool& p = pool(true);
  const uint64_t n = static_cast<uint64_t>(state.range(0));
  for (auto _ : state) {
    void* ptr = p.allocate(n);
    benchmark::DoNotOptimize(ptr);
    p.deallocate(ptr);
  }
}

// The same pool without thread caches: every call takes the pool's lock.
void BM_PoolLockedOnly(benchmark::State& state) {
  BfcPool& p = pool(false);
  const uint64_t n = static_cast<uint64_t>(state.range(0));
  for (auto _ : state) {
    void* ptr = p.allocate(n);
    benchmark::DoNotOptimize(ptr);
    p.deallocate(ptr);
  }
}

void BM_Malloc(benchmark::State& state) {
  const size_t n = static_cast<size_t>(state.range(0));
  for (auto _ : state) {
    void* ptr = std::malloc(n);
    benchmark::DoNotOptimize(ptr);
    std::free(ptr);
  }
}

void BM_TbbScalableMalloc(benchmark::State& state) {
  const size_t n = static_cast<size_t>(state.range(0));
  for (auto _ : state) {
    void* ptr = scalable_malloc(n);
    benchmark::DoNotOptimize(ptr);
    scalable_free(ptr);
  }
}

void sizes_and_threads(benchmark::internal::Benchmark* b) {
  b->ArgName("bytes")->Arg(64)->Arg(1 << 20)->Threads(1)->Threads(2);
}

BENCHMARK(BM_Pool)->Apply(sizes_and_threads);
BENCHMARK(BM_Malloc)->Apply(sizes_and_threads);
BENCHMARK(BM_TbbScalableMalloc)->Apply(sizes_and_threads);
BENCHMARK(BM_PoolLockedOnly)->Apply(sizes_and_threads);

}  // namespace

BENCHMARK_MAIN();
