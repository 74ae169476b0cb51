// Element types of tensors. Values match the plugin ABI's xdev_dtype_t.
#pragma once

#include <cstddef>
#include <cstdint>
#include <ostream>
#include <string_view>

#include <xdev/export.hpp>

namespace xdev {

enum class DType : int32_t {
  kFloat32 = 1,
  kFloat64 = 2,
  kInt32 = 3,
  kInt64 = 4,
  kBool = 5,  // one byte, 0 or 1
};

// "float32", "float64", "int32", "int64", "bool".
XDEV_API std::string_view to_string(DType dtype) noexcept;
XDEV_API std::ostream& operator<<(std::ostream& os, DType dtype);

// Bytes per element.
constexpr std::size_t itemsize(DType dtype) noexcept {
  switch (dtype) {
    case DType::kFloat32: return 4;
    case DType::kFloat64: return 8;
    case DType::kInt32: return 4;
    case DType::kInt64: return 8;
    case DType::kBool: return 1;
  }
  return 0;
}

// The DType of a C++ element type: dtype_of<float> == DType::kFloat32.
template <typename T> inline constexpr DType dtype_of = DType::kFloat32;
template <> inline constexpr DType dtype_of<double> = DType::kFloat64;
template <> inline constexpr DType dtype_of<int32_t> = DType::kInt32;
template <> inline constexpr DType dtype_of<int64_t> = DType::kInt64;
template <> inline constexpr DType dtype_of<bool> = DType::kBool;

}  // namespace xdev
