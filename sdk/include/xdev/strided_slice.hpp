// TensorFlow's StridedSlice in dense form, header-only: what the attributes
// begin, end, strides and the five masks select from an input of a given
// shape. One definition for the core's shape check, the kernels of any
// plugin (which receive the attributes as the caller gave them, docs/ops.md)
// and the conformance suite's host reference.
//
// The rules are TensorFlow's (tf.strided_slice): entry i of begin/end/strides
// applies to the next input axis, except that bit i of ellipsis_mask makes
// entry i an ellipsis (the axes no other entry names; at most one; without
// one, an ellipsis is implied at the end), bit i of new_axis_mask inserts an
// output axis of size 1, bit i of shrink_axis_mask takes the single element
// begin[i] and drops the axis (begin[i] must be in [-dim, dim), stride > 0),
// and bits of begin_mask / end_mask ignore begin[i] / end[i] (the start or
// the end of the axis in the stride's direction). Negative begin and end
// count from the end of the axis; out-of-range ones are clamped; a stride
// may be negative (walking backwards), never 0. No size computed here can
// overflow: canonical bounds lie in [-1, dim].
#pragma once

#include <xdev/plugin.h>

#include <cinttypes>
#include <cstdint>
#include <cstdio>

namespace xdev {
namespace [[gnu::visibility("hidden")]] strided_slice_spec {

// At most this many entries in begin, end and strides (the bits of the
// masks, which TensorFlow passes as int32).
inline constexpr int64_t kMaxEntries = 32;

// What one input axis contributes: `size` elements at begin, begin +
// stride, ... (each in [0, dim) when size > 0); a shrunk axis has size 1
// and no output axis.
struct Axis {
  int64_t begin = 0;
  int64_t stride = 1;
  int64_t size = 0;
  bool shrink = false;
};

// The step in elements between neighbours of a window that takes `size`
// elements `step` apart along an axis whose elements are `stride` apart:
// step × stride where the window has more than one element along the axis
// (the product then lies within the tensor); `stride` itself where it has one
// or none, since that step is never taken and may be as large as int64
// allows (the product overflowed: fuzz_ops). Views and copies of a window
// (StridedSlice, Slice) in the core and every plugin use this rule.
constexpr int64_t window_stride(int64_t step, int64_t size, int64_t stride) noexcept {
  return size > 1 ? step * stride : stride;
}

struct Dense {
  int32_t input_rank = 0;
  Axis axes[XDEV_MAX_RANK] = {};
  int32_t output_rank = 0;
  int64_t output_shape[XDEV_MAX_RANK] = {};
  // The input axis output axis j walks, or -1 for a new axis of size 1.
  int32_t output_source[XDEV_MAX_RANK] = {};
  // Empty when the attributes fit the shape; else why not (no op name).
  char error[192] = {};

