// Shapes and dtypes without devices: the part of tensors/ that the op table
// needs. shape.cpp uses only the SDK headers and common/checked_math.hpp, so
// tools that do not link libxdev (xdev-conformance, xdev-op-table) compile it
// in beside ops/op_table.cpp.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include <xdev/dtype.hpp>
#include <xdev/tensor.hpp>

namespace xdev::detail {

// "(2, 3)", "()" for a scalar, "(5,)" for rank 1.
std::string shape_text(const Shape& shape);

// The bytes of a tensor of `dtype` and `shape`, checked: a valid dtype, no
// negative dimension, no overflow of the element count or the byte size, at
// most kMaxTensorBytes (common/checked_math.hpp). Otherwise throws
// xdev::Error(kInvalidArgument) "<what>: ..." naming the shape and dtype.
uint64_t checked_byte_size(std::string_view what, DType dtype, const Shape& shape);

}  // namespace xdev::detail
