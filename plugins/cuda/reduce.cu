// Sum and Mean over axes (docs/ops.md). Floats accumulate in double,
// integers in 64-bit wrapping arithmetic. Results are deterministic: every
// reduction order is fixed by the plan (reduce_plan.hpp), no atomics.
//
// The plan picks one of four kernels: a thread per output, a warp per row
// (the reduced axis innermost), tiles of 32 columns (the kept axis
// innermost, reads coalesced across the warp), or a block per output for
// long rows. The last two split an output's inputs into chunks when there
// are too few outputs to fill the GPU: each chunk writes a partial to kernel
// scratch (from the core's pool) and a second kernel adds them in order.
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <type_traits>

#include "kernel_util.cuh"
#include "launch.hpp"
#include "reduce_plan.hpp"

namespace xdev::cuda {
namespace {

static_assert(kThreads == kReduceThreads, "reduce_plan.hpp plans for the kernels' block size");

template <typename T>
using Acc = WideAcc<T>;

// The output value of a sum over `count` elements.
template <typename T>
__device__ __forceinline__ T finish(Acc<T> acc, int64_t count, bool mean) {
  if constexpr (std::is_floating_point_v<T>) {
    // Mean over nothing is 0/0 = NaN.
    return static_cast<T>(mean ? acc / static_cast<double>(count) : acc);
  } else {
    // The sum wraps to the element type first, then divides toward zero.
    const T sum = static_cast<T>(static_cast<int64_t>(acc));
    if (!mean) return sum;
    return static_cast<T>(count == 0 ? 0 : static_cast<int64_t>(sum) / count);
  }
}

template <typename T, typename Index>
__global__ void reduce_thread_per_output(ReduceLayout l, const T* __restrict__ x,
                                         T* __restrict__ out, bool mean) {
  const Index outputs = static_cast<Index>(l.outer_count);
  const Index inputs = static_cast<Index>(l.inner_count);
  for (Index o = first_index<Index>(); o < outputs; o += grid_stride<Index>()) {
    const T* base = x + outer_offset<Index>(l, o);
    Acc<T> acc = 0;
    for (Index r = 0; r < inputs; ++r) acc += widen(base[inner_offset<Index>(l, r)]);
    out[o] = finish<T>(acc, l.inner_count, mean);
  }
}

// Sum of `value` over the block (kThreads threads), valid in thread 0. The
// order is fixed: the same inputs always give the same result.
template <typename A>
__device__ __forceinline__ A block_sum(A value) {
  __shared__ A warp_sums[kThreads / 32];
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2) {
    value += __shfl_down_sync(0xffffffffu, value, offset);
  }
  const int lane = static_cast<int>(threadIdx.x) % 32;
  const int warp = static_cast<int>(threadIdx.x) / 32;
  if (lane == 0) warp_sums[warp] = value;
  __syncthreads();
  if (warp == 0) {
    value = lane < kThreads / 32 ? warp_sums[lane] : A{0};
#pragma unroll
    for (int offset = 16; offset > 0; offset /= 2) {
      value += __shfl_down_sync(0xffffffffu, value, offset);
    }
  }
  return value;
}

// Block b reduces chunk (b % chunks) of output (b / chunks). With one chunk
// it writes the output; otherwise the partial goes to `partials[b]`.
template <typename T, typename Index>
__global__ void __launch_bounds__(kThreads)
    reduce_blocks(ReduceLayout l, const T* __restrict__ x, T* __restrict__ out,
                  Acc<T>* __restrict__ partials, int64_t chunks, int64_t chunk_length,
                  bool mean) {
  const int64_t block = blockIdx.x;
  const Index o = static_cast<Index>(block / chunks);
  const int64_t chunk = block % chunks;
  const Index begin = static_cast<Index>(chunk * chunk_length);
  const int64_t end64 = (chunk + 1) * chunk_length;
  const Index end = static_cast<Index>(end64 < l.inner_count ? end64 : l.inner_count);
  const T* base = x + outer_offset<Index>(l, o);
  Acc<T> acc = 0;
  for (Index r = begin + static_cast<Index>(threadIdx.x); r < end;
       r += static_cast<Index>(blockDim.x)) {
    acc += widen(base[inner_offset<Index>(l, r)]);
  }
  acc = block_sum(acc);
  if (threadIdx.x != 0) return;
  if (chunks == 1) {
    out[o] = finish<T>(acc, l.inner_count, mean);
  } else {
    partials[block] = acc;
  }
}

template <typename T>
__global__ void reduce_partials(const Acc<T>* __restrict__ partials, T* __restrict__ out,
                                int64_t outputs, int64_t chunks, int64_t count, bool mean) {
  for (int64_t o = first_index<int64_t>(); o < outputs; o += grid_stride<int64_t>()) {
    Acc<T> acc = 0;
    for (int64_t c = 0; c < chunks; ++c) acc += partials[o * chunks + c];
    out[o] = finish<T>(acc, count, mean);
  }
}

// One warp per output row: lane k reads inputs k, k + 32, ... (consecutive
// across the warp when the reduced axis is innermost), then a fixed
// shuffle tree. Every lane of a warp walks the same rows, so the full-mask
// shuffles are safe.
template <typename T, typename Index>
__global__ void __launch_bounds__(kThreads)
    reduce_warp_per_row(ReduceLayout l, const T* __restrict__ x, T* __restrict__ out,
                        bool mean) {
  const int lane = static_cast<int>(threadIdx.x) % 32;
  const int64_t first = static_cast<int64_t>(blockIdx.x) * kReduceWarps + threadIdx.x / 32;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * kReduceWarps;
  const Index inputs = static_cast<Index>(l.inner_count);
  for (int64_t o = first; o < l.outer_count; o += stride) {
    const T* base = x + outer_offset<Index>(l, static_cast<Index>(o));
    Acc<T> acc = 0;
    for (Index r = static_cast<Index>(lane); r < inputs; r += 32) {
      acc += widen(base[inner_offset<Index>(l, r)]);
    }
#pragma unroll
    for (int offset = 16; offset > 0; offset /= 2) {
      acc += __shfl_down_sync(0xffffffffu, acc, offset);
    }
    if (lane == 0) out[o] = finish<T>(acc, l.inner_count, mean);
  }
}

// Tiles of 32 neighbouring outputs (the kept axis innermost): lane k of
// every warp owns output 32 * blockIdx.x + k, warp w reads input rows
// begin + w, begin + w + 8, ... of chunk blockIdx.y, so each read of a warp
// is 32 consecutive elements. The 8 warps' sums meet in shared memory and
// are added in warp order.
template <typename T, typename Index>
__global__ void __launch_bounds__(kThreads)
    reduce_column_tiles(ReduceLayout l, const T* __restrict__ x, T* __restrict__ out,
                        Acc<T>* __restrict__ partials, int64_t chunks, int64_t chunk_length,
                        bool mean) {
  __shared__ Acc<T> tile[kReduceWarps][33];  // padded: no bank conflicts
  const int lane = static_cast<int>(threadIdx.x) % 32;
  const int warp = static_cast<int>(threadIdx.x) / 32;
  const int64_t o = static_cast<int64_t>(blockIdx.x) * 32 + lane;
  const int64_t chunk = blockIdx.y;
  const bool active = o < l.outer_count;
  Acc<T> acc = 0;
  if (active) {
    const T* base = x + outer_offset<Index>(l, static_cast<Index>(o));
    const int64_t begin = chunk * chunk_length;
    const int64_t end64 = begin + chunk_length < l.inner_count ? begin + chunk_length
                                                              : l.inner_count;
    const Index end = static_cast<Index>(end64);
    for (Index r = static_cast<Index>(begin + warp); r < end; r += kReduceWarps) {
      acc += widen(base[inner_offset<Index>(l, r)]);
    }
  }
  tile[warp][lane] = acc;
  __syncthreads();
  if (warp != 0 || !active) return;
  Acc<T> sum = 0;
#pragma unroll
  for (int w = 0; w < kReduceWarps; ++w) sum += tile[w][lane];
  if (chunks == 1) {
    out[o] = finish<T>(sum, l.inner_count, mean);
  } else {
    partials[o * chunks + chunk] = sum;
  }
}

template <typename T, typename Index>
cudaError_t reduce_typed(bool mean, const ReduceLayout& l, const void* x, void* out,
                         void* scratch, size_t scratch_bytes, int multiprocessors,
                         cudaStream_t stream) {
  const auto* in = static_cast<const T*>(x);
  auto* o = static_cast<T*>(out);
  auto* partials = static_cast<Acc<T>*>(scratch);
  const ReducePlan plan =
      plan_reduce(l, sizeof(Acc<T>), multiprocessors, scratch != nullptr ? scratch_bytes : 0);
  const int64_t outputs = l.outer_count;
  switch (plan.strategy) {
    case ReduceStrategy::kThreadPerOutput:
      reduce_thread_per_output<T, Index>
          <<<grid_for(outputs), kThreads, 0, stream>>>(l, in, o, mean);
      return cudaGetLastError();
    case ReduceStrategy::kWarpPerRow:
      reduce_warp_per_row<T, Index>
          <<<grid_for(outputs, kReduceWarps), kThreads, 0, stream>>>(l, in, o, mean);
      return cudaGetLastError();
    case ReduceStrategy::kColumnTiles: {
      if (plan.blocks > 0x7FFFFFFF) return cudaErrorInvalidConfiguration;
      const dim3 grid(static_cast<unsigned>(plan.blocks), static_cast<unsigned>(plan.chunks));
      reduce_column_tiles<T, Index><<<grid, kThreads, 0, stream>>>(
          l, in, o, partials, plan.chunks, plan.chunk_length, mean);
      break;
    }
    case ReduceStrategy::kBlocks:
      if (plan.blocks > 0x7FFFFFFF) return cudaErrorInvalidConfiguration;
      reduce_blocks<T, Index><<<static_cast<unsigned>(plan.blocks), kThreads, 0, stream>>>(
          l, in, o, partials, plan.chunks, plan.chunk_length, mean);
      break;
  }
  if (const cudaError_t e = cudaGetLastError(); e != cudaSuccess) return e;
  if (plan.chunks > 1) {
    reduce_partials<T><<<grid_for(outputs), kThreads, 0, stream>>>(
        partials, o, outputs, plan.chunks, l.inner_count, mean);
    return cudaGetLastError();
  }
  return cudaSuccess;
}

template <typename T>
cudaError_t reduce_dispatch(bool mean, const ReduceLayout& l, const void* x, void* out,
                            void* scratch, size_t scratch_bytes, int multiprocessors,
                            cudaStream_t stream) {
  if (l.small) {
    return reduce_typed<T, int32_t>(mean, l, x, out, scratch, scratch_bytes, multiprocessors,
                                    stream);
  }
  return reduce_typed<T, int64_t>(mean, l, x, out, scratch, scratch_bytes, multiprocessors,
                                  stream);
}

}  // namespace

size_t reduce_scratch_bytes(xdev_dtype_t dtype, const ReduceLayout& layout,
                            int multiprocessors) {
  const size_t acc = dtype == XDEV_DTYPE_FLOAT32 || dtype == XDEV_DTYPE_FLOAT64 ? sizeof(double)
                                                                                : sizeof(uint64_t);
  return plan_reduce(layout, acc, multiprocessors, SIZE_MAX).scratch_bytes;
}

cudaError_t launch_reduce(bool mean, xdev_dtype_t dtype, const ReduceLayout& layout,
                          const void* x, void* out, void* scratch, size_t scratch_bytes,
                          int multiprocessors, cudaStream_t stream) {
  if (layout.outer_count <= 0) return cudaSuccess;
  return visit_number_dtype(dtype, [&](auto zero) {
    return reduce_dispatch<decltype(zero)>(mean, layout, x, out, scratch, scratch_bytes,
                                           multiprocessors, stream);
  });
}

}  // namespace xdev::cuda
