// A GoogleMock matcher for the SDK's errors: a callable that throws
// xdev::Error with a given code and a message the given matcher accepts.
//
//   EXPECT_THAT([&] { pool.allocate(10); },
//               ThrowsError(xdev::ErrorCode::kInternal, HasSubstr("not aligned")));
//
// It fails when the callable returns normally or throws anything else.
#pragma once

#include <gmock/gmock.h>

#include <xdev/error.hpp>

namespace xdev_test {

template <typename MessageMatcher>
auto ThrowsError(xdev::ErrorCode code, MessageMatcher message) {
  return ::testing::Throws<xdev::Error>(
      ::testing::AllOf(::testing::Property(&xdev::Error::code, code),
                       ::testing::Property(&xdev::Error::what, message)));
}

}  // namespace xdev_test
