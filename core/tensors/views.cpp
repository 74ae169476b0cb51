// Views that cost no copy and run no op (<xdev/indexing.hpp>): expand_dims
// and squeeze, TensorFlow's ExpandDims and Squeeze as strided views of the
// same storage, and the constructor every view shares (broadcast_to, whose
// rule is the op BroadcastTo's, is in ops/index_api.cpp). xdev tensors are
// immutable, so a view behaves like TF's copy.
#include "tensors/views.hpp"

#include <xdev/indexing.hpp>

#include <sstream>
#include <string>

#include "tensors/op_record.hpp"
#include "opdefs/shape.hpp"
#include "tensors/tensor_impl.hpp"

namespace xdev {
namespace detail {

Tensor storage_view(const Tensor& x, const Shape& shape, Shape strides, uint64_t byte_offset) {
  const Shape dense = contiguous_strides(shape);
  for (size_t k = 0; k < shape.size(); ++k) {
    if (shape[k] == 1) strides[k] = dense[k];
  }
  Tensor view(make_view(x.impl_ptr(), shape, strides, byte_offset));
  if (OpRecorder* recorder = op_recorder()) recorder->record_view(x, view);
  return view;
}

}  // namespace detail

namespace {

[[noreturn]] void invalid(const char* op, const std::string& why) {
  throw Error(ErrorCode::kInvalidArgument, std::string(op) + ": " + why);
}

const detail::TensorImpl& defined(const char* op, const Tensor& x) {
  if (!x.defined()) invalid(op, "the tensor is empty (default-constructed)");
  return *x.impl();
}

}  // namespace

Tensor expand_dims(const Tensor& x, int axis) {
  const detail::TensorImpl& impl = defined("ExpandDims", x);
  const int rank = impl.shape.rank();
  const int a = axis < 0 ? axis + rank + 1 : axis;
  if (a < 0 || a > rank || rank >= kMaxRank) {
    invalid("ExpandDims", "axis " + std::to_string(axis) + " is out of range for shape " +
                              detail::shape_text(impl.shape) + " (the result has rank " +
                              std::to_string(rank + 1) + ", at most " +
                              std::to_string(kMaxRank) + ")");
  }
  Shape shape, strides;
  for (int k = 0; k <= rank; ++k) {
    if (k == a) {
      shape.push_back(1);
      strides.push_back(0);  // made contiguous by storage_view
    }
    if (k < rank) {
      shape.push_back(impl.shape[static_cast<size_t>(k)]);
      strides.push_back(impl.strides[static_cast<size_t>(k)]);
    }
  }
  return detail::storage_view(x, shape, strides, impl.byte_offset);
}

Tensor squeeze(const Tensor& x, const std::vector<int>& axes) {
  const detail::TensorImpl& impl = defined("Squeeze", x);
  const int rank = impl.shape.rank();
  std::vector<bool> drop(static_cast<size_t>(rank), axes.empty());
  if (axes.empty()) {
    for (int k = 0; k < rank; ++k) drop[static_cast<size_t>(k)] = impl.shape[static_cast<size_t>(k)] == 1;
  }
  for (int axis : axes) {
    const int a = axis < 0 ? axis + rank : axis;
    if (a < 0 || a >= rank) {
      invalid("Squeeze", "axis " + std::to_string(axis) + " is out of range for shape " +
                             detail::shape_text(impl.shape));
    }
    if (impl.shape[static_cast<size_t>(a)] != 1) {
      invalid("Squeeze", "axis " + std::to_string(axis) + " of shape " +
                             detail::shape_text(impl.shape) + " has size " +
                             std::to_string(impl.shape[static_cast<size_t>(a)]) + ", not 1");
    }
    drop[static_cast<size_t>(a)] = true;
  }
  Shape shape, strides;
  for (int k = 0; k < rank; ++k) {
    if (drop[static_cast<size_t>(k)]) continue;
    shape.push_back(impl.shape[static_cast<size_t>(k)]);
    strides.push_back(impl.strides[static_cast<size_t>(k)]);
  }
  return detail::storage_view(x, shape, strides, impl.byte_offset);
}

}  // namespace xdev
