#include "copy.hpp"

#include <algorithm>
#include <cstring>

#include <oneapi/tbb/blocked_range.h>
#include "parallel.hpp"
#include <oneapi/tbb/partitioner.h>

namespace xdev::cpu {

void copy_bytes(void* dst, const void* src, std::size_t size) noexcept {
  if (size == 0) return;
  auto* out = static_cast<unsigned char*>(dst);
  const auto* in = static_cast<const unsigned char*>(src);
  if (size < kParallelCopyMinBytes) {
    std::memcpy(out, in, size);
    return;
  }
  const std::size_t chunks = (size + kParallelCopyChunkBytes - 1) / kParallelCopyChunkBytes;
  try {
    // static_partitioner: one contiguous run of chunks per thread, no
    // stealing overhead for work of equal cost.
    cpu::parallel_for(
        tbb::blocked_range<std::size_t>(0, chunks, 1),
        [out, in, size](const tbb::blocked_range<std::size_t>& range) {
          const std::size_t begin = range.begin() * kParallelCopyChunkBytes;
          const std::size_t end = std::min(size, range.end() * kParallelCopyChunkBytes);
          std::memcpy(out + begin, in + begin, end - begin);
        },
        tbb::static_partitioner{});
  } catch (...) {
    // oneTBB failed to schedule (e.g. out of memory for tasks); copying the
    // whole range again is correct whatever part was already done.
    std::memcpy(out, in, size);
  }
}

}  // namespace xdev::cpu
