// Conv2D of float32 NHWC images computed directly, without im2col, on
// processors with AVX-512 (conv.cpp takes this path first and falls back to
// im2col + GEMM when it does not apply).
//
// Why: im2col copies each input pixel once per filter tap into a column
// block that OpenBLAS then copies again into its packed layout; on a ResNet
// 3×3 layer of 64 channels those two copies cost about a fifth of the time
// (docs/performance.md, "Conv2D"). Here each output tile of 6 positions ×
// 64 channels stays in 24 vector registers while the taps and input
// channels stream past it: one broadcast of an input value and 4 vector
// loads of the filter feed 24 fused multiply-adds, and nothing is copied.
#pragma once

#include <cstdint>

#include "kernels/windows.hpp"

namespace xdev::cpu {

// y = Conv2D(x, f) for a contiguous NHWC call `g` (x [N, H, W, Cin], f
// [KH, KW, Cin, Cout] HWIO, y [N, OH, OW, Cout]) when the direct kernel
// applies: NHWC, Cin >= 1, Cout a multiple of 16, at most kMaxDirectTaps
// taps, and a processor (and OS) with AVX-512F. Returns false, having
// written nothing, when it does not. Runs on the calling thread's oneTBB
// arena (cpu::parallel_for). Sums run in float32, tap by tap and channel by
// channel within each tap (docs/ops.md's Conv2D tolerance holds).
// May throw std::bad_alloc (scratch), which the kernel's guard reports.
bool conv2d_direct_f32(const WindowGeometry& g, const float* x, const float* f, float* y);

// The input's gradient of a stride-1 float32 NHWC Conv2D (Conv2DBackpropInput,
// `g` as conv.cpp reads it: `in` the gradient dx [N, H, W, Cin], `out` the
// output's gradient dy [N, OH, OW, Cout]) as the direct Conv2D of dy with
// the filter turned half a turn and its channels swapped, W'[ky][kx][co][ci]
// = W[KH-1-ky][KW-1-kx][ci][co], padded by (K - 1)·dilation - pad before:
// dx[iy] = Σ dy[iy - pad' + ky·d] · W'[ky]. Applies where Conv2D's direct
// kernel would for that call (Cin a multiple of 16) and the strides are 1;
// returns false, having written nothing, otherwise.
bool conv2d_backprop_input_direct_f32(const WindowGeometry& g, const float* f, const float* dy,
                                      float* dx);

// Filters with more taps than this take im2col + GEMM (the direct kernel
// keeps one input pointer per tap and position of a tile).
inline constexpr int64_t kMaxDirectTaps = 121;

}  // namespace xdev::cpu
