// Process-wide and per-thread placement state: scopes, flags, counters and
// the record of recent placements (see <xdev/placement.hpp>).
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <xdev/device.hpp>
#include <xdev/placement.hpp>

#include "devices/kernel_table.hpp"

namespace xdev::detail {

class LogicalDeviceState;

// One DeviceScope on a thread's stack.
struct ScopeEntry {
  uint64_t id = 0;    // the DeviceScope's token (thread affinity checks)
  std::string text;   // as the user wrote it
  DeviceName name;
  // Resolved lazily against the logical devices of `generation`.
  uint64_t generation = 0;
  LogicalDeviceState* device = nullptr;
};

// The innermost scope of this thread, or nullptr. Both throw
// Error(kFailedPrecondition) once when a scope this thread made was destroyed
// on another thread (the entry is then removed; see docs/user-guide.md,
// "Scopes belong to their thread").
ScopeEntry* current_scope();
bool strict_placement();

// Changes whenever a cached placement could become wrong (soft placement
// switched, devices initialized).
uint64_t placement_generation();
void bump_placement_generation();

bool log_placement_enabled();
// Prints "Executing op NAME in device DEVICE".
void log_placement(std::string_view op, const std::string& device);

// A placement decision, made once per (op, dtypes, scope, input device) and
// cached; kept alive for the life of the process.
struct Decision {
  LogicalDeviceState* device = nullptr;
  const KernelEntry* kernel = nullptr;
  std::string op;
  std::string requested;
  std::string rule;
  std::vector<std::pair<std::string, std::string>> rejected;
  bool fallback = false;
  bool soft = false;
  // An op's dtypes (what its kernel is looked up by); for a fallback, the
  // device that has no kernel for them (the scope's, the inputs' or the
  // highest-priority device).
  DType input = DType::kFloat32;
  DType output = DType::kFloat32;
  LogicalDeviceState* missing_kernel = nullptr;
};

// Counters (X8).
void count_implicit_copy(const std::string& from, const std::string& to, uint64_t bytes);
void count_explicit_copy(uint64_t bytes);
void count_read_back(uint64_t bytes);
void count_fallback(const Decision& decision);  // decision.fallback
void count_soft_placement();

// X1: appends to this thread's ring and calls the callback, if any.
void record_placement(const Decision* decision, uint64_t bytes_copied);
bool placement_callback_set();

}  // namespace xdev::detail
