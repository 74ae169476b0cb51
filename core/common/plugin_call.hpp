// The one guard around every call from the core into a plugin (slots and
// kernels). A plugin must not let a C++ exception cross the C ABI, and must
// return NULL or a well-formed error status; when it does not, the core turns
// what escaped into an INTERNAL status naming the plugin file, the slot or op
// and the device, so the user gets xdev::Error (through check()) and the
// runtime stays usable for every other device.
//
// It lives in common/ (not loader/) because memory/ calls plugins too and may
// only call common/.
#pragma once

#include <string>
#include <string_view>
#include <utility>

#include <xdev/plugin.h>

namespace xdev::detail {

// Where a call goes, for messages.
// (A constructor, not an aggregate with default member initializers: with
// GCC 12 -O2, a braced temporary passed straight to call_plugin was seen with
// op and dtype uninitialized on the path that catches an exception.)
struct PluginCallSite {
  PluginCallSite(std::string_view plugin_file, std::string_view slot, std::string_view device,
                 std::string_view op = {}, std::string_view dtype = {})
      : plugin_file(plugin_file), slot(slot), device(device), op(op), dtype(dtype) {}
  std::string_view plugin_file;  // the plugin's path
  std::string_view slot;         // "stream_synchronize", "kernel"
  std::string_view device;       // the device's name, "" when none
  std::string_view op;           // a kernel's op and dtype: "Add", "float32"
  std::string_view dtype;
};

// "kernel Add(float32) of plugin /p/x.so on device /job:...".
std::string describe(const PluginCallSite& site);

// Inside a catch block: an INTERNAL status saying what escaped.
xdev_status_t* status_from_current_exception(const PluginCallSite& site) noexcept;

// A status the plugin returned, checked: NULL stays NULL; a status with code
// OK, an unknown code or no message becomes INTERNAL naming the call.
xdev_status_t* checked_status(const PluginCallSite& site, xdev_status_t* status) noexcept;

// Inside a catch block, for slots that return no status (close, destroy,
// free): logs an error naming the call.
void log_current_exception(const PluginCallSite& site) noexcept;

// Calls a status-returning slot or kernel; never throws.
template <class Fn, class... Args>
xdev_status_t* call_plugin(const PluginCallSite& site, Fn fn, Args&&... args) noexcept {
  try {
    return checked_status(site, fn(std::forward<Args>(args)...));
  } catch (...) {
    return status_from_current_exception(site);
  }
}

// Calls a slot that returns a value, not a status (describe_status); an
// exception is logged and `fallback` returned.
template <class R, class Fn, class... Args>
R call_plugin_or(const PluginCallSite& site, R fallback, Fn fn, Args&&... args) noexcept {
  try {
    return fn(std::forward<Args>(args)...);
  } catch (...) {
    log_current_exception(site);
    return fallback;
  }
}

// Calls a slot that returns nothing (close, destroy, free); an exception is
// logged.
template <class Fn, class... Args>
void call_plugin_void(const PluginCallSite& site, Fn fn, Args&&... args) noexcept {
  try {
    fn(std::forward<Args>(args)...);
  } catch (...) {
    log_current_exception(site);
  }
}

}  // namespace xdev::detail
