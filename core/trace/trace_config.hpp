// The observability switches read from the environment, in one place so that
// the core's environment module can take them over: XDEV_TRACE (a trace file
// to write from the start of the process, core/trace/README.md) and
// XDEV_VALIDATE (wrap every plugin in the validation layer,
// core/validation/README.md).
#pragma once

#include <string>

namespace xdev::detail {

// XDEV_TRACE: the path of the trace file, "" when unset or empty.
std::string trace_path_from_environment();

// XDEV_VALIDATE: true for "1", "true", "yes", "on" (any case); false when
// unset, empty, "0", "false", "no", "off". Another value is a mistake the
// user should hear about: it counts as on, with a warning in the log.
bool validation_from_environment();

}  // namespace xdev::detail
