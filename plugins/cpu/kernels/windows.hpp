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

// Calls tap(row, column, at) for each tap of output positions [p0, p1) of
// image b, position by position and, within one, tap by tap in filter order
// (ky, then kx): row p - p0, column (ky * KW + kx) * Cin (the filter's row of the
// tap's first input channel), and `at` the input offset of that channel
// (channel ci at at + ci * in.step_c), or -1 where the tap falls in the
// padding.
template <typename Tap>
void for_taps(const WindowGeometry& g, int64_t b, int64_t p0, int64_t p1, const Tap& tap) {
  for (int64_t p = p0; p < p1; ++p) {
    const int64_t oy = p / g.out.w, ox = p % g.out.w;
    for (int64_t ky = 0; ky < g.kh; ++ky) {
      const int64_t iy = oy * g.sy - g.py + ky * g.dy;
      const bool row_inside = iy >= 0 && iy < g.in.h;
      for (int64_t kx = 0; kx < g.kw; ++kx) {
        const int64_t ix = ox * g.sx - g.px + kx * g.dx;
        const bool inside = row_inside && ix >= 0 && ix < g.in.w;
        tap(p - p0, (ky * g.kw + kx) * g.in.c, inside ? g.in.at(b, iy, ix, 0) : int64_t{-1});
      }
    }
  }
}

// The kernel's op name for messages ("Conv2D").
inline const char* window_op(const xdev_kernel_call_t* call) noexcept {
  return call->op != nullptr ? call->op : "kernel";
}

}  // namespace xdev::cpu
