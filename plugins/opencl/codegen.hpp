// OpenCL C for the plugin's kernels, generated from the op tables of
// kernels.cpp: one elementwise template (strided/broadcast indexing over up
// to three inputs, instantiated per op expression and dtypes) and one "line"
// template (reductions, softmax: a loop over the reduced axes per output).
#pragma once

#include <xdev/plugin.h>

#include <cstdint>
#include <string>
#include <vector>

namespace xdev::opencl {

// The index block every generated kernel takes by value (host and device
// layouts agree: only 64-bit fields). Elementwise: `n` elements of the
// contiguous output; input k's element for output index i is at
// off[k] + sum_d(coordinate_d(i) * st[k][d]) (elements). Line kernels: `n`
// lines; coordinates over the kept axes (shape, st[0] for the input, st[1]
// for the output), the reduced axes in rshape/rst[0] (input), rst[1]
// (output, softmax only), `count` elements per line.
struct Index {
  int64_t n = 0;
  int64_t rank = 0;
  int64_t shape[XDEV_MAX_RANK] = {};
  int64_t off[4] = {};
  int64_t st[4][XDEV_MAX_RANK] = {};
  int64_t rrank = 0;
  int64_t count = 0;
  int64_t rshape[XDEV_MAX_RANK] = {};
  int64_t rst[2][XDEV_MAX_RANK] = {};
};

// The OpenCL C spelling of a dtype as stored ("float", "uchar" for bool,
// "ushort" for float16 and bfloat16, ...): the type of kernel pointers.
const char* cl_type(xdev_dtype_t dtype);
// float16 or bfloat16: stored in 16 bits, computed in float (docs/ops.md).
bool is_half(xdev_dtype_t dtype);
// The type kernels compute a dtype's values in: "float" for float16 and
// bfloat16 (no cl_khr_fp16 needed), else cl_type.
const char* value_type(xdev_dtype_t dtype);
// OpenCL C for element `index` of `pointer` (of the dtype's cl_type) as a
// value_type (float16: vload_half, OpenCL 1.2 core; bfloat16: the bits
// shifted into a float's top half) ...
std::string load(xdev_dtype_t dtype, const std::string& pointer, const std::string& index);
// ... and for storing `value` there, rounded once to nearest even for the
// 16-bit floats (vstore_half_rte; bfloat16 by bit operations, NaN kept NaN).
std::string store(xdev_dtype_t dtype, const std::string& pointer, const std::string& index,
                  const std::string& value);

// An elementwise kernel `xdev_kernel`: arguments in0..in(n-1) (global
// pointers of `inputs`' types), out (of `output`, element i at
// off[n] + coordinates(i) . st[n]), the Index, then `params`
// (OpenCL C parameter declarations, e.g. "float alpha"). `expr` computes
// the output from a, b, c (the inputs' values, of their value_type) and i
// (the output's flat row-major index); in it $T is input 0's value_type,
// $U its unsigned counterpart, $O the output's value_type, $F the literal
// suffix of input 0's value type ("f" or ""). The result is stored with
// store() (rounded once for float16/bfloat16); a copy ("a") or Select
// ("a ? b : c") of 16-bit floats moves the stored bits instead.
// With `tile`, input 0 (the only one) is read at the output's coordinates
// modulo its shape, given in Index::rshape (Tile).
std::string elementwise_source(const std::string& expr, const std::vector<xdev_dtype_t>& inputs,
                               xdev_dtype_t output, const std::string& params, bool fp64,
                               bool tile = false);

// A line kernel `xdev_kernel(in, out, Index)`: per line, `body` runs with
// `T` the input's value type, `O` the output's, `A` the accumulator type,
// `count`, and the macros X(j) (the line's j-th input element, a T),
// SET_Y(j, v) (stores its j-th output element, softmax-like ops), SET_OUT(v)
// (stores the reduction's output), LD(p, i) and ST(p, i, v) (any input or
// output pointer); TS and OS are the stored types (of pointers).
// `extra` adds parameters after the Index (", __global const TS* gamma").
std::string line_source(const std::string& body, xdev_dtype_t input, xdev_dtype_t output,
                        const char* accumulator, bool fp64, const std::string& extra = "");

// A reduction of each line in a work group (a tree in local memory): the
// state `S` (a type, or "struct { ... }") starts as `init` (a statement on
// s), folds each element x (a T) at line position j with `add` (on s, x,
// j), and two states with `merge` (into a from b: the tree and the parts of
// a line are merged in no fixed order, so merge must not depend on it beyond
// what the tolerance allows); `finish` is the output value of s (count in
// scope). `xdev_kernel(in, out, partials, Index, parts, partials_offset,
// __local S* tree)`, local size `group` (a power of 2: the tree's levels
// are unrolled for it), one group per (line, part):
// stage 1 folds part p of each line (elements p*size + lid, stepping by
// parts*size; `chunked`: each item a contiguous run instead, for CPU
// devices, where one thread runs an item's loop) and writes the finished
// value (parts == 1) or the state into
// `partials` (bytes from partials_offset, one S per group); stage 2 (one
// group per line) merges a line's `parts` states and writes the output.
// Index as for line_source (a reduced axis of one stride is read without
// division).
struct TreeReduce {
  const char* state;
  const char* init;
  const char* add;
  const char* merge;
  const char* finish;
};
std::string tree_source(const TreeReduce& body, xdev_dtype_t input, xdev_dtype_t output,
                        const char* accumulator, bool fp64, int stage, int group,
                        bool chunked);

// GatherV2 `xdev_kernel(params, indices, out, Index, n, m, inner, errors)`:
// params [outer, n, inner] and indices [m] dense at off[0], off[1], out
// [outer, m, inner] at off[2]; an index outside [0, n) gives 0 and sets the
// stream's error flag (common.hpp, xdev_stream_t::errors).
std::string gather_source(xdev_dtype_t params, xdev_dtype_t indices, bool fp64);

// TensorScatterAdd's accumulation `xdev_kernel(updates, indices, out, Index,
// rows, depth, inner, errors)`: work item c (of ix.n = inner) adds column c
// of every update row in order to the output row its index row names
// (Index::shape: the tensor's shape; off[0..2]: updates, indices, out, all
// dense); an index row out of range is skipped and sets the error flag as
// in gather_source. Integers add in their unsigned type (wrapping). `out`
// is `updates`' dtype, or float32 scratch for float16/bfloat16 updates
// (never a 16-bit dtype: each update is added in `out`'s own type).
std::string scatter_source(xdev_dtype_t updates, xdev_dtype_t out, xdev_dtype_t indices,
                           bool fp64);

// The sliding windows of the pools and convolutions (docs/ops.md), one
// element of the result per work item, the cuda plugin's per-element bodies
// (plugins/cuda/indexing.hpp) in OpenCL C, so the terms and their order are
// the cpu plugin's. Images are dense 4-d, NHWC or NCHW (xdev/window_geometry.hpp
// dense_image gives the steps); `in` is the image the windows slide over,
// `out` the image of one element per window and channel. Host and device
// layouts agree (64-bit fields only).
struct WindowImage {
  int64_t nchw = 0, n = 0, h = 0, w = 0, c = 0;
  int64_t step_n = 0, step_h = 0, step_w = 0, step_c = 0;
};
struct Window {
  WindowImage in, out;
  int64_t kh = 1, kw = 1, sy = 1, sx = 1, dy = 1, dx = 1, py = 0, px = 0;
};
enum class WindowOp { kMaxPool, kAvgPool, kMaxPoolGrad, kAvgPoolGrad, kConv2D, kConvInput,
                      kConvFilter };

// `xdev_kernel(a, b, c, out, Index, Window)`: ix.n elements of `out` (dense
// at off[3]); a, b, c at off[0..2] are the op's inputs in order (unused
// ones any buffer). Float accumulations in double where the device has it.
std::string window_source(WindowOp op, xdev_dtype_t dtype, bool fp64);

// A batched matrix product `xdev_kernel(x, y, out, Index, m, n, k, xm, xk,
// yk, yn)`: one work item per output element (ix.n = batches * m * n, the
// output dense at off[2]); batch b's matrices start at xdev_at(&ix, 0, b)
// and xdev_at(&ix, 1, b) (Index over the output's batch axes, stride 0 on
// broadcast ones), element (r, j) of op(x) at r * xm + j * xk, (j, c) of
// op(y) at j * yk + c * yn. Integers accumulate in their unsigned type
// (wrapping, as the cpu plugin), floats in their own.
std::string gemm_source(xdev_dtype_t dtype, bool fp64);

}  // namespace xdev::opencl
