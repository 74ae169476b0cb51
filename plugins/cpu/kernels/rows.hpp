// Row-by-row work of the cpu kernels: body(row) for every row of
// `row_elements` elements, split over oneTBB's threads (cpu::parallel_for)
// when the tensor is large. Each row runs in one thread, so results do not
// depend on the thread count.
#pragma once

#include <oneapi/tbb/blocked_range.h>

#include <algorithm>
#include <cstdint>

#include "kernels/common.hpp"
#include "parallel.hpp"

namespace xdev::cpu {

template <typename Body>
void for_rows(int64_t rows, int64_t row_elements, const Body& body) {
  if (rows * row_elements < kParallelMinElements) {
    for (int64_t r = 0; r < rows; ++r) body(r);
    return;
  }
  const int64_t grain =
      std::max<int64_t>(1, kParallelGrainElements / std::max<int64_t>(1, row_elements));
  cpu::parallel_for(tbb::blocked_range<int64_t>(0, rows, grain),
                    [&](const tbb::blocked_range<int64_t>& range) {
                      for (int64_t r = range.begin(); r < range.end(); ++r) body(r);
                    });
}

}  // namespace xdev::cpu
