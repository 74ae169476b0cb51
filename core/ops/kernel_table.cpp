#include "ops/kernel_table.hpp"

namespace xdev::detail {
namespace {
constexpr std::array<std::string_view, kOpCount> kNames = {
    "MatMul", "Add", "Sub", "Mul", "Div", "Neg", "Relu", "AddN",
    "Cast", "Sum", "Mean", "Copy", "Fill", "RandomUniform"};
}  // namespace

std::string_view op_name(OpId op) noexcept { return kNames[static_cast<int>(op)]; }

std::optional<OpId> op_from_name(std::string_view name) noexcept {
  for (int i = 0; i < kOpCount; ++i) {
    if (kNames[i] == name) return static_cast<OpId>(i);
  }
  return std::nullopt;
}

}  // namespace xdev::detail
