// Host references for the op set of docs/ops.md: what a kernel must compute,
// written once, plainly, in double / int64 arithmetic where that is exact.
//
// The conformance runner (tools/conformance) checks every kernel a plugin
// registers against these; tests/conformance/test_op_reference.cpp checks the
// references themselves against hand-computed values. Plain C++20 and the
// plugin header only, so any tool or test can compile them in.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <xdev/plugin.h>

namespace xdev_conformance::ref {

// Bytes per element of the five dtypes the op set uses (0 for others).
size_t dtype_size(xdev_dtype_t dtype);
// "float32", "float64", "int32", "int64", "bool", or "dtype N".
std::string dtype_name(xdev_dtype_t dtype);
bool is_float(xdev_dtype_t dtype);
// The five dtypes of docs/ops.md, in enum order.
std::span<const xdev_dtype_t> op_dtypes();

// A tensor in host memory, laid out like xdev_tensor_t: the element at index
// (i0..) is at storage + (offset + sum(i_k * strides[k])) * itemsize.
struct Tensor {
  xdev_dtype_t dtype = XDEV_DTYPE_FLOAT32;
  std::vector<int64_t> shape;
  std::vector<int64_t> strides;  // in elements, >= 0 (0: broadcast)
  int64_t offset = 0;            // in elements
  std::vector<unsigned char> storage;

  int rank() const { return static_cast<int>(shape.size()); }
  int64_t num_elements() const;
  // Bytes from the start of storage that the view touches (storage.size() is
  // at least this).
  size_t span_bytes() const;
  // Element at row-major position `i` of the logical shape, read as double /
  // int64 (bool reads as 0 or 1).
  double get_double(int64_t i) const;
  int64_t get_int(int64_t i) const;
  // Writes element `i` (row-major) from a double / int64, converting like a
  // C cast to the element type (bool: v != 0).
  void set_double(int64_t i, double v);
  void set_int(int64_t i, int64_t v);
  // Storage index (in elements) of row-major element `i`.
  int64_t storage_index(int64_t i) const;
};

// A contiguous row-major tensor of `shape`, zero-filled.
Tensor make_contiguous(xdev_dtype_t dtype, const std::vector<int64_t>& shape);
// Row-major strides of `shape`.
std::vector<int64_t> contiguous_strides(const std::vector<int64_t>& shape);
// The row-major elements of `t` as a new contiguous tensor.
Tensor to_contiguous(const Tensor& t);

// Runs `op` (a docs/ops.md name) on `inputs` with `attrs`, exactly as a kernel
// receives them, into `out` (contiguous, shape and dtype already set by the
// caller, as the core does). Returns an error text when the reference does
// not define the case (unknown op, missing attribute, bad dtype).
std::optional<std::string> run(const std::string& op, std::span<const Tensor* const> inputs,
                               std::span<const xdev_attr_t> attrs, Tensor& out);

// How far a device result may be from the reference.
struct Tolerance {
  double abs = 0.0;  // per element: |got - want| <= abs + rel * |want|
  double rel = 0.0;
};

// The tolerance docs/ops.md allows for `op` on these inputs (exact for
// integers and bool; a few ulp for elementwise float math; a bound that grows
// with the reduction length for MatMul, AddN, Sum and Mean).
std::vector<Tolerance> tolerances(const std::string& op, std::span<const Tensor* const> inputs,
                                  std::span<const xdev_attr_t> attrs, const Tensor& out);

// Compares `got` with `want` (same shape and dtype, both read row-major)
// element by element. NaN equals NaN; infinities must match exactly. Returns
// a description of the first mismatch (index, values) or nothing.
std::optional<std::string> compare(const Tensor& got, const Tensor& want,
                                   std::span<const Tolerance> tolerance);

// The bit-exact RandomUniform value of docs/ops.md for element `i`.
float random_uniform_f32(uint64_t seed, uint64_t i, double minval, double maxval);
double random_uniform_f64(uint64_t seed, uint64_t i, double minval, double maxval);

}  // namespace xdev_conformance::ref
