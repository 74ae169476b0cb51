// BfcPool: placement (best fit, split, coalesce, alignment), policies (growth,
// reserve up front, limit, release and retry), exact stats, out-of-memory
// messages, thread caches and a randomized multi-threaded stress test.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <barrier>
#include <condition_variable>
#include <cstdio>
#include <cstdint>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <xdev/error.hpp>

#include "error_matchers.hpp"
#include "fake_raw_allocator.hpp"
#include "common/log.hpp"
#include "memory/bfc_pool.hpp"

namespace xdev::detail {
namespace {

using xdev::testing::FakeRawAllocator;

constexpr uint64_t KiB = 1024;
constexpr uint64_t MiB = 1024 * KiB;

uint64_t addr(void* p) { return reinterpret_cast<uintptr_t>(p); }

PoolOptions up_front(uint64_t limit, bool thread_cache = false) {
  PoolOptions o;
  o.limit_bytes = limit;
  o.allow_growth = false;
  o.thread_cache = thread_cache;
  return o;
}

PoolOptions growth(uint64_t limit, uint64_t initial, bool thread_cache = false) {
  PoolOptions o;
  o.limit_bytes = limit;
  o.allow_growth = true;
  o.initial_bytes = initial;
  o.thread_cache = thread_cache;
  return o;
}

void expect_same(const PoolStats& a, const PoolStats& b) {
  EXPECT_EQ(a.bytes_in_use, b.bytes_in_use);
  EXPECT_EQ(a.peak_bytes_in_use, b.peak_bytes_in_use);
  EXPECT_EQ(a.num_allocations, b.num_allocations);
  EXPECT_EQ(a.total_allocations, b.total_allocations);
  EXPECT_EQ(a.bytes_reserved, b.bytes_reserved);
  EXPECT_EQ(a.largest_free_block, b.largest_free_block);
  EXPECT_EQ(a.limit_bytes, b.limit_bytes);
}

// Runs `fn` expecting Error(kOutOfMemory); returns its message.
template <typename Fn>
std::string oom_message(Fn&& fn) {
  try {
    fn();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kOutOfMemory) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "no out-of-memory error";
  return {};
}

// Most behaviour must hold with and without thread caches.
class PoolModes : public ::testing::TestWithParam<bool> {
 protected:
  bool cache() const { return GetParam(); }
};
INSTANTIATE_TEST_SUITE_P(Memory, PoolModes, ::testing::Values(false, true),
                         [](const auto& info) { return info.param ? "ThreadCache" : "LockedOnly"; });

// ---- basics -------------------------------------------------------------------

TEST_P(PoolModes, ZeroBytesAndNull) {
  FakeRawAllocator raw;
  BfcPool pool(raw, growth(16 * MiB, 0, cache()));
  EXPECT_EQ(pool.allocate(0), nullptr);
  pool.deallocate(nullptr);
  EXPECT_EQ(pool.allocation_size(nullptr), 0u);
  const PoolStats s = pool.stats();
  EXPECT_EQ(s.total_allocations, 0u);
  EXPECT_EQ(s.bytes_reserved, 0u);
  EXPECT_EQ(raw.allocate_calls(), 0u);
  EXPECT_EQ(pool.thread_cache_enabled(), cache());
  EXPECT_EQ(pool.device_name(), "FAKE:0");
}

TEST(BfcPool, RejectsAlignmentThatIsNotAPowerOfTwo) {
  FakeRawAllocator raw;
  PoolOptions o = growth(MiB, 0);
  o.alignment = 384;
  try {
    BfcPool pool(raw, o);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("384"), std::string::npos) << e.what();
  }
}

TEST(BfcPool, SplitsAndPlacesConsecutively) {
  FakeRawAllocator raw;
  BfcPool pool(raw, up_front(MiB));
  void* a = pool.allocate(1000);
  void* b = pool.allocate(1);
  void* c = pool.allocate(3000);
  EXPECT_EQ(pool.allocation_size(a), 1024u);
  EXPECT_EQ(pool.allocation_size(b), 256u);
  EXPECT_EQ(pool.allocation_size(c), 3072u);
  EXPECT_EQ(addr(b), addr(a) + 1024);
  EXPECT_EQ(addr(c), addr(b) + 256);
  EXPECT_EQ(pool.stats().largest_free_block, MiB - 1024 - 256 - 3072);
  EXPECT_EQ(raw.requested_sizes(), std::vector<uint64_t>{MiB});
  pool.deallocate(a);
  pool.deallocate(b);
  pool.deallocate(c);
}

TEST(BfcPool, BestFitSmallestHoleLowestAddressFirst) {
  FakeRawAllocator raw;
  BfcPool pool(raw, up_front(MiB));
  // Holes of 4 KiB, 1 KiB, 2 KiB, 1 KiB separated by 256-byte separators,
  // then the large free tail.
  const uint64_t sizes[] = {4 * KiB, 1 * KiB, 2 * KiB, 1 * KiB};
  void* holes[4];
  void* separators[4];
  for (int i = 0; i < 4; ++i) {
    holes[i] = pool.allocate(sizes[i]);
    separators[i] = pool.allocate(256);
  }
  for (void* h : holes) pool.deallocate(h);

  EXPECT_EQ(pool.allocate(1 * KiB), holes[1]);      // exact fit, lowest address
  EXPECT_EQ(pool.allocate(1 * KiB), holes[3]);      // the other exact fit
  void* x = pool.allocate(1536);                    // 2 KiB hole, not 4 KiB or the tail
  EXPECT_EQ(x, holes[2]);
  void* y = pool.allocate(3 * KiB);                 // 4 KiB hole
  EXPECT_EQ(y, holes[0]);
  void* z = pool.allocate(600);                     // 768: the 1 KiB left of the 4 KiB hole
  EXPECT_EQ(addr(z), addr(holes[0]) + 3 * KiB);
  void* w = pool.allocate(512);                     // 512: what is left of the 2 KiB hole
  EXPECT_EQ(addr(w), addr(holes[2]) + 1536);
  for (void* s : separators) pool.deallocate(s);
}

TEST(BfcPool, CoalescesWithBothNeighbours) {
  FakeRawAllocator raw;
  BfcPool pool(raw, up_front(MiB));
  void* a = pool.allocate(64 * KiB);
  void* b = pool.allocate(64 * KiB);
  void* c = pool.allocate(64 * KiB);
  void* d = pool.allocate(64 * KiB);
  pool.deallocate(a);
  pool.deallocate(c);
  EXPECT_EQ(pool.stats().largest_free_block, MiB - 256 * KiB);
  pool.deallocate(b);  // a+b+c become one block of 192 KiB
  void* e = pool.allocate(192 * KiB);  // best fit: the merged block, not the tail
  EXPECT_EQ(e, a);
  pool.deallocate(e);
  pool.deallocate(d);  // merges with the 192 KiB before it and the tail after it
  EXPECT_EQ(pool.stats().largest_free_block, MiB);
  EXPECT_EQ(pool.release_free_regions(), MiB);
  EXPECT_EQ(raw.outstanding(), 0u);
  EXPECT_EQ(pool.stats().bytes_reserved, 0u);
}

TEST_P(PoolModes, AlignmentLargerThanTheRawAllocatorGives) {
  FakeRawAllocator raw;
  raw.set_max_alignment(256);
  raw.set_misalign(256);  // 256-aligned, never more than that by design
  PoolOptions o = growth(64 * MiB, 0, cache());
  o.alignment = 4096;
  BfcPool pool(raw, o);
  std::vector<void*> ptrs;
  for (uint64_t n : {1ull, 100ull, 4096ull, 4097ull, 5000ull, 123457ull}) {
    void* p = pool.allocate(n);
    EXPECT_EQ(addr(p) % 4096, 0u) << n;
    EXPECT_EQ(pool.allocation_size(p), (n + 4095) / 4096 * 4096) << n;
    EXPECT_TRUE(raw.owns(addr(p), pool.allocation_size(p)));
    ptrs.push_back(p);
  }
  for (void* p : ptrs) pool.deallocate(p);
}

TEST(BfcPool, SmallAlignmentStillUses256ByteGranules) {
  FakeRawAllocator raw;
  PoolOptions o = growth(MiB, 0);
  o.alignment = 64;
  BfcPool pool(raw, o);
  void* a = pool.allocate(65);
  void* b = pool.allocate(300);
  EXPECT_EQ(pool.allocation_size(a), 256u);
  EXPECT_EQ(pool.allocation_size(b), 512u);
  EXPECT_EQ(addr(b) - addr(a), 256u);
  pool.deallocate(a);
  pool.deallocate(b);
}

TEST(BfcPool, MisalignedRawMemoryIsAnInternalError) {
  FakeRawAllocator raw;
  raw.set_max_alignment(64);
  raw.set_misalign(64);
  BfcPool pool(raw, growth(MiB, 0));
  EXPECT_THAT([&] { pool.allocate(10); },
              xdev_test::ThrowsError(ErrorCode::kInternal, ::testing::HasSubstr("not aligned")));
  EXPECT_EQ(raw.outstanding(), 0u);
  EXPECT_EQ(pool.stats().bytes_reserved, 0u);
}

// ---- policies -------------------------------------------------------------------

TEST_P(PoolModes, GrowsInDoublingChunksUpToTheLimitAndNeverReturnsMemory) {
  FakeRawAllocator raw;
  BfcPool pool(raw, growth(16 * MiB, MiB, cache()));
  std::vector<void*> ptrs;
  for (int i = 0; i < 19; ++i) {
    ptrs.push_back(pool.allocate(768 * KiB));
    EXPECT_LE(pool.stats().bytes_reserved, 16 * MiB);
  }
  // 1, 2, 4, 8 MiB, then what is left of the limit.
  EXPECT_EQ(raw.requested_sizes(), (std::vector<uint64_t>{MiB, 2 * MiB, 4 * MiB, 8 * MiB, MiB}));
  EXPECT_EQ(raw.deallocate_calls(), 0u);
  const PoolStats s = pool.stats();
  EXPECT_EQ(s.bytes_reserved, 16 * MiB);
  EXPECT_EQ(s.bytes_in_use, 19 * 768 * KiB);
  EXPECT_EQ(s.largest_free_block, 512 * KiB);
  const std::string message = oom_message([&] { pool.allocate(768 * KiB); });
  EXPECT_NE(message.find("limit 16777216 bytes"), std::string::npos) << message;
  EXPECT_EQ(raw.deallocate_calls(), 0u);
  EXPECT_EQ(raw.peak_outstanding(), 16 * MiB);
  for (void* p : ptrs) pool.deallocate(p);
  EXPECT_EQ(raw.deallocate_calls(), 0u);  // growth mode keeps what it reserved
  EXPECT_EQ(pool.stats().bytes_reserved, 16 * MiB);
}

TEST(BfcPool, GrowthRegionCoversALargeRequest) {
  FakeRawAllocator raw;
  BfcPool pool(raw, growth(64 * MiB, MiB));
  void* p = pool.allocate(5 * MiB);
  EXPECT_EQ(raw.requested_sizes(), std::vector<uint64_t>{8 * MiB});
  pool.deallocate(p);
}

TEST(BfcPool, DefaultInitialRegionIsTwoMiBCappedByTheLimit) {
  FakeRawAllocator raw;
  BfcPool pool(raw, growth(64 * MiB, 0));
  pool.deallocate(pool.allocate(1));
  FakeRawAllocator raw2;
  BfcPool small(raw2, growth(MiB, 0));
  small.deallocate(small.allocate(1));
  EXPECT_EQ(raw.requested_sizes(), std::vector<uint64_t>{2 * MiB});
  EXPECT_EQ(raw2.requested_sizes(), std::vector<uint64_t>{MiB});
}

TEST_P(PoolModes, ReservesTheLimitUpFrontOnFirstUse) {
  FakeRawAllocator raw;
  BfcPool pool(raw, up_front(64 * MiB, cache()));
  EXPECT_EQ(raw.allocate_calls(), 0u);
  std::vector<void*> ptrs;
  ptrs.push_back(pool.allocate(1));
  EXPECT_EQ(raw.requested_sizes(), std::vector<uint64_t>{64 * MiB});
  ptrs.push_back(pool.allocate(32 * MiB));
  ptrs.push_back(pool.allocate(31 * MiB));
  EXPECT_EQ(raw.allocate_calls(), 1u);
  EXPECT_EQ(pool.stats().bytes_reserved, 64 * MiB);
  for (void* p : ptrs) pool.deallocate(p);
}

TEST(BfcPool, ReservesAsMuchAsTheDeviceGivesUpFront) {
  FakeRawAllocator raw(48 * MiB);
  BfcPool pool(raw, up_front(64 * MiB));
  void* p = pool.allocate(1);
  // 64 MiB, then 90% steps: 57.6, 51.8 fail; 46.7 MiB fits.
  EXPECT_EQ(raw.failed_calls(), 3u);
  const uint64_t reserved = pool.stats().bytes_reserved;
  EXPECT_LE(reserved, 48 * MiB);
  EXPECT_GT(reserved, 46 * MiB);
  EXPECT_EQ(reserved % 256, 0u);
  pool.deallocate(p);
}

// ---- stats --------------------------------------------------------------------------

TEST_P(PoolModes, StatsAreExact) {
  FakeRawAllocator raw;
  BfcPool pool(raw, growth(16 * MiB, 0, cache()));
  void* a = pool.allocate(1000);   // 1024
  void* b = pool.allocate(5000);   // 5120
  void* c = pool.allocate(MiB);
  PoolStats s = pool.stats();
  EXPECT_EQ(s.bytes_in_use, 1024u + 5120u + MiB);
  EXPECT_EQ(s.peak_bytes_in_use, 1024u + 5120u + MiB);
  EXPECT_EQ(s.num_allocations, 3u);
  EXPECT_EQ(s.total_allocations, 3u);
  EXPECT_EQ(s.bytes_reserved, 2 * MiB);
  EXPECT_EQ(s.largest_free_block, 2 * MiB - (1024u + 5120u + MiB));
  EXPECT_EQ(s.limit_bytes, 16 * MiB);

  pool.deallocate(b);
  s = pool.stats();
  EXPECT_EQ(s.bytes_in_use, 1024u + MiB);
  EXPECT_EQ(s.peak_bytes_in_use, 1024u + 5120u + MiB);
  EXPECT_EQ(s.num_allocations, 2u);
  EXPECT_EQ(s.total_allocations, 3u);
  EXPECT_EQ(s.largest_free_block, 2 * MiB - (1024u + 5120u + MiB));  // the tail; b is a hole

  pool.reset_peak();
  EXPECT_EQ(pool.stats().peak_bytes_in_use, 1024u + MiB);
  void* d = pool.allocate(2048);
  s = pool.stats();
  EXPECT_EQ(s.peak_bytes_in_use, 1024u + MiB + 2048u);
  EXPECT_EQ(s.total_allocations, 4u);
  pool.deallocate(d);
  pool.deallocate(a);
  pool.deallocate(c);
  s = pool.stats();
  EXPECT_EQ(s.bytes_in_use, 0u);
  EXPECT_EQ(s.num_allocations, 0u);
  EXPECT_EQ(s.peak_bytes_in_use, 1024u + MiB + 2048u);
  EXPECT_EQ(s.largest_free_block, 2 * MiB);
  pool.reset_peak();
  EXPECT_EQ(pool.stats().peak_bytes_in_use, 0u);
}

TEST_P(PoolModes, PeakCountsReuseOnce) {
  FakeRawAllocator raw;
  BfcPool pool(raw, growth(64 * MiB, 0, cache()));
  for (int i = 0; i < 100; ++i) pool.deallocate(pool.allocate(MiB));
  EXPECT_EQ(pool.stats().peak_bytes_in_use, MiB);
  void* a = pool.allocate(MiB);
  void* b = pool.allocate(MiB);
  EXPECT_EQ(pool.stats().peak_bytes_in_use, 2 * MiB);
  pool.deallocate(a);
  pool.deallocate(b);
  for (int i = 0; i < 100; ++i) pool.deallocate(pool.allocate(64));
  const PoolStats s = pool.stats();
  EXPECT_EQ(s.peak_bytes_in_use, 2 * MiB);
  EXPECT_EQ(s.total_allocations, 202u);
  EXPECT_EQ(s.num_allocations, 0u);
}

// ---- out of memory ------------------------------------------------------------------

TEST_P(PoolModes, OutOfMemoryNamesEverythingAndChangesNothing) {
  FakeRawAllocator raw(uint64_t{1} << 40, "/job:localhost/replica:0/task:0/device:GPU:1");
  BfcPool pool(raw, up_front(8 * MiB, cache()));
  void* a = pool.allocate(4 * MiB);
  void* b = pool.allocate(2 * MiB);
  const PoolStats before = pool.stats();
  const std::string message = oom_message([&] { pool.allocate(3 * MiB); });
  for (const char* part : {"/job:localhost/replica:0/task:0/device:GPU:1", "cannot allocate 3145728 bytes (3.00 MiB)",
                           "in use 6291456 bytes (6.00 MiB) in 2 allocations", "limit 8388608 bytes (8.00 MiB)",
                           "reserved 8388608 bytes", "largest free block 2097152 bytes (2.00 MiB)"}) {
    EXPECT_NE(message.find(part), std::string::npos) << "missing '" << part << "' in: " << message;
  }
  expect_same(before, pool.stats());
  EXPECT_EQ(raw.allocate_calls(), 1u);

  // Rounding is shown; a request above the limit fails the same way.
  const std::string rounded = oom_message([&] { pool.allocate(3000000); });
  EXPECT_NE(rounded.find("cannot allocate 3000000 bytes (2.86 MiB) (rounded to 3000064)"), std::string::npos)
      << rounded;
  const std::string huge = oom_message([&] { pool.allocate(uint64_t{1} << 62); });
  EXPECT_NE(huge.find("cannot allocate 4611686018427387904 bytes"), std::string::npos) << huge;
  EXPECT_THROW(pool.allocate(~uint64_t{0}), Error);
  expect_same(before, pool.stats());

  // The pool still works.
  void* c = pool.allocate(2 * MiB);
  pool.deallocate(a);
  pool.deallocate(b);
  pool.deallocate(c);
}

TEST(BfcPool, ZeroLimitFailsEveryRequest) {
  FakeRawAllocator raw;
  BfcPool pool(raw, growth(0, 0));
  const std::string message = oom_message([&] { pool.allocate(1); });
  EXPECT_NE(message.find("limit 0 bytes"), std::string::npos) << message;
  EXPECT_EQ(raw.allocate_calls(), 0u);
}

TEST(BfcPool, RawAllocatorErrorsPropagateAndChangeNothing) {
  FakeRawAllocator raw;
  BfcPool pool(raw, growth(16 * MiB, 0));
  raw.throw_on_next_allocate();
  try {
    pool.allocate(100);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kUnavailable);
  }
  const PoolStats s = pool.stats();
  EXPECT_EQ(s.bytes_reserved, 0u);
  EXPECT_EQ(s.total_allocations, 0u);
  pool.deallocate(pool.allocate(100));
}

