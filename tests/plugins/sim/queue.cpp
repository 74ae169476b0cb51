#include "queue.hpp"

#include <exception>
#include <new>
#include <utility>

namespace xdev::sim {
namespace {

// The exception being handled, as a Failure. Never throws: when even the
// message cannot be built, the failure keeps its code and loses its text.
Failure describe_exception(const std::string& label) noexcept {
  Failure failure{XDEV_STATUS_INTERNAL, {}};
  try {
    throw;
  } catch (const std::bad_alloc&) {
    failure.code = XDEV_STATUS_OUT_OF_MEMORY;
  } catch (...) {
  }
  try {
    try {
      throw;
    } catch (const std::bad_alloc&) {
      failure.message = label + ": out of host memory";
    } catch (const std::exception& error) {
      failure.message = label + ": unexpected error: " + error.what();
    } catch (...) {
      failure.message = label + ": unexpected unknown exception";
    }
  } catch (...) {
  }
  return failure;
}

}  // namespace

void Mark::complete() {
  {
    std::lock_guard lock(mutex_);
    completed_at_ = std::chrono::steady_clock::now();
    done_ = true;
  }
  completed_.notify_all();
}

std::chrono::steady_clock::time_point Mark::completed_at() const {
  std::lock_guard lock(mutex_);
  return completed_at_;
}

bool Mark::done() const {
  std::lock_guard lock(mutex_);
  return done_;
}

void Mark::wait() const {
  std::unique_lock lock(mutex_);
  completed_.wait(lock, [this] { return done_; });
}

WorkQueue::WorkQueue(std::string label, std::chrono::microseconds delay)
    : label_(std::move(label)), delay_(delay), worker_([this] { run(); }) {}

WorkQueue::~WorkQueue() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  work_ready_.notify_all();
  worker_.join();
}

void WorkQueue::enqueue(Work work, bool delayed) {
  {
    std::lock_guard lock(mutex_);
    items_.push_back(Item{std::move(work), delayed});
    ++enqueued_;
  }
  work_ready_.notify_one();
}

Failure WorkQueue::synchronize() {
  std::unique_lock lock(mutex_);
  const uint64_t target = enqueued_;
  work_done_.wait(lock, [&] { return completed_ >= target; });
  return std::exchange(first_failure_, Failure{});
}

void WorkQueue::run() {
  for (;;) {
    Item item;
    {
      std::unique_lock lock(mutex_);
      work_ready_.wait(lock, [this] { return stopping_ || !items_.empty(); });
      if (items_.empty()) return;  // stopping, and everything ran
      item = std::move(items_.front());
      items_.pop_front();
    }
    if (item.delayed && delay_.count() > 0) std::this_thread::sleep_for(delay_);
    Failure failure;
    try {
      failure = item.work();
    } catch (...) {
      failure = describe_exception(label_);
    }
    item.work = nullptr;  // release what the work captured before it counts as done
    {
      std::lock_guard lock(mutex_);
      if (failure && !first_failure_) first_failure_ = std::move(failure);
      ++completed_;
    }
    work_done_.notify_all();
  }
}

}  // namespace xdev::sim
