// Walking N operands of one shape with their own strides (elementwise ops,
// Cast, Copy, AddN), and the elementwise maps built on it. The dims are first coalesced: dims of size 1 are
// dropped and neighbours that are contiguous in every operand merge, so a
// dense tensor becomes one dim and a broadcast row or a transposed matrix
// keeps two. The walk then visits "rows" of the innermost dim: a kernel
// supplies the loop over one row, given each operand's pointer and the row's
// strides.
#pragma once

#include <oneapi/tbb/blocked_range.h>
#include "parallel.hpp"
#include <oneapi/tbb/partitioner.h>

#include <algorithm>
#include <cstdint>
#include <cstring>

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
  cpu::parallel_for(tbb::blocked_range<int64_t>(0, n, kParallelGrainElements),
                    [&body](const tbb::blocked_range<int64_t>& r) { body(r.begin(), r.end()); });
}

// walk() over all elements, split over threads when large.
template <int N, typename Row>
void walk_all(const Layout<N>& l, char* const (&base)[N], Row&& row) {
  parallel_range(l.count, [&](int64_t b, int64_t e) { walk(l, base, b, e, row); });
}

// Element strides of a dense row-major tensor of t's shape.
inline void dense_strides(const xdev_tensor_t& t, int64_t (&strides)[XDEV_MAX_RANK]) noexcept {
  int64_t expected = 1;
  for (int32_t k = t.rank - 1; k >= 0; --k) {
    strides[k] = expected;
    expected *= t.shape[k];
  }
}

// Every element of the dense `out` set to `value` (Fill, PadV2).
template <typename T>
void fill_dense(const xdev_tensor_t& out, T value) {
  T* const o = data_of<T>(out);
  parallel_range(element_count(out), [=](int64_t begin, int64_t end) {
    T* __restrict po = o;
    for (int64_t i = begin; i < end; ++i) po[i] = value;
  });
}

// Every element of the dense `out` set to `value` converted to its dtype as
// Cast converts (Fill, PadV2): the bytes of one element, repeated.
inline void fill_converted(const xdev_tensor_t& out, double value) {
  unsigned char bytes[8];
  store_converted(value, out.dtype, bytes);
  visit_word(itemsize(out.dtype), [&](auto word) {
    using W = decltype(word);
    std::memcpy(&word, bytes, sizeof word);
    fill_dense<W>(out, word);
  });
}

// Copies the elements of a view of `rank`/`shape` from `src` (element strides
// `src_strides`) to `dst` (element strides `dst_strides`), bit for bit:
// Word is an unsigned integer of the element's size. Rows that are dense on
// both sides are memcpy'd. Data movement ops (Copy, ConcatV2, Pack) place
// each input in a region of their output with it.
template <typename Word>
void copy_view(int rank, const int64_t* shape, const void* src, const int64_t* src_strides,
               void* dst, const int64_t* dst_strides) {
  constexpr int64_t kSize = sizeof(Word);
  const int64_t* const strides[2] = {dst_strides, src_strides};
  const Layout<2> l = make_layout<2>(rank, shape, strides, {kSize, kSize});
  if (l.count == 0) return;
  const int64_t sd = l.inner_stride(0) / kSize, ss = l.inner_stride(1) / kSize;
  char* const base[2] = {static_cast<char*>(dst), static_cast<char*>(const_cast<void*>(src))};
  walk_all(l, base, [sd, ss](char* const* p, int64_t count) {
    Word* __restrict po = reinterpret_cast<Word*>(p[0]);
    const Word* __restrict pa = reinterpret_cast<const Word*>(p[1]);
    if (sd == 1 && ss == 1) {
      std::memcpy(po, pa, static_cast<size_t>(count) * sizeof(Word));
    } else {
      for (int64_t i = 0; i < count; ++i) po[i * sd] = pa[i * ss];
    }
  });
}