TEST(BfcPool, ReleasesFreeRegionsAndRetriesOnceOnOutOfMemory) {
  FakeRawAllocator raw(8 * MiB);  // the device is smaller than the limit
  BfcPool pool(raw, growth(16 * MiB, 2 * MiB));
  void* a = pool.allocate(MiB + MiB / 2);  // region of 2 MiB
  void* b = pool.allocate(3 * MiB);        // region of 4 MiB
  pool.deallocate(a);
  pool.deallocate(b);
  EXPECT_EQ(raw.outstanding(), 6 * MiB);
  void* c = pool.allocate(7 * MiB);
  // 8 MiB, 7.2 MiB and 7 MiB fail while 6 MiB are held; both free regions go
  // back; 8 MiB then fits.
  EXPECT_EQ(raw.requested_sizes(),
            (std::vector<uint64_t>{2 * MiB, 4 * MiB, 8 * MiB, 7549696, 7 * MiB, 8 * MiB}));
  EXPECT_EQ(raw.deallocate_calls(), 2u);
  EXPECT_EQ(raw.live_sizes(), std::vector<uint64_t>{8 * MiB});
  const PoolStats s = pool.stats();
  EXPECT_EQ(s.bytes_reserved, 8 * MiB);
  EXPECT_EQ(s.bytes_in_use, 7 * MiB);
  pool.deallocate(c);
}

