// How the window ops (ops_window.cpp) lay out their images and windows, and
// how the convolutions split their column matrix into chunks. Host code,
// header-only, tested without a GPU (tests/cuda/test_cuda_layout.cpp).
//
// Output sizes and paddings come from xdev/window_geometry.hpp, the header
// the core's shape functions and the cpu plugin use, so the three agree by
// construction.
#pragma once

#include <xdev/window_geometry.hpp>

#include <algorithm>
#include <cstdint>

#include "launch.hpp"

namespace xdev::cuda {

// A dense 4-d image of `shape` in data_format order (window::dense_image,
// as the cpu plugin's).
inline ImageLayout image_layout(const int64_t* shape, bool nchw) {
  const window::Image im = window::dense_image(shape, nchw);
  return {nchw, im.n, im.h, im.w, im.c, im.step_n, im.step_h, im.step_w, im.step_c};
}

// The windows' attributes, read from a call (ops_window.cpp).
struct WindowAttrs {
  bool nchw = false, same = false;
  int64_t kh = 1, kw = 1, sy = 1, sx = 1, dy = 1, dx = 1;
};

// The windows of `a` over the image `in` (shape in data_format order)
// giving `out`: false when they do not fit (window::resolve refuses) or
// do not give out's height, width and batch (channels are the caller's).
inline bool plan_windows(const WindowAttrs& a, const int64_t* in, const int64_t* out,
                         WindowLayout& l) {
  l.in = image_layout(in, a.nchw);
  l.out = image_layout(out, a.nchw);
  l.kh = a.kh;
  l.kw = a.kw;
  l.sy = a.sy;
  l.sx = a.sx;
  l.dy = a.dy;
  l.dx = a.dx;
  window::Axis y{l.in.h, a.kh, a.sy, a.dy}, x{l.in.w, a.kw, a.sx, a.dx};
  if (!window::resolve(y, a.same) || !window::resolve(x, a.same)) return false;
  l.py = y.pad_before;
  l.px = x.pad_before;
  return y.out == l.out.h && x.out == l.out.w && l.out.n == l.in.n;
}

// The column matrix of a convolution: one row per output position of every
// image (N * OH * OW rows), KH * KW * Cin columns. It is built in chunks of
// `rows` rows that fit `budget` bytes of scratch (at least one row).
struct ColumnPlan {
  int64_t total_rows = 0;  // N * OH * OW
  int64_t width = 0;       // KH * KW * Cin
  int64_t rows = 0;        // per chunk, in [1, total_rows] (0 when total_rows is 0)
  uint64_t bytes() const {
    return static_cast<uint64_t>(rows) * static_cast<uint64_t>(width) * element_size;
  }
  uint64_t element_size = 0;
};

inline ColumnPlan plan_columns(const WindowLayout& l, uint64_t element_size, uint64_t budget) {
  ColumnPlan p;
  p.element_size = element_size;
  p.total_rows = l.out.n * l.out.h * l.out.w;
  p.width = l.kh * l.kw * l.in.c;
  if (p.total_rows == 0) return p;
  const uint64_t row_bytes = static_cast<uint64_t>(std::max<int64_t>(p.width, 1)) * element_size;
  const uint64_t fit = budget / row_bytes;
  p.rows = static_cast<int64_t>(
      std::clamp<uint64_t>(fit, 1, static_cast<uint64_t>(p.total_rows)));
  return p;
}

// Calls f(b, p0, p1) for the images b that rows [r0, r1) of the column
// matrix cover, with the output positions [p0, p1) of image b among them
// (`positions` = OH * OW > 0 per image), in row order.
template <typename F>
void for_image_segments(int64_t r0, int64_t r1, int64_t positions, F&& f) {
  for (int64_t r = r0; r < r1;) {
    const int64_t b = r / positions, p0 = r - b * positions;
    const int64_t p1 = std::min(positions, p0 + (r1 - r));
    f(b, p0, p1);
    r += p1 - p0;
  }
}

}  // namespace xdev::cuda
