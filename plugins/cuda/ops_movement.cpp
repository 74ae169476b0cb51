// The cuda plugin's data-movement kernels (docs/ops.md "Data movement"):
// ConcatV2, Pack, Tile, PadV2, GatherV2 (Identity is Copy's kernel,
// ops.cpp). Checks and layouts here, kernels in movement.cu. Every value
// is copied bit for bit.
//
// ConcatV2 and Pack copy each input into its region of the dense output:
// the region is a strided view (the output's strides, an offset along the
// axis), and elementwise_layout of (input, region) over the input's shape
// simplifies both at once.
//
// GatherV2 checks its indices on the host before the launch (a kernel
// cannot report the first bad index): it copies them from the device and
// synchronizes the stream, so it costs a round trip. gather_check.hpp.
#include <xdev/plugin.h>
#include <xdev/op_names.h>

#include <cuda_runtime_api.h>

#include <cinttypes>
#include <cstdint>
#include <iterator>
#include <vector>

#include "call.hpp"
#include "gather_check.hpp"
#include "launch.hpp"
#include "layout.hpp"
#include "ops.hpp"

namespace xdev::cuda {
namespace {

// Copies `x` into the view of the output at element `offset` with
// `strides` (x's rank).
cudaError_t copy_to_region(Call& call, const xdev_tensor_t& x, int64_t offset,
                           const int64_t* strides) {
  if (element_count(x) == 0) return cudaSuccess;
  const xdev_tensor_t& out = call.output();
  xdev_tensor_t region = out;
  region.rank = x.rank;
  region.shape = x.shape;
  region.strides = strides;
  const xdev_tensor_t* operands[2] = {&x, &region};
  const ElementwiseLayout l = elementwise_layout(x, operands, 2);
  const size_t size = itemsize(out.dtype);
  char* base = static_cast<char*>(data_of_output(out)) + offset * static_cast<int64_t>(size);
  return launch_copy_to_view(size, l, data_of(x), base, call.cuda_stream());
}

xdev_status_t* shape_mismatch(Call& call, uint32_t input) {
  return g_host.fail(call.host(), XDEV_STATUS_INVALID_ARGUMENT,
                     "%s: input %" PRIu32 "'s shape does not fit the output's", call.op(), input);
}

// ConcatV2 and Pack: one or more inputs of the output's dtype, an axis
// below the output's rank; body(call, axis, the output's dense strides).
template <typename Body>
xdev_status_t* joined(const xdev_kernel_call_t* raw, const char* op, Body&& body) noexcept {
  return guarded(raw, op, [&]() -> xdev_status_t* {
    Call call(raw, op);
    if (xdev_status_t* s = call.check(-1)) return s;
    if (xdev_status_t* s = call.check_same_dtype(kAll)) return s;
    int32_t axis = 0;
    if (xdev_status_t* s = read_axis(call, call.output().rank, &axis)) return s;
    int64_t dense[kMaxRank] = {};
    dense_strides(call.output(), dense);
    return body(call, axis, dense);
  });
}

xdev_status_t* kernel_concat_v2(void*, const xdev_kernel_call_t* raw) noexcept {
  return joined(raw, XDEV_OP_ConcatV2, [](Call& call, int32_t axis, const int64_t* strides) {
    const xdev_tensor_t& out = call.output();
    int64_t along = 0;
    for (uint32_t i = 0; i < call.input_count(); ++i) {
      const xdev_tensor_t& x = call.input(i);
      bool fits = x.rank == out.rank;
      for (int32_t k = 0; k < x.rank && fits; ++k) fits = k == axis || x.shape[k] == out.shape[k];
      if (!fits) return shape_mismatch(call, i);
      along += x.shape[axis];
    }
    if (along != out.shape[axis]) return shape_mismatch(call, call.input_count() - 1);
    int64_t offset = 0;  // along the axis
    for (uint32_t i = 0; i < call.input_count(); ++i) {
      const xdev_tensor_t& x = call.input(i);
      if (xdev_status_t* s =
              call.launched(copy_to_region(call, x, offset * strides[axis], strides))) {
        return s;
      }
      offset += x.shape[axis];
    }
    return static_cast<xdev_status_t*>(nullptr);
  });
}

xdev_status_t* kernel_pack(void*, const xdev_kernel_call_t* raw) noexcept {
  return joined(raw, XDEV_OP_Pack, [](Call& call, int32_t axis, const int64_t* dense) {
    const xdev_tensor_t& out = call.output();
    if (out.shape[axis] != call.input_count()) return shape_mismatch(call, 0);
    for (uint32_t i = 0; i < call.input_count(); ++i) {
      const xdev_tensor_t& x = call.input(i);
      bool fits = x.rank + 1 == out.rank;
      for (int32_t k = 0; k < x.rank && fits; ++k) {
        fits = x.shape[k] == out.shape[k < axis ? k : k + 1];
      }
      if (!fits) return shape_mismatch(call, i);
    }
    // The output's strides without the new axis: input i's region.
    int64_t strides[kMaxRank] = {};
    for (int32_t k = 0, j = 0; k < out.rank; ++k) {
      if (k != axis) strides[j++] = dense[k];
    }
    for (uint32_t i = 0; i < call.input_count(); ++i) {
      if (xdev_status_t* s = call.launched(copy_to_region(
              call, call.input(i), static_cast<int64_t>(i) * dense[axis], strides))) {
        return s;
      }
    }
    return static_cast<xdev_status_t*>(nullptr);
  });
}

// The IndexMapLayout of x against the output.
IndexMapLayout index_map(const xdev_tensor_t& x, const xdev_tensor_t& out) {
  IndexMapLayout l;
  l.rank = out.rank;
  l.count = element_count(out);
  for (int32_t d = 0; d < out.rank; ++d) {
    l.out_shape[d] = out.shape[d];
    l.in_shape[d] = x.shape[d];
    l.in_strides[d] = x.strides[d];
  }
  return l;
}

// The ints attribute `name` with exactly `count` values, each >= 0 (a
// scalar's empty list may also be left out).
xdev_status_t* read_ints(Call& call, const char* name, int64_t count, const int64_t** values) {
  const xdev_attr_t* a = find_attr(call.raw(), name, XDEV_ATTR_INTS);
  if (a == nullptr && count == 0) {
    *values = nullptr;
    return nullptr;
  }
  bool ok = a != nullptr && a->value.ints.count == count;
  for (int64_t i = 0; ok && i < count; ++i) ok = a->value.ints.values[i] >= 0;
  if (!ok) {
    return g_host.fail(call.host(), XDEV_STATUS_INVALID_ARGUMENT,
                       "%s: the attribute '%s' must be %" PRId64 " ints >= 0", call.op(), name,
                       count);
  }
  *values = a->value.ints.values;
  return nullptr;
}

// Tile and PadV2: one input of the output's dtype and rank, the ints
// attribute `attr` with `per_axis` values >= 0 per axis; body(call, values,
// the IndexMapLayout) checks the shapes and launches.
template <typename Body>
xdev_status_t* index_mapped(const xdev_kernel_call_t* raw, const char* op, const char* attr,
                            int64_t per_axis, Body&& body) noexcept {
  return guarded(raw, op, [&]() -> xdev_status_t* {
    Call call(raw, op);
    if (xdev_status_t* s = call.check(1)) return s;
    if (xdev_status_t* s = call.check_same_dtype(kAll)) return s;
    const xdev_tensor_t& x = call.input(0);
    const int64_t* values = nullptr;
    if (xdev_status_t* s = read_ints(call, attr, per_axis * x.rank, &values)) return s;
    if (call.output().rank != x.rank) return shape_mismatch(call, 0);
    IndexMapLayout l = index_map(x, call.output());
    return body(call, values, l);
  });
}

xdev_status_t* kernel_tile(void*, const xdev_kernel_call_t* raw) noexcept {
  return index_mapped(raw, XDEV_OP_Tile, XDEV_ATTR_NAME_multiples, 1,
                      [](Call& call, const int64_t* multiples, const IndexMapLayout& l) {
                        for (int32_t d = 0; d < l.rank; ++d) {
                          if (l.out_shape[d] != l.in_shape[d] * multiples[d]) {
                            return shape_mismatch(call, 0);
                          }
                        }
                        return call.launched(launch_tile(itemsize(call.output().dtype), l,
                                                         data_of(call.input(0)),
                                                         data_of_output(call.output()),
                                                         call.cuda_stream()));
                      });
}

xdev_status_t* kernel_pad_v2(void*, const xdev_kernel_call_t* raw) noexcept {
  return index_mapped(raw, XDEV_OP_PadV2, XDEV_ATTR_NAME_paddings, 2,
                      [raw](Call& call, const int64_t* paddings, IndexMapLayout& l) {
                        for (int32_t d = 0; d < l.rank; ++d) {
                          const int64_t before = paddings[2 * d], after = paddings[2 * d + 1];
                          if (l.out_shape[d] != l.in_shape[d] + before + after) {
                            return shape_mismatch(call, 0);
                          }
                          l.before[d] = before;
                        }
                        const xdev_attr_t* value =
                            find_attr(raw, XDEV_ATTR_NAME_constant_values, XDEV_ATTR_FLOAT);
                        const xdev_dtype_t dtype = call.output().dtype;
                        const uint64_t pattern =
                            fill_pattern(dtype, value != nullptr ? value->value.f : 0.0);
                        return call.launched(launch_pad(itemsize(dtype), l, pattern,
                                                        data_of(call.input(0)),
                                                        data_of_output(call.output()),
                                                        call.cuda_stream()));
                      });
}

xdev_status_t* kernel_gather_v2(void*, const xdev_kernel_call_t* raw) noexcept {
  constexpr const char* kOp = XDEV_OP_GatherV2;
  return guarded(raw, kOp, [&]() -> xdev_status_t* {
    Call call(raw, kOp);
    if (xdev_status_t* s = call.check(2)) return s;
    const xdev_tensor_t& params = call.input(0);
    const xdev_tensor_t& indices = call.input(1);
    const xdev_tensor_t& out = call.output();
    if (!in_mask(kAll, params.dtype) || out.dtype != params.dtype) {
      return call.bad_dtype(out.dtype);
    }
    if (!in_mask(kInt32 | kInt64, indices.dtype)) return call.bad_dtype(indices.dtype);
    int32_t axis = 0;
    if (xdev_status_t* s = read_axis(call, params.rank, &axis)) return s;
    if (!is_contiguous(params) || !is_contiguous(indices)) {
      return g_host.fail(call.host(), XDEV_STATUS_INVALID_ARGUMENT,
                         "%s: the inputs must be contiguous (the op table says so)", kOp);
    }
    bool fits = out.rank == params.rank - 1 + indices.rank;
    for (int32_t k = 0, j = 0; k < params.rank && fits; ++k) {
      if (k != axis) {
        fits = out.shape[j++] == params.shape[k];
        continue;
      }
      for (int32_t i = 0; i < indices.rank && fits; ++i) fits = out.shape[j++] == indices.shape[i];
    }
    if (!fits) return shape_mismatch(call, 1);
    int64_t outer = 1, inner = 1;
    for (int32_t k = 0; k < params.rank; ++k) {
      if (k < axis) outer *= params.shape[k];
      if (k > axis) inner *= params.shape[k];
    }
    const int64_t n = params.shape[axis];
    const int64_t count = element_count(indices);
    // docs/ops.md: an index out of range is an error, reported before any
    // write. The indices come to the host (after the work before them on
    // the stream) and are checked there.
    std::vector<unsigned char> host;
    if (xdev_status_t* s = indices_to_host(call, indices, host)) return s;
    int64_t value = 0;
    const int64_t bad = first_bad_index(host.data(), indices.dtype, count, n, &value);
    if (bad >= 0) {
      return g_host.fail(call.host(), XDEV_STATUS_INVALID_ARGUMENT,
                         "%s: indices[%" PRId64 "] = %" PRId64 " is out of range [0, %" PRId64
                         ") for axis %" PRId32,
                         kOp, bad, value, n, axis);
    }
    return call.launched(launch_gather(itemsize(out.dtype), indices.dtype, outer, n, count, inner,
                                       data_of(params), data_of(indices), data_of_output(out),
                                       call.cuda_stream()));
  });
}

using ph::kernel_info;

constexpr xdev_kernel_info_t kMovementKernels[] = {
    kernel_info(XDEV_OP_ConcatV2, kAll, kAll, &kernel_concat_v2),
    kernel_info(XDEV_OP_Pack, kAll, kAll, &kernel_pack),
    kernel_info(XDEV_OP_Tile, kAll, kAll, &kernel_tile),
    kernel_info(XDEV_OP_PadV2, kAll, kAll, &kernel_pad_v2),
    kernel_info(XDEV_OP_GatherV2, kAll, kAll, &kernel_gather_v2),
};

}  // namespace

KernelTable movement_kernels() noexcept {
  return {kMovementKernels, std::size(kMovementKernels)};
}

}  // namespace xdev::cuda