// Queued device work may still use a free block: regions go back to the
// device only after the raw allocator waited for it.
TEST(BfcPool, WaitsForTheDeviceBeforeGivingRegionsBack) {
  FakeRawAllocator raw(8 * MiB);
  BfcPool pool(raw, growth(16 * MiB, 2 * MiB));
  pool.deallocate(pool.allocate(MiB + MiB / 2));
  pool.deallocate(pool.allocate(3 * MiB));
  void* c = pool.allocate(7 * MiB);
  EXPECT_EQ(raw.calls(), "wff");  // one wait, then both regions
  EXPECT_EQ(raw.wait_calls(), 1u);
  pool.deallocate(c);
  EXPECT_EQ(pool.release_free_regions(), 8 * MiB);
  EXPECT_EQ(raw.calls(), "wffwf");
  EXPECT_EQ(pool.release_free_regions(), 0u);  // nothing free: no wait
  EXPECT_EQ(raw.wait_calls(), 2u);
}

TEST(BfcPool, KeepsItsRegionsWhenTheDeviceCannotBeWaitedFor) {
  FakeRawAllocator raw(8 * MiB);
  BfcPool pool(raw, growth(16 * MiB, 2 * MiB));
  pool.deallocate(pool.allocate(MiB + MiB / 2));
  pool.deallocate(pool.allocate(3 * MiB));
  raw.set_wait_result(false);
  const PoolStats before = pool.stats();
  oom_message([&] { pool.allocate(7 * MiB); });
  EXPECT_EQ(raw.calls(), "w");
  EXPECT_EQ(raw.deallocate_calls(), 0u);
  EXPECT_EQ(pool.stats().bytes_reserved, before.bytes_reserved);
  EXPECT_EQ(pool.release_free_regions(), 0u);
  raw.set_wait_result(true);
  EXPECT_EQ(pool.release_free_regions(), 6 * MiB);
}

