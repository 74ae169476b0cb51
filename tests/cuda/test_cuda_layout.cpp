// The cuda plugin's host-side logic, on the host (no GPU needed): the
// simplified layouts (plugins/cuda/layout.cpp) and the offset functions the
// kernels use (plugins/cuda/indexing.hpp) must address exactly the elements
// that naive strided indexing does, for random shapes, broadcasts, strides
// (also negative and padded), reduction axes and the NN ops' broadcasts
// (BiasAdd, SoftmaxCrossEntropyWithLogits, LayerNorm); the reduction plans
// (reduce_plan.hpp) cover every input and pick the four strategies; the
// device guard (device_guard.hpp) restores exactly the caller's context;
// the MatMul error bound of the GPU tests (matmul_bound.hpp) rejects TF32;
// and the window ops' images, windows, column chunks and per-element
// bodies (window_plan.hpp, indexing.hpp) agree with the cpu plugin's loops.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <cstdint>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "device_guard.hpp"
#include "gather_check.hpp"
#include "indexing.hpp"
#include "layout.hpp"
#include "matmul_bound.hpp"
#include "reduce_plan.hpp"
#include "segment_plan.hpp"
#include "window_plan.hpp"

namespace {

using xdev::cuda::ElementwiseLayout;
using xdev::cuda::ReduceLayout;

struct View {
  std::vector<int64_t> shape;
  std::vector<int64_t> strides;
  xdev_tensor_t tensor() const {
    return xdev_tensor_t{nullptr, 0, XDEV_DTYPE_FLOAT32, static_cast<int32_t>(shape.size()),
                         shape.data(), strides.data()};
  }
  std::string text() const {
    std::ostringstream s;
    s << "shape [";
    for (auto d : shape) s << d << " ";
    s << "] strides [";
    for (auto d : strides) s << d << " ";
    s << "]";
    return s.str();
  }
};

// Strides of a tensor of `shape` stored in some random way: row-major,
// permuted axes, padded rows, a reversed (negative) axis.
std::vector<int64_t> random_strides(const std::vector<int64_t>& shape, std::mt19937_64& rng) {
  const size_t rank = shape.size();
  std::vector<size_t> order(rank);
  for (size_t i = 0; i < rank; ++i) order[i] = i;
  if (rng() % 2) std::shuffle(order.begin(), order.end(), rng);
  std::vector<int64_t> strides(rank);
  int64_t step = 1 + static_cast<int64_t>(rng() % 2);  // sometimes every other element
  for (size_t k = rank; k-- > 0;) {
    const size_t axis = order[k];
    strides[axis] = step;
    step *= shape[axis] + static_cast<int64_t>(rng() % 3 == 0 ? 1 : 0);  // padding
  }
  for (size_t axis = 0; axis < rank; ++axis) {
    if (rng() % 7 == 0) strides[axis] = -strides[axis];
    if (shape[axis] == 1 && rng() % 2) strides[axis] = static_cast<int64_t>(rng() % 100);
  }
  return strides;
}

std::vector<int64_t> coordinates(int64_t i, const std::vector<int64_t>& shape) {
  std::vector<int64_t> c(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    c[d] = i % shape[d];
    i /= shape[d];
  }
  return c;
}

// A view of rank in [min_rank, max_rank] with dimensions drawn from `dims`
// and random strides.
View random_view(std::mt19937_64& rng, size_t min_rank, size_t max_rank,
                 const int64_t (&dims)[4]) {
  View x;
  x.shape.resize(min_rank + rng() % (max_rank - min_rank + 1));
  for (auto& d : x.shape) d = dims[rng() % 4];
  x.strides = random_strides(x.shape, rng);
  return x;
}

TEST(CudaLayout, ElementwiseOffsetsMatchNaiveIndexing) {
  std::mt19937_64 rng(12345);
  const int64_t dims[] = {1, 2, 3, 5};
  for (int trial = 0; trial < 3000; ++trial) {
    const size_t rank = rng() % 7;
    std::vector<int64_t> out_shape(rank);
    for (auto& d : out_shape) d = dims[rng() % 4];
    View out{out_shape, {}};
    View in[3];
    for (auto& v : in) {
      const size_t r = rng() % (rank + 1);  // lower ranks align right
      v.shape.assign(out_shape.end() - static_cast<std::ptrdiff_t>(r), out_shape.end());
      for (auto& d : v.shape) {
        if (rng() % 4 == 0) d = 1;  // broadcast along this axis
      }
      v.strides = random_strides(v.shape, rng);
    }
    const xdev_tensor_t out_t = out.tensor();
    const xdev_tensor_t in_t[3] = {in[0].tensor(), in[1].tensor(), in[2].tensor()};
    const xdev_tensor_t* inputs[3] = {&in_t[0], &in_t[1], &in_t[2]};
    const int count = 1 + static_cast<int>(rng() % 3);  // up to Select's three
    const ElementwiseLayout l = xdev::cuda::elementwise_layout(out_t, inputs, count);
    SCOPED_TRACE("trial " + std::to_string(trial) + ": in0 " + in[0].text() + ", in1 " +
                 in[1].text() + ", in2 " + in[2].text());
    int64_t total = 1;
    for (auto d : out_shape) total *= d;
    ASSERT_EQ(l.count, total);
    ASSERT_LE(l.rank, static_cast<int32_t>(rank));
    ASSERT_TRUE(l.small);
    for (int64_t i = 0; i < total; ++i) {
      const std::vector<int64_t> c = coordinates(i, out_shape);
      int64_t want[3] = {0, 0, 0};
      for (int n = 0; n < count; ++n) {
        const View& v = in[n];
        for (size_t td = 0; td < v.shape.size(); ++td) {
          const size_t d = td + (rank - v.shape.size());
          if (v.shape[td] != 1) want[n] += c[d] * v.strides[td];
        }
      }
      int64_t got64[3];
      xdev::cuda::input_offsets<int64_t, 3>(l, i, got64);
      int32_t got32[3];
      xdev::cuda::input_offsets<int32_t, 3>(l, static_cast<int32_t>(i), got32);
      for (int n = 0; n < count; ++n) {
        ASSERT_EQ(got64[n], want[n]) << "index " << i << " input " << n;
        ASSERT_EQ(got32[n], want[n]) << "index " << i << " input " << n;
        if (l.contiguous[n]) {
          ASSERT_EQ(want[n], i) << "input " << n << " claims contiguous";
        }
      }
    }
  }
}

TEST(CudaLayout, ContiguousInputsCollapseToOneAxis) {
  std::vector<int64_t> shape = {4, 5, 6}, strides = {30, 6, 1};
  View v{shape, strides};
  const xdev_tensor_t t = v.tensor();
  const xdev_tensor_t* inputs[2] = {&t, &t};
  const ElementwiseLayout l = xdev::cuda::elementwise_layout(t, inputs, 2);
  EXPECT_EQ(l.rank, 1);
  EXPECT_EQ(l.shape[0], 120);
  EXPECT_TRUE(l.contiguous[0]);
  EXPECT_TRUE(l.contiguous[1]);
  // A scalar broadcast against it: one axis, stride 0.
  View scalar{{}, {}};
  const xdev_tensor_t s = scalar.tensor();
  const xdev_tensor_t* mixed[2] = {&t, &s};
  const ElementwiseLayout m = xdev::cuda::elementwise_layout(t, mixed, 2);
  EXPECT_EQ(m.rank, 1);
  EXPECT_EQ(m.strides[1][0], 0);
  EXPECT_FALSE(m.contiguous[1]);
}

TEST(CudaLayout, LargeLayoutsUse64BitIndices) {
  View big{{int64_t{1} << 16, int64_t{1} << 16}, {int64_t{1} << 16, 1}};
  const xdev_tensor_t t = big.tensor();
  const xdev_tensor_t* inputs[1] = {&t};
  EXPECT_FALSE(xdev::cuda::elementwise_layout(t, inputs, 1).small);
  View strided{{1000}, {int64_t{1} << 22}};  // 1000 elements spanning 4 G elements
  const xdev_tensor_t u = strided.tensor();
  const xdev_tensor_t* inputs2[1] = {&u};
  EXPECT_FALSE(xdev::cuda::elementwise_layout(u, inputs2, 1).small);
}

TEST(CudaLayout, ReduceOffsetsMatchNaiveIndexing) {
  std::mt19937_64 rng(777);
  const int64_t dims[] = {1, 2, 3, 4};
  for (int trial = 0; trial < 3000; ++trial) {
    const size_t rank = rng() % 6;
    View x;
    x.shape.resize(rank);
    for (auto& d : x.shape) d = dims[rng() % 4];
    if (rank > 0 && rng() % 10 == 0) x.shape[rng() % rank] = 0;  // empty
    x.strides = random_strides(x.shape, rng);
    bool reduced[xdev::cuda::kMaxRank] = {};
    for (size_t d = 0; d < rank; ++d) reduced[d] = rng() % 2;
    const ReduceLayout l = xdev::cuda::reduce_layout(x.tensor(), reduced);
    SCOPED_TRACE("trial " + std::to_string(trial) + ": " + x.text());
    std::vector<int64_t> kept_shape, kept_strides, red_shape, red_strides;
    for (size_t d = 0; d < rank; ++d) {
      (reduced[d] ? red_shape : kept_shape).push_back(x.shape[d]);
      (reduced[d] ? red_strides : kept_strides).push_back(x.strides[d]);
    }
    int64_t outputs = 1, inputs = 1;
    for (auto d : kept_shape) outputs *= d;
    for (auto d : red_shape) inputs *= d;
    ASSERT_EQ(l.outer_count, outputs);
    ASSERT_EQ(l.inner_count, inputs);
    for (int64_t o = 0; o < outputs; ++o) {
      const std::vector<int64_t> co = coordinates(o, kept_shape);
      int64_t want_outer = 0;
      for (size_t k = 0; k < co.size(); ++k) want_outer += co[k] * kept_strides[k];
      ASSERT_EQ(xdev::cuda::outer_offset<int64_t>(l, o), want_outer) << "output " << o;
      ASSERT_EQ(xdev::cuda::outer_offset<int32_t>(l, static_cast<int32_t>(o)), want_outer);
      for (int64_t r = 0; r < inputs; ++r) {
        const std::vector<int64_t> cr = coordinates(r, red_shape);
        int64_t want_inner = 0;
        for (size_t k = 0; k < cr.size(); ++k) want_inner += cr[k] * red_strides[k];
        ASSERT_EQ(xdev::cuda::inner_offset<int64_t>(l, r), want_inner) << "element " << r;
      }
    }
  }
}

// Softmax and CumSum (line_layouts): line o, element r of the input and of
// the dense output are the same logical element, for random strides.
TEST(CudaLayout, LineLayoutsAddressTheSameElementInInputAndOutput) {
  std::mt19937_64 rng(4242);
  const int64_t dims[] = {1, 2, 3, 4};
  for (int trial = 0; trial < 2000; ++trial) {
    const View x = random_view(rng, 1, 5, dims);
    const size_t rank = x.shape.size();
    const auto axis = static_cast<int32_t>(rng() % rank);
    const xdev::cuda::LineLayouts l = xdev::cuda::line_layouts(x.tensor(), axis);
    SCOPED_TRACE("trial " + std::to_string(trial) + ": " + x.text() + " axis " +
                 std::to_string(axis));
    std::vector<int64_t> kept_shape;
    for (size_t d = 0; d < rank; ++d) {
      if (static_cast<int32_t>(d) != axis) kept_shape.push_back(x.shape[d]);
    }
    ASSERT_EQ(l.in.inner_count, x.shape[axis]);
    ASSERT_EQ(l.out.inner_count, x.shape[axis]);
    ASSERT_EQ(l.in.outer_count, l.out.outer_count);
    for (int64_t o = 0; o < l.in.outer_count; ++o) {
      const std::vector<int64_t> kept = coordinates(o, kept_shape);
      for (int64_t r = 0; r < x.shape[axis]; ++r) {
        std::vector<int64_t> c;
        for (size_t d = 0, k = 0; d < rank; ++d) {
          c.push_back(static_cast<int32_t>(d) == axis ? r : kept[k++]);
        }
        int64_t want_in = 0, want_out = 0, dense = 1;
        for (size_t d = rank; d-- > 0;) {
          want_in += c[d] * x.strides[d];
          want_out += c[d] * dense;
          dense *= x.shape[d];
        }
        EXPECT_EQ(xdev::cuda::outer_offset<int64_t>(l.in, o) +
                      xdev::cuda::inner_offset<int64_t>(l.in, r),
                  want_in);
        ASSERT_EQ(xdev::cuda::outer_offset<int64_t>(l.out, o) +
                      xdev::cuda::inner_offset<int64_t>(l.out, r),
                  want_out);
      }
    }
  }
}

// BiasAdd (bias_add_layout): value's element and bias[channel coordinate],
// for random strides of both (negative ones too) and either channel axis.
TEST(CudaLayout, BiasAddLayoutReadsTheChannelsBias) {
  std::mt19937_64 rng(1313);
  const int64_t dims[] = {1, 2, 3, 5};
  const int64_t bias_strides[] = {1, 2, -1, 7};
  for (int trial = 0; trial < 2000; ++trial) {
    const View value = random_view(rng, 2, 6, dims);
    const size_t rank = value.shape.size();
    const auto channel = static_cast<int32_t>(rng() % 2 == 0 ? 1 : rank - 1);  // NCHW, NHWC
    View bias{{value.shape[channel]}, {bias_strides[rng() % 4]}};
    View out{value.shape, {}};
    SCOPED_TRACE("trial " + std::to_string(trial) + ": value " + value.text() + " bias " +
                 bias.text() + " channel " + std::to_string(channel));
    const ElementwiseLayout l = xdev::cuda::bias_add_layout(out.tensor(), value.tensor(),
                                                            bias.tensor(), channel);
    int64_t total = 1;
    for (auto d : value.shape) total *= d;
    ASSERT_EQ(l.count, total);
    ASSERT_EQ(l.inputs, 2);
    for (int64_t i = 0; i < total; ++i) {
      const std::vector<int64_t> c = coordinates(i, value.shape);
      int64_t want_value = 0;
      for (size_t d = 0; d < rank; ++d) want_value += c[d] * value.strides[d];
      const int64_t want_bias = c[static_cast<size_t>(channel)] * bias.strides[0];
      int64_t got[2];
      xdev::cuda::input_offsets<int64_t, 2>(l, i, got);
      ASSERT_EQ(got[0], want_value) << "element " << i;
      ASSERT_EQ(got[1], want_bias) << "element " << i;
      int32_t got32[2];
      xdev::cuda::input_offsets<int32_t, 2>(l, static_cast<int32_t>(i), got32);
      ASSERT_EQ(got32[0], want_value) << "element " << i;
      ASSERT_EQ(got32[1], want_bias) << "element " << i;
    }
  }
}

// SoftmaxCrossEntropyWithLogits (xent_layout): element (b, c) of features
// and labels of [rows or 1, cols or 1] through their strides; inputs
// without elements get steps of 0 (never read).
TEST(CudaLayout, XentLayoutBroadcastsDimensionsOfOne) {
  std::mt19937_64 rng(2626);
  const int64_t dims[] = {0, 1, 3, 4};
  for (int trial = 0; trial < 2000; ++trial) {
    const int64_t rows = dims[rng() % 4], cols = dims[rng() % 4];
    View in[2];
    for (View& v : in) {
      v.shape = {rng() % 3 == 0 ? 1 : rows, rng() % 3 == 0 ? 1 : cols};
      v.strides = random_strides(v.shape, rng);
    }
    SCOPED_TRACE("trial " + std::to_string(trial) + ": [" + std::to_string(rows) + ", " +
                 std::to_string(cols) + "] features " + in[0].text() + " labels " +
                 in[1].text());
    const xdev::cuda::XentLayout l =
        xdev::cuda::xent_layout(in[0].tensor(), in[1].tensor(), rows, cols);
    ASSERT_EQ(l.rows, rows);
    ASSERT_EQ(l.cols, cols);
    const int64_t steps[2][2] = {{l.features_row, l.features_col},
                                 {l.labels_row, l.labels_col}};
    for (int k = 0; k < 2; ++k) {
      const View& v = in[k];
      if (v.shape[0] * v.shape[1] == 0) {
        EXPECT_EQ(steps[k][0], 0);
        EXPECT_EQ(steps[k][1], 0);
        continue;
      }
      for (int64_t b = 0; b < rows; ++b) {
        for (int64_t c = 0; c < cols; ++c) {
          const int64_t want = (v.shape[0] == 1 ? 0 : b) * v.strides[0] +
                               (v.shape[1] == 1 ? 0 : c) * v.strides[1];
          ASSERT_EQ(b * steps[k][0] + c * steps[k][1], want)
              << "input " << k << " element (" << b << ", " << c << ")";
        }
      }
    }
  }
}

// LayerNorm (layer_norm_layout): line o, group element r is the same
// element of x (its strides), of the dense output, and of gamma and beta
// (theirs, x's shape from the axis on).
TEST(CudaLayout, LayerNormLayoutAddressesEveryGroupElement) {
  std::mt19937_64 rng(3939);
  const int64_t dims[] = {1, 2, 3, 4};
  for (int trial = 0; trial < 2000; ++trial) {
    const View x = random_view(rng, 1, 5, dims);
    const size_t axis = rng() % x.shape.size(), rank = x.shape.size();
    const std::vector<int64_t> lines_shape(x.shape.begin(),
                                           x.shape.begin() + static_cast<std::ptrdiff_t>(axis));
    const std::vector<int64_t> group_shape(x.shape.begin() + static_cast<std::ptrdiff_t>(axis),
                                           x.shape.end());
    View gamma{group_shape, random_strides(group_shape, rng)};
    View beta{group_shape, random_strides(group_shape, rng)};
    SCOPED_TRACE("trial " + std::to_string(trial) + ": x " + x.text() + " axis " +
                 std::to_string(axis) + " gamma " + gamma.text() + " beta " + beta.text());
    const xdev::cuda::LayerNormLayout l = xdev::cuda::layer_norm_layout(
        x.tensor(), gamma.tensor(), beta.tensor(), static_cast<int32_t>(axis));
    int64_t lines = 1, group = 1;
    for (auto d : lines_shape) lines *= d;
    for (auto d : group_shape) group *= d;
    ASSERT_EQ(l.x.outer_count, lines);
    ASSERT_EQ(l.out.outer_count, lines);
    ASSERT_EQ(l.x.inner_count, group);
    ASSERT_EQ(l.out.inner_count, group);
    ASSERT_EQ(l.gamma.inner_count, group);
    ASSERT_EQ(l.beta.inner_count, group);
    for (int64_t o = 0; o < lines; ++o) {
      const std::vector<int64_t> co = coordinates(o, lines_shape);
      for (int64_t r = 0; r < group; ++r) {
        std::vector<int64_t> c = co;
        const std::vector<int64_t> cr = coordinates(r, group_shape);
        c.insert(c.end(), cr.begin(), cr.end());
        int64_t want_x = 0, want_out = 0, dense = 1, want_gamma = 0, want_beta = 0;
        for (size_t d = rank; d-- > 0;) {
          want_x += c[d] * x.strides[d];
          want_out += c[d] * dense;
          dense *= x.shape[d];
        }
        for (size_t k = 0; k < cr.size(); ++k) {
          want_gamma += cr[k] * gamma.strides[k];
          want_beta += cr[k] * beta.strides[k];
        }
        ASSERT_EQ(xdev::cuda::outer_offset<int64_t>(l.x, o) +
                      xdev::cuda::inner_offset<int64_t>(l.x, r),
                  want_x) << "line " << o << " element " << r;
        ASSERT_EQ(xdev::cuda::outer_offset<int64_t>(l.out, o) +
                      xdev::cuda::inner_offset<int64_t>(l.out, r),
                  want_out) << "line " << o << " element " << r;
        ASSERT_EQ(xdev::cuda::inner_offset<int64_t>(l.gamma, r), want_gamma) << "element " << r;
        ASSERT_EQ(xdev::cuda::inner_offset<int64_t>(l.beta, r), want_beta) << "element " << r;
      }
    }
  }
}

// Tile and PadV2 (mapped_offset): every output element reads the input
// element of tf.tile / tf.pad, or pads.
TEST(CudaLayout, TileAndPadMapEveryOutputElement) {
  std::mt19937_64 rng(99);
  for (int trial = 0; trial < 1000; ++trial) {
    const size_t rank = rng() % 5;
    View x;
    x.shape.resize(rank);
    for (auto& d : x.shape) d = 1 + static_cast<int64_t>(rng() % 3);
    x.strides = random_strides(x.shape, rng);
    std::vector<int64_t> multiples(rank), before(rank), after(rank);
    xdev::cuda::IndexMapLayout tile, pad;
    tile.rank = pad.rank = static_cast<int32_t>(rank);
    tile.count = pad.count = 1;
    std::vector<int64_t> tile_shape(rank), pad_shape(rank);
    for (size_t d = 0; d < rank; ++d) {
      multiples[d] = static_cast<int64_t>(rng() % 3) + 1;
      before[d] = static_cast<int64_t>(rng() % 3);
      after[d] = static_cast<int64_t>(rng() % 2);
      tile_shape[d] = x.shape[d] * multiples[d];
      pad_shape[d] = x.shape[d] + before[d] + after[d];
      for (auto* l : {&tile, &pad}) {
        l->in_shape[d] = x.shape[d];
        l->in_strides[d] = x.strides[d];
      }
      tile.out_shape[d] = tile_shape[d];
      pad.out_shape[d] = pad_shape[d];
      pad.before[d] = before[d];
      tile.count *= tile_shape[d];
      pad.count *= pad_shape[d];
    }
    SCOPED_TRACE("trial " + std::to_string(trial) + ": " + x.text());
    for (int64_t i = 0; i < tile.count; ++i) {
      const std::vector<int64_t> c = coordinates(i, tile_shape);
      int64_t want = 0;
      for (size_t d = 0; d < rank; ++d) want += (c[d] % x.shape[d]) * x.strides[d];
      int64_t got = 0;
      ASSERT_TRUE(xdev::cuda::mapped_offset<true>(tile, i, &got)) << "tile element " << i;
      ASSERT_EQ(got, want) << "tile element " << i;
    }
    for (int64_t i = 0; i < pad.count; ++i) {
      const std::vector<int64_t> c = coordinates(i, pad_shape);
      int64_t want = 0;
      bool inside = true;
      for (size_t d = 0; d < rank; ++d) {
        const int64_t k = c[d] - before[d];
        inside = inside && k >= 0 && k < x.shape[d];
        want += k * x.strides[d];
      }
      int64_t got = 0;
      ASSERT_EQ(xdev::cuda::mapped_offset<false>(pad, i, &got), inside) << "pad element " << i;
      if (inside) {
        ASSERT_EQ(got, want) << "pad element " << i;
      }
    }
  }
}

TEST(SegmentPlan, LanesFollowTheLineLength) {
  using xdev::cuda::segment_lanes;
  EXPECT_EQ(segment_lanes(1000000, 4, 132), 1);     // short lines: a thread each
  EXPECT_EQ(segment_lanes(1, 16, 132), 1);
  EXPECT_EQ(segment_lanes(1000, 64, 132), 32);      // medium: a warp each
  EXPECT_EQ(segment_lanes(1, 4096, 132), 32);
  EXPECT_EQ(segment_lanes(100000, 100000, 132), 32);  // enough lines for warps
  EXPECT_EQ(segment_lanes(3, 100000, 132), 256);    // few long lines: a block each
  EXPECT_EQ(segment_lanes(1, 1 << 20, 0), 256);     // no multiprocessor count
}

TEST(GatherCheck, TheFirstIndexOutOfRangeIsNamed) {
  using xdev::cuda::first_bad_index;
  const std::vector<int32_t> ok32 = {0, 4, 2, 4};
  const std::vector<int64_t> bad64 = {0, 3, 5, -1};
  const std::vector<int32_t> negative32 = {1, -2147483647 - 1};
  int64_t value = 0;
  EXPECT_EQ(first_bad_index(ok32.data(), XDEV_DTYPE_INT32, 4, 5, &value), -1);
  EXPECT_EQ(first_bad_index(bad64.data(), XDEV_DTYPE_INT64, 4, 5, &value), 2);
  EXPECT_EQ(value, 5);
  EXPECT_EQ(first_bad_index(bad64.data(), XDEV_DTYPE_INT64, 2, 3, &value), 1);
  EXPECT_EQ(value, 3);
  EXPECT_EQ(first_bad_index(negative32.data(), XDEV_DTYPE_INT32, 2, 5, &value), 1);
  EXPECT_EQ(value, -2147483648LL);
  EXPECT_EQ(first_bad_index(nullptr, XDEV_DTYPE_INT64, 0, 0, &value), -1);
  EXPECT_EQ(first_bad_index(ok32.data(), XDEV_DTYPE_INT32, 1, 0, &value), 0);  // empty axis
}

// TensorScatterAdd: rows of `depth` values, value d of each below dims[d];
// the first bad value is named by its position in the indices.
TEST(GatherCheck, TheFirstIndexRowOutOfRangeIsNamed) {
  using xdev::cuda::first_bad_index_row;
  const int64_t dims[] = {3, 2};
  const std::vector<int32_t> ok32 = {0, 1, 2, 0, 2, 1};
  const std::vector<int64_t> bad64 = {0, 1, 1, 2, 3, 0};
  const std::vector<int32_t> negative32 = {1, 1, -1, 0};
  int64_t value = 0;
  EXPECT_EQ(first_bad_index_row(ok32.data(), XDEV_DTYPE_INT32, 3, 2, dims, &value), -1);
  EXPECT_EQ(first_bad_index_row(bad64.data(), XDEV_DTYPE_INT64, 3, 2, dims, &value), 3);
  EXPECT_EQ(value, 2);  // position 1 of row 1: axis 1 has 2
  EXPECT_EQ(first_bad_index_row(bad64.data(), XDEV_DTYPE_INT64, 1, 2, dims, &value), -1);
  EXPECT_EQ(first_bad_index_row(negative32.data(), XDEV_DTYPE_INT32, 2, 2, dims, &value), 2);
  EXPECT_EQ(value, -1);
  EXPECT_EQ(first_bad_index_row(nullptr, XDEV_DTYPE_INT64, 5, 0, dims, &value), -1);  // depth 0
}

TEST(CudaLayout, MatrixOperandsAddressEveryElementOrAreRefused) {
  std::mt19937_64 rng(99);
  int accepted = 0;
  for (int trial = 0; trial < 2000; ++trial) {
    View m;
    m.shape = {1 + static_cast<int64_t>(rng() % 5), 1 + static_cast<int64_t>(rng() % 5)};
    m.strides = random_strides(m.shape, rng);
    const xdev::cuda::MatrixOperand op = xdev::cuda::matrix_operand(m.tensor());
    if (!op.ok) continue;
    ++accepted;
    SCOPED_TRACE(m.text());
    ASSERT_GE(op.ld, op.column_major ? m.shape[0] : m.shape[1]);  // BLAS's rule
    for (int64_t i = 0; i < m.shape[0]; ++i) {
      for (int64_t j = 0; j < m.shape[1]; ++j) {
        const int64_t want = i * m.strides[0] + j * m.strides[1];
        const int64_t got = op.column_major ? i + j * op.ld : i * op.ld + j;
        ASSERT_EQ(got, want) << i << "," << j;
      }
    }
  }
  EXPECT_GT(accepted, 500);
}

// ---------------------------------------------------------------------------
// Reduction plans

ReduceLayout reduce_of(std::vector<int64_t> shape, std::vector<bool> axes) {
  View v;
  v.shape = shape;
  v.strides.assign(shape.size(), 1);
  for (size_t d = shape.size(); d-- > 1;) v.strides[d - 1] = v.strides[d] * shape[d];
  bool reduced[xdev::cuda::kMaxRank] = {};
  for (size_t d = 0; d < axes.size(); ++d) reduced[d] = axes[d];
  const xdev_tensor_t t = v.tensor();
  return xdev::cuda::reduce_layout(t, reduced);
}

using xdev::cuda::plan_reduce;
using xdev::cuda::ReduceStrategy;
constexpr int kH100Sms = 132;

TEST(ReducePlan, ManyShortRowsGetAWarpEach) {
  // The case behind the plans: [1e6, 64] over the last axis used to launch
  // a million 256-thread blocks with 64 elements each.
  const auto plan = plan_reduce(reduce_of({1000000, 64}, {false, true}), 8, kH100Sms, SIZE_MAX);
  EXPECT_EQ(plan.strategy, ReduceStrategy::kWarpPerRow);
  EXPECT_EQ(plan.scratch_bytes, 0u);
}

TEST(ReducePlan, FewWideColumnsAreTiledAndSplit) {
  // [65536, 64] over axis 0: 64 outputs, each a column read with stride 64.
  const auto plan = plan_reduce(reduce_of({65536, 64}, {true, false}), 8, kH100Sms, SIZE_MAX);
  EXPECT_EQ(plan.strategy, ReduceStrategy::kColumnTiles);
  EXPECT_EQ(plan.blocks, 2);  // tiles of 32 columns
  EXPECT_GT(plan.chunks, 1);
  EXPECT_GE(plan.blocks * plan.chunks, 4 * kH100Sms);  // fills the GPU
  EXPECT_EQ(plan.scratch_bytes, static_cast<size_t>(64 * plan.chunks * 8));
  // Without scratch it still runs, unsplit.
  const auto unsplit = plan_reduce(reduce_of({65536, 64}, {true, false}), 8, kH100Sms, 0);
  EXPECT_EQ(unsplit.strategy, ReduceStrategy::kColumnTiles);
  EXPECT_EQ(unsplit.chunks, 1);
  EXPECT_EQ(unsplit.scratch_bytes, 0u);
}

TEST(ReducePlan, OtherShapes) {
  // Square, both ways.
  EXPECT_EQ(plan_reduce(reduce_of({4096, 4096}, {true, false}), 8, kH100Sms, SIZE_MAX).strategy,
            ReduceStrategy::kColumnTiles);
  EXPECT_EQ(plan_reduce(reduce_of({4096, 4096}, {false, true}), 8, kH100Sms, SIZE_MAX).strategy,
            ReduceStrategy::kBlocks);
  // Few long rows: blocks, split to fill the GPU.
  const auto few = plan_reduce(reduce_of({64, 4096}, {false, true}), 8, kH100Sms, SIZE_MAX);
  EXPECT_EQ(few.strategy, ReduceStrategy::kBlocks);
  EXPECT_EQ(few.chunks, 4);  // at least 4 elements per thread of a 256-thread block
  EXPECT_EQ(few.blocks, 64 * 4);
  // Short reductions: a thread per output.
  EXPECT_EQ(plan_reduce(reduce_of({100, 20}, {false, true}), 8, kH100Sms, SIZE_MAX).strategy,
            ReduceStrategy::kThreadPerOutput);
  // Many wide outputs with the kept axis innermost: a thread each (coalesced).
  EXPECT_EQ(plan_reduce(reduce_of({64, 1 << 20}, {true, false}), 8, kH100Sms, SIZE_MAX).strategy,
            ReduceStrategy::kThreadPerOutput);
}

// Whatever the layout, a split covers every input exactly once and stays
// within the scratch it was given.
TEST(ReducePlan, SplitsCoverEveryInputWithinTheScratch) {
  std::mt19937_64 rng(20);
  for (int trial = 0; trial < 5000; ++trial) {
    const int rank = 1 + static_cast<int>(rng() % 3);
    std::vector<int64_t> shape;
    std::vector<bool> axes;
    for (int d = 0; d < rank; ++d) {
      shape.push_back(1 + static_cast<int64_t>(rng() % (d == rank - 1 ? 5000 : 300)));
      axes.push_back(rng() % 2 == 0);
    }
    const ReduceLayout l = reduce_of(shape, axes);
    const int sms = 1 + static_cast<int>(rng() % 160);
    const size_t scratch = rng() % 3 == 0 ? 0 : static_cast<size_t>(rng() % (1 << 18));
    const auto plan = plan_reduce(l, 8, sms, scratch);
    SCOPED_TRACE("trial " + std::to_string(trial));
    ASSERT_GE(plan.chunks, 1);
    ASSERT_LE(plan.chunks, 65535);
    ASSERT_LE(plan.scratch_bytes, scratch);
    if (plan.chunks > 1) {
      ASSERT_EQ(plan.scratch_bytes, static_cast<size_t>(l.outer_count * plan.chunks * 8));
    } else {
      ASSERT_EQ(plan.scratch_bytes, 0u);
    }
    if (plan.strategy == ReduceStrategy::kBlocks || plan.strategy == ReduceStrategy::kColumnTiles) {
      ASSERT_GE(plan.chunks * plan.chunk_length, l.inner_count);
      ASSERT_LT((plan.chunks - 1) * plan.chunk_length, std::max<int64_t>(l.inner_count, 1));
    }
    if (plan.strategy == ReduceStrategy::kBlocks) {
      ASSERT_EQ(plan.blocks, l.outer_count * plan.chunks);
    }
    if (plan.strategy == ReduceStrategy::kColumnTiles) {
      ASSERT_EQ(plan.blocks, (l.outer_count + 31) / 32);
      ASSERT_EQ(l.outer_strides[l.outer_rank - 1], 1);  // the kept axis is innermost
    }
    if (plan.strategy == ReduceStrategy::kWarpPerRow) {
      ASSERT_EQ(l.inner_strides[l.inner_rank - 1], 1);  // the reduced axis is innermost
    }
  }
}

// ---------------------------------------------------------------------------
// The device guard, with fake contexts: contexts are the numbers
// 100 + ordinal (primary) or anything else (the host program's own).

struct FakeContexts {
  static inline void* current = nullptr;
  static inline std::map<int, void*> primary;  // made current at least once
  static inline std::vector<std::string> calls;
  static inline bool fail = false;

