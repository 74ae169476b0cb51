// Status objects at the C boundary and their conversion to xdev::Error.
//
// A plugin creates a status through the host table (host_status_create); the
// core owns every status it receives and destroys it here. check() is the one
// place a status becomes a C++ exception.
#pragma once

#include <memory>
#include <cstdint>
#include <string>
#include <string_view>

#include <xdev/error.hpp>
#include <xdev/plugin.h>

struct xdev_status_t {
  xdev_status_code_t code;
  std::string message;
};

namespace xdev::detail {

// Whether `status` is a live status made by make_status / make_status_from_int
// (the host's status_create): a plugin that returns any other pointer (freed,
// its own, garbage) is caught where its status is read, never dereferenced.
bool is_host_status(const xdev_status_t* status) noexcept;
// Frees a status made here; a pointer that is not one is left alone.
void destroy_status(xdev_status_t* status) noexcept;

struct StatusDeleter {
  void operator()(xdev_status_t* status) const noexcept { destroy_status(status); }
};
using StatusPtr = std::unique_ptr<xdev_status_t, StatusDeleter>;

// Creates a status; never returns NULL (allocation failure throws
// std::bad_alloc, as everywhere in the core; see make_status_noexcept).
xdev_status_t* make_status(xdev_status_code_t code, std::string_view message);
// A status with the code a plugin passed, as the integer it passed: a C caller
// may pass any int (77, or XDEV_STATUS_OK), which C++ must not load as the
// enum. Readers take it with raw_code (common/plugin_call.cpp).
xdev_status_t* make_status_from_int(int32_t code, std::string_view message);
// make_status_from_int for callers that must not throw (the host's
// status_create, called from plugin C code; the plugin-call guard's catch
// blocks): when memory runs out, a status made when the library loaded, with
// the code and without the message (is_host_status holds for it;
// destroy_status leaves it alone). Never NULL.
xdev_status_t* make_status_noexcept(int32_t code, std::string_view message) noexcept;

// Maps an ABI code to the C++ one (unknown codes become kInternal).
ErrorCode to_error_code(xdev_status_code_t code) noexcept;

// Takes ownership of `status`. NULL: returns. Otherwise throws xdev::Error
// with the status's code and "<context>: <message>".
void check(xdev_status_t* status, std::string_view context);

// Takes ownership of `status` and returns its text ("" for NULL), with the
// code name in front: "OUT_OF_MEMORY: ...".
std::string take_message(xdev_status_t* status);

}  // namespace xdev::detail