TEST(BfcPool, RetriesOnlyOnceThenFails) {
  FakeRawAllocator raw(8 * MiB);
  BfcPool pool(raw, growth(16 * MiB, 2 * MiB));
  void* a = pool.allocate(MiB + MiB / 2);  // stays: its region cannot go back
  void* b = pool.allocate(3 * MiB);
  pool.deallocate(b);
  const std::string message = oom_message([&] { pool.allocate(7 * MiB); });
  // First try: 8, 7.2, 7 MiB. Then the free 4 MiB region goes back and the
  // retry tries 8, 7.2, 7 MiB once more.
  EXPECT_EQ(raw.requested_sizes(), (std::vector<uint64_t>{2 * MiB, 4 * MiB, 8 * MiB, 7549696, 7 * MiB, 8 * MiB,
                                                           7549696, 7 * MiB}));
  EXPECT_EQ(raw.deallocate_calls(), 1u);
  EXPECT_NE(message.find("in use 1572864 bytes"), std::string::npos) << message;
  EXPECT_NE(message.find("reserved 2097152 bytes"), std::string::npos) << message;
  EXPECT_NE(message.find("largest free block 524288 bytes"), std::string::npos) << message;
  pool.deallocate(a);
}

TEST(BfcPool, DoesNotReleaseWhenThatCannotHelp) {
  FakeRawAllocator raw;
  BfcPool pool(raw, growth(8 * MiB, 2 * MiB));
  void* a = pool.allocate(MiB);     // region 2 MiB
  void* b = pool.allocate(3 * MiB); // region 4 MiB
  pool.deallocate(b);               // 4 MiB region free, 2 MiB left under the limit
  const PoolStats before = pool.stats();
  oom_message([&] { pool.allocate(7 * MiB); });  // 2 + 4 < 7: releasing cannot help
  expect_same(before, pool.stats());
  EXPECT_EQ(raw.deallocate_calls(), 0u);
  EXPECT_EQ(raw.wait_calls(), 0u);  // and nothing to wait for
  pool.deallocate(a);
}

