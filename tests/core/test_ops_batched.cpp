// BatchMatMulV2, TensorScatterAdd and split through the public SDK against
// products and sums computed here on the host (TensorFlow's tf.linalg.matmul
// on batches, tf.tensor_scatter_nd_add, tf.split): broadcast batch axes,
// adjoints, strided (transposed) inputs, every dtype, empty inputs, large
// inputs on the parallel paths, views, refused calls naming the op and the
// value at fault.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <xdev/xdev.hpp>

#include "op_values.hpp"

namespace {

using xdev::DType;
using xdev::Shape;
using xdev::Tensor;
using namespace xdev_test;

// Small integers (exact in every dtype and every summation order).
std::vector<int64_t> small_values(int64_t n, uint64_t seed) {
  std::mt19937_64 random(seed);
  std::vector<int64_t> v(static_cast<size_t>(n));
  for (int64_t& e : v) e = static_cast<int64_t>(random() % 7) - 3;
  return v;
}

Tensor tensor_of(const std::vector<int64_t>& v, const Shape& shape, DType dtype) {
  return xdev::cast(xdev::constant(v, shape), dtype);
}

// The product of host values: x [bx..., m, k] (adj: [bx..., k, m]) and y,
// batch axes broadcast; returns the output shape in `shape`.
std::vector<int64_t> host_batch_matmul(const std::vector<int64_t>& x, const Shape& xs,
                                       const std::vector<int64_t>& y, const Shape& ys, bool ax,
                                       bool ay, Shape& shape) {
  const size_t xr = xs.size(), yr = ys.size(), r = std::max(xr, yr);
  const int64_t m = xs[ax ? xr - 1 : xr - 2], k = xs[ax ? xr - 2 : xr - 1];
  const int64_t n = ys[ay ? yr - 2 : yr - 1];
  shape = Shape{};
  for (size_t i = 0; i + 2 < r; ++i) {
    const size_t from_end = r - i;
    const int64_t dx = from_end <= xr ? xs[xr - from_end] : 1;
    const int64_t dy = from_end <= yr ? ys[yr - from_end] : 1;
    shape.push_back(dx == 1 ? dy : dx);
  }
  shape.push_back(m);
  shape.push_back(n);
  const int64_t batches = shape.num_elements() / std::max<int64_t>(m * n, 1);
  auto base = [&](const Shape& s, int64_t b) {
    int64_t index = 0, stride = s[s.size() - 1] * s[s.size() - 2];
    for (size_t from_end = 3; from_end <= r; ++from_end) {
      const int64_t d = shape[r - from_end];
      const int64_t at = b % d;
      b /= d;
      if (from_end <= s.size()) {
        if (s[s.size() - from_end] != 1) index += at * stride;
        stride *= s[s.size() - from_end];
      }
    }
    return index;
  };
  std::vector<int64_t> out(static_cast<size_t>(batches * m * n));
  for (int64_t b = 0; b < batches; ++b) {
    const int64_t xb = base(xs, b), yb = base(ys, b);
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        int64_t sum = 0;
        for (int64_t p = 0; p < k; ++p) {
          sum += x[static_cast<size_t>(xb + (ax ? p * m + i : i * k + p))] *
                 y[static_cast<size_t>(yb + (ay ? j * k + p : p * n + j))];
        }
        out[static_cast<size_t>((b * m + i) * n + j)] = sum;
      }
    }
  }
  return out;
}

void expect_batch_matmul(const Shape& xs, const Shape& ys, bool ax, bool ay, DType dtype) {
  const std::vector<int64_t> x = small_values(xs.num_elements(), 1), y = small_values(ys.num_elements(), 2);
  Shape want_shape;
  const std::vector<int64_t> want = host_batch_matmul(x, xs, y, ys, ax, ay, want_shape);
  const Tensor out = xdev::batch_matmul(tensor_of(x, xs, dtype), tensor_of(y, ys, dtype), ax, ay);
  EXPECT_EQ(out.shape(), want_shape);
  EXPECT_EQ(out.dtype(), dtype);
  EXPECT_EQ(xdev::cast(out, DType::kInt64).to_vector<int64_t>(), want)
      << "x " << xs << (ax ? " adj" : "") << ", y " << ys << (ay ? " adj" : "") << ", "
      << xdev::to_string(dtype);
}