// copy_view for elements of `itemsize` bytes (1, 2, 4 or 8).
inline void copy_view_bytes(int64_t itemsize, int rank, const int64_t* shape, const void* src,
                            const int64_t* src_strides, void* dst, const int64_t* dst_strides) {
  visit_word(itemsize, [&](auto word) {
    copy_view<decltype(word)>(rank, shape, src, src_strides, dst, dst_strides);
  });
}

// ---------------------------------------------------------------------------
// Elementwise maps. The output is dense; the inputs have the output's shape
// and any strides. Dense loops are flat (the compiler vectorizes them); the
// strided walk specializes its inner loop for unit and zero strides.

// o[i] = f(a[i]) for i in [0, n).
template <typename To, typename From, typename F>
void map_dense(To* o, const From* a, int64_t n, const F& f) {
  parallel_range(n, [=](int64_t begin, int64_t end) {
    To* __restrict po = o;
    const From* __restrict pa = a;
    for (int64_t i = begin; i < end; ++i) po[i] = f(pa[i]);
  });
}

// o[i] = f(a[i], b[i]) for i in [0, n) (comparisons: To is bool).
template <typename T, typename To = T, typename F>
void zip_dense(To* o, const T* a, const T* b, int64_t n, const F& f) {
  parallel_range(n, [=](int64_t begin, int64_t end) {
    To* __restrict po = o;
    const T* __restrict pa = a;
    const T* __restrict pb = b;
    for (int64_t i = begin; i < end; ++i) po[i] = f(pa[i], pb[i]);
  });
}

// out = f(x) element by element.
template <typename To, typename From, typename F>
void map(const xdev_tensor_t& x, const xdev_tensor_t& out, const F& f) {
  To* const o = data_of<To>(out);
  const From* const a = data_of<const From>(x);
  if (is_contiguous(x)) {
    map_dense(o, a, element_count(out), f);
    return;
  }
  int64_t out_strides[XDEV_MAX_RANK];
  dense_strides(out, out_strides);
  const int64_t* const strides[2] = {out_strides, x.strides};
  const Layout<2> l =
      make_layout<2>(out.rank, out.shape, strides, {int64_t{sizeof(To)}, int64_t{sizeof(From)}});
  const int64_t sa = l.inner_stride(1) / int64_t{sizeof(From)};
  char* const base[2] = {reinterpret_cast<char*>(o), reinterpret_cast<char*>(const_cast<From*>(a))};
  walk_all(l, base, [sa, f](char* const* p, int64_t count) {
    To* __restrict po = reinterpret_cast<To*>(p[0]);
    const From* __restrict pa = reinterpret_cast<const From*>(p[1]);
    if (sa == 1) {
      for (int64_t i = 0; i < count; ++i) po[i] = f(pa[i]);
    } else {
      for (int64_t i = 0; i < count; ++i) po[i] = f(pa[i * sa]);
    }
  });
}

