// The cuda plugin's index arithmetic, on the host (no GPU needed): the
// simplified layouts (plugins/cuda/layout.cpp) and the offset functions the
// kernels use (plugins/cuda/indexing.hpp) must address exactly the elements
// that naive strided indexing does, for random shapes, broadcasts, strides
// (also negative and padded) and reduction axes.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "indexing.hpp"
#include "layout.hpp"

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

TEST(CudaLayout, ElementwiseOffsetsMatchNaiveIndexing) {
  std::mt19937_64 rng(12345);
  const int64_t dims[] = {1, 2, 3, 5};
  for (int trial = 0; trial < 3000; ++trial) {
    const size_t rank = rng() % 7;
    std::vector<int64_t> out_shape(rank);
    for (auto& d : out_shape) d = dims[rng() % 4];
    View out{out_shape, {}};
    View in[2];
    for (auto& v : in) {
      const size_t r = rng() % (rank + 1);  // lower ranks align right
      v.shape.assign(out_shape.end() - static_cast<std::ptrdiff_t>(r), out_shape.end());
      for (auto& d : v.shape) {
        if (rng() % 4 == 0) d = 1;  // broadcast along this axis
      }
      v.strides = random_strides(v.shape, rng);
    }
    const xdev_tensor_t out_t = out.tensor();
    const xdev_tensor_t in_t[2] = {in[0].tensor(), in[1].tensor()};
    const xdev_tensor_t* inputs[2] = {&in_t[0], &in_t[1]};
    const int count = 1 + static_cast<int>(rng() % 2);
    const ElementwiseLayout l = xdev::cuda::elementwise_layout(out_t, inputs, count);
    SCOPED_TRACE("trial " + std::to_string(trial) + ": in0 " + in[0].text() + ", in1 " +
                 in[1].text());
    int64_t total = 1;
    for (auto d : out_shape) total *= d;
    ASSERT_EQ(l.count, total);
    ASSERT_LE(l.rank, static_cast<int32_t>(rank));
    ASSERT_TRUE(l.small);
    for (int64_t i = 0; i < total; ++i) {
      const std::vector<int64_t> c = coordinates(i, out_shape);
      int64_t want[2] = {0, 0};
      for (int n = 0; n < count; ++n) {
        const View& v = in[n];
        for (size_t td = 0; td < v.shape.size(); ++td) {
          const size_t d = td + (rank - v.shape.size());
          if (v.shape[td] != 1) want[n] += c[d] * v.strides[td];
        }
      }
      int64_t got64[2];
      xdev::cuda::input_offsets<int64_t, 2>(l, i, got64);
      int32_t got32[2];
      xdev::cuda::input_offsets<int32_t, 2>(l, static_cast<int32_t>(i), got32);
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

}  // namespace
