// plugin_harness.hpp for GoogleTest suites linked with the core's internals
// (xdev_internal_dep): the core's own host services as the host table, and
// the status checks every raw-ABI test of a plugin repeats.
#pragma once

#include <gtest/gtest.h>

#include <initializer_list>
#include <string>

#include "common/status.hpp"
#include "loader/host_api.hpp"
#include "plugin_harness.hpp"

namespace xdev_test {

// The core's host table (status creation, logging as `plugin_name`), as the
// loader builds it for a plugin. Keep it alive while the plugin may use it.
class CoreHost {
 public:
  explicit CoreHost(const char* plugin_name)
      : context_{plugin_name}, table_(xdev::detail::make_host_api(&context_)) {}
  CoreHost(const CoreHost&) = delete;
  CoreHost& operator=(const CoreHost&) = delete;
  const xdev_host_api_t* get() const { return &table_; }

 private:
  xdev::detail::HostContext context_;
  xdev_host_api_t table_;
};

// What a status said. take() owns the status, as the core does, and frees it.
struct Outcome {
  xdev_status_code_t code = XDEV_STATUS_OK;
  std::string message;
  bool ok() const { return code == XDEV_STATUS_OK; }
};

inline Outcome take(xdev_status_t* status) {
  if (status == nullptr) return {};
  xdev::detail::StatusPtr owned(status);
  return {owned->code, owned->message};
}

// Success, or a failure carrying the status's message (frees it).
inline ::testing::AssertionResult Ok(xdev_status_t* status) {
  if (status == nullptr) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << xdev::detail::take_message(status);
}

// `outcome` has `code` and its message contains every fragment.
inline ::testing::AssertionResult fails_with(const Outcome& outcome, xdev_status_code_t code,
                                             std::initializer_list<std::string> fragments) {
  if (outcome.code != code) {
    return ::testing::AssertionFailure() << "code " << outcome.code << " instead of " << code
                                         << ", message: '" << outcome.message << "'";
  }
  for (const std::string& fragment : fragments) {
    if (outcome.message.find(fragment) == std::string::npos) {
      return ::testing::AssertionFailure() << "message '" << outcome.message
                                           << "' does not contain '" << fragment << "'";
    }
  }
  return ::testing::AssertionSuccess();
}

}  // namespace xdev_test

// `expr` returns NULL (success); otherwise the test fails (ASSERT_: and
// returns) with the status's message.
#define ASSERT_OK(expr)                                                    \
  do {                                                                     \
    const ::xdev_test::Outcome outcome_ = ::xdev_test::take(expr);         \
    ASSERT_TRUE(outcome_.ok()) << #expr << ": " << outcome_.message;       \
  } while (0)
#define EXPECT_OK(expr)                                                    \
  do {                                                                     \
    const ::xdev_test::Outcome outcome_ = ::xdev_test::take(expr);         \
    EXPECT_TRUE(outcome_.ok()) << #expr << ": " << outcome_.message;       \
  } while (0)

// `expr` returns a status with `expected_code` whose message contains
// `needle`.
#define EXPECT_STATUS(expr, expected_code, needle)                                        \
  do {                                                                                    \
    const ::xdev_test::Outcome outcome_ = ::xdev_test::take(expr);                        \
    EXPECT_TRUE(::xdev_test::fails_with(outcome_, (expected_code), {std::string(needle)})) \
        << #expr;                                                                         \
  } while (0)
