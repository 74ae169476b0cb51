// Cast, Copy, Fill, RandomUniform: ops that move or create data.
//
// Dense inputs take a flat loop (Copy: memcpy, split over threads from
// 4 MiB, copy.hpp); strided ones the walk of strided.hpp. Fill and
// RandomUniform write a dense output, split over oneTBB's threads from
// kParallelMinElements elements.
#include <xdev/op_names.h>
#include <cinttypes>
#include <cstring>
#include <type_traits>

#include "copy.hpp"
#include "kernels/common.hpp"
#include "kernels/kernels.hpp"
#include "kernels/strided.hpp"

namespace xdev::cpu {
namespace {

void copy_any(const xdev_tensor_t& x, const xdev_tensor_t& out) {
  const int64_t size = itemsize(x.dtype);
  if (is_contiguous(x)) {
    copy_bytes(static_cast<char*>(out.data) + out.byte_offset,
               static_cast<const char*>(x.data) + x.byte_offset,
               static_cast<size_t>(element_count(out) * size));
    return;
  }
  int64_t out_strides[XDEV_MAX_RANK];
  dense_strides(out, out_strides);
  copy_view_bytes(size, out.rank, out.shape, static_cast<const char*>(x.data) + x.byte_offset, x.strides,
                  static_cast<char*>(out.data) + out.byte_offset, out_strides);
}

// docs/ops.md "RandomUniform", bit for bit (wrapping uint64 arithmetic).
inline uint64_t random_bits(uint64_t seed, uint64_t i) noexcept {
  uint64_t x = seed + (i + 1) * 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// The plugin is compiled with -ffp-contract=off: `minval + range * u` must be
// a multiply and an add, each rounded, never a fused multiply-add.
template <typename T>
void random_uniform(const xdev_tensor_t& out, uint64_t seed, T minval, T maxval) {
  T* const o = data_of<T>(out);
  const T range = maxval - minval;
  parallel_range(element_count(out), [=](int64_t begin, int64_t end) {
    T* __restrict po = o;
    for (int64_t i = begin; i < end; ++i) {
      const uint64_t x = random_bits(seed, static_cast<uint64_t>(i));
      T u;
      if constexpr (std::is_same_v<T, float>) {
        u = static_cast<float>(x >> 40) * 0x1.0p-24f;
      } else {
        u = static_cast<double>(x >> 11) * 0x1.0p-53;
      }
      po[i] = minval + range * u;
    }
  });
}

}  // namespace

xdev_status_t* kernel_cast(void*, const xdev_kernel_call_t* call) noexcept {
  if (xdev_status_t* s = check_call(call, 1)) return s;
  static constexpr const char* kKnown[] = {XDEV_ATTR_NAME_dtype, nullptr};
  if (xdev_status_t* s = check_attr_names(call, kKnown)) return s;
  xdev_dtype_t target = call->outputs[0]->dtype;
  if (const xdev_attr_t* a = find_attr(call, XDEV_ATTR_NAME_dtype)) {
    if (a->kind != XDEV_ATTR_DTYPE) {
      return kernel_fail(call, XDEV_STATUS_INVALID_ARGUMENT,
                         "Cast: the attribute 'dtype' must be a dtype (kind %d given)",
                         static_cast<int>(a->kind));
    }
    target = a->value.dtype;
  }
  if (!in_mask(target, kEveryDtype)) {
    return kernel_fail(call, XDEV_STATUS_UNIMPLEMENTED,
                       "Cast: the cpu plugin has no kernel for output dtype %s (it has %s)",
                       dtype_name(target), dtype_list(kEveryDtype));
  }
  xdev_dtype_t source;
  if (xdev_status_t* s = check_dtypes(call, kEveryDtype, &source, target)) return s;
  if (xdev_status_t* s = check_same_shapes(call)) return s;
  return guarded(call, [call, source, target] {
    const xdev_tensor_t& x = *call->inputs[0];
    const xdev_tensor_t& out = *call->outputs[0];
    if (source == target) {
      copy_any(x, out);
      return;
    }
    visit_element(source, [&](auto from) {
      visit_element(target, [&](auto to) {
        using From = decltype(from);
        using To = decltype(to);
        map<typename To::stored, typename From::stored>(x, out, [](typename From::stored v) {
          return To::store(convert<typename To::value>(From::load(v)));
        });
      });
    });
  });
}

xdev_status_t* kernel_copy(void*, const xdev_kernel_call_t* call) noexcept {
  xdev_dtype_t dtype;
  if (xdev_status_t* s = check_signature(call, 1, kEveryDtype, kNoAttrs, true, &dtype)) return s;
  return guarded(call, [call] { copy_any(*call->inputs[0], *call->outputs[0]); });
}

xdev_status_t* kernel_fill(void*, const xdev_kernel_call_t* call) noexcept {
  static constexpr const char* kKnown[] = {XDEV_ATTR_NAME_value, nullptr};
  xdev_dtype_t dtype;
  if (xdev_status_t* s = check_signature(call, 0, kEveryDtype, kKnown, false, &dtype)) return s;
  double value = 0;
  if (xdev_status_t* s = attr_number(call, XDEV_ATTR_NAME_value, true, 0.0, &value)) return s;
  return guarded(call, [call, value] { fill_converted(*call->outputs[0], value); });
}

xdev_status_t* kernel_random_uniform(void*, const xdev_kernel_call_t* call) noexcept {
  static constexpr const char* kKnown[] = {XDEV_ATTR_NAME_seed, XDEV_ATTR_NAME_minval, XDEV_ATTR_NAME_maxval, nullptr};
  xdev_dtype_t dtype;
  if (xdev_status_t* s = check_signature(call, 0, kFloats, kKnown, false, &dtype)) return s;
  const xdev_attr_t* seed = find_attr(call, XDEV_ATTR_NAME_seed);
  if (seed == nullptr || seed->kind != XDEV_ATTR_INT) {
    return kernel_fail(call, XDEV_STATUS_INVALID_ARGUMENT,
                       "RandomUniform: the attribute 'seed' is %s",
                       seed == nullptr ? "missing" : "not an int");
  }
  double minval = 0, maxval = 0;
  if (xdev_status_t* s = attr_number(call, XDEV_ATTR_NAME_minval, true, 0.0, &minval)) return s;
  if (xdev_status_t* s = attr_number(call, XDEV_ATTR_NAME_maxval, true, 0.0, &maxval)) return s;
  return guarded(call, [call, dtype, seed, minval, maxval] {
    const xdev_tensor_t& out = *call->outputs[0];
    const auto bits = static_cast<uint64_t>(seed->value.i);
    // "in the output dtype": the bounds are converted first, then the
    // arithmetic is done in that dtype.
    if (dtype == XDEV_DTYPE_FLOAT32) {
      random_uniform<float>(out, bits, static_cast<float>(minval), static_cast<float>(maxval));
    } else {
      random_uniform<double>(out, bits, minval, maxval);
    }
  });
}

}  // namespace xdev::cpu
