// Running an op eagerly: ask placement for its device, bring inputs there
// (transfer), allocate outputs from the device's pool, call the plugin's
// kernel on the device's stream.
#pragma once

#include <array>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include <xdev/plugin.h>
#include <xdev/tensor.hpp>

#include "devices/kernel_table.hpp"
#include "opdefs/op_table.hpp"
#include "placement/placement_state.hpp"
#include "tensors/tensor_impl.hpp"

namespace xdev::detail {

// The attributes of one op call, built on the stack: at most kMaxOpAttrs
// (the most any op of the table defines; a static_assert there keeps it so).
// One more is an xdev::Error(kInternal), never a write past the array.
class Attrs {
 public:
  Attrs& add_bool(const char* name, bool v) {
    add(name, XDEV_ATTR_BOOL).value.b = v ? 1 : 0;
    return *this;
  }
  Attrs& add_int(const char* name, int64_t v) {
    add(name, XDEV_ATTR_INT).value.i = v;
    return *this;
  }
  Attrs& add_float(const char* name, double v) {
    add(name, XDEV_ATTR_FLOAT).value.f = v;
    return *this;
  }
  Attrs& add_dtype(const char* name, DType v) {
    add(name, XDEV_ATTR_DTYPE).value.dtype = static_cast<xdev_dtype_t>(v);
    return *this;
  }
  // `values` must outlive the op call.
  Attrs& add_ints(const char* name, const int64_t* values, int64_t count) {
    xdev_attr_t& a = add(name, XDEV_ATTR_INTS);
    a.value.ints.values = values;
    a.value.ints.count = count;
    return *this;
  }
  // `value` must outlive the op call.
  Attrs& add_string(const char* name, const char* value) {
    add(name, XDEV_ATTR_STRING).value.s = value;
    return *this;
  }
  const xdev_attr_t* data() const { return items_.data(); }
  uint32_t size() const { return count_; }
  operator std::span<const xdev_attr_t>() const { return {items_.data(), count_}; }

 private:
  xdev_attr_t& add(const char* name, xdev_attr_kind_t kind) {
    if (count_ >= items_.size()) throw_full(name);
    xdev_attr_t& a = items_[count_++];
    a.name = name;
    a.kind = kind;
    return a;
  }
  [[noreturn]] static void throw_full(const char* name);
  std::array<xdev_attr_t, kMaxOpAttrs> items_;  // only [0, count_) is ever read
  uint32_t count_ = 0;
};

// An output after the first of an op of several outputs.
struct OutputRequest {
  DType dtype = DType::kFloat32;
  Shape shape;
};

struct OpRequest {
  OpId op;
  DType input_dtype;   // the dtype kernels are looked up by
  DType output_dtype;
  Shape output_shape;
  bool contiguous_inputs = false;  // the op needs contiguous inputs (MatMul)
  // Inputs on another logical device of the same physical device are read in
  // place (after waiting for their stream) instead of copied: they share
  // one address space. Used by all-reduce.
  bool share_physical_inputs = false;
  // Outputs 1, 2, ... of an op of several (output 0 is the fields above);
  // they must outlive the call. The kernel is called unless every output is
  // empty.
  std::span<const OutputRequest> more_outputs = {};
};

// Places and runs `request` on `inputs`; returns the output tensor. The
// pointer form costs no reference counting (the hot path); the inputs must
// outlive the call. `attrs` go to the kernel as they are: the caller checked
// them (run_defined_op does).
Tensor run_op(const OpRequest& request, std::span<const Tensor* const> inputs,
              std::span<const xdev_attr_t> attrs);
Tensor run_op(const OpRequest& request, std::span<const Tensor> inputs,
              std::span<const xdev_attr_t> attrs);
// The same for an op of one or more outputs: `outputs` (1 +
// request.more_outputs.size() of them) receive them in order.
void run_op_into(const OpRequest& request, std::span<const Tensor* const> inputs,
                 std::span<const xdev_attr_t> attrs, std::span<Tensor> outputs);

// Checks a call of `op` against its table entry (op_table.hpp: check_call)
// without running it. Throws xdev::Error(kInvalidArgument) naming the op and
// the value at fault; touches no device.
void check_defined_op(OpId op, std::span<const Tensor* const> inputs, const Attrs& attrs);

// The generic entry of every SDK op: checks the call against the op's entry
// (as check_defined_op), passes broadcast inputs as stride-0 views of the
// output shape when the entry says so, and runs it with the attributes the
// kernel gets (defaults filled in, core-only ones left out).
// An op of one output only (kInternal otherwise).
Tensor run_defined_op(OpId op, std::span<const Tensor* const> inputs, const Attrs& attrs);
// Every output of `op`, in the entry's order (SoftmaxCrossEntropyWithLogits:
// loss, backprop); the entry may not ask for broadcast_inputs.
std::vector<Tensor> run_defined_op_outputs(OpId op, std::span<const Tensor* const> inputs,
                                           const Attrs& attrs);

}  // namespace xdev::detail
