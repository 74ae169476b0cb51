// The sim plugin's device collectives over POSIX shared memory
// (collectives.hpp says how).
#include "collectives.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstring>
#include <random>
#include <thread>

namespace xdev::sim {
namespace {

constexpr char kIdPrefix[] = "sim-collectives-1";
constexpr size_t kIdPrefixSize = sizeof(kIdPrefix) - 1;
constexpr size_t kIdRandomBytes = 16;

// Lives in the segment: zero-filled by ftruncate, so no rank initializes it.
struct alignas(64) RankSlot {
  std::atomic<uint64_t> arrived;  // the last round whose data is in the area
  std::atomic<uint64_t> left;     // the last round the rank has read
};
static_assert(std::atomic<uint64_t>::is_always_lock_free);
static_assert(std::atomic<int32_t>::is_always_lock_free);

std::string segment_name(const uint8_t* id, size_t id_size) {
  std::string name = "/xdev-sim-";
  static const char hex[] = "0123456789abcdef";
  for (size_t i = kIdPrefixSize; i < id_size; ++i) {
    name += hex[id[i] >> 4];
    name += hex[id[i] & 15];
  }
  return name;
}

template <typename T>
void reduce_into(int32_t op, T* out, const T* in, uint64_t n) {
  switch (op) {
    case XDEV_REDUCE_SUM:
      for (uint64_t i = 0; i < n; ++i) out[i] = static_cast<T>(out[i] + in[i]);
      break;
    case XDEV_REDUCE_MAX:
      for (uint64_t i = 0; i < n; ++i) out[i] = std::max(out[i], in[i]);
      break;
    default:
      for (uint64_t i = 0; i < n; ++i) out[i] = std::min(out[i], in[i]);
      break;
  }
}

// out (n elements) op= in.
void reduce_bytes(xdev_dtype_t dtype, int32_t op, std::byte* out, const std::byte* in,
                  uint64_t n) {
  switch (dtype) {
    case XDEV_DTYPE_FLOAT32:
      return reduce_into(op, reinterpret_cast<float*>(out), reinterpret_cast<const float*>(in), n);
    case XDEV_DTYPE_FLOAT64:
      return reduce_into(op, reinterpret_cast<double*>(out), reinterpret_cast<const double*>(in),
                         n);
    case XDEV_DTYPE_INT32:
      return reduce_into(op, reinterpret_cast<int32_t*>(out),
                         reinterpret_cast<const int32_t*>(in), n);
    case XDEV_DTYPE_INT64:
      return reduce_into(op, reinterpret_cast<int64_t*>(out),
                         reinterpret_cast<const int64_t*>(in), n);
    case XDEV_DTYPE_UINT8:
      return reduce_into(op, reinterpret_cast<uint8_t*>(out),
                         reinterpret_cast<const uint8_t*>(in), n);
    case XDEV_DTYPE_INT8:
      return reduce_into(op, reinterpret_cast<int8_t*>(out), reinterpret_cast<const int8_t*>(in),
                         n);
    default: return;  // refused by collective_sizes
  }
}

bool reducible(xdev_dtype_t dtype) {
  switch (dtype) {
    case XDEV_DTYPE_FLOAT32:
    case XDEV_DTYPE_FLOAT64:
    case XDEV_DTYPE_INT32:
    case XDEV_DTYPE_INT64:
    case XDEV_DTYPE_UINT8:
    case XDEV_DTYPE_INT8: return true;
    default: return false;
  }
}

}  // namespace

struct CollectiveGroup::Shared {
  std::atomic<int32_t> joined;
  std::atomic<int32_t> aborted_by_plus_one;  // 0: not aborted
  alignas(64) RankSlot ranks[kMaxRanks];
};

Failure collective_sizes(const CollectiveArgs& args, int32_t nranks, uint64_t* send_bytes,
                         uint64_t* recv_bytes) {
  const size_t item = xdev_plugin_dtype_size(args.dtype);
  if (item == 0) {
    return make_failure(XDEV_STATUS_INVALID_ARGUMENT, "collective: dtype %d is no dtype",
                        static_cast<int>(args.dtype));
  }
  const bool reduces =
      args.kind == XDEV_COLLECTIVE_ALL_REDUCE || args.kind == XDEV_COLLECTIVE_REDUCE_SCATTER;
  if (reduces && (args.op < XDEV_REDUCE_SUM || args.op > XDEV_REDUCE_MIN)) {
    return make_failure(XDEV_STATUS_INVALID_ARGUMENT, "collective: reduce op %d is none of SUM, "
                        "MAX, MIN", static_cast<int>(args.op));
  }
  if (reduces && !reducible(args.dtype)) {
    return make_failure(XDEV_STATUS_UNIMPLEMENTED, "collective: the sim does not reduce %s",
                        dtype_name(args.dtype).c_str());
  }
  uint64_t one = 0, all = 0;
  if (__builtin_mul_overflow(args.count, item, &one) ||
      __builtin_mul_overflow(one, static_cast<uint64_t>(nranks), &all)) {
    return make_failure(XDEV_STATUS_INVALID_ARGUMENT,
                        "collective: %" PRIu64 " elements of %s overflow", args.count,
                        dtype_name(args.dtype).c_str());
  }
  switch (args.kind) {
    case XDEV_COLLECTIVE_ALL_REDUCE:
    case XDEV_COLLECTIVE_BROADCAST: *send_bytes = *recv_bytes = one; break;
    case XDEV_COLLECTIVE_ALL_GATHER: *send_bytes = one, *recv_bytes = all; break;
    case XDEV_COLLECTIVE_REDUCE_SCATTER: *send_bytes = all, *recv_bytes = one; break;
    default:
      return make_failure(XDEV_STATUS_UNIMPLEMENTED, "collective: kind %d is not one of ABI 1.7",
                          static_cast<int>(args.kind));
  }
  if (args.kind == XDEV_COLLECTIVE_BROADCAST && (args.root < 0 || args.root >= nranks)) {
    return make_failure(XDEV_STATUS_INVALID_ARGUMENT, "collective: broadcast root %d is no rank "
                        "of %d", static_cast<int>(args.root), static_cast<int>(nranks));
  }
  return {};
}

Failure CollectiveGroup::make_id(uint8_t* id, size_t capacity, size_t* out_size) {
  const size_t size = kIdPrefixSize + kIdRandomBytes;
  if (capacity < size) {
    return make_failure(XDEV_STATUS_INVALID_ARGUMENT, "collective_id: %zu bytes of room, %zu needed",
                        capacity, size);
  }
  std::memcpy(id, kIdPrefix, kIdPrefixSize);
  std::random_device random;
  for (size_t i = 0; i < kIdRandomBytes; ++i) id[kIdPrefixSize + i] = static_cast<uint8_t>(random());
  *out_size = size;
  return {};
}

Failure CollectiveGroup::join(const uint8_t* id, size_t id_size, int32_t nranks, int32_t count,
                              std::chrono::milliseconds timeout,
                              std::shared_ptr<CollectiveGroup>* out) {
  if (id == nullptr || id_size != kIdPrefixSize + kIdRandomBytes ||
      std::memcmp(id, kIdPrefix, kIdPrefixSize) != 0) {
    return make_failure(XDEV_STATUS_INVALID_ARGUMENT,
                        "communicator_create: the id (%zu bytes) is not one of the sim's "
                        "collective_id", id_size);
  }
  if (nranks < 1 || nranks > kMaxRanks || count < 1 || count > nranks) {
    return make_failure(XDEV_STATUS_INVALID_ARGUMENT,
                        "communicator_create: %d ranks of %d (the sim takes 1 to %d)",
                        static_cast<int>(count), static_cast<int>(nranks),
                        static_cast<int>(kMaxRanks));
  }
  const std::string name = segment_name(id, id_size);
  const size_t header = (sizeof(Shared) + 4095) / 4096 * 4096;
  const size_t size = header + static_cast<size_t>(nranks) * kAreaBytes;
  const int fd = shm_open(name.c_str(), O_CREAT | O_RDWR, 0600);
  if (fd < 0) {
    return make_failure(XDEV_STATUS_UNAVAILABLE, "communicator_create: shm_open(%s): %s",
                        name.c_str(), std::strerror(errno));
  }
  if (ftruncate(fd, static_cast<off_t>(size)) != 0) {
    const int error = errno;
    close(fd);
    shm_unlink(name.c_str());
    return make_failure(XDEV_STATUS_UNAVAILABLE, "communicator_create: ftruncate(%s, %zu): %s",
                        name.c_str(), size, std::strerror(error));
  }
  void* mapping = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  if (mapping == MAP_FAILED) {
    shm_unlink(name.c_str());
    return make_failure(XDEV_STATUS_UNAVAILABLE, "communicator_create: mmap(%s): %s",
                        name.c_str(), std::strerror(errno));
  }
  std::shared_ptr<CollectiveGroup> group(new CollectiveGroup(mapping, size, nranks));
  Shared& shared = *group->shared_;
  shared.joined.fetch_add(count, std::memory_order_acq_rel);
  const auto until = std::chrono::steady_clock::now() + timeout;
  while (shared.joined.load(std::memory_order_acquire) < nranks) {
    if (std::chrono::steady_clock::now() > until) {
      const int joined = shared.joined.load();
      shm_unlink(name.c_str());
      return make_failure(XDEV_STATUS_UNAVAILABLE,
                          "communicator_create: %d of %d ranks joined within %lld ms", joined,
                          static_cast<int>(nranks), static_cast<long long>(timeout.count()));
    }
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  shm_unlink(name.c_str());  // every rank has it mapped; the name may go (ENOENT is fine)
  *out = std::move(group);
  return {};
}

CollectiveGroup::CollectiveGroup(void* mapping, size_t size, int32_t nranks)
    : mapping_(mapping),
      size_(size),
      nranks_(nranks),
      shared_(static_cast<Shared*>(mapping)) {}

CollectiveGroup::~CollectiveGroup() { munmap(mapping_, size_); }

std::byte* CollectiveGroup::area(int32_t rank) const noexcept {
  const size_t header = (sizeof(Shared) + 4095) / 4096 * 4096;
  return static_cast<std::byte*>(mapping_) + header + static_cast<size_t>(rank) * kAreaBytes;
}

void CollectiveGroup::abort(int32_t rank) noexcept {
  int32_t none = 0;
  shared_->aborted_by_plus_one.compare_exchange_strong(none, rank + 1);
}

int32_t CollectiveGroup::aborted_by() const noexcept {
  return shared_->aborted_by_plus_one.load(std::memory_order_acquire) - 1;
}

Failure CollectiveGroup::wait_all(bool arrived, uint64_t round,
                                  const std::atomic<bool>& aborted) const {
  for (int32_t q = 0; q < nranks_; ++q) {
    const std::atomic<uint64_t>& field = arrived ? shared_->ranks[q].arrived : shared_->ranks[q].left;
    for (uint32_t spins = 0; field.load(std::memory_order_acquire) < round; ++spins) {
      if (aborted.load(std::memory_order_relaxed)) {
        return make_failure(XDEV_STATUS_UNAVAILABLE,
                            "collective: the communicator was aborted while rank %d was awaited",
                            static_cast<int>(q));
      }
      if (const int32_t by = aborted_by(); by >= 0) {
        return make_failure(XDEV_STATUS_UNAVAILABLE, "collective: rank %d aborted the group",
                            static_cast<int>(by));
      }
      // Spin briefly, then give the core away (ranks may share cores).
      if (spins < 64) {
        std::this_thread::yield();
      } else {
        std::this_thread::sleep_for(std::chrono::microseconds(50));
      }
    }
  }
  return {};
}

Failure CollectiveGroup::run(int32_t rank, const CollectiveArgs& args, uint64_t* round,
                             const std::atomic<bool>& aborted) {
  const uint64_t item = xdev_plugin_dtype_size(args.dtype);
  const uint64_t n = static_cast<uint64_t>(nranks_);
  // Elements per round: each rank's area holds one chunk (reduce-scatter:
  // one chunk per target rank).
  const uint64_t per_round = args.kind == XDEV_COLLECTIVE_REDUCE_SCATTER
                                 ? std::max<uint64_t>(1, kAreaBytes / (item * n))
                                 : kAreaBytes / item;
  std::byte* mine = area(rank);
  for (uint64_t offset = 0; offset < args.count; offset += per_round) {
    const uint64_t e = std::min(per_round, args.count - offset);
    const uint64_t bytes = e * item;
    const uint64_t s = ++*round;
    switch (args.kind) {  // copy in
      case XDEV_COLLECTIVE_REDUCE_SCATTER:
        for (uint64_t b = 0; b < n; ++b) {
          std::memcpy(mine + b * bytes, args.send + (b * args.count + offset) * item, bytes);
        }
        break;
      case XDEV_COLLECTIVE_BROADCAST:
        if (rank == args.root) std::memcpy(mine, args.send + offset * item, bytes);
        break;
      default: std::memcpy(mine, args.send + offset * item, bytes); break;
    }
    shared_->ranks[rank].arrived.store(s, std::memory_order_release);
    if (Failure failure = wait_all(/*arrived=*/true, s, aborted)) return failure;
    switch (args.kind) {  // this rank's result from every area
      case XDEV_COLLECTIVE_ALL_REDUCE: {
        std::byte* out = args.recv + offset * item;
        std::memcpy(out, area(0), bytes);
        for (int32_t q = 1; q < nranks_; ++q) reduce_bytes(args.dtype, args.op, out, area(q), e);
        break;
      }
      case XDEV_COLLECTIVE_REDUCE_SCATTER: {
        std::byte* out = args.recv + offset * item;
        const uint64_t block = static_cast<uint64_t>(rank) * bytes;
        std::memcpy(out, area(0) + block, bytes);
        for (int32_t q = 1; q < nranks_; ++q) {
          reduce_bytes(args.dtype, args.op, out, area(q) + block, e);
        }
        break;
      }
      case XDEV_COLLECTIVE_BROADCAST:
        std::memcpy(args.recv + offset * item, area(args.root), bytes);
        break;
      case XDEV_COLLECTIVE_ALL_GATHER:
        for (int32_t q = 0; q < nranks_; ++q) {
          std::memcpy(args.recv + (static_cast<uint64_t>(q) * args.count + offset) * item,
                      area(q), bytes);
        }
        break;
      default: break;
    }
    shared_->ranks[rank].left.store(s, std::memory_order_release);
    if (Failure failure = wait_all(/*arrived=*/false, s, aborted)) return failure;
  }
  return {};
}

}  // namespace xdev::sim