TEST_P(PoolModes, FragmentationThenCoalescing) {
  FakeRawAllocator raw;
  BfcPool pool(raw, up_front(8 * MiB, cache()));
  std::vector<void*> blocks;
  for (int i = 0; i < 32; ++i) blocks.push_back(pool.allocate(256 * KiB));
  for (int i = 1; i < 32; ++i) EXPECT_EQ(addr(blocks[i]), addr(blocks[i - 1]) + 256 * KiB);
  for (int i = 0; i < 32; i += 2) pool.deallocate(blocks[i]);  // 16 holes of 256 KiB
  EXPECT_EQ(pool.stats().largest_free_block, 256 * KiB);
  const std::string message = oom_message([&] { pool.allocate(512 * KiB); });
  EXPECT_NE(message.find("cannot allocate 524288 bytes"), std::string::npos) << message;
  EXPECT_NE(message.find("in use 4194304 bytes (4.00 MiB) in 16 allocations"), std::string::npos) << message;
  EXPECT_NE(message.find("largest free block 262144 bytes (256.00 KiB)"), std::string::npos) << message;
  for (int i = 31; i > 0; i -= 2) pool.deallocate(blocks[i]);
  void* all = pool.allocate(8 * MiB);  // every hole coalesced
  EXPECT_EQ(all, blocks[0]);
  pool.deallocate(all);
}

