// The sliding windows of Conv2D and the pooling ops (docs/ops.md), one
// spatial axis at a time, as TensorFlow computes them
// (GetWindowedOutputSizeVerbose): the core's shape functions and the kernels
// of every plugin derive output sizes and paddings from here, so they cannot
// disagree. Header-only and free of exceptions; a plugin links nothing for
// it. Host code (it uses GCC's and Clang's checked arithmetic builtins).
//
// A window of `size` taps `dilation` apart covers (size - 1) * dilation + 1
// elements (its effective size). VALID: no padding, out = (in - effective +
// stride) / stride, refused when negative (the window does not fit at all).
// SAME: out = ceil(in / stride), the padding pad_total = max((out - 1) *
// stride + effective - in, 0), pad_before = pad_total / 2 (the odd element
// goes after). Output element o reads input elements o * stride -
// pad_before + t * dilation, t in [0, size), those outside [0, in) being
// padding.
#pragma once

#include <cstdint>

namespace xdev::window {

struct Axis {
  int64_t in = 0;        // input elements along the axis
  int64_t size = 1;      // window taps (the filter's or ksize's extent), >= 1
  int64_t stride = 1;    // >= 1
  int64_t dilation = 1;  // >= 1
  int64_t out = 0;          // resolve(): output elements
  int64_t pad_before = 0;   // resolve(): padding before element 0
};

// Fills axis.out and axis.pad_before. False when an argument is out of range
// (in < 0, size, stride or dilation < 1), the effective size overflows, or
// VALID's output would be negative.
inline bool resolve(Axis& a, bool same) noexcept {
  if (a.in < 0 || a.size < 1 || a.stride < 1 || a.dilation < 1) return false;
  int64_t effective = 0;
  if (__builtin_mul_overflow(a.size - 1, a.dilation, &effective) ||
      __builtin_add_overflow(effective, int64_t{1}, &effective)) {
    return false;
  }
  if (same) {
    a.out = a.in / a.stride + (a.in % a.stride != 0 ? 1 : 0);
    // (out - 1) * stride < in, so only adding `effective` can overflow.
    int64_t need = 0;
    if (a.out > 0 && __builtin_add_overflow((a.out - 1) * a.stride, effective, &need)) return false;
    need = a.out > 0 ? need - a.in : 0;
    a.pad_before = (need > 0 ? need : 0) / 2;
    return true;
  }
  const int64_t room = a.in - effective + a.stride;  // no overflow: in, effective >= 0
  if (room < 0) return false;
  a.out = room / a.stride;
  a.pad_before = 0;
  return true;
}

// The (height, width) pair of a strides, dilations or ksize attribute: two
// values (height, width), or four in data_format order whose batch and
// channel values are 1 (TensorFlow's form); none gives (1, 1). False for
// another count or a batch or channel value other than 1.
inline bool spatial_pair(const int64_t* values, int64_t count, bool nchw, int64_t& h,
                         int64_t& w) noexcept {
  if (count == 0) {
    h = w = 1;
    return true;
  }
  if (count == 2) {
    h = values[0];
    w = values[1];
    return true;
  }
  if (count != 4) return false;
  const int c = nchw ? 1 : 3, y = nchw ? 2 : 1;
  if (values[0] != 1 || values[c] != 1) return false;
  h = values[y];
  w = values[y + 1];
  return true;
}

// A dense 4-d image of `shape` in data_format order (NHWC, or NCHW when
// `nchw`): its dimensions and the element step of each (the kernels of
// every plugin index images the same way).
struct Image {
  int64_t n = 0, h = 0, w = 0, c = 0;
  int64_t step_n = 0, step_h = 0, step_w = 0, step_c = 0;
};

inline Image dense_image(const int64_t* shape, bool nchw) noexcept {
  Image im;
  im.n = shape[0];
  im.h = shape[nchw ? 2 : 1];
  im.w = shape[nchw ? 3 : 2];
  im.c = shape[nchw ? 1 : 3];
  // Steps from the innermost axis out: NHWC is c, w, h; NCHW is w, h, c.
  const int64_t* inner_first[3] = {nchw ? &im.w : &im.c, nchw ? &im.h : &im.w,
                                   nchw ? &im.c : &im.h};
  int64_t* steps[3] = {nchw ? &im.step_w : &im.step_c, nchw ? &im.step_h : &im.step_w,
                       nchw ? &im.step_c : &im.step_h};
  int64_t step = 1;
  for (int k = 0; k < 3; ++k) {
    *steps[k] = step;
    step *= *inner_first[k];
  }
  im.step_n = step;
  return im;
}

}  // namespace xdev::window
