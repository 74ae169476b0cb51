#include "common/status.hpp"

#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_set>

namespace xdev {

std::string_view to_string(ErrorCode code) noexcept {
  switch (code) {
    case ErrorCode::kInvalidArgument: return "INVALID_ARGUMENT";
    case ErrorCode::kNotFound: return "NOT_FOUND";
    case ErrorCode::kOutOfMemory: return "OUT_OF_MEMORY";
    case ErrorCode::kUnimplemented: return "UNIMPLEMENTED";
    case ErrorCode::kFailedPrecondition: return "FAILED_PRECONDITION";
    case ErrorCode::kUnavailable: return "UNAVAILABLE";
    case ErrorCode::kInternal: return "INTERNAL";
    case ErrorCode::kAbiMismatch: return "ABI_MISMATCH";
  }
  return "UNKNOWN";
}

namespace detail {
namespace {

// Every live status this library made. Statuses are errors, made and freed
// rarely, so one lock is enough. Never destroyed: plugins may return statuses
// while the process exits.
struct LiveStatuses {
  std::mutex mutex;
  std::unordered_set<const xdev_status_t*> set;
};
LiveStatuses& live() {
  static LiveStatuses* statuses = new LiveStatuses;
  return *statuses;
}

xdev_status_t* registered(xdev_status_t* status) {
  LiveStatuses& l = live();
  std::lock_guard lock(l.mutex);
  l.set.insert(status);
  return status;
}

// What make_status_noexcept returns when it cannot allocate: one status per
// ABI code (index = code; 0, OK, stands for every code the ABI lacks, which
// readers treat as INTERNAL anyway), made when the library loads, never
// freed, never in the set. Their messages are never moved from: every reader
// copies a status's message.
constexpr const char* kLostMessage =
    "(the host ran out of memory while recording this error; its message was lost)";
xdev_status_t g_fallback_statuses[] = {
    {XDEV_STATUS_INTERNAL, kLostMessage},           {XDEV_STATUS_INVALID_ARGUMENT, kLostMessage},
    {XDEV_STATUS_NOT_FOUND, kLostMessage},          {XDEV_STATUS_OUT_OF_MEMORY, kLostMessage},
    {XDEV_STATUS_UNIMPLEMENTED, kLostMessage},      {XDEV_STATUS_FAILED_PRECONDITION, kLostMessage},
    {XDEV_STATUS_UNAVAILABLE, kLostMessage},        {XDEV_STATUS_INTERNAL, kLostMessage},
    {XDEV_STATUS_ABI_MISMATCH, kLostMessage},
};
constexpr int32_t kFallbackCount =
    static_cast<int32_t>(sizeof g_fallback_statuses / sizeof g_fallback_statuses[0]);

bool is_fallback(const xdev_status_t* status) noexcept {
  for (const xdev_status_t& fallback : g_fallback_statuses) {
    if (status == &fallback) return true;
  }
  return false;
}

}  // namespace

bool is_host_status(const xdev_status_t* status) noexcept {
  if (status == nullptr) return false;
  if (is_fallback(status)) return true;
  LiveStatuses& l = live();
  std::lock_guard lock(l.mutex);
  return l.set.count(status) != 0;
}

void destroy_status(xdev_status_t* status) noexcept {
  if (status == nullptr || is_fallback(status)) return;
  {
    LiveStatuses& l = live();
    std::lock_guard lock(l.mutex);
    if (l.set.erase(status) == 0) return;  // not ours: never freed here
  }
  delete status;
}

xdev_status_t* make_status(xdev_status_code_t code, std::string_view message) {
  auto owned = std::make_unique<xdev_status_t>(xdev_status_t{code, std::string(message)});
  return registered(owned.release());
}

xdev_status_t* make_status_from_int(int32_t code, std::string_view message) {
  static_assert(sizeof(xdev_status_code_t) == sizeof(int32_t));
  auto owned = std::make_unique<xdev_status_t>(xdev_status_t{XDEV_STATUS_INTERNAL, std::string(message)});
  std::memcpy(&owned->code, &code, sizeof code);
  return registered(owned.release());
}

xdev_status_t* make_status_noexcept(int32_t code, std::string_view message) noexcept {
  try {
    return make_status_from_int(code, message);
  } catch (...) {
    // std::bad_alloc (of the status, its message or the set's node): the
    // code survives, the message does not.
    return &g_fallback_statuses[code > 0 && code < kFallbackCount ? code : 0];
  }
}

ErrorCode to_error_code(xdev_status_code_t code) noexcept {
  switch (code) {
    case XDEV_STATUS_INVALID_ARGUMENT: return ErrorCode::kInvalidArgument;
    case XDEV_STATUS_NOT_FOUND: return ErrorCode::kNotFound;
    case XDEV_STATUS_OUT_OF_MEMORY: return ErrorCode::kOutOfMemory;
    case XDEV_STATUS_UNIMPLEMENTED: return ErrorCode::kUnimplemented;
    case XDEV_STATUS_FAILED_PRECONDITION: return ErrorCode::kFailedPrecondition;
    case XDEV_STATUS_UNAVAILABLE: return ErrorCode::kUnavailable;
    case XDEV_STATUS_ABI_MISMATCH: return ErrorCode::kAbiMismatch;
    case XDEV_STATUS_OK:
    case XDEV_STATUS_INTERNAL: break;
  }
  return ErrorCode::kInternal;
}

void check(xdev_status_t* status, std::string_view context) {
  if (status == nullptr) return;
  StatusPtr owned(status);
  std::string message(context);
  message += ": ";
  message += owned->message.empty() ? "(no message)" : owned->message;
  throw Error(to_error_code(owned->code), message);
}

std::string take_message(xdev_status_t* status) {
  if (status == nullptr) return {};
  StatusPtr owned(status);
  std::string text(to_string(to_error_code(owned->code)));
  text += ": ";
  text += owned->message.empty() ? "(no message)" : owned->message;
  return text;
}

}  // namespace detail
}  // namespace xdev