// ---- bad pointers ------------------------------------------------------------------

TEST_P(PoolModes, UnknownPointersAndDoubleFreesAreInvalidArguments) {
  FakeRawAllocator raw;
  BfcPool pool(raw, growth(16 * MiB, 0, cache()));
  void* a = pool.allocate(512);
  auto expect_invalid = [&](auto&& fn) {
    try {
      fn();
      ADD_FAILURE() << "no error";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
      EXPECT_NE(std::string(e.what()).find("FAKE:0"), std::string::npos) << e.what();
    }
  };
  void* inside = reinterpret_cast<void*>(addr(a) + 256);
  expect_invalid([&] { pool.deallocate(inside); });
  expect_invalid([&] { pool.allocation_size(inside); });
  int on_stack = 0;
  expect_invalid([&] { pool.deallocate(&on_stack); });
  pool.deallocate(a);
  expect_invalid([&] { pool.deallocate(a); });
  expect_invalid([&] { pool.allocation_size(a); });
  const PoolStats s = pool.stats();
  EXPECT_EQ(s.bytes_in_use, 0u);
  EXPECT_EQ(s.num_allocations, 0u);
}

// ---- lifetime -------------------------------------------------------------------------

TEST_P(PoolModes, DestructorReturnsEveryRegion) {
  FakeRawAllocator raw;
  std::vector<std::string> warnings;
  LogSink previous = set_log_sink([&](xdev_log_level_t level, std::string_view m) {
    if (level >= XDEV_LOG_WARNING) warnings.emplace_back(m);
  });
  {
    BfcPool pool(raw, growth(64 * MiB, MiB, cache()));
    pool.allocate(MiB);
    pool.allocate(3 * MiB);
    pool.deallocate(pool.allocate(100));
    EXPECT_GT(raw.outstanding(), 0u);
  }
  set_log_sink(previous);
  EXPECT_EQ(raw.outstanding(), 0u);
  EXPECT_EQ(raw.bad_frees(), 0u);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("2 allocations"), std::string::npos) << warnings[0];
}

// ---- thread caches ----------------------------------------------------------------------

TEST(BfcPoolThreadCache, ExitingThreadGivesItsCacheBack) {
  FakeRawAllocator raw;
  BfcPool pool(raw, growth(64 * MiB, 0, true));
  ASSERT_TRUE(pool.thread_cache_enabled());
  void* kept = nullptr;
  std::thread t([&] {
    for (int i = 0; i < 10; ++i) pool.deallocate(pool.allocate(4096));  // fills its cache
    void* x = pool.allocate(8192);
    pool.deallocate(pool.allocate(100));
    kept = pool.allocate(300);
    pool.deallocate(x);
  });
  t.join();
  PoolStats s = pool.stats();
  EXPECT_EQ(s.bytes_in_use, 512u);
  EXPECT_EQ(s.num_allocations, 1u);
  EXPECT_EQ(s.total_allocations, 13u);
  pool.deallocate(kept);  // freed by another thread than the one that allocated
  s = pool.stats();
  EXPECT_EQ(s.bytes_in_use, 0u);
  EXPECT_EQ(s.num_allocations, 0u);
  EXPECT_EQ(s.largest_free_block, 2 * MiB);
  EXPECT_EQ(pool.release_free_regions(), 2 * MiB);
  EXPECT_EQ(raw.outstanding(), 0u);
}

TEST(BfcPoolThreadCache, PoolDestroyedBeforeAThreadThatUsedIt) {
  FakeRawAllocator raw;
  auto first = std::make_unique<BfcPool>(raw, growth(64 * MiB, 0, true));
  std::mutex mu;
  std::condition_variable cv;
  int step = 0;
  BfcPool* current = first.get();
  std::thread t([&] {
    std::unique_lock lock(mu);
    current->deallocate(current->allocate(1000));  // a cache for the first pool
    step = 1;
    cv.notify_all();
    cv.wait(lock, [&] { return step == 2; });
    current->deallocate(current->allocate(1000));  // a cache for the second pool
    step = 3;
    cv.notify_all();
  });
  {
    std::unique_lock lock(mu);
    cv.wait(lock, [&] { return step == 1; });
  }
  first.reset();  // deletes the thread's cache for it
  BfcPool second(raw, growth(64 * MiB, 0, true));
  {
    std::unique_lock lock(mu);
    current = &second;
    step = 2;
    cv.notify_all();
    cv.wait(lock, [&] { return step == 3; });
  }
  t.join();  // exits: must give back its cache of `second` only
  const PoolStats s = second.stats();
  EXPECT_EQ(s.bytes_in_use, 0u);
  EXPECT_EQ(s.total_allocations, 1u);
  EXPECT_EQ(s.largest_free_block, 2 * MiB);
}

TEST(BfcPoolThreadCache, MoreThan64PoolsStillWork) {
  FakeRawAllocator raw;
  std::vector<std::unique_ptr<BfcPool>> pools;
  int with_cache = 0;
  for (int i = 0; i < 70; ++i) {
    pools.push_back(std::make_unique<BfcPool>(raw, growth(4 * MiB, 256 * KiB, true)));
    with_cache += pools.back()->thread_cache_enabled() ? 1 : 0;
  }
  EXPECT_EQ(with_cache, 64);
  for (auto& pool : pools) {
    void* p = pool->allocate(100);
    pool->deallocate(p);
    pool->deallocate(pool->allocate(100));
    EXPECT_EQ(pool->stats().total_allocations, 2u);
  }
  pools.clear();
  EXPECT_EQ(raw.outstanding(), 0u);
}