  static void reset() {
    current = nullptr;
    primary.clear();
    calls.clear();
    fail = false;
  }
  static void* primary_of(int ordinal) { return reinterpret_cast<void*>(uintptr_t{100} + ordinal); }
  static const xdev::cuda::ContextOps& ops() {
    static const xdev::cuda::ContextOps table = {
        [] { return current; },
        [](void* context) {
          calls.push_back("bind " + std::to_string(reinterpret_cast<uintptr_t>(context)));
          current = context;
          return true;
        },
        [](int ordinal, void** out) {
          calls.push_back("make_current " + std::to_string(ordinal));
          if (fail) return 101;  // cudaErrorInvalidDevice
          current = *out = primary_of(ordinal);
          primary[ordinal] = current;
          return 0;
        },
        [](int ordinal) -> void* {
          auto it = primary.find(ordinal);
          return it == primary.end() ? nullptr : it->second;
        },
    };
    return table;
  }
};

TEST(DeviceGuard, AThreadWithoutAContextEndsWithoutOne) {
  FakeContexts::reset();
  {
    xdev::cuda::DeviceGuard guard(FakeContexts::ops(), 1);
    EXPECT_EQ(guard.error(), 0);
    EXPECT_EQ(FakeContexts::current, FakeContexts::primary_of(1));
  }
  EXPECT_EQ(FakeContexts::current, nullptr);
  // Never device 0 (the old guard's cudaSetDevice(0) created its context).
  EXPECT_EQ(FakeContexts::calls, (std::vector<std::string>{"make_current 1", "bind 0"}));
  // Later calls bind the known primary context directly.
  FakeContexts::calls.clear();
  { xdev::cuda::DeviceGuard guard(FakeContexts::ops(), 1); }
  EXPECT_EQ(FakeContexts::calls, (std::vector<std::string>{"bind 101", "bind 0"}));
}

TEST(DeviceGuard, TheCallersOwnContextIsPutBack) {
  FakeContexts::reset();
  void* mine = reinterpret_cast<void*>(uintptr_t{7});
  FakeContexts::current = mine;
  { xdev::cuda::DeviceGuard guard(FakeContexts::ops(), 2); }
  EXPECT_EQ(FakeContexts::current, mine);
  EXPECT_EQ(FakeContexts::calls, (std::vector<std::string>{"make_current 2", "bind 7"}));
}

TEST(DeviceGuard, NothingHappensWhenTheDeviceIsAlreadyCurrent) {
  FakeContexts::reset();
  { xdev::cuda::DeviceGuard guard(FakeContexts::ops(), 0); }  // learns device 0's context
  FakeContexts::current = FakeContexts::primary_of(0);
  FakeContexts::calls.clear();
  { xdev::cuda::DeviceGuard guard(FakeContexts::ops(), 0); }
  EXPECT_TRUE(FakeContexts::calls.empty());
  EXPECT_EQ(FakeContexts::current, FakeContexts::primary_of(0));
}

TEST(DeviceGuard, AFailureLeavesTheContextAlone) {
  FakeContexts::reset();
  FakeContexts::fail = true;
  {
    xdev::cuda::DeviceGuard guard(FakeContexts::ops(), 3);
    EXPECT_EQ(guard.error(), 101);
  }
  EXPECT_EQ(FakeContexts::current, nullptr);
  EXPECT_EQ(FakeContexts::calls, (std::vector<std::string>{"make_current 3"}));
}

// ---------------------------------------------------------------------------
// The MatMul error bound of the GPU tests: a float32 product meets it,
// the same product with TF32 inputs does not, on the shapes of
// CudaGpu.MatMulMatchesTheCpu with its input range.

template <typename Round>
std::vector<float> host_gemm(const std::vector<float>& a, const std::vector<float>& b, int64_t m,
                             int64_t k, int64_t n, Round round) {
  std::vector<float> c(static_cast<size_t>(m * n));
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      float sum = 0;
      for (int64_t p = 0; p < k; ++p) {
        sum += round(a[static_cast<size_t>(i * k + p)]) * round(b[static_cast<size_t>(p * n + j)]);
      }
      c[static_cast<size_t>(i * n + j)] = sum;
    }
  }
  return c;
}

