// The core's log: one line per message on stderr ("xdev: warning: ..."),
// filtered by XDEV_LOG_LEVEL (debug, info, warning, error; default warning).
// Tests install a sink to capture what would be printed.
#pragma once

#include <functional>
#include <string_view>

#include <xdev/plugin.h>

namespace xdev::detail {

using LogSink = std::function<void(xdev_log_level_t, std::string_view)>;

// Writes `message` if `level` passes the filter. Thread-safe.
void log(xdev_log_level_t level, std::string_view message);

// Replaces the sink (empty: back to stderr); returns the previous one.
// The sink receives every message that passes the level filter.
LogSink set_log_sink(LogSink sink);

// Writes `line` as it is (no prefix, not filtered): the placement log of
// B9 ("Executing op MatMul in device ..."). Goes to the sink if one is set,
// with level XDEV_LOG_INFO, else to stderr.
void log_raw(std::string_view line);

// The level filter now.
xdev_log_level_t log_level();

// Sets the level filter (the default comes from XDEV_LOG_LEVEL).
void set_log_level(xdev_log_level_t level);

}  // namespace xdev::detail
