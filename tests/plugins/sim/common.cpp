#include "common.hpp"

#include <cstdarg>

namespace xdev::sim {

Failure make_failure(xdev_status_code_t code, const char* format, ...) {
  va_list args;
  va_start(args, format);
  Failure failure{code, ph::vformat(format, args)};
  va_end(args);
  return failure;
}

std::string dtype_name(xdev_dtype_t dtype) {
  const char* name = xdev_plugin_dtype_name(dtype);
  return name != nullptr ? name : "dtype " + std::to_string(static_cast<int>(dtype));
}

}  // namespace xdev::sim
