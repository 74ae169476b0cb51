// The sliding-window kernels (docs/ops.md "Convolution and pooling"):
// MaxPool, AvgPool and their gradients, and the im2col / col2im halves of
// the convolutions (ops_window.cpp multiplies the columns with cuBLAS).
// Every kernel is a grid-stride loop in 64-bit index arithmetic over dense
// images (WindowLayout); reads stay inside the image (padding taps are
// skipped or read as 0). The gradients are gathers: each element of dx is
// one thread that sums what the windows over it send, in the cpu plugin's
// order (plugins/cpu/kernels/pool.cpp scatters window by window in
// row-major order; an element receives from the windows in that order), so
// the sums are deterministic and need no atomics.
#include <cuda_runtime.h>

#include <cstdint>

#include "indexing.hpp"
#include "kernel_util.cuh"
#include "launch.hpp"

namespace xdev::cuda {
namespace {

// The in-bounds taps of the pooling window (b, oy, ox) of an axis: [k0, k1)
// (window order; the pools have no dilation).
struct Taps {
  int64_t y0, x0, ky0, ky1, kx0, kx1;
  __device__ int64_t count() const {
    return (ky1 > ky0 ? ky1 - ky0 : 0) * (kx1 > kx0 ? kx1 - kx0 : 0);
  }
};

__device__ Taps pool_taps(const WindowLayout& g, int64_t oy, int64_t ox) {
  Taps t;
  t.y0 = oy * g.sy - g.py;
  t.x0 = ox * g.sx - g.px;
  t.ky0 = t.y0 < 0 ? -t.y0 : 0;
  t.ky1 = g.in.h - t.y0 < g.kh ? g.in.h - t.y0 : g.kh;
  t.kx0 = t.x0 < 0 ? -t.x0 : 0;
  t.kx1 = g.in.w - t.x0 < g.kw ? g.in.w - t.x0 : g.kw;
  return t;
}

// The offset of the window's first NaN, else of its first maximum (-1 for a
// window without taps inside the input, which SAME and VALID never give):
// the cpu plugin's window_max.
template <typename T>
__device__ int64_t window_max(const WindowLayout& g, const T* __restrict__ x, int64_t b,
                              int64_t oy, int64_t ox, int64_t ch) {
  const Taps t = pool_taps(g, oy, ox);
  int64_t best = -1;
  T best_value = T(0);
  for (int64_t ky = t.ky0; ky < t.ky1; ++ky) {
    for (int64_t kx = t.kx0; kx < t.kx1; ++kx) {
      const int64_t at = image_offset(g.in, b, t.y0 + ky, t.x0 + kx, ch);
      const T v = x[at];
      if (best < 0 || (!isnan(best_value) && (isnan(v) || v > best_value))) {
        best = at;
        best_value = v;
      }
    }
  }
  return best;
}

template <typename T, bool kMax>
__global__ void pool_kernel(WindowLayout g, const T* __restrict__ x, T* __restrict__ y,
                            int64_t count) {
  for (int64_t i = first_index<int64_t>(); i < count; i += grid_stride<int64_t>()) {
    int64_t b, oy, ox, ch;
    image_coordinates(g.out, i, &b, &oy, &ox, &ch);
    if constexpr (kMax) {
      const int64_t best = window_max(g, x, b, oy, ox, ch);
      y[i] = best < 0 ? T(-INFINITY) : x[best];
    } else {
      const Taps t = pool_taps(g, oy, ox);
      double sum = 0.0;
      for (int64_t ky = t.ky0; ky < t.ky1; ++ky) {
        for (int64_t kx = t.kx0; kx < t.kx1; ++kx) {
          sum += static_cast<double>(x[image_offset(g.in, b, t.y0 + ky, t.x0 + kx, ch)]);
        }
      }
      const int64_t n = t.count();
      y[i] = static_cast<T>(n > 0 ? sum / static_cast<double>(n) : NAN);
    }
  }
}

// dx for every element of the input image: kMax routes each window's dy to
// its first maximum of x, else (AvgPool) spreads dy / taps over the window.
template <typename T, bool kMax>
__global__ void pool_grad_kernel(WindowLayout g, const T* __restrict__ x,
                                 const T* __restrict__ dy, T* __restrict__ dx, int64_t count) {
  for (int64_t i = first_index<int64_t>(); i < count; i += grid_stride<int64_t>()) {
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
    dx[i] = sum;
  }
}

template <typename T>
__global__ void im2col_kernel(WindowLayout g, const T* __restrict__ x, int64_t r0, int64_t rows,
                              T* __restrict__ col) {
  const int64_t width = g.kh * g.kw * g.in.c;
  const int64_t positions = g.out.h * g.out.w;
  const int64_t count = rows * width;
  for (int64_t i = first_index<int64_t>(); i < count; i += grid_stride<int64_t>()) {
    const int64_t r = r0 + i / width, k = i % width;
    const int64_t ci = k % g.in.c, tap = k / g.in.c;
    const int64_t ky = tap / g.kw, kx = tap % g.kw;
    const int64_t b = r / positions, p = r % positions;
    const int64_t iy = (p / g.out.w) * g.sy - g.py + ky * g.dy;
    const int64_t ix = (p % g.out.w) * g.sx - g.px + kx * g.dx;
    const bool inside = iy >= 0 && iy < g.in.h && ix >= 0 && ix < g.in.w;
    col[i] = inside ? x[image_offset(g.in, b, iy, ix, ci)] : T(0);
  }
}

// Element i of images [b0, ...) of dx: the sum of its taps among rows [r0,
// r0 + rows), added to dx.
template <typename T>
__global__ void col2im_kernel(WindowLayout g, const T* __restrict__ col, int64_t r0,
                              int64_t rows, int64_t first, int64_t count, T* __restrict__ dx) {
  const int64_t width = g.kh * g.kw * g.in.c;
  const int64_t positions = g.out.h * g.out.w;
  for (int64_t j = first_index<int64_t>(); j < count; j += grid_stride<int64_t>()) {
    const int64_t i = first + j;
    int64_t b, iy, ix, ci;
    image_coordinates(g.in, i, &b, &iy, &ix, &ci);
    T sum = T(0);
    for (int64_t ky = 0; ky < g.kh; ++ky) {
      const int64_t ty = iy + g.py - ky * g.dy;  // oy * sy
      if (ty < 0 || ty % g.sy != 0 || ty / g.sy >= g.out.h) continue;
      for (int64_t kx = 0; kx < g.kw; ++kx) {
        const int64_t tx = ix + g.px - kx * g.dx;
        if (tx < 0 || tx % g.sx != 0 || tx / g.sx >= g.out.w) continue;
        const int64_t r = b * positions + (ty / g.sy) * g.out.w + tx / g.sx;
        if (r < r0 || r >= r0 + rows) continue;
        sum += col[(r - r0) * width + (ky * g.kw + kx) * g.in.c + ci];
      }
    }
    dx[i] += sum;
  }
}

int64_t image_elements(const ImageLayout& im) { return im.n * im.step_n; }

}  // namespace

cudaError_t launch_pool(bool max, xdev_dtype_t dtype, const WindowLayout& layout, const void* x,
                        void* y, cudaStream_t stream) {
  const int64_t count = image_elements(layout.out);
  if (count <= 0) return cudaSuccess;
  return visit_float_dtype(dtype, [&](auto zero) {
    using T = decltype(zero);
    const auto* in = static_cast<const T*>(x);
    auto* out = static_cast<T*>(y);
    if (max) {
      pool_kernel<T, true><<<grid_for(count), kThreads, 0, stream>>>(layout, in, out, count);
    } else {
      pool_kernel<T, false><<<grid_for(count), kThreads, 0, stream>>>(layout, in, out, count);
    }
    return cudaGetLastError();
  });
}

cudaError_t launch_max_pool_grad(xdev_dtype_t dtype, const WindowLayout& layout, const void* x,
                                 const void* dy, void* dx, cudaStream_t stream) {
  const int64_t count = image_elements(layout.in);
  if (count <= 0) return cudaSuccess;
  return visit_float_dtype(dtype, [&](auto zero) {
    using T = decltype(zero);
    pool_grad_kernel<T, true><<<grid_for(count), kThreads, 0, stream>>>(
        layout, static_cast<const T*>(x), static_cast<const T*>(dy), static_cast<T*>(dx), count);
    return cudaGetLastError();
  });
}

cudaError_t launch_avg_pool_grad(xdev_dtype_t dtype, const WindowLayout& layout, const void* dy,
                                 void* dx, cudaStream_t stream) {
  const int64_t count = image_elements(layout.in);
  if (count <= 0) return cudaSuccess;
  return visit_float_dtype(dtype, [&](auto zero) {
    using T = decltype(zero);
    pool_grad_kernel<T, false><<<grid_for(count), kThreads, 0, stream>>>(
        layout, nullptr, static_cast<const T*>(dy), static_cast<T*>(dx), count);
    return cudaGetLastError();
  });
}

cudaError_t launch_im2col(xdev_dtype_t dtype, const WindowLayout& layout, const void* x,
                          int64_t r0, int64_t rows, void* col, cudaStream_t stream) {
  const int64_t count = rows * layout.kh * layout.kw * layout.in.c;
  if (count <= 0) return cudaSuccess;
  return visit_float_dtype(dtype, [&](auto zero) {
    using T = decltype(zero);
    im2col_kernel<T><<<grid_for(count), kThreads, 0, stream>>>(
        layout, static_cast<const T*>(x), r0, rows, static_cast<T*>(col));
    return cudaGetLastError();
  });
}

cudaError_t launch_col2im(xdev_dtype_t dtype, const WindowLayout& layout, const void* col,
                          int64_t r0, int64_t rows, void* dx, cudaStream_t stream) {
  const int64_t positions = layout.out.h * layout.out.w;
  if (rows <= 0 || positions <= 0 || layout.in.step_n <= 0) return cudaSuccess;
  // The images rows [r0, r0 + rows) belong to.
  const int64_t b0 = r0 / positions, b1 = (r0 + rows - 1) / positions + 1;
  const int64_t first = b0 * layout.in.step_n, count = (b1 - b0) * layout.in.step_n;
  return visit_float_dtype(dtype, [&](auto zero) {
    using T = decltype(zero);
    col2im_kernel<T><<<grid_for(count), kThreads, 0, stream>>>(
        layout, static_cast<const T*>(col), r0, rows, first, count, static_cast<T*>(dx));
    return cudaGetLastError();
  });
}

}  // namespace xdev::cuda
