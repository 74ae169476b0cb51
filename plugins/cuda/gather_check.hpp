// GatherV2's and TensorScatterAdd's index checks (docs/ops.md: an index
// outside [0, n) is an error, reported before any write, naming the first
// bad one). A CUDA kernel cannot return a status, so the cuda plugin copies
// the indices to the host and checks them there before it launches the
// gather or the scatter. Host code, tested
// without a GPU (tests/cuda/test_cuda_layout.cpp).
#pragma once

#include <cstdint>
#include <cstring>

#include <xdev/plugin.h>

namespace xdev::cuda {

// Index `j` of `indices` (int32 or int64, host memory).
inline int64_t index_at(const void* indices, xdev_dtype_t dtype, int64_t j) {
  const auto* bytes = static_cast<const unsigned char*>(indices);
  if (dtype == XDEV_DTYPE_INT32) {
    int32_t v32;
    std::memcpy(&v32, bytes + j * 4, sizeof(v32));
    return v32;
  }
  int64_t v;
  std::memcpy(&v, bytes + j * 8, sizeof(v));
  return v;
}

// The position of the first of `count` indices (int32 or int64, host memory)
// outside [0, n), and its value; -1 when all are in range.
inline int64_t first_bad_index(const void* indices, xdev_dtype_t dtype, int64_t count, int64_t n,
                               int64_t* value) {
  for (int64_t j = 0; j < count; ++j) {
    const int64_t v = index_at(indices, dtype, j);
    if (v < 0 || v >= n) {
      *value = v;
      return j;
    }
  }
  return -1;
}

// TensorScatterAdd's check (the same rule): `rows` index rows of `depth`
// values, value d of each in [0, dims[d]). The position of the first value
// out of range (row-major over indices) and the value; -1 when all are in
// range.
inline int64_t first_bad_index_row(const void* indices, xdev_dtype_t dtype, int64_t rows,
                                   int32_t depth, const int64_t* dims, int64_t* value) {
  for (int64_t j = 0; j < rows * depth; ++j) {
    const int64_t v = index_at(indices, dtype, j);
    if (v < 0 || v >= dims[j % depth]) {
      *value = v;
      return j;
    }
  }
  return -1;
}

}  // namespace xdev::cuda
