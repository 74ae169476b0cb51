// Host references for the op set of docs/ops.md: what a kernel must compute,
// written once, plainly, in double / int64 arithmetic where that is exact.
//
// Every op of the core's op table (core/opdefs/op_table.hpp) has an entry here
// (reference(OpId)): the function that computes it, the tolerance a device
// result may have, and the hints the conformance suite needs to make test
// data for it. An op without an entry does not compile (a static_assert in
// op_reference.cpp), and test_op_reference names it.
//
// The conformance runner (tools/conformance) checks every kernel a plugin
// registers against these; tests/conformance/test_op_reference.cpp checks the
// references themselves against hand-computed values. Plain C++20, the plugin
// header and the op table (which compiles on its own), so any tool or test
// can compile them in.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <xdev/plugin.h>

#include "opdefs/op_table.hpp"

namespace xdev_conformance::ref {

// The ops of the core's table (core/opdefs/op_table.hpp).
using OpId = xdev::detail::OpId;

// Bytes per element of the nine dtypes the op set uses (0 for others).
size_t dtype_size(xdev_dtype_t dtype);
// "float32", "float64", "int32", "int64", "bool", "float16", "bfloat16",
// "uint8", "int8", or "dtype N".
std::string dtype_name(xdev_dtype_t dtype);
bool is_float(xdev_dtype_t dtype);
// The nine dtypes of docs/ops.md, in enum order.
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

// The call a kernel receives, on the host: inputs as they are (any strides),
// attributes as the core passes them (op_table.hpp: every attribute of the
// op that goes to the kernel, defaults filled in), outputs contiguous with
// their shape and dtype already set.
struct Call {
  OpId op;
  std::span<const Tensor* const> inputs;
  std::span<const xdev_attr_t> attrs;
  std::span<Tensor> outputs;
};

// How far a device result may be from the reference.
struct Tolerance {
  double abs = 0.0;  // per element: |got - want| <= abs + rel * |want|
  double rel = 0.0;
};

// Computes the outputs; returns an error text when the reference does not
// define the case (missing attribute, bad dtype).
using RunFn = std::optional<std::string> (*)(const Call& call);
// The tolerance of each element of output `output` (reference already run).
using ToleranceFn = std::vector<Tolerance> (*)(const Call& call, size_t output);

// The values the conformance suite fills an input with.
enum class Values : uint8_t {
  kGeneral,  // floats in [-2, 2), integers in [-9, 9], bool 0/1
  kDivisor,  // kGeneral with exact zeros among the floats (Div's y)
  kCast,     // fractions of both signs, exact integers and zeros in [-100, 100]
  // Few distinct values, so that equal pairs occur: floats among ±0, ±0.5,
  // ±1, ±inf and NaN; integers in [-2, 2] (comparisons, IsNan, IsFinite).
  kSpecial,
};

// One attribute value of a test case: `i` for bool, int and dtype
// attributes, `f` for float ones (the op table says which kind it is).
struct AttrSample {
  std::string name;
  int64_t i = 0;
  double f = 0.0;
};
using AttrSet = std::vector<AttrSample>;

struct Reference {
  RunFn run = nullptr;
  // nullptr: exact for integers and bool; floats may differ by the smallest
  // normal number (devices that flush subnormals to zero).
  ToleranceFn tolerance = nullptr;
  // The values of input i are values[min(i, 1)].
  std::array<Values, 2> values = {Values::kGeneral, Values::kGeneral};
  // Values for the attributes the suite cannot choose by itself (see
  // tests_kernels.cpp: the shape class chooses shapes, axes, transposes;
  // dtype attributes run through every dtype allowed; others take their
  // defaults). Each set is tried with every shape; `dtype` is the output's.
  std::vector<AttrSet> (*attr_sets)(xdev_dtype_t dtype) = nullptr;
};

// The entry of `op`; every op of the table has one.
const Reference& reference(OpId op);

// Runs `op` (a docs/ops.md name) on `inputs` with `attrs`, exactly as a kernel
// receives them, into `out` (contiguous, shape and dtype already set by the
// caller, as the core does): reference(op).run for an op of one output.
// Returns an error text when the reference does not define the case
// (unknown op, missing attribute, bad dtype).
std::optional<std::string> run(const std::string& op, std::span<const Tensor* const> inputs,
                               std::span<const xdev_attr_t> attrs, Tensor& out);

// The tolerance docs/ops.md allows for `op` on these inputs (exact for
// integers and bool; a few ulp for elementwise float math; a bound that grows
// with the reduction length for MatMul, AddN, Sum and Mean).
std::vector<Tolerance> tolerances(const std::string& op, std::span<const Tensor* const> inputs,
                                  std::span<const xdev_attr_t> attrs, const Tensor& out);

// The tolerance of an op without its own (Reference::tolerance nullptr):
// exact for integers and bool; floats may differ by the smallest normal
// number of the dtype computed in (devices that flush subnormals to zero);
// float16 and bfloat16, computed in float32 and rounded once, by one unit in
// their last place more (docs/ops.md "Dtypes").
std::vector<Tolerance> default_tolerance(const Tensor& out);

// Compares `got` with `want` (same shape and dtype, both read row-major)
// element by element. NaN equals NaN; infinities must match exactly. Returns
// a description of the first mismatch (index, values) or nothing.
std::optional<std::string> compare(const Tensor& got, const Tensor& want,
                                   std::span<const Tolerance> tolerance);

// The bit-exact RandomUniform value of docs/ops.md for element `i`.
float random_uniform_f32(uint64_t seed, uint64_t i, double minval, double maxval);
double random_uniform_f64(uint64_t seed, uint64_t i, double minval, double maxval);

}  // namespace xdev_conformance::ref
