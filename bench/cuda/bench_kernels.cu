#include "bench_kernels.hpp"

#include <cuda_runtime.h>

namespace xdev_bench {
namespace {

__global__ void fill_random_kernel(float* out, int64_t n, uint64_t seed) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{gridDim.x} * blockDim.x) {
    uint64_t x = seed + (static_cast<uint64_t>(i) + 1) * 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    x ^= x >> 31;
    out[i] = __fmul_rn(static_cast<float>(x >> 40), 0x1.0p-24f);
  }
}

__global__ void add_kernel(const float* x, const float* y, float* z, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{gridDim.x} * blockDim.x) {
    z[i] = x[i] + y[i];
  }
}

unsigned blocks(int64_t n) {
  const int64_t b = (n + 255) / 256;
  return static_cast<unsigned>(b < 1 ? 1 : (b > 65536 ? 65536 : b));
}

}  // namespace

cudaError_t fill_random(float* out, int64_t n, uint64_t seed, cudaStream_t stream) {
  fill_random_kernel<<<blocks(n), 256, 0, stream>>>(out, n, seed);
  return cudaGetLastError();
}

cudaError_t add(const float* x, const float* y, float* z, int64_t n, cudaStream_t stream) {
  add_kernel<<<blocks(n), 256, 0, stream>>>(x, y, z, n);
  return cudaGetLastError();
}

}  // namespace xdev_bench
