// <xdev/ops.hpp>'s capability query: which ops and dtypes a logical device
// has kernels for (has_kernel, list_kernels; xdev-smi --ops). The answer is
// the kernel table the device's plugin registered (kernel_table.hpp), limited
// to the dtype pairs the op table defines (kernel_dtypes): the same lookup
// placement makes, so "has_kernel is false" means "this op falls back".
#include <algorithm>
#include <string>

#include <xdev/error.hpp>
#include <xdev/ops.hpp>

#include "devices/logical_device.hpp"
#include "devices/kernel_table.hpp"
#include "opdefs/op_table.hpp"
#include "devices/runtime.hpp"

namespace xdev {
namespace {

const detail::OpDef& named_op(std::string_view op) {
  if (auto id = detail::op_from_name(op)) return detail::op_def(*id);
  throw Error(ErrorCode::kNotFound, "unknown op \"" + std::string(op) +
                                        "\" (op names are case-sensitive: \"MatMul\", \"Exp\"; "
                                        "docs/ops.md lists them)");
}

void check_dtype(std::string_view op, DType dtype) {
  if (is_valid(dtype)) return;
  throw Error(ErrorCode::kInvalidArgument,
              "has_kernel(" + std::string(op) + "): dtype code " +
                  std::to_string(static_cast<int32_t>(dtype)) +
                  " is not a dtype (float32, float64, int32, int64 or bool)");
}

bool available(const detail::KernelTable& kernels, const detail::OpDef& def, KernelDTypes d) {
  return kernels.find(def.id, d.input, d.output) != nullptr;
}

}  // namespace

bool has_kernel(std::string_view device, std::string_view op, DType input,
                std::optional<DType> output) {
  const detail::OpDef& def = named_op(op);
  check_dtype(op, input);
  if (output) check_dtype(op, *output);
  const detail::KernelTable& kernels = detail::resolve_device(device)->kernels();
  const std::vector<KernelDTypes> defined = detail::kernel_dtypes(def);
  return std::any_of(defined.begin(), defined.end(), [&](KernelDTypes d) {
    return d.input == input && (!output || d.output == *output) && available(kernels, def, d);
  });
}

std::vector<OpKernels> list_kernels(std::string_view device) {
  const detail::KernelTable& kernels = detail::resolve_device(device)->kernels();
  std::vector<OpKernels> out;
  for (const detail::OpDef& def : detail::op_defs()) {
    OpKernels entry{def.name, detail::kernel_dtypes(def), {}};
    for (KernelDTypes d : entry.defined) {
      if (available(kernels, def, d)) entry.available.push_back(d);
    }
    out.push_back(std::move(entry));
  }
  return out;
}

}  // namespace xdev
