// The SDK's op functions (<xdev/ops.hpp>): thin wrappers that put their
// arguments into an op call and hand it to run_defined_op, which checks it
// against the op's table entry (op_table.cpp) and runs it. What is here is
// only the SDK's own convenience: nested-list constants, negative and
// "all" axes, the seed counter, views for transpose and reshape.
#include <xdev/ops.hpp>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <sstream>

#include <xdev/placement.hpp>

#include "common/checked_math.hpp"
#include "ops/run_op.hpp"
#include "placement/decide.hpp"
#include "transfer/copy.hpp"
#include "placement/placement_state.hpp"
#include "devices/runtime.hpp"
#include "opdefs/shape.hpp"
#include "tensors/tensor_impl.hpp"
#include "tensors/views.hpp"

namespace xdev {
namespace {

using detail::Attrs;
using detail::OpId;
using detail::shape_text;

[[noreturn]] void invalid(std::string_view op, const std::string& why) {
  throw Error(ErrorCode::kInvalidArgument, std::string(op) + ": " + why);
}

// For wrappers that look at an input before the generic checks do.
const Tensor& defined(std::string_view op, const Tensor& t, const char* which) {
  if (!t.defined()) invalid(op, std::string(which) + " is an empty (default-constructed) tensor");
  return t;
}

// --- creation ---

Tensor upload_host(const void* data, DType dtype, const Shape& shape) {
  const uint64_t bytes = detail::checked_byte_size("constant", dtype, shape);
  detail::Runtime::global().ensure_initialized();
  detail::LogicalDeviceState* device = detail::place_creation("_EagerConst");
  auto out = detail::make_tensor(device, dtype, shape, "constant");
  detail::upload(device, out->memory(), data, bytes);
  if (detail::log_placement_enabled()) detail::log_placement("_EagerConst", device->name());
  return Tensor(std::move(out));
}

int promotion_rank(DType d) {
  switch (d) {
    case DType::kBool: return 0;
    case DType::kInt32: return 1;
    case DType::kInt64: return 2;
    case DType::kFloat32: return 3;
    case DType::kFloat64: return 4;
    // Not the kind of a C++ literal; ranked where NumPy would put them.
    case DType::kUInt8:
    case DType::kInt8: return 1;
    case DType::kFloat16:
    case DType::kBFloat16: return 3;
  }
  return 0;
}

// The shape a nested list claims, from its first items.
Shape literal_shape(const Literal& value) {
  Shape shape;
  const Literal* p = &value;
  while (p->is_list()) {
    shape.push_back(static_cast<int64_t>(p->items().size()));
    if (p->items().empty()) break;
    p = &p->items().front();
  }
  return shape;
}

// Collects the leaves row-major, checking every list has the claimed length.
void collect_leaves(const Literal& value, const Shape& shape, int depth,
                    std::vector<const Literal*>& leaves, DType& kind) {
  if (depth == shape.rank()) {
    if (value.is_list()) {
      invalid("constant", "the nested list is ragged: a list stands at depth " +
                              std::to_string(depth) + " where a number is expected");
    }
    if (promotion_rank(value.kind()) > promotion_rank(kind)) kind = value.kind();
    leaves.push_back(&value);
    return;
  }
  const int64_t expected = shape[static_cast<size_t>(depth)];
  if (!value.is_list() || static_cast<int64_t>(value.items().size()) != expected) {
    invalid("constant", "the nested list is ragged: at depth " + std::to_string(depth) +
                            " a list of " + std::to_string(expected) + " items is expected, not " +
                            (value.is_list() ? std::to_string(value.items().size()) + " items"
                                             : std::string("a number")));
  }
  for (const Literal& item : value.items()) collect_leaves(item, shape, depth + 1, leaves, kind);
}

template <typename T>
void write_leaves(const std::vector<const Literal*>& leaves, std::vector<std::byte>& out) {
  out.resize(leaves.size() * sizeof(T));
  T* p = reinterpret_cast<T*>(out.data());
  for (size_t i = 0; i < leaves.size(); ++i) {
    if constexpr (std::is_floating_point_v<T> || std::is_same_v<T, float16> ||
                  std::is_same_v<T, bfloat16>) {
      p[i] = static_cast<T>(leaves[i]->as_double());  // float16, bfloat16: rounded once
    } else if constexpr (std::is_same_v<T, bool>) {
      p[i] = leaves[i]->as_double() != 0.0;
    } else {
      p[i] = static_cast<T>(leaves[i]->as_int());
    }
  }
}

std::atomic<uint64_t> g_seed_counter{0x5eed};

std::vector<int64_t> normalize_axes(std::string_view op, const std::vector<int>& axes, int rank,
                                    EmptyAxes empty) {
  std::vector<int64_t> out;
  if (axes.empty() && empty == EmptyAxes::kAll) {
    for (int i = 0; i < rank; ++i) out.push_back(i);
    return out;
  }
  for (int a : axes) {
    int axis = a < 0 ? a + rank : a;
    if (axis < 0 || axis >= rank) {
      invalid(op, "axis " + std::to_string(a) + " is out of range for rank " + std::to_string(rank));
    }
    out.push_back(axis);
  }
  std::sort(out.begin(), out.end());
  if (std::adjacent_find(out.begin(), out.end()) != out.end()) {
    invalid(op, "an axis is given twice");
  }
  return out;
}

Tensor binary(OpId op, const Tensor& x, const Tensor& y) {
  const Tensor* const inputs[2] = {&x, &y};
  return detail::run_defined_op(op, inputs, Attrs{});
}

Tensor ternary(OpId op, const Tensor& a, const Tensor& b, const Tensor& c) {
  const Tensor* const inputs[3] = {&a, &b, &c};
  return detail::run_defined_op(op, inputs, Attrs{});
}

Tensor unary(OpId op, const Tensor& x) {
  const Tensor* const inputs[1] = {&x};
  return detail::run_defined_op(op, inputs, Attrs{});
}

// The SDK's axes (negative from the end, empty for all) as the op's `axes`
// attribute (sorted, unique, in [0, rank)).
Tensor reduce(OpId op, const Tensor& x, const std::vector<int>& axes, bool keepdims,
              EmptyAxes empty = EmptyAxes::kAll) {
  const std::string_view name = detail::op_name(op);
  defined(name, x, "x");
  // Kernels read the list exactly: an empty one reduces nothing.
  std::vector<int64_t> reduced = normalize_axes(name, axes, x.rank(), empty);
  Attrs attrs;
  attrs.add_ints(detail::attr::kAxes, reduced.data(), static_cast<int64_t>(reduced.size()));
  attrs.add_bool(detail::attr::kKeepdims, keepdims);
  const Tensor* const inputs[1] = {&x};
  return detail::run_defined_op(op, inputs, attrs);
}

// One axis (negative from the end) as the op's `axis` attribute.
Attrs axis_attrs(OpId op, const Tensor& x, int axis) {
  const std::string_view name = detail::op_name(op);
  defined(name, x, "x");
  const int rank = x.rank();
  const int a = axis < 0 ? axis + rank : axis;
  if (a < 0 || a >= rank) {
    invalid(name, "axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
  }
  Attrs attrs;
  attrs.add_int(detail::attr::kAxis, a);
  return attrs;
}

}  // namespace

Tensor argmax(const Tensor& x, int axis) {
  const Tensor* const inputs[1] = {&x};
  return detail::run_defined_op(OpId::kArgMax, inputs, axis_attrs(OpId::kArgMax, x, axis));
}
Tensor argmin(const Tensor& x, int axis) {
  const Tensor* const inputs[1] = {&x};
  return detail::run_defined_op(OpId::kArgMin, inputs, axis_attrs(OpId::kArgMin, x, axis));
}
Tensor cumsum(const Tensor& x, int axis, bool exclusive, bool reverse) {
  Attrs attrs = axis_attrs(OpId::kCumSum, x, axis);
  attrs.add_bool(detail::attr::kExclusive, exclusive);
  attrs.add_bool(detail::attr::kReverse, reverse);
  const Tensor* const inputs[1] = {&x};
  return detail::run_defined_op(OpId::kCumSum, inputs, attrs);
}

Tensor softmax(const Tensor& logits, int axis) {
  const Tensor* const inputs[1] = {&logits};
  return detail::run_defined_op(OpId::kSoftmax, inputs, axis_attrs(OpId::kSoftmax, logits, axis));
}
Tensor log_softmax(const Tensor& logits, int axis) {
  const Tensor* const inputs[1] = {&logits};
  return detail::run_defined_op(OpId::kLogSoftmax, inputs,
                                axis_attrs(OpId::kLogSoftmax, logits, axis));
}

Tensor constant(const Literal& value, std::optional<DType> dtype) {
  return constant(value, literal_shape(value), dtype);
}

Tensor constant(const Literal& value, const Shape& shape, std::optional<DType> dtype) {
  Shape given = literal_shape(value);
  std::vector<const Literal*> leaves;
  DType kind = DType::kBool;
  collect_leaves(value, given, 0, leaves, kind);
  if (leaves.empty()) kind = DType::kFloat32;  // only empty lists
  DType target = dtype.value_or(kind);
  // A valid dtype and size before converting.
  const uint64_t total = detail::checked_byte_size("constant", target, shape);
  const int64_t count = shape.num_elements();
  const bool scalar = !value.is_list();
  if (!scalar && static_cast<int64_t>(leaves.size()) != count) {
    std::ostringstream m;
    m << leaves.size() << " values do not fill a shape of " << shape << " (" << count
      << " elements)";
    invalid("constant", m.str());
  }
  std::vector<std::byte> bytes;
  switch (target) {
    case DType::kFloat32: write_leaves<float>(leaves, bytes); break;
    case DType::kFloat64: write_leaves<double>(leaves, bytes); break;
    case DType::kInt32: write_leaves<int32_t>(leaves, bytes); break;
    case DType::kInt64: write_leaves<int64_t>(leaves, bytes); break;
    case DType::kBool: write_leaves<bool>(leaves, bytes); break;
    case DType::kFloat16: write_leaves<float16>(leaves, bytes); break;
    case DType::kBFloat16: write_leaves<bfloat16>(leaves, bytes); break;
    case DType::kUInt8: write_leaves<uint8_t>(leaves, bytes); break;
    case DType::kInt8: write_leaves<int8_t>(leaves, bytes); break;
  }
  if (scalar && count != 1) {
    // A single number fills the shape (TensorFlow's tf.constant(0, shape=...)).
    const std::vector<std::byte> one = std::move(bytes);
    bytes.resize(total);
    for (uint64_t at = 0; at < total; at += one.size()) {
      std::memcpy(bytes.data() + at, one.data(), one.size());
    }
  }
  return upload_host(bytes.data(), target, shape);
}

Tensor scalar_like(const Tensor& x, const Literal& value) {
  defined("scalar_like", x, "x");
  if (value.is_list()) invalid("scalar_like", "the value is a list, not a number");
  DeviceScope scope(x.device());
  return constant(value, Shape{}, x.dtype());
}

Tensor constant(const void* data, DType dtype, const Shape& shape) {
  const uint64_t bytes = detail::checked_byte_size("constant", dtype, shape);
  if (data == nullptr && bytes > 0) invalid("constant", "data is NULL");
  return upload_host(data, dtype, shape);
}

Tensor fill(const Shape& shape, double value, DType dtype) {
  Attrs attrs;
  attrs.add_float(detail::attr::kValue, value);
  attrs.add_ints(detail::attr::kShape, shape.data(), shape.rank());
  attrs.add_dtype(detail::attr::kDtype, dtype);
  return detail::run_defined_op(OpId::kFill, {}, attrs);
}

Tensor zeros(const Shape& shape, DType dtype) { return fill(shape, 0.0, dtype); }
Tensor ones(const Shape& shape, DType dtype) { return fill(shape, 1.0, dtype); }

void set_random_seed(uint64_t seed) { g_seed_counter.store(seed); }

Tensor random_uniform(const Shape& shape, double minval, double maxval, DType dtype,
                      std::optional<uint64_t> seed) {
  Attrs attrs;
  attrs.add_int(detail::attr::kSeed, static_cast<int64_t>(seed.value_or(0)));
  attrs.add_float(detail::attr::kMinval, minval);
  attrs.add_float(detail::attr::kMaxval, maxval);
  attrs.add_ints(detail::attr::kShape, shape.data(), shape.rank());
  attrs.add_dtype(detail::attr::kDtype, dtype);
  if (!seed) {
    // A call that is refused takes no value from the counter.
    detail::check_defined_op(OpId::kRandomUniform, {}, attrs);
    attrs = Attrs{};
    attrs.add_int(detail::attr::kSeed, static_cast<int64_t>(g_seed_counter.fetch_add(1)));
    attrs.add_float(detail::attr::kMinval, minval);
    attrs.add_float(detail::attr::kMaxval, maxval);
    attrs.add_ints(detail::attr::kShape, shape.data(), shape.rank());
    attrs.add_dtype(detail::attr::kDtype, dtype);
  }
  return detail::run_defined_op(OpId::kRandomUniform, {}, attrs);
}

Tensor matmul(const Tensor& a, const Tensor& b, bool transpose_a, bool transpose_b) {
  Attrs attrs;
  attrs.add_bool(detail::attr::kTransposeA, transpose_a);
  attrs.add_bool(detail::attr::kTransposeB, transpose_b);
  const Tensor* const inputs[2] = {&a, &b};
  return detail::run_defined_op(OpId::kMatMul, inputs, attrs);
}

Tensor batch_matmul(const Tensor& x, const Tensor& y, bool adj_x, bool adj_y) {
  Attrs attrs;
  attrs.add_bool(detail::attr::kAdjX, adj_x);
  attrs.add_bool(detail::attr::kAdjY, adj_y);
  const Tensor* const inputs[2] = {&x, &y};
  return detail::run_defined_op(OpId::kBatchMatMulV2, inputs, attrs);
}

Tensor add(const Tensor& x, const Tensor& y) { return binary(OpId::kAdd, x, y); }
Tensor sub(const Tensor& x, const Tensor& y) { return binary(OpId::kSub, x, y); }
Tensor mul(const Tensor& x, const Tensor& y) { return binary(OpId::kMul, x, y); }
Tensor div(const Tensor& x, const Tensor& y) { return binary(OpId::kDiv, x, y); }
Tensor maximum(const Tensor& x, const Tensor& y) { return binary(OpId::kMaximum, x, y); }
Tensor minimum(const Tensor& x, const Tensor& y) { return binary(OpId::kMinimum, x, y); }
Tensor floor_div(const Tensor& x, const Tensor& y) { return binary(OpId::kFloorDiv, x, y); }
Tensor floor_mod(const Tensor& x, const Tensor& y) { return binary(OpId::kFloorMod, x, y); }
Tensor squared_difference(const Tensor& x, const Tensor& y) { return binary(OpId::kSquaredDifference, x, y); }
Tensor pow(const Tensor& x, const Tensor& y) { return binary(OpId::kPow, x, y); }
Tensor equal(const Tensor& x, const Tensor& y) { return binary(OpId::kEqual, x, y); }
Tensor not_equal(const Tensor& x, const Tensor& y) { return binary(OpId::kNotEqual, x, y); }
Tensor less(const Tensor& x, const Tensor& y) { return binary(OpId::kLess, x, y); }
Tensor less_equal(const Tensor& x, const Tensor& y) { return binary(OpId::kLessEqual, x, y); }
Tensor greater(const Tensor& x, const Tensor& y) { return binary(OpId::kGreater, x, y); }
Tensor greater_equal(const Tensor& x, const Tensor& y) { return binary(OpId::kGreaterEqual, x, y); }
Tensor logical_and(const Tensor& x, const Tensor& y) { return binary(OpId::kLogicalAnd, x, y); }
Tensor logical_or(const Tensor& x, const Tensor& y) { return binary(OpId::kLogicalOr, x, y); }
Tensor logical_not(const Tensor& x) { return unary(OpId::kLogicalNot, x); }
Tensor is_nan(const Tensor& x) { return unary(OpId::kIsNan, x); }
Tensor is_finite(const Tensor& x) { return unary(OpId::kIsFinite, x); }
Tensor select(const Tensor& condition, const Tensor& x, const Tensor& y) {
  return ternary(OpId::kSelect, condition, x, y);
}
Tensor clip_by_value(const Tensor& x, const Tensor& clip_value_min, const Tensor& clip_value_max) {
  return ternary(OpId::kClipByValue, x, clip_value_min, clip_value_max);
}
Tensor neg(const Tensor& x) { return unary(OpId::kNeg, x); }
Tensor relu(const Tensor& x) { return unary(OpId::kRelu, x); }
Tensor abs(const Tensor& x) { return unary(OpId::kAbs, x); }
Tensor sign(const Tensor& x) { return unary(OpId::kSign, x); }
Tensor square(const Tensor& x) { return unary(OpId::kSquare, x); }
Tensor exp(const Tensor& x) { return unary(OpId::kExp, x); }
Tensor expm1(const Tensor& x) { return unary(OpId::kExpm1, x); }
Tensor log(const Tensor& x) { return unary(OpId::kLog, x); }
Tensor log1p(const Tensor& x) { return unary(OpId::kLog1p, x); }
Tensor sqrt(const Tensor& x) { return unary(OpId::kSqrt, x); }
Tensor rsqrt(const Tensor& x) { return unary(OpId::kRsqrt, x); }
Tensor reciprocal(const Tensor& x) { return unary(OpId::kReciprocal, x); }
Tensor sin(const Tensor& x) { return unary(OpId::kSin, x); }
Tensor cos(const Tensor& x) { return unary(OpId::kCos, x); }
Tensor tanh(const Tensor& x) { return unary(OpId::kTanh, x); }
Tensor sigmoid(const Tensor& x) { return unary(OpId::kSigmoid, x); }
Tensor erf(const Tensor& x) { return unary(OpId::kErf, x); }
Tensor softplus(const Tensor& x) { return unary(OpId::kSoftplus, x); }
Tensor floor(const Tensor& x) { return unary(OpId::kFloor, x); }
Tensor ceil(const Tensor& x) { return unary(OpId::kCeil, x); }
Tensor round(const Tensor& x) { return unary(OpId::kRound, x); }

Tensor leaky_relu(const Tensor& x, double alpha) {
  Attrs attrs;
  attrs.add_float(detail::attr::kAlpha, alpha);
  const Tensor* const inputs[1] = {&x};
  return detail::run_defined_op(OpId::kLeakyRelu, inputs, attrs);
}

Tensor gelu(const Tensor& x, bool approximate) {
  Attrs attrs;
  attrs.add_bool(detail::attr::kApproximate, approximate);
  const Tensor* const inputs[1] = {&x};
  return detail::run_defined_op(OpId::kGelu, inputs, attrs);
}

Tensor add_n(const std::vector<Tensor>& inputs) {
  std::vector<const Tensor*> ptrs;
  ptrs.reserve(inputs.size());
  for (const Tensor& t : inputs) ptrs.push_back(&t);
  return detail::run_defined_op(OpId::kAddN, ptrs, Attrs{});
}

namespace {
// A variadic data-movement op along `axis` (negative: counted from the end of
// a rank of `values[0]`'s rank + `extra`). No values: the op's own check
// refuses the call.
Tensor joined(OpId op, const std::vector<Tensor>& values, int axis, int extra) {
  std::vector<const Tensor*> ptrs;
  ptrs.reserve(values.size());
  for (const Tensor& t : values) ptrs.push_back(&t);
  int a = axis;
  if (!values.empty()) {
    const std::string_view name = detail::op_name(op);
    const int rank = defined(name, values[0], "input 0").rank() + extra;
    a = axis < 0 ? axis + rank : axis;
    if (a < 0 || a >= rank) {
      invalid(name, "axis " + std::to_string(axis) + " is out of range for " +
                        (extra ? "an output of rank " : "inputs of rank ") + std::to_string(rank));
    }
  }
  Attrs attrs;
  attrs.add_int(detail::attr::kAxis, a);
  return detail::run_defined_op(op, ptrs, attrs);
}
}  // namespace

Tensor concat(const std::vector<Tensor>& values, int axis) {
  return joined(OpId::kConcatV2, values, axis, 0);
}
Tensor stack(const std::vector<Tensor>& values, int axis) {
  return joined(OpId::kPack, values, axis, 1);
}
Tensor identity(const Tensor& x) { return unary(OpId::kIdentity, x); }
Tensor gather(const Tensor& params, const Tensor& indices, int axis) {
  const Tensor* const inputs[2] = {&params, &indices};
  return detail::run_defined_op(OpId::kGatherV2, inputs,
                                axis_attrs(OpId::kGatherV2, params, axis));
}
Tensor tensor_scatter_add(const Tensor& tensor, const Tensor& indices, const Tensor& updates) {
  const Tensor* const inputs[3] = {&tensor, &indices, &updates};
  return detail::run_defined_op(OpId::kTensorScatterAdd, inputs, Attrs{});
}
Tensor tile(const Tensor& x, const std::vector<int64_t>& multiples) {
  Attrs attrs;
  attrs.add_ints(detail::attr::kMultiples, multiples.data(),
                 static_cast<int64_t>(multiples.size()));
  const Tensor* const inputs[1] = {&x};
  return detail::run_defined_op(OpId::kTile, inputs, attrs);
}
Tensor pad(const Tensor& x, const std::vector<std::array<int64_t, 2>>& paddings,
           double constant_value) {
  std::vector<int64_t> flat;  // TF's [rank, 2], row-major
  flat.reserve(2 * paddings.size());
  for (const auto& p : paddings) flat.insert(flat.end(), p.begin(), p.end());
  Attrs attrs;
  attrs.add_ints(detail::attr::kPaddings, flat.data(), static_cast<int64_t>(flat.size()));
  attrs.add_float(detail::attr::kConstantValues, constant_value);
  const Tensor* const inputs[1] = {&x};
  return detail::run_defined_op(OpId::kPadV2, inputs, attrs);
}

Tensor cast(const Tensor& x, DType dtype) {
  Attrs attrs;
  attrs.add_dtype(detail::attr::kDtype, dtype);
  const Tensor* const inputs[1] = {&x};
  return detail::run_defined_op(OpId::kCast, inputs, attrs);
}

Tensor sum(const Tensor& x, const std::vector<int>& axes, bool keepdims) {
  return reduce(OpId::kSum, x, axes, keepdims);
}
Tensor mean(const Tensor& x, const std::vector<int>& axes, bool keepdims) {
  return reduce(OpId::kMean, x, axes, keepdims);
}
Tensor max(const Tensor& x, const std::vector<int>& axes, bool keepdims) {
  return reduce(OpId::kMax, x, axes, keepdims);
}
Tensor min(const Tensor& x, const std::vector<int>& axes, bool keepdims) {
  return reduce(OpId::kMin, x, axes, keepdims);
}
Tensor prod(const Tensor& x, const std::vector<int>& axes, bool keepdims) {
  return reduce(OpId::kProd, x, axes, keepdims);
}
Tensor any(const Tensor& x, const std::vector<int>& axes, bool keepdims) {
  return reduce(OpId::kAny, x, axes, keepdims);
}
Tensor all(const Tensor& x, const std::vector<int>& axes, bool keepdims) {
  return reduce(OpId::kAll, x, axes, keepdims);
}
Tensor logsumexp(const Tensor& x, const std::vector<int>& axes, bool keepdims) {
  return reduce(OpId::kLogSumExp, x, axes, keepdims);
}
Tensor sum(const Tensor& x, const std::vector<int>& axes, bool keepdims, EmptyAxes empty) {
  return reduce(OpId::kSum, x, axes, keepdims, empty);
}
Tensor mean(const Tensor& x, const std::vector<int>& axes, bool keepdims, EmptyAxes empty) {
  return reduce(OpId::kMean, x, axes, keepdims, empty);
}
Tensor max(const Tensor& x, const std::vector<int>& axes, bool keepdims, EmptyAxes empty) {
  return reduce(OpId::kMax, x, axes, keepdims, empty);
}
Tensor min(const Tensor& x, const std::vector<int>& axes, bool keepdims, EmptyAxes empty) {
  return reduce(OpId::kMin, x, axes, keepdims, empty);
}
Tensor prod(const Tensor& x, const std::vector<int>& axes, bool keepdims, EmptyAxes empty) {
  return reduce(OpId::kProd, x, axes, keepdims, empty);
}
Tensor any(const Tensor& x, const std::vector<int>& axes, bool keepdims, EmptyAxes empty) {
  return reduce(OpId::kAny, x, axes, keepdims, empty);
}
Tensor all(const Tensor& x, const std::vector<int>& axes, bool keepdims, EmptyAxes empty) {
  return reduce(OpId::kAll, x, axes, keepdims, empty);
}
Tensor logsumexp(const Tensor& x, const std::vector<int>& axes, bool keepdims, EmptyAxes empty) {
  return reduce(OpId::kLogSumExp, x, axes, keepdims, empty);
}

// --- NN ops ---

Tensor bias_add(const Tensor& value, const Tensor& bias, std::string_view data_format) {
  const std::string format(data_format);  // NUL-terminated for the attribute
  Attrs attrs;
  attrs.add_string(detail::attr::kDataFormat, format.c_str());
  const Tensor* const inputs[2] = {&value, &bias};
  return detail::run_defined_op(OpId::kBiasAdd, inputs, attrs);
}

SoftmaxCrossEntropy softmax_cross_entropy_with_logits(const Tensor& features,
                                                      const Tensor& labels) {
  const Tensor* const inputs[2] = {&features, &labels};
  std::vector<Tensor> out =
      detail::run_defined_op_outputs(OpId::kSoftmaxCrossEntropyWithLogits, inputs, Attrs{});
  return {std::move(out[0]), std::move(out[1])};
}

namespace {

// The attributes of Conv2D and the pooling ops: the strings copied so
// that they are NUL-terminated, the ints pointing to the caller's vectors.
class WindowAttrs {
 public:
  WindowAttrs(std::string_view padding, std::string_view format)
      : padding_(padding), format_(format) {
    attrs_.add_string(detail::attr::kPadding, padding_.c_str());
    attrs_.add_string(detail::attr::kDataFormat, format_.c_str());
  }
  WindowAttrs& ints(const char* name, const std::vector<int64_t>& values) {
    attrs_.add_ints(name, values.data(), static_cast<int64_t>(values.size()));
    return *this;
  }
  Tensor run(OpId op, std::span<const Tensor* const> inputs) const {
    return detail::run_defined_op(op, inputs, attrs_);
  }

