// Bare CUDA kernels the benchmarks compare xdev with (bench_kernels.cu).
#pragma once

#include <cstdint>

#include <cuda_runtime_api.h>

namespace xdev_bench {

// out[i] = docs/ops.md's RandomUniform in [0, 1), float32: the same values
// xdev::random_uniform gives, so both GEMMs see the same data.
cudaError_t fill_random(float* out, int64_t n, uint64_t seed, cudaStream_t stream);

// z = x + y, n float32 elements: the smallest useful kernel launch.
cudaError_t add(const float* x, const float* y, float* z, int64_t n, cudaStream_t stream);

// Reads all n float32 elements of x once, coalesced, and keeps nothing (a
// sum per thread that is stored only if it equals an impossible value): the
// read bandwidth a reduction of x can reach.
cudaError_t read_all(const float* x, int64_t n, float* sink, cudaStream_t stream);

}  // namespace xdev_bench
