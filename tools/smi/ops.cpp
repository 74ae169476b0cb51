#include "ops.hpp"

#include <iomanip>
#include <iterator>
#include <ostream>
#include <vector>

#include <nlohmann/json.hpp>

#include <xdev/xdev.hpp>

namespace xdev_smi {
namespace {

constexpr xdev::DType kColumns[] = {xdev::DType::kFloat32, xdev::DType::kFloat64,
                                    xdev::DType::kInt32,   xdev::DType::kInt64,
                                    xdev::DType::kBool,    xdev::DType::kFloat16,
                                    xdev::DType::kBFloat16, xdev::DType::kUInt8,
                                    xdev::DType::kInt8};

// The logical devices asked for: all, or the one `device` names (the first
// match, as placement resolves names).
std::vector<xdev::Device> devices_named(const std::string& device) {
  std::vector<xdev::Device> all = xdev::list_logical_devices();
  if (device.empty()) return all;
  xdev::list_kernels(device);  // throws xdev::Error naming an unknown device
  const xdev::DeviceName wanted = xdev::DeviceName::parse(device);
  for (const xdev::Device& d : all) {
    if (wanted.matches(xdev::DeviceName::parse(d.name))) return {d};
  }
  return {};
}

size_t count(const std::vector<xdev::KernelDTypes>& pairs, xdev::DType input) {
  size_t n = 0;
  for (const xdev::KernelDTypes& p : pairs) n += p.input == input ? 1 : 0;
  return n;
}

// One cell: the kernels of `op` for input dtype `input`.
const char* cell(const xdev::OpKernels& op, xdev::DType input) {
  const size_t defined = count(op.defined, input);
  const size_t available = count(op.available, input);
  if (defined == 0) return "-";
  if (available == defined) return "yes";
  return available == 0 ? "no" : "some";
}

nlohmann::json pairs_json(const std::vector<xdev::KernelDTypes>& pairs) {
  nlohmann::json list = nlohmann::json::array();
  for (const xdev::KernelDTypes& p : pairs) {
    list.push_back({{"input", std::string(xdev::to_string(p.input))},
                    {"output", std::string(xdev::to_string(p.output))}});
  }
  return list;
}

std::vector<xdev::KernelDTypes> missing(const xdev::OpKernels& op) {
  std::vector<xdev::KernelDTypes> out;
  for (const xdev::KernelDTypes& p : op.defined) {
    bool found = false;
    for (const xdev::KernelDTypes& a : op.available) found = found || a == p;
    if (!found) out.push_back(p);
  }
  return out;
}

}  // namespace

void print_ops(const std::string& device, bool json, std::ostream& out) {
  const std::vector<xdev::Device> devices = devices_named(device);
  if (json) {
    nlohmann::json j;
    j["devices"] = nlohmann::json::array();
    for (const xdev::Device& d : devices) {
      nlohmann::json ops = nlohmann::json::array();
      for (const xdev::OpKernels& op : xdev::list_kernels(d.name)) {
        ops.push_back({{"op", op.op},
                       {"kernels", pairs_json(op.available)},
                       {"missing", pairs_json(missing(op))}});
      }
      j["devices"].push_back(
          {{"name", d.name}, {"device_type", d.device_type}, {"ops", std::move(ops)}});
    }
    out << j.dump(2) << "\n";
    return;
  }
  out << "Kernels by the dtype they are chosen by (the first input's; Fill, RandomUniform: the "
         "output's).\n"
         "yes: a kernel; no: none, the op falls back to another device; some: for some output "
         "dtypes only (--json lists them); -: the op takes no such dtype.\n";
  if (devices.empty()) out << "\n(no logical device)\n";
  for (const xdev::Device& d : devices) {
    const std::vector<xdev::OpKernels> ops = xdev::list_kernels(d.name);
    size_t with_kernels = 0;
    for (const xdev::OpKernels& op : ops) with_kernels += op.available.empty() ? 0 : 1;
    out << "\n" << d.name << ": kernels for " << with_kernels << " of " << ops.size()
        << " ops\n";
    // Columns of 9 characters, the last one unpadded (no trailing blanks).
    auto row = [&](const std::string& first, auto text) {
      out << "  " << std::left << std::setw(20) << first;
      for (size_t i = 0; i < std::size(kColumns); ++i) {
        out << std::setw(i + 1 < std::size(kColumns) ? 9 : 0) << text(kColumns[i]);
      }
      out << "\n";
    };
    row("op", [](xdev::DType c) { return xdev::to_string(c); });
    for (const xdev::OpKernels& op : ops) {
      row(op.op, [&](xdev::DType c) { return std::string_view(cell(op, c)); });
    }
  }
}

}  // namespace xdev_smi
