// Small tensors and checks shared by the SDK op tests (tests/core/test_ops_*):
// vectors of each dtype as 1-D tensors, bool tensors from std::vector<bool>,
// and a refused call that must name the op and the values at fault.
#pragma once

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include <xdev/xdev.hpp>

namespace xdev_test {

inline const double kNan = std::numeric_limits<double>::quiet_NaN();
inline const double kInf = std::numeric_limits<double>::infinity();

template <typename T>
xdev::Tensor vector_tensor(const std::vector<T>& v) {
  return xdev::constant(v, xdev::Shape{static_cast<int64_t>(v.size())});
}
inline xdev::Tensor f64(const std::vector<double>& v) { return vector_tensor(v); }
inline xdev::Tensor f32(const std::vector<float>& v) { return vector_tensor(v); }
inline xdev::Tensor i64(const std::vector<int64_t>& v) { return vector_tensor(v); }

// A bool tensor of `shape` (default: 1-D) holding `v`.
inline xdev::Tensor flags(const std::vector<bool>& v, std::optional<xdev::Shape> shape = {}) {
  std::vector<uint8_t> bytes(v.begin(), v.end());
  return xdev::constant(bytes.data(), xdev::DType::kBool,
                        shape ? *shape : xdev::Shape{static_cast<int64_t>(v.size())});
}
// The values of a bool tensor (checked to be bool).
inline std::vector<bool> bools(const xdev::Tensor& t) {
  EXPECT_EQ(t.dtype(), xdev::DType::kBool);
  return t.to_vector<bool>();
}

// Calls `fn`, which must throw kInvalidArgument naming every string of `names`.
inline void expect_refused(const std::function<void()>& fn, const std::vector<std::string>& names) {
  try {
    fn();
    ADD_FAILURE() << "the call was accepted";
  } catch (const xdev::Error& e) {
    EXPECT_EQ(e.code(), xdev::ErrorCode::kInvalidArgument) << e.what();
    for (const std::string& n : names) EXPECT_THAT(e.what(), ::testing::HasSubstr(n));
  }
}

}  // namespace xdev_test
