// Basic indexing (<xdev/indexing.hpp>): a strided view of the same storage.
#include <xdev/indexing.hpp>

#include <algorithm>
#include <sstream>
#include <string>

#include "tensors/tensor_impl.hpp"
#include "tensors/views.hpp"

namespace xdev {
namespace {

[[noreturn]] void invalid(const std::string& why) {
  throw Error(ErrorCode::kInvalidArgument, "slice: " + why);
}

}  // namespace

Tensor slice(const Tensor& x, std::span<const Index> indices) {
  if (!x.defined()) invalid("the tensor is empty (default-constructed)");
  const detail::TensorImpl& impl = *x.impl();
  const int rank = impl.shape.rank();
  int named = 0, ellipses = 0;
  for (const Index& i : indices) {
    if (i.kind == Index::Kind::kInteger || i.kind == Index::Kind::kRange) ++named;
    if (i.kind == Index::Kind::kEllipsis) ++ellipses;
  }
  if (ellipses > 1) invalid("an index can only have a single ellipsis ('...')");
  if (named > rank) {
    std::ostringstream s;
    s << "too many indices: " << named << " for a tensor of shape " << impl.shape;
    invalid(s.str());
  }
  Shape shape, strides;
  int64_t offset = 0;  // in elements
  int axis = 0;
  auto keep = [&](int64_t size, int64_t stride) {
    shape.push_back(size);
    strides.push_back(stride);
  };
  for (const Index& i : indices) {
    switch (i.kind) {
      case Index::Kind::kEllipsis:
        for (int k = 0; k < rank - named; ++k, ++axis) {
          keep(impl.shape[static_cast<size_t>(axis)], impl.strides[static_cast<size_t>(axis)]);
        }
        break;
      case Index::Kind::kNewAxis:
        keep(1, 0);
        break;
      case Index::Kind::kInteger: {
        const int64_t size = impl.shape[static_cast<size_t>(axis)];
        const int64_t at = i.index < 0 ? i.index + size : i.index;
        if (at < 0 || at >= size) {
          invalid("index " + std::to_string(i.index) + " is out of bounds for axis " +
                  std::to_string(axis) + " with size " + std::to_string(size));
        }
        offset += at * impl.strides[static_cast<size_t>(axis)];
        ++axis;
        break;
      }
      case Index::Kind::kRange: {
        const int64_t size = impl.shape[static_cast<size_t>(axis)];
        if (i.step == 0) invalid("slice step cannot be zero (axis " + std::to_string(axis) + ")");
        if (i.step < 0) {
          throw Error(ErrorCode::kUnimplemented,
                      "slice: negative steps (axis " + std::to_string(axis) +
                          ", step " + std::to_string(i.step) + ") are not supported");
        }
        // Python's rules for a positive step: negative bounds count from the
        // end, then everything is clamped to [0, size].
        auto bound = [size](std::optional<int64_t> b, int64_t fallback) {
          if (!b) return fallback;
          int64_t v = *b < 0 ? *b + size : *b;
          return std::clamp<int64_t>(v, 0, size);
        };
        const int64_t start = bound(i.start, 0);
        const int64_t stop = bound(i.stop, size);
        const int64_t count = stop > start ? (stop - start + i.step - 1) / i.step : 0;
        const int64_t stride = impl.strides[static_cast<size_t>(axis)];
        if (count > 0) offset += start * stride;
        keep(count, count > 1 ? stride * i.step : stride);
        ++axis;
        break;
      }
    }
  }
  for (; axis < rank; ++axis) {  // axes not named keep all their elements
    keep(impl.shape[static_cast<size_t>(axis)], impl.strides[static_cast<size_t>(axis)]);
  }
  const uint64_t byte_offset =
      impl.byte_offset + static_cast<uint64_t>(offset) * itemsize(impl.dtype);
  return detail::storage_view(x, shape, strides, byte_offset);
}

}  // namespace xdev
