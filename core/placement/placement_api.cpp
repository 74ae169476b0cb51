// Scopes, placement flags, counters and placement records.
#include <array>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <tuple>
#include <unordered_map>

#include <xdev/placement.hpp>

#include "devices/logical_device.hpp"
#include "common/env.hpp"
#include "common/log.hpp"
#include "placement/placement_state.hpp"
#include "devices/runtime.hpp"
#include "placement/thread_state.hpp"

namespace xdev {
namespace detail {
namespace {


std::atomic<uint64_t> g_generation{1};
std::atomic<bool> g_soft{true};

std::atomic<bool> g_log{env::log_device_placement()};
std::atomic<FallbackPolicy> g_fallback{env::fallback_policy()};

struct Counters {
  std::mutex mutex;
  std::map<std::pair<std::string, std::string>, std::pair<uint64_t, uint64_t>> pairs;
  std::atomic<uint64_t> implicit_copies{0}, implicit_bytes{0};
  std::atomic<uint64_t> explicit_copies{0}, explicit_bytes{0};
  std::atomic<uint64_t> read_backs{0}, read_back_bytes{0};
  std::atomic<uint64_t> fallbacks{0}, soft_placements{0};
  // Ops that fell back, by decision (kept for the life of the process):
  // summed by missing kernel when read.
  std::unordered_map<const Decision*, uint64_t> fallbacks_by_decision;
};
Counters& counters() {
  static Counters* c = new Counters;
  return *c;
}

using Ring = PlacementRing;

std::mutex g_callback_mutex;
std::function<void(const PlacementRecord&)> g_callback;
std::atomic<bool> g_callback_set{false};

PlacementRecord to_record(const Decision& d, uint64_t bytes) {
  return PlacementRecord{d.op, d.device->name(), d.requested, d.rule, d.rejected, bytes};
}

}  // namespace

thread_local ThreadState* t_thread_state __attribute__((tls_model("initial-exec"))) = nullptr;

namespace {

// Thread affinity of scopes (docs/user-guide.md, "Scopes belong to their
// thread"). Every thread's state has a serial number that is never reused; a
// scope remembers its thread's serial and its own id. A scope destroyed on
// another thread leaves both threads' stacks alone: it logs an error and hands
// its id to its thread (if alive), whose next placement call removes the entry
// and throws Error(kFailedPrecondition) once.
struct AffinityRegistry {
  std::mutex mutex;
  std::map<uint64_t, ThreadState*> live;  // serial -> state, threads alive
};
AffinityRegistry& affinity() {
  static AffinityRegistry* r = new AffinityRegistry;
  return *r;
}
std::atomic<uint64_t> g_next_serial{1};
std::atomic<uint64_t> g_next_scope_id{1};

// Owns the state and frees it at thread exit (touched once per thread).
struct ThreadStateOwner {
  ThreadState* state = nullptr;
  ~ThreadStateOwner() {
    if (state != nullptr) {
      std::lock_guard lock(affinity().mutex);
      affinity().live.erase(state->serial);
    }
    t_thread_state = nullptr;
    delete state;
  }
};
thread_local ThreadStateOwner t_owner;

std::string thread_text(uint64_t serial) { return "thread #" + std::to_string(serial); }

// Removes the entries of this thread that other threads destroyed. Returns
// the message for them ("" when none).
std::string reap_abandoned(ThreadState& state) {
  std::vector<uint64_t> ids;
  {
    std::lock_guard lock(affinity().mutex);
    ids.swap(state.abandoned);
    state.has_abandoned.store(false, std::memory_order_relaxed);
  }
  std::string message;
  for (uint64_t id : ids) {
    std::string what;
    for (auto it = state.scopes.begin(); it != state.scopes.end(); ++it) {
      if (it->id == id) {
        what = "DeviceScope(\"" + it->text + "\")";
        state.scopes.erase(it);
        break;
      }
    }
    for (auto it = state.stricts.begin(); it != state.stricts.end(); ++it) {
      if (it->id == id) {
        what = "StrictPlacement";
        state.stricts.erase(it);
        state.strict = !state.stricts.empty() && state.stricts.back().strict;
        break;
      }
    }
    if (what.empty()) continue;
    if (!message.empty()) message += "; ";
    message += what + " made on this thread (" + thread_text(state.serial) +
               ") was destroyed on another thread";
  }
  return message;
}

// This thread's state, after removing abandoned entries; throws when there
// were some and `may_throw`.
ThreadState& checked_state(bool may_throw) {
  ThreadState& state = thread_state();
  if (__builtin_expect(state.has_abandoned.load(std::memory_order_relaxed), 0)) {
    std::string message = reap_abandoned(state);
    if (!message.empty() && may_throw) {
      throw Error(ErrorCode::kFailedPrecondition,
                  message + " (scopes belong to the thread that made them; the entry has "
                            "been removed from this thread's stack)");
    }
  }
  return state;
}

// Called by a scope's destructor on a thread that is not its own.
void abandon(uint64_t owner_serial, uint64_t id, const std::string& what) {
  ThreadState& here = thread_state();
  std::lock_guard lock(affinity().mutex);
  auto it = affinity().live.find(owner_serial);
  log(XDEV_LOG_ERROR,
      what + " made on " + thread_text(owner_serial) + " was destroyed on " +
          thread_text(here.serial) + "; scopes belong to the thread that made them. " +
          (it == affinity().live.end()
               ? std::string("That thread has exited; nothing changed.")
               : "Neither thread's stack was touched here; " + thread_text(owner_serial) +
                     " drops the scope and throws at its next placement call."));
  if (it == affinity().live.end()) return;
  it->second->abandoned.push_back(id);
  it->second->has_abandoned.store(true, std::memory_order_relaxed);
}

}  // namespace

ThreadState* create_thread_state() {
  auto* state = new ThreadState;
  state->serial = g_next_serial.fetch_add(1, std::memory_order_relaxed);
  {
    std::lock_guard lock(affinity().mutex);
    affinity().live[state->serial] = state;
  }
  t_owner.state = state;
  t_thread_state = state;
  return state;
}

ScopeEntry* current_scope() {
  auto& scopes = checked_state(true).scopes;
  return scopes.empty() ? nullptr : &scopes.back();
}
bool strict_placement() { return checked_state(true).strict; }
uint64_t placement_generation() { return g_generation.load(std::memory_order_acquire); }
void bump_placement_generation() { g_generation.fetch_add(1, std::memory_order_acq_rel); }
bool log_placement_enabled() { return g_log.load(std::memory_order_relaxed); }

void log_placement(std::string_view op, const std::string& device) {
  std::string line = "Executing op ";
  line += op;
  line += " in device ";
  line += device;
  log_raw(line);
}

void count_implicit_copy(const std::string& from, const std::string& to, uint64_t bytes) {
  Counters& c = counters();
  c.implicit_copies.fetch_add(1, std::memory_order_relaxed);
  c.implicit_bytes.fetch_add(bytes, std::memory_order_relaxed);
  std::lock_guard lock(c.mutex);
  auto& entry = c.pairs[{from, to}];
  entry.first += 1;
  entry.second += bytes;
}
void count_explicit_copy(uint64_t bytes) {
  counters().explicit_copies.fetch_add(1, std::memory_order_relaxed);
  counters().explicit_bytes.fetch_add(bytes, std::memory_order_relaxed);
}
void count_read_back(uint64_t bytes) {
  counters().read_backs.fetch_add(1, std::memory_order_relaxed);
  counters().read_back_bytes.fetch_add(bytes, std::memory_order_relaxed);
}
void count_fallback(const Decision& decision) {
  Counters& c = counters();
  c.fallbacks.fetch_add(1, std::memory_order_relaxed);
  std::lock_guard lock(c.mutex);
  ++c.fallbacks_by_decision[&decision];
}
void count_soft_placement() {
  counters().soft_placements.fetch_add(1, std::memory_order_relaxed);
}

void record_placement(const Decision* decision, uint64_t bytes_copied) {
  Ring& ring = thread_state().ring;
  ring.items[ring.next] = {decision, bytes_copied};
  ring.next = (ring.next + 1) % Ring::kSize;
  if (ring.count < Ring::kSize) ++ring.count;
  if (g_callback_set.load(std::memory_order_relaxed)) {
    std::function<void(const PlacementRecord&)> callback;
    {
      std::lock_guard lock(g_callback_mutex);
      callback = g_callback;
    }
    if (callback) callback(to_record(*decision, bytes_copied));
  }
}

bool placement_callback_set() { return g_callback_set.load(std::memory_order_relaxed); }

}  // namespace detail

DeviceScope::DeviceScope(std::string_view device) {
  detail::ScopeEntry entry;
  entry.text = std::string(device);
  entry.name = DeviceName::parse(device);
  detail::ThreadState& state = detail::checked_state(true);
  entry.id = detail::g_next_scope_id.fetch_add(1, std::memory_order_relaxed);
  id_ = entry.id;
  thread_ = state.serial;
  state.scopes.push_back(std::move(entry));
}

DeviceScope::DeviceScope(const Device& device) : DeviceScope(std::string_view(device.name)) {}

DeviceScope::~DeviceScope() {
  detail::ThreadState& state = detail::checked_state(false);
  if (state.serial != thread_) {
    detail::abandon(thread_, id_, "DeviceScope #" + std::to_string(id_));
    return;
  }
  auto& scopes = state.scopes;
  if (!scopes.empty() && scopes.back().id == id_) {
    scopes.pop_back();
    return;
  }
  // Destroyed out of order (e.g. held by a smart pointer): remove this one.
  for (auto it = scopes.begin(); it != scopes.end(); ++it) {
    if (it->id == id_) {
      detail::log(XDEV_LOG_ERROR, "DeviceScope(\"" + it->text +
                                      "\") destroyed before the scopes made after it; "
                                      "scopes nest (innermost first)");
      scopes.erase(it);
      return;
    }
  }
}

StrictPlacement::StrictPlacement(bool strict) {
  detail::ThreadState& state = detail::checked_state(true);
  id_ = detail::g_next_scope_id.fetch_add(1, std::memory_order_relaxed);
  thread_ = state.serial;
  state.stricts.push_back({id_, strict});
  state.strict = strict;
}

StrictPlacement::~StrictPlacement() {
  detail::ThreadState& state = detail::checked_state(false);
  if (state.serial != thread_) {
    detail::abandon(thread_, id_, "StrictPlacement #" + std::to_string(id_));
    return;
  }
  for (auto it = state.stricts.end(); it != state.stricts.begin();) {
    --it;
    if (it->id == id_) {
      state.stricts.erase(it);
      break;
    }
  }
  state.strict = !state.stricts.empty() && state.stricts.back().strict;
}

void set_log_device_placement(bool enabled) { detail::g_log.store(enabled); }
bool log_device_placement() { return detail::g_log.load(); }

void set_soft_device_placement(bool enabled) {
  detail::g_soft.store(enabled);
  detail::bump_placement_generation();
}
bool soft_device_placement() { return detail::g_soft.load(); }

void set_fallback_policy(FallbackPolicy policy) {
  if (policy != FallbackPolicy::kWarn && policy != FallbackPolicy::kError) {
    throw Error(ErrorCode::kInvalidArgument,
                "set_fallback_policy: " + std::to_string(static_cast<int>(policy)) +
                    " is not a FallbackPolicy (kWarn or kError)");
  }
  detail::g_fallback.store(policy);
  detail::bump_placement_generation();  // cached fallbacks are decided again
}
FallbackPolicy fallback_policy() { return detail::g_fallback.load(); }

PlacementCounters placement_counters() {
  detail::Counters& c = detail::counters();
  PlacementCounters out;
  out.implicit_copies = c.implicit_copies.load();
  out.implicit_copy_bytes = c.implicit_bytes.load();
  out.explicit_copies = c.explicit_copies.load();
  out.explicit_copy_bytes = c.explicit_bytes.load();
  out.read_backs = c.read_backs.load();
  out.read_back_bytes = c.read_back_bytes.load();
  out.fallbacks = c.fallbacks.load();
  out.soft_placements = c.soft_placements.load();
  std::lock_guard lock(c.mutex);
  for (const auto& [pair, value] : c.pairs) {
    out.implicit_copies_by_pair.push_back({pair.first, pair.second, value.first, value.second});
  }
  // Decisions that differ in what else they record (rejected devices, the
  // scope) may share a missing kernel: one entry each.
  std::map<std::tuple<std::string, DType, DType, std::string, std::string>, uint64_t> by_kernel;
  for (const auto& [d, ops] : c.fallbacks_by_decision) {
    by_kernel[{d->op, d->input, d->output, d->missing_kernel->name(), d->device->name()}] += ops;
  }
  for (const auto& [k, ops] : by_kernel) {
    const auto& [op, input, output, device, ran_on] = k;
    out.fallbacks_by_kernel.push_back({op, input, output, device, ran_on, ops});
  }
  return out;
}

void reset_placement_counters() {
  detail::Counters& c = detail::counters();
  std::lock_guard lock(c.mutex);
  c.pairs.clear();
  c.fallbacks_by_decision.clear();
  for (auto* a : {&c.implicit_copies, &c.implicit_bytes, &c.explicit_copies, &c.explicit_bytes,
                  &c.read_backs, &c.read_back_bytes, &c.fallbacks, &c.soft_placements}) {
    a->store(0);
  }
}

std::vector<PlacementRecord> recent_placements() {
  const detail::Ring& ring = detail::thread_state().ring;
  std::vector<PlacementRecord> out;
  size_t start = (ring.next + detail::Ring::kSize - ring.count) % detail::Ring::kSize;
  for (size_t i = 0; i < ring.count; ++i) {
    const auto& [decision, bytes] = ring.items[(start + i) % detail::Ring::kSize];
    out.push_back(detail::to_record(*decision, bytes));
  }
  return out;
}

void clear_recent_placements() {
  detail::thread_state().ring.count = 0;
  detail::thread_state().ring.next = 0;
}

void set_placement_callback(std::function<void(const PlacementRecord&)> callback) {
  std::lock_guard lock(detail::g_callback_mutex);
  detail::g_callback_set.store(static_cast<bool>(callback));
  detail::g_callback = std::move(callback);
}

}  // namespace xdev
