// Running an op: choose its device (placement), bring inputs there, allocate
// outputs, call the plugin's kernel on the device's stream.
#pragma once

#include <array>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <span>
#include <string>

#include <xdev/plugin.h>
#include <xdev/tensor.hpp>

#include "kernel_table.hpp"
#include "placement_state.hpp"
#include "tensor_impl.hpp"

namespace xdev::detail {

// Up to 4 attributes of an op call, built on the stack.
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
  const xdev_attr_t* data() const { return items_.data(); }
  uint32_t size() const { return count_; }

 private:
  xdev_attr_t& add(const char* name, xdev_attr_kind_t kind) {
    xdev_attr_t& a = items_[count_++];
    a.name = name;
    a.kind = kind;
    return a;
  }
  std::array<xdev_attr_t, 4> items_;  // only [0, count_) is ever read
  uint32_t count_ = 0;
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
};

// Places and runs `request` on `inputs`; returns the output tensor. The
// pointer form costs no reference counting (the hot path); the inputs must
// outlive the call.
Tensor run_op(const OpRequest& request, std::span<const Tensor* const> inputs,
              const Attrs& attrs);
Tensor run_op(const OpRequest& request, std::span<const Tensor> inputs, const Attrs& attrs);

// Where a tensor created from host data goes (logged as _EagerConst): the
// scope's device, else the highest-priority device.
LogicalDeviceState* place_creation(const char* op_name);

// A copy of `src` on `dst` (a contiguous copy of the view's elements when the
// view is not contiguous; the same strides otherwise). Synchronous with
// respect to both devices.
std::shared_ptr<TensorImpl> copy_tensor(const TensorImpl& src, LogicalDeviceState* dst);

// Uploads `bytes` of host memory into `dst` at `dst_offset`. Synchronous.
void upload(LogicalDeviceState* dst, void* dst_data, uint64_t dst_offset, const void* host,
            uint64_t bytes);
// Reads `bytes` at `src_data + src_offset` into host memory. Synchronous.
void download(LogicalDeviceState* src, const void* src_data, uint64_t src_offset, void* host,
              uint64_t bytes);

// Resolves a user's device name to a logical device or throws
// Error(kNotFound) naming it and listing the devices there are.
LogicalDeviceState* resolve_device(std::string_view name);

}  // namespace xdev::detail
