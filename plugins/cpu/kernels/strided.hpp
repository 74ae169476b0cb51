// Walking N operands of one shape with their own strides (elementwise ops,
// Cast, Copy, AddN). The dims are first coalesced: dims of size 1 are
// dropped and neighbours that are contiguous in every operand merge, so a
// dense tensor becomes one dim and a broadcast row or a transposed matrix
// keeps two. The walk then visits "rows" of the innermost dim: a kernel
// supplies the loop over one row, given each operand's pointer and the row's
// strides.
#pragma once

#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/partitioner.h>

#include <algorithm>
#include <cstdint>

#include "kernels/common.hpp"

namespace xdev::cpu {

template <int N>
struct Layout {
  int rank = 0;  // >= 1
  int64_t shape[XDEV_MAX_RANK] = {};
  int64_t stride[N][XDEV_MAX_RANK] = {};  // in bytes
  int64_t count = 0;                      // elements

  int64_t inner() const { return shape[rank - 1]; }
  // Byte stride of operand `op` along the innermost dim.
  int64_t inner_stride(int op) const { return stride[op][rank - 1]; }
};

// Coalesced layout of `rank`/`shape` where operand i has element strides
// `strides[i]` and `itemsizes[i]` bytes per element.
template <int N>
Layout<N> make_layout(int rank, const int64_t* shape, const int64_t* const (&strides)[N],
                      const int64_t (&itemsizes)[N]) noexcept {
  Layout<N> l;
  l.count = 1;
  for (int k = 0; k < rank; ++k) l.count *= shape[k];
  for (int k = 0; k < rank; ++k) {
    const int64_t size = shape[k];
    if (size == 1) continue;
    if (l.rank > 0) {
      const int p = l.rank - 1;
      bool merge = true;
      for (int i = 0; i < N; ++i) {
        merge = merge && l.stride[i][p] == strides[i][k] * itemsizes[i] * size;
      }
      if (merge) {
        l.shape[p] *= size;
        for (int i = 0; i < N; ++i) l.stride[i][p] = strides[i][k] * itemsizes[i];
        continue;
      }
    }
    l.shape[l.rank] = size;
    for (int i = 0; i < N; ++i) l.stride[i][l.rank] = strides[i][k] * itemsizes[i];
    ++l.rank;
  }
  if (l.rank == 0) {  // a scalar (or all dims 1)
    l.rank = 1;
    l.shape[0] = 1;
    for (int i = 0; i < N; ++i) l.stride[i][0] = 0;
  }
  return l;
}

// Visits elements [begin, end) of `l` in row-major order: calls
// row(p, count) for each piece of a row, p[i] pointing at operand i's first
// element of the piece (advance by l.inner_stride(i) bytes).
template <int N, typename Row>
void walk(const Layout<N>& l, char* const (&base)[N], int64_t begin, int64_t end, Row&& row) {
  if (begin >= end) return;
  const int r = l.rank;
  const int64_t inner = l.inner();
  int64_t index[XDEV_MAX_RANK] = {};
  int64_t outer = begin / inner;
  int64_t col = begin % inner;
  char* row_start[N];
  for (int i = 0; i < N; ++i) row_start[i] = base[i];
  for (int k = r - 2; k >= 0; --k) {
    index[k] = outer % l.shape[k];
    outer /= l.shape[k];
    for (int i = 0; i < N; ++i) row_start[i] += index[k] * l.stride[i][k];
  }
  int64_t remaining = end - begin;
  for (;;) {
    const int64_t n = std::min(inner - col, remaining);
    char* p[N];
    for (int i = 0; i < N; ++i) p[i] = row_start[i] + col * l.stride[i][r - 1];
    row(p, n);
    remaining -= n;
    if (remaining == 0) return;
    col = 0;
    for (int k = r - 2; k >= 0; --k) {
      for (int i = 0; i < N; ++i) row_start[i] += l.stride[i][k];
      if (++index[k] < l.shape[k]) break;
      for (int i = 0; i < N; ++i) row_start[i] -= l.shape[k] * l.stride[i][k];
      index[k] = 0;
    }
  }
}

// Runs body(begin, end) over [0, n): in the calling thread below
// kParallelMinElements, else split over oneTBB's threads. oneTBB's default
// (auto) partitioner: a few ranges per thread, split further when a thread
// steals, so a thread the OS preempts does not hold up the others (on the
// shared 2-core reference machine a static split, one range per thread, was
// no faster at 16 Mi floats).
template <typename Body>
void parallel_range(int64_t n, Body&& body) {
  if (n < kParallelMinElements) {
    body(int64_t{0}, n);
    return;
  }
  tbb::parallel_for(tbb::blocked_range<int64_t>(0, n, kParallelGrainElements),
                    [&body](const tbb::blocked_range<int64_t>& r) { body(r.begin(), r.end()); });
}

// walk() over all elements, split over threads when large.
template <int N, typename Row>
void walk_all(const Layout<N>& l, char* const (&base)[N], Row&& row) {
  parallel_range(l.count, [&](int64_t b, int64_t e) { walk(l, base, b, e, row); });
}

}  // namespace xdev::cpu
