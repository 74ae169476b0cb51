// Scenarios that each need a fresh process (configuration is once per
// process): IN_FRESH_PROCESS({ ... }) runs the block in a child that a
// GoogleTest death test in "threadsafe" style re-executes, and expects it to
// exit 0. The child echoes its assertion failures to stderr (the parent
// shows them), exits 1 after a failed assertion and 2 after an exception.
//
// A suite that uses it sets the style once:
//   class Config : public xdev_test::FreshProcessTest {};
#pragma once

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

namespace xdev_test {

// Echoes assertion failures to stderr, which the parent shows.
struct FailuresToStderr : ::testing::EmptyTestEventListener {
  void OnTestPartResult(const ::testing::TestPartResult& r) override {
    if (r.failed()) {
      std::fprintf(stderr, "%s:%d: %s\n", r.file_name() ? r.file_name() : "?", r.line_number(),
                   r.summary());
    }
  }
};

template <typename F>
void run_scenario(F&& scenario) {
  ::testing::UnitTest::GetInstance()->listeners().Append(new FailuresToStderr);
  try {
    scenario();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "exception: %s\n", e.what());
    std::exit(2);
  }
  std::exit(::testing::Test::HasFailure() ? 1 : 0);
}

// Death tests re-execute the binary ("threadsafe"), so the child starts with
// no xdev state.
class FreshProcessTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { GTEST_FLAG_SET(death_test_style, "threadsafe"); }
};

// Matches text in which `needle` occurs exactly `times` times (a warning
// that must be printed once, not once per use).
MATCHER_P2(ContainsTimes, needle, times,
           std::string("contains \"") + needle + "\" " + std::to_string(times) + " time(s)") {
  size_t count = 0;
  for (size_t at = arg.find(needle); at != std::string::npos; at = arg.find(needle, at + 1)) {
    ++count;
  }
  return count == static_cast<size_t>(times);
}

}  // namespace xdev_test

// The parentheses of run_scenario keep the body's commas out of EXPECT_EXIT.
#define IN_FRESH_PROCESS(...)                                             \
  EXPECT_EXIT(::xdev_test::run_scenario([&] { __VA_ARGS__; }),            \
              ::testing::ExitedWithCode(0), "")
// The same, and the child's stderr must match `stderr_matcher`.
#define IN_FRESH_PROCESS_STDERR(stderr_matcher, ...)                       \
  EXPECT_EXIT(::xdev_test::run_scenario([&] { __VA_ARGS__; }),            \
              ::testing::ExitedWithCode(0), stderr_matcher)
