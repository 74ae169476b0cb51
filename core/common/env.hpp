// Every environment variable the core reads, parsed in one place
// (docs/user-guide.md lists them). The parsing rules are <xdev/env_value.hpp>'s
// (shared with the plugins); this module adds getenv and the warning: a value
// that is not acceptable is reported once per process, naming the variable,
// the value and what is used instead, on the core's log.
//
// The typed readers below are the only places the core calls getenv; the
// list-valued variables (XDEV_PLUGINS, XDEV_PLUGIN_PATH, XDEV_VISIBLE_DEVICES)
// are returned as text here and parsed where their entries mean something
// (loader/plugin_filter, devices/runtime), each bad entry warned about by name.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <xdev/env_value.hpp>
#include <xdev/placement.hpp>
#include <xdev/plugin.h>

namespace xdev::detail::env {

// The raw text of `name` (nullopt when unset). For variables whose value is
// free text (paths, lists).
std::optional<std::string> text(const char* name);

// Reads and parses `name` by the rules of <xdev/env_value.hpp>; a bad value
// is warned about (once per variable and value) and replaced as they say.
uint64_t read_uint(const char* name, uint64_t fallback, uint64_t lowest, uint64_t highest);
bool read_bool(const char* name, bool fallback);
// nullopt when unset or empty; a bad value warns and counts as unset.
std::optional<bool> read_optional_bool(const char* name);
size_t read_choice(const char* name, size_t fallback,
                   std::initializer_list<std::string_view> choices);

// Logs `warning` at XDEV_LOG_WARNING unless the same text was logged before
// in this process. For entries of list variables too.
void warn_once(const std::string& warning);

// ---- The core's settings ---------------------------------------------------

// XDEV_LOG_LEVEL: debug, info, warning, error (default warning). Pure: the
// log module reads it while it starts and prints the warning itself.
env_value::EnvValue<xdev_log_level_t> log_level_setting();

// XDEV_LOG_DEVICE_PLACEMENT: boolean, default false.
bool log_device_placement();

// XDEV_FALLBACK: warn (default) or error, what an op does on a device
// without its kernel (<xdev/placement.hpp>, FallbackPolicy).
FallbackPolicy fallback_policy();

// XDEV_FORCE_GPU_ALLOW_GROWTH, else TF_FORCE_GPU_ALLOW_GROWTH: booleans;
// nullopt when neither is set (the first set one wins).
std::optional<bool> force_gpu_allow_growth();

// XDEV_PROBE_TIMEOUT_MS: whole milliseconds in [1, kMaxProbeTimeoutMs]
// (default 20000). Bounded so that the deadline now + timeout never
// overflows the clock.
inline constexpr uint64_t kDefaultProbeTimeoutMs = 20000;
inline constexpr uint64_t kMaxProbeTimeoutMs = 3600 * 1000;  // one hour
std::chrono::milliseconds probe_timeout();

// XDEV_PROBE_PLUGINS: auto/cached/on/1/true/yes (probe, cached: the
// default), off/0/false/no/never (no probing), always (probe every time).
enum class ProbeChoice { kCached, kOff, kAlways };
ProbeChoice probe_plugins();

}  // namespace xdev::detail::env
