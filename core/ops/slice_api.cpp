// The SDK functions of the ops Slice and StridedSlice (<xdev/ops.hpp>). The
// op table checks every call (errors name the op, the axis and the values);
// a window that walks every axis forwards is then a view of x's storage
// (no copy, no op, like xdev::slice), and only a reversed one runs the op,
// whose kernel copies: a view with negative strides is not something
// kernels are promised to take. split (TF's Split and SplitV) cuts x
// into consecutive pieces along one axis: always views, so no op runs.
#include <xdev/ops.hpp>
#include <xdev/strided_slice.hpp>

#include <optional>
#include <string>
#include <vector>

#include "common/checked_math.hpp"
#include "ops/run_op.hpp"
#include "opdefs/shape.hpp"
#include "tensors/tensor_impl.hpp"
#include "tensors/views.hpp"

namespace xdev {

Tensor slice(const Tensor& x, const std::vector<int64_t>& begin,
             const std::vector<int64_t>& size) {
  detail::Attrs attrs;
  attrs.add_ints(detail::attr::kBegin, begin.data(), static_cast<int64_t>(begin.size()));
  attrs.add_ints(detail::attr::kSize, size.data(), static_cast<int64_t>(size.size()));
  const Tensor* const inputs[1] = {&x};
  detail::check_defined_op(detail::OpId::kSlice, inputs, attrs);
  const detail::TensorImpl& impl = *x.impl();
  Shape shape;
  int64_t offset = 0;  // elements; only when the window is not empty
  bool empty = false;
  for (size_t k = 0; k < begin.size(); ++k) {
    const int64_t n = size[k] < 0 ? impl.shape[k] - begin[k] : size[k];
    shape.push_back(n);
    empty = empty || n == 0;
    offset += begin[k] * impl.strides[k];
  }
  const uint64_t byte_offset =
      impl.byte_offset + (empty ? 0 : static_cast<uint64_t>(offset) * itemsize(impl.dtype));
  return detail::storage_view(x, shape, impl.strides, byte_offset);
}

Tensor strided_slice(const Tensor& x, const std::vector<int64_t>& begin,
                     const std::vector<int64_t>& end, const std::vector<int64_t>& strides,
                     int64_t begin_mask, int64_t end_mask, int64_t ellipsis_mask,
                     int64_t new_axis_mask, int64_t shrink_axis_mask) {
  const std::vector<int64_t> ones(strides.empty() ? begin.size() : 0, 1);
  const std::vector<int64_t>& steps = strides.empty() ? ones : strides;
  detail::Attrs attrs;
  attrs.add_ints(detail::attr::kBegin, begin.data(), static_cast<int64_t>(begin.size()));
  attrs.add_ints(detail::attr::kEnd, end.data(), static_cast<int64_t>(end.size()));
  attrs.add_ints(detail::attr::kStrides, steps.data(), static_cast<int64_t>(steps.size()));
  attrs.add_int(detail::attr::kBeginMask, begin_mask);
  attrs.add_int(detail::attr::kEndMask, end_mask);
  attrs.add_int(detail::attr::kEllipsisMask, ellipsis_mask);
  attrs.add_int(detail::attr::kNewAxisMask, new_axis_mask);
  attrs.add_int(detail::attr::kShrinkAxisMask, shrink_axis_mask);
  const Tensor* const inputs[1] = {&x};
  detail::check_defined_op(detail::OpId::kStridedSlice, inputs, attrs);
  const detail::TensorImpl& impl = *x.impl();
  strided_slice_spec::Dense dense;
  strided_slice_spec::make_dense(static_cast<int32_t>(impl.shape.rank()), impl.shape.data(),
                            begin.data(), end.data(), steps.data(),
                            static_cast<int64_t>(begin.size()), begin_mask, end_mask,
                            ellipsis_mask, new_axis_mask, shrink_axis_mask, dense);
  int64_t offset = 0;  // elements; only when the window is not empty
  bool empty = false, reversed = false;
  for (int32_t k = 0; k < dense.input_rank; ++k) {
    const strided_slice_spec::Axis& a = dense.axes[k];
    empty = empty || a.size == 0;
    reversed = reversed || (a.stride < 0 && a.size > 1);
    offset += a.begin * impl.strides[static_cast<size_t>(k)];
  }
  if (reversed) return detail::run_defined_op(detail::OpId::kStridedSlice, inputs, attrs);
  Shape shape, view_strides;
  for (int32_t j = 0; j < dense.output_rank; ++j) {
    shape.push_back(dense.output_shape[j]);
    view_strides.push_back(dense.view_stride(j, impl.strides.data()));
  }
  const uint64_t byte_offset =
      impl.byte_offset + (empty ? 0 : static_cast<uint64_t>(offset) * itemsize(impl.dtype));
  return detail::storage_view(x, shape, view_strides, byte_offset);
}

namespace {

[[noreturn]] void split_invalid(const char* op, const std::string& why) {
  throw Error(ErrorCode::kInvalidArgument, std::string(op) + ": " + why);
}

// `axis` (negative: from the end) of x, checked.
size_t split_axis(const char* op, const Tensor& x, int axis) {
  if (!x.defined()) split_invalid(op, "x is an empty (default-constructed) tensor");
  const int rank = x.shape().rank();
  if (axis < -rank || axis >= rank) {
    split_invalid(op, "axis " + std::to_string(axis) + " is out of range for x of shape " +
                          detail::shape_text(x.shape()) + " (rank " + std::to_string(rank) + ")");
  }
  return static_cast<size_t>(axis < 0 ? axis + rank : axis);
}

// The pieces of x along `axis` of the given sizes (they add up to the axis).
std::vector<Tensor> split_views(const Tensor& x, size_t axis, const std::vector<int64_t>& sizes) {
  const detail::TensorImpl& impl = *x.impl();
  std::vector<Tensor> pieces;
  pieces.reserve(sizes.size());
  int64_t begin = 0;
  for (int64_t size : sizes) {
    Shape shape = impl.shape;
    shape[axis] = size;
    const bool empty = size == 0 || impl.num_elements() == 0;
    const uint64_t byte_offset =
        impl.byte_offset +
        (empty ? 0 : static_cast<uint64_t>(begin * impl.strides[axis]) * itemsize(impl.dtype));
    pieces.push_back(detail::storage_view(x, shape, impl.strides, byte_offset));
    begin += size;
  }
  return pieces;
}

}  // namespace

std::vector<Tensor> split(const Tensor& x, int64_t num_split, int axis) {
  const size_t a = split_axis("Split", x, axis);
  const int64_t n = x.shape()[a];
  if (num_split < 1 || n % num_split != 0) {
    split_invalid("Split", "num_split " + std::to_string(num_split) +
                               (num_split < 1 ? " must be >= 1"
                                              : " does not divide dimension " + std::to_string(n)) +
                               " of axis " + std::to_string(a) + " of x of shape " +
                               detail::shape_text(x.shape()));
  }
  return split_views(x, a, std::vector<int64_t>(static_cast<size_t>(num_split), n / num_split));
}

std::vector<Tensor> split(const Tensor& x, const std::vector<int64_t>& sizes, int axis) {
  const size_t a = split_axis("SplitV", x, axis);
  const int64_t n = x.shape()[a];
  std::string list;
  for (size_t i = 0; i < sizes.size(); ++i) list += (i ? ", " : "") + std::to_string(sizes[i]);
  auto refuse = [&](const std::string& why) {
    split_invalid("SplitV", "size_splits {" + list + "} " + why + " (axis " + std::to_string(a) +
                                " of x of shape " + detail::shape_text(x.shape()) + ")");
  };
  if (sizes.empty()) refuse("is empty: it needs one size per piece");
  std::vector<int64_t> resolved = sizes;
  size_t rest = sizes.size();  // the position of the -1, if any
  uint64_t known = 0;
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] == -1 && rest == sizes.size()) {
      rest = i;
      continue;
    }
    if (sizes[i] < 0) refuse(sizes[i] == -1 ? "has more than one -1" : "has a negative size");
    const std::optional<uint64_t> sum = detail::checked_add(known, static_cast<uint64_t>(sizes[i]));
    if (!sum || *sum > static_cast<uint64_t>(n)) {
      refuse("adds up to more than the axis' " + std::to_string(n));
    }
    known = *sum;
  }
  if (rest < sizes.size()) {
    resolved[rest] = n - static_cast<int64_t>(known);
  } else if (known != static_cast<uint64_t>(n)) {
    refuse("adds up to " + std::to_string(known) + ", not the axis' " + std::to_string(n));
  }
  return split_views(x, a, resolved);
}

}  // namespace xdev
