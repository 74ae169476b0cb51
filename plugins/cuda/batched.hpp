// The boundary between ops_batched.cpp (host code) and batched.cu (its CUDA
// kernels), like launch.hpp: plain types only, launchers enqueue on
// `stream` and return the launch status.
#pragma once

#include <cstdint>

#include <cuda_runtime_api.h>

#include <xdev/plugin.h>

#include "launch.hpp"

namespace xdev::cuda {

// TensorScatterAdd: `rows` index rows of `depth` values (indices, int32 or
// int64) pick output rows of `inner` elements, row-major over `dims` (the
// tensor's first `depth` axes). Row j of updates is added to its output row
// with atomicAdd (float32, float64, int32, int64 wrapping); the output holds
// the tensor already. The indices were checked on the host.
struct ScatterLayout {
  int32_t depth = 0;
  int64_t dims[kMaxRank] = {};
  int64_t rows = 0;
  int64_t inner = 0;
};
cudaError_t launch_scatter_add(xdev_dtype_t dtype, xdev_dtype_t index_dtype,
                               const ScatterLayout& layout, const void* indices,
                               const void* updates, void* out, cudaStream_t stream);

}  // namespace xdev::cuda
