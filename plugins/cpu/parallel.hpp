// xdev::cpu::parallel_for: every parallel loop of the plugin goes through
// here. It is tbb::parallel_for, except in a ThreadSanitizer build.
//
// Debian's oneTBB is not built with TSan, so TSan cannot see how its
// scheduler hands tasks to workers and joins them; it reports oneTBB's own
// task objects and every kernel's output as races (tools/quickstart tsan,
// docs/robustness.md). In a TSan build the loop therefore runs on plain
// threads TSan does see: the range is split with its own splitting
// constructor (at most kTsanPieces pieces, never below its grain) and each
// piece runs on a std::thread, so the bodies still run concurrently and a
// race between them, or with the caller, is reported.
#pragma once

#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/parallel_for.h>

#include <utility>

#if defined(__SANITIZE_THREAD__)
#define XDEV_CPU_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define XDEV_CPU_TSAN 1
#endif
#endif

#ifdef XDEV_CPU_TSAN
#include <cstddef>
#include <exception>
#include <thread>
#include <vector>
#endif

namespace xdev::cpu {

#ifdef XDEV_CPU_TSAN
inline constexpr std::size_t kTsanPieces = 4;
#endif

// tbb::parallel_for(range, body, partitioner...). Call it qualified,
// cpu::parallel_for: unqualified, argument-dependent lookup would also find
// tbb's overloads, which win for a partitioner argument.
template <typename Range, typename Body, typename... Partitioner>
void parallel_for(const Range& range, const Body& body, Partitioner&&... partitioner) {
#ifdef XDEV_CPU_TSAN
  std::vector<Range> pieces{range};
  for (bool split = true; split && pieces.size() < kTsanPieces;) {
    split = false;
    for (std::size_t i = 0, n = pieces.size(); i < n && pieces.size() < kTsanPieces; ++i) {
      if (pieces[i].is_divisible()) {
        pieces.emplace_back(pieces[i], tbb::split{});
        split = true;
      }
    }
  }
  std::vector<std::exception_ptr> errors(pieces.size());
  auto run = [&](std::size_t i) {
    try {
      body(static_cast<const Range&>(pieces[i]));
    } catch (...) {
      errors[i] = std::current_exception();
    }
  };
  std::vector<std::thread> threads;
  for (std::size_t i = 1; i < pieces.size(); ++i) threads.emplace_back(run, i);
  run(0);
  for (std::thread& t : threads) t.join();
  for (const std::exception_ptr& e : errors) {
    if (e) std::rethrow_exception(e);
  }
  ((void)partitioner, ...);
#else
  tbb::parallel_for(range, body, std::forward<Partitioner>(partitioner)...);
#endif
}

}  // namespace xdev::cpu
