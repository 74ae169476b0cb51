// The boundary between the kernels' host code (ops.cpp, compiled by the host
// C++ compiler) and the CUDA kernels (*.cu, compiled by nvcc). Only plain
// types cross it: layouts are passed to kernels by value.
//
// Every launcher enqueues its work on `stream` and returns the launch status
// (cudaGetLastError after the launch); none synchronizes. The caller has made
// the stream's device current.
#pragma once

#include <cstddef>
#include <cstdint>

#include <cuda_runtime_api.h>

#include <xdev/plugin.h>

namespace xdev::cuda {

inline constexpr int kMaxRank = XDEV_MAX_RANK;

// The most inputs an ElementwiseLayout describes (Select, ClipByValue).
inline constexpr int kMaxElementwiseInputs = 3;

// An elementwise problem over a contiguous output of `count` elements, with
// up to three strided inputs, after its axes were simplified (size-1 axes
// dropped, axes that are contiguous in every operand merged). Strides are in
// elements, 0 on broadcast axes. rank 0 means one element.
struct ElementwiseLayout {
  int32_t rank = 0;
  int32_t inputs = 0;
  int64_t count = 0;
  int64_t shape[kMaxRank] = {};
  int64_t strides[kMaxElementwiseInputs][kMaxRank] = {};
  // count, and every input's largest offset, are below 2^30: kernels use
  // 32-bit index arithmetic (with room for a grid stride).
  bool small = true;
  // Input k is laid out like the output (contiguous).
  bool contiguous[kMaxElementwiseInputs] = {false, false, false};
};

// A reduction: the output (contiguous, `outer_count` elements) is indexed by
// the kept axes in order; each output element reduces `inner_count`
// elements over the reduced axes. Both index spaces are simplified like an
// ElementwiseLayout; strides are the input's, in elements.
struct ReduceLayout {
  int32_t outer_rank = 0;
  int32_t inner_rank = 0;
  int64_t outer_count = 1;
  int64_t inner_count = 1;
  int64_t outer_shape[kMaxRank] = {};
  int64_t outer_strides[kMaxRank] = {};
  int64_t inner_shape[kMaxRank] = {};
  int64_t inner_strides[kMaxRank] = {};
  bool small = true;  // counts and offsets below 2^30: 32-bit indices
};

enum class BinaryOp : int32_t { kAdd, kSub, kMul, kDiv };
enum class UnaryOp : int32_t { kNeg, kRelu };

// out = x op y. For bool, only kAdd (logical or). Inputs may alias `out`
// when they are laid out like it (AddN accumulates in place).
cudaError_t launch_binary(BinaryOp op, xdev_dtype_t dtype, const ElementwiseLayout& layout,
                          const void* x, const void* y, void* out, cudaStream_t stream);

// out = op(x) for f32, f64, i32, i64.
cudaError_t launch_unary(UnaryOp op, xdev_dtype_t dtype, const ElementwiseLayout& layout,
                         const void* x, void* out, cudaStream_t stream);

// out = (to)x with the rules of docs/ops.md (float -> int toward zero,
// anything -> bool is x != 0, bool -> number is 0 or 1).
cudaError_t launch_cast(xdev_dtype_t from, xdev_dtype_t to, const ElementwiseLayout& layout,
                        const void* x, void* out, cudaStream_t stream);

// Strided gather of `element_size`-byte elements (1, 2, 4, 8 or 16) into a
// contiguous `out`.
cudaError_t launch_copy(size_t element_size, const ElementwiseLayout& layout, const void* x,
                        void* out, cudaStream_t stream);

// Fills `count` elements of `element_size` bytes (1, 2, 4 or 8) with the
// bit pattern in the low bytes of `pattern`.
cudaError_t launch_fill(size_t element_size, uint64_t pattern, void* out, int64_t count,
                        cudaStream_t stream);

// docs/ops.md's RandomUniform, bit for bit, for f32 and f64.
cudaError_t launch_random_uniform(xdev_dtype_t dtype, uint64_t seed, double minval, double maxval,
                                  void* out, int64_t count, cudaStream_t stream);

// Sum or Mean over ReduceLayout's inner index space, planned by
// reduce_plan.hpp. `scratch` (device memory, `scratch_bytes`, may be NULL)
// holds the partial results of split reductions; `multiprocessors` sizes
// the grid. inner_count may be 0 (Sum 0, Mean NaN for floats, 0 for
// integers).
cudaError_t launch_reduce(bool mean, xdev_dtype_t dtype, const ReduceLayout& layout,
                          const void* x, void* out, void* scratch, size_t scratch_bytes,
                          int multiprocessors, cudaStream_t stream);
// The scratch launch_reduce would use for this reduction (0: none).
size_t reduce_scratch_bytes(xdev_dtype_t dtype, const ReduceLayout& layout, int multiprocessors);

// Integer C[M,N] = A[M,K] * B[K,N] with wrapping arithmetic, for i32 and
// i64. A(i, k) is at a[i * a_row_stride + k * a_col_stride] (transposes are
// folded into the strides), likewise B; C is contiguous row-major.
cudaError_t launch_matmul_int(xdev_dtype_t dtype, int64_t m, int64_t n, int64_t k, const void* a,
                              int64_t a_row_stride, int64_t a_col_stride, const void* b,
                              int64_t b_row_stride, int64_t b_col_stride, void* c,
                              cudaStream_t stream);

// ---------------------------------------------------------------------------
// Elementwise math, reductions and data movement (math.cu, reduce_ops.cu,
// movement.cu).

// Elementwise math of one input (docs/ops.md "Elementwise math"), in the
// element type. kAbs, kSign, kSquare take every number dtype, kLogicalNot
// bool, the rest f32/f64; kLogicalNot, kIsNan, kIsFinite give bool.
// kLeakyRelu reads `alpha`; kGelu is the erf form, kGeluTanh the tanh one.
enum class MathOp : int32_t {
  kAbs, kSign, kSquare, kExp, kExpm1, kLog, kLog1p, kSqrt, kRsqrt, kReciprocal, kSin, kCos,
  kTanh, kSigmoid, kErf, kSoftplus, kFloor, kCeil, kRound, kLeakyRelu, kGelu, kGeluTanh,
  kLogicalNot, kIsNan, kIsFinite
};
cudaError_t launch_math(MathOp op, xdev_dtype_t dtype, const ElementwiseLayout& layout,
                        const void* x, void* out, double alpha, cudaStream_t stream);

// Binary math (kPow f32/f64 only; the rest every number dtype), the output
// of the inputs' dtype.
enum class MathBinaryOp : int32_t {
  kPow, kMaximum, kMinimum, kFloorDiv, kFloorMod, kSquaredDifference
};
cudaError_t launch_math_binary(MathBinaryOp op, xdev_dtype_t dtype,
                               const ElementwiseLayout& layout, const void* x, const void* y,
                               void* out, cudaStream_t stream);

// Comparisons and logic giving bool (kEqual, kNotEqual: all five dtypes;
// kLess ... kGreaterEqual: numbers; kLogicalAnd, kLogicalOr: bool).
enum class CompareOp : int32_t {
  kEqual, kNotEqual, kLess, kLessEqual, kGreater, kGreaterEqual, kLogicalAnd, kLogicalOr
};
cudaError_t launch_compare(CompareOp op, xdev_dtype_t dtype, const ElementwiseLayout& layout,
                           const void* x, const void* y, void* out, cudaStream_t stream);

// out = condition ? x : y, bit for bit, elements of `element_size` bytes
// (1, 4 or 8); the layout's inputs are condition, x, y.
cudaError_t launch_select(size_t element_size, const ElementwiseLayout& layout,
                          const void* condition, const void* x, const void* y, void* out,
                          cudaStream_t stream);

// out = min(max(x, lo), hi), NaN x stays NaN; inputs x, lo, hi.
cudaError_t launch_clip(xdev_dtype_t dtype, const ElementwiseLayout& layout, const void* x,
                        const void* lo, const void* hi, void* out, cudaStream_t stream);

// Reductions of a ReduceLayout's inner index space to one output element
// each (docs/ops.md "Reductions", "Along one axis"). kArgMax/kArgMin need
// an inner space of one axis (the index along it is the inner index) and
// write int64; kAny/kAll take bool; kLogSumExp floats. `lanes` threads
// (segment_plan.hpp) reduce each output.
enum class LineReduceOp : int32_t { kMax, kMin, kProd, kAny, kAll, kLogSumExp, kArgMax, kArgMin };
cudaError_t launch_line_reduce(LineReduceOp op, xdev_dtype_t dtype, const ReduceLayout& layout,
                               const void* x, void* out, int lanes, cudaStream_t stream);

// Softmax (log false) or LogSoftmax of f32/f64 along the one inner axis:
// `in` is the input's layout, `out` the output's (same shapes, the output's
// strides), line by line with `lanes` threads per line.
cudaError_t launch_softmax(bool log, xdev_dtype_t dtype, const ReduceLayout& in,
                           const ReduceLayout& out_layout, const void* x, void* out, int lanes,
                           cudaStream_t stream);

// CumSum of numbers along the one inner axis (layouts as launch_softmax):
// one thread per line, in axis order (floats in double, integers wrap).
cudaError_t launch_cumsum(xdev_dtype_t dtype, const ReduceLayout& in,
                          const ReduceLayout& out_layout, bool exclusive, bool reverse,
                          const void* x, void* out, cudaStream_t stream);

// A strided copy between two views of one shape: the layout's input 0 is
// the source, input 1 the destination (ConcatV2, Pack, PadV2's interior);
// `element_size` 1, 2, 4 or 8.
cudaError_t launch_copy_to_view(size_t element_size, const ElementwiseLayout& layout,
                                const void* x, void* out, cudaStream_t stream);

// Output-driven index maps of Tile and PadV2: output element [i...] (dense,
// `count` elements of shape out_shape) reads x[(i_k - before_k) ...]
// (PadV2: `value`'s bit pattern outside x) or x[i_k mod in_shape_k ...]
// (Tile).
struct IndexMapLayout {
  int32_t rank = 0;
  int64_t count = 0;
  int64_t out_shape[kMaxRank] = {};
  int64_t in_shape[kMaxRank] = {};
  int64_t in_strides[kMaxRank] = {};  // elements
  int64_t before[kMaxRank] = {};      // PadV2's leading padding
};
cudaError_t launch_tile(size_t element_size, const IndexMapLayout& layout, const void* x,
                        void* out, cudaStream_t stream);
cudaError_t launch_pad(size_t element_size, const IndexMapLayout& layout, uint64_t pattern,
                       const void* x, void* out, cudaStream_t stream);

// GatherV2 of contiguous params [outer, n, inner] with `count` contiguous
// indices (int32 or int64, already checked to lie in [0, n)) into the
// output [outer, count, inner]. An index outside [0, n) would write zeros
// (never read out of bounds); the caller refuses such indices first.
cudaError_t launch_gather(size_t element_size, xdev_dtype_t index_dtype, int64_t outer, int64_t n,
                          int64_t count, int64_t inner, const void* params, const void* indices,
                          void* out, cudaStream_t stream);

// Range (movement.cu): out[i] = start + i * delta in double, the product
// and the sum each rounded (no fused multiply-add, as on the host), then
// converted as Cast converts; f32, f64, i32, i64.
cudaError_t launch_range(xdev_dtype_t dtype, double start, double delta, void* out,
                         int64_t count, cudaStream_t stream);

// OneHot (movement.cu): the dense output [outer, depth, inner] (`count`
// elements) holds the bit pattern `on` at [o, d, i] where indices[o * inner
// + i] == d, else `off`; elements of `element_size` bytes (1, 4 or 8),
// indices int32 or int64 and contiguous.
cudaError_t launch_one_hot(size_t element_size, xdev_dtype_t index_dtype, int64_t depth,
                           int64_t inner, int64_t count, const void* indices, uint64_t on,
                           uint64_t off, void* out, cudaStream_t stream);

// ---------------------------------------------------------------------------
// Sliding windows (window.cu; docs/ops.md "Convolution and pooling"): the
// images are dense 4-d tensors, NHWC or NCHW; ImageLayout gives each
// dimension and its element step (indexing.hpp: image_offset,
// image_coordinates), WindowLayout the windows as window_plan.hpp derives
// them from xdev/window_geometry.hpp.
struct ImageLayout {
  bool nchw = false;
  int64_t n = 0, h = 0, w = 0, c = 0;
  int64_t step_n = 0, step_h = 0, step_w = 0, step_c = 0;
};
// `in` the image the windows slide over (Conv2D's and the pools' input,
// the gradients' output), `out` the image of one element per window and
// channel; kh x kw taps, steps sy, sx, dilations dy, dx, padding before.
struct WindowLayout {
  ImageLayout in, out;
  int64_t kh = 1, kw = 1, sy = 1, sx = 1, dy = 1, dx = 1, py = 0, px = 0;
};

// MaxPool (max) or AvgPool of x (`in`) into y (`out`): a thread per
// output element, the window's in-bounds taps in row-major order (MaxPool:
// the first NaN, else the first maximum; AvgPool: the sum in double divided
// by the taps counted). f32, f64.
cudaError_t launch_pool(bool max, xdev_dtype_t dtype, const WindowLayout& layout, const void* x,
                        void* y, cudaStream_t stream);
// The pools' gradients as gathers: a thread per element of dx (`in`) adds,
// in the windows' row-major order, what each window over it sends (MaxPool:
// dy when the element is the window's first maximum of x; AvgPool: dy
// divided by the window's in-bounds taps, rounded to the dtype), starting
// from 0, so every sum has the cpu plugin's order. No atomics.
cudaError_t launch_max_pool_grad(xdev_dtype_t dtype, const WindowLayout& layout, const void* x,
                                 const void* dy, void* dx, cudaStream_t stream);
cudaError_t launch_avg_pool_grad(xdev_dtype_t dtype, const WindowLayout& layout, const void* dy,
                                 void* dx, cudaStream_t stream);
// im2col of the convolutions: rows [r0, r0 + rows) of the column matrix of
// x (`in`; row r is output position r mod (OH * OW) of image r / (OH *
// OW), column (ky * KW + kx) * Cin + ci), padding as zeros, into the dense
// col [rows, KH * KW * Cin].
cudaError_t launch_im2col(xdev_dtype_t dtype, const WindowLayout& layout, const void* x,
                          int64_t r0, int64_t rows, void* col, cudaStream_t stream);
// col2im: adds the columns of rows [r0, r0 + rows) to the elements of dx
// (`in`) they were taken from: a thread per element of the images those
// rows touch sums its taps (ky, kx order), then adds the sum to dx.
cudaError_t launch_col2im(xdev_dtype_t dtype, const WindowLayout& layout, const void* col,
                          int64_t r0, int64_t rows, void* dx, cudaStream_t stream);
// The convolutions directly, without a column matrix (when the core offers
// no scratch for one): a thread per element of the result (`which`:
// kConvForward y from x and f, kConvInput dx from dy and f, kConvFilter df
// from x and dy; indexing.hpp), its terms summed in double.
inline constexpr int kConvForward = 0, kConvInput = 1, kConvFilter = 2;
cudaError_t launch_conv_direct(int which, xdev_dtype_t dtype, const WindowLayout& layout,
                               const void* a, const void* b, void* out, int64_t count,
                               cudaStream_t stream);

// ---------------------------------------------------------------------------
// NN ops (nn.cu; docs/ops.md "NN ops"). BiasAdd is launch_binary's kAdd with
// the bias broadcast (ops_nn.cpp).

// SoftmaxCrossEntropyWithLogits over `rows` x `cols`: element (b, c) of
// features at features[b * features_row + c * features_col] (likewise
// labels; a step is 0 on a broadcast dimension of 1), loss dense [rows],
// backprop dense [rows, cols]. cols may be 0 (each loss 0).
struct XentLayout {
  int64_t rows = 0, cols = 0;
  int64_t features_row = 0, features_col = 0;  // elements
  int64_t labels_row = 0, labels_col = 0;
};
cudaError_t launch_xent(xdev_dtype_t dtype, const XentLayout& layout, const void* features,
                        const void* labels, void* loss, void* backprop, int lanes,
                        cudaStream_t stream);

// LayerNorm of f32/f64: each line (outer index) of `x` normalised over its
// inner index space (the axes from begin_norm_axis); `out` the output's
// layout (same index spaces), `gamma` and `beta` theirs with every axis
// inner (inner index r is the same element of the group in all four).
struct LayerNormLayout {
  ReduceLayout x;
  ReduceLayout out;
  ReduceLayout gamma;
  ReduceLayout beta;
};
cudaError_t launch_layer_norm(xdev_dtype_t dtype, const LayerNormLayout& layout, double epsilon,
                              const void* x, const void* gamma, const void* beta, void* out,
                              int lanes, cudaStream_t stream);

}  // namespace xdev::cuda
