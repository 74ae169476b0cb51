// The sliding-window kernels (docs/ops.md "Convolution and pooling"):
// MaxPool, AvgPool and their gradients, the im2col / col2im halves of the
// convolutions (ops_window.cpp multiplies the columns with cuBLAS), and the
// convolutions directly (without scratch for the columns).
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

template <typename T, bool kMax>
__global__ void pool_kernel(WindowLayout g, const T* __restrict__ x, T* __restrict__ y,
                            int64_t count) {
  for (int64_t i = first_index<int64_t>(); i < count; i += grid_stride<int64_t>()) {
    y[i] = pool_element<T, kMax>(g, x, i);
  }
}

// dx for every element of the input image (pool_grad_element).
template <typename T, bool kMax>
__global__ void pool_grad_kernel(WindowLayout g, const T* __restrict__ x,
                                 const T* __restrict__ dy, T* __restrict__ dx, int64_t count) {
  for (int64_t i = first_index<int64_t>(); i < count; i += grid_stride<int64_t>()) {
    dx[i] = pool_grad_element<T, kMax>(g, x, dy, i);
  }
}

template <typename T>
__global__ void im2col_kernel(WindowLayout g, const T* __restrict__ x, int64_t r0, int64_t count,
                              T* __restrict__ col) {
  for (int64_t i = first_index<int64_t>(); i < count; i += grid_stride<int64_t>()) {
    col[i] = im2col_element(g, x, r0, i);
  }
}

// Elements [first, first + count) of dx: their sums of col rows [r0, r0 +
// rows) (col2im_element), added to dx.
template <typename T>
__global__ void col2im_kernel(WindowLayout g, const T* __restrict__ col, int64_t r0,
                              int64_t rows, int64_t first, int64_t count, T* __restrict__ dx) {
  for (int64_t j = first_index<int64_t>(); j < count; j += grid_stride<int64_t>()) {
    dx[first + j] += col2im_element(g, col, r0, rows, first + j);
  }
}

template <typename T, int kWhich>
__global__ void conv_direct_kernel(WindowLayout g, const T* __restrict__ a,
                                   const T* __restrict__ b, T* __restrict__ out, int64_t count) {
  for (int64_t i = first_index<int64_t>(); i < count; i += grid_stride<int64_t>()) {
    if constexpr (kWhich == kConvForward) {
      out[i] = conv_tap_sum<T, false>(g, a, b, i);
    } else if constexpr (kWhich == kConvInput) {
      out[i] = conv_tap_sum<T, true>(g, a, b, i);
    } else {
      out[i] = conv_filter_element(g, a, b, i);
    }
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
        layout, static_cast<const T*>(x), r0, count, static_cast<T*>(col));
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

cudaError_t launch_conv_direct(int which, xdev_dtype_t dtype, const WindowLayout& layout,
                               const void* a, const void* b, void* out, int64_t count,
                               cudaStream_t stream) {
  if (count <= 0) return cudaSuccess;
  return visit_float_dtype(dtype, [&](auto zero) {
    using T = decltype(zero);
    const auto* pa = static_cast<const T*>(a);
    const auto* pb = static_cast<const T*>(b);
    auto* po = static_cast<T*>(out);
    const unsigned grid = grid_for(count);
    if (which == kConvForward) {
      conv_direct_kernel<T, kConvForward><<<grid, kThreads, 0, stream>>>(layout, pa, pb, po, count);
    } else if (which == kConvInput) {
      conv_direct_kernel<T, kConvInput><<<grid, kThreads, 0, stream>>>(layout, pa, pb, po, count);
    } else {
      conv_direct_kernel<T, kConvFilter><<<grid, kThreads, 0, stream>>>(layout, pa, pb, po, count);
    }
    return cudaGetLastError();
  });
}

}  // namespace xdev::cuda
