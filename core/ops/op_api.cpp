// The op definitions (docs/ops.md): inputs, attributes, shape and dtype
// rules, and the errors for bad arguments. Kernels live in plugins.
#include <xdev/ops.hpp>

#include <algorithm>
#include <atomic>
#include <numeric>
#include <sstream>

#include "ops/run_op.hpp"
#include "placement/decide.hpp"
#include "transfer/copy.hpp"
#include "placement/placement_state.hpp"
#include "devices/runtime.hpp"
#include "tensors/tensor_impl.hpp"

namespace xdev {
namespace {

using detail::Attrs;
using detail::OpId;
using detail::OpRequest;

std::string shape_text(const Shape& s) {
  std::ostringstream out;
  out << s;
  return out.str();
}

[[noreturn]] void invalid(std::string_view op, const std::string& why) {
  throw Error(ErrorCode::kInvalidArgument, std::string(op) + ": " + why);
}

const Tensor& defined(std::string_view op, const Tensor& t, const char* which) {
  if (!t.defined()) invalid(op, std::string(which) + " is an empty (default-constructed) tensor");
  return t;
}

void same_dtype(std::string_view op, const Tensor& x, const Tensor& y) {
  if (x.dtype() != y.dtype()) {
    invalid(op, "inputs have different dtypes, " + std::string(to_string(x.dtype())) + " and " +
                    std::string(to_string(y.dtype())) + " (cast one of them)");
  }
}

// --- creation ---

Tensor upload_host(const void* data, DType dtype, const Shape& shape) {
  detail::Runtime::global().ensure_initialized();
  detail::LogicalDeviceState* device = detail::place_creation("_EagerConst");
  auto out = detail::make_tensor(device, dtype, shape);
  detail::upload(device, out->storage->data, 0, data,
                 static_cast<uint64_t>(shape.num_elements()) * itemsize(dtype));
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
    if constexpr (std::is_floating_point_v<T>) {
      p[i] = static_cast<T>(leaves[i]->as_double());
    } else if constexpr (std::is_same_v<T, bool>) {
      p[i] = leaves[i]->as_double() != 0.0;
    } else {
      p[i] = static_cast<T>(leaves[i]->as_int());
    }
  }
}

std::atomic<uint64_t> g_seed_counter{0x5eed};

std::vector<int64_t> normalize_axes(std::string_view op, const std::vector<int>& axes, int rank) {
  std::vector<int64_t> out;
  if (axes.empty()) {
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

Tensor elementwise(OpId op, const Tensor& x, const Tensor& y) {
  const std::string_view name = detail::op_name(op);
  defined(name, x, "x");
  defined(name, y, "y");
  same_dtype(name, x, y);
  if (x.dtype() == DType::kBool && op != OpId::kAdd) {
    invalid(name, "bool inputs are not supported (cast to a number first)");
  }
  // NumPy broadcasting.
  const Shape& a = x.shape();
  const Shape& b = y.shape();
  int rank = std::max(a.rank(), b.rank());
  Shape out;
  out.resize(rank);
  for (int i = 0; i < rank; ++i) {
    int64_t da = i - (rank - a.rank()) >= 0 ? a[static_cast<size_t>(i - (rank - a.rank()))] : 1;
    int64_t db = i - (rank - b.rank()) >= 0 ? b[static_cast<size_t>(i - (rank - b.rank()))] : 1;
    if (da != db && da != 1 && db != 1) {
      invalid(name, "shapes " + shape_text(a) + " and " + shape_text(b) +
                        " cannot be broadcast together (dimension " + std::to_string(i) +
                        ": " + std::to_string(da) + " vs " + std::to_string(db) + ")");
    }
    out[static_cast<size_t>(i)] = da == 1 ? db : da;
  }
  // Inputs of the output's shape go as they are; others as stride-0 views.
  Tensor views[2];
  auto broadcast = [&](const Tensor& t, Tensor& view) -> const Tensor* {
    if (t.shape() == out) return &t;
    Shape strides;
    strides.resize(rank);
    const Shape& s = t.shape();
    for (int i = 0; i < rank; ++i) {
      int src = i - (rank - s.rank());
      strides[static_cast<size_t>(i)] =
          src < 0 || s[static_cast<size_t>(src)] == 1 ? 0 : t.strides()[static_cast<size_t>(src)];
    }
    view = Tensor(detail::make_view(t.impl_ptr(), out, strides, t.impl()->byte_offset));
    return &view;
  };
  const Tensor* const inputs[2] = {broadcast(x, views[0]), broadcast(y, views[1])};
  return detail::run_op(OpRequest{op, x.dtype(), x.dtype(), out}, inputs, Attrs{});
}

Tensor unary(OpId op, const Tensor& x) {
  const std::string_view name = detail::op_name(op);
  defined(name, x, "x");
  if (x.dtype() == DType::kBool) invalid(name, "bool input is not supported");
  const Tensor* const inputs[1] = {&x};
  return detail::run_op(OpRequest{op, x.dtype(), x.dtype(), x.shape()}, inputs, Attrs{});
}

Tensor reduce(OpId op, const Tensor& x, const std::vector<int>& axes, bool keepdims) {
  const std::string_view name = detail::op_name(op);
  defined(name, x, "x");
  if (x.dtype() == DType::kBool) invalid(name, "bool input is not supported (cast it first)");
  std::vector<int64_t> reduced = normalize_axes(name, axes, x.rank());
  Shape out;
  for (int i = 0; i < x.rank(); ++i) {
    bool r = std::binary_search(reduced.begin(), reduced.end(), i);
    if (!r) out.push_back(x.shape()[static_cast<size_t>(i)]);
    else if (keepdims) out.push_back(1);
  }
  Attrs attrs;
  attrs.add_ints("axes", reduced.data(), static_cast<int64_t>(reduced.size()));
  attrs.add_bool("keepdims", keepdims);
  const Tensor* const inputs[1] = {&x};
  return detail::run_op(OpRequest{op, x.dtype(), x.dtype(), out}, inputs, attrs);
}

}  // namespace

Tensor constant(const Literal& value, std::optional<DType> dtype) {
  Shape shape = literal_shape(value);
  std::vector<const Literal*> leaves;
  DType kind = DType::kBool;
  collect_leaves(value, shape, 0, leaves, kind);
  if (leaves.empty()) kind = DType::kFloat32;  // only empty lists
  DType target = dtype.value_or(kind);
  std::vector<std::byte> bytes;
  switch (target) {
    case DType::kFloat32: write_leaves<float>(leaves, bytes); break;
    case DType::kFloat64: write_leaves<double>(leaves, bytes); break;
    case DType::kInt32: write_leaves<int32_t>(leaves, bytes); break;
    case DType::kInt64: write_leaves<int64_t>(leaves, bytes); break;
    case DType::kBool: write_leaves<bool>(leaves, bytes); break;
  }
  return upload_host(bytes.data(), target, shape);
}

Tensor constant(const void* data, DType dtype, const Shape& shape) {
  if (data == nullptr && shape.num_elements() > 0) invalid("constant", "data is NULL");
  for (int64_t d : shape) {
    if (d < 0) invalid("constant", "negative dimension in shape " + shape_text(shape));
  }
  return upload_host(data, dtype, shape);
}

Tensor fill(const Shape& shape, double value, DType dtype) {
  Attrs attrs;
  attrs.add_float("value", value);
  return detail::run_op(OpRequest{OpId::kFill, dtype, dtype, shape},
                        std::span<const Tensor* const>{}, attrs);
}

Tensor zeros(const Shape& shape, DType dtype) { return fill(shape, 0.0, dtype); }
Tensor ones(const Shape& shape, DType dtype) { return fill(shape, 1.0, dtype); }

void set_random_seed(uint64_t seed) { g_seed_counter.store(seed); }

Tensor random_uniform(const Shape& shape, double minval, double maxval, DType dtype,
                      std::optional<uint64_t> seed) {
  if (dtype != DType::kFloat32 && dtype != DType::kFloat64) {
    invalid("RandomUniform", "dtype must be float32 or float64, not " +
                                 std::string(to_string(dtype)));
  }
  if (!(minval < maxval)) {
    invalid("RandomUniform", "minval " + std::to_string(minval) + " must be less than maxval " +
                                 std::to_string(maxval));
  }
  Attrs attrs;
  attrs.add_int("seed", static_cast<int64_t>(seed ? *seed : g_seed_counter.fetch_add(1)));
  attrs.add_float("minval", minval);
  attrs.add_float("maxval", maxval);
  return detail::run_op(OpRequest{OpId::kRandomUniform, dtype, dtype, shape},
                        std::span<const Tensor* const>{}, attrs);
}

Tensor matmul(const Tensor& a, const Tensor& b, bool transpose_a, bool transpose_b) {
  defined("MatMul", a, "a");
  defined("MatMul", b, "b");
  same_dtype("MatMul", a, b);
  if (a.rank() != 2 || b.rank() != 2) {
    invalid("MatMul", "inputs must have rank 2, not shapes " + shape_text(a.shape()) + " and " +
                          shape_text(b.shape()));
  }
  if (a.dtype() == DType::kBool) invalid("MatMul", "bool inputs are not supported");
  int64_t m = a.shape()[transpose_a ? 1 : 0], k = a.shape()[transpose_a ? 0 : 1];
  int64_t kb = b.shape()[transpose_b ? 1 : 0], n = b.shape()[transpose_b ? 0 : 1];
  if (k != kb) {
    invalid("MatMul", "inner dimensions differ: " + shape_text(a.shape()) +
                          (transpose_a ? "ᵀ" : "") + " · " + shape_text(b.shape()) +
                          (transpose_b ? "ᵀ" : "") + " (" + std::to_string(k) + " vs " +
                          std::to_string(kb) + ")");
  }
  Attrs attrs;
  attrs.add_bool("transpose_a", transpose_a);
  attrs.add_bool("transpose_b", transpose_b);
  OpRequest request{OpId::kMatMul, a.dtype(), a.dtype(), Shape{m, n}, true};
  const Tensor* const inputs[2] = {&a, &b};
  return detail::run_op(request, inputs, attrs);
}

Tensor add(const Tensor& x, const Tensor& y) { return elementwise(OpId::kAdd, x, y); }
Tensor sub(const Tensor& x, const Tensor& y) { return elementwise(OpId::kSub, x, y); }
Tensor mul(const Tensor& x, const Tensor& y) { return elementwise(OpId::kMul, x, y); }
Tensor div(const Tensor& x, const Tensor& y) { return elementwise(OpId::kDiv, x, y); }
Tensor neg(const Tensor& x) { return unary(OpId::kNeg, x); }
Tensor relu(const Tensor& x) { return unary(OpId::kRelu, x); }

Tensor add_n(const std::vector<Tensor>& inputs) {
  if (inputs.empty()) invalid("AddN", "needs at least one input");
  for (size_t i = 0; i < inputs.size(); ++i) {
    defined("AddN", inputs[i], ("input " + std::to_string(i)).c_str());
    if (inputs[i].dtype() != inputs[0].dtype() || !(inputs[i].shape() == inputs[0].shape())) {
      invalid("AddN", "input " + std::to_string(i) + " is " + shape_text(inputs[i].shape()) + " " +
                          std::string(to_string(inputs[i].dtype())) + ", input 0 is " +
                          shape_text(inputs[0].shape()) + " " +
                          std::string(to_string(inputs[0].dtype())) +
                          " (all inputs need the same shape and dtype)");
    }
  }
  if (inputs[0].dtype() == DType::kBool) invalid("AddN", "bool inputs are not supported");
  return detail::run_op(
      OpRequest{OpId::kAddN, inputs[0].dtype(), inputs[0].dtype(), inputs[0].shape()}, inputs,
      Attrs{});
}

Tensor cast(const Tensor& x, DType dtype) {
  defined("Cast", x, "x");
  Attrs attrs;
  attrs.add_dtype("dtype", dtype);
  const Tensor* const inputs[1] = {&x};
  return detail::run_op(OpRequest{OpId::kCast, x.dtype(), dtype, x.shape()}, inputs, attrs);
}

Tensor sum(const Tensor& x, const std::vector<int>& axes, bool keepdims) {
  return reduce(OpId::kSum, x, axes, keepdims);
}
Tensor mean(const Tensor& x, const std::vector<int>& axes, bool keepdims) {
  return reduce(OpId::kMean, x, axes, keepdims);
}

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
  Tensor view(detail::make_view(x.impl_ptr(), shape, strides, x.impl()->byte_offset));
  const Tensor inputs[1] = {view};
  return detail::run_op(OpRequest{OpId::kCopy, x.dtype(), x.dtype(), shape}, inputs, Attrs{});
}

Tensor reshape(const Tensor& x, const Shape& shape) {
  defined("Reshape", x, "x");
  Shape target = shape;
  int infer = -1;
  int64_t known = 1;
  for (int i = 0; i < target.rank(); ++i) {
    int64_t d = target[static_cast<size_t>(i)];
    if (d == -1) {
      if (infer >= 0) invalid("Reshape", "only one dimension may be -1 in " + shape_text(shape));
      infer = i;
    } else if (d < 0) {
      invalid("Reshape", "negative dimension in " + shape_text(shape));
    } else {
      known *= d;
    }
  }
  if (infer >= 0) {
    if (known == 0 || x.num_elements() % known != 0) {
      invalid("Reshape", "cannot infer the -1 in " + shape_text(shape) + " for " +
                             std::to_string(x.num_elements()) + " elements");
    }
    target[static_cast<size_t>(infer)] = x.num_elements() / known;
  }
  if (target.num_elements() != x.num_elements()) {
    invalid("Reshape", "cannot reshape " + shape_text(x.shape()) + " (" +
                           std::to_string(x.num_elements()) + " elements) into " +
                           shape_text(shape));
  }
  Tensor source = x;
  if (!x.is_contiguous()) {
    const Tensor inputs[1] = {x};
    source = detail::run_op(OpRequest{OpId::kCopy, x.dtype(), x.dtype(), x.shape()}, inputs,
                            Attrs{});
  }
  return Tensor(detail::make_view(source.impl_ptr(), target, detail::contiguous_strides(target),
                                  source.impl()->byte_offset));
}

}  // namespace xdev
