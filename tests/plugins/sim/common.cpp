#include "common.hpp"

#include <cstdarg>
#include <cstdio>
#include <vector>

namespace xdev::sim {
namespace {

std::string vprintf_string(const char* format, va_list args) {
  va_list copy;
  va_copy(copy, args);
  const int length = std::vsnprintf(nullptr, 0, format, copy);
  va_end(copy);
  if (length <= 0) return {};
  std::vector<char> text(static_cast<size_t>(length) + 1);
  std::vsnprintf(text.data(), text.size(), format, args);
  return std::string(text.data(), static_cast<size_t>(length));
}

}  // namespace

std::string printf_string(const char* format, ...) {
  va_list args;
  va_start(args, format);
  std::string text = vprintf_string(format, args);
  va_end(args);
  return text;
}

Failure make_failure(xdev_status_code_t code, const char* format, ...) {
  va_list args;
  va_start(args, format);
  Failure failure{code, vprintf_string(format, args)};
  va_end(args);
  return failure;
}

std::string dtype_name(xdev_dtype_t dtype) {
  switch (dtype) {
    case XDEV_DTYPE_FLOAT32: return "float32";
    case XDEV_DTYPE_FLOAT64: return "float64";
    case XDEV_DTYPE_INT32: return "int32";
    case XDEV_DTYPE_INT64: return "int64";
    case XDEV_DTYPE_BOOL: return "bool";
    case XDEV_DTYPE_FLOAT16: return "float16";
    case XDEV_DTYPE_BFLOAT16: return "bfloat16";
    case XDEV_DTYPE_UINT8: return "uint8";
    case XDEV_DTYPE_INT8: return "int8";
    case XDEV_DTYPE_INVALID: break;
  }
  return "dtype " + std::to_string(static_cast<int>(dtype));
}

uint64_t dtype_size(xdev_dtype_t dtype) noexcept {
  switch (dtype) {
    case XDEV_DTYPE_FLOAT32:
    case XDEV_DTYPE_INT32: return 4;
    case XDEV_DTYPE_FLOAT64:
    case XDEV_DTYPE_INT64: return 8;
    case XDEV_DTYPE_FLOAT16:
    case XDEV_DTYPE_BFLOAT16: return 2;
    case XDEV_DTYPE_BOOL:
    case XDEV_DTYPE_UINT8:
    case XDEV_DTYPE_INT8: return 1;
    case XDEV_DTYPE_INVALID: break;
  }
  return 0;
}

}  // namespace xdev::sim
