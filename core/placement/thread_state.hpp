// Per-thread placement state (scopes, strict mode, the placement cache, the
// ring of recent placements) in one heap block reached through a single
// initial-exec TLS pointer: the op hot path then never calls __tls_get_addr,
// which libxdev's ordinary thread_locals (global-dynamic model) would.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "placement/placement_state.hpp"

namespace xdev::detail {

struct Decision;

struct PlacementCacheSlot {
  uint64_t key = 0;
  uint64_t generation = 0;
  const Decision* decision = nullptr;
};

struct PlacementRing {
  static constexpr size_t kSize = 64;
  std::array<std::pair<const Decision*, uint64_t>, kSize> items{};
  size_t next = 0;
  size_t count = 0;
};

// One StrictPlacement on a thread's stack.
struct StrictEntry {
  uint64_t id = 0;
  bool strict = false;
};

struct ThreadState {
  uint64_t serial = 0;  // never reused: which thread a scope belongs to
  std::vector<ScopeEntry> scopes;
  std::vector<StrictEntry> stricts;
  bool strict = false;  // stricts.back().strict, or false
  std::array<PlacementCacheSlot, 256> cache{};
  PlacementRing ring;
  // Ids of this thread's scopes destroyed on other threads (guarded by the
  // affinity registry's mutex; placement_api.cpp).
  std::vector<uint64_t> abandoned;
  std::atomic<bool> has_abandoned{false};
};

extern thread_local ThreadState* t_thread_state __attribute__((tls_model("initial-exec")));

// Creates this thread's state (freed when the thread exits).
ThreadState* create_thread_state();

inline ThreadState& thread_state() {
  ThreadState* state = t_thread_state;
  if (__builtin_expect(state == nullptr, 0)) state = create_thread_state();
  return *state;
}

}  // namespace xdev::detail
