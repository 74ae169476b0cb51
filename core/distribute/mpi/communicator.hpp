// The transport between workers: one MPI communicator whose collectives run
// on host buffers as non-blocking MPI calls, polled against a deadline
// (XDEV_COLLECTIVE_TIMEOUT_S), after a header exchange that checks every
// worker called the same collective on the same shape and dtype.
#pragma once

#include <mpi.h>

#include <chrono>
#include <functional>
#include <cstdint>
#include <string>
#include <vector>

#include <xdev/distribute.hpp>
#include <xdev/tensor.hpp>

namespace xdev::mpi {

enum class Collective : int32_t { kAllReduce = 1, kBroadcast, kAllGather, kReduceScatter, kBarrier };

// What one worker is about to do; every worker must describe the same thing.
struct CallInfo {
  Collective kind = Collective::kBarrier;
  ReduceOp op = ReduceOp::kSum;
  DType dtype = DType::kFloat32;
  Shape shape;
  int root = 0;
  std::string name;
};

struct Settings {
  std::chrono::milliseconds timeout{60000};  // XDEV_COLLECTIVE_TIMEOUT_S
  uint64_t chunk_bytes = 8u << 20;           // XDEV_COLLECTIVE_CHUNK_MIB
  int depth = 4;                             // chunks in flight
  bool device_collectives = true;            // XDEV_DEVICE_COLLECTIVES (0: the host path)
  static Settings from_environment();        // warnings go to stderr
};

class Communicator {
 public:
  // Ranks ordered by `key` (the task index); errors are returned, never fatal.
  Communicator(MPI_Comm parent, int key, Settings settings);
  ~Communicator();
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  const Settings& settings() const { return settings_; }
  // Labels for error messages ("task 1 (/job:worker/replica:0/task:1 on vm)").
  void set_task_labels(std::vector<std::string> labels) { labels_ = std::move(labels); }
  bool broken() const { return broken_; }

  // Exchanges `call` with every worker; throws xdev::Error(kInvalidArgument)
  // on every worker alike when they disagree, naming the tensor and shapes.
  void agree(const CallInfo& call);

  // `bytes` of host memory from `send` into `recv` (the same pointer: in
  // place); chunked, `settings().depth` chunks in flight.
  void all_reduce(const void* send, void* recv, uint64_t bytes, DType dtype, ReduceOp op,
                  const CallInfo& call);
  void broadcast(void* data, uint64_t bytes, int root, const CallInfo& call);
  void all_gather(const void* send, void* recv, uint64_t bytes_each, const CallInfo& call);
  // `send` holds size() blocks of `count_each` elements; block r's sum lands in `recv` of rank r.
  void reduce_scatter(const void* send, void* recv, uint64_t count_each, DType dtype,
                      ReduceOp op, const CallInfo& call);
  void barrier(const CallInfo& call);

  // Waits until `done()` (a device collective's poll) returns true, against
  // the same deadline as MPI's requests. On expiry, or when `done` throws
  // (the plugin's asynchronous error), `abort()` runs first (the device
  // communicators), then the liveness probe names the lost tasks and this
  // throws; the communicator is broken from then on.
  void wait_until(const std::function<bool()>& done, const std::function<void()>& abort,
                  const CallInfo& call);

  // Gathers one fixed-size string per rank (host names); blocking, at start-up.
  std::vector<std::string> gather_strings(const std::string& mine);

 private:
  // Waits for `requests` (oldest first) until each is done; no progress for
  // settings().timeout: probes which workers still answer and throws.
  void wait(MPI_Request* requests, int count, const CallInfo& call);
  // The deadline loop behind both waits: polls `done` until true; `where`
  // ends the timeout's message.
  void poll_until(const std::function<bool()>& done, const std::function<void()>& abort,
                  const CallInfo& call, const char* where);
  [[noreturn]] void fail(const CallInfo& call, const std::string& why);
  std::string label(int rank) const;

  MPI_Comm comm_ = MPI_COMM_NULL;
  MPI_Comm probe_comm_ = MPI_COMM_NULL;  // the liveness probe after a timeout
  int rank_ = 0;
  int size_ = 1;
  Settings settings_;
  std::vector<std::string> labels_;
  bool broken_ = false;
};

// True once a collective of any communicator failed (timeout or MPI error):
// requests to a lost worker stay pending, so MPI must not be finalized.
bool any_collective_failed();

// Throws xdev::Error(kInvalidArgument) on every worker alike when `dtype`
// cannot be reduced (bool, as inside one process).
void check_reducible(DType dtype, const CallInfo& call);

// "all_reduce SUM of 'grad/w' (3, 1) float32": a call in messages.
std::string describe(const CallInfo& call);
std::string_view collective_name(Collective kind);

}  // namespace xdev::mpi
