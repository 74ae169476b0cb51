// TensorScatterAdd (TensorFlow's raw op): out = tensor, then each slice of
// updates added at the index of its row of indices [..., D]. Numbers only;
// integers wrap.
//
// Inputs are contiguous (the op table says so). The kernel first maps every
// index row to the output row it targets (a row: the tensor's elements from
// axis D on), checking each against the tensor's shape, and reports the first
// one out of range before anything is written. Then the output is the tensor
// copied, and the updates are added, every output row receiving its updates
// in their order in `updates` (the result does not depend on the thread
// count). Large calls split over oneTBB's threads: wide rows by columns, many
// narrow rows by ranges of output rows (the updates bucketed by the range
// their target falls in, keeping their order).
#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/task_arena.h>

#include <algorithm>
#include <atomic>
#include <cinttypes>
#include <cstring>
#include <vector>

#include "kernels/common.hpp"
#include "kernels/kernels.hpp"
#include "kernels/rows.hpp"
#include "parallel.hpp"

namespace xdev::cpu {
namespace {

// The shapes fit: out is tensor's shape, indices [..., D] with D <= rank,
// updates indices[:-1] + tensor[D:].
bool scatter_shapes_fit(const xdev_tensor_t& tensor, const xdev_tensor_t& indices,
                        const xdev_tensor_t& updates, const xdev_tensor_t& out) noexcept {
  if (!same_shape(tensor, out) || indices.rank < 1) return false;
  const int64_t depth = indices.shape[indices.rank - 1];
  if (depth > tensor.rank) return false;
  if (updates.rank != indices.rank - 1 + tensor.rank - depth) return false;
  int32_t u = 0;
  for (int32_t k = 0; k + 1 < indices.rank; ++k) {
    if (updates.shape[u++] != indices.shape[k]) return false;
  }
  for (auto k = static_cast<int32_t>(depth); k < tensor.rank; ++k) {
    if (updates.shape[u++] != tensor.shape[k]) return false;
  }
  return true;
}

// Adds `count` elements of `from` to `to`, wrapping for integers.
template <typename T>
inline void add_row(T* to, const T* from, int64_t count) noexcept {
  for (int64_t c = 0; c < count; ++c) to[c] = wrapping(to[c], from[c], std::plus<>{});
}

template <typename T>
void scatter_add(const int64_t* target, int64_t updates_rows, int64_t out_rows, int64_t inner,
                 const T* upd, T* out) {
  if (updates_rows * inner < kParallelMinElements) {
    for (int64_t j = 0; j < updates_rows; ++j) add_row(out + target[j] * inner, upd + j * inner, inner);
    return;
  }
  if (inner >= kParallelGrainElements) {
    // Wide rows: each task owns a range of columns of every row.
    cpu::parallel_for(tbb::blocked_range<int64_t>(0, inner, kParallelGrainElements / 4),
                      [&](const tbb::blocked_range<int64_t>& r) {
                        const int64_t width = r.end() - r.begin();
                        for (int64_t j = 0; j < updates_rows; ++j) {
                          add_row(out + target[j] * inner + r.begin(),
                                  upd + j * inner + r.begin(), width);
                        }
                      });
    return;
  }
  // Narrow rows: `parts` ranges of output rows, one task each. The updates
  // are bucketed by the range of their target (a stable counting sort in
  // parallel over `parts` chunks of the updates), then each task adds its
  // bucket in order.
  const int64_t threads = std::max(1, tbb::this_task_arena::max_concurrency());
  const int64_t parts = std::clamp<int64_t>(
      std::min(4 * threads, (updates_rows * inner) / (kParallelGrainElements / 4)), 1,
      std::max<int64_t>(out_rows, 1));
  const int64_t rows_per_part = (out_rows + parts - 1) / parts;
  const int64_t chunk = (updates_rows + parts - 1) / parts;
  // counts[c * parts + p]: updates of chunk c that go to part p; then, after
  // the prefix sum, where chunk c writes its next one of part p.
  std::vector<int64_t> counts(static_cast<size_t>(parts * parts), 0);
  cpu::parallel_for(tbb::blocked_range<int64_t>(0, parts, 1),
                    [&](const tbb::blocked_range<int64_t>& r) {
                      for (int64_t c = r.begin(); c < r.end(); ++c) {
                        const int64_t end = std::min(updates_rows, (c + 1) * chunk);
                        for (int64_t j = c * chunk; j < end; ++j) {
                          ++counts[static_cast<size_t>(c * parts + target[j] / rows_per_part)];
                        }
                      }
                    });
  std::vector<int64_t> part_begin(static_cast<size_t>(parts + 1), 0);
  int64_t at = 0;
  for (int64_t p = 0; p < parts; ++p) {
    part_begin[static_cast<size_t>(p)] = at;
    for (int64_t c = 0; c < parts; ++c) {
      const int64_t n = counts[static_cast<size_t>(c * parts + p)];
      counts[static_cast<size_t>(c * parts + p)] = at;
      at += n;
    }
  }
  part_begin[static_cast<size_t>(parts)] = at;
  std::vector<int64_t> order(static_cast<size_t>(updates_rows));
  cpu::parallel_for(tbb::blocked_range<int64_t>(0, parts, 1),
                    [&](const tbb::blocked_range<int64_t>& r) {
                      for (int64_t c = r.begin(); c < r.end(); ++c) {
                        const int64_t end = std::min(updates_rows, (c + 1) * chunk);
                        for (int64_t j = c * chunk; j < end; ++j) {
                          int64_t& next =
                              counts[static_cast<size_t>(c * parts + target[j] / rows_per_part)];
                          order[static_cast<size_t>(next++)] = j;
                        }
                      }
                    });
  cpu::parallel_for(tbb::blocked_range<int64_t>(0, parts, 1),
                    [&](const tbb::blocked_range<int64_t>& r) {
                      for (int64_t p = r.begin(); p < r.end(); ++p) {
                        for (int64_t i = part_begin[static_cast<size_t>(p)];
                             i < part_begin[static_cast<size_t>(p + 1)]; ++i) {
                          const int64_t j = order[static_cast<size_t>(i)];
                          add_row(out + target[j] * inner, upd + j * inner, inner);
                        }
                      }
                    });
}

}  // namespace

xdev_status_t* kernel_tensor_scatter_add(void*, const xdev_kernel_call_t* call) noexcept {
  if (xdev_status_t* s = check_call(call, 3)) return s;
  if (xdev_status_t* s = check_attr_names(call, kNoAttrs)) return s;
  const xdev_tensor_t& tensor = *call->inputs[0];
  const xdev_tensor_t& indices = *call->inputs[1];
  const xdev_tensor_t& updates = *call->inputs[2];
  const xdev_tensor_t& out = *call->outputs[0];
  if (!in_mask(tensor.dtype, kArith) || updates.dtype != tensor.dtype ||
      out.dtype != tensor.dtype || !in_mask(indices.dtype, kI32 | kI64)) {
    return kernel_fail(call, XDEV_STATUS_UNIMPLEMENTED,
                       "TensorScatterAdd: the cpu plugin has no kernel for tensor %s, indices %s, "
                       "updates %s, output %s",
                       dtype_name(tensor.dtype), dtype_name(indices.dtype),
                       dtype_name(updates.dtype), dtype_name(out.dtype));
  }
  auto dense = [](const xdev_tensor_t& t) { return element_count(t) == 0 || is_contiguous(t); };
  if (!dense(tensor) || !dense(indices) || !dense(updates)) {
    return kernel_fail(call, XDEV_STATUS_INVALID_ARGUMENT,
                       "TensorScatterAdd: the inputs must be contiguous (the op table says so)");
  }
  if (!scatter_shapes_fit(tensor, indices, updates, out)) {
    return kernel_fail(call, XDEV_STATUS_INVALID_ARGUMENT,
                       "TensorScatterAdd: the shapes of tensor (rank %" PRId32
                       "), indices (rank %" PRId32 ") and updates (rank %" PRId32
                       ") do not fit (updates: indices[:-1] + tensor[D:]) or the output is not "
                       "tensor's shape",
                       tensor.rank, indices.rank, updates.rank);
  }
  const auto depth = static_cast<int32_t>(indices.shape[indices.rank - 1]);
  int64_t rows = 1;  // index rows: indices' elements without its last axis
  for (int32_t k = 0; k + 1 < indices.rank; ++k) rows *= indices.shape[k];
  int64_t out_rows = 1, inner = 1;
  for (int32_t k = 0; k < tensor.rank; ++k) (k < depth ? out_rows : inner) *= tensor.shape[k];
  try {
    // Each index row's target output row; the first position out of range.
    std::vector<int64_t> target(static_cast<size_t>(rows));
    std::atomic<int64_t> first_bad{INT64_MAX};
    auto index = [&](int64_t e) -> int64_t {
      return indices.dtype == XDEV_DTYPE_INT32 ? data_of<const int32_t>(indices)[e]
                                               : data_of<const int64_t>(indices)[e];
    };
    for_rows(rows, std::max<int32_t>(depth, 1), [&](int64_t j) {
      int64_t t = 0;
      for (int32_t d = 0; d < depth; ++d) {
        const int64_t v = index(j * depth + d);
        if (v < 0 || v >= tensor.shape[d]) {
          int64_t seen = first_bad.load(std::memory_order_relaxed);
          const int64_t pos = j * depth + d;
          while (pos < seen && !first_bad.compare_exchange_weak(seen, pos)) {
          }
          return;
        }
        t = t * tensor.shape[d] + v;
      }
      target[static_cast<size_t>(j)] = t;
    });
    if (const int64_t bad = first_bad.load(); bad != INT64_MAX) {
      const int64_t j = bad / depth;
      const int32_t d = static_cast<int32_t>(bad % depth);
      return kernel_fail(call, XDEV_STATUS_INVALID_ARGUMENT,
                         "TensorScatterAdd: index %" PRId64 " (indices element %" PRId64
                         ", position %" PRId32 " of index row %" PRId64 ") is out of range [0, %" PRId64
                         ") for axis %" PRId32 " of tensor",
                         index(bad), bad, d, j, tensor.shape[d], d);
    }
    const int64_t total = element_count(out);
    if (total == 0) return nullptr;
    const auto item = static_cast<size_t>(itemsize(out.dtype));
    const char* const src = data_of<const char>(tensor);
    char* const dst = data_of<char>(out);
    const int64_t block = kParallelGrainElements;
    for_rows((total + block - 1) / block, block, [&](int64_t b) {
      const int64_t begin = b * block, end = std::min(total, begin + block);
      std::memcpy(dst + static_cast<size_t>(begin) * item, src + static_cast<size_t>(begin) * item,
                  static_cast<size_t>(end - begin) * item);
    });
    if (inner == 0 || rows == 0) return nullptr;
    visit_dtypes<kArith>(out.dtype, [&](auto zero) {
      using T = decltype(zero);
      scatter_add(target.data(), rows, out_rows, inner, data_of<const T>(updates), data_of<T>(out));
    });
    return nullptr;
  } catch (...) {
    return kernel_unexpected(call);
  }
}

}  // namespace xdev::cpu
