// The elementwise kernels every elementwise op shares (elementwise.cu,
// math.cu): one, two or three strided inputs, a contiguous output, a functor
// applied per element. Each has a contiguous fast path and a general path
// that splits the output index into coordinates, in 32-bit arithmetic when
// the layout allows (ElementwiseLayout::small). nvcc only.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "indexing.hpp"
#include "kernel_util.cuh"
#include "launch.hpp"

namespace xdev::cuda {

template <typename T, typename Out, typename Fn>
__global__ void binary_contiguous(int64_t count, const T* x, const T* y, Out* out, Fn fn) {
  for (int64_t i = first_index<int64_t>(); i < count; i += grid_stride<int64_t>()) {
    out[i] = fn(x[i], y[i]);
  }
}

template <typename T, typename Out, typename Fn, typename Index>
__global__ void binary_strided(ElementwiseLayout l, const T* x, const T* y, Out* out, Fn fn) {
  const Index count = static_cast<Index>(l.count);
  for (Index i = first_index<Index>(); i < count; i += grid_stride<Index>()) {
    Index off[2];
    input_offsets<Index, 2>(l, i, off);
    out[i] = fn(x[off[0]], y[off[1]]);
  }
}

template <typename In, typename Out, typename Fn>
__global__ void unary_contiguous(int64_t count, const In* __restrict__ x, Out* __restrict__ out,
                                 Fn fn) {
  for (int64_t i = first_index<int64_t>(); i < count; i += grid_stride<int64_t>()) {
    out[i] = fn(x[i]);
  }
}

template <typename In, typename Out, typename Fn, typename Index>
__global__ void unary_strided(ElementwiseLayout l, const In* __restrict__ x,
                              Out* __restrict__ out, Fn fn) {
  const Index count = static_cast<Index>(l.count);
  for (Index i = first_index<Index>(); i < count; i += grid_stride<Index>()) {
    Index off[1];
    input_offsets<Index, 1>(l, i, off);
    out[i] = fn(x[off[0]]);
  }
}

// ---------------------------------------------------------------------------
// Launch helpers

// out = fn(x, y) with x, y of type T and out of type Out (T by default).
template <typename T, typename Fn, typename Out = T>
cudaError_t run_binary(const ElementwiseLayout& l, const void* x, const void* y, void* out,
                       cudaStream_t stream, Fn fn) {
  const auto* a = static_cast<const T*>(x);
  const auto* b = static_cast<const T*>(y);
  auto* o = static_cast<Out*>(out);
  const unsigned grid = grid_for(l.count);
  if (l.contiguous[0] && l.contiguous[1]) {
    binary_contiguous<T, Out, Fn><<<grid, kThreads, 0, stream>>>(l.count, a, b, o, fn);
  } else if (l.small) {
    binary_strided<T, Out, Fn, int32_t><<<grid, kThreads, 0, stream>>>(l, a, b, o, fn);
  } else {
    binary_strided<T, Out, Fn, int64_t><<<grid, kThreads, 0, stream>>>(l, a, b, o, fn);
  }
  return cudaGetLastError();
}

template <typename In, typename Out, typename Fn>
cudaError_t run_unary(const ElementwiseLayout& l, const void* x, void* out, cudaStream_t stream,
                      Fn fn) {
  const auto* a = static_cast<const In*>(x);
  auto* o = static_cast<Out*>(out);
  const unsigned grid = grid_for(l.count);
  if (l.contiguous[0]) {
    unary_contiguous<In, Out, Fn><<<grid, kThreads, 0, stream>>>(l.count, a, o, fn);
  } else if (l.small) {
    unary_strided<In, Out, Fn, int32_t><<<grid, kThreads, 0, stream>>>(l, a, o, fn);
  } else {
    unary_strided<In, Out, Fn, int64_t><<<grid, kThreads, 0, stream>>>(l, a, o, fn);
  }
  return cudaGetLastError();
}

// Three inputs: out = fn(a, b, c), each of its own element type.
template <typename A, typename B, typename C, typename Out, typename Fn>
__global__ void ternary_contiguous(int64_t count, const A* a, const B* b, const C* c, Out* out,
                                   Fn fn) {
  for (int64_t i = first_index<int64_t>(); i < count; i += grid_stride<int64_t>()) {
    out[i] = fn(a[i], b[i], c[i]);
  }
}

template <typename A, typename B, typename C, typename Out, typename Fn, typename Index>
__global__ void ternary_strided(ElementwiseLayout l, const A* a, const B* b, const C* c, Out* out,
                                Fn fn) {
  const Index count = static_cast<Index>(l.count);
  for (Index i = first_index<Index>(); i < count; i += grid_stride<Index>()) {
    Index off[3];
    input_offsets<Index, 3>(l, i, off);
    out[i] = fn(a[off[0]], b[off[1]], c[off[2]]);
  }
}

template <typename A, typename B, typename C, typename Out, typename Fn>
cudaError_t run_ternary(const ElementwiseLayout& l, const void* a, const void* b, const void* c,
                        void* out, cudaStream_t stream, Fn fn) {
  const auto* pa = static_cast<const A*>(a);
  const auto* pb = static_cast<const B*>(b);
  const auto* pc = static_cast<const C*>(c);
  auto* o = static_cast<Out*>(out);
  const unsigned grid = grid_for(l.count);
  if (l.contiguous[0] && l.contiguous[1] && l.contiguous[2]) {
    ternary_contiguous<A, B, C, Out, Fn><<<grid, kThreads, 0, stream>>>(l.count, pa, pb, pc, o, fn);
  } else if (l.small) {
    ternary_strided<A, B, C, Out, Fn, int32_t><<<grid, kThreads, 0, stream>>>(l, pa, pb, pc, o, fn);
  } else {
    ternary_strided<A, B, C, Out, Fn, int64_t><<<grid, kThreads, 0, stream>>>(l, pa, pb, pc, o, fn);
  }
  return cudaGetLastError();
}

}  // namespace xdev::cuda
