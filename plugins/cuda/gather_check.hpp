// GatherV2's index check (docs/ops.md: an index outside [0, n) is an error,
// reported before any write, naming the first bad one). A CUDA kernel cannot
// return a status, so the cuda plugin copies the indices to the host and
// checks them there before it launches the gather. Host code, tested
// without a GPU (tests/cuda/test_cuda_layout.cpp).
#pragma once

#include <cstdint>
#include <cstring>

#include <xdev/plugin.h>

namespace xdev::cuda {

// The position of the first of `count` indices (int32 or int64, host memory)
// outside [0, n), and its value; -1 when all are in range.
inline int64_t first_bad_index(const void* indices, xdev_dtype_t dtype, int64_t count, int64_t n,
                               int64_t* value) {
  const auto* bytes = static_cast<const unsigned char*>(indices);
  for (int64_t j = 0; j < count; ++j) {
    int64_t v;
    if (dtype == XDEV_DTYPE_INT32) {
      int32_t v32;
      std::memcpy(&v32, bytes + j * 4, sizeof(v32));
      v = v32;
    } else {
      std::memcpy(&v, bytes + j * 8, sizeof(v));
    }
    if (v < 0 || v >= n) {
      *value = v;
      return j;
    }
  }
  return -1;
}

}  // namespace xdev::cuda
