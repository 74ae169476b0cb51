// BfcPool implementation. The layers, from the bottom:
//
//  Regions and chunks (guarded by mu_). A region is one block from the raw
//  allocator; it is cut into chunks that tile it, linked in address order.
//  Free chunks sit in bins (size classes: 1..15 granules exactly, then 8 per
//  power of two), each an intrusive red-black tree ordered by (size, address),
//  with a bitmap of non-empty bins. Best fit = lower_bound in the request's
//  bin, else the first chunk of the next non-empty bin.
//
//  The pointer table maps the start address of every chunk that is not free
//  (handed out or in a thread cache) to its Chunk. Open addressing, written
//  under mu_, readable without a lock: an entry does not move while its chunk
//  is not free, and slots only turn into tombstones, never back into empty,
//  except when the whole table is rebuilt (with the fast paths frozen).
//
//  Thread caches. Each (thread, pool) pair has a ThreadCache: up to 8 freed
//  chunks per size class. Its owner pushes and pops with plain loads and
//  stores inside a "busy" section; a thread holding mu_ that must touch other
//  threads' caches (drain, headroom, table rebuild) "freezes" them: it raises
//  their `frozen` flag, runs membarrier(2) so that every running thread has
//  passed a full barrier, then waits for `busy` to drop. An owner that sees
//  `frozen` takes the locked path. This is the asymmetric Dekker pattern of
//  liburcu and folly: the cost sits on the rare side.
//
//  Accounting. Counters the fast path changes live in the owner's cache; the
//  locked path keeps global ones. The peak stays exact with "headroom":
//  bytes a thread may allocate from its cache without raising the peak.
//  Invariant: sum(in use) + sum(thread headroom) + global headroom == peak.
#include "memory/bfc_pool.hpp"

#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <cinttypes>
#include <cstdio>
#include <mutex>
#include <thread>
#include <vector>

#include <boost/intrusive/set.hpp>

#include <xdev/error.hpp>

#include "common/log.hpp"

namespace xdev::detail {
namespace {

namespace bi = boost::intrusive;

constexpr uint64_t kMinGranule = 256;
constexpr uint64_t kDefaultInitialBytes = uint64_t{2} << 20;

// Bins: granule counts 1..15 each have a bin, then 8 bins per power of two.
constexpr unsigned kLinearBins = 16;
constexpr unsigned kSubBinBits = 3;
constexpr unsigned kNumBins = kLinearBins + (64 - 4) * (1u << kSubBinBits);
constexpr unsigned kBitmapWords = (kNumBins + 63) / 64;

constexpr unsigned bin_index(uint64_t granules) {
  if (granules < kLinearBins) return static_cast<unsigned>(granules);
  const unsigned fl = 63u - static_cast<unsigned>(std::countl_zero(granules));  // >= 4
  const unsigned sl = static_cast<unsigned>(granules >> (fl - kSubBinBits)) & ((1u << kSubBinBits) - 1);
  return kLinearBins + (fl - 4) * (1u << kSubBinBits) + sl;
}
static_assert(bin_index(~uint64_t{0}) < kNumBins);

// Thread caches: chunks up to 64 MiB (fewer with a small limit), 8 per class.
constexpr uint64_t kMaxCachedChunk = uint64_t{64} << 20;
constexpr uint64_t kMinThreadCacheBytes = uint64_t{4} << 20;
constexpr uint64_t kMaxThreadCacheBytes = uint64_t{256} << 20;
constexpr unsigned kCacheClasses = bin_index(kMaxCachedChunk / kMinGranule) + 1;
constexpr unsigned kCacheDepth = 8;
constexpr int kMaxPoolSlots = 64;

enum ChunkState : uint8_t { kFree = 0, kCached = 1, kInUse = 2 };

struct Region;

struct Chunk {
  uint64_t ptr = 0;
  uint64_t size = 0;
  Chunk* prev = nullptr;  // address neighbours in the region
  Chunk* next = nullptr;  // (next also links spare Chunk objects)
  Region* region = nullptr;
  std::atomic<uint8_t> state{kFree};
  uint16_t bin = 0;
  bi::set_member_hook<bi::link_mode<bi::normal_link>> hook;
};

struct SizeAddress {
  uint64_t size;
  uint64_t ptr;
};

struct BySizeThenAddress {
  static bool less(uint64_t as, uint64_t ap, uint64_t bs, uint64_t bp) {
    return as < bs || (as == bs && ap < bp);
  }
  bool operator()(const Chunk& a, const Chunk& b) const { return less(a.size, a.ptr, b.size, b.ptr); }
  bool operator()(const Chunk& a, const SizeAddress& b) const { return less(a.size, a.ptr, b.size, b.ptr); }
  bool operator()(const SizeAddress& a, const Chunk& b) const { return less(a.size, a.ptr, b.size, b.ptr); }
};

using Bin = bi::set<Chunk, bi::member_hook<Chunk, bi::set_member_hook<bi::link_mode<bi::normal_link>>, &Chunk::hook>,
                    bi::compare<BySizeThenAddress>, bi::constant_time_size<false>>;

struct Region {
  void* raw_ptr = nullptr;
  void* allocation = nullptr;  // raw_.allocation(raw_ptr): the device's name for it
  uint64_t base = 0;           // raw_ptr as a number
  uint64_t raw_size = 0;  // what was asked of the raw allocator
  uint64_t begin = 0;     // usable [begin, end), granule-aligned
  uint64_t end = 0;
  Chunk* first = nullptr;  // the chunk at `begin`: the same object for the region's life
};

// Start address -> chunk for every chunk that is not free.
class PtrTable {
 public:
  static constexpr uint64_t kEmpty = 0;
  static constexpr uint64_t kTombstone = 1;  // never an address: addresses are granule-aligned

  PtrTable(uint64_t capacity, unsigned key_shift)
      : mask_(capacity - 1),
        hash_shift_(64u - static_cast<unsigned>(std::countr_zero(capacity))),
        key_shift_(key_shift),
        slots_(new Slot[capacity]) {}

  uint64_t capacity() const { return mask_ + 1; }
  uint64_t size() const { return used_; }
  // Whether one more insert would pass 3/4 occupancy (tombstones included).
  bool full() const { return (used_ + tombstones_ + 1) * 4 > capacity() * 3; }

