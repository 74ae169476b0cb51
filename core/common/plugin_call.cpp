#include "common/plugin_call.hpp"

#include <cstdio>

#include <cstdint>
#include <cstring>
#include <exception>
#include <string>
#include <typeinfo>

#include <cxxabi.h>

#include "common/log.hpp"
#include "common/status.hpp"

namespace xdev::detail {
namespace {

std::string type_name(const std::type_info& type) {
  int failed = 0;
  char* name = abi::__cxa_demangle(type.name(), nullptr, nullptr, &failed);
  std::string out = failed == 0 && name != nullptr ? name : type.name();
  std::free(name);
  return out;
}

// What is being thrown, in words: "std::runtime_error: boom".
std::string current_exception_text() {
  try {
    throw;
  } catch (const std::exception& e) {
    return type_name(typeid(e)) + ": " + e.what();
  } catch (...) {
    std::type_info* type = abi::__cxa_current_exception_type();
    return type != nullptr ? "an exception of type " + type_name(*type) : "an unknown exception";
  }
}

// A status's code as the integer a plugin stored: a value outside the enum
// (a plugin's bug, which the guard reports) must not be loaded as the enum
// type, which is undefined behaviour.
int32_t raw_code(const xdev_status_t& status) {
  static_assert(sizeof(status.code) == sizeof(int32_t));
  int32_t raw = 0;
  std::memcpy(&raw, &status.code, sizeof raw);
  return raw;
}

bool known_error_code(int32_t code) {
  switch (code) {
    case XDEV_STATUS_INVALID_ARGUMENT:
    case XDEV_STATUS_NOT_FOUND:
    case XDEV_STATUS_OUT_OF_MEMORY:
    case XDEV_STATUS_UNIMPLEMENTED:
    case XDEV_STATUS_FAILED_PRECONDITION:
    case XDEV_STATUS_UNAVAILABLE:
    case XDEV_STATUS_INTERNAL:
    case XDEV_STATUS_ABI_MISMATCH:
      return true;
    case XDEV_STATUS_OK:
      break;
  }
  return false;
}

}  // namespace

std::string describe(const PluginCallSite& site) {
  std::string out(site.slot);
  if (!site.op.empty()) {
    out += ' ';
    out += site.op;
    out += '(';
    out += site.dtype;
    out += ')';
  }
  out += " of plugin ";
  out += site.plugin_file;
  if (!site.device.empty()) {
    out += " on device ";
    out += site.device;
  }
  return out;
}

xdev_status_t* status_from_current_exception(const PluginCallSite& site) noexcept {
  try {
    return make_status(XDEV_STATUS_INTERNAL,
                       describe(site) + " let a C++ exception escape (" +
                           current_exception_text() +
                           "); no exception may cross the plugin ABI");
  } catch (...) {
    return make_status_noexcept(XDEV_STATUS_INTERNAL, "a plugin let a C++ exception escape");
  }
}

xdev_status_t* checked_status(const PluginCallSite& site, xdev_status_t* status) noexcept {
  if (status == nullptr) return nullptr;
  if (!is_host_status(status)) {
    // Freed, the plugin's own or garbage: not read, not freed.
    try {
      char address[32];
      std::snprintf(address, sizeof address, "%p", static_cast<const void*>(status));
      return make_status(XDEV_STATUS_INTERNAL,
                         describe(site) + " returned " + address +
                             ", which is not a status of the host's status_create (a plugin "
                             "returns NULL or a status it got from status_create)");
    } catch (...) {
      return make_status_noexcept(XDEV_STATUS_INTERNAL,
                                  "a plugin returned a pointer that is not a status");
    }
  }
  if (known_error_code(raw_code(*status))) return status;
  StatusPtr owned(status);
  try {
    const int32_t code = raw_code(*owned);
    std::string what = code == XDEV_STATUS_OK
                           ? std::string("a status with code OK (success is NULL)")
                           : "a status with unknown code " + std::to_string(code);
    return make_status(XDEV_STATUS_INTERNAL, describe(site) + " returned " + what + ": " +
                                                 (owned->message.empty() ? "(no message)"
                                                                         : owned->message));
  } catch (...) {
    return make_status_noexcept(XDEV_STATUS_INTERNAL, "a plugin returned a malformed status");
  }
}

void log_current_exception(const PluginCallSite& site) noexcept {
  try {
    log(XDEV_LOG_ERROR, describe(site) + " let a C++ exception escape (" +
                            current_exception_text() + "); ignored");
  } catch (...) {
  }
}

}  // namespace xdev::detail