TEST(MatMulBound, Float32PassesAndTf32Fails) {
  std::mt19937_64 rng(100);
  std::uniform_real_distribution<double> real(-4.0, 4.0);
  for (auto [m, k, n] : {std::tuple<int64_t, int64_t, int64_t>{37, 53, 29},
                         {1, 7, 1}, {2, 3, 2}, {256, 300, 130}}) {
    SCOPED_TRACE(std::to_string(m) + "x" + std::to_string(k) + "x" + std::to_string(n));
    std::vector<float> a(static_cast<size_t>(m * k)), b(static_cast<size_t>(k * n));
    for (auto& x : a) x = static_cast<float>(real(rng));
    for (auto& x : b) x = static_cast<float>(real(rng));
    const auto fp32 = host_gemm(a, b, m, k, n, [](float x) { return x; });
    EXPECT_EQ(xdev_cuda_test::matmul_outside_bound(a, b, fp32, m, k, n,
                                                   xdev_cuda_test::kFloat32Roundoff),
              "");
    const auto tf32 = host_gemm(a, b, m, k, n, &xdev_cuda_test::to_tf32);
    EXPECT_NE(xdev_cuda_test::matmul_outside_bound(a, b, tf32, m, k, n,
                                                   xdev_cuda_test::kFloat32Roundoff),
              "");
  }
  EXPECT_EQ(xdev_cuda_test::to_tf32(1.0f + 0x1p-12f), 1.0f);  // below TF32's precision
  EXPECT_EQ(xdev_cuda_test::to_tf32(1.0f + 0x1p-10f), 1.0f + 0x1p-10f);
}

}  // namespace

