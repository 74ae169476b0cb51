// Index arithmetic of the kernels: from a linear output index to element
// offsets of strided operands. Plain C++ that nvcc compiles for the device
// and the host compiler for the host, so tests check it without a GPU.
#pragma once

#include <cstdint>

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

}  // namespace xdev::cuda
