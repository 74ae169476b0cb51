// The gradient table: for every op of the op table (opdefs/op_table.hpp, by
// OpId) either the function that computes its inputs' gradients from its
// outputs' gradients, made of ordinary SDK ops, or the reason it is not
// differentiable. One entry per op, in gradients.cpp; the autodiff test
// walks XDEV_OPS and fails for an op without one.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include <xdev/plugin.h>
#include <xdev/tensor.hpp>

#include "opdefs/op_table.hpp"

namespace xdev::detail {

// An op call's attributes as the tape keeps them: a copy of what the kernel
// got (defaults filled in), owning its lists and strings.
class RecordedAttrs {
 public:
  RecordedAttrs() = default;
  explicit RecordedAttrs(std::span<const xdev_attr_t> attrs);
  RecordedAttrs(RecordedAttrs&&) = default;
  RecordedAttrs& operator=(RecordedAttrs&&) = default;

  bool get_bool(const char* name) const;
  int64_t get_int(const char* name) const;
  double get_float(const char* name) const;
  std::vector<int64_t> get_ints(const char* name) const;
  std::string get_string(const char* name) const;
  // Every attribute, as the kernel got it (to run the op again).
  std::span<const xdev_attr_t> raw() const { return attrs_; }

 private:
  // The attribute `name` of `kind`; kInternal when the call had none.
  const xdev_attr_t& find(const char* name, xdev_attr_kind_t kind) const;
  std::vector<xdev_attr_t> attrs_;
  std::vector<std::vector<int64_t>> ints_;  // their buffers do not move with the vector
  std::vector<std::vector<char>> strings_;
};

// What an op's gradient function sees: the recorded call and the gradient of
// each of its outputs (undefined where the target does not depend on that
// output; an op of one output always has its gradient).
struct GradContext {
  OpId op;
  std::span<const Tensor> inputs;
  std::span<const Tensor> outputs;
  std::span<const Tensor> grads;
  const RecordedAttrs& attrs;
  // Bit i: the backward pass uses input i's gradient (the input lies on a
  // way from a source). A function may skip the work for an input whose bit
  // is clear and return an undefined Tensor for it (MatMul's gradient of an
  // input batch nothing watches is a whole product). Inputs from 64 on are
  // always needed.
  uint64_t needed = ~uint64_t{0};
  bool needs(size_t i) const { return i >= 64 || ((needed >> i) & 1u) != 0; }
};

// One gradient per input, in order; an undefined Tensor for an input that
// gets none (an index, a condition). Shapes are the inputs' shapes.
using GradientFn = std::vector<Tensor> (*)(const GradContext& ctx);

struct GradientDef {
  OpId op;
  GradientFn fn = nullptr;                    // nullptr: not differentiable
  const char* not_differentiable = nullptr;   // why (set exactly when fn is nullptr)
  uint32_t no_gradient_inputs = 0;            // bit i: input i never gets a gradient
};

// The entry of `op`: xdev::Error(kInternal) if the table lacks it.
const GradientDef& gradient_def(OpId op);
// Whether the table has an entry for `op` (the completeness test).
bool has_gradient_def(OpId op) noexcept;

// The gradient of a selection out[i] = x[source[i]] that picks each
// element of x at most once (slices, transposes, views): a gather from
// `grad` with one zero appended, by an index built on the host.
Tensor selection_grad(const Tensor& grad, const std::vector<int64_t>& source, const Shape& x_shape);

// `grad` summed over the axes it was broadcast along, to `shape` (NumPy's
// rules: the reverse of broadcasting `shape` to grad's shape).
Tensor reduce_to_shape(const Tensor& grad, const Shape& shape);

}  // namespace xdev::detail
