// Shapes and dtypes without devices: what the op table's shape functions
// and every floor above it (tensors/, ops/, ...) compute sizes, strides and
// shape text with. shape.cpp uses only the SDK headers and common/checked_math.hpp, so
// tools that do not link libxdev (xdev-conformance, xdev-op-table) compile it
// in beside opdefs/op_table.cpp.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include <xdev/dtype.hpp>
#include <xdev/tensor.hpp>

#include "common/checked_math.hpp"

namespace xdev::detail {

// "(2, 3)", "()" for a scalar, "(5,)" for rank 1.
std::string shape_text(const Shape& shape);

// Throws the xdev::Error(kInvalidArgument) of checked_byte_size, saying
// which rule `shape` and `dtype` break.
[[noreturn]] void throw_bad_size(std::string_view what, DType dtype, const Shape& shape);

// The bytes of a tensor of `dtype` and `shape`, checked: a valid dtype, no
// negative dimension, no overflow of the element count or the byte size, at
// most kMaxTensorBytes (common/checked_math.hpp). Otherwise throws
// xdev::Error(kInvalidArgument) "<what>: ..." naming the shape and dtype.
// Inline: every op runs it twice (its outputs' check, make_tensor).
inline uint64_t checked_byte_size(std::string_view what, DType dtype, const Shape& shape) {
  if (is_valid(dtype)) {
    if (auto elements = checked_elements(std::span<const int64_t>(shape.begin(), shape.end()))) {
      if (auto bytes = checked_bytes(*elements, itemsize(dtype))) return *bytes;
    }
  }
  throw_bad_size(what, dtype, shape);
}

}  // namespace xdev::detail
