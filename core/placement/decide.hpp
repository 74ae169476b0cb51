// Placement: which logical device runs an op or receives a new tensor.
// The rules (scope, inputs' device, priority, fallback, soft placement) are
// described in docs/user-guide.md.
#pragma once

#include <string_view>

#include <xdev/dtype.hpp>
#include <xdev/error.hpp>

#include "devices/kernel_table.hpp"
#include "placement/placement_state.hpp"

namespace xdev::detail {

class Runtime;
class LogicalDeviceState;

// The device for `op` with these dtypes, given the device all inputs share
// (nullptr when they differ or there are none). Throws Error(kNotFound or
// kUnimplemented) when no device can run it. Cached per thread.
const Decision* place(Runtime& rt, OpId op, DType in, DType out,
                      LogicalDeviceState* inputs_device);

// Where a tensor created from host data goes (logged as _EagerConst): the
// scope's device, else the highest-priority device.
LogicalDeviceState* place_creation(const char* op_name);

}  // namespace xdev::detail
