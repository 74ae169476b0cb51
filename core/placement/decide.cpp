// The placement decision: which logical device runs an op (scope, inputs,
// priority, fallback, soft placement) and where a new tensor goes. Decisions
// are cached per thread (placement/thread_state.hpp) and kept for the life of
// the process so the cache can point at them.
#include "placement/decide.hpp"

#include <algorithm>
#include <deque>
#include <mutex>
#include <unordered_map>
#include <unordered_set>
#include <string>

#include "common/log.hpp"
#include "devices/runtime.hpp"
#include "placement/thread_state.hpp"

namespace xdev::detail {
namespace {

std::string dtype_text(OpId op, DType in, DType out) {
  std::string text(to_string(in));
  if (op == OpId::kCast) {
    text += " to ";
    text += to_string(out);
  }
  return text;
}

// Decisions are interned: one per distinct content, so the store grows with
// the distinct (op, dtypes, device asked, devices) a program uses, never with
// the number of ops (an unknown scope device is decided on every op).
// Soft-placement warnings are reported once each, at most kMaxWarned
// distinct ones.
struct DecisionStore {
  static constexpr size_t kMaxWarned = 1024;
  std::mutex mutex;
  std::deque<Decision> decisions;        // never shrinks: cached pointers stay valid
  std::unordered_map<std::string, const Decision*> by_content;
  std::unordered_set<std::string> warned;  // soft placements already reported
};
DecisionStore& store() {
  static DecisionStore* s = new DecisionStore;
  return *s;
}

// Everything a decision holds, as one key.
std::string content_key(const Decision& d) {
  std::string key = d.op;
  auto add = [&](std::string_view part) {
    key += '\0';
    key += part;
  };
  add(std::to_string(reinterpret_cast<uintptr_t>(d.device)));
  add(std::to_string(reinterpret_cast<uintptr_t>(d.kernel)));
  add(d.requested);
  add(d.rule);
  add(d.fallback ? "f" : "-");
  add(d.soft ? "s" : "-");
  add(std::to_string(static_cast<int>(d.input)) + "," + std::to_string(static_cast<int>(d.output)));
  add(std::to_string(reinterpret_cast<uintptr_t>(d.missing_kernel)));
  for (const auto& [device, reason] : d.rejected) {
    add(device);
    add(reason);
  }
  return key;
}

const Decision* intern(Decision decision) {
  std::string key = content_key(decision);
  DecisionStore& s = store();
  std::lock_guard lock(s.mutex);
  auto [it, inserted] = s.by_content.try_emplace(std::move(key), nullptr);
  if (inserted) {
    s.decisions.push_back(std::move(decision));
    it->second = &s.decisions.back();
  }
  return it->second;
}

// Logs `message` the first time `key` is seen (caller holds no lock).
void warn_once(const std::string& key, const std::string& message) {
  DecisionStore& s = store();
  std::lock_guard lock(s.mutex);
  if (s.warned.size() >= DecisionStore::kMaxWarned || !s.warned.insert(key).second) return;
  log(XDEV_LOG_WARNING, message);
  if (s.warned.size() == DecisionStore::kMaxWarned) {
    log(XDEV_LOG_WARNING, "placement: " + std::to_string(DecisionStore::kMaxWarned) +
                              " different soft placements and fallbacks reported; further "
                              "ones are not");
  }
}

// A fallback (decision.fallback): `missing` has no kernel for the op on
// `what_dtypes`, `role` says why the op would have run there. Under
// FallbackPolicy::kError an error; else warned about once per (op, dtypes,
// device), whatever the scope or the inputs' device.
void report_fallback(const Decision& decision, const std::string& what,
                     const std::string& what_dtypes, const char* role) {
  const LogicalDeviceState* missing = decision.missing_kernel;
  const std::string kernel = decision.op + " " + what_dtypes;
  const std::string where = missing->name() + " (plugin " + missing->plugin()->name + ")";
  if (fallback_policy() == FallbackPolicy::kError) {
    throw Error(ErrorCode::kUnimplemented,
                what + " cannot run: no " + kernel + " kernel on " + where + ", " + role +
                    "; the fallback policy is error (XDEV_FALLBACK=error or "
                    "set_fallback_policy), so it does not fall back to " +
                    decision.device->name());
  }
  warn_once(std::string("fallback") + '\0' + kernel + '\0' + missing->name(),
            "fallback: no " + kernel + " kernel on " + where + ", " + role + "; running it on " +
                decision.device->name());
}

const Decision* decide(Runtime& rt, OpId op, DType in, DType out, const ScopeEntry* scope,
                       LogicalDeviceState* scope_device, LogicalDeviceState* inputs_device) {
  const auto& devices = rt.logical_devices();
  auto kernel_of = [&](LogicalDeviceState* d) { return d->kernels().find(op, in, out); };
  const std::string what = std::string(op_name(op)) + "(" + dtype_text(op, in, out) + ")";
  auto no_kernel = [&](LogicalDeviceState* d) {
    return "has no kernel for " + what + " (type " + d->info().device_type + ", plugin " +
           d->plugin()->name + ")";
  };

  LogicalDeviceState* best = nullptr;
  for (const auto& d : devices) {
    if (kernel_of(d.get()) != nullptr) {
      best = d.get();
      break;
    }
  }

  Decision decision;
  decision.op = std::string(op_name(op));
  if (scope != nullptr) {
    decision.requested = requested_name(scope->name);
    if (scope_device != nullptr && kernel_of(scope_device) != nullptr) {
      decision.device = scope_device;
      decision.rule = "scope";
    } else {
      std::string reason = scope_device != nullptr ? no_kernel(scope_device) : "unknown device";
      if (!soft_device_placement()) {
        throw Error(scope_device != nullptr ? ErrorCode::kUnimplemented : ErrorCode::kNotFound,
                    what + " cannot run: " + decision.requested + " " + reason +
                        " (soft placement is off; devices: " + device_list(rt) + ")");
      }
      if (best == nullptr) {
        throw Error(ErrorCode::kUnimplemented,
                    what + " cannot run: " + decision.requested + " " + reason +
                        ", and no other device has a kernel for it (devices: " +
                        device_list(rt) + ")");
      }
      decision.device = best;
      decision.soft = true;
      decision.fallback = scope_device != nullptr;
      decision.rule = decision.fallback ? "fallback" : "soft placement";
      decision.rejected.emplace_back(decision.requested, reason);
      if (decision.fallback) {
        decision.missing_kernel = scope_device;
      } else {
        warn_once(what + "@" + decision.requested,
                  "soft placement: " + what + " asked for " + decision.requested +
                      ", which is an unknown device; running it on " + best->name());
      }
    }
  } else {
    if (best == nullptr) {
      throw Error(ErrorCode::kUnimplemented,
                  what + ": no device has a kernel for it (devices: " + device_list(rt) + ")");
    }
    if (inputs_device != nullptr && kernel_of(inputs_device) != nullptr &&
        inputs_device->priority() == best->priority()) {
      decision.device = inputs_device;
      decision.rule = "inputs";
    } else {
      decision.device = best;
      decision.rule = "priority";
    }
    if (!devices.empty() && devices.front()->priority() > decision.device->priority()) {
      decision.fallback = true;
      decision.rule = "fallback";
      // Where it would have run: its inputs' device when that is of the
      // highest priority (rule 1), else the highest-priority device.
      decision.missing_kernel =
          inputs_device != nullptr && inputs_device->priority() == devices.front()->priority()
              ? inputs_device
              : devices.front().get();
    }
  }
  decision.input = in;
  decision.output = out;
  if (decision.fallback) {
    report_fallback(decision, what, dtype_text(op, in, out),
                    scope != nullptr                               ? "the scope's device"
                    : decision.missing_kernel == inputs_device     ? "where its inputs live"
                                                                   : "the highest-priority device");
  }
  decision.kernel = kernel_of(decision.device);
  for (const auto& d : devices) {
    if (d.get() == decision.device || d.get() == scope_device) continue;
    std::string reason;
    if (kernel_of(d.get()) == nullptr) {
      reason = no_kernel(d.get());
    } else if (scope != nullptr) {
      reason = "not the scope's device";
    } else if (d->priority() < decision.device->priority()) {
      reason = "lower priority";
    } else if (decision.rule == "inputs") {
      reason = "the inputs live on " + decision.device->name();
    } else {
      reason = "higher id";
    }
    decision.rejected.emplace_back(d->name(), std::move(reason));
  }
  return intern(std::move(decision));
}

using CacheSlot = PlacementCacheSlot;

}  // namespace

const Decision* place(Runtime& rt, OpId op, DType in, DType out,
                      LogicalDeviceState* inputs_device) {
  const uint64_t generation = placement_generation();
  ScopeEntry* scope = current_scope();
  LogicalDeviceState* scope_device = nullptr;
  if (scope != nullptr) {
    if (scope->generation != generation) {
      scope->device = rt.find_logical_device(scope->name);
      scope->generation = generation;
    }
    scope_device = scope->device;
    // An unknown device is rare: decide every time (the message names it).
    if (scope_device == nullptr) return decide(rt, op, in, out, scope, nullptr, nullptr);
  }
  uint64_t key = static_cast<uint64_t>(op) | (static_cast<uint64_t>(in) << 8) |
                 (static_cast<uint64_t>(out) << 12) |
                 (static_cast<uint64_t>(scope_device ? scope_device->index() + 1 : 0) << 16) |
                 (static_cast<uint64_t>(inputs_device ? inputs_device->index() + 1 : 0) << 32) |
                 (uint64_t{1} << 63);
  uint64_t hash = key * 0x9E3779B97F4A7C15ull;
  CacheSlot& slot = thread_state().cache[(hash >> 56) & 0xFF];
  if (slot.key == key && slot.generation == generation) return slot.decision;
  const Decision* decision = decide(rt, op, in, out, scope, scope_device, inputs_device);
  slot = CacheSlot{key, generation, decision};
  return decision;
}


namespace {

// The record of a creation (kept like an op's decision, so that
// recent_placements() lists _EagerConst too).
const Decision* creation_decision(Runtime& rt, const char* op_name, const ScopeEntry* scope,
                                  LogicalDeviceState* device) {
  Decision decision;
  decision.op = op_name;
  decision.device = device;
  if (scope == nullptr) {
    decision.rule = "priority";
  } else if (scope->device == device) {
    decision.requested = requested_name(scope->name);
    decision.rule = "scope";
  } else {
    decision.requested = requested_name(scope->name);
    decision.rule = "soft placement";
    decision.soft = true;
    decision.rejected.emplace_back(decision.requested, "unknown device");
  }
  for (const auto& d : rt.logical_devices()) {
    if (d.get() == device) continue;
    decision.rejected.emplace_back(d->name(), scope != nullptr ? "not the scope's device"
                                                               : "lower priority");
  }
  return intern(std::move(decision));
}

}  // namespace

LogicalDeviceState* place_creation(const char* op_name) {
  Runtime& rt = Runtime::global();
  const auto& devices = rt.logical_devices();
  if (devices.empty()) {
    throw Error(ErrorCode::kUnavailable,
                std::string(op_name) + ": there is no device (no plugin reported one; see "
                                       "xdev-smi)");
  }
  ScopeEntry* scope = current_scope();
  const uint64_t generation = placement_generation();
  LogicalDeviceState* device = devices.front().get();
  if (scope != nullptr) {
    if (scope->generation != generation) {
      scope->device = rt.find_logical_device(scope->name);
      scope->generation = generation;
    }
    if (scope->device != nullptr) {
      device = scope->device;
    } else {
      std::string requested = requested_name(scope->name);
      if (!soft_device_placement()) {
        throw Error(ErrorCode::kNotFound, std::string(op_name) + " cannot run: " + requested +
                                              " unknown device (soft placement is off; devices: " +
                                              device_list(rt) + ")");
      }
      count_soft_placement();
      warn_once(std::string(op_name) + "@" + requested,
                std::string("soft placement: ") + op_name + " asked for " + requested +
                    ", which is an unknown device; running it on " + device->name());
      // Decided every time (the record names the device asked for).
      record_placement(creation_decision(rt, op_name, scope, device), 0);
      return device;
    }
  }
  // Cached per thread like an op's decision (bit 62 marks a creation; one
  // creation op, _EagerConst, goes through here).
  const uint64_t key = (uint64_t{1} << 63) | (uint64_t{1} << 62) |
                       (static_cast<uint64_t>(device->index() + 1) << 16) |
                       (scope != nullptr ? 1u : 0u);
  const uint64_t hash = key * 0x9E3779B97F4A7C15ull;
  CacheSlot& slot = thread_state().cache[(hash >> 56) & 0xFF];
  const Decision* decision;
  if (slot.key == key && slot.generation == generation) {
    decision = slot.decision;
  } else {
    decision = creation_decision(rt, op_name, scope, device);
    slot = CacheSlot{key, generation, decision};
  }
  record_placement(decision, 0);
  return device;
}

}  // namespace xdev::detail
