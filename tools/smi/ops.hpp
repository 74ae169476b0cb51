// `xdev-smi --ops [DEVICE] [--json]`: which ops and dtypes each logical
// device has kernels for (<xdev/ops.hpp>: list_kernels), as an op x dtype
// table or JSON. An op without a kernel on a device falls back to another
// (docs/user-guide.md, Placement).
#pragma once

#include <iosfwd>
#include <string>

namespace xdev_smi {

// Every logical device when `device` is empty, else that one (any spelling;
// an unknown one throws xdev::Error naming it).
void print_ops(const std::string& device, bool json, std::ostream& out);

}  // namespace xdev_smi
