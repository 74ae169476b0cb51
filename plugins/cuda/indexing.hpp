// Index arithmetic of the kernels: from a linear output index to element
// offsets of strided operands. Plain C++ that nvcc compiles for the device
// and the host compiler for the host, so tests check it without a GPU.
#pragma once

#include <cstdint>
#include <limits>

#include "launch.hpp"

#if defined(__CUDACC__)
#define XDEV_CUDA_HD __host__ __device__ __forceinline__
#else
#define XDEV_CUDA_HD inline
#endif

namespace xdev::cuda {

// Element offset of each of the first N inputs for the output's linear
// index `i` (row-major): the index is split into coordinates from the
// innermost axis out. Index is int32_t when the layout is `small`, else
// int64_t.
template <typename Index, int N>
XDEV_CUDA_HD void input_offsets(const ElementwiseLayout& l, Index i, Index (&off)[N]) {
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
  for (int n = 0; n < N; ++n) off[n] = 0;
  if (l.rank == 1) {
    for (int n = 0; n < N; ++n) off[n] = i * static_cast<Index>(l.strides[n][0]);
    return;
  }
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
  for (int d = kMaxRank - 1; d >= 0; --d) {
    if (d < l.rank) {
      const Index dim = static_cast<Index>(l.shape[d]);
      const Index coordinate = i % dim;
      i /= dim;
      for (int n = 0; n < N; ++n) off[n] += coordinate * static_cast<Index>(l.strides[n][d]);
    }
  }
}

// Offset of output element `i` (kept axes) and of reduced element `r`
// within it, for a ReduceLayout.
template <typename Index>
XDEV_CUDA_HD Index outer_offset(const ReduceLayout& l, Index i) {
  if (l.outer_rank == 1) return i * static_cast<Index>(l.outer_strides[0]);
  Index off = 0;
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
  for (int d = kMaxRank - 1; d >= 0; --d) {
    if (d < l.outer_rank) {
      const Index dim = static_cast<Index>(l.outer_shape[d]);
      off += (i % dim) * static_cast<Index>(l.outer_strides[d]);
      i /= dim;
    }
  }
  return off;
}

template <typename Index>
XDEV_CUDA_HD Index inner_offset(const ReduceLayout& l, Index i) {
  if (l.inner_rank == 1) return i * static_cast<Index>(l.inner_strides[0]);
  Index off = 0;
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
  for (int d = kMaxRank - 1; d >= 0; --d) {
    if (d < l.inner_rank) {
      const Index dim = static_cast<Index>(l.inner_shape[d]);
      off += (i % dim) * static_cast<Index>(l.inner_strides[d]);
      i /= dim;
    }
  }
  return off;
}

// Output element i of an IndexMapLayout: the input's element offset in
// *offset (any sign: strides may be negative), or false where PadV2 pads
// (kTile: coordinates wrap modulo the input's shape, never false).
template <bool kTile>
XDEV_CUDA_HD bool mapped_offset(const IndexMapLayout& l, int64_t i, int64_t* offset) {
  int64_t off = 0;
  for (int d = kMaxRank - 1; d >= 0; --d) {
    if (d >= l.rank) continue;
    const int64_t c = i % l.out_shape[d];
    i /= l.out_shape[d];
    if constexpr (kTile) {
      off += (c % l.in_shape[d]) * l.in_strides[d];
    } else {
      const int64_t k = c - l.before[d];
      if (k < 0 || k >= l.in_shape[d]) return false;
      off += k * l.in_strides[d];
    }
  }
  *offset = off;
  return true;
}

// The element offset of (b, y, x, ch) in an ImageLayout.
XDEV_CUDA_HD int64_t image_offset(const ImageLayout& im, int64_t b, int64_t y, int64_t x,
                                  int64_t ch) {
  return b * im.step_n + y * im.step_h + x * im.step_w + ch * im.step_c;
}

// The coordinates (b, y, x, ch) of element offset `i` of a dense image
// (image_offset's inverse).
XDEV_CUDA_HD void image_coordinates(const ImageLayout& im, int64_t i, int64_t* b, int64_t* y,
                                    int64_t* x, int64_t* ch) {
  *b = i / im.step_n;
  i -= *b * im.step_n;
  if (!im.nchw) {
    *y = i / im.step_h;
    i -= *y * im.step_h;
    *x = i / im.step_w;
    *ch = i - *x * im.step_w;
  } else {
    *ch = i / im.step_c;
    i -= *ch * im.step_c;
    *y = i / im.step_h;
    *x = i - *y * im.step_h;
  }
}

// The window positions o whose taps o * stride - pad + t (t in [0, size))
// cover element `at` of an axis (no dilation: the pools), clamped to [0,
// out): [*first, *last], empty when *first > *last.
XDEV_CUDA_HD void covering_windows(int64_t at, int64_t size, int64_t stride, int64_t pad,
                                   int64_t out, int64_t* first, int64_t* last) {
  const int64_t hi = at + pad;             // o * stride <= hi (>= 0)
  const int64_t lo = hi - size + 1;        // o * stride >= lo
  const int64_t f = lo <= 0 ? 0 : (lo + stride - 1) / stride;
  const int64_t l = hi / stride;
  *first = f;
  *last = l < out - 1 ? l : out - 1;
}

// The convolutions' taps: tap (ky, kx) of window (oy, ox) reads input
// element (*iy, *ix) (outside the image: padding, read as 0) ...
XDEV_CUDA_HD void tap_input(const WindowLayout& g, int64_t oy, int64_t ox, int64_t ky,
                            int64_t kx, int64_t* iy, int64_t* ix) {
  *iy = oy * g.sy - g.py + ky * g.dy;
  *ix = ox * g.sx - g.px + kx * g.dx;
}

// ... and, the other way round, input element (iy, ix) is read by tap (ky,
// kx) of window (*oy, *ox), or by no window (false): col2im's inverse of
// tap_input.
XDEV_CUDA_HD bool tap_window(const WindowLayout& g, int64_t iy, int64_t ix, int64_t ky,
                             int64_t kx, int64_t* oy, int64_t* ox) {
  const int64_t ty = iy + g.py - ky * g.dy, tx = ix + g.px - kx * g.dx;  // oy * sy, ox * sx
  if (ty < 0 || tx < 0 || ty % g.sy != 0 || tx % g.sx != 0) return false;
  *oy = ty / g.sy;
  *ox = tx / g.sx;
  return *oy < g.out.h && *ox < g.out.w;
}

// The in-bounds taps of pooling window (oy, ox): rows [ky0, ky1) and
// columns [kx0, kx1) of the window, whose tap (0, 0) is input element (y0,
// x0) (the pools have no dilation).
struct PoolTaps {
  int64_t y0, x0, ky0, ky1, kx0, kx1;
  XDEV_CUDA_HD int64_t count() const {
    return (ky1 > ky0 ? ky1 - ky0 : 0) * (kx1 > kx0 ? kx1 - kx0 : 0);
  }
};

XDEV_CUDA_HD PoolTaps pool_taps(const WindowLayout& g, int64_t oy, int64_t ox) {
  PoolTaps t;
  t.y0 = oy * g.sy - g.py;
  t.x0 = ox * g.sx - g.px;
  t.ky0 = t.y0 < 0 ? -t.y0 : 0;
  t.ky1 = g.in.h - t.y0 < g.kh ? g.in.h - t.y0 : g.kh;
  t.kx0 = t.x0 < 0 ? -t.x0 : 0;
  t.kx1 = g.in.w - t.x0 < g.kw ? g.in.w - t.x0 : g.kw;
  return t;
}

// The offset in x (`in`) of pooling window (b, oy, ox, ch)'s first NaN,
// else of its first maximum, in row-major window order (-1 for a window
// without taps inside the input, which SAME and VALID never give): the cpu
// plugin's window_max. `v != v` is the NaN test on host and device alike.
template <typename T>
XDEV_CUDA_HD int64_t window_max(const WindowLayout& g, const T* x, int64_t b, int64_t oy,
                                int64_t ox, int64_t ch) {
  const PoolTaps t = pool_taps(g, oy, ox);
  int64_t best = -1;
  T best_value = T(0);
  for (int64_t ky = t.ky0; ky < t.ky1; ++ky) {
    for (int64_t kx = t.kx0; kx < t.kx1; ++kx) {
      const int64_t at = image_offset(g.in, b, t.y0 + ky, t.x0 + kx, ch);
      const T v = x[at];
      if (best < 0 || (best_value == best_value && (v != v || v > best_value))) {
        best = at;
        best_value = v;
      }
    }
  }
  return best;
}

// Element i of the pooled image (`out`): kMax, the window's first NaN or
// first maximum (-inf for a window without taps, which SAME and VALID never
// give); else the mean of its in-bounds taps, summed in double in window
// order (NaN without taps). The cpu plugin's loops, term for term.
template <typename T, bool kMax>
XDEV_CUDA_HD T pool_element(const WindowLayout& g, const T* x, int64_t i) {
  int64_t b, oy, ox, ch;
  image_coordinates(g.out, i, &b, &oy, &ox, &ch);
  if constexpr (kMax) {
    const int64_t best = window_max(g, x, b, oy, ox, ch);
    return best < 0 ? -std::numeric_limits<T>::infinity() : x[best];
  } else {
    const PoolTaps t = pool_taps(g, oy, ox);
    double sum = 0.0;
    for (int64_t ky = t.ky0; ky < t.ky1; ++ky) {
      for (int64_t kx = t.kx0; kx < t.kx1; ++kx) {
        sum += static_cast<double>(x[image_offset(g.in, b, t.y0 + ky, t.x0 + kx, ch)]);
      }
    }
    const int64_t n = t.count();
    return static_cast<T>(n > 0 ? sum / static_cast<double>(n)
                                : std::numeric_limits<double>::quiet_NaN());
  }
}

// The pools' gradients as gathers (window.cu runs one per element of dx):
// element i of dx (`in`) is the sum, in the windows' row-major order and
// from T(0), of what each window over it sends: kMax, dy when i is the
// window's first maximum of x; else dy / the window's in-bounds taps,
// divided in double and rounded to T. The cpu plugin scatters window by
// window in that order, so both add the same terms in the same order.
template <typename T, bool kMax>
XDEV_CUDA_HD T pool_grad_element(const WindowLayout& g, const T* x, const T* dy, int64_t i) {
  int64_t b, iy, ix, ch;
  image_coordinates(g.in, i, &b, &iy, &ix, &ch);
  int64_t oy0, oy1, ox0, ox1;
  covering_windows(iy, g.kh, g.sy, g.py, g.out.h, &oy0, &oy1);
  covering_windows(ix, g.kw, g.sx, g.px, g.out.w, &ox0, &ox1);
  T sum = T(0);
  for (int64_t oy = oy0; oy <= oy1; ++oy) {
    for (int64_t ox = ox0; ox <= ox1; ++ox) {
      const T grad = dy[image_offset(g.out, b, oy, ox, ch)];
      if constexpr (kMax) {
        if (window_max(g, x, b, oy, ox, ch) == i) sum += grad;
      } else {
        const int64_t n = pool_taps(g, oy, ox).count();
        sum += static_cast<T>(static_cast<double>(grad) / static_cast<double>(n));
      }
    }
  }
  return sum;
}

// Element i of the column matrix rows [r0, ...) of x (`in`): row r0 + i /
// width is output position p of image b, column (ky * KW + kx) * Cin + ci;
// padding gives 0.
template <typename T>
XDEV_CUDA_HD T im2col_element(const WindowLayout& g, const T* x, int64_t r0, int64_t i) {
  const int64_t width = g.kh * g.kw * g.in.c, positions = g.out.h * g.out.w;
  const int64_t r = r0 + i / width, k = i % width;
  const int64_t ci = k % g.in.c, tap = k / g.in.c;
  const int64_t b = r / positions, p = r % positions;
  int64_t iy, ix;
  tap_input(g, p / g.out.w, p % g.out.w, tap / g.kw, tap % g.kw, &iy, &ix);
  const bool inside = iy >= 0 && iy < g.in.h && ix >= 0 && ix < g.in.w;
  return inside ? x[image_offset(g.in, b, iy, ix, ci)] : T(0);
}

// col2im for element i of dx (`in`): the sum of the entries of col (rows
// [r0, r0 + rows)) taken from it, in tap order (ky, kx).
template <typename T>
XDEV_CUDA_HD T col2im_element(const WindowLayout& g, const T* col, int64_t r0, int64_t rows,
                              int64_t i) {
  const int64_t width = g.kh * g.kw * g.in.c, positions = g.out.h * g.out.w;
  int64_t b, iy, ix, ci;
  image_coordinates(g.in, i, &b, &iy, &ix, &ci);
  T sum = T(0);
  for (int64_t ky = 0; ky < g.kh; ++ky) {
    for (int64_t kx = 0; kx < g.kw; ++kx) {
      int64_t oy, ox;
      if (!tap_window(g, iy, ix, ky, kx, &oy, &ox)) continue;
      const int64_t r = b * positions + oy * g.out.w + ox;
      if (r < r0 || r >= r0 + rows) continue;
      sum += col[(r - r0) * width + (ky * g.kw + kx) * g.in.c + ci];
    }
  }
  return sum;
}

// The convolutions without a column matrix (ops_window.cpp runs them when
// the core offers no scratch for one): one element of the result each, its
// terms summed in double in a fixed order. f is the filter [KH, KW, Cin,
// Cout], row-major.

XDEV_CUDA_HD int64_t filter_offset(const WindowLayout& g, int64_t ky, int64_t kx, int64_t ci,
                                   int64_t co) {
  return ((ky * g.kw + kx) * g.in.c + ci) * g.out.c + co;
}

// Conv2D (kInput false): element i of y (`out`), Σ over the taps inside x
// and Cin of x · f; Conv2DBackpropInput (kInput true): element i of dx
// (`in`), Σ over the windows that read it and Cout of dy · f. `a` is x or
// dy, the image on the other side of the taps.
template <typename T, bool kInput>
XDEV_CUDA_HD T conv_tap_sum(const WindowLayout& g, const T* a, const T* f, int64_t i) {
  const ImageLayout& own = kInput ? g.in : g.out;
  const ImageLayout& other = kInput ? g.out : g.in;
  int64_t b, y, x, ch;
  image_coordinates(own, i, &b, &y, &x, &ch);
  double sum = 0.0;
  for (int64_t ky = 0; ky < g.kh; ++ky) {
    for (int64_t kx = 0; kx < g.kw; ++kx) {
      int64_t p, q;  // the other image's row and column
      if constexpr (kInput) {
        if (!tap_window(g, y, x, ky, kx, &p, &q)) continue;
      } else {
        tap_input(g, y, x, ky, kx, &p, &q);
        if (p < 0 || p >= g.in.h || q < 0 || q >= g.in.w) continue;
      }
      for (int64_t c = 0; c < other.c; ++c) {
        const int64_t w =
            kInput ? filter_offset(g, ky, kx, ch, c) : filter_offset(g, ky, kx, c, ch);
        sum += static_cast<double>(a[image_offset(other, b, p, q, c)]) * static_cast<double>(f[w]);
      }
    }
  }
  return static_cast<T>(sum);
}

// Conv2DBackpropFilter: element i of df ([KH, KW, Cin, Cout]), Σ over the
// images and output positions of x · dy.
template <typename T>
XDEV_CUDA_HD T conv_filter_element(const WindowLayout& g, const T* x, const T* dy, int64_t i) {
  const int64_t co = i % g.out.c, k = i / g.out.c;
  const int64_t ci = k % g.in.c, tap = k / g.in.c;
  const int64_t ky = tap / g.kw, kx = tap % g.kw;
  double sum = 0.0;
  for (int64_t b = 0; b < g.out.n; ++b) {
    for (int64_t oy = 0; oy < g.out.h; ++oy) {
      for (int64_t ox = 0; ox < g.out.w; ++ox) {
        int64_t iy, ix;
        tap_input(g, oy, ox, ky, kx, &iy, &ix);
        if (iy < 0 || iy >= g.in.h || ix < 0 || ix >= g.in.w) continue;
        sum += static_cast<double>(x[image_offset(g.in, b, iy, ix, ci)]) *
               static_cast<double>(dy[image_offset(g.out, b, oy, ox, co)]);
      }
    }
  }
  return static_cast<T>(sum);
}

}  // namespace xdev::cuda
