// How Sum/Mean spread over the GPU (reduce.cu), decided on the host from the
// layout alone. Plain C++, so tests/cuda checks the choices without a GPU.
//
// Four shapes of work (the old plan, one 256-thread block per output row,
// made a [1e6, 64] row sum launch a million mostly idle blocks, and column
// sums read memory uncoalesced):
//  - kThreadPerOutput: one thread per output, looping over its inputs. For
//    short reductions, and for many outputs whose kept axis is innermost
//    (neighbouring threads then read neighbouring elements).
//  - kWarpPerRow: one warp per output row (the reduced axis innermost and
//    contiguous), 8 rows per block: the lanes read 32 consecutive elements.
//  - kColumnTiles: 32 neighbouring outputs (the kept axis innermost) per
//    block, 8 warps each walking every 8th input row; a warp reads 32
//    consecutive elements. Splits the rows into chunks when there are too
//    few column tiles to fill the GPU.
//  - kBlocks: one block per output (long rows, few outputs), split into
//    chunks of blocks when there are too few outputs to fill the GPU.
// Split reductions write per-chunk partials to kernel scratch and a second
// kernel adds them in order: every order is fixed by the plan, so results
// are deterministic (no atomics).
#pragma once

#include <cstddef>
#include <cstdint>

#include "launch.hpp"

namespace xdev::cuda {

inline constexpr int kReduceThreads = 256;  // threads per block, 8 warps
inline constexpr int kReduceWarps = kReduceThreads / 32;

enum class ReduceStrategy { kThreadPerOutput, kWarpPerRow, kColumnTiles, kBlocks };

struct ReducePlan {
  ReduceStrategy strategy = ReduceStrategy::kThreadPerOutput;
  // kColumnTiles, kBlocks: each output's inputs split into `chunks` pieces of
  // `chunk_length` (the last may be shorter); partials when chunks > 1.
  int64_t chunks = 1;
  int64_t chunk_length = 0;
  // kColumnTiles: tiles of 32 outputs (grid x; chunks is grid y).
  // kBlocks: outputs * chunks. Others: unused (grid-stride loops).
  int64_t blocks = 0;
  // Scratch the partials need: outputs * chunks * accumulator size.
  size_t scratch_bytes = 0;
};

// The plan for `l` with `acc_size`-byte accumulators on a GPU with
// `multiprocessors` SMs, using at most `scratch_available` bytes of scratch
// (SIZE_MAX: as much as it wants; 0: never split).
inline ReducePlan plan_reduce(const ReduceLayout& l, size_t acc_size, int multiprocessors,
                              size_t scratch_available) {
  ReducePlan plan;
  const int64_t outputs = l.outer_count;
  const int64_t inputs = l.inner_count;
  const int64_t sms = multiprocessors > 0 ? multiprocessors : 1;
  // Blocks that fill the GPU about four times over.
  const int64_t target_blocks = sms * 4;
  // A cap on the partials, however large the scratch.
  constexpr size_t kMaxScratch = size_t{1} << 20;
  const size_t scratch = scratch_available < kMaxScratch ? scratch_available : kMaxScratch;
  const int64_t partial_slots =
      static_cast<int64_t>(scratch / (acc_size > 0 ? acc_size : 1));
  const bool rows = l.inner_rank >= 1 && l.inner_strides[l.inner_rank - 1] == 1 &&
                    l.inner_shape[l.inner_rank - 1] >= 32;
  const bool columns = !rows && l.outer_rank >= 1 && l.outer_strides[l.outer_rank - 1] == 1 &&
                       l.outer_shape[l.outer_rank - 1] >= 2;
  const bool many_outputs = outputs >= sms * kReduceThreads * 2;

  // Splits each output's inputs into at most `wanted` chunks of at least
  // `min_length` inputs, within the scratch; sets chunks and chunk_length.
  auto split = [&](int64_t wanted, int64_t min_length) {
    int64_t chunks = wanted < 1 ? 1 : wanted;
    const int64_t by_length = (inputs + min_length - 1) / min_length;
    const int64_t by_scratch = partial_slots / (outputs > 0 ? outputs : 1);
    if (chunks > by_length) chunks = by_length;
    if (chunks > by_scratch) chunks = by_scratch;
    if (chunks > 65535) chunks = 65535;  // a grid dimension
    if (chunks < 1) chunks = 1;
    plan.chunk_length = (inputs + chunks - 1) / chunks;
    if (plan.chunk_length < 1) plan.chunk_length = 1;
    // No empty last chunk: as many chunks as that length needs.
    plan.chunks = inputs > 0 ? (inputs + plan.chunk_length - 1) / plan.chunk_length : 1;
    if (plan.chunks > 1) {
      plan.scratch_bytes = static_cast<size_t>(outputs * plan.chunks) * acc_size;
    }
  };

  if (outputs <= 0) return plan;
  if (inputs <= 32) {
    plan.strategy = ReduceStrategy::kThreadPerOutput;
  } else if (rows && outputs >= sms * 32) {
    // Enough rows for a warp each to keep every SM busy.
    plan.strategy = ReduceStrategy::kWarpPerRow;
  } else if (columns && !many_outputs) {
    plan.strategy = ReduceStrategy::kColumnTiles;
    plan.blocks = (outputs + 31) / 32;
    split((target_blocks + plan.blocks - 1) / plan.blocks, int64_t{kReduceWarps} * 4);
  } else if (!rows && many_outputs) {
    plan.strategy = ReduceStrategy::kThreadPerOutput;
  } else {
    plan.strategy = ReduceStrategy::kBlocks;
    split(outputs < target_blocks ? (target_blocks + outputs - 1) / outputs : 1,
          int64_t{kReduceThreads} * 4);
    plan.blocks = outputs * plan.chunks;
  }
  return plan;
}

}  // namespace xdev::cuda
