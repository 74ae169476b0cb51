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

__global__ void read_all_kernel(const float4* x, int64_t n4, float* sink) {
  float acc = 0;
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n4;
       i += int64_t{gridDim.x} * blockDim.x) {
    const float4 v = x[i];
    acc += v.x + v.y + v.z + v.w;
  }
  if (acc == -1.2345e-30f) *sink = acc;  // never: keeps the loads
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

cudaError_t read_all(const float* x, int64_t n, float* sink, cudaStream_t stream) {
  // n is a multiple of 4 in the benchmarks; cudaMalloc aligns to 256 bytes.
  read_all_kernel<<<blocks(n / 4), 256, 0, stream>>>(reinterpret_cast<const float4*>(x), n / 4,
                                                     sink);
  return cudaGetLastError();
}

}  // namespace xdev_bench