 private:
  std::string padding_, format_;
  Attrs attrs_;
};

// MaxPool, AvgPool: windows of `ksize` over one input.
Tensor pool(OpId op, const Tensor& input, const std::vector<int64_t>& ksize,
            const std::vector<int64_t>& strides, std::string_view padding,
            std::string_view data_format) {
  const Tensor* const inputs[1] = {&input};
  return WindowAttrs(padding, data_format)
      .ints(detail::attr::kKsize, ksize)
      .ints(detail::attr::kStrides, strides)
      .run(op, inputs);
}

}  // namespace

Tensor conv2d(const Tensor& input, const Tensor& filter, const std::vector<int64_t>& strides,
              std::string_view padding, std::string_view data_format,
              const std::vector<int64_t>& dilations) {
  const Tensor* const inputs[2] = {&input, &filter};
  return WindowAttrs(padding, data_format)
      .ints(detail::attr::kStrides, strides)
      .ints(detail::attr::kDilations, dilations)
      .run(OpId::kConv2D, inputs);
}

Tensor conv2d_backprop_input(const std::vector<int64_t>& input_sizes, const Tensor& filter,
                             const Tensor& out_backprop, const std::vector<int64_t>& strides,
                             std::string_view padding, std::string_view data_format,
                             const std::vector<int64_t>& dilations) {
  const Tensor* const inputs[2] = {&filter, &out_backprop};
  return WindowAttrs(padding, data_format)
      .ints(detail::attr::kInputSizes, input_sizes)
      .ints(detail::attr::kStrides, strides)
      .ints(detail::attr::kDilations, dilations)
      .run(OpId::kConv2DBackpropInput, inputs);
}

Tensor conv2d_backprop_filter(const Tensor& input, const std::vector<int64_t>& filter_sizes,
                              const Tensor& out_backprop, const std::vector<int64_t>& strides,
                              std::string_view padding, std::string_view data_format,
                              const std::vector<int64_t>& dilations) {
  const Tensor* const inputs[2] = {&input, &out_backprop};
  return WindowAttrs(padding, data_format)
      .ints(detail::attr::kFilterSizes, filter_sizes)
      .ints(detail::attr::kStrides, strides)
      .ints(detail::attr::kDilations, dilations)
      .run(OpId::kConv2DBackpropFilter, inputs);
}

Tensor max_pool(const Tensor& input, const std::vector<int64_t>& ksize,
                const std::vector<int64_t>& strides, std::string_view padding,
                std::string_view data_format) {
  return pool(OpId::kMaxPool, input, ksize, strides, padding, data_format);
}

Tensor avg_pool(const Tensor& input, const std::vector<int64_t>& ksize,
                const std::vector<int64_t>& strides, std::string_view padding,
                std::string_view data_format) {
  return pool(OpId::kAvgPool, input, ksize, strides, padding, data_format);
}

Tensor max_pool_grad(const Tensor& orig_input, const Tensor& orig_output, const Tensor& grad,
                     const std::vector<int64_t>& ksize, const std::vector<int64_t>& strides,
                     std::string_view padding, std::string_view data_format) {
  const Tensor* const inputs[3] = {&orig_input, &orig_output, &grad};
  return WindowAttrs(padding, data_format)
      .ints(detail::attr::kKsize, ksize)
      .ints(detail::attr::kStrides, strides)
      .run(OpId::kMaxPoolGrad, inputs);
}

Tensor avg_pool_grad(const std::vector<int64_t>& orig_input_shape, const Tensor& grad,
                     const std::vector<int64_t>& ksize, const std::vector<int64_t>& strides,
                     std::string_view padding, std::string_view data_format) {
  const Tensor* const inputs[1] = {&grad};
  return WindowAttrs(padding, data_format)
      .ints(detail::attr::kOrigInputShape, orig_input_shape)
      .ints(detail::attr::kKsize, ksize)
      .ints(detail::attr::kStrides, strides)
      .run(OpId::kAvgPoolGrad, inputs);
}

Tensor layer_norm(const Tensor& x, const Tensor& gamma, const Tensor& beta, int begin_norm_axis,
                  double epsilon) {
  const int rank = defined("LayerNorm", x, "x").rank();
  const int axis = begin_norm_axis < 0 ? begin_norm_axis + rank : begin_norm_axis;
  if (axis < 0 || axis >= rank) {
    invalid("LayerNorm", "begin_norm_axis " + std::to_string(begin_norm_axis) +
                             " is out of range for x of shape " + shape_text(x.shape()));
  }
  Attrs attrs;
  attrs.add_int(detail::attr::kBeginNormAxis, axis);
  attrs.add_float(detail::attr::kEpsilon, epsilon);
  const Tensor* const inputs[3] = {&x, &gamma, &beta};
  return detail::run_defined_op(OpId::kLayerNorm, inputs, attrs);
}

Tensor dropout(const Tensor& x, double rate, std::optional<uint64_t> seed) {
  defined("Dropout", x, "x");
  if (!(rate >= 0.0 && rate < 1.0)) {
    std::ostringstream text;
    text << rate;
    invalid("Dropout", "rate " + text.str() + " must be in [0, 1)");
  }
  if (x.dtype() != DType::kFloat32 && x.dtype() != DType::kFloat64) {
    invalid("Dropout", "x is " + std::string(to_string(x.dtype())) +
                           "; dropout is defined for float32 and float64");
  }
  // tf.nn.dropout: keep where a uniform sample in [0, 1) is >= rate.
  const Tensor u = random_uniform(x.shape(), 0.0, 1.0, x.dtype(), seed);
  const Tensor keep = greater_equal(u, scalar_like(u, Literal(rate)));
  const Tensor scaled = mul(x, scalar_like(x, Literal(1.0 / (1.0 - rate))));
  return select(keep, scaled, scalar_like(x, Literal(0.0)));
}

// A strided view with the axes permuted, made contiguous by Copy.
Tensor transpose(const Tensor& x, const std::vector<int>& perm) {
  defined("Transpose", x, "x");
  const int rank = x.rank();
  std::vector<int> p = perm;
  if (p.empty()) {
    for (int i = rank - 1; i >= 0; --i) p.push_back(i);
  }
  if (static_cast<int>(p.size()) != rank) {
    invalid("Transpose", "perm has " + std::to_string(p.size()) + " entries for rank " +
                             std::to_string(rank));
  }
  std::vector<bool> seen(static_cast<size_t>(rank), false);
  Shape shape, strides;
  for (int axis : p) {
    if (axis < 0 || axis >= rank || seen[static_cast<size_t>(axis)]) {
      invalid("Transpose", "perm is not a permutation of 0.." + std::to_string(rank - 1));
    }
    seen[static_cast<size_t>(axis)] = true;
    shape.push_back(x.shape()[static_cast<size_t>(axis)]);
    strides.push_back(x.strides()[static_cast<size_t>(axis)]);
  }
  const Tensor view = detail::storage_view(x, shape, strides, x.impl()->byte_offset);
  const Tensor* const inputs[1] = {&view};
  return detail::run_defined_op(OpId::kCopy, inputs, Attrs{});
}

Tensor reshape(const Tensor& x, const Shape& shape) {
  defined("Reshape", x, "x");
  Shape target = shape;
  int infer = -1;
  uint64_t extent = 1;  // product of the given dimensions, each counted as at least 1
  bool has_zero = false;
  for (int i = 0; i < target.rank(); ++i) {
    int64_t d = target[static_cast<size_t>(i)];
    if (d == -1) {
      if (infer >= 0) invalid("Reshape", "only one dimension may be -1 in " + shape_text(shape));
      infer = i;
    } else if (d < 0) {
      invalid("Reshape", "negative dimension in " + shape_text(shape));
    } else {
      auto next = detail::checked_mul(extent, d == 0 ? 1 : static_cast<uint64_t>(d));
      if (!next || *next > static_cast<uint64_t>(INT64_MAX)) {
        invalid("Reshape", "shape " + shape_text(shape) +
                               " has more elements than an int64 can count");
      }
      extent = *next;
      has_zero = has_zero || d == 0;
    }
  }
  const int64_t elements = x.num_elements();
  if (infer >= 0) {
    const auto known = static_cast<int64_t>(has_zero ? 0 : extent);
    if (known == 0 || elements % known != 0) {
      invalid("Reshape", "cannot infer the -1 in " + shape_text(shape) + " for " +
                             std::to_string(elements) + " elements");
    }
    target[static_cast<size_t>(infer)] = elements / known;
  }
  detail::checked_byte_size("Reshape", x.dtype(), target);
  if (target.num_elements() != elements) {
    invalid("Reshape", "cannot reshape " + shape_text(x.shape()) + " (" +
                           std::to_string(elements) + " elements) into " + shape_text(shape));
  }
  Tensor source = x;
  if (!x.is_contiguous()) {
    const Tensor* const inputs[1] = {&x};
    source = detail::run_defined_op(OpId::kCopy, inputs, Attrs{});
  }
  return detail::storage_view(source, target, detail::contiguous_strides(target),
                              source.impl()->byte_offset);
}

}  // namespace xdev
