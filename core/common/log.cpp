#include "common/log.hpp"

#include "common/env.hpp"

#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>

namespace xdev::detail {
namespace {

struct LogState {
  std::mutex mutex;
  LogSink sink;
  xdev_log_level_t level = XDEV_LOG_WARNING;
};

void write_line(std::string_view prefix, std::string_view message);

LogState& state() {
  static LogState* s = [] {
    auto* made = new LogState;  // never destroyed: usable during exit
    // XDEV_LOG_LEVEL through the one parser; its own warning is written here
    // (once: this runs once), as log() cannot be called while state() starts.
    const auto setting = env::log_level_setting();
    made->level = setting.value;
    if (!setting.ok()) write_line("xdev: warning: ", setting.warning);
    return made;
  }();
  return *s;
}

const char* level_name(xdev_log_level_t level) {
  switch (level) {
    case XDEV_LOG_DEBUG: return "debug";
    case XDEV_LOG_INFO: return "info";
    case XDEV_LOG_WARNING: return "warning";
    case XDEV_LOG_ERROR: return "error";
  }
  return "log";
}

void write_line(std::string_view prefix, std::string_view message) {
  std::string line(prefix);
  line += message;
  line += '\n';
  std::fflush(stdout);  // keep the program's own output and the log in order
  std::fwrite(line.data(), 1, line.size(), stderr);
}

}  // namespace

xdev_log_level_t log_level() {
  LogState& s = state();
  std::lock_guard lock(s.mutex);
  return s.level;
}

void log(xdev_log_level_t level, std::string_view message) {
  LogState& s = state();
  std::lock_guard lock(s.mutex);
  if (level < s.level) return;
  if (s.sink) {
    s.sink(level, message);
    return;
  }
  write_line(std::string("xdev: ") + level_name(level) + ": ", message);
}

void log_raw(std::string_view message) {
  LogState& s = state();
  std::lock_guard lock(s.mutex);
  if (s.sink) {
    s.sink(XDEV_LOG_INFO, message);
    return;
  }
  write_line("", message);
}

LogSink set_log_sink(LogSink sink) {
  LogState& s = state();
  std::lock_guard lock(s.mutex);
  std::swap(s.sink, sink);
  return sink;
}

void set_log_level(xdev_log_level_t level) {
  LogState& s = state();
  std::lock_guard lock(s.mutex);
  s.level = level;
}

}  // namespace xdev::detail