// Slice and StridedSlice copy a view of x (layout.cpp's slice_view,
// strided_slice_view): the elements it addresses, in the output's row-major
// order, are NumPy's x[...] for the cases of docs/ops.md and the
// conformance reference, on a dense x and on a transposed view.
std::vector<int64_t> window_elements(const xdev::cuda::WindowView& v,
                                     const std::vector<int64_t>& shape) {
  std::vector<int64_t> out;
  int64_t count = 1;
  for (int64_t d : shape) count *= d;
  for (int64_t i = 0; i < count; ++i) {
    int64_t rest = i, offset = v.offset;
    for (size_t k = shape.size(); k-- > 0;) {
      offset += (rest % shape[k]) * v.strides[k];
      rest /= shape[k];
    }
    out.push_back(offset);
  }
  return out;
}

TEST(CudaLayout, SliceViewsAddressNumPysWindows) {
  // x = arange(12).reshape(3, 4): element (i, j) at offset 4 i + j.
  View x{{3, 4}, {4, 1}};
  // t = x.T, [4, 3] with strides [1, 4]: t[i, j] at offset 4 j + i.
  View t{{4, 3}, {1, 4}};
  const xdev_tensor_t xt = x.tensor(), tt = t.tensor();
  const std::vector<int64_t> begin{1, 1};
  EXPECT_EQ(window_elements(xdev::cuda::slice_view(xt, begin.data()), {2, 3}),
            (std::vector<int64_t>{5, 6, 7, 9, 10, 11}));
  EXPECT_EQ(window_elements(xdev::cuda::slice_view(tt, begin.data()), {3, 2}),
            (std::vector<int64_t>{5, 9, 6, 10, 7, 11}));
  struct Case {
    const xdev_tensor_t* x;
    std::vector<int64_t> begin, end, strides;
    int64_t begin_mask, end_mask, new_axis_mask, shrink_axis_mask;
    std::vector<int64_t> shape, elements;
  };
  const std::vector<Case> cases = {
      // x[:, 3:0:-2]
      {&xt, {0, 3}, {3, 0}, {1, -2}, 1, 1, 0, 0, {3, 2}, {3, 1, 7, 5, 11, 9}},
      // x[-1, ::-1]
      {&xt, {-1, 0}, {0, 0}, {1, -1}, 2, 2, 0, 1, {4}, {11, 10, 9, 8}},
      // x[newaxis, 1, ::2]
      {&xt, {0, 1, 0}, {0, 2, 0}, {1, 1, 2}, 4, 4, 1, 2, {1, 2}, {4, 6}},
      // t[1:3, ::-1]
      {&tt, {1, 0}, {3, 0}, {1, -1}, 2, 2, 0, 0, {2, 3}, {9, 5, 1, 10, 6, 2}},
      // x[2:2]: empty
      {&xt, {2}, {2}, {1}, 0, 0, 0, 0, {0, 4}, {}},
      // x[2:3:2^63-1] and x[2:0:-2^63, ::-1]: a step never taken, which times
      // x's stride 4 would overflow (Dense::view_stride; UBSan builds)
      {&xt, {2, 0}, {3, 4}, {INT64_MAX, 1}, 0, 0, 0, 0, {1, 4}, {8, 9, 10, 11}},
      {&xt, {2, 3}, {0, 0}, {INT64_MIN, -1}, 0, 2, 0, 0, {1, 4}, {11, 10, 9, 8}},
  };
  for (const Case& c : cases) {
    xdev::strided_slice_spec::Dense dense;
    xdev::strided_slice_spec::make_dense(c.x->rank, c.x->shape, c.begin.data(), c.end.data(),
                                         c.strides.data(), static_cast<int64_t>(c.begin.size()),
                                         c.begin_mask, c.end_mask, 0, c.new_axis_mask,
                                         c.shrink_axis_mask, dense);
    ASSERT_EQ(dense.error[0], '\0') << dense.error;
    ASSERT_EQ(std::vector<int64_t>(dense.output_shape, dense.output_shape + dense.output_rank),
              c.shape);
    EXPECT_EQ(window_elements(xdev::cuda::strided_slice_view(*c.x, dense), c.shape), c.elements);
  }
}

