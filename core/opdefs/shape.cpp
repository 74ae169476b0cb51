// DType names and Shape arithmetic without devices (see shape.hpp).
#include "opdefs/shape.hpp"

#include <ostream>
#include <sstream>

#include <xdev/error.hpp>

#include "common/checked_math.hpp"

namespace xdev {

std::string_view to_string(DType dtype) noexcept {
  switch (dtype) {
    case DType::kFloat32: return "float32";
    case DType::kFloat64: return "float64";
    case DType::kInt32: return "int32";
    case DType::kInt64: return "int64";
    case DType::kBool: return "bool";
    case DType::kFloat16: return "float16";
    case DType::kBFloat16: return "bfloat16";
    case DType::kUInt8: return "uint8";
    case DType::kInt8: return "int8";
  }
  return "invalid";
}

std::ostream& operator<<(std::ostream& os, DType dtype) { return os << to_string(dtype); }

void Shape::push_back(int64_t d) {
  if (rank_ >= kMaxRank) {
    throw Error(ErrorCode::kInvalidArgument,
                "a shape has at most " + std::to_string(kMaxRank) + " dimensions");
  }
  dims_[static_cast<size_t>(rank_++)] = d;
}

void Shape::resize(int rank, int64_t fill) {
  if (rank < 0 || rank > kMaxRank) {
    throw Error(ErrorCode::kInvalidArgument,
                "a shape has at most " + std::to_string(kMaxRank) + " dimensions, not " +
                    std::to_string(rank));
  }
  for (int i = rank_; i < rank; ++i) dims_[static_cast<size_t>(i)] = fill;
  rank_ = rank;
}

int64_t Shape::num_elements() const {
  int64_t n = 1;
  for (int64_t d : *this) {
    if (__builtin_mul_overflow(n, d, &n)) {
      throw Error(ErrorCode::kInvalidArgument,
                  "the shape " + detail::shape_text(*this) +
                      " has more elements than an int64 can count");
    }
  }
  return n;
}

std::ostream& operator<<(std::ostream& os, const Shape& shape) {
  os << '(';
  for (int i = 0; i < shape.rank(); ++i) {
    if (i > 0) os << ", ";
    os << shape[static_cast<size_t>(i)];
  }
  if (shape.rank() == 1) os << ',';
  return os << ')';
}

namespace detail {

std::string shape_text(const Shape& shape) {
  std::ostringstream out;
  out << shape;
  return out.str();
}

void throw_bad_size(std::string_view what, DType dtype, const Shape& shape) {
  auto fail = [&](const std::string& why) {
    throw Error(ErrorCode::kInvalidArgument, std::string(what) + ": " + why);
  };
  if (!is_valid(dtype)) {
    fail("dtype code " + std::to_string(static_cast<int32_t>(dtype)) +
         " is not a dtype (float32, float64, int32, int64 or bool)");
  }
  for (int64_t d : shape) {
    if (d < 0) fail("negative dimension " + std::to_string(d) + " in shape " + shape_text(shape));
  }
  const auto elements = checked_elements(std::span<const int64_t>(shape.begin(), shape.end()));
  if (!elements) {
    fail("shape " + shape_text(shape) +
         " has more elements than an int64 can count (its dimensions multiply past 2^63)");
  }
  fail("shape " + shape_text(shape) + " of " + std::string(to_string(dtype)) + " is " +
       std::to_string(*elements) + " elements of " + std::to_string(itemsize(dtype)) +
       " bytes, more than the 2^48 bytes (256 TiB) any device can address");
  throw Error(ErrorCode::kInternal, "throw_bad_size: the size is valid");  // not reached
}

}  // namespace detail
}  // namespace xdev
