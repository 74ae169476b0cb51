// xdev::Error: the exception the C++ SDK throws. It carries the same codes as
// the plugin ABI's status objects, so an error that started in a plugin keeps
// its code when it reaches the user.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

#include <xdev/export.hpp>

namespace xdev {

enum class ErrorCode {
  kInvalidArgument = 1,
  kNotFound = 2,
  kOutOfMemory = 3,
  kUnimplemented = 4,
  kFailedPrecondition = 5,
  kUnavailable = 6,
  kInternal = 7,
  kAbiMismatch = 8,
};

// Name of a code, e.g. "INVALID_ARGUMENT".
XDEV_API std::string_view to_string(ErrorCode code) noexcept;

class XDEV_API Error : public std::runtime_error {
 public:
  Error(ErrorCode code, const std::string& message)
      : std::runtime_error(message), code_(code) {}
  ErrorCode code() const noexcept { return code_; }

 private:
  ErrorCode code_;
};

}  // namespace xdev
