// xdev_attr_t values for tests that build kernel calls or op checks by hand.
// The attribute points into its arguments: `name` and the vector of
// ints_attr must outlive it.
#pragma once

#include <xdev/plugin.h>

#include <cstdint>
#include <vector>

namespace xdev_test {

inline xdev_attr_t bool_attr(const char* name, bool v) {
  xdev_attr_t a{};
  a.name = name;
  a.kind = XDEV_ATTR_BOOL;
  a.value.b = v ? 1 : 0;
  return a;
}

inline xdev_attr_t float_attr(const char* name, double v) {
  xdev_attr_t a{};
  a.name = name;
  a.kind = XDEV_ATTR_FLOAT;
  a.value.f = v;
  return a;
}

inline xdev_attr_t ints_attr(const char* name, const std::vector<int64_t>& v) {
  xdev_attr_t a{};
  a.name = name;
  a.kind = XDEV_ATTR_INTS;
  a.value.ints.values = v.data();
  a.value.ints.count = static_cast<int64_t>(v.size());
  return a;
}

}  // namespace xdev_test
