#include "loader/host_api.hpp"

#include <cstdint>
#include <cstring>
#include <exception>
#include <string>

#include "common/log.hpp"
#include "common/status.hpp"

namespace xdev::detail {
namespace {

xdev_status_t* host_status_create(void* /*host_context*/, xdev_status_code_t code,
                                  const char* message) {
  // The code as the int the plugin passed: C lets it pass any value, which
  // C++ must not load as the enum (clang's UBSan: "not a valid value for
  // type 'xdev_status_code_t'"); an unknown one becomes INTERNAL where the
  // status is read (common/plugin_call.cpp).
  int32_t raw = 0;
  static_assert(sizeof raw == sizeof code);
  std::memcpy(&raw, &code, sizeof raw);
  // A plugin asking for a success status is a plugin bug; keep it an error so
  // it is never mistaken for NULL (= success) later.
  if (raw == XDEV_STATUS_OK) raw = XDEV_STATUS_INTERNAL;
  // Called from C: out of memory, the status keeps its code and loses its
  // message rather than std::bad_alloc crossing into the plugin.
  return make_status_noexcept(raw, message != nullptr ? message : "");
}

void host_log(void* host_context, xdev_log_level_t level, const char* message) {
  try {
    const auto* context = static_cast<const HostContext*>(host_context);
    std::string line = "plugin ";
    line += context != nullptr ? context->plugin_name : std::string("?");
    line += ": ";
    line += message != nullptr ? message : "";
    log(level, line);
  } catch (...) {
    // Logging must never throw across the C boundary.
  }
}

}  // namespace

xdev_host_api_t make_host_api(HostContext* context) noexcept {
  xdev_host_api_t host{};
  host.struct_size = XDEV_HOST_API_STRUCT_SIZE;
  host.ext = nullptr;
  host.abi_version = {XDEV_ABI_VERSION_MAJOR, XDEV_ABI_VERSION_MINOR};
  host.host_context = context;
  host.status_create = &host_status_create;
  host.log = &host_log;
  return host;
}

}  // namespace xdev::detail