  // The step of output axis j through the input's elements, given the
  // input's element strides: 0 for a new axis, else window_stride's.
  int64_t view_stride(int32_t j, const int64_t* input_strides) const noexcept {
    const int32_t source = output_source[j];
    if (source < 0) return 0;
    const Axis& a = axes[source];
    return window_stride(a.stride, a.size, input_strides[source]);
  }
};

// The dense form of the attributes for an input of `rank`/`shape`; `count`
// entries in each of begin, end and strides. On a refusal out.error says why
// (naming the entry or axis and the values) and the rest is unspecified.
inline void make_dense(int32_t rank, const int64_t* shape, const int64_t* begin,
                       const int64_t* end, const int64_t* strides, int64_t count,
                       int64_t begin_mask, int64_t end_mask, int64_t ellipsis_mask,
                       int64_t new_axis_mask, int64_t shrink_axis_mask, Dense& out) noexcept {
  out = Dense{};
  out.input_rank = rank;
  auto refuse = [&out](const char* format, auto... values) {
    std::snprintf(out.error, sizeof out.error, format, values...);
  };
  if (count < 0 || count > kMaxEntries) {
    refuse("begin, end and strides have %" PRId64 " entries; at most %" PRId64, count,
           kMaxEntries);
    return;
  }
  if ((ellipsis_mask & (ellipsis_mask - 1)) != 0) {
    refuse("ellipsis_mask %" PRId64 " has more than one bit set (one ellipsis at most)",
           ellipsis_mask);
    return;
  }
  auto bit = [](int64_t mask, int64_t i) { return ((mask >> i) & 1) != 0; };
  // The sparse entries with the implied trailing ellipsis; new axes after
  // the ellipsis count against the axes it stands for.
  bool ellipsis_seen = false;
  int64_t new_after_ellipsis = 0;
  for (int64_t i = 0; i < count; ++i) {
    if (ellipsis_seen && bit(new_axis_mask, i)) ++new_after_ellipsis;
    if (bit(ellipsis_mask, i)) ellipsis_seen = true;
  }
  const int64_t dims = ellipsis_seen ? count : count + 1;
  int32_t full = 0;  // the next input axis
  auto add_output = [&](int32_t source, int64_t size) -> bool {
    if (out.output_rank >= XDEV_MAX_RANK) {
      refuse("the output would have more than %d axes", XDEV_MAX_RANK);
      return false;
    }
    out.output_source[out.output_rank] = source;
    out.output_shape[out.output_rank++] = size;
    return true;
  };
  // Axis k's values, canonical: begin and end in [-1, dim] for the stride's direction.
  auto set_axis = [&](int32_t k, int64_t b, int64_t e, int64_t s, bool b_masked, bool e_masked,
                      bool shrink, int64_t entry) -> bool {
    const int64_t dim = shape[k];
    if (s == 0) {
      refuse("strides[%" PRId64 "] is 0 (axis %d)", entry, k);
      return false;
    }
    Axis& a = out.axes[k];
    a.stride = s;
    a.shrink = shrink;
    if (shrink) {
      if (s < 0) {
        refuse("strides[%" PRId64 "] is %" PRId64 " for a shrunk axis %d (only positive strides "
               "index a single element)", entry, s, k);
        return false;
      }
      const int64_t at = b < 0 ? dim + b : b;
      if (b < -dim || b >= dim) {
        refuse("begin[%" PRId64 "] = %" PRId64 " is out of range [%" PRId64 ", %" PRId64
               ") for axis %d of size %" PRId64 " (shrink_axis_mask)", entry, b, -dim, dim, k, dim);
        return false;
      }
      a.begin = at;
      a.size = 1;
      return true;
    }
    const int64_t lo = s > 0 ? 0 : -1, hi = s > 0 ? dim : dim - 1;
    auto canonical = [&](int64_t x, bool masked, bool is_end) {
      if (masked) return (s > 0) != is_end ? lo : hi;
      const int64_t fwd = x < 0 ? dim + x : x;  // dim >= 0: no overflow
      return fwd < lo ? lo : fwd > hi ? hi : fwd;
    };
    const int64_t cb = canonical(b, b_masked, false), ce = canonical(e, e_masked, true);
    const int64_t length = ce - cb;
    if (length == 0 || (length < 0) != (s < 0)) {
      a.size = 0;
    } else {
      a.size = length / s + (length % s != 0 ? 1 : 0);
    }
    a.begin = a.size > 0 ? cb : 0;
    return true;
  };
  for (int64_t i = 0; i < dims; ++i) {
    const bool ellipsis = i == count || bit(ellipsis_mask, i);
    if (ellipsis) {
      int64_t next = rank - (dims - i) + 1 + new_after_ellipsis;
      if (next > rank) next = rank;
      for (; full < next; ++full) {
        set_axis(full, 0, 0, 1, true, true, false, i);
        if (!add_output(full, out.axes[full].size)) return;
      }
    } else if (bit(new_axis_mask, i)) {
      if (!add_output(-1, 1)) return;
    } else {
      if (full >= rank) {
        refuse("entry %" PRId64 " of begin, end and strides indexes axis %d, but the input has "
               "rank %d", i, full, rank);
        return;
      }
      const bool shrink = bit(shrink_axis_mask, i);
      if (!set_axis(full, begin[i], end[i], strides[i], bit(begin_mask, i), bit(end_mask, i),
                    shrink, i)) {
        return;
      }
      if (!shrink && !add_output(full, out.axes[full].size)) return;
      ++full;
    }
  }
}

}  // namespace strided_slice_spec
}  // namespace xdev