  // Lock-free. Exact for a key whose chunk is not free (the caller's own).
  Chunk* find(uint64_t key) const noexcept {
    for (uint64_t i = index(key);; i = (i + 1) & mask_) {
      const uint64_t k = slots_[i].key.load(std::memory_order_acquire);
      if (k == key) return slots_[i].value.load(std::memory_order_relaxed);
      if (k == kEmpty) return nullptr;
    }
  }

  // Under the pool's lock; `key` is not present and the table is not full.
  void insert(uint64_t key, Chunk* chunk) noexcept {
    for (uint64_t i = index(key);; i = (i + 1) & mask_) {
      const uint64_t k = slots_[i].key.load(std::memory_order_relaxed);
      if (k == kEmpty || k == kTombstone) {
        if (k == kTombstone) --tombstones_;
        slots_[i].value.store(chunk, std::memory_order_relaxed);
        slots_[i].key.store(key, std::memory_order_release);
        ++used_;
        return;
      }
    }
  }

  // Under the pool's lock.
  void erase(uint64_t key) noexcept {
    for (uint64_t i = index(key);; i = (i + 1) & mask_) {
      const uint64_t k = slots_[i].key.load(std::memory_order_relaxed);
      if (k == key) {
        slots_[i].key.store(kTombstone, std::memory_order_relaxed);
        --used_;
        ++tombstones_;
        return;
      }
      if (k == kEmpty) return;
    }
  }

  void copy_into(PtrTable& other) const noexcept {
    for (uint64_t i = 0; i <= mask_; ++i) {
      const uint64_t k = slots_[i].key.load(std::memory_order_relaxed);
      if (k != kEmpty && k != kTombstone) other.insert(k, slots_[i].value.load(std::memory_order_relaxed));
    }
  }

 private:
  struct Slot {
    std::atomic<uint64_t> key{kEmpty};
    std::atomic<Chunk*> value{nullptr};
  };

  uint64_t index(uint64_t key) const noexcept {
    return ((key >> key_shift_) * UINT64_C(0x9E3779B97F4A7C15)) >> hash_shift_;
  }

  const uint64_t mask_;
  const unsigned hash_shift_;
  const unsigned key_shift_;
  std::unique_ptr<Slot[]> slots_;
  uint64_t used_ = 0;
  uint64_t tombstones_ = 0;
};

// Owner-only counters change with a load and a store (no read-modify-write):
// only the owner writes them, except a freezer while the owner is frozen.
template <typename T>
inline void owner_add(std::atomic<T>& a, T delta) noexcept {
  a.store(a.load(std::memory_order_relaxed) + delta, std::memory_order_relaxed);
}

}  // namespace

struct alignas(64) ThreadCache {
  std::atomic<uint32_t> busy{0};    // owner inside a fast path
  std::atomic<uint32_t> frozen{0};  // set by a freezer: owner must take the lock
  std::atomic<int64_t> in_use{0};   // bytes: fast allocs - fast frees (may be < 0)
  std::atomic<int64_t> live{0};     // count, same
  std::atomic<uint64_t> total{0};   // fast allocations
  std::atomic<uint64_t> headroom{0};
  std::atomic<uint64_t> cached{0};  // bytes in entries (>= headroom)
  std::array<std::atomic<uint8_t>, kCacheClasses> count{};
  std::array<std::array<std::atomic<Chunk*>, kCacheDepth>, kCacheClasses> entries{};
};

namespace {

// ---- process-wide registry of pools with thread caches ---------------------

struct TlsSlot {
  uint64_t gen;
  ThreadCache* cache;
};

// Slot i holds this thread's cache for the pool registered in slot i, valid
// while `gen` matches that pool's generation.
struct ThreadSlots {
  TlsSlot slot[kMaxPoolSlots] = {};
};

// The fast paths read one 8-byte initial-exec TLS pointer (no __tls_get_addr
// call from libxdev.so; small enough for the static TLS surplus of dlopen).
// Set by the locked path on a thread's first cache; freed at thread exit.
[[gnu::tls_model("initial-exec")]] constinit thread_local ThreadSlots* tls_table = nullptr;
constinit thread_local bool tls_exiting = false;

struct Registry {
  std::mutex mu;
  BfcPoolImpl* pools[kMaxPoolSlots] = {};
  uint64_t gens[kMaxPoolSlots] = {};
  uint64_t next_gen = 1;
};

Registry& registry() {
  static Registry* r = new Registry;  // never destroyed: used at thread exit
  return *r;
}

// Gives each of the thread's caches back to its pool when the thread exits.
struct ThreadExitHook {
  bool armed = false;
  ~ThreadExitHook();
};
thread_local ThreadExitHook tls_exit_hook;

bool membarrier_available() {
  static const bool ok = [] {
    const long cmds = syscall(SYS_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
    if (cmds < 0 || (cmds & MEMBARRIER_CMD_PRIVATE_EXPEDITED) == 0) return false;
    return syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0;
  }();
  return ok;
}

// A full memory barrier executed by every running thread of the process.
void heavy_barrier() {
  if (syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) != 0) {
    throw Error(ErrorCode::kInternal, "memory pool: membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) failed");
  }
}

uint64_t round_up(uint64_t value, uint64_t granule) { return (value + granule - 1) & ~(granule - 1); }
uint64_t round_down(uint64_t value, uint64_t granule) { return value & ~(granule - 1); }

std::string human(uint64_t bytes) {
  static const char* const kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (value >= 1024.0 && unit < 6) {
    value /= 1024.0;
    ++unit;
  }
  char text[48];
  if (unit == 0) {
    std::snprintf(text, sizeof text, "%" PRIu64 " bytes", bytes);
  } else {
    std::snprintf(text, sizeof text, "%" PRIu64 " bytes (%.2f %s)", bytes, value, kUnits[unit]);
  }
  return text;
}

std::string address(uint64_t ptr) {
  char text[24];
  std::snprintf(text, sizeof text, "0x%" PRIx64, ptr);
  return text;
}

}  // namespace

// ---- the pool --------------------------------------------------------------

class BfcPoolImpl {
 public:
  BfcPoolImpl(RawAllocator& raw, const PoolOptions& options);
  ~BfcPoolImpl();

