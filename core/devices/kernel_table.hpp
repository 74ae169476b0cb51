// The kernels plugins register for the ops of the op table (op_table.hpp).
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include <xdev/dtype.hpp>
#include <xdev/plugin.h>

#include "opdefs/op_table.hpp"

namespace xdev::detail {

struct KernelEntry {
  xdev_kernel_fn_t fn = nullptr;
  void* context = nullptr;
  uint64_t input_dtypes = 0;
  uint64_t output_dtypes = 0;  // 0: no extra limit
};

// The kernels of one device type of one plugin.
class KernelTable {
 public:
  void add(OpId op, const KernelEntry& entry) { by_op_[static_cast<int>(op)].push_back(entry); }
  // Adds every kernel of `other` after this table's own (which find() then
  // prefers): a device's own kernels before its type's.
  void append(const KernelTable& other) {
    for (size_t i = 0; i < by_op_.size(); ++i) {
      by_op_[i].insert(by_op_[i].end(), other.by_op_[i].begin(), other.by_op_[i].end());
    }
  }
  // The first kernel accepting these dtypes, or nullptr.
  const KernelEntry* find(OpId op, DType input, DType output) const {
    for (const KernelEntry& k : by_op_[static_cast<int>(op)]) {
      if ((k.input_dtypes & dtype_bit(input)) == 0) continue;
      if (k.output_dtypes != 0 && (k.output_dtypes & dtype_bit(output)) == 0) continue;
      return &k;
    }
    return nullptr;
  }
  bool has_op(OpId op) const { return !by_op_[static_cast<int>(op)].empty(); }

 private:
  std::array<std::vector<KernelEntry>, kOpCount> by_op_;
};

}  // namespace xdev::detail