TEST(OpsBatched, BatchMatMulOfTheExample) {
  const Tensor x = xdev::constant({{{1.0f, 2.0f}}, {{3.0f, 4.0f}}});  // [2, 1, 2]
  const Tensor y = xdev::constant({{1.0f, 2.0f}, {3.0f, 4.0f}});      // [2, 2]
  const Tensor out = xdev::batch_matmul(x, y);
  EXPECT_EQ(out.shape(), (Shape{2, 1, 2}));
  EXPECT_EQ(out.to_vector<float>(), (std::vector<float>{7, 10, 15, 22}));
  EXPECT_EQ(xdev::batch_matmul(x, y, false, true).to_vector<float>(),
            (std::vector<float>{5, 11, 11, 25}));
  // Rank 2 is MatMul.
  EXPECT_EQ(xdev::batch_matmul(y, y, true, false).to_vector<float>(),
            xdev::matmul(y, y, true, false).to_vector<float>());
}

TEST(OpsBatched, BatchMatMulBroadcastsEveryDtypeAndAdjoint) {
  struct Spec {
    Shape x, y;  // without adjoints
  };
  const Spec specs[] = {{{3, 2, 4}, {3, 4, 5}}, {{2, 1, 3, 4}, {5, 4, 2}},
                        {{4, 3}, {2, 2, 3, 2}}, {{1, 2, 3}, {4, 1, 3, 1}}};
  for (DType dtype : {DType::kFloat32, DType::kFloat64, DType::kInt32, DType::kInt64}) {
    for (const Spec& s : specs) {
      for (int t = 0; t < 4; ++t) {
        const bool ax = (t & 1) != 0, ay = (t & 2) != 0;
        Shape xs = s.x, ys = s.y;
        if (ax) std::swap(xs[xs.size() - 1], xs[xs.size() - 2]);
        if (ay) std::swap(ys[ys.size() - 1], ys[ys.size() - 2]);
        expect_batch_matmul(xs, ys, ax, ay, dtype);
      }
    }
  }
}

TEST(OpsBatched, BatchMatMulTakesTransposedViews) {
  // x [2, 3, 4] built as a transposed view of [2, 4, 3]: the core makes it
  // contiguous first (the op needs row-major inputs).
  const std::vector<int64_t> raw = small_values(24, 3);
  const Tensor stored = tensor_of(raw, Shape{2, 4, 3}, DType::kFloat32);
  const Tensor view = xdev::transpose(stored, {0, 2, 1});
  const std::vector<int64_t> y = small_values(8, 4);
  const Tensor yt = tensor_of(y, Shape{4, 2}, DType::kFloat32);
  Shape shape;
  // The same product as adj_x on the stored tensor.
  const std::vector<int64_t> want = host_batch_matmul(raw, Shape{2, 4, 3}, y, Shape{4, 2}, true, false, shape);
  EXPECT_EQ(xdev::cast(xdev::batch_matmul(view, yt), DType::kInt64).to_vector<int64_t>(), want);
  EXPECT_EQ(xdev::cast(xdev::batch_matmul(stored, yt, true), DType::kInt64).to_vector<int64_t>(),
            want);
}

TEST(OpsBatched, BatchMatMulOfEmptyAndLargeBatches) {
  EXPECT_EQ(xdev::batch_matmul(xdev::zeros(Shape{0, 2, 3}), xdev::zeros(Shape{3, 4})).shape(),
            (Shape{0, 2, 4}));
  // K = 0: zeros.
  const Tensor z = xdev::batch_matmul(xdev::zeros(Shape{3, 2, 0}), xdev::zeros(Shape{3, 0, 4}));
  EXPECT_EQ(z.shape(), (Shape{3, 2, 4}));
  EXPECT_EQ(z.to_vector<float>(), std::vector<float>(24, 0.0f));
  // Many small matrices (split over the threads), integers on the loops,
  // floats on BLAS; large matrices (BLAS, tiled).
  expect_batch_matmul(Shape{5000, 3, 4}, Shape{4, 2}, false, false, DType::kInt32);
  expect_batch_matmul(Shape{700, 9, 10}, Shape{700, 11, 10}, false, true, DType::kFloat32);
  expect_batch_matmul(Shape{4, 150, 140}, Shape{1, 140, 130}, false, false, DType::kFloat64);
  expect_batch_matmul(Shape{3, 100, 90}, Shape{3, 100, 80}, true, false, DType::kInt64);
}

