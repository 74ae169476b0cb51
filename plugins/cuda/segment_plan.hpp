// How many threads reduce one line of reduce_ops.cu (Max, Min, Prod, Any,
// All, LogSumExp, ArgMax, ArgMin, Softmax, LogSoftmax): host code, tested
// without a GPU (tests/cuda/test_cuda_layout.cpp).
#pragma once

#include <cstdint>

namespace xdev::cuda {

// A power of two dividing the 256 threads of a block: 1 (a thread per
// output) for short lines, 32 (a warp per output) for medium lines or when
// there are enough lines to fill the GPU with warps, 256 (a block per
// output) for few long lines.
inline int segment_lanes(int64_t lines, int64_t line_length, int multiprocessors) {
  if (line_length <= 16) return 1;
  const int64_t enough_warps = int64_t{multiprocessors > 0 ? multiprocessors : 1} * 64;
  if (line_length <= 4096 || lines >= enough_warps) return 32;
  return 256;
}

}  // namespace xdev::cuda