TEST(BfcPoolThreadCache, ManyLiveBlocksRebuildThePointerTable) {
  FakeRawAllocator raw;
  BfcPool pool(raw, growth(256 * MiB, 0, true));
  std::vector<void*> ptrs;
  for (int round = 0; round < 3; ++round) {
    for (int i = 0; i < 5000; ++i) ptrs.push_back(pool.allocate(256 + 256 * (i % 7)));
    for (size_t i = 0; i < ptrs.size(); i += 2) pool.deallocate(ptrs[i]);
    std::vector<void*> rest;
    for (size_t i = 1; i < ptrs.size(); i += 2) rest.push_back(ptrs[i]);
    ptrs = rest;
  }
  PoolStats s = pool.stats();
  EXPECT_EQ(s.num_allocations, ptrs.size());
  for (void* p : ptrs) pool.deallocate(p);
  s = pool.stats();
  EXPECT_EQ(s.bytes_in_use, 0u);
  EXPECT_EQ(s.num_allocations, 0u);
  EXPECT_EQ(s.total_allocations, 15000u);
}

// stats(), reset_peak() and release_free_regions() freeze the other threads'
// fast paths while they run; the pointer table is rebuilt under load.
TEST(BfcPoolThreadCache, SnapshotsWhileOtherThreadsAllocate) {
  constexpr int kWorkers = 3;
  constexpr uint64_t kLimit = 64 * MiB;
  FakeRawAllocator raw;
  BfcPool pool(raw, growth(kLimit, MiB, true));
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> allocations{0};
  std::atomic<int> finished{0};
  std::atomic<int> errors{0};
  std::vector<std::thread> workers;
  for (int id = 0; id < kWorkers; ++id) {
    workers.emplace_back([&, id] {
      std::mt19937_64 rng(77 + static_cast<uint64_t>(id));
      std::vector<void*> live;
      for (int op = 0; op < 200000 && !stop.load(std::memory_order_relaxed); ++op) {
        if (live.size() < 400 && rng() % 3 != 0) {
          try {  // at most ~20 MiB live: never out of memory
            live.push_back(pool.allocate(rng() % 8 == 0 ? MiB / 8 : 64 + rng() % 2048));
            allocations.fetch_add(1, std::memory_order_relaxed);
          } catch (const Error&) {
            errors.fetch_add(1);
          }
        } else if (!live.empty()) {
          const size_t i = rng() % live.size();
          pool.deallocate(live[i]);
          live[i] = live.back();
          live.pop_back();
        }
      }
      for (void* p : live) pool.deallocate(p);
      finished.fetch_add(1);
    });
  }
  uint64_t last_peak = 0;
  int snapshots = 0;
  for (int i = 0; i < 300 || (allocations.load() < 60000 && finished.load() < kWorkers); ++i) {
    const PoolStats s = pool.stats();
    EXPECT_LE(s.bytes_in_use, s.bytes_reserved);
    EXPECT_GE(s.peak_bytes_in_use, s.bytes_in_use);
    EXPECT_GE(s.peak_bytes_in_use, last_peak);
    EXPECT_LE(s.bytes_reserved, kLimit);
    EXPECT_LE(s.num_allocations, kWorkers * 400u);
    last_peak = s.peak_bytes_in_use;
    if (i % 50 == 49) {
      pool.reset_peak();
      last_peak = 0;
    }
    if (i % 100 == 99) pool.release_free_regions();
    std::this_thread::yield();
    snapshots = i + 1;
  }
  stop = true;
  std::printf("snapshots: %d while %llu allocations\n", snapshots, static_cast<unsigned long long>(allocations.load()));
  for (auto& t : workers) t.join();
  EXPECT_EQ(errors.load(), 0);
  const PoolStats s = pool.stats();
  EXPECT_EQ(s.bytes_in_use, 0u);
  EXPECT_EQ(s.num_allocations, 0u);
  EXPECT_EQ(s.total_allocations, allocations.load());
  EXPECT_EQ(pool.release_free_regions(), s.bytes_reserved);
  EXPECT_EQ(raw.outstanding(), 0u);
}

// ---- randomized multi-threaded stress -------------------------------------------------

struct Live {
  void* ptr;
  uint64_t size;  // allocation_size
};

void check_disjoint_and_owned(std::vector<Live> all, const FakeRawAllocator& raw) {
  std::sort(all.begin(), all.end(), [](const Live& a, const Live& b) { return addr(a.ptr) < addr(b.ptr); });
  for (size_t i = 0; i < all.size(); ++i) {
    ASSERT_TRUE(raw.owns(addr(all[i].ptr), all[i].size));
    if (i > 0) {
      ASSERT_LE(addr(all[i - 1].ptr) + all[i - 1].size, addr(all[i].ptr)) << "overlapping blocks";
    }
  }
}