TEST(OpsBatched, BatchMatMulRefusesWhatItCannotMultiply) {
  const Tensor m = xdev::zeros(Shape{2, 3, 4});
  expect_refused([&] { xdev::batch_matmul(xdev::zeros(Shape{4}), m); },
                 {"BatchMatMulV2", "rank >= 2", "(4,)"});
  expect_refused([&] { xdev::batch_matmul(m, xdev::zeros(Shape{2, 3, 4})); },
                 {"BatchMatMulV2", "inner dimensions", "4 vs 3"});
  expect_refused([&] { xdev::batch_matmul(m, xdev::zeros(Shape{3, 4, 5})); },
                 {"BatchMatMulV2", "batch", "2 vs 3"});
  expect_refused([&] { xdev::batch_matmul(m, xdev::zeros(Shape{4, 5}, DType::kFloat64)); },
                 {"BatchMatMulV2", "float64"});
  expect_refused([&] { xdev::batch_matmul(xdev::zeros(Shape{2, 2}, DType::kBool),
                                          xdev::zeros(Shape{2, 2}, DType::kBool)); },
                 {"BatchMatMulV2", "bool"});
}

TEST(OpsBatched, TensorScatterAddOfTheExample) {
  const Tensor t = xdev::zeros(Shape{4});
  const Tensor i = xdev::constant({{1}, {3}, {1}});
  const Tensor out = xdev::tensor_scatter_add(t, i, xdev::constant({1.0f, 2.0f, 5.0f}));
  EXPECT_EQ(out.to_vector<float>(), (std::vector<float>{0, 6, 0, 2}));
  // The input is not changed.
  EXPECT_EQ(t.to_vector<float>(), (std::vector<float>{0, 0, 0, 0}));
}

TEST(OpsBatched, TensorScatterAddOfSlicesElementsAndDtypes) {
  for (DType dtype : {DType::kFloat32, DType::kFloat64, DType::kInt32, DType::kInt64}) {
    for (DType index_dtype : {DType::kInt32, DType::kInt64}) {
      // Depth 1 into a matrix: whole rows, row 2 twice.
      const Tensor m = tensor_of({1, 2, 3, 4, 5, 6}, Shape{3, 2}, dtype);
      const Tensor rows = tensor_of({2, 0, 2}, Shape{3, 1}, index_dtype);
      const Tensor upd = tensor_of({10, 20, 30, 40, 50, 60}, Shape{3, 2}, dtype);
      const Tensor out = xdev::tensor_scatter_add(m, rows, upd);
      EXPECT_EQ(out.dtype(), dtype);
      EXPECT_EQ(xdev::cast(out, DType::kInt64).to_vector<int64_t>(),
                (std::vector<int64_t>{31, 42, 3, 4, 65, 86}));
      // Depth 2: single elements of a [2, 2, 2] tensor, each a [2] slice.
      const Tensor cube = tensor_of(std::vector<int64_t>(8, 1), Shape{2, 2, 2}, dtype);
      const Tensor at = tensor_of({1, 0, 0, 1}, Shape{2, 2}, index_dtype);
      const Tensor add = tensor_of({1, 2, 3, 4}, Shape{2, 2}, dtype);
      EXPECT_EQ(xdev::cast(xdev::tensor_scatter_add(cube, at, add), DType::kInt64).to_vector<int64_t>(),
                (std::vector<int64_t>{1, 1, 4, 5, 2, 3, 1, 1}));
    }
  }
  // No indices: a copy.
  const Tensor v = xdev::constant({1.5, 2.5});
  EXPECT_EQ(xdev::tensor_scatter_add(v, xdev::zeros(Shape{0, 1}, DType::kInt32),
                                     xdev::zeros(Shape{0}, DType::kFloat64))
                .to_vector<double>(),
            (std::vector<double>{1.5, 2.5}));
  // int32 wraps.
  EXPECT_EQ(xdev::tensor_scatter_add(xdev::constant({2147483647}), xdev::constant({{0}}),
                                     xdev::constant({1}))
                .to_vector<int32_t>(),
            (std::vector<int32_t>{INT32_MIN}));
}

