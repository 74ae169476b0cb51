// The SDK functions of the ops Range and OneHot (<xdev/ops.hpp>): tensors
// made from a sequence's bounds and from indices, and of BroadcastTo (the
// copying twin of the broadcast_to view). The op table checks every call
// (errors name the op and the values); the wrappers only map OneHot's axis
// -1 to the end, as TensorFlow does.
#include <xdev/ops.hpp>

#include "ops/run_op.hpp"

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

}  // namespace xdev
