// Asynchronous execution for the simulated accelerator: one worker thread
// per stream runs the stream's work in enqueue order, and marks (what an
// event records) complete when their stream reaches them.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "common.hpp"

namespace xdev::sim {

// A point in one stream. Shared between the event that recorded it, the
// stream that completes it, and streams or hosts waiting for it, so it
// outlives whichever of them goes first. Thread-safe.
class Mark {
 public:
  void complete();
  bool done() const;
  void wait() const;
  // ABI 1.4: when the worker reached the mark (valid once done()).
  std::chrono::steady_clock::time_point completed_at() const;

 private:
  mutable std::mutex mutex_;
  mutable std::condition_variable completed_;
  bool done_ = false;
  std::chrono::steady_clock::time_point completed_at_{};
};

// An in-order queue with its own worker thread.
class WorkQueue {
 public:
  // What runs on the worker. Returns a Failure to report it at the next
  // synchronize; must not throw (a throw becomes an INTERNAL failure).
  using Work = std::function<Failure()>;

  // `label` names the queue in failures; `delay` is slept before each item
  // enqueued with `delayed` set (XDEV_SIM_DELAY_US). Starts the worker.
  WorkQueue(std::string label, std::chrono::microseconds delay);
  // Runs what is still queued, then joins the worker.
  ~WorkQueue();
  WorkQueue(const WorkQueue&) = delete;
  WorkQueue& operator=(const WorkQueue&) = delete;

  // Appends work and returns at once. Thread-safe.
  void enqueue(Work work, bool delayed);
  // Blocks until everything enqueued before the call ran; returns (and
  // forgets) the first failure of the work run since the last call.
  Failure synchronize();

 private:
  struct Item {
    Work work;
    bool delayed;
  };

  void run();

  const std::string label_;
  const std::chrono::microseconds delay_;

  std::mutex mutex_;
  std::condition_variable work_ready_;  // items_ grew or stopping_ was set
  std::condition_variable work_done_;   // completed_ grew
  std::deque<Item> items_;
  uint64_t enqueued_ = 0;
  uint64_t completed_ = 0;
  bool stopping_ = false;
  Failure first_failure_;

  std::thread worker_;  // last: started once everything above exists
};

}  // namespace xdev::sim