// Many updates into narrow rows (the bucketed parallel path) and a few into
// wide rows (split by columns): every duplicate counted.
TEST(OpsBatched, TensorScatterAddOfLargeInputs) {
  std::mt19937_64 random(7);
  const int64_t n = 100000, updates = 300000;
  std::vector<int64_t> index(static_cast<size_t>(updates)), want(static_cast<size_t>(n), 0);
  for (int64_t& i : index) {
    i = static_cast<int64_t>(random() % static_cast<uint64_t>(n));
    want[static_cast<size_t>(i)] += i % 5;
  }
  std::vector<int64_t> values(static_cast<size_t>(updates));
  for (size_t j = 0; j < values.size(); ++j) values[j] = index[j] % 5;
  const Tensor out = xdev::tensor_scatter_add(
      xdev::zeros(Shape{n}, DType::kInt64), xdev::constant(index, Shape{updates, 1}),
      xdev::constant(values, Shape{updates}));
  EXPECT_EQ(out.to_vector<int64_t>(), want);

  const int64_t wide = 50000;
  const Tensor rows = xdev::tensor_scatter_add(
      xdev::zeros(Shape{3, wide}), xdev::constant({{1}, {1}, {0}}), xdev::ones(Shape{3, wide}));
  const std::vector<float> got = rows.to_vector<float>();
  EXPECT_EQ(got[0], 1.0f);
  EXPECT_EQ(got[static_cast<size_t>(wide + 123)], 2.0f);
  EXPECT_EQ(got[static_cast<size_t>(2 * wide + 7)], 0.0f);
  EXPECT_EQ(got[static_cast<size_t>(2 * wide - 1)], 2.0f);
}

TEST(OpsBatched, TensorScatterAddRefusesAnIndexOutOfRange) {
  const Tensor t = xdev::zeros(Shape{3, 2});
  for (int64_t bad : {int64_t{3}, int64_t{-1}, INT64_MAX}) {
    const Tensor indices = xdev::constant(std::vector<int64_t>{0, 1, 1, bad}, Shape{2, 2});
    expect_refused([&] { xdev::tensor_scatter_add(t, indices, xdev::zeros(Shape{2})).to_vector<float>(); },
                   {"TensorScatterAdd", "index " + std::to_string(bad), "element 3", "[0, 2)"});
  }
  expect_refused([&] { xdev::tensor_scatter_add(t, xdev::constant({{0.0}}), xdev::zeros(Shape{1, 2})); },
                 {"TensorScatterAdd", "indices", "float64"});
  expect_refused([&] { xdev::tensor_scatter_add(t, xdev::constant({{0}}), xdev::zeros(Shape{1, 3})); },
                 {"TensorScatterAdd", "updates of shape (1, 3)", "(1, 2)"});
  expect_refused([&] { xdev::tensor_scatter_add(t, xdev::constant({{0, 0, 0}}), xdev::zeros(Shape{1})); },
                 {"TensorScatterAdd", "index 3 axes", "(3, 2)"});
  // An index into an empty axis: the output is empty, the call still refused.
  expect_refused([&] { xdev::tensor_scatter_add(xdev::zeros(Shape{0, 2}), xdev::constant({{0}}),
                                                xdev::zeros(Shape{1, 2})); },
                 {"TensorScatterAdd", "index axis 0", "(0, 2)", "[0, 0)"});
  // No index rows into an empty axis: nothing to add.
  EXPECT_EQ(xdev::tensor_scatter_add(xdev::zeros(Shape{0, 2}), xdev::zeros(Shape{0, 1}, DType::kInt32),
                                     xdev::zeros(Shape{0, 2})).shape(),
            (Shape{0, 2}));
  expect_refused([&] { xdev::tensor_scatter_add(t, xdev::constant(0), xdev::zeros(Shape{2})); },
                 {"TensorScatterAdd", "rank >= 1"});
  expect_refused([&] { xdev::tensor_scatter_add(t, xdev::constant({{0}}), xdev::zeros(Shape{1, 2}, DType::kFloat64)); },
                 {"TensorScatterAdd", "float64"});
}

