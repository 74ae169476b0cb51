// A tensor's values on another device (Tensor::to, implicit copies of
// inputs, DLPack exports of views): a new buffer on the target, filled by
// transfer/copy.hpp.
#include <algorithm>
#include <memory>

#include "tensors/tensor_impl.hpp"
#include "transfer/copy.hpp"

namespace xdev::detail {

std::shared_ptr<TensorImpl> copy_tensor(const TensorImpl& src, LogicalDeviceState* dst) {
  const uint64_t item = itemsize(src.dtype);
  if (src.contiguous() || src.num_elements() == 0) {
    auto out = make_tensor(dst, src.dtype, src.shape);
    copy_between(src.device(), src.memory(), dst, out->memory(), src.num_elements() * item);
    return out;
  }
  // A strided view: move only the bytes it spans, keep its strides.
  auto out = std::make_shared<TensorImpl>();
  auto storage = std::make_shared<Storage>(dst, std::max<uint64_t>(src.span_bytes(), 1));
  out->storage = storage.get();
  out->owner = storage;
  out->dtype = src.dtype;
  out->shape = src.shape;
  out->strides = src.strides;
  out->byte_offset = 0;
  copy_between(src.device(), src.memory(), dst, storage->memory, src.span_bytes());
  return out;
}

}  // namespace xdev::detail
