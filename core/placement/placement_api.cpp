// Scopes, placement flags, counters and placement records.
#include <array>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>

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

struct Counters {
  std::mutex mutex;
  std::map<std::pair<std::string, std::string>, std::pair<uint64_t, uint64_t>> pairs;
  std::atomic<uint64_t> implicit_copies{0}, implicit_bytes{0};
  std::atomic<uint64_t> explicit_copies{0}, explicit_bytes{0};
  std::atomic<uint64_t> read_backs{0}, read_back_bytes{0};
  std::atomic<uint64_t> fallbacks{0}, soft_placements{0};
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
// Owns the state and frees it at thread exit (touched once per thread).
struct ThreadStateOwner {
  ThreadState* state = nullptr;
  ~ThreadStateOwner() {
    t_thread_state = nullptr;
    delete state;
  }
};
thread_local ThreadStateOwner t_owner;
}  // namespace

ThreadState* create_thread_state() {
  t_owner.state = new ThreadState;
  t_thread_state = t_owner.state;
  return t_owner.state;
}

ScopeEntry* current_scope() {
  auto& scopes = thread_state().scopes;
  return scopes.empty() ? nullptr : &scopes.back();
}
bool strict_placement() { return thread_state().strict; }
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
void count_fallback() { counters().fallbacks.fetch_add(1, std::memory_order_relaxed); }
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
  detail::thread_state().scopes.push_back(std::move(entry));
}

DeviceScope::DeviceScope(const Device& device) : DeviceScope(std::string_view(device.name)) {}

DeviceScope::~DeviceScope() { detail::thread_state().scopes.pop_back(); }

StrictPlacement::StrictPlacement(bool strict) : previous_(detail::thread_state().strict) {
  detail::thread_state().strict = strict;
}
StrictPlacement::~StrictPlacement() { detail::thread_state().strict = previous_; }

void set_log_device_placement(bool enabled) { detail::g_log.store(enabled); }
bool log_device_placement() { return detail::g_log.load(); }

void set_soft_device_placement(bool enabled) {
  detail::g_soft.store(enabled);
  detail::bump_placement_generation();
}
bool soft_device_placement() { return detail::g_soft.load(); }

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
  return out;
}

void reset_placement_counters() {
  detail::Counters& c = detail::counters();
  std::lock_guard lock(c.mutex);
  c.pairs.clear();
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
