// Device collectives of the sim plugin (ABI 1.7, XDEV_CAP_COLLECTIVES) over
// POSIX shared memory: the ranks of one group, in one process or many on
// this host, meet in a segment named after the group's id. Each rank has a
// staging area there; a collective runs in rounds of at most one area per
// rank, on the rank's stream worker: copy in, wait for every rank, compute
// this rank's result from all areas (reductions in rank order, so every rank
// gets the same bits), wait until every rank has read, next round.
#pragma once

#include <xdev/plugin.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "common.hpp"

namespace xdev::sim {

// One rank's part of one collective, on host pointers (resolved from the
// device's arena by the caller).
struct CollectiveArgs {
  int32_t kind = 0;  // xdev_collective_kind_t
  int32_t op = 0;    // xdev_reduce_op_t
  xdev_dtype_t dtype = XDEV_DTYPE_INVALID;
  int32_t root = 0;
  const std::byte* send = nullptr;
  std::byte* recv = nullptr;
  uint64_t count = 0;
};

// The bytes a rank sends and receives for `args` among `nranks`, or a
// failure for a kind, op or dtype the sim does not run, or an overflow.
Failure collective_sizes(const CollectiveArgs& args, int32_t nranks, uint64_t* send_bytes,
                         uint64_t* recv_bytes);

class CollectiveGroup {
 public:
  // Bytes of each rank's staging area (a collective runs in rounds of this).
  static constexpr uint64_t kAreaBytes = uint64_t{1} << 20;
  static constexpr int32_t kMaxRanks = 256;

  // A new id: "sim-collectives-1" and 16 random bytes.
  static Failure make_id(uint8_t* id, size_t capacity, size_t* out_size);
  // Maps the group's segment and counts `count` ranks of this process in;
  // returns once all `nranks` joined, or UNAVAILABLE after `timeout`.
  static Failure join(const uint8_t* id, size_t id_size, int32_t nranks, int32_t count,
                      std::chrono::milliseconds timeout, std::shared_ptr<CollectiveGroup>* out);
  ~CollectiveGroup();
  CollectiveGroup(const CollectiveGroup&) = delete;
  CollectiveGroup& operator=(const CollectiveGroup&) = delete;

  int32_t nranks() const noexcept { return nranks_; }
  // Runs `args` as rank `rank`: blocks until every rank took part. `round`
  // is the rank's round counter (its worker's only). Gives up when
  // `aborted` is set or any rank aborted the group.
  Failure run(int32_t rank, const CollectiveArgs& args, uint64_t* round,
              const std::atomic<bool>& aborted);
  // Marks the group aborted by `rank`: every rank's waits give up.
  void abort(int32_t rank) noexcept;
  // The rank that aborted the group, or -1.
  int32_t aborted_by() const noexcept;

 private:
  struct Shared;
  CollectiveGroup(void* mapping, size_t size, int32_t nranks);
  // Waits until every rank's `field` (arrived or left) reached `round`.
  Failure wait_all(bool arrived, uint64_t round, const std::atomic<bool>& aborted) const;
  std::byte* area(int32_t rank) const noexcept;

  void* mapping_;
  size_t size_;
  int32_t nranks_;
  Shared* shared_;
};

}  // namespace xdev::sim