  void* allocate(uint64_t bytes, DeviceMemory* where);
  void deallocate(void* ptr);
  uint64_t allocation_size(void* ptr);
  PoolStats stats();
  void reset_peak();
  uint64_t release_free_regions();
  void detach_thread_cache(ThreadCache* cache);  // at thread exit

  const PoolOptions& options() const { return options_; }
  const std::string& device_name() const { return raw_.device_name; }
  bool thread_cache_enabled() const { return slot_ >= 0; }

 private:
  // Stops the fast path of every cache but `self` while it lives. mu_ held.
  class FreezeOthers {
   public:
    FreezeOthers(BfcPoolImpl& pool, ThreadCache* self);
    ~FreezeOthers();
    FreezeOthers(const FreezeOthers&) = delete;
    FreezeOthers& operator=(const FreezeOthers&) = delete;

   private:
    BfcPoolImpl& pool_;
    ThreadCache* self_;
  };

  ThreadCache* my_cache() const noexcept {
    const ThreadSlots* table = tls_table;
    if (table == nullptr || slot_ < 0) return nullptr;
    const TlsSlot& s = table->slot[slot_];
    return s.gen == gen_ ? s.cache : nullptr;
  }

  void* allocate_slow(uint64_t bytes, DeviceMemory* where);
  void deallocate_slow(void* ptr);
  [[noreturn]] void throw_unknown_pointer(uint64_t key, const char* what) const;

  // Everything below: mu_ held.
  ThreadCache* own_cache_locked(bool create);
  Chunk* pop_cached(ThreadCache* cache, uint64_t rounded);
  void evict_cached(ThreadCache* cache, unsigned cls, unsigned index);
  void trim_headroom(ThreadCache* cache);
  void flush_cache(ThreadCache* cache);
  bool others_have_cached(ThreadCache* self) const;
  void drain_all(ThreadCache* self);
  void ensure_headroom(uint64_t bytes, ThreadCache* self);
  PoolStats snapshot_locked(ThreadCache* self);

  Chunk* new_chunk();
  void recycle_chunk(Chunk* chunk);
  void insert_free(Chunk* chunk);
  void remove_free(Chunk* chunk);
  Chunk* take_best_fit(uint64_t rounded);
  void ensure_table_room(ThreadCache* self);
  void carve(Chunk* chunk, uint64_t rounded);
  void free_to_bins(Chunk* chunk);
  // Merges `right`, which is in no bin, into its left neighbour `left`, and
  // recycles its Chunk.
  void absorb_free_right(Chunk* left, Chunk* right);
  uint64_t largest_free_block() const;

  uint64_t region_need(uint64_t rounded) const;
  bool extend(uint64_t rounded);
  // The largest region the raw allocator can give (options_.max_region_bytes),
  // UINT64_MAX when unlimited.
  uint64_t region_cap() const;
  // Takes a region of `size` bytes (or less, down to `need`, when the raw
  // allocator is out of memory) and makes it one free chunk.
  bool add_region(uint64_t need, uint64_t size);
  bool release_and_extend(uint64_t rounded);
  uint64_t releasable_bytes() const;
  uint64_t release_free_regions_locked();
  std::string oom_message(uint64_t bytes, uint64_t rounded, ThreadCache* self);

  // Read by the fast paths; set in the constructor.
  RawAllocator& raw_;
  const PoolOptions options_;
  uint64_t granule_ = kMinGranule;
  unsigned shift_ = 8;
  uint64_t cache_chunk_max_ = 0;  // largest chunk a thread cache takes (0: no caches)
  uint64_t cache_capacity_ = 0;   // bytes one thread cache may hold
  int slot_ = -1;
  uint64_t gen_ = 0;
  std::atomic<PtrTable*> table_{nullptr};

