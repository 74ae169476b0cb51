// The host services table (xdev_host_api_t) the core hands to each plugin:
// status creation and logging tagged with the plugin's name.
#pragma once

#include <string>

#include <xdev/plugin.h>

namespace xdev::detail {

// Per-plugin state behind xdev_host_api_t::host_context. Must outlive the
// plugin (until after its shutdown returns).
struct HostContext {
  std::string plugin_name;  // used as the log tag; may be the file name
};

// A host table whose functions are thread-safe and never throw.
xdev_host_api_t make_host_api(HostContext* context) noexcept;

}  // namespace xdev::detail
