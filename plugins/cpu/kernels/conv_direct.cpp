// The direct float32 NHWC Conv2D of conv_direct.hpp.
//
// Output positions of the whole batch (image, row, column, flattened) are
// cut into tiles of kPixels; a tile's output channels into blocks of up to
// 64 (4 AVX-512 vectors). For each tile the kernel first points every
// (tap, position) at the input pixel's Cin channels, or at a row of zeros
// where the tap falls in the padding (so strides, dilations and SAME's
// borders cost only the pointer setup); then one pass accumulates
// in[tap][position][c] · filter[tap][c][block] over the taps and input
// channels in registers and stores the tile once. With many input channels
// the pass covers the filter in blocks that stay in L2 (kFilterBlockFloats)
// and later passes add to what the earlier stored.
#include "kernels/conv_direct.hpp"

#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/partitioner.h>

#include <algorithm>
#include <vector>

#include "cpu_features.hpp"
#include "parallel.hpp"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define XDEV_CPU_DIRECT_CONV 1
#endif

namespace xdev::cpu {

#ifdef XDEV_CPU_DIRECT_CONV
namespace {

constexpr int kPixels = 6;      // output positions per tile
constexpr int kLanes = 16;      // floats per AVX-512 vector
constexpr int kMaxVectors = 4;  // vectors of output channels per tile
// Input channels of one pass: the filter block it reads, [taps, channels,
// 64] floats, is at most 512 KiB, in the core's L2 for every tile of a task.
constexpr int64_t kFilterBlockFloats = int64_t{1} << 17;

// One pass over a tile of kPixels positions and 16·V output channels:
//   out[m][0, 16·V) = (accumulate ? out[m] : 0)
//                     + Σ_{t < taps, c0 <= c < c1} in[t·kPixels + m][c] · w[(t·cin + c)·cout + [0, 16·V)]
// (24 accumulators, 4 filter vectors and one broadcast: 29 of the 32
// vector registers). out[m] null: a position past the end (its in[] rows
// are zeros), not stored.
template <int V>
__attribute__((target("avx512f"))) void tile_pass(const float* const* in, int64_t taps, int64_t c0,
                                                  int64_t c1, const float* w, int64_t cin,
                                                  int64_t cout, float* const* out,
                                                  bool accumulate) noexcept {
  __m512 acc[kPixels][V];
#pragma GCC unroll 8
  for (int m = 0; m < kPixels; ++m) {
#pragma GCC unroll 4
    for (int j = 0; j < V; ++j) {
      acc[m][j] = accumulate && out[m] != nullptr ? _mm512_loadu_ps(out[m] + kLanes * j)
                                                  : _mm512_setzero_ps();
    }
  }
  for (int64_t t = 0; t < taps; ++t) {
    const float* row[kPixels];
#pragma GCC unroll 8
    for (int m = 0; m < kPixels; ++m) row[m] = in[t * kPixels + m];
    const float* wt = w + (t * cin + c0) * cout;
    for (int64_t c = c0; c < c1; ++c, wt += cout) {
      __m512 wv[V];
#pragma GCC unroll 4
      for (int j = 0; j < V; ++j) wv[j] = _mm512_loadu_ps(wt + kLanes * j);
#pragma GCC unroll 8
      for (int m = 0; m < kPixels; ++m) {
        const __m512 xv = _mm512_set1_ps(row[m][c]);
#pragma GCC unroll 4
        for (int j = 0; j < V; ++j) acc[m][j] = _mm512_fmadd_ps(xv, wv[j], acc[m][j]);
      }
    }
  }
#pragma GCC unroll 8
  for (int m = 0; m < kPixels; ++m) {
    if (out[m] == nullptr) continue;
#pragma GCC unroll 4
    for (int j = 0; j < V; ++j) _mm512_storeu_ps(out[m] + kLanes * j, acc[m][j]);
  }
}

using TilePass = void (*)(const float* const*, int64_t, int64_t, int64_t, const float*, int64_t,
                          int64_t, float* const*, bool) noexcept;
constexpr TilePass kPasses[kMaxVectors + 1] = {nullptr, &tile_pass<1>, &tile_pass<2>,
                                               &tile_pass<3>, &tile_pass<4>};

bool processor_has_avx512() noexcept {
  const X86Features& f = x86_features();
  return f.avx512f && f.os_avx512;
}

// The direct kernel applies to Conv2D with windows `g`.
bool applies(const WindowGeometry& g) noexcept {
  return !g.nchw && g.in.c >= 1 && g.out.c >= 1 && g.out.c % kLanes == 0 &&
         g.taps() <= kMaxDirectTaps && g.in.step_c == 1 && g.out.step_c == 1 &&
         processor_has_avx512();
}

}  // namespace

bool conv2d_direct_f32(const WindowGeometry& g, const float* x, const float* f, float* y) {
  if (!applies(g)) return false;
  const int64_t taps = g.taps(), cin = g.in.c, cout = g.out.c;
  const int64_t per_image = g.positions(), total = g.out.n * per_image;
  const int64_t tiles = (total + kPixels - 1) / kPixels;
  const int64_t chunk = std::max<int64_t>(1, kFilterBlockFloats / (taps * kMaxVectors * kLanes));
  // Tiles per task: their input pointers (taps × kPixels each) in about
  // 32 KiB, and at most 32 tiles (192 positions) so both cores get work.
  const int64_t grain = std::clamp<int64_t>(4096 / (taps * kPixels), 1, 32);
  const std::vector<float> zeros(static_cast<size_t>(cin), 0.0f);
  cpu::parallel_for(
      tbb::blocked_range<int64_t>(0, tiles, grain),
      [&](const tbb::blocked_range<int64_t>& range) {
        const int64_t count = static_cast<int64_t>(range.size());
        std::vector<const float*> in(static_cast<size_t>(count * taps * kPixels));
        std::vector<float*> out(static_cast<size_t>(count * kPixels));
        for (int64_t i = 0; i < count; ++i) {
          const float** tile_in = in.data() + i * taps * kPixels;
          for (int m = 0; m < kPixels; ++m) {
            const int64_t pos = (range.begin() + i) * kPixels + m;
            if (pos >= total) {
              out[static_cast<size_t>(i * kPixels + m)] = nullptr;
              for (int64_t t = 0; t < taps; ++t) tile_in[t * kPixels + m] = zeros.data();
              continue;
            }
            const int64_t b = pos / per_image, p = pos % per_image;
            out[static_cast<size_t>(i * kPixels + m)] = y + b * g.out.step_n + p * cout;
            int64_t t = 0;  // for_taps goes through the taps in order
            for_taps(g, b, p, p + 1, [&](int64_t, int64_t, int64_t at) {
              tile_in[t++ * kPixels + m] = at < 0 ? zeros.data() : x + at;
            });
          }
        }
        for (int64_t co = 0; co < cout; co += kMaxVectors * kLanes) {
          const TilePass pass = kPasses[std::min<int64_t>(kMaxVectors, (cout - co) / kLanes)];
          for (int64_t c0 = 0; c0 < cin; c0 += chunk) {
            const int64_t c1 = std::min(cin, c0 + chunk);
            for (int64_t i = 0; i < count; ++i) {
              float* tile_out[kPixels];
              for (int m = 0; m < kPixels; ++m) {
                float* o = out[static_cast<size_t>(i * kPixels + m)];
                tile_out[m] = o != nullptr ? o + co : nullptr;
              }
              pass(in.data() + i * taps * kPixels, taps, c0, c1, f + co, cin, cout, tile_out,
                   c0 > 0);
            }
          }
        }
      },
      tbb::simple_partitioner{});
  return true;
}

bool conv2d_backprop_input_direct_f32(const WindowGeometry& g, const float* f, const float* dy,
                                      float* dx) {
  if (g.sy != 1 || g.sx != 1) return false;
  // Windows over dy giving dx: stride 1, the same taps and dilations, the
  // padding before what is left of the window's span after the forward's.
  WindowGeometry t = g;
  t.in = g.out;
  t.out = g.in;
  t.py = (g.kh - 1) * g.dy - g.py;
  t.px = (g.kw - 1) * g.dx - g.px;
  if (!applies(t)) return false;
  const int64_t taps = g.taps(), cin = g.in.c, cout = g.out.c;
  std::vector<float> turned(static_cast<size_t>(taps * cin * cout));
  for (int64_t tap = 0; tap < taps; ++tap) {
    const float* from = f + (taps - 1 - tap) * cin * cout;  // [ci][co] of tap KH·KW-1-tap
    float* to = turned.data() + tap * cout * cin;           // [co][ci]
    for (int64_t ci = 0; ci < cin; ++ci) {
      for (int64_t co = 0; co < cout; ++co) to[co * cin + ci] = from[ci * cout + co];
    }
  }
  return conv2d_direct_f32(t, dy, turned.data(), dx);
}

#else  // not x86-64 with GCC or Clang: always im2col + GEMM

bool conv2d_direct_f32(const WindowGeometry&, const float*, const float*, float*) { return false; }
bool conv2d_backprop_input_direct_f32(const WindowGeometry&, const float*, const float*, float*) {
  return false;
}

#endif

}  // namespace xdev::cpu
