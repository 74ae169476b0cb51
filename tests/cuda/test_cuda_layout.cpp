// The cuda plugin's host-side logic, on the host (no GPU needed): the
// simplified layouts (plugins/cuda/layout.cpp) and the offset functions the
// kernels use (plugins/cuda/indexing.hpp) must address exactly the elements
// that naive strided indexing does, for random shapes, broadcasts, strides
// (also negative and padded), reduction axes and the NN ops' broadcasts
// (BiasAdd, SoftmaxCrossEntropyWithLogits, LayerNorm); the reduction plans
// (reduce_plan.hpp) cover every input and pick the issue 20 strategies; the
// device guard (device_guard.hpp) restores exactly the caller's context; and
// the MatMul error bound of the GPU tests (matmul_bound.hpp) rejects TF32.
#include <gtest/gtest.h>

#include <algorithm>
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
// Reduction plans (issue 20)

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
  // The case: [1e6, 64] over the last axis used to launch a million
  // 256-thread blocks with 64 elements each.
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
// The device guard (issue 20), with fake contexts: contexts are the numbers
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
// The MatMul error bound of the GPU tests (issue 20): a float32 product
// meets it, the same product with TF32 inputs does not, on the shapes of
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