// out = f(x, y) element by element; a broadcast scalar operand is read once.
// The output's element type To is T's but for comparisons (bool).
template <typename T, typename To = T, typename F>
void zip(const xdev_tensor_t& x, const xdev_tensor_t& y, const xdev_tensor_t& out, const F& f) {
  const int64_t n = element_count(out);
  To* const o = data_of<To>(out);
  const T* const a = data_of<const T>(x);
  const T* const b = data_of<const T>(y);
  const bool x_dense = is_contiguous(x);
  const bool y_dense = is_contiguous(y);
  if (x_dense && y_dense) {
    zip_dense<T, To>(o, a, b, n, f);
    return;
  }
  if (x_dense && is_broadcast_scalar(y)) {
    const T s = *b;
    map_dense(o, a, n, [s, f](T v) { return f(v, s); });
    return;
  }
  if (y_dense && is_broadcast_scalar(x)) {
    const T s = *a;
    map_dense(o, b, n, [s, f](T v) { return f(s, v); });
    return;
  }
  int64_t out_strides[XDEV_MAX_RANK];
  dense_strides(out, out_strides);
  constexpr int64_t kSize = sizeof(T);
  const int64_t* const strides[3] = {out_strides, x.strides, y.strides};
  const Layout<3> l =
      make_layout<3>(out.rank, out.shape, strides, {int64_t{sizeof(To)}, kSize, kSize});
  const int64_t sa = l.inner_stride(1) / kSize;
  const int64_t sb = l.inner_stride(2) / kSize;
  char* const base[3] = {reinterpret_cast<char*>(o), reinterpret_cast<char*>(const_cast<T*>(a)),
                         reinterpret_cast<char*>(const_cast<T*>(b))};
  walk_all(l, base, [sa, sb, f](char* const* p, int64_t count) {
    To* __restrict po = reinterpret_cast<To*>(p[0]);
    const T* __restrict pa = reinterpret_cast<const T*>(p[1]);
    const T* __restrict pb = reinterpret_cast<const T*>(p[2]);
    if (sa == 1 && sb == 1) {
      for (int64_t i = 0; i < count; ++i) po[i] = f(pa[i], pb[i]);
    } else if (sa == 1 && sb == 0) {
      const T s = *pb;
      for (int64_t i = 0; i < count; ++i) po[i] = f(pa[i], s);
    } else if (sa == 0 && sb == 1) {
      const T s = *pa;
      for (int64_t i = 0; i < count; ++i) po[i] = f(s, pb[i]);
    } else {
      for (int64_t i = 0; i < count; ++i) po[i] = f(pa[i * sa], pb[i * sb]);
    }
  });
}

// out = f(a, b, c) element by element (Select, ClipByValue): operand i of
// element type Ti, any strides (stride 0 where broadcast); out is dense.
template <typename To, typename A, typename B, typename C, typename F>
void zip3(const xdev_tensor_t& a, const xdev_tensor_t& b, const xdev_tensor_t& c,
          const xdev_tensor_t& out, const F& f) {
  To* const o = data_of<To>(out);
  const A* const pa = data_of<const A>(a);
  const B* const pb = data_of<const B>(b);
  const C* const pc = data_of<const C>(c);
  if (is_contiguous(a) && is_contiguous(b) && is_contiguous(c)) {
    parallel_range(element_count(out), [=](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) o[i] = f(pa[i], pb[i], pc[i]);
    });
    return;
  }
  int64_t out_strides[XDEV_MAX_RANK];
  dense_strides(out, out_strides);
  const int64_t* const strides[4] = {out_strides, a.strides, b.strides, c.strides};
  const Layout<4> l = make_layout<4>(
      out.rank, out.shape, strides,
      {int64_t{sizeof(To)}, int64_t{sizeof(A)}, int64_t{sizeof(B)}, int64_t{sizeof(C)}});
  const int64_t sa = l.inner_stride(1) / int64_t{sizeof(A)};
  const int64_t sb = l.inner_stride(2) / int64_t{sizeof(B)};
  const int64_t sc = l.inner_stride(3) / int64_t{sizeof(C)};
  char* const base[4] = {reinterpret_cast<char*>(o), reinterpret_cast<char*>(const_cast<A*>(pa)),
                         reinterpret_cast<char*>(const_cast<B*>(pb)),
                         reinterpret_cast<char*>(const_cast<C*>(pc))};
  walk_all(l, base, [sa, sb, sc, f](char* const* p, int64_t count) {
    To* __restrict po = reinterpret_cast<To*>(p[0]);
    const A* qa = reinterpret_cast<const A*>(p[1]);
    const B* qb = reinterpret_cast<const B*>(p[2]);
    const C* qc = reinterpret_cast<const C*>(p[3]);
    for (int64_t i = 0; i < count; ++i) po[i] = f(qa[i * sa], qb[i * sb], qc[i * sc]);
  });
}

}  // namespace xdev::cpu
