// Byte copies for the cpu device, where device memory is host memory.
#pragma once

#include <cstddef>

namespace xdev::cpu {

// Copies at least this large are split across oneTBB's threads; smaller
// ones are one memcpy in the calling thread. Measured on the 2-core
// reference machine (README.md): from 4 MiB up the split copy ran at 1.5-2x
// memcpy's speed when oneTBB's worker was awake, and at least at memcpy's
// speed when the worker first had to wake up (it then joins late).
inline constexpr std::size_t kParallelCopyMinBytes = std::size_t{4} << 20;

// The unit of work of a split copy.
inline constexpr std::size_t kParallelCopyChunkBytes = std::size_t{1} << 20;

// Copies `size` bytes from `src` to `dst` (non-overlapping). Never throws:
// when oneTBB cannot run the split copy, it falls back to one memcpy.
// Thread-safe.
void copy_bytes(void* dst, const void* src, std::size_t size) noexcept;

}  // namespace xdev::cpu
