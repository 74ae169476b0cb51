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

// The OpenCL C spelling of a dtype ("float", "uchar" for bool, ...).
const char* cl_type(xdev_dtype_t dtype);

// An elementwise kernel `xdev_kernel`: arguments in0..in(n-1) (global
// pointers of `inputs`' types), out (of `output`, element i at
// off[n] + coordinates(i) . st[n]), the Index, then `params`
// (OpenCL C parameter declarations, e.g. "float alpha"). `expr` computes
// the output from a, b, c (the inputs' values) and i (the output's flat
// row-major index); in it $T is input 0's type,
// $U its unsigned counterpart, $O the output type, $F the literal suffix of
// input 0's float type ("f" or "").
// With `tile`, input 0 (the only one) is read at the output's coordinates
// modulo its shape, given in Index::rshape (Tile).
std::string elementwise_source(const std::string& expr, const std::vector<xdev_dtype_t>& inputs,
                               xdev_dtype_t output, const std::string& params, bool fp64,
                               bool tile = false);

// A line kernel `xdev_kernel(in, out, Index)`: per line, `body` runs with
// `T` the input type, `O` the output type, `A` the accumulator type, and the
// macros X(j) (the line's j-th input element) and Y(j) (its j-th output
// element, softmax-like ops), `count`, and OUT (the reduction's output).
// `extra` adds parameters after the Index (", __global const T* gamma").
std::string line_source(const std::string& body, xdev_dtype_t input, xdev_dtype_t output,
                        const char* accumulator, bool fp64, const std::string& extra = "");

// GatherV2 `xdev_kernel(params, indices, out, Index, n, m, inner, errors)`:
// params [outer, n, inner] and indices [m] dense at off[0], off[1], out
// [outer, m, inner] at off[2]; an index outside [0, n) gives 0 and sets the
// stream's error flag (common.hpp, xdev_stream_t::errors).
std::string gather_source(xdev_dtype_t params, xdev_dtype_t indices, bool fp64);

}  // namespace xdev::opencl
