// The validation layer inside libxdev: XDEV_VALIDATE=1 wraps every plugin
// the loader loads (layer.hpp); reports go to the log (as errors) and to a
// list the tests and tools read.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include <xdev/plugin.h>

namespace xdev::detail {

// XDEV_VALIDATE, read once (trace/trace_config.hpp).
bool validation_enabled();

// The wrapped table of the plugin loaded from `file` with host table `host`.
const xdev_plugin_api_t* validate_plugin(const xdev_plugin_api_t* api,
                                         const xdev_host_api_t* host,
                                         const std::filesystem::path& file);

// Every report so far, as text ("validation: FILE: SLOT on DEVICE, ...").
std::vector<std::string> validation_reports();

}  // namespace xdev::detail