TEST_P(PoolModes, RandomizedMultiThreadedStress) {
  constexpr int kThreads = 8;
  constexpr int kPhases = 3;
  constexpr int kOpsPerPhase = 10000;
  constexpr uint64_t kLimit = 48 * MiB;
  FakeRawAllocator raw;
  BfcPool pool(raw, growth(kLimit, 512 * KiB, cache()));

  std::mutex mailbox_mu;
  std::vector<Live> mailbox;  // blocks handed from one thread to another
  std::vector<std::vector<Live>> published(kThreads);
  std::atomic<uint64_t> allocations{0};
  std::atomic<uint64_t> ooms{0};
  std::atomic<bool> failed{false};

  auto check = [&]() noexcept {
    // All threads wait at the barrier: the pool is quiescent.
    std::vector<Live> all;
    {
      std::lock_guard lock(mailbox_mu);
      all = mailbox;
    }
    for (auto& v : published) all.insert(all.end(), v.begin(), v.end());
    uint64_t bytes = 0;
    for (const Live& l : all) bytes += l.size;
    const PoolStats s = pool.stats();
    EXPECT_EQ(s.bytes_in_use, bytes);
    EXPECT_EQ(s.num_allocations, all.size());
    EXPECT_EQ(s.total_allocations, allocations.load());
    EXPECT_GE(s.peak_bytes_in_use, s.bytes_in_use);
    EXPECT_LE(s.peak_bytes_in_use, kLimit);
    EXPECT_LE(s.bytes_reserved, kLimit);
    EXPECT_LE(raw.peak_outstanding(), kLimit);
    check_disjoint_and_owned(all, raw);
    if (::testing::Test::HasFailure()) failed = true;
  };
  std::barrier sync(kThreads, check);

  auto worker = [&](int id) {
    std::mt19937_64 rng(0x5eed + static_cast<uint64_t>(id));
    std::vector<Live> live;
    auto free_one = [&](size_t i) {
      pool.deallocate(live[i].ptr);
      live[i] = live.back();
      live.pop_back();
    };
    for (int phase = 0; phase < kPhases; ++phase) {
      for (int op = 0; op < kOpsPerPhase && !failed; ++op) {
        const uint64_t r = rng() % 100;
        if (r < 55 || live.empty()) {
          const uint64_t kind = rng() % 100;
          uint64_t n = kind < 70 ? 1 + rng() % 4096 : kind < 97 ? 4096 + rng() % (256 * KiB) : 256 * KiB + rng() % (4 * MiB);
          try {
            void* p = pool.allocate(n);
            allocations.fetch_add(1, std::memory_order_relaxed);
            const uint64_t size = pool.allocation_size(p);
            if (size < n || addr(p) % 256 != 0) failed = true;
            live.push_back({p, size});
          } catch (const Error& e) {
            if (e.code() != ErrorCode::kOutOfMemory) failed = true;
            ooms.fetch_add(1, std::memory_order_relaxed);
            while (live.size() > 4) free_one(rng() % live.size());
          }
        } else if (r < 92) {
          free_one(rng() % live.size());
        } else if (r < 96) {
          std::lock_guard lock(mailbox_mu);
          mailbox.push_back(live.back());
          live.pop_back();
        } else {
          Live l{nullptr, 0};
          {
            std::lock_guard lock(mailbox_mu);
            if (!mailbox.empty()) {
              const size_t i = rng() % mailbox.size();
              l = mailbox[i];
              mailbox[i] = mailbox.back();
              mailbox.pop_back();
            }
          }
          if (l.ptr != nullptr) pool.deallocate(l.ptr);
        }
      }
      published[id] = live;
      sync.arrive_and_wait();
    }
    for (const Live& l : live) pool.deallocate(l.ptr);
  };
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) threads.emplace_back(worker, i);
  for (auto& t : threads) t.join();
  ASSERT_FALSE(failed.load());
  for (const Live& l : mailbox) pool.deallocate(l.ptr);

  const PoolStats s = pool.stats();
  EXPECT_EQ(s.bytes_in_use, 0u);
  EXPECT_EQ(s.num_allocations, 0u);
  EXPECT_EQ(s.total_allocations, allocations.load());
  EXPECT_LE(s.peak_bytes_in_use, kLimit);
  EXPECT_LE(raw.peak_outstanding(), kLimit);
  const std::vector<uint64_t> regions = raw.live_sizes();
  ASSERT_FALSE(regions.empty());
  EXPECT_EQ(s.largest_free_block, *std::max_element(regions.begin(), regions.end()));  // regions whole again
  EXPECT_EQ(pool.release_free_regions(), s.bytes_reserved);
  EXPECT_EQ(raw.outstanding(), 0u);
  EXPECT_EQ(raw.live_blocks(), 0u);
  EXPECT_EQ(raw.bad_frees(), 0u);
  std::printf("stress: %llu allocations, %llu out of memory, peak %llu bytes, reserved %llu bytes\n",
              static_cast<unsigned long long>(allocations.load()), static_cast<unsigned long long>(ooms.load()),
              static_cast<unsigned long long>(s.peak_bytes_in_use), static_cast<unsigned long long>(s.bytes_reserved));
  EXPECT_GT(ooms.load(), 0u);  // the limit was reached
}

}  // namespace
}  // namespace xdev::detail