  // Everything below is guarded by mu_.
  alignas(64) std::mutex mu_;
  std::vector<std::unique_ptr<Region>> regions_;
  std::vector<std::unique_ptr<Chunk[]>> chunk_blocks_;
  Chunk* spare_chunks_ = nullptr;
  std::array<Bin, kNumBins> bins_;
  std::array<uint64_t, kBitmapWords> bin_bitmap_{};
  std::vector<ThreadCache*> caches_;
  int64_t in_use_ = 0;  // locked-path part of the counters (caches hold the rest)
  int64_t live_ = 0;
  uint64_t total_ = 0;
  uint64_t peak_ = 0;
  uint64_t headroom_ = 0;
  uint64_t reserved_ = 0;
  uint64_t next_region_ = 0;
};

// ---- construction ----------------------------------------------------------

BfcPoolImpl::BfcPoolImpl(RawAllocator& raw, const PoolOptions& options) : raw_(raw), options_(options) {
  if (options.alignment == 0 || !std::has_single_bit(options.alignment)) {
    throw Error(ErrorCode::kInvalidArgument, "memory pool for device " + raw.device_name +
                                                 ": alignment " + std::to_string(options.alignment) +
                                                 " is not a power of two");
  }
  granule_ = std::max(kMinGranule, options.alignment);
  shift_ = static_cast<unsigned>(std::countr_zero(granule_));
  const uint64_t initial = options.initial_bytes != 0 ? options.initial_bytes : kDefaultInitialBytes;
  next_region_ = std::max(granule_, round_up(std::min(initial, std::max(options.limit_bytes, granule_)), granule_));
  table_.store(new PtrTable(1024, shift_), std::memory_order_relaxed);

  const uint64_t capacity = std::clamp(options.limit_bytes / 16, kMinThreadCacheBytes, kMaxThreadCacheBytes);
  if (options.thread_cache && granule_ <= kMaxCachedChunk && membarrier_available()) {
    Registry& r = registry();
    std::lock_guard lock(r.mu);
    for (int i = 0; i < kMaxPoolSlots; ++i) {
      if (r.pools[i] == nullptr) {
        r.pools[i] = this;
        r.gens[i] = gen_ = r.next_gen++;
        slot_ = i;
        break;
      }
    }
  }
  if (slot_ >= 0) {
    cache_capacity_ = capacity;
    cache_chunk_max_ = round_down(std::min(kMaxCachedChunk, capacity / 2), granule_);
  }
}

BfcPoolImpl::~BfcPoolImpl() {
  if (slot_ >= 0) {
    Registry& r = registry();
    std::lock_guard lock(r.mu);
    r.pools[slot_] = nullptr;
    r.gens[slot_] = 0;
  }
  int64_t in_use = in_use_;
  int64_t live = live_;
  for (ThreadCache* cache : caches_) {
    in_use += cache->in_use.load(std::memory_order_relaxed);
    live += cache->live.load(std::memory_order_relaxed);
    delete cache;
  }
  if (live != 0) {
    log(XDEV_LOG_WARNING, "memory pool for device " + device_name() + " destroyed with " +
                              std::to_string(live) + " allocations (" + human(static_cast<uint64_t>(in_use)) +
                              ") still in use");
  }
  for (auto& region : regions_) raw_.deallocate(region->raw_ptr);
  delete table_.load(std::memory_order_relaxed);
}

ThreadExitHook::~ThreadExitHook() {
  tls_exiting = true;
  ThreadSlots* table = tls_table;
  if (table == nullptr) return;
  {
    Registry& r = registry();
    std::lock_guard lock(r.mu);
    for (int i = 0; i < kMaxPoolSlots; ++i) {
      const TlsSlot& s = table->slot[i];
      if (s.gen != 0 && r.gens[i] == s.gen) r.pools[i]->detach_thread_cache(s.cache);
    }
  }
  tls_table = nullptr;
  delete table;
}

void BfcPoolImpl::detach_thread_cache(ThreadCache* cache) {
  std::lock_guard lock(mu_);
  flush_cache(cache);  // its owner is the calling thread: not in a fast path
  in_use_ += cache->in_use.load(std::memory_order_relaxed);
  live_ += cache->live.load(std::memory_order_relaxed);
  total_ += cache->total.load(std::memory_order_relaxed);
  caches_.erase(std::find(caches_.begin(), caches_.end(), cache));
  delete cache;
}

// ---- fast paths ------------------------------------------------------------

// The block `chunk` as the device names it.
static void locate(const Chunk* chunk, DeviceMemory* where) {
  if (where != nullptr) *where = {chunk->region->allocation, chunk->ptr - chunk->region->base};
}

void* BfcPoolImpl::allocate(uint64_t bytes, DeviceMemory* where) {
  if (bytes - 1 < cache_chunk_max_) {  // 0 < bytes <= cache_chunk_max_
    ThreadCache* c = my_cache();
    if (c != nullptr) {
      const uint64_t rounded = round_up(bytes, granule_);
      const unsigned cls = bin_index(rounded >> shift_);
      c->busy.store(1, std::memory_order_relaxed);
      std::atomic_signal_fence(std::memory_order_seq_cst);
      if (c->frozen.load(std::memory_order_acquire) == 0) {
        const unsigned n = c->count[cls].load(std::memory_order_relaxed);
        const uint64_t headroom = c->headroom.load(std::memory_order_relaxed);
        auto& entries = c->entries[cls];
        for (unsigned i = n; i-- > 0;) {
          Chunk* chunk = entries[i].load(std::memory_order_relaxed);
          const uint64_t size = chunk->size;
          if (size < rounded) continue;
          if (size > headroom) break;  // would raise the peak: locked path
          if (i != n - 1) entries[i].store(entries[n - 1].load(std::memory_order_relaxed), std::memory_order_relaxed);
          c->count[cls].store(static_cast<uint8_t>(n - 1), std::memory_order_relaxed);
          c->headroom.store(headroom - size, std::memory_order_relaxed);
          owner_add(c->cached, uint64_t{0} - size);
          owner_add(c->in_use, static_cast<int64_t>(size));
          owner_add(c->live, int64_t{1});
          owner_add(c->total, uint64_t{1});
          chunk->state.store(kInUse, std::memory_order_relaxed);
          c->busy.store(0, std::memory_order_release);
          locate(chunk, where);
          return reinterpret_cast<void*>(chunk->ptr);
        }
      }
      c->busy.store(0, std::memory_order_release);
    }
  }
  return allocate_slow(bytes, where);
}

void BfcPoolImpl::deallocate(void* ptr) {
  if (ptr == nullptr) return;
  ThreadCache* c = my_cache();
  if (c != nullptr) {
    const uint64_t key = reinterpret_cast<uintptr_t>(ptr);
    c->busy.store(1, std::memory_order_relaxed);
    std::atomic_signal_fence(std::memory_order_seq_cst);
    if (c->frozen.load(std::memory_order_acquire) == 0) {
      Chunk* chunk = table_.load(std::memory_order_acquire)->find(key);
      if (chunk != nullptr && chunk->state.load(std::memory_order_relaxed) == kInUse) {
        const uint64_t size = chunk->size;
        const uint64_t cached = c->cached.load(std::memory_order_relaxed);
        if (size <= cache_chunk_max_ && cached + size <= cache_capacity_) {
          const unsigned cls = bin_index(size >> shift_);
          const unsigned n = c->count[cls].load(std::memory_order_relaxed);
          if (n < kCacheDepth) {
            c->entries[cls][n].store(chunk, std::memory_order_relaxed);
            c->count[cls].store(static_cast<uint8_t>(n + 1), std::memory_order_relaxed);
            c->cached.store(cached + size, std::memory_order_relaxed);
            owner_add(c->headroom, size);
            owner_add(c->in_use, -static_cast<int64_t>(size));
            owner_add(c->live, int64_t{-1});
            chunk->state.store(kCached, std::memory_order_relaxed);
            c->busy.store(0, std::memory_order_release);
            return;
          }
        }
      }
    }
    c->busy.store(0, std::memory_order_release);
  }
  deallocate_slow(ptr);
}

// ---- freezing --------------------------------------------------------------

BfcPoolImpl::FreezeOthers::FreezeOthers(BfcPoolImpl& pool, ThreadCache* self) : pool_(pool), self_(self) {
  bool any = false;
  for (ThreadCache* c : pool_.caches_) {
    if (c == self_) continue;
    c->frozen.store(1, std::memory_order_relaxed);
    any = true;
  }
  if (!any) return;
  try {
    heavy_barrier();
  } catch (...) {
    for (ThreadCache* c : pool_.caches_) c->frozen.store(0, std::memory_order_release);
    throw;
  }
  for (ThreadCache* c : pool_.caches_) {
    if (c == self_) continue;
    for (int spins = 0; c->busy.load(std::memory_order_acquire) != 0; ++spins) {
      if (spins > 64) std::this_thread::yield();
    }
  }
}

BfcPoolImpl::FreezeOthers::~FreezeOthers() {
  for (ThreadCache* c : pool_.caches_) {
    if (c != self_) c->frozen.store(0, std::memory_order_release);
  }
}

// ---- thread caches (mu_ held) ------------------------------------------------

ThreadCache* BfcPoolImpl::own_cache_locked(bool create) {
  if (ThreadCache* cache = my_cache(); cache != nullptr || slot_ < 0) return cache;
  if (!create || tls_exiting) return nullptr;
  if (tls_table == nullptr) {
    tls_exit_hook.armed = true;  // registers the thread-exit destructor
    tls_table = new ThreadSlots;
  }
  TlsSlot& s = tls_table->slot[slot_];
  auto cache = std::make_unique<ThreadCache>();
  caches_.push_back(cache.get());
  s = TlsSlot{gen_, cache.release()};
  return s.cache;
}

Chunk* BfcPoolImpl::pop_cached(ThreadCache* cache, uint64_t rounded) {
  const unsigned cls = bin_index(rounded >> shift_);
  const unsigned n = cache->count[cls].load(std::memory_order_relaxed);
  auto& entries = cache->entries[cls];
  for (unsigned i = n; i-- > 0;) {
    Chunk* chunk = entries[i].load(std::memory_order_relaxed);
    if (chunk->size < rounded) continue;
    entries[i].store(entries[n - 1].load(std::memory_order_relaxed), std::memory_order_relaxed);
    cache->count[cls].store(static_cast<uint8_t>(n - 1), std::memory_order_relaxed);
    owner_add(cache->cached, uint64_t{0} - chunk->size);
    trim_headroom(cache);
    return chunk;
  }
  return nullptr;
}

// Returns entry `index` of class `cls` to the bins, keeping the order of the
// others (the oldest sit at the bottom).
void BfcPoolImpl::evict_cached(ThreadCache* cache, unsigned cls, unsigned index) {
  const unsigned n = cache->count[cls].load(std::memory_order_relaxed);
  auto& entries = cache->entries[cls];
  Chunk* chunk = entries[index].load(std::memory_order_relaxed);
  for (unsigned i = index; i + 1 < n; ++i) {
    entries[i].store(entries[i + 1].load(std::memory_order_relaxed), std::memory_order_relaxed);
  }
  cache->count[cls].store(static_cast<uint8_t>(n - 1), std::memory_order_relaxed);
  owner_add(cache->cached, uint64_t{0} - chunk->size);
  trim_headroom(cache);
  free_to_bins(chunk);
}

// A cache's headroom never exceeds its cached bytes; the rest goes global.
void BfcPoolImpl::trim_headroom(ThreadCache* cache) {
  const uint64_t cached = cache->cached.load(std::memory_order_relaxed);
  const uint64_t headroom = cache->headroom.load(std::memory_order_relaxed);
  if (headroom > cached) {
    headroom_ += headroom - cached;
    cache->headroom.store(cached, std::memory_order_relaxed);
  }
}

// The cache's owner is the caller or frozen.
void BfcPoolImpl::flush_cache(ThreadCache* cache) {
  for (unsigned cls = 0; cls < kCacheClasses; ++cls) {
    const unsigned n = cache->count[cls].load(std::memory_order_relaxed);
    for (unsigned i = 0; i < n; ++i) free_to_bins(cache->entries[cls][i].load(std::memory_order_relaxed));
    cache->count[cls].store(0, std::memory_order_relaxed);
  }
  cache->cached.store(0, std::memory_order_relaxed);
  headroom_ += cache->headroom.load(std::memory_order_relaxed);
  cache->headroom.store(0, std::memory_order_relaxed);
}

bool BfcPoolImpl::others_have_cached(ThreadCache* self) const {
  for (ThreadCache* c : caches_) {
    if (c != self && c->cached.load(std::memory_order_relaxed) != 0) return true;
  }
  return false;
}

void BfcPoolImpl::drain_all(ThreadCache* self) {
  FreezeOthers freeze(*this, self);
  for (ThreadCache* c : caches_) flush_cache(c);
}

// Accounts `bytes` more in use against the peak: takes global headroom, then
// the caller's, then (freezing) the other threads'; what is still missing
// raises the peak. A thread whose headroom reads zero here is not frozen, so a
// free it runs at this very moment may be counted as happening after this
// allocation.
void BfcPoolImpl::ensure_headroom(uint64_t bytes, ThreadCache* self) {
  if (headroom_ < bytes && self != nullptr) {
    headroom_ += self->headroom.load(std::memory_order_relaxed);
    self->headroom.store(0, std::memory_order_relaxed);
  }
  if (headroom_ < bytes) {
    bool others = false;
    for (ThreadCache* c : caches_) {
      if (c != self && c->headroom.load(std::memory_order_relaxed) != 0) others = true;
    }
    if (others) {
      FreezeOthers freeze(*this, self);
      for (ThreadCache* c : caches_) {
        headroom_ += c->headroom.load(std::memory_order_relaxed);
        c->headroom.store(0, std::memory_order_relaxed);
      }
    }
  }
  if (headroom_ >= bytes) {
    headroom_ -= bytes;
  } else {
    peak_ += bytes - headroom_;
    headroom_ = 0;
  }
}

PoolStats BfcPoolImpl::snapshot_locked(ThreadCache* self) {
  FreezeOthers freeze(*this, self);
  int64_t in_use = in_use_;
  int64_t live = live_;
  uint64_t total = total_;
  for (ThreadCache* c : caches_) {
    flush_cache(c);
    in_use += c->in_use.load(std::memory_order_relaxed);
    live += c->live.load(std::memory_order_relaxed);
    total += c->total.load(std::memory_order_relaxed);
  }
  PoolStats stats;
  stats.bytes_in_use = static_cast<uint64_t>(in_use);
  stats.peak_bytes_in_use = peak_;
  stats.num_allocations = static_cast<uint64_t>(live);
  stats.total_allocations = total;
  stats.bytes_reserved = reserved_;
  stats.largest_free_block = largest_free_block();
  stats.limit_bytes = options_.limit_bytes;
  return stats;
}

// ---- chunks and bins (mu_ held) ----------------------------------------------

Chunk* BfcPoolImpl::new_chunk() {
  if (spare_chunks_ == nullptr) {
    constexpr size_t kBlock = 256;
    chunk_blocks_.push_back(std::make_unique<Chunk[]>(kBlock));
    Chunk* block = chunk_blocks_.back().get();
    for (size_t i = 0; i < kBlock; ++i) {
      block[i].next = spare_chunks_;
      spare_chunks_ = &block[i];
    }
  }
  Chunk* chunk = spare_chunks_;
  spare_chunks_ = chunk->next;
  chunk->prev = chunk->next = nullptr;
  return chunk;
}

void BfcPoolImpl::recycle_chunk(Chunk* chunk) {
  chunk->ptr = 0;
  chunk->size = 0;
  chunk->region = nullptr;
  chunk->prev = nullptr;
  chunk->next = spare_chunks_;
  spare_chunks_ = chunk;
}

void BfcPoolImpl::insert_free(Chunk* chunk) {
  chunk->state.store(kFree, std::memory_order_relaxed);
  const unsigned bin = bin_index(chunk->size >> shift_);
  chunk->bin = static_cast<uint16_t>(bin);
  bins_[bin].insert(*chunk);
  bin_bitmap_[bin / 64] |= uint64_t{1} << (bin % 64);
}

void BfcPoolImpl::remove_free(Chunk* chunk) {
  Bin& bin = bins_[chunk->bin];
  bin.erase(bin.iterator_to(*chunk));
  if (bin.empty()) bin_bitmap_[chunk->bin / 64] &= ~(uint64_t{1} << (chunk->bin % 64));
}

// The smallest free chunk of at least `rounded` bytes, lowest address first;
// removed from its bin.
Chunk* BfcPoolImpl::take_best_fit(uint64_t rounded) {
  unsigned bin = bin_index(rounded >> shift_);
  Chunk* chunk = nullptr;
  if (!bins_[bin].empty()) {
    auto it = bins_[bin].lower_bound(SizeAddress{rounded, 0}, BySizeThenAddress{});
    if (it != bins_[bin].end()) chunk = &*it;
  }
  if (chunk == nullptr) {
    for (unsigned b = bin + 1; b < kNumBins && chunk == nullptr;) {
      const uint64_t word = bin_bitmap_[b / 64] & (~uint64_t{0} << (b % 64));
      if (word != 0) {
        chunk = &*bins_[(b / 64) * 64 + static_cast<unsigned>(std::countr_zero(word))].begin();
      } else {
        b = (b / 64 + 1) * 64;
      }
    }
  }
  if (chunk != nullptr) remove_free(chunk);
  return chunk;
}

// Hands out the first `rounded` bytes of free `chunk` (already out of its
// bin); the rest goes back as a free chunk. ensure_table_room() ran first.
void BfcPoolImpl::carve(Chunk* chunk, uint64_t rounded) {
  if (chunk->size > rounded) {
    Chunk* rest = new_chunk();
    rest->ptr = chunk->ptr + rounded;
    rest->size = chunk->size - rounded;
    rest->region = chunk->region;
    rest->prev = chunk;
    rest->next = chunk->next;
    if (chunk->next != nullptr) chunk->next->prev = rest;
    chunk->next = rest;
    chunk->size = rounded;
    insert_free(rest);
  }
  chunk->state.store(kInUse, std::memory_order_relaxed);
  table_.load(std::memory_order_relaxed)->insert(chunk->ptr, chunk);
}

// Rebuilds the pointer table (dropping tombstones, growing it to at most half
// full) when one more entry would pass 3/4 occupancy.
void BfcPoolImpl::ensure_table_room(ThreadCache* self) {
  PtrTable* table = table_.load(std::memory_order_relaxed);
  if (!table->full()) return;
  uint64_t capacity = table->capacity();
  while ((table->size() + 1) * 2 > capacity) capacity *= 2;
  auto rebuilt = std::make_unique<PtrTable>(capacity, shift_);
  table->copy_into(*rebuilt);
  FreezeOthers freeze(*this, self);  // no fast path may still read the old table
  table_.store(rebuilt.release(), std::memory_order_release);
  delete table;
}

// Returns a chunk that is not free to the bins, merged with free neighbours.
void BfcPoolImpl::free_to_bins(Chunk* chunk) {
  table_.load(std::memory_order_relaxed)->erase(chunk->ptr);
  chunk->state.store(kFree, std::memory_order_relaxed);
  if (Chunk* next = chunk->next; next != nullptr && next->state.load(std::memory_order_relaxed) == kFree) {
    remove_free(next);
    absorb_free_right(chunk, next);
  }
  if (Chunk* prev = chunk->prev; prev != nullptr && prev->state.load(std::memory_order_relaxed) == kFree) {
    remove_free(prev);
    absorb_free_right(prev, chunk);
    chunk = prev;
  }
  insert_free(chunk);
}

void BfcPoolImpl::absorb_free_right(Chunk* left, Chunk* right) {
  left->size += right->size;
  left->next = right->next;
  if (right->next != nullptr) right->next->prev = left;
  recycle_chunk(right);
}

uint64_t BfcPoolImpl::largest_free_block() const {
  for (unsigned w = kBitmapWords; w-- > 0;) {
    if (bin_bitmap_[w] != 0) {
      const unsigned bin = w * 64 + 63u - static_cast<unsigned>(std::countl_zero(bin_bitmap_[w]));
      return bins_[bin].rbegin()->size;
    }
  }
  return 0;
}

// ---- regions (mu_ held) --------------------------------------------------------

// Bytes to ask of the raw allocator so that `rounded` fits after aligning:
// the raw allocator guarantees 256-byte alignment, not the granule.
uint64_t BfcPoolImpl::region_need(uint64_t rounded) const {
  return granule_ > kMinGranule ? rounded + granule_ : rounded;
}

uint64_t BfcPoolImpl::region_cap() const {
  return options_.max_region_bytes == 0 ? UINT64_MAX : round_down(options_.max_region_bytes, granule_);
}

bool BfcPoolImpl::extend(uint64_t rounded) {
  const uint64_t need = region_need(rounded);
  if (need < rounded || reserved_ >= options_.limit_bytes || options_.limit_bytes - reserved_ < need) return false;
  const uint64_t cap = region_cap();
  if (need > cap) return false;  // no region can hold it (oom_message says why)
  const uint64_t budget = std::max(need, round_down(options_.limit_bytes - reserved_, granule_));
  uint64_t size = budget;
  if (options_.allow_growth) {
    size = next_region_;
    while (size < need && size < budget) size *= 2;
    size = std::min(std::max(size, need), budget);
  }
  size = std::min(size, cap);
  if (!add_region(need, size)) return false;
  // Without growth the whole limit is reserved now; when one region may not
  // hold it, in more regions of at most `cap` bytes, as far as the raw
  // allocator gives them.
  if (!options_.allow_growth && cap != UINT64_MAX) {
    for (;;) {
      const uint64_t rest = options_.limit_bytes > reserved_ ? round_down(options_.limit_bytes - reserved_, granule_) : 0;
      const uint64_t next = std::min(rest, cap);
      if (next == 0 || !add_region(next, next)) break;
    }
  }
  return true;
}

bool BfcPoolImpl::add_region(uint64_t need, uint64_t size) {
  void* raw = nullptr;
  for (;;) {
    raw = raw_.allocate(size, granule_);
    if (raw != nullptr) break;
    if (size == need) return false;
    size = std::max(need, round_down(size / 10 * 9, granule_));
  }
  const uint64_t base = reinterpret_cast<uintptr_t>(raw);
  if (base % std::min(granule_, kMinGranule) != 0) {
    raw_.deallocate(raw);
    throw Error(ErrorCode::kInternal, "memory pool for device " + device_name() + ": raw allocator returned " +
                                          address(base) + ", not aligned to " +
                                          std::to_string(std::min(granule_, kMinGranule)) + " bytes");
  }
  auto region = std::make_unique<Region>();
  region->raw_ptr = raw;
  region->base = base;
  try {
    region->allocation = raw_.allocation(raw);
  } catch (...) {
    raw_.deallocate(raw);
    throw;
  }
  region->raw_size = size;
  region->begin = round_up(base, granule_);
  region->end = round_down(base + size, granule_);
  Chunk* chunk = new_chunk();
  chunk->ptr = region->begin;
  chunk->size = region->end - region->begin;
  chunk->region = region.get();
  region->first = chunk;
  regions_.push_back(std::move(region));
  insert_free(chunk);
  reserved_ += size;
  if (options_.allow_growth && size >= next_region_) next_region_ = size <= UINT64_MAX / 2 ? size * 2 : size;
  log(XDEV_LOG_DEBUG, "memory pool for device " + device_name() + ": reserved a region of " + human(size) +
                          ", " + human(reserved_) + " reserved of a limit of " + human(options_.limit_bytes));
  return true;
}

uint64_t BfcPoolImpl::releasable_bytes() const {
  uint64_t bytes = 0;
  for (const auto& region : regions_) {
    const Chunk* first = region->first;
    if (first->next == nullptr && first->state.load(std::memory_order_relaxed) == kFree) bytes += region->raw_size;
  }
  return bytes;
}

uint64_t BfcPoolImpl::release_free_regions_locked() {
  // Queued device work may still read a block of a fully free region: wait
  // for it before the memory goes back to the device, or give nothing back
  // when that cannot be waited for now (raw_allocator.hpp).
  if (releasable_bytes() == 0 || !raw_.wait_for_device_work()) return 0;
  uint64_t released = 0;
  std::erase_if(regions_, [&](const std::unique_ptr<Region>& region) {
    Chunk* first = region->first;
    if (first->next != nullptr || first->state.load(std::memory_order_relaxed) != kFree) return false;
    remove_free(first);
    recycle_chunk(first);
    raw_.deallocate(region->raw_ptr);
    released += region->raw_size;
    return true;
  });
  reserved_ -= released;
  if (released != 0) {
    log(XDEV_LOG_DEBUG, "memory pool for device " + device_name() + ": gave " + human(released) +
                            " of free regions back, " + human(reserved_) + " reserved");
  }
  return released;
}

// The last resort before failing: give fully free regions back when that
// lets a region big enough fit under the limit, and grow once more.
bool BfcPoolImpl::release_and_extend(uint64_t rounded) {
  const uint64_t releasable = releasable_bytes();
  if (releasable == 0) return false;
  const uint64_t need = region_need(rounded);
  const uint64_t unreserved = options_.limit_bytes > reserved_ ? options_.limit_bytes - reserved_ : 0;
  if (unreserved + releasable < need) return false;
  if (release_free_regions_locked() == 0) return false;
  return extend(rounded);
}

std::string BfcPoolImpl::oom_message(uint64_t bytes, uint64_t rounded, ThreadCache* self) {
  const PoolStats s = snapshot_locked(self);
  std::string message = "out of memory on device " + device_name() + ": cannot allocate " + human(bytes);
  if (rounded != bytes) message += " (rounded to " + std::to_string(rounded) + ")";
  message += "; in use " + human(s.bytes_in_use) + " in " + std::to_string(s.num_allocations) +
             " allocations, limit " + human(s.limit_bytes) + ", reserved " + human(s.bytes_reserved) +
             ", largest free block " + human(s.largest_free_block);
  if (region_need(rounded) > region_cap()) {
    message += "; larger than the largest single allocation the device allows (" +
               human(options_.max_region_bytes) + ", its max_allocation_bytes)";
  }
  return message;
}

// ---- locked paths --------------------------------------------------------------

void* BfcPoolImpl::allocate_slow(uint64_t bytes, DeviceMemory* where) {
  if (where != nullptr) *where = {};
  if (bytes == 0) return nullptr;
  const uint64_t rounded = bytes > UINT64_MAX - granule_ ? UINT64_MAX : round_up(bytes, granule_);
  std::unique_lock lock(mu_);
  ThreadCache* self = own_cache_locked(true);
  Chunk* chunk = nullptr;
  if (self != nullptr && rounded <= cache_chunk_max_) {
    chunk = pop_cached(self, rounded);  // a hit that lacked headroom
    if (chunk != nullptr) chunk->state.store(kInUse, std::memory_order_relaxed);
  }
  if (chunk == nullptr && rounded <= options_.limit_bytes) {
    chunk = take_best_fit(rounded);
    if (chunk == nullptr && self != nullptr && self->cached.load(std::memory_order_relaxed) != 0) {
      flush_cache(self);
      chunk = take_best_fit(rounded);
    }
    if (chunk == nullptr && extend(rounded)) chunk = take_best_fit(rounded);
    if (chunk == nullptr && others_have_cached(self)) {
      drain_all(self);
      chunk = take_best_fit(rounded);
    }
    if (chunk == nullptr && release_and_extend(rounded)) chunk = take_best_fit(rounded);
    if (chunk != nullptr) {
      try {
        ensure_table_room(self);
      } catch (...) {
        insert_free(chunk);
        throw;
      }
      carve(chunk, rounded);
    }
  }
  if (chunk == nullptr) {
    std::string message = oom_message(bytes, rounded, self);
    lock.unlock();
    log(XDEV_LOG_INFO, message);
    throw Error(ErrorCode::kOutOfMemory, message);
  }
  ensure_headroom(chunk->size, self);
  in_use_ += static_cast<int64_t>(chunk->size);
  ++live_;
  ++total_;
  locate(chunk, where);
  return reinterpret_cast<void*>(chunk->ptr);
}

void BfcPoolImpl::throw_unknown_pointer(uint64_t key, const char* what) const {
  throw Error(ErrorCode::kInvalidArgument, std::string(what) + ": pointer " + address(key) +
                                               " was not allocated by the memory pool of device " +
                                               device_name() + " or was already freed");
}

void BfcPoolImpl::deallocate_slow(void* ptr) {
  const uint64_t key = reinterpret_cast<uintptr_t>(ptr);
  std::unique_lock lock(mu_);
  Chunk* chunk = table_.load(std::memory_order_relaxed)->find(key);
  if (chunk == nullptr || chunk->state.load(std::memory_order_relaxed) != kInUse) {
    lock.unlock();
    throw_unknown_pointer(key, "deallocate");
  }
  const uint64_t size = chunk->size;
  in_use_ -= static_cast<int64_t>(size);
  --live_;
  ThreadCache* self = own_cache_locked(true);
  if (self == nullptr || size > cache_chunk_max_) {
    headroom_ += size;
    free_to_bins(chunk);
    return;
  }
  // Into the caller's cache, making room: the oldest of the class, then the
  // largest classes while the cache would pass its byte capacity.
  const unsigned cls = bin_index(size >> shift_);
  if (self->count[cls].load(std::memory_order_relaxed) == kCacheDepth) {
    for (unsigned i = 0; i < kCacheDepth / 2; ++i) evict_cached(self, cls, 0);
  }
  for (unsigned c = kCacheClasses; c-- > 0 && self->cached.load(std::memory_order_relaxed) + size > cache_capacity_;) {
    while (self->count[c].load(std::memory_order_relaxed) != 0 &&
           self->cached.load(std::memory_order_relaxed) + size > cache_capacity_) {
      evict_cached(self, c, 0);
    }
  }
  const unsigned n = self->count[cls].load(std::memory_order_relaxed);
  self->entries[cls][n].store(chunk, std::memory_order_relaxed);
  self->count[cls].store(static_cast<uint8_t>(n + 1), std::memory_order_relaxed);
  owner_add(self->cached, size);
  owner_add(self->headroom, size);
  chunk->state.store(kCached, std::memory_order_relaxed);
}

uint64_t BfcPoolImpl::allocation_size(void* ptr) {
  if (ptr == nullptr) return 0;
  const uint64_t key = reinterpret_cast<uintptr_t>(ptr);
  std::unique_lock lock(mu_);
  const Chunk* chunk = table_.load(std::memory_order_relaxed)->find(key);
  if (chunk == nullptr || chunk->state.load(std::memory_order_relaxed) != kInUse) {
    lock.unlock();
    throw_unknown_pointer(key, "allocation_size");
  }
  return chunk->size;
}

PoolStats BfcPoolImpl::stats() {
  std::lock_guard lock(mu_);
  return snapshot_locked(own_cache_locked(false));
}

void BfcPoolImpl::reset_peak() {
  std::lock_guard lock(mu_);
  ThreadCache* self = own_cache_locked(false);
  FreezeOthers freeze(*this, self);
  for (ThreadCache* c : caches_) {
    headroom_ += c->headroom.load(std::memory_order_relaxed);
    c->headroom.store(0, std::memory_order_relaxed);
  }
  peak_ -= headroom_;  // == bytes in use
  headroom_ = 0;
}

uint64_t BfcPoolImpl::release_free_regions() {
  std::lock_guard lock(mu_);
  drain_all(own_cache_locked(false));
  return release_free_regions_locked();
}

// ---- BfcPool -------------------------------------------------------------------

BfcPool::BfcPool(RawAllocator& raw, PoolOptions options) : impl_(std::make_unique<BfcPoolImpl>(raw, options)) {}
BfcPool::~BfcPool() = default;
void* BfcPool::allocate(uint64_t bytes) { return impl_->allocate(bytes, nullptr); }
void* BfcPool::allocate(uint64_t bytes, DeviceMemory* where) { return impl_->allocate(bytes, where); }
void BfcPool::deallocate(void* ptr) { impl_->deallocate(ptr); }
uint64_t BfcPool::allocation_size(void* ptr) const { return impl_->allocation_size(ptr); }
PoolStats BfcPool::stats() const { return impl_->stats(); }
void BfcPool::reset_peak() { impl_->reset_peak(); }
uint64_t BfcPool::release_free_regions() { return impl_->release_free_regions(); }
const PoolOptions& BfcPool::options() const { return impl_->options(); }
const std::string& BfcPool::device_name() const { return impl_->device_name(); }
bool BfcPool::thread_cache_enabled() const { return impl_->thread_cache_enabled(); }

}  // namespace xdev::detail
