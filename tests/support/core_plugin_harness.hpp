// plugin_harness.hpp for GoogleTest suites linked with the core's internals
// (xdev_internal_dep): the core's own host services as the host table, and
// the status checks every raw-ABI test of a plugin repeats.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <initializer_list>
#include <set>
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

// The process's CoreHost for a test of one plugin, made at the first call
// (which names the plugin) and alive until exit.
inline const xdev_host_api_t* process_core_host(const char* plugin_name) {
  static const CoreHost host{plugin_name};
  return host.get();
}

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

// Runs `steps` in order until one returns a status: its message (freed), or
// "" when every step succeeded.
inline std::string first_error(std::initializer_list<std::function<xdev_status_t*()>> steps) {
  for (const auto& step : steps) {
    if (xdev_status_t* status = step()) return xdev::detail::take_message(status);
  }
  return "";
}

// The table `library` hands out for query_args(host) (a test failure and
// NULL when it does not load, refuses or gives none).
inline const xdev_plugin_api_t* query_table(const PluginLibrary& library,
                                            const xdev_host_api_t* host) {
  if (!library.loaded()) {
    ADD_FAILURE() << library.error();
    return nullptr;
  }
  xdev_plugin_query_args_t args = query_args(host);
  const Outcome outcome = take(library.query()(&args));
  EXPECT_TRUE(outcome.ok()) << XDEV_PLUGIN_ENTRY_SYMBOL ": " << outcome.message;
  return outcome.ok() ? args.plugin_api : nullptr;
}

// The ops `plugin` registers kernels for; a test failure for every entry
// that is not a v1 descriptor with a function, an input dtype mask and a
// type index below `type_count`.
inline std::set<std::string> registered_ops(const xdev_plugin_api_t& api, xdev_plugin_t* plugin,
                                            uint32_t type_count = 1) {
  const xdev_kernel_info_t* const* kernels = nullptr;
  uint32_t count = 0;
  EXPECT_TRUE(Ok(api.kernels(plugin, &kernels, &count)));
  std::set<std::string> ops;
  for (uint32_t i = 0; i < count && kernels != nullptr; ++i) {
    const xdev_kernel_info_t* k = kernels[i];
    if (k == nullptr || k->op == nullptr) {
      ADD_FAILURE() << "kernel " << i << " is NULL or has no op";
      continue;
    }
    EXPECT_EQ(k->struct_size, size_t{XDEV_KERNEL_INFO_STRUCT_SIZE}) << k->op;
    EXPECT_LT(k->type_index, type_count) << k->op;
    EXPECT_NE(k->fn, nullptr) << k->op;
    EXPECT_NE(k->input_dtypes, 0U) << k->op;
    ops.insert(k->op);
  }
  EXPECT_TRUE(count == 0 || kernels != nullptr) << count << " kernels but no array";
  return ops;
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

// Calls `query` with query_args(host) accepting [lowest, highest]: the
// negotiation must refuse (ABI_MISMATCH whose message has every fragment,
// and no table) or accept (a table).
inline ::testing::AssertionResult query_refuses(xdev_plugin_query_fn_t query,
                                                const xdev_host_api_t* host, xdev_version_t lowest,
                                                xdev_version_t highest,
                                                std::initializer_list<std::string> fragments) {
  xdev_plugin_query_args_t args = query_args(host);
  args.core_min_version = lowest;
  args.core_max_version = highest;
  ::testing::AssertionResult result =
      fails_with(take(query(&args)), XDEV_STATUS_ABI_MISMATCH, fragments);
  if (result && args.plugin_api != nullptr) {
    return ::testing::AssertionFailure() << "refused, but handed out a table";
  }
  return result;
}
inline ::testing::AssertionResult query_accepts(xdev_plugin_query_fn_t query,
                                                const xdev_host_api_t* host, xdev_version_t lowest,
                                                xdev_version_t highest) {
  xdev_plugin_query_args_t args = query_args(host);
  args.core_min_version = lowest;
  args.core_max_version = highest;
  const Outcome outcome = take(query(&args));
  if (!outcome.ok()) return ::testing::AssertionFailure() << outcome.message;
  if (args.plugin_api == nullptr) return ::testing::AssertionFailure() << "no table";
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
