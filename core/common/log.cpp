#include "common/log.hpp"

#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <strings.h>

namespace xdev::detail {
namespace {

xdev_log_level_t level_from_env() {
  const char* value = std::getenv("XDEV_LOG_LEVEL");
  if (value == nullptr) return XDEV_LOG_WARNING;
  if (strcasecmp(value, "debug") == 0) return XDEV_LOG_DEBUG;
  if (strcasecmp(value, "info") == 0) return XDEV_LOG_INFO;
  if (strcasecmp(value, "error") == 0) return XDEV_LOG_ERROR;
  return XDEV_LOG_WARNING;
}

struct LogState {
  std::mutex mutex;
  LogSink sink;
  xdev_log_level_t level = level_from_env();
};

LogState& state() {
  static LogState* s = new LogState;  // never destroyed: usable during exit
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

}  // namespace

void log(xdev_log_level_t level, std::string_view message) {
  LogState& s = state();
  std::lock_guard lock(s.mutex);
  if (level < s.level) return;
  if (s.sink) {
    s.sink(level, message);
    return;
  }
  std::string line = "xdev: ";
  line += level_name(level);
  line += ": ";
  line += message;
  line += '\n';
  std::fflush(stdout);  // keep the program's own output and the log in order
  std::fwrite(line.data(), 1, line.size(), stderr);
}

void log_raw(std::string_view message) {
  LogState& s = state();
  std::lock_guard lock(s.mutex);
  if (s.sink) {
    s.sink(XDEV_LOG_INFO, message);
    return;
  }
  std::string line(message);
  line += '\n';
  std::fflush(stdout);  // keep the program's own output and the log in order
  std::fwrite(line.data(), 1, line.size(), stderr);
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
