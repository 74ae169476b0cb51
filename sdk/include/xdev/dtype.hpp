// Element types of tensors. Values match the plugin ABI's xdev_dtype_t
// (checked at compile time where the core includes both headers).
#pragma once

#include <cstddef>
#include <cstdint>
#include <ostream>
#include <string_view>
#include <type_traits>

#include <xdev/export.hpp>
#include <xdev/half.hpp>

namespace xdev {

enum class DType : int32_t {
  kFloat32 = 1,
  kFloat64 = 2,
  kInt32 = 3,
  kInt64 = 4,
  kBool = 5,  // one byte, 0 or 1
  kFloat16 = 6,   // IEEE 754 binary16 (xdev::float16, <xdev/half.hpp>)
  kBFloat16 = 7,  // bfloat16 (xdev::bfloat16)
  kUInt8 = 8,
  kInt8 = 9,
};

// True for the nine enumerators above. A DType made from any other integer
// (static_cast<DType>(99)) is refused by every SDK function with
// xdev::Error(kInvalidArgument).
constexpr bool is_valid(DType dtype) noexcept {
  switch (dtype) {
    case DType::kFloat32:
    case DType::kFloat64:
    case DType::kInt32:
    case DType::kInt64:
    case DType::kBool:
    case DType::kFloat16:
    case DType::kBFloat16:
    case DType::kUInt8:
    case DType::kInt8:
      return true;
  }
  return false;
}

// "float32", "float64", "int32", "int64", "bool", "float16", "bfloat16",
// "uint8", "int8" ("invalid" for others).
XDEV_API std::string_view to_string(DType dtype) noexcept;
XDEV_API std::ostream& operator<<(std::ostream& os, DType dtype);

// Bytes per element (0 for an invalid dtype).
constexpr std::size_t itemsize(DType dtype) noexcept {
  switch (dtype) {
    case DType::kFloat32: return 4;
    case DType::kFloat64: return 8;
    case DType::kInt32: return 4;
    case DType::kInt64: return 8;
    case DType::kBool: return 1;
    case DType::kFloat16: return 2;
    case DType::kBFloat16: return 2;
    case DType::kUInt8: return 1;
    case DType::kInt8: return 1;
  }
  return 0;
}

// True for float32, float64, float16 and bfloat16.
constexpr bool is_floating(DType dtype) noexcept {
  return dtype == DType::kFloat32 || dtype == DType::kFloat64 || dtype == DType::kFloat16 ||
         dtype == DType::kBFloat16;
}

// The C++ element types of the nine dtypes: float, double, int32_t, int64_t,
// bool, xdev::float16, xdev::bfloat16, uint8_t, int8_t. Templates over
// element types (constant(std::vector<T>), HostTensor::values<T>()) accept
// only these: any other type (int16_t, long double, ...) does not compile,
// instead of being read as float32.
template <typename T>
concept Element = std::is_same_v<T, float> || std::is_same_v<T, double> ||
                  std::is_same_v<T, int32_t> || std::is_same_v<T, int64_t> ||
                  std::is_same_v<T, bool> || std::is_same_v<T, float16> ||
                  std::is_same_v<T, bfloat16> || std::is_same_v<T, uint8_t> ||
                  std::is_same_v<T, int8_t>;

// The DType of an element type: dtype_of<float> == DType::kFloat32.
template <Element T>
inline constexpr DType dtype_of = std::is_same_v<T, float>      ? DType::kFloat32
                                  : std::is_same_v<T, double>   ? DType::kFloat64
                                  : std::is_same_v<T, int32_t>  ? DType::kInt32
                                  : std::is_same_v<T, int64_t>  ? DType::kInt64
                                  : std::is_same_v<T, float16>  ? DType::kFloat16
                                  : std::is_same_v<T, bfloat16> ? DType::kBFloat16
                                  : std::is_same_v<T, uint8_t>  ? DType::kUInt8
                                  : std::is_same_v<T, int8_t>   ? DType::kInt8
                                                                : DType::kBool;

}  // namespace xdev
