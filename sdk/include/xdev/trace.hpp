// Tracing: a Chrome trace-event file (JSON) of what the runtime did, for
// Perfetto (ui.perfetto.dev) or chrome://tracing. One track per device and
// stream, a track per host thread; events for every op (name, dtypes,
// shapes, device, time), copy (bytes, direction, path), allocation and free
// (pool, bytes), placement decision (chosen, rejected and why) and
// collective (all-reduce). docs/user-guide.md, "Tracing", shows a session.
//
// XDEV_TRACE=path.json traces the whole process; start()/stop() trace a part
// of it. The file is written as the program runs (bounded memory) and is a
// complete JSON document once stop() returned or the process exited.
#pragma once

#include <string>

#include <xdev/export.hpp>

namespace xdev::trace {

// Starts writing a trace to `path` (created or truncated). Throws
// Error(kFailedPrecondition) when a trace is already being written (by an
// earlier start() or XDEV_TRACE), Error(kInvalidArgument) naming the path
// when it cannot be opened.
XDEV_API void start(const std::string& path);

// Finishes the trace being written (flushes and closes the file); does
// nothing when none is. Throws Error(kInternal) naming the path when the
// file could not be written completely.
XDEV_API void stop();

// True while a trace is being written.
XDEV_API bool active() noexcept;

}  // namespace xdev::trace
