// Data movement (docs/ops.md "Data movement"): ConcatV2 and Pack (strided
// copies of each input into its region of the output), PadV2, Tile,
// GatherV2, and the index-made tensors Range and OneHot. Values are copied
// bit for bit as unsigned words of the element's size, so NaN payloads and
// -0 survive and one kernel serves every dtype of that size (Range converts
// its values like Cast). Every kernel is a grid-stride loop over output (or
// input) elements in 64-bit index arithmetic.
#include <cuda_runtime.h>

#include <cstdint>

#include "indexing.hpp"
#include "kernel_util.cuh"
#include "launch.hpp"

namespace xdev::cuda {
namespace {

// Calls f(W{}) with W the unsigned word of `element_size` bytes.
template <typename F>
cudaError_t visit_word(size_t element_size, F&& f) {
  switch (element_size) {
    case 1: return f(uint8_t{});
    case 2: return f(uint16_t{});
    case 4: return f(uint32_t{});
    case 8: return f(uint64_t{});
    default: return cudaErrorNotSupported;
  }
}

template <typename W>
__global__ void copy_to_view_kernel(ElementwiseLayout l, const W* __restrict__ x,
                                    W* __restrict__ out) {
  for (int64_t i = first_index<int64_t>(); i < l.count; i += grid_stride<int64_t>()) {
    int64_t off[2];
    input_offsets<int64_t, 2>(l, i, off);
    out[off[1]] = x[off[0]];
  }
}

template <typename W, bool kTile>
__global__ void index_map_kernel(IndexMapLayout l, W pad, const W* __restrict__ x,
                                 W* __restrict__ out) {
  for (int64_t i = first_index<int64_t>(); i < l.count; i += grid_stride<int64_t>()) {
    int64_t off = 0;
    out[i] = mapped_offset<kTile>(l, i, &off) ? x[off] : pad;
  }
}

template <typename W, typename I>
__global__ void gather_kernel(int64_t outer, int64_t n, int64_t count, int64_t inner,
                              const W* __restrict__ params, const I* __restrict__ indices,
                              W* __restrict__ out) {
  const int64_t total = outer * count * inner;
  for (int64_t i = first_index<int64_t>(); i < total; i += grid_stride<int64_t>()) {
    const int64_t k = i % inner;
    const int64_t rest = i / inner;
    const int64_t j = rest % count;
    const int64_t o = rest / count;
    const int64_t index = static_cast<int64_t>(indices[j]);
    // Checked on the host before the launch; never read out of bounds.
    out[i] = (index < 0 || index >= n) ? W{0} : params[(o * n + index) * inner + k];
  }
}

// start + i * delta with each operation rounded (no FMA: the cpu plugin
// computes the product and the sum apart), converted as Cast converts.
template <typename T>
__global__ void range_kernel(double start, double delta, T* __restrict__ out, int64_t count) {
  for (int64_t i = first_index<int64_t>(); i < count; i += grid_stride<int64_t>()) {
    out[i] = static_cast<T>(__dadd_rn(start, __dmul_rn(static_cast<double>(i), delta)));
  }
}

template <typename W, typename I>
__global__ void one_hot_kernel(int64_t depth, int64_t inner, int64_t count,
                               const I* __restrict__ indices, W on, W off, W* __restrict__ out) {
  for (int64_t j = first_index<int64_t>(); j < count; j += grid_stride<int64_t>()) {
    const int64_t i = j % inner, rest = j / inner;
    const int64_t index = static_cast<int64_t>(indices[rest / depth * inner + i]);
    out[j] = index == rest % depth ? on : off;
  }
}

template <bool kTile>
cudaError_t run_index_map(size_t element_size, const IndexMapLayout& l, uint64_t pattern,
                          const void* x, void* out, cudaStream_t stream) {
  if (l.count <= 0) return cudaSuccess;
  return visit_word(element_size, [&](auto zero) {
    using W = decltype(zero);
    index_map_kernel<W, kTile><<<grid_for(l.count), kThreads, 0, stream>>>(
        l, static_cast<W>(pattern), static_cast<const W*>(x), static_cast<W*>(out));
    return cudaGetLastError();
  });
}

}  // namespace

cudaError_t launch_copy_to_view(size_t element_size, const ElementwiseLayout& layout,
                                const void* x, void* out, cudaStream_t stream) {
  if (layout.count <= 0) return cudaSuccess;
  return visit_word(element_size, [&](auto zero) {
    using W = decltype(zero);
    copy_to_view_kernel<W><<<grid_for(layout.count), kThreads, 0, stream>>>(
        layout, static_cast<const W*>(x), static_cast<W*>(out));
    return cudaGetLastError();
  });
}

cudaError_t launch_tile(size_t element_size, const IndexMapLayout& layout, const void* x,
                        void* out, cudaStream_t stream) {
  return run_index_map<true>(element_size, layout, 0, x, out, stream);
}

cudaError_t launch_pad(size_t element_size, const IndexMapLayout& layout, uint64_t pattern,
                       const void* x, void* out, cudaStream_t stream) {
  return run_index_map<false>(element_size, layout, pattern, x, out, stream);
}

cudaError_t launch_gather(size_t element_size, xdev_dtype_t index_dtype, int64_t outer, int64_t n,
                          int64_t count, int64_t inner, const void* params, const void* indices,
                          void* out, cudaStream_t stream) {
  const int64_t total = outer * count * inner;
  if (total <= 0) return cudaSuccess;
  return visit_word(element_size, [&](auto zero) -> cudaError_t {
    using W = decltype(zero);
    const unsigned grid = grid_for(total);
    const auto* p = static_cast<const W*>(params);
    auto* o = static_cast<W*>(out);
    if (index_dtype == XDEV_DTYPE_INT32) {
      gather_kernel<W, int32_t><<<grid, kThreads, 0, stream>>>(
          outer, n, count, inner, p, static_cast<const int32_t*>(indices), o);
    } else if (index_dtype == XDEV_DTYPE_INT64) {
      gather_kernel<W, int64_t><<<grid, kThreads, 0, stream>>>(
          outer, n, count, inner, p, static_cast<const int64_t*>(indices), o);
    } else {
      return cudaErrorNotSupported;
    }
    return cudaGetLastError();
  });
}

cudaError_t launch_range(xdev_dtype_t dtype, double start, double delta, void* out,
                         int64_t count, cudaStream_t stream) {
  if (count <= 0) return cudaSuccess;
  return visit_number_dtype(dtype, [&](auto zero) {
    using T = decltype(zero);
    range_kernel<T><<<grid_for(count), kThreads, 0, stream>>>(start, delta, static_cast<T*>(out),
                                                              count);
    return cudaGetLastError();
  });
}

cudaError_t launch_one_hot(size_t element_size, xdev_dtype_t index_dtype, int64_t depth,
                           int64_t inner, int64_t count, const void* indices, uint64_t on,
                           uint64_t off, void* out, cudaStream_t stream) {
  if (count <= 0) return cudaSuccess;
  return visit_word(element_size, [&](auto zero) -> cudaError_t {
    using W = decltype(zero);
    const unsigned grid = grid_for(count);
    const W on_w = static_cast<W>(on), off_w = static_cast<W>(off);
    if (index_dtype == XDEV_DTYPE_INT32) {
      one_hot_kernel<W, int32_t><<<grid, kThreads, 0, stream>>>(
          depth, inner, count, static_cast<const int32_t*>(indices), on_w, off_w,
          static_cast<W*>(out));
    } else if (index_dtype == XDEV_DTYPE_INT64) {
      one_hot_kernel<W, int64_t><<<grid, kThreads, 0, stream>>>(
          depth, inner, count, static_cast<const int64_t*>(indices), on_w, off_w,
          static_cast<W*>(out));
    } else {
      return cudaErrorNotSupported;
    }
    return cudaGetLastError();
  });
}

}  // namespace xdev::cuda
