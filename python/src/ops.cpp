// Every op of the op table as a function, with TensorFlow's names and
// arguments (xdev.add, xdev.matmul, xdev.reduce_sum, ...). Tensor arguments
// also take tensor-likes (numbers, lists, NumPy arrays), converted like
// TensorFlow converts them; the op itself runs without the GIL.
#include "bindings.hpp"

#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <vector>

namespace xdev::python {
namespace {

using BinaryFn = Tensor (*)(const Tensor&, const Tensor&);
using UnaryFn = Tensor (*)(const Tensor&);

// Both operands as tensors; Python numbers take the other operand's dtype.
std::pair<Tensor, Tensor> operands(nb::handle x, nb::handle y) {
  if (nb::isinstance<Tensor>(x)) {
    Tensor a = nb::cast<Tensor>(x);
    return {a, to_tensor(y, a.dtype())};
  }
  if (nb::isinstance<Tensor>(y)) {
    Tensor b = nb::cast<Tensor>(y);
    return {to_tensor(x, b.dtype()), b};
  }
  Tensor a = to_tensor(x);
  return {a, to_tensor(y, a.dtype())};
}

template <BinaryFn Fn>
void def_binary(nb::module_& m, const char* name, const char* doc) {
  m.def(name, [](const Tensor& x, const Tensor& y) { return Fn(x, y); }, nb::arg("x"),
        nb::arg("y"), release_gil(), doc);
  m.def(name, [](nb::handle x, nb::handle y) {
    auto [a, b] = operands(x, y);
    nb::gil_scoped_release release;
    return Fn(a, b);
  }, nb::arg("x"), nb::arg("y"), doc);
}

template <UnaryFn Fn>
void def_unary(nb::module_& m, const char* name, const char* doc) {
  m.def(name, [](const Tensor& x) { return Fn(x); }, nb::arg("x"), release_gil(), doc);
  m.def(name, [](nb::handle x) {
    Tensor a = to_tensor(x);
    nb::gil_scoped_release release;
    return Fn(a);
  }, nb::arg("x"), doc);
}

// TensorFlow's axis argument: None (all axes), an int, or a list of ints.
std::vector<int> axes_of(nb::handle axis) {
  std::vector<int> axes;
  if (axis.is_none()) return axes;
  if (PyLong_Check(axis.ptr()) || nb::isinstance<Tensor>(axis)) {
    axes.push_back(nb::cast<int>(nb::int_(axis)));
    return axes;
  }
  for (nb::handle a : axis) axes.push_back(nb::cast<int>(nb::int_(a)));
  return axes;
}

Tensor truediv_op(const Tensor& x, const Tensor& y) {
  if (x.dtype() == y.dtype() &&
      (x.dtype() == DType::kInt32 || x.dtype() == DType::kInt64 || x.dtype() == DType::kBool)) {
    return div(cast(x, DType::kFloat64), cast(y, DType::kFloat64));
  }
  return div(x, y);
}

}  // namespace

void bind_ops(nb::module_& m) {
  // --- creation ---
  m.def("zeros", [](const std::vector<int64_t>& shape, nb::handle dtype) {
    const DType d = to_dtype(dtype);
    nb::gil_scoped_release release;
    return zeros(Shape(shape), d);
  }, nb::arg("shape"), nb::arg("dtype") = DType::kFloat32, "Zeros (logged as Fill).");
  m.def("ones", [](const std::vector<int64_t>& shape, nb::handle dtype) {
    const DType d = to_dtype(dtype);
    nb::gil_scoped_release release;
    return ones(Shape(shape), d);
  }, nb::arg("shape"), nb::arg("dtype") = DType::kFloat32, "Ones (logged as Fill).");
  m.def("_fill", [](const std::vector<int64_t>& shape, double value, DType dtype) {
    return fill(Shape(shape), value, dtype);
  }, nb::arg("shape"), nb::arg("value"), nb::arg("dtype"), release_gil());
  m.def("_random_uniform", [](const std::vector<int64_t>& shape, double minval, double maxval,
                              DType dtype, std::optional<uint64_t> seed) {
    return random_uniform(Shape(shape), minval, maxval, dtype, seed);
  }, nb::arg("shape"), nb::arg("minval"), nb::arg("maxval"), nb::arg("dtype"),
        nb::arg("seed").none(), release_gil());
  m.def("_set_random_seed", &set_random_seed, nb::arg("seed"));

  // --- ops ---
  m.def("matmul", [](const Tensor& a, const Tensor& b, bool ta, bool tb) {
    return matmul(a, b, ta, tb);
  }, nb::arg("a"), nb::arg("b"), nb::arg("transpose_a") = false, nb::arg("transpose_b") = false,
        release_gil(), "The matrix product a · b (MatMul).");
  m.def("matmul", [](nb::handle a, nb::handle b, bool ta, bool tb) {
    auto [x, y] = operands(a, b);
    nb::gil_scoped_release release;
    return matmul(x, y, ta, tb);
  }, nb::arg("a"), nb::arg("b"), nb::arg("transpose_a") = false, nb::arg("transpose_b") = false);
  def_binary<add>(m, "add", "x + y with NumPy broadcasting (Add).");
  def_binary<sub>(m, "subtract", "x - y with NumPy broadcasting (Sub).");
  def_binary<mul>(m, "multiply", "x * y with NumPy broadcasting (Mul).");
  def_binary<truediv_op>(m, "divide",
                         "x / y, true division: integers are divided as float64 (Div).");
  def_binary<div>(m, "truncatediv",
                  "x / y in the inputs' dtype; integers round toward zero (Div).");
  def_unary<neg>(m, "negative", "-x (Neg).");
  def_unary<relu>(m, "relu", "max(x, 0) (Relu).");
  m.def("add_n", [](nb::handle inputs) {
    std::vector<Tensor> tensors;
    std::optional<DType> like;
    for (nb::handle h : inputs) {
      if (nb::isinstance<Tensor>(h)) {
        like = nb::cast<const Tensor&>(h).dtype();
        break;
      }
    }
    for (nb::handle h : inputs) tensors.push_back(to_tensor(h, like));
    nb::gil_scoped_release release;
    return add_n(tensors);
  }, nb::arg("inputs"), "The sum of tensors of one shape and dtype, on any devices (AddN).");
  m.def("cast", [](nb::handle x, nb::handle dtype) {
    const DType d = to_dtype(dtype);
    Tensor t = to_tensor(x);
    nb::gil_scoped_release release;
    return cast(t, d);
  }, nb::arg("x"), nb::arg("dtype"), "x converted to dtype (Cast).");
  m.def("reduce_sum", [](nb::handle x, nb::handle axis, bool keepdims) {
    Tensor t = to_tensor(x);
    std::vector<int> axes = axes_of(axis);
    nb::gil_scoped_release release;
    return sum(t, axes, keepdims);
  }, nb::arg("input_tensor"), nb::arg("axis").none() = nb::none(), nb::arg("keepdims") = false,
        "The sum over `axis` (None: all axes) (Sum).");
  m.def("reduce_mean", [](nb::handle x, nb::handle axis, bool keepdims) {
    Tensor t = to_tensor(x);
    std::vector<int> axes = axes_of(axis);
    nb::gil_scoped_release release;
    return mean(t, axes, keepdims);
  }, nb::arg("input_tensor"), nb::arg("axis").none() = nb::none(), nb::arg("keepdims") = false,
        "The mean over `axis` (None: all axes) (Mean).");
  m.def("transpose", [](nb::handle x, std::optional<std::vector<int>> perm) {
    Tensor t = to_tensor(x);
    nb::gil_scoped_release release;
    return transpose(t, perm.value_or(std::vector<int>{}));
  }, nb::arg("a"), nb::arg("perm").none() = nb::none(),
        "Axes permuted (None: reversed), as a new contiguous tensor (Copy).");
  m.def("reshape", [](nb::handle x, const std::vector<int64_t>& shape) {
    Tensor t = to_tensor(x);
    nb::gil_scoped_release release;
    return reshape(t, Shape(shape));
  }, nb::arg("tensor"), nb::arg("shape"),
        "The same values in a new shape; one dimension may be -1 (free when contiguous).");
}

}  // namespace xdev::python
