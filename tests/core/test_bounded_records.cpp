// Nothing per-process grows with the number of ops. Inside a scope on a device
// that does not exist, with soft placement on, every op is decided afresh;
// each decision used to be kept forever (+73 MB per 200 k ops). Now decisions
// are interned and the records are rings: 1 M such ops grow the resident set
// by less than 1 MiB (read from /proc/self/statm). Only the cpu plugin is
// loaded: its streams run work at enqueue time, so no queue of pending work
// (the sim's worker threads lag behind a tight loop) is measured instead of
// the records; every 1024 ops a read-back keeps any device honest all the
// same. Under AddressSanitizer, where each op costs about 40 times as much
// and the live heap is measured to the byte (below), a quarter of the ops runs
// against a quarter of the bound: the same bytes per op.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdint>
#include <fstream>

#include <xdev/xdev.hpp>

#include "sanitizers.hpp"

#if defined(XDEV_TEST_ASAN)
// The sanitizer runtime's allocator statistics (GCC ships no header for them).
extern "C" size_t __sanitizer_get_current_allocated_bytes();
#endif

namespace {

// Ops per measured loop, and the growth they may cause: 1 byte per op.
#if defined(XDEV_TEST_ASAN)
constexpr int64_t kScale = 4;
#else
constexpr int64_t kScale = 1;
#endif

// The memory the process holds. Under AddressSanitizer the resident set also
// holds its quarantine of freed blocks (hundreds of MiB that grow with every
// free), so there the bytes of live heap blocks are measured instead: what
// unbounded records would grow just the same.
int64_t resident_bytes() {
#if defined(XDEV_TEST_ASAN)
  return static_cast<int64_t>(__sanitizer_get_current_allocated_bytes());
#else
  std::ifstream statm("/proc/self/statm");
  int64_t size = 0, resident = 0;
  statm >> size >> resident;
  return resident * sysconf(_SC_PAGESIZE);
#endif
}

void run_ops(const xdev::Tensor& x, int64_t count) {
  for (int64_t i = 0; i < count; ++i) {
    xdev::Tensor y = xdev::add(x, x);
    if (i % 1024 == 0) (void)y.to_vector<float>();
  }
}

TEST(BoundedRecords, MillionSoftPlacedOpsGrowRssByUnderOneMiB) {
  xdev::set_soft_device_placement(true);
  xdev::DeviceScope scope("/GPU:7");  // there is no GPU: soft-placed on CPU:0
  xdev::Tensor x = xdev::constant({1.f});
  run_ops(x, 20'000);  // warm up: pools, caches, first-time warnings
  const int64_t before = resident_bytes();
  const int64_t ops = 1'000'000 / kScale;
  run_ops(x, ops);
  const int64_t grown = resident_bytes() - before;
  EXPECT_LT(grown, (int64_t{1} << 20) / kScale)
      << "the process grew by " << grown << " bytes over " << ops << " ops";
  // The records stay usable and bounded.
  auto recent = xdev::recent_placements();
  EXPECT_LE(recent.size(), 64u);
  ASSERT_FALSE(recent.empty());
  EXPECT_EQ(recent.back().rule, "soft placement");
  EXPECT_EQ(xdev::placement_counters().implicit_copies_by_pair.size(), 0u);
}

// Toggling soft placement (which invalidates every cached decision) does not
// add records either.
TEST(BoundedRecords, RedecidingAfterEveryToggleDoesNotGrow) {
  xdev::Tensor x = xdev::constant({1.f});
  auto toggle_and_run = [&](int64_t n) {
    for (int64_t i = 0; i < n; ++i) {
      xdev::set_soft_device_placement(i % 2 == 0);
      xdev::Tensor y = xdev::add(x, x);
    }
  };
  toggle_and_run(10'000);
  const int64_t before = resident_bytes();
  toggle_and_run(200'000 / kScale);
  (void)x.to_vector<float>();
  EXPECT_LT(resident_bytes() - before, (int64_t{1} << 20) / kScale);
  xdev::set_soft_device_placement(true);
}

}  // namespace
