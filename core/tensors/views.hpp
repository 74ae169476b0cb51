// Views of a tensor's storage made by the SDK without an op (slice,
// expand_dims, squeeze, broadcast_to): one constructor they share.
#pragma once

#include <cstdint>

#include <xdev/tensor.hpp>

namespace xdev::detail {

// The view of `x`'s storage of `shape`, `strides` (elements) and
// `byte_offset`, reported to the thread's op recorder (tensors/op_record.hpp:
// a tape differentiates through views). Size-1 axes get the contiguous stride, so a view that is
// dense counts as contiguous (what ops and DLPack consumers check).
Tensor storage_view(const Tensor& x, const Shape& shape, Shape strides, uint64_t byte_offset);

}  // namespace xdev::detail
