// Sum and Mean over axes (docs/ops.md). Floats accumulate in double,
// integers in 64-bit wrapping arithmetic. Results are deterministic: every
// reduction order is fixed by the launch configuration, no atomics.
//
// Three shapes of work:
//  - one thread per output element, looping over its inputs (many outputs,
//    or few inputs each; coalesced when the kept axes are innermost);
//  - one block per output element (long rows), with a fixed tree inside the
//    block;
//  - several blocks per output element when there are too few outputs to
//    fill the GPU: each writes a partial to per-stream scratch memory and a
//    second kernel adds the partials in order.
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <type_traits>

#include "kernel_util.cuh"
#include "launch.hpp"

namespace xdev::cuda {
namespace {

template <typename T>
using Acc = std::conditional_t<std::is_floating_point_v<T>, double, uint64_t>;

template <typename T>
__device__ __forceinline__ Acc<T> widen(T x) {
  if constexpr (std::is_floating_point_v<T>) {
    return static_cast<double>(x);
  } else {
    return static_cast<uint64_t>(static_cast<int64_t>(x));
  }
}

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

template <typename T, typename Index>
cudaError_t reduce_typed(bool mean, const ReduceLayout& l, const void* x, void* out,
                         void* scratch, size_t scratch_bytes, int multiprocessors,
                         cudaStream_t stream) {
  const auto* in = static_cast<const T*>(x);
  auto* o = static_cast<T*>(out);
  const int64_t outputs = l.outer_count;
  const int64_t inputs = l.inner_count;
  const int64_t sms = multiprocessors > 0 ? multiprocessors : 1;
  // Does a block read consecutive elements (the reduced axes innermost)?
  const bool rows = l.inner_rank >= 1 && l.inner_strides[l.inner_rank - 1] == 1 &&
                    l.inner_shape[l.inner_rank - 1] >= 32;
  const bool many_outputs = outputs >= sms * kThreads * 2;
  if (inputs <= 32 || (!rows && many_outputs)) {
    reduce_thread_per_output<T, Index>
        <<<grid_for(outputs), kThreads, 0, stream>>>(l, in, o, mean);
    return cudaGetLastError();
  }
  // Blocks per output: enough blocks to fill the GPU about 4 times, each
  // with at least 4 elements per thread, within the scratch memory.
  int64_t chunks = 1;
  const int64_t target_blocks = sms * 4;
  if (outputs < target_blocks && scratch != nullptr) {
    chunks = (target_blocks + outputs - 1) / outputs;
    const int64_t by_length = (inputs + kThreads * 4 - 1) / (kThreads * 4);
    const int64_t by_scratch =
        static_cast<int64_t>(scratch_bytes / sizeof(Acc<T>)) / (outputs > 0 ? outputs : 1);
    chunks = chunks < by_length ? chunks : by_length;
    chunks = chunks < by_scratch ? chunks : by_scratch;
    if (chunks < 1) chunks = 1;
  }
  const int64_t chunk_length = (inputs + chunks - 1) / chunks;
  const int64_t blocks = outputs * chunks;
  if (blocks > 0x7FFFFFFF) return cudaErrorInvalidConfiguration;
  reduce_blocks<T, Index><<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(
      l, in, o, static_cast<Acc<T>*>(scratch), chunks, chunk_length, mean);
  if (const cudaError_t e = cudaGetLastError(); e != cudaSuccess) return e;
  if (chunks > 1) {
    reduce_partials<T><<<grid_for(outputs), kThreads, 0, stream>>>(
        static_cast<const Acc<T>*>(scratch), o, outputs, chunks, inputs, mean);
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

cudaError_t launch_reduce(bool mean, xdev_dtype_t dtype, const ReduceLayout& layout,
                          const void* x, void* out, void* scratch, size_t scratch_bytes,
                          int multiprocessors, cudaStream_t stream) {
  if (layout.outer_count <= 0) return cudaSuccess;
  switch (dtype) {
    case XDEV_DTYPE_FLOAT32:
      return reduce_dispatch<float>(mean, layout, x, out, scratch, scratch_bytes,
                                    multiprocessors, stream);
    case XDEV_DTYPE_FLOAT64:
      return reduce_dispatch<double>(mean, layout, x, out, scratch, scratch_bytes,
                                     multiprocessors, stream);
    case XDEV_DTYPE_INT32:
      return reduce_dispatch<int32_t>(mean, layout, x, out, scratch, scratch_bytes,
                                      multiprocessors, stream);
    case XDEV_DTYPE_INT64:
      return reduce_dispatch<int64_t>(mean, layout, x, out, scratch, scratch_bytes,
                                      multiprocessors, stream);
    default:
      return cudaErrorNotSupported;
  }
}

}  // namespace xdev::cuda
