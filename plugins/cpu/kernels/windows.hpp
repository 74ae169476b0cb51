// The sliding windows of Conv2D and the pooling kernels (conv.cpp,
// pool.cpp): the call's attributes (strides, dilations, ksize, padding,
// data_format) read and checked against the tensors' shapes, windows as
// xdev/window_geometry.hpp computes them (the core's shape functions use the
// same header). Inputs and outputs are contiguous (the op table asks for it).
#pragma once

#include <xdev/plugin.h>

#include <cstdint>

namespace xdev::cpu {

// A contiguous 4-d image: its dimensions and the element steps of each,
// NHWC or NCHW.
struct ImageDims {
  int64_t n = 0, h = 0, w = 0, c = 0;
  int64_t step_n = 0, step_h = 0, step_w = 0, step_c = 0;
  int64_t at(int64_t b, int64_t y, int64_t x, int64_t ch) const noexcept {
    return b * step_n + y * step_h + x * step_w + ch * step_c;
  }
};

// The windows of one call: `in` the image windows slide over (Conv2D's
// input, the gradients' output), `out` the image with one element per window
// and channel; kh x kw taps, steps, dilations, padding before.
struct WindowGeometry {
  bool nchw = false;
  ImageDims in, out;
  int64_t kh = 1, kw = 1, sy = 1, sx = 1, dy = 1, dx = 1, py = 0, px = 0;
  int64_t taps() const noexcept { return kh * kw; }
  int64_t positions() const noexcept { return out.h * out.w; }  // windows per image and channel
};

// Reads the attributes and fills `g` for windows over `in` giving `out`
// (both rank 4 in data_format order). `kh`, `kw` < 1: the ksize attribute
// gives them (pooling). INVALID_ARGUMENT naming the op and the attribute or
// shape at fault; `out` must have the shape the windows give (the channels
// are not checked: the caller knows what they must be).
xdev_status_t* window_geometry(const xdev_kernel_call_t* call, const xdev_tensor_t& in,
                               const xdev_tensor_t& out, int64_t kh, int64_t kw,
                               WindowGeometry& g) noexcept;

// The kernel's op name for messages ("Conv2D").
inline const char* window_op(const xdev_kernel_call_t* call) noexcept {
  return call->op != nullptr ? call->op : "kernel";
}

}  // namespace xdev::cpu
