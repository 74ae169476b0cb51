// Where ops and tensors go (docs/behaviour.md B5-B12, X1, X8).
//
// The rules, in order, for an op with no explicit scope:
//  1. If every input lives on one device of the highest-priority type that
//     has a kernel for the op, run there (a model on GPU:1 stays on GPU:1).
//  2. Else the highest-priority device type with a kernel for (op, dtype)
//     wins (GPU over CPU), lowest id first (B5).
// Inside a DeviceScope the scope's device runs the op (B7). When it cannot
// (unknown device, or no kernel there), soft placement (on by default, B11)
// moves the op to the device rule 2 picks and says so once; with soft
// placement off it is an error naming the device (B10). Inputs on other
// devices are copied to the op's device and counted (B8), unless a
// StrictPlacement scope is active (B12).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include <xdev/device.hpp>
#include <xdev/dtype.hpp>
#include <xdev/export.hpp>

namespace xdev {

// Puts every op and tensor creation in its lifetime on `device` (any spelling
// of docs/behaviour.md B3). Nestable, per thread; the innermost scope wins. Throws
// xdev::Error(kInvalidArgument) for a malformed name; an unknown device is
// resolved when an op runs (B10/B11).
//
// A scope belongs to the thread that made it. Destroyed on another thread,
// it logs an error naming both threads and touches neither thread's stack;
// the owning thread's next placement call drops the entry and throws
// xdev::Error(kFailedPrecondition) once. Destroyed out of nesting order on
// its own thread, it removes itself and logs an error.
class XDEV_API DeviceScope {
 public:
  explicit DeviceScope(std::string_view device);
  explicit DeviceScope(const Device& device);
  ~DeviceScope();
  DeviceScope(const DeviceScope&) = delete;
  DeviceScope& operator=(const DeviceScope&) = delete;

 private:
  uint64_t id_ = 0;      // this scope's entry on its thread's stack
  uint64_t thread_ = 0;  // the thread that made it
};

// While alive (per thread, nestable), an op whose inputs live on another
// device than the op's fails instead of copying them (B12). Belongs to its
// thread like DeviceScope (same rule when destroyed on another thread).
class XDEV_API StrictPlacement {
 public:
  explicit StrictPlacement(bool strict = true);
  ~StrictPlacement();
  StrictPlacement(const StrictPlacement&) = delete;
  StrictPlacement& operator=(const StrictPlacement&) = delete;

 private:
  uint64_t id_ = 0;
  uint64_t thread_ = 0;
};

// B9: print "Executing op MatMul in device /job:localhost/replica:0/task:0/device:CPU:0"
// for every op and tensor creation (constants as _EagerConst). Also turned on
// by XDEV_LOG_DEVICE_PLACEMENT=1. Lines go to stderr.
XDEV_API void set_log_device_placement(bool enabled);
XDEV_API bool log_device_placement();

// B11: on by default.
XDEV_API void set_soft_device_placement(bool enabled);
XDEV_API bool soft_device_placement();

// A fallback: an op runs on another device than the one it would run on (the
// scope's device, its inputs' device, or the highest-priority device) because
// that device has no kernel for the op and its dtypes (has_kernel in ops.hpp).
// It is never silent:
//  - kWarn (the default): the op runs on the device rule 2 picks; the first
//    fallback of each (op, dtypes, device) logs a warning, e.g.
//    "fallback: no Exp int32 kernel on /job:localhost/replica:0/task:0/device:GPU:0
//    (plugin sim); running it on /job:localhost/replica:0/task:0/device:CPU:0",
//    and placement_counters() counts every op that fell back.
//  - kError: the op throws xdev::Error(kUnimplemented) naming the op, its
//    dtypes, the device and that it has no kernel for them.
// XDEV_FALLBACK=warn|error sets the policy a process starts with.
enum class FallbackPolicy { kWarn, kError };
XDEV_API void set_fallback_policy(FallbackPolicy policy);
XDEV_API FallbackPolicy fallback_policy();

// X8: what placement did, process-wide since the last reset.
struct CopyCount {
  std::string from;  // canonical device names
  std::string to;
  uint64_t copies = 0;
  uint64_t bytes = 0;
};
// Ops that fell back for one missing kernel.
struct FallbackCount {
  std::string op;       // "Exp"
  DType input = DType::kFloat32;   // the dtypes it was looked up by (KernelDTypes in ops.hpp)
  DType output = DType::kFloat32;
  std::string device;   // the device without the kernel (canonical name)
  std::string ran_on;   // where the ops ran instead
  uint64_t ops = 0;
};
struct PlacementCounters {
  uint64_t implicit_copies = 0;       // inputs copied to an op's device (B8)
  uint64_t implicit_copy_bytes = 0;
  std::vector<CopyCount> implicit_copies_by_pair;
  uint64_t explicit_copies = 0;       // to()/copy_to() that copied
  uint64_t explicit_copy_bytes = 0;
  uint64_t read_backs = 0;            // to_host(), printing
  uint64_t read_back_bytes = 0;
  uint64_t fallbacks = 0;             // ops run elsewhere: no kernel on the asked/best device
  std::vector<FallbackCount> fallbacks_by_kernel;  // the same ops, by missing kernel
  uint64_t soft_placements = 0;       // ops moved off a scope's device (B11)
};
XDEV_API PlacementCounters placement_counters();
XDEV_API void reset_placement_counters();

// X1: why an op went where it went.
struct PlacementRecord {
  std::string op;                // "MatMul"
  std::string device;            // canonical name of the device that ran it
  std::string requested;         // the scope's device, "" when none
  std::string rule;              // "scope", "inputs", "priority", "fallback", "soft placement"
  // Devices considered and not chosen, with why ("no kernel for float64",
  // "unknown device", "lower priority").
  std::vector<std::pair<std::string, std::string>> rejected;
  uint64_t bytes_copied = 0;     // implicit copies made for this op
};
// The last placements made by this thread, oldest first (at most 64).
XDEV_API std::vector<PlacementRecord> recent_placements();
XDEV_API void clear_recent_placements();
// Called (on the op's thread) after every placement; empty to remove. Slows
// every op down: meant for debugging.
XDEV_API void set_placement_callback(std::function<void(const PlacementRecord&)> callback);

}  // namespace xdev
