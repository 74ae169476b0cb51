#include "common/env.hpp"

#include <cstdlib>
#include <mutex>
#include <set>

#include "common/log.hpp"

namespace xdev::detail::env {

std::optional<std::string> text(const char* name) {
  const char* value = std::getenv(name);
  if (value == nullptr) return std::nullopt;
  return std::string(value);
}

namespace {
constexpr size_t kMaxRememberedWarnings = 256;
}  // namespace

void warn_once(const std::string& warning) {
  static std::mutex mutex;
  static std::set<std::string>* warned = new std::set<std::string>;  // usable during exit
  {
    std::lock_guard lock(mutex);
    if (warned->count(warning) != 0) return;
    // Bounded: a process reads a handful of variables; past this many
    // distinct warnings (a program setting and reading values in a loop)
    // they are logged each time rather than remembered forever.
    if (warned->size() < kMaxRememberedWarnings) warned->insert(warning);
  }
  log(XDEV_LOG_WARNING, warning);
}

namespace {

template <typename T>
T report(env_value::EnvValue<T> parsed) {
  if (!parsed.ok()) warn_once(parsed.warning);
  return parsed.value;
}

}  // namespace

uint64_t read_uint(const char* name, uint64_t fallback, uint64_t lowest, uint64_t highest) {
  return report(env_value::parse_uint(name, std::getenv(name), fallback, lowest, highest));
}

bool read_bool(const char* name, bool fallback) {
  return report(env_value::parse_bool(name, std::getenv(name), fallback));
}

std::optional<bool> read_optional_bool(const char* name) {
  const char* value = std::getenv(name);
  if (value == nullptr || *value == '\0') return std::nullopt;
  auto parsed = env_value::parse_bool(name, value, false);
  if (!parsed.ok()) {
    // "using false (the default)" would be wrong here: unset means "not
    // forced", which is what the caller falls back to.
    warn_once(env_value::quoted_setting(name, value) +
              " is not a boolean (true/1/yes/on or false/0/no/off); ignored, as if unset");
    return std::nullopt;
  }
  return parsed.value;
}

size_t read_choice(const char* name, size_t fallback,
                   std::initializer_list<std::string_view> choices) {
  return report(env_value::parse_choice(name, std::getenv(name), fallback, choices));
}

env_value::EnvValue<xdev_log_level_t> log_level_setting() {
  static constexpr xdev_log_level_t kLevels[] = {XDEV_LOG_DEBUG, XDEV_LOG_INFO, XDEV_LOG_WARNING,
                                                 XDEV_LOG_ERROR};
  auto parsed = env_value::parse_choice("XDEV_LOG_LEVEL", std::getenv("XDEV_LOG_LEVEL"), 2,
                                        {"debug", "info", "warning", "error"});
  return {kLevels[parsed.value], std::move(parsed.warning)};
}

bool log_device_placement() { return read_bool("XDEV_LOG_DEVICE_PLACEMENT", false); }

FallbackPolicy fallback_policy() {
  return read_choice("XDEV_FALLBACK", 0, {"warn", "error"}) == 1 ? FallbackPolicy::kError
                                                                 : FallbackPolicy::kWarn;
}

std::optional<bool> force_gpu_allow_growth() {
  if (auto forced = read_optional_bool("XDEV_FORCE_GPU_ALLOW_GROWTH")) return forced;
  return read_optional_bool("TF_FORCE_GPU_ALLOW_GROWTH");
}

std::chrono::milliseconds probe_timeout() {
  return std::chrono::milliseconds(read_uint("XDEV_PROBE_TIMEOUT_MS", kDefaultProbeTimeoutMs, 1,
                                             kMaxProbeTimeoutMs));
}

ProbeChoice probe_plugins() {
  // Indexes into the list below: 0-5 probe with the cache, 6-10 off, 11 always.
  const size_t choice =
      read_choice("XDEV_PROBE_PLUGINS", 0,
                  {"auto", "cached", "on", "1", "true", "yes", "off", "0", "false", "no", "never",
                   "always"});
  if (choice >= 6 && choice <= 10) return ProbeChoice::kOff;
  if (choice == 11) return ProbeChoice::kAlways;
  return ProbeChoice::kCached;
}

}  // namespace xdev::detail::env
