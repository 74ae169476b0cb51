// The SDK functions of the ops Range and OneHot (<xdev/ops.hpp>): tensors
// made from a sequence's bounds and from indices, and of BroadcastTo: the
// copying broadcast_to_copy and the broadcast_to view (<xdev/indexing.hpp>,
// a view of the same storage, as tensors/views.hpp makes them, checked by
// the op's rule). The op table checks every call
// (errors name the op and the values); the wrappers only map OneHot's axis
// -1 to the end, as TensorFlow does.
#include <xdev/indexing.hpp>
#include <xdev/ops.hpp>

#include "ops/run_op.hpp"
#include "tensors/views.hpp"

namespace xdev {

Tensor range(double start, double limit, double delta, DType dtype) {
  detail::Attrs attrs;
  attrs.add_float(detail::attr::kStart, start);
  attrs.add_float(detail::attr::kLimit, limit);
  attrs.add_float(detail::attr::kDelta, delta);
  attrs.add_dtype(detail::attr::kDtype, dtype);
  return detail::run_defined_op(detail::OpId::kRange, {}, attrs);
}

Tensor one_hot(const Tensor& indices, int64_t depth, double on_value, double off_value, int axis,
               DType dtype) {
  const detail::OpDef& def = detail::op_def(detail::OpId::kOneHot);
  if (!indices.defined()) detail::throw_invalid(def, "indices is an empty (default-constructed) tensor");
  const int rank = indices.rank();
  if (axis < -1 || axis > rank) {
    detail::throw_invalid(def, "axis " + std::to_string(axis) + " is out of range for indices of rank " +
                                   std::to_string(rank) + " (-1 or in [0, " + std::to_string(rank) +
                                   "])");
  }
  detail::Attrs attrs;
  attrs.add_int(detail::attr::kDepth, depth);
  attrs.add_float(detail::attr::kOnValue, on_value);
  attrs.add_float(detail::attr::kOffValue, off_value);
  attrs.add_int(detail::attr::kAxis, axis < 0 ? rank : axis);
  attrs.add_dtype(detail::attr::kDtype, dtype);
  const Tensor* const inputs[1] = {&indices};
  return detail::run_defined_op(detail::OpId::kOneHot, inputs, attrs);
}

Tensor broadcast_to_copy(const Tensor& x, const Shape& shape) {
  detail::Attrs attrs;
  attrs.add_ints(detail::attr::kShape, shape.data(), shape.rank());
  const Tensor* const inputs[1] = {&x};
  return detail::run_defined_op(detail::OpId::kBroadcastTo, inputs, attrs);
}

Tensor broadcast_to(const Tensor& x, const Shape& shape) {
  // The op BroadcastTo's check (opdefs/op_table.cpp) is the rule: the view is that
  // op's result without the copy.
  detail::Attrs attrs;
  attrs.add_ints(detail::attr::kShape, shape.data(), shape.rank());
  const Tensor* const inputs[1] = {&x};
  detail::check_defined_op(detail::OpId::kBroadcastTo, inputs, attrs);
  const detail::TensorImpl& impl = *x.impl();
  const int rank = impl.shape.rank();
  Shape strides;
  for (int k = 0; k < shape.rank(); ++k) {
    const int from = k - (shape.rank() - rank);  // the input's axis, or < 0 (a new one)
    const bool kept = from >= 0 && impl.shape[static_cast<size_t>(from)] == shape[static_cast<size_t>(k)];
    strides.push_back(kept ? impl.strides[static_cast<size_t>(from)] : 0);
  }
  return detail::storage_view(x, shape, strides, impl.byte_offset);
}

}  // namespace xdev