// ---------------------------------------------------------------------------
// Sliding windows (window_plan.hpp, indexing.hpp): the images, the windows
// window_geometry.hpp gives, and the per-element bodies of window.cu's
// kernels, run here on the host against references written like the cpu
// plugin's loops (plugins/cpu/kernels/pool.cpp, conv.cpp).

namespace window_tests {

using xdev::cuda::ImageLayout;
using xdev::cuda::WindowAttrs;
using xdev::cuda::WindowLayout;

// A 4-d shape in data_format order from (n, h, w, c).
std::vector<int64_t> image_shape(int64_t n, int64_t h, int64_t w, int64_t c, bool nchw) {
  return nchw ? std::vector<int64_t>{n, c, h, w} : std::vector<int64_t>{n, h, w, c};
}

// The windows of `a` over an image of n x h x w x c, the output shape from
// xdev::window::resolve; false when they do not fit.
bool make_windows(const WindowAttrs& a, int64_t n, int64_t h, int64_t w, int64_t c, int64_t cout,
                  WindowLayout& l) {
  xdev::window::Axis y{h, a.kh, a.sy, a.dy}, x{w, a.kw, a.sx, a.dx};
  if (!xdev::window::resolve(y, a.same) || !xdev::window::resolve(x, a.same)) return false;
  const std::vector<int64_t> in = image_shape(n, h, w, c, a.nchw);
  const std::vector<int64_t> out = image_shape(n, y.out, x.out, cout, a.nchw);
  return xdev::cuda::plan_windows(a, in.data(), out.data(), l);
}

// Every geometry of small sizes: f(attrs, h, w).
template <typename F>
void for_geometries(bool dilations, F&& f) {
  for (bool nchw : {false, true}) {
    for (bool same : {false, true}) {
      for (int64_t k = 1; k <= 3; ++k) {
        for (int64_t s = 1; s <= 3; ++s) {
          for (int64_t d = 1; d <= (dilations ? 2 : 1); ++d) {
            for (int64_t h : {1, 2, 5, 7}) {
              WindowAttrs a;
              a.nchw = nchw;
              a.same = same;
              a.kh = k;
              a.kw = k == 3 ? 2 : k;  // also non-square windows
              a.sy = s;
              a.sx = s == 3 ? 1 : s;
              a.dy = d;
              a.dx = d;
              f(a, h, h + 1);
            }
          }
        }
      }
    }
  }
}

TEST(WindowPlan, ImagesAreIndexedRowMajorInDataFormatOrder) {
  for (bool nchw : {false, true}) {
    for (const auto& [n, h, w, c] : std::vector<std::array<int64_t, 4>>{
             {2, 3, 4, 5}, {1, 1, 1, 7}, {3, 5, 1, 1}, {2, 1, 1, 4}, {1, 2, 3, 1}}) {
      const std::vector<int64_t> shape = image_shape(n, h, w, c, nchw);
      const ImageLayout im = xdev::cuda::image_layout(shape.data(), nchw);
      EXPECT_EQ(im.nchw, nchw);
      EXPECT_EQ(im.n * im.step_n, n * h * w * c);
      int64_t i = 0;
      // Row-major order of the shape: the offsets count up from 0.
      for (int64_t b = 0; b < n; ++b) {
        for (int64_t o = 0; o < (nchw ? c : h); ++o) {
          for (int64_t p = 0; p < (nchw ? h : w); ++p) {
            for (int64_t q = 0; q < (nchw ? w : c); ++q, ++i) {
              const int64_t y = nchw ? p : o, x = nchw ? q : p, ch = nchw ? o : q;
              ASSERT_EQ(xdev::cuda::image_offset(im, b, y, x, ch), i);
              int64_t cb, cy, cx, cc;
              xdev::cuda::image_coordinates(im, i, &cb, &cy, &cx, &cc);
              ASSERT_EQ(std::make_tuple(cb, cy, cx, cc), std::make_tuple(b, y, x, ch))
                  << (nchw ? "NCHW" : "NHWC") << " element " << i;
            }
          }
        }
      }
    }
  }
}

TEST(WindowPlan, WindowsAreWindowGeometrysAndMustGiveTheOutput) {
  WindowAttrs a;
  a.kh = a.kw = 3;
  a.sy = a.sx = 2;
  a.same = true;
  const std::vector<int64_t> in{1, 5, 5, 2};
  WindowLayout l;
  // TensorFlow: SAME over 5 with 3 taps, stride 2: 3 outputs, 1 padding before.
  const std::vector<int64_t> same_out{1, 3, 3, 2};
  ASSERT_TRUE(xdev::cuda::plan_windows(a, in.data(), same_out.data(), l));
  EXPECT_EQ(l.py, 1);
  EXPECT_EQ(l.px, 1);
  a.same = false;  // VALID: 2 outputs, no padding
  EXPECT_FALSE(xdev::cuda::plan_windows(a, in.data(), same_out.data(), l));
  const std::vector<int64_t> valid_out{1, 2, 2, 2};
  ASSERT_TRUE(xdev::cuda::plan_windows(a, in.data(), valid_out.data(), l));
  EXPECT_EQ(l.py, 0);
  // Dilation 2: 3 taps cover 5 elements, one VALID window over 5, none over 4.
  a.sy = a.sx = 1;
  a.dy = a.dx = 2;
  const std::vector<int64_t> one{1, 1, 1, 2}, in4{1, 4, 4, 2};
  EXPECT_TRUE(xdev::cuda::plan_windows(a, in.data(), one.data(), l));
  EXPECT_FALSE(xdev::cuda::plan_windows(a, in4.data(), one.data(), l));
  // Another batch is refused.
  const std::vector<int64_t> batch2{2, 1, 1, 2};
  EXPECT_FALSE(xdev::cuda::plan_windows(a, in.data(), batch2.data(), l));
}

TEST(WindowPlan, TapWindowInvertsTapInput) {
  for_geometries(true, [](const WindowAttrs& a, int64_t h, int64_t w) {
    WindowLayout l;
    if (!make_windows(a, 1, h, w, 1, 1, l)) return;
    int64_t inside = 0, found = 0;
    for (int64_t oy = 0; oy < l.out.h; ++oy) {
      for (int64_t ox = 0; ox < l.out.w; ++ox) {
        for (int64_t ky = 0; ky < l.kh; ++ky) {
          for (int64_t kx = 0; kx < l.kw; ++kx) {
            int64_t iy, ix, by, bx;
            xdev::cuda::tap_input(l, oy, ox, ky, kx, &iy, &ix);
            if (iy < 0 || iy >= h || ix < 0 || ix >= w) continue;
            ++inside;
            ASSERT_TRUE(xdev::cuda::tap_window(l, iy, ix, ky, kx, &by, &bx));
            ASSERT_EQ(std::make_pair(by, bx), std::make_pair(oy, ox));
          }
        }
      }
    }
    for (int64_t iy = 0; iy < h; ++iy) {
      for (int64_t ix = 0; ix < w; ++ix) {
        for (int64_t ky = 0; ky < l.kh; ++ky) {
          for (int64_t kx = 0; kx < l.kw; ++kx) {
            int64_t oy, ox;
            found += xdev::cuda::tap_window(l, iy, ix, ky, kx, &oy, &ox) ? 1 : 0;
          }
        }
      }
    }
    EXPECT_EQ(found, inside);
  });
}

TEST(WindowPlan, CoveringWindowsAreExactlyThoseOverTheElement) {
  for_geometries(false, [](const WindowAttrs& a, int64_t h, int64_t w) {
    WindowLayout l;
    if (!make_windows(a, 1, h, w, 1, 1, l)) return;
    for (int64_t iy = 0; iy < h; ++iy) {
      int64_t first, last;
      xdev::cuda::covering_windows(iy, l.kh, l.sy, l.py, l.out.h, &first, &last);
      for (int64_t oy = 0; oy < l.out.h; ++oy) {
        const xdev::cuda::PoolTaps t = xdev::cuda::pool_taps(l, oy, 0);
        const bool covers = iy >= t.y0 + t.ky0 && iy < t.y0 + t.ky1;
        ASSERT_EQ(covers, oy >= first && oy <= last)
            << "element " << iy << " window " << oy << " of " << l.out.h;
      }
    }
  });
}

// pool.cpp's loops: the forward ops, and the gradients scattered window by
// window in row-major order (dx zeroed, T additions).
template <typename T>
void cpu_pools(const WindowLayout& l, const std::vector<T>& x, const std::vector<T>& dy,
               std::vector<T>& max, std::vector<T>& avg, std::vector<T>& dmax,
               std::vector<T>& davg) {
  max.assign(static_cast<size_t>(l.out.n * l.out.step_n), T(0));
  avg = max;
  dmax.assign(x.size(), T(0));
  davg = dmax;
  for (int64_t b = 0; b < l.out.n; ++b) {
    for (int64_t oy = 0; oy < l.out.h; ++oy) {
      for (int64_t ox = 0; ox < l.out.w; ++ox) {
        for (int64_t ch = 0; ch < l.out.c; ++ch) {
          const int64_t o = xdev::cuda::image_offset(l.out, b, oy, ox, ch);
          const int64_t y0 = oy * l.sy - l.py, x0 = ox * l.sx - l.px;
          int64_t best = -1, count = 0;
          double sum = 0;
          for (int64_t ky = std::max<int64_t>(0, -y0); ky < std::min(l.kh, l.in.h - y0); ++ky) {
            for (int64_t kx = std::max<int64_t>(0, -x0); kx < std::min(l.kw, l.in.w - x0);
                 ++kx) {
              const int64_t at = xdev::cuda::image_offset(l.in, b, y0 + ky, x0 + kx, ch);
              if (best < 0 || (!std::isnan(x[best]) && (std::isnan(x[at]) || x[at] > x[best]))) {
                best = at;
              }
              sum += static_cast<double>(x[at]);
              ++count;
            }
          }
          max[o] = x[best];
          avg[o] = static_cast<T>(sum / static_cast<double>(count));
          dmax[best] += dy[o];
          const T share = static_cast<T>(static_cast<double>(dy[o]) / static_cast<double>(count));
          for (int64_t ky = std::max<int64_t>(0, -y0); ky < std::min(l.kh, l.in.h - y0); ++ky) {
            for (int64_t kx = std::max<int64_t>(0, -x0); kx < std::min(l.kw, l.in.w - x0);
                 ++kx) {
              davg[xdev::cuda::image_offset(l.in, b, y0 + ky, x0 + kx, ch)] += share;
            }
          }
        }
      }
    }
  }
}

bool same_bits(float a, float b) { return std::memcmp(&a, &b, sizeof a) == 0; }

TEST(WindowPlan, PoolsAndTheirGradientsAreTheCpuPluginsTermForTerm) {
  std::mt19937_64 engine(77);
  // Few distinct values: ties in most windows; some NaNs.
  std::uniform_int_distribution<int> value(0, 3);
  std::uniform_real_distribution<float> grad(-1.0f, 1.0f);
  int checked = 0;
  for_geometries(false, [&](const WindowAttrs& a, int64_t h, int64_t w) {
    WindowLayout l;
    if (!make_windows(a, 2, h, w, 3, 3, l) || l.out.h * l.out.w == 0) return;
    std::vector<float> x(static_cast<size_t>(l.in.n * l.in.step_n));
    for (float& v : x) {
      v = value(engine) == 3 && engine() % 4 == 0 ? NAN : static_cast<float>(value(engine));
    }
    std::vector<float> dy(static_cast<size_t>(l.out.n * l.out.step_n));
    for (float& v : dy) v = grad(engine);
    std::vector<float> max, avg, dmax, davg;
    cpu_pools(l, x, dy, max, avg, dmax, davg);
    for (int64_t i = 0; i < static_cast<int64_t>(max.size()); ++i) {
      const float m = xdev::cuda::pool_element<float, true>(l, x.data(), i);
      ASSERT_TRUE(same_bits(m, max[i]) || (std::isnan(m) && std::isnan(max[i]))) << i;
      ASSERT_TRUE(same_bits(xdev::cuda::pool_element<float, false>(l, x.data(), i), avg[i]) ||
                  std::isnan(avg[i]))
          << i;
    }
    for (int64_t i = 0; i < static_cast<int64_t>(x.size()); ++i) {
      ASSERT_TRUE(same_bits(xdev::cuda::pool_grad_element<float, true>(l, x.data(), dy.data(), i),
                            dmax[i]))
          << "MaxPoolGrad element " << i;
      ASSERT_TRUE(same_bits(
          xdev::cuda::pool_grad_element<float, false>(l, nullptr, dy.data(), i), davg[i]))
          << "AvgPoolGrad element " << i;
    }
    ++checked;
  });
  EXPECT_GT(checked, 100);
}

// conv.cpp's definition, directly: y[b, oy, ox, co] = Σ x[b, iy, ix, ci] ·
// f[ky, kx, ci, co] over the taps inside the image, in double.
struct Conv {
  WindowLayout l;
  std::vector<double> x, f, dy;
};

TEST(WindowPlan, ColumnChunksAndDirectKernelsGiveTheConvolutionsAndTheirGradients) {
  std::mt19937_64 engine(78);
  std::uniform_real_distribution<double> real(-1, 1);
  int checked = 0;
  for_geometries(true, [&](const WindowAttrs& a, int64_t h, int64_t w) {
    Conv c;
    const int64_t cin = 2, cout = 3;
    WindowLayout& l = c.l;
    if (!make_windows(a, 2, h, w, cin, cout, l) || l.out.h * l.out.w == 0) return;
    const int64_t width = l.kh * l.kw * cin, positions = l.out.h * l.out.w;
    const int64_t total = l.out.n * positions;
    c.x.resize(static_cast<size_t>(l.in.n * l.in.step_n));
    c.f.resize(static_cast<size_t>(width * cout));
    c.dy.resize(static_cast<size_t>(l.out.n * l.out.step_n));
    for (auto* v : {&c.x, &c.f, &c.dy}) {
      for (double& e : *v) e = real(engine);
    }
    // References: y, dx, dfilter by the definition.
    std::vector<double> y(c.dy.size(), 0.0), dx(c.x.size(), 0.0), df(c.f.size(), 0.0);
    for (int64_t b = 0; b < l.out.n; ++b) {
      for (int64_t oy = 0; oy < l.out.h; ++oy) {
        for (int64_t ox = 0; ox < l.out.w; ++ox) {
          for (int64_t ky = 0; ky < l.kh; ++ky) {
            for (int64_t kx = 0; kx < l.kw; ++kx) {
              int64_t iy, ix;
              xdev::cuda::tap_input(l, oy, ox, ky, kx, &iy, &ix);
              if (iy < 0 || iy >= l.in.h || ix < 0 || ix >= l.in.w) continue;
              for (int64_t ci = 0; ci < cin; ++ci) {
                for (int64_t co = 0; co < cout; ++co) {
                  const int64_t xi = xdev::cuda::image_offset(l.in, b, iy, ix, ci);
                  const int64_t yi = xdev::cuda::image_offset(l.out, b, oy, ox, co);
                  const int64_t fi = ((ky * l.kw + kx) * cin + ci) * cout + co;
                  y[yi] += c.x[xi] * c.f[fi];
                  dx[xi] += c.dy[yi] * c.f[fi];
                  df[fi] += c.x[xi] * c.dy[yi];
                }
              }
            }
          }
        }
      }
    }
    // The direct kernels' elements (no scratch for the columns).
    for (size_t i = 0; i < y.size(); ++i) {
      ASSERT_NEAR((xdev::cuda::conv_tap_sum<double, false>(l, c.x.data(), c.f.data(), i)), y[i],
                  1e-12);
    }
    for (size_t i = 0; i < dx.size(); ++i) {
      ASSERT_NEAR((xdev::cuda::conv_tap_sum<double, true>(l, c.dy.data(), c.f.data(), i)), dx[i],
                  1e-12);
    }
    for (size_t i = 0; i < df.size(); ++i) {
      ASSERT_NEAR(xdev::cuda::conv_filter_element(l, c.x.data(), c.dy.data(), i), df[i], 1e-12);
    }
    // ops_window.cpp's way, chunk by chunk, with plain loops for cuBLAS.
    for (int64_t rows : {int64_t{1}, int64_t{3}, total}) {
      std::vector<double> gy(y.size(), 0.0), gdx(dx.size(), 0.0), gdf(df.size(), 0.0);
      for (int64_t r0 = 0; r0 < total; r0 += rows) {
        const int64_t n = std::min(rows, total - r0);
        std::vector<double> col(static_cast<size_t>(n * width)), back(col.size(), 0.0);
        for (int64_t i = 0; i < n * width; ++i) {
          col[i] = xdev::cuda::im2col_element(l, c.x.data(), r0, i);
        }
        xdev::cuda::for_image_segments(r0, r0 + n, positions, [&](int64_t b, int64_t p0,
                                                                  int64_t p1) {
          for (int64_t p = p0; p < p1; ++p) {
            const int64_t r = b * positions + p - r0;
            for (int64_t co = 0; co < cout; ++co) {
              const int64_t yi = xdev::cuda::image_offset(l.out, b, p / l.out.w, p % l.out.w, co);
              for (int64_t k = 0; k < width; ++k) {
                gy[yi] += col[r * width + k] * c.f[k * cout + co];
                back[r * width + k] += c.dy[yi] * c.f[k * cout + co];
                gdf[k * cout + co] += col[r * width + k] * c.dy[yi];
              }
            }
          }
        });
        for (int64_t i = 0; i < static_cast<int64_t>(gdx.size()); ++i) {
          gdx[i] += xdev::cuda::col2im_element(l, back.data(), r0, n, i);
        }
      }
      SCOPED_TRACE("rows per chunk " + std::to_string(rows));
      for (size_t i = 0; i < y.size(); ++i) ASSERT_NEAR(gy[i], y[i], 1e-12) << "Conv2D " << i;
      for (size_t i = 0; i < dx.size(); ++i) {
        ASSERT_NEAR(gdx[i], dx[i], 1e-12) << "input grad " << i;
      }
      for (size_t i = 0; i < df.size(); ++i) {
        ASSERT_NEAR(gdf[i], df[i], 1e-12) << "filter grad " << i;
      }
    }
    ++checked;
  });
  EXPECT_GT(checked, 100);
}

TEST(WindowPlan, ColumnChunksFitTheBudgetAndSegmentsCoverTheirRows) {
  WindowAttrs a;
  a.kh = a.kw = 3;
  a.same = true;
  WindowLayout l;
  ASSERT_TRUE(make_windows(a, 4, 5, 6, 7, 2, l));
  const int64_t width = 3 * 3 * 7, total = 4 * 5 * 6;
  for (uint64_t budget : {uint64_t{0}, uint64_t{100}, uint64_t{width * 8 * 7 + 5},
                          uint64_t{1} << 30}) {
    const xdev::cuda::ColumnPlan p = xdev::cuda::plan_columns(l, 8, budget);
    EXPECT_EQ(p.total_rows, total);
    EXPECT_EQ(p.width, width);
    EXPECT_GE(p.rows, 1);
    EXPECT_LE(p.rows, total);
    EXPECT_TRUE(p.rows == 1 || p.bytes() <= budget) << budget;
    EXPECT_TRUE(p.rows == total || p.bytes() + width * 8 > budget) << "the largest that fits";
  }
  WindowLayout none = l;
  none.out.n = 0;
  EXPECT_EQ(xdev::cuda::plan_columns(none, 8, 1 << 20).rows, 0);
  const int64_t positions = 30;
  for (int64_t rows : {1, 7, 30, 31, 120}) {
    std::vector<int> seen(static_cast<size_t>(total), 0);
    for (int64_t r0 = 0; r0 < total; r0 += rows) {
      const int64_t r1 = std::min(total, r0 + rows);
      int64_t next = r0;
      xdev::cuda::for_image_segments(r0, r1, positions, [&](int64_t b, int64_t p0, int64_t p1) {
        EXPECT_EQ(b * positions + p0, next);
        EXPECT_LT(p0, p1);
        EXPECT_LE(p1, positions);
        for (int64_t p = p0; p < p1; ++p) ++seen[static_cast<size_t>(b * positions + p)];
        next = b * positions + p1;
      });
      EXPECT_EQ(next, r1);
    }
    EXPECT_EQ(std::count(seen.begin(), seen.end(), 1), total) << rows;
  }
}

}  // namespace window_tests
