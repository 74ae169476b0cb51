// The segment machinery of the row-wise kernels (reduce_ops.cu, nn.cu): the
// lines (rows) are spread over the grid in segments of `lanes` threads (1,
// 32 or 256: segment_plan.hpp); each lane handles the line's elements
// r = lane, lane + lanes, ... and the segment combines its lanes in a fixed
// tree in shared memory, so results do not depend on timing (no atomics,
// no scratch). nvcc only.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include <xdev/compensated_sum.hpp>

#include "kernel_util.cuh"

namespace xdev::cuda {

// Combines `mine` over the segment of `lanes` threads holding this thread
// (a power of two dividing blockDim.x) in a fixed tree; every thread of the
// segment gets the result. Every thread of the block must call it (it
// synchronizes the block). `shared` holds blockDim.x values.
template <typename Acc, typename Combine>
__device__ Acc segment_reduce(Acc mine, Acc* shared, int lanes, Combine combine) {
  const int t = static_cast<int>(threadIdx.x);
  const int lane = t % lanes;
  shared[t] = mine;
  __syncthreads();
  for (int s = lanes / 2; s > 0; s /= 2) {
    if (lane < s) shared[t] = combine(shared[t], shared[t + s]);
    __syncthreads();
  }
  const Acc result = shared[t - lane];
  __syncthreads();
  return result;
}

// Shared memory for kThreads values of Acc (which may have no trivial
// constructor, so no __shared__ Acc array). One array per Acc type and
// kernel: two segment_reduce calls of one type reuse it, which is safe
// because segment_reduce synchronizes before it returns.
template <typename Acc>
__device__ __forceinline__ Acc* shared_slots() {
  __shared__ alignas(16) unsigned char storage[sizeof(Acc) * kThreads];
  return reinterpret_cast<Acc*>(storage);
}

// The segments of the block walk the lines in a grid-stride loop that every
// thread of the block runs the same number of times: body(line, active,
// lane), `active` false for the threads past the last line (they still
// take part in segment_reduce).
template <typename Body>
__device__ __forceinline__ void for_segment_lines(int64_t lines, int lanes, Body&& body) {
  const int per_block = kThreads / lanes;
  const int segment = static_cast<int>(threadIdx.x) / lanes;
  const int lane = static_cast<int>(threadIdx.x) % lanes;
  for (int64_t base = static_cast<int64_t>(blockIdx.x) * per_block; base < lines;
       base += static_cast<int64_t>(gridDim.x) * per_block) {
    const int64_t line = base + segment;
    body(line, line < lines, lane);
  }
}

// Merges compensated partial sums (xdev/compensated_sum.hpp), so a tree of
// them agrees with the cpu plugin's sequential sum within about an ulp.
struct MergeSums {
  __device__ CompensatedSum operator()(CompensatedSum a, const CompensatedSum& b) const {
    a.add(b);
    return a;
  }
};

// The segment's compensated sum of every lane's `partial`.
__device__ __forceinline__ double segment_sum(const CompensatedSum& partial, int lanes) {
  return segment_reduce(partial, shared_slots<CompensatedSum>(), lanes, MergeSums{}).value();
}

// The largest of a and b, NaN winning (the cpu plugin's row maximum).
template <typename T>
__device__ __forceinline__ T max_or_nan(T a, T b) {
  if (a != a) return a;
  if (b != b) return b;
  return a < b ? b : a;
}

// Blocks for `lines` lines in segments of `lanes` threads.
inline unsigned segment_grid(int64_t lines, int lanes) {
  return grid_for(lines, kThreads / lanes);
}

// The segment widths segment_plan.hpp gives.
inline bool valid_lanes(int lanes) { return lanes == 1 || lanes == 32 || lanes == kThreads; }

}  // namespace xdev::cuda