TEST(OpsBatched, SplitMakesEqualViews) {
  const Tensor x = xdev::cast(xdev::constant(std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11},
                                             Shape{2, 6}),
                              DType::kInt32);
  const std::vector<Tensor> cols = xdev::split(x, 3, -1);
  ASSERT_EQ(cols.size(), 3U);
  EXPECT_EQ(cols[1].shape(), (Shape{2, 2}));
  EXPECT_EQ(cols[1].to_vector<int32_t>(), (std::vector<int32_t>{2, 3, 8, 9}));
  EXPECT_EQ(cols[2].to_vector<int32_t>(), (std::vector<int32_t>{4, 5, 10, 11}));
  EXPECT_EQ(cols[1].strides(), (Shape{6, 1}));  // x's: the same storage, no copy
  const std::vector<Tensor> rows = xdev::split(x, 2);
  EXPECT_EQ(rows[1].to_vector<int32_t>(), (std::vector<int32_t>{6, 7, 8, 9, 10, 11}));
  EXPECT_TRUE(rows[1].is_contiguous());
  // Pieces of a transposed view; of an empty axis.
  const std::vector<Tensor> t = xdev::split(xdev::transpose(x), 2, 1);
  EXPECT_EQ(t[1].to_vector<int32_t>(), (std::vector<int32_t>{6, 7, 8, 9, 10, 11}));
  const std::vector<Tensor> none = xdev::split(xdev::zeros(Shape{0, 4}), 2, 1);
  EXPECT_EQ(none[1].shape(), (Shape{0, 2}));
  // The pieces are tensors like any other.
  EXPECT_EQ(xdev::add(cols[0], cols[2]).to_vector<int32_t>(), (std::vector<int32_t>{4, 6, 16, 18}));
}

TEST(OpsBatched, SplitVMakesViewsOfTheGivenSizes) {
  const Tensor x = xdev::constant(std::vector<double>{0, 1, 2, 3, 4, 5, 6}, Shape{7});
  const std::vector<Tensor> p = xdev::split(x, std::vector<int64_t>{2, -1, 0, 1});
  ASSERT_EQ(p.size(), 4U);
  EXPECT_EQ(p[0].to_vector<double>(), (std::vector<double>{0, 1}));
  EXPECT_EQ(p[1].to_vector<double>(), (std::vector<double>{2, 3, 4, 5}));
  EXPECT_EQ(p[2].shape(), (Shape{0}));
  EXPECT_EQ(p[3].to_vector<double>(), (std::vector<double>{6}));
  EXPECT_EQ(xdev::split(x, std::vector<int64_t>{7}, -1)[0].to_vector<double>(),
            x.to_vector<double>());
}

TEST(OpsBatched, SplitRefusesSizesThatDoNotFit) {
  const Tensor x = xdev::zeros(Shape{2, 6});
  expect_refused([&] { xdev::split(x, 4, 1); }, {"Split", "num_split 4", "dimension 6", "(2, 6)"});
  expect_refused([&] { xdev::split(x, 0, 1); }, {"Split", "num_split 0", ">= 1"});
  expect_refused([&] { xdev::split(x, 2, 2); }, {"Split", "axis 2", "(2, 6)"});
  expect_refused([&] { xdev::split(x, std::vector<int64_t>{-1, -1}, 1); },
                 {"SplitV", "{-1, -1}", "more than one -1"});
  expect_refused([&] { xdev::split(x, std::vector<int64_t>{2, 3}, 1); },
                 {"SplitV", "{2, 3}", "adds up to 5", "6"});
  expect_refused([&] { xdev::split(x, std::vector<int64_t>{4, 4, -1}, 1); },
                 {"SplitV", "more than the axis' 6"});
  expect_refused([&] { xdev::split(x, std::vector<int64_t>{INT64_MAX, INT64_MAX}, 1); },
                 {"SplitV", "more than the axis"});
  expect_refused([&] { xdev::split(x, std::vector<int64_t>{-2, 8}, 1); },
                 {"SplitV", "negative"});
  expect_refused([&] { xdev::split(x, std::vector<int64_t>{}, 1); }, {"SplitV", "empty"});
}

}  // namespace
