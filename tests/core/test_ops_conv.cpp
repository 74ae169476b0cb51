// Conv2D, its two gradients and the pooling ops through the public SDK
// (TensorFlow semantics, docs/ops.md): a 3x3 image under a 2x2 filter
// computed by hand (VALID, SAME with the padding after, strides, dilations,
// channels, NCHW), the gradients against central differences of the forward
// ops in float64, float32 Conv2D and its input's gradient against float64
// sums (the cpu plugin's direct kernel), the parallel path, and refused
// calls naming the op and the values at fault.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
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

// [[1, 2, 3], [4, 5, 6], [7, 8, 9]] as a [1, 3, 3, 1] image (also NCHW).
Tensor image3x3() {
  return xdev::constant(std::vector<double>{1, 2, 3, 4, 5, 6, 7, 8, 9}, Shape{1, 3, 3, 1});
}
// [[1, 2], [3, 4]] as a [2, 2, 1, 1] filter.
Tensor filter2x2() { return xdev::constant(std::vector<double>{1, 2, 3, 4}, Shape{2, 2, 1, 1}); }

std::vector<double> values(const Tensor& t) { return t.to_vector<double>(); }

TEST(OpsConv, Conv2DOfA3x3ImageByHand) {
  // VALID: 1·1 + 2·2 + 4·3 + 5·4 = 37, then 47, 67, 77.
  const Tensor valid = xdev::conv2d(image3x3(), filter2x2(), {1, 1}, "VALID");
  EXPECT_EQ(valid.shape(), (Shape{1, 2, 2, 1}));
  EXPECT_EQ(values(valid), (std::vector<double>{37, 47, 67, 77}));
  // SAME: 3x3 out, pad_total = (3 − 1)·1 + 2 − 3 = 1, all of it after.
  const Tensor same = xdev::conv2d(image3x3(), filter2x2(), {1, 1}, "SAME");
  EXPECT_EQ(values(same), (std::vector<double>{37, 47, 21, 67, 77, 33, 23, 26, 9}));
  // TensorFlow's 4 strides; stride 2 SAME: out ceil(3 / 2) = 2, padding 1 after.
  EXPECT_EQ(values(xdev::conv2d(image3x3(), filter2x2(), {1, 2, 2, 1}, "SAME")),
            (std::vector<double>{37, 21, 23, 9}));
  // Dilation 2: the taps 1, 3, 7, 9: 1 + 6 + 21 + 36.
  EXPECT_EQ(values(xdev::conv2d(image3x3(), filter2x2(), {1, 1}, "VALID", "NHWC", {2, 2})),
            (std::vector<double>{64}));
  // Stride 3 > the filter: one window.
  EXPECT_EQ(values(xdev::conv2d(image3x3(), filter2x2(), {3, 3}, "VALID")),
            (std::vector<double>{37}));
  // NCHW [1, 1, 3, 3] of one channel is the same image.
  const Tensor nchw = xdev::reshape(image3x3(), Shape{1, 1, 3, 3});
  const Tensor same_nchw = xdev::conv2d(nchw, filter2x2(), {1, 1}, "SAME", "NCHW");
  EXPECT_EQ(same_nchw.shape(), (Shape{1, 1, 3, 3}));
  EXPECT_EQ(values(same_nchw), values(same));
}

TEST(OpsConv, Conv2DMixesChannelsThroughTheFilter) {
  // One pixel of channels (1, 2); filter [1, 1, 2, 3] = [[1, 2, 3], [4, 5, 6]].
  const Tensor x = xdev::constant(std::vector<float>{1, 2}, Shape{1, 1, 1, 2});
  const Tensor w = xdev::constant(std::vector<float>{1, 2, 3, 4, 5, 6}, Shape{1, 1, 2, 3});
  EXPECT_EQ(xdev::conv2d(x, w, {1, 1}, "VALID").to_vector<float>(),
            (std::vector<float>{9, 12, 15}));
  // NCHW: [1, 2, 1, 1] in, [1, 3, 1, 1] out.
  const Tensor xc = xdev::constant(std::vector<float>{1, 2}, Shape{1, 2, 1, 1});
  const Tensor yc = xdev::conv2d(xc, w, {1, 1}, "VALID", "NCHW");
  EXPECT_EQ(yc.shape(), (Shape{1, 3, 1, 1}));
  EXPECT_EQ(yc.to_vector<float>(), (std::vector<float>{9, 12, 15}));
  // An empty batch gives an empty output of the right shape.
  EXPECT_EQ(xdev::conv2d(xdev::zeros(Shape{0, 3, 3, 2}), w, {1, 1}, "SAME").shape(),
            (Shape{0, 3, 3, 3}));
}

// Ones under a filter of ones, SAME: each output counts the filter taps
// inside the image times the channels. Large enough for several threads,
// two column blocks per image (8100 positions x 144 columns > 2^20) and both
// layouts.
TEST(OpsConv, Conv2DOfOnesCountsTheTapsInsideOnTheParallelPath) {
  const int64_t n = 2, h = 90, w = 90, c = 16, f = 32;
  const Tensor ones = xdev::fill(Shape{n, h, w, c}, 1.0, DType::kFloat32);
  const Tensor filter = xdev::fill(Shape{3, 3, c, f}, 1.0, DType::kFloat32);
  const std::vector<float> y = xdev::conv2d(ones, filter, {1, 1}, "SAME").to_vector<float>();
  auto at = [&](int64_t b, int64_t i, int64_t j, int64_t k) {
    return y[static_cast<size_t>(((b * h + i) * w + j) * f + k)];
  };
  EXPECT_EQ(at(0, 0, 0, 0), 4.0f * c);      // corner: 2x2 taps inside
  EXPECT_EQ(at(1, 0, 7, 5), 6.0f * c);      // edge
  EXPECT_EQ(at(1, 20, 21, 31), 9.0f * c);   // inside
  EXPECT_EQ(at(1, 89, 89, 9), 4.0f * c);
  EXPECT_EQ(at(0, 89, 45, 2), 6.0f * c);    // in the second column block
  const Tensor ones_nchw = xdev::fill(Shape{n, c, h, w}, 1.0, DType::kFloat32);
  const std::vector<float> yc =
      xdev::conv2d(ones_nchw, filter, {1, 1}, "SAME", "NCHW").to_vector<float>();
  EXPECT_EQ(yc[static_cast<size_t>(((1 * f + 31) * h + 20) * w + 21)], 9.0f * c);
  EXPECT_EQ(yc[static_cast<size_t>(((0 * f + 3) * h + 0) * w + 89)], 4.0f * c);
  EXPECT_EQ(yc[static_cast<size_t>(((1 * f + 7) * h + 88) * w + 50)], 9.0f * c);
}

TEST(OpsConv, PoolsOfA3x3ImageByHand) {
  EXPECT_EQ(values(xdev::max_pool(image3x3(), {2, 2}, {1, 1}, "VALID")),
            (std::vector<double>{5, 6, 8, 9}));
  EXPECT_EQ(values(xdev::avg_pool(image3x3(), {2, 2}, {1, 1}, "VALID")),
            (std::vector<double>{3, 4, 6, 7}));
  // SAME: the padding after is not counted: (3 + 6) / 2, (7 + 8) / 2, 9 / 1.
  EXPECT_EQ(values(xdev::avg_pool(image3x3(), {2, 2}, {1, 1}, "SAME")),
            (std::vector<double>{3, 4, 4.5, 6, 7, 7.5, 7.5, 8.5, 9}));
  EXPECT_EQ(values(xdev::max_pool(image3x3(), {1, 2, 2, 1}, {1, 2, 2, 1}, "SAME")),
            (std::vector<double>{5, 6, 8, 9}));
  // A NaN wins its windows.
  const Tensor nan = xdev::constant(std::vector<double>{1, kNan, 3, 4}, Shape{1, 1, 4, 1});
  const std::vector<double> m = values(xdev::max_pool(nan, {1, 2}, {1, 2}, "VALID"));
  EXPECT_TRUE(std::isnan(m[0]));
  EXPECT_EQ(m[1], 4.0);
  // NCHW: two channels pooled apart.
  const Tensor two = xdev::constant(std::vector<float>{1, 5, 2, 0, -1, -7, -2, -3}, Shape{1, 2, 2, 2});
  EXPECT_EQ(xdev::max_pool(two, {2, 2}, {2, 2}, "VALID", "NCHW").to_vector<float>(),
            (std::vector<float>{5, -1}));
  EXPECT_EQ(xdev::avg_pool(two, {2, 2}, {2, 2}, "VALID", "NCHW").to_vector<float>(),
            (std::vector<float>{2, -3.25f}));
}

TEST(OpsConv, PoolGradientsByHand) {
  // All four 2x2 windows of this image have their maximum in the middle.
  const Tensor peak = xdev::constant(std::vector<double>{0, 0, 0, 0, 9, 0, 0, 0, 0}, Shape{1, 3, 3, 1});
  const Tensor pooled = xdev::max_pool(peak, {2, 2}, {1, 1}, "VALID");
  const Tensor grad = xdev::constant(std::vector<double>{1, 2, 3, 4}, Shape{1, 2, 2, 1});
  EXPECT_EQ(values(xdev::max_pool_grad(peak, pooled, grad, {2, 2}, {1, 1}, "VALID")),
            (std::vector<double>{0, 0, 0, 0, 10, 0, 0, 0, 0}));
  // Ties: the first maximum in window order takes the gradient.
  const Tensor flat = xdev::fill(Shape{1, 2, 2, 1}, 1.0, DType::kFloat64);
  const Tensor five = xdev::fill(Shape{1, 1, 1, 1}, 5.0, DType::kFloat64);
  EXPECT_EQ(values(xdev::max_pool_grad(flat, five, five, {2, 2}, {2, 2}, "VALID")),
            (std::vector<double>{5, 0, 0, 0}));
  // AvgPoolGrad of ones: each element gets 1/4 per window that covers it.
  const Tensor ones = xdev::fill(Shape{1, 2, 2, 1}, 1.0, DType::kFloat64);
  EXPECT_EQ(values(xdev::avg_pool_grad({1, 3, 3, 1}, ones, {2, 2}, {1, 1}, "VALID")),
            (std::vector<double>{0.25, 0.5, 0.25, 0.5, 1, 0.5, 0.25, 0.5, 0.25}));
  // SAME: the last column's windows have 2 elements (1 in the corner).
  const Tensor ones3 = xdev::fill(Shape{1, 3, 3, 1}, 1.0, DType::kFloat64);
  const std::vector<double> g = values(xdev::avg_pool_grad({1, 3, 3, 1}, ones3, {2, 2}, {1, 1}, "SAME"));
  EXPECT_DOUBLE_EQ(g[8], 0.25 + 0.5 + 0.5 + 1.0);  // in 4 windows: of 4, 2, 2 and 1 elements
}

// --- gradients against central differences (float64) ---------------------------------

std::vector<double> random_values(size_t n, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<double> v(n);
  for (double& x : v) x = u(gen);
  return v;
}

size_t count(const Shape& s) {
  size_t n = 1;
  for (int64_t d : s) n *= static_cast<size_t>(d);
  return n;
}

// d/dv Σ forward(v) · weights, by central differences, element by element.
std::vector<double> numeric_gradient(const std::function<Tensor(const Tensor&)>& forward,
                                     std::vector<double> v, const Shape& shape,
                                     const std::vector<double>& weights) {
  const double h = 1e-4;
  auto loss = [&](const std::vector<double>& at) {
    const std::vector<double> y = values(forward(xdev::constant(at, shape)));
    double s = 0.0;
    for (size_t i = 0; i < y.size(); ++i) s += y[i] * weights[i];
    return s;
  };
  std::vector<double> grad(v.size());
  for (size_t i = 0; i < v.size(); ++i) {
    const double keep = v[i];
    v[i] = keep + h;
    const double up = loss(v);
    v[i] = keep - h;
    const double down = loss(v);
    v[i] = keep;
    grad[i] = (up - down) / (2 * h);
  }
  return grad;
}

void expect_near_all(const std::vector<double>& got, const std::vector<double>& want, double tol) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], tol) << "element " << i;
}

struct ConvCase {
  Shape input, filter;
  std::vector<int64_t> strides, dilations;
  const char* padding;
  const char* format;
};

TEST(OpsConv, ConvGradientsMatchCentralDifferences) {
  const ConvCase cases[] = {
      {{2, 5, 4, 3}, {3, 2, 3, 2}, {2, 1}, {1, 1}, "SAME", "NHWC"},
      {{1, 6, 6, 2}, {4, 4, 2, 3}, {1, 1}, {1, 1}, "SAME", "NHWC"},  // odd padding
      {{2, 7, 6, 2}, {2, 3, 2, 2}, {3, 2}, {2, 1}, "VALID", "NHWC"},
      {{2, 3, 5, 4}, {3, 3, 3, 2}, {1, 2}, {1, 1}, "SAME", "NCHW"},  // [N, C, H, W]
  };
  unsigned seed = 1;
  for (const ConvCase& k : cases) {
    SCOPED_TRACE(std::string(k.padding) + " " + k.format);
    const std::vector<double> x = random_values(count(k.input), seed++);
    const std::vector<double> w = random_values(count(k.filter), seed++);
    const Tensor xt = xdev::constant(x, k.input), wt = xdev::constant(w, k.filter);
    const Tensor y = xdev::conv2d(xt, wt, k.strides, k.padding, k.format, k.dilations);
    const std::vector<double> g = random_values(count(y.shape()), seed++);
    const Tensor gt = xdev::constant(g, y.shape());
    const std::vector<int64_t> input_sizes(k.input.begin(), k.input.end());
    const std::vector<int64_t> filter_sizes(k.filter.begin(), k.filter.end());
    const std::vector<double> dx = values(xdev::conv2d_backprop_input(
        input_sizes, wt, gt, k.strides, k.padding, k.format, k.dilations));
    const std::vector<double> dw = values(xdev::conv2d_backprop_filter(
        xt, filter_sizes, gt, k.strides, k.padding, k.format, k.dilations));
    expect_near_all(dx,
                    numeric_gradient([&](const Tensor& v) {
                      return xdev::conv2d(v, wt, k.strides, k.padding, k.format, k.dilations);
                    }, x, k.input, g),
                    1e-8);
    expect_near_all(dw,
                    numeric_gradient([&](const Tensor& v) {
                      return xdev::conv2d(xt, v, k.strides, k.padding, k.format, k.dilations);
                    }, w, k.filter, g),
                    1e-8);
  }
}

TEST(OpsConv, PoolGradientsMatchCentralDifferences) {
  const Shape shape{2, 5, 6, 3};
  // Distinct values, so that each maximum is strict and MaxPool is smooth there.
  std::vector<double> x(count(shape));
  for (size_t i = 0; i < x.size(); ++i) x[i] = std::sin(1.7 * static_cast<double>(i) + 0.3);
  const Tensor xt = xdev::constant(x, shape);
  for (const char* padding : {"SAME", "VALID"}) {
    SCOPED_TRACE(padding);
    const std::vector<int64_t> ksize{3, 2}, strides{2, 2};
    const Tensor m = xdev::max_pool(xt, ksize, strides, padding);
    const std::vector<double> g = random_values(count(m.shape()), 9);
    const Tensor gt = xdev::constant(g, m.shape());
    expect_near_all(values(xdev::max_pool_grad(xt, m, gt, ksize, strides, padding)),
                    numeric_gradient([&](const Tensor& v) {
                      return xdev::max_pool(v, ksize, strides, padding);
                    }, x, shape, g),
                    1e-8);
    expect_near_all(values(xdev::avg_pool_grad({2, 5, 6, 3}, gt, ksize, strides, padding)),
                    numeric_gradient([&](const Tensor& v) {
                      return xdev::avg_pool(v, ksize, strides, padding);
                    }, x, shape, g),
                    1e-8);
  }
}

// --- float32 against float64 sums -----------------------------------------------------

// Float64 references of a float32 result: each element's sum, Σ |terms| and
// its number of terms, for docs/ops.md's bound (n + 2) eps Σ |terms|.
struct Sums {
  std::vector<double> sum, magnitude;
  std::vector<int64_t> terms;
  explicit Sums(size_t n) : sum(n), magnitude(n), terms(n) {}
  void add(size_t at, double term) {
    sum[at] += term;
    magnitude[at] += std::fabs(term);
    ++terms[at];
  }
  // The elements of `got` outside the bound; the first few reported.
  int64_t misses(const std::vector<float>& got, const char* what) const {
    EXPECT_EQ(got.size(), sum.size()) << what;
    int64_t bad = 0;
    for (size_t i = 0; i < std::min(got.size(), sum.size()); ++i) {
      const double bound = static_cast<double>(terms[i] + 2) *
                           std::numeric_limits<float>::epsilon() * magnitude[i];
      if (!(std::fabs(got[i] - sum[i]) <= bound) && bad++ < 5) {
        ADD_FAILURE() << what << " element " << i << ": " << got[i] << ", expected " << sum[i]
                      << " within " << bound;
      }
    }
    return bad;
  }
};

// float32 NHWC Conv2D and its input's gradient against float64 sums written
// out here, on shapes whose channels are multiples of 16: the cpu plugin's
// direct kernel on a processor with AVX-512 (Conv2D, and the input's
// gradient at stride 1: plugins/cpu/kernels/conv_direct.hpp), else im2col +
// GEMM. Between them they cover a tile cut by the end of the batch
// (positions not a multiple of 6), one to three blocks of 64 channels with
// a 16-, 32- or 48-channel block last, strides, dilations, both paddings
// (SAME's odd element after), 1x1, 2x2 and 5x5 filters, and more input
// channels than one pass over the filter covers (300 > 227 for 3x3).
TEST(OpsConv, Float32ConvAndInputGradientMatchFloat64SumsOnEveryTileAndChannelBlock) {
  struct Case {
    int64_t n, h, w, cin, cout, kh, kw, sy, sx, dy, dx;
    const char* padding;
  };
  const Case cases[] = {
      {2, 7, 9, 16, 16, 3, 3, 1, 1, 1, 1, "SAME"},
      {1, 11, 10, 48, 80, 3, 2, 2, 1, 1, 2, "VALID"},
      {3, 5, 5, 300, 48, 3, 3, 2, 2, 1, 1, "SAME"},
      {1, 13, 13, 32, 144, 5, 5, 1, 1, 2, 2, "SAME"},
      {1, 4, 5, 7, 32, 1, 1, 1, 1, 1, 1, "VALID"},
      {2, 9, 8, 64, 64, 3, 3, 1, 1, 1, 1, "SAME"},
      {1, 6, 7, 16, 16, 3, 3, 1, 1, 1, 1, "VALID"},
      {1, 9, 9, 32, 16, 3, 3, 1, 1, 2, 2, "VALID"},
      {2, 5, 6, 16, 32, 2, 2, 1, 1, 1, 1, "SAME"},
  };
  // The inputs as float32 sees them.
  auto f32 = [](double v) { return static_cast<double>(static_cast<float>(v)); };
  unsigned seed = 100;
  for (const Case& c : cases) {
    SCOPED_TRACE(testing::Message() << "input [" << c.n << ", " << c.h << ", " << c.w << ", "
                                    << c.cin << "], filter [" << c.kh << ", " << c.kw << ", "
                                    << c.cin << ", " << c.cout << "], strides " << c.sy << "x"
                                    << c.sx << ", dilations " << c.dy << "x" << c.dx << ", "
                                    << c.padding);
    // The windows as docs/ops.md defines them.
    const int64_t ey = (c.kh - 1) * c.dy + 1, ex = (c.kw - 1) * c.dx + 1;
    const bool same = std::string(c.padding) == "SAME";
    const int64_t oh = same ? (c.h + c.sy - 1) / c.sy : (c.h - ey + c.sy) / c.sy;
    const int64_t ow = same ? (c.w + c.sx - 1) / c.sx : (c.w - ex + c.sx) / c.sx;
    const int64_t py = same ? std::max<int64_t>((oh - 1) * c.sy + ey - c.h, 0) / 2 : 0;
    const int64_t px = same ? std::max<int64_t>((ow - 1) * c.sx + ex - c.w, 0) / 2 : 0;
    const Shape xs{c.n, c.h, c.w, c.cin}, fs{c.kh, c.kw, c.cin, c.cout},
        ys{c.n, oh, ow, c.cout};
    const std::vector<double> xv = random_values(count(xs), seed++);
    const std::vector<double> fv = random_values(count(fs), seed++);
    const std::vector<double> gv = random_values(count(ys), seed++);
    const Tensor x = xdev::cast(xdev::constant(xv, xs), DType::kFloat32);
    const Tensor f = xdev::cast(xdev::constant(fv, fs), DType::kFloat32);
    const Tensor g = xdev::cast(xdev::constant(gv, ys), DType::kFloat32);
    const Tensor y = xdev::conv2d(x, f, {c.sy, c.sx}, c.padding, "NHWC", {c.dy, c.dx});
    const Tensor dx = xdev::conv2d_backprop_input({c.n, c.h, c.w, c.cin}, f, g, {c.sy, c.sx},
                                                  c.padding, "NHWC", {c.dy, c.dx});
    ASSERT_EQ(y.shape(), ys);
    Sums forward(count(ys)), input_grad(count(xs));
    for (int64_t b = 0; b < c.n; ++b) {
      for (int64_t i = 0; i < oh; ++i) {
        for (int64_t j = 0; j < ow; ++j) {
          for (int64_t ky = 0; ky < c.kh; ++ky) {
            const int64_t iy = i * c.sy - py + ky * c.dy;
            if (iy < 0 || iy >= c.h) continue;
            for (int64_t kx = 0; kx < c.kw; ++kx) {
              const int64_t ix = j * c.sx - px + kx * c.dx;
              if (ix < 0 || ix >= c.w) continue;
              for (int64_t ci = 0; ci < c.cin; ++ci) {
                const size_t at_x = static_cast<size_t>(((b * c.h + iy) * c.w + ix) * c.cin + ci);
                for (int64_t o = 0; o < c.cout; ++o) {
                  const size_t at_y = static_cast<size_t>(((b * oh + i) * ow + j) * c.cout + o);
                  const double w =
                      f32(fv[static_cast<size_t>(((ky * c.kw + kx) * c.cin + ci) * c.cout + o)]);
                  forward.add(at_y, f32(xv[at_x]) * w);
                  input_grad.add(at_x, f32(gv[at_y]) * w);
                }
              }
            }
          }
        }
      }
    }
    EXPECT_EQ(forward.misses(y.to_vector<float>(), "Conv2D"), 0);
    EXPECT_EQ(input_grad.misses(dx.to_vector<float>(), "Conv2DBackpropInput"), 0);
  }
}

// --- refused calls ----------------------------------------------------------------------

TEST(OpsConv, RefusesWhatTensorFlowRefuses) {
  const Tensor x = xdev::zeros(Shape{1, 5, 5, 4});
  const Tensor w = xdev::zeros(Shape{3, 3, 3, 2});
  expect_refused([&] { (void)xdev::conv2d(x, w, {1, 1}, "SAME"); },
                 {"Conv2D: filter in_channels 3 does not match input channels 4"});
  const Tensor w4 = xdev::zeros(Shape{3, 3, 4, 2});
  expect_refused([&] { (void)xdev::conv2d(x, w4, {1, 1}, "FULL"); },
                 {"Conv2D", "padding", "FULL", "SAME", "VALID"});
  expect_refused([&] { (void)xdev::conv2d(x, w4, {1, 1, 1}, "SAME"); },
                 {"Conv2D", "strides {1, 1, 1}", "2 values"});
  expect_refused([&] { (void)xdev::conv2d(x, w4, {2, 1, 1, 1}, "SAME"); },
                 {"Conv2D", "strides {2, 1, 1, 1}", "1 for batch and channels"});
  expect_refused([&] { (void)xdev::conv2d(x, w4, {0, 1}, "SAME"); }, {"Conv2D", "strides"});
  expect_refused([&] { (void)xdev::conv2d(x, w4, {1, 1}, "SAME", "NWHC"); },
                 {"Conv2D", "data_format", "NWHC"});
  // A 7-tap window (3 taps, dilation 3) does not fit 5 elements without padding.
  expect_refused([&] { (void)xdev::conv2d(x, w4, {1, 1}, "VALID", "NHWC", {3, 3}); },
                 {"Conv2D", "3 taps", "dilation 3", "height 5", "VALID"});
  expect_refused([&] { (void)xdev::conv2d(xdev::zeros(Shape{5, 5, 4}), w4, {1, 1}, "SAME"); },
                 {"Conv2D", "input of shape (5, 5, 4)", "rank 3"});
  const Tensor dy = xdev::zeros(Shape{1, 4, 4, 2});
  expect_refused(
      [&] { (void)xdev::conv2d_backprop_input({1, 5, 5, 4}, w4, dy, {1, 1}, "SAME"); },
      {"Conv2DBackpropInput", "out_backprop has shape (1, 4, 4, 2)", "(1, 5, 5, 2)"});
  expect_refused(
      [&] { (void)xdev::conv2d_backprop_filter(x, {3, 3, 4, 2}, dy, {1, 1}, "SAME"); },
      {"Conv2DBackpropFilter", "out_backprop has shape (1, 4, 4, 2)"});
  expect_refused([&] { (void)xdev::max_pool(x, {2, 2, 2}, {1, 1}, "SAME"); },
                 {"MaxPool", "ksize {2, 2, 2}"});
  const Tensor pooled = xdev::max_pool(x, {2, 2}, {2, 2}, "VALID");
  expect_refused(
      [&] { (void)xdev::max_pool_grad(x, pooled, x, {2, 2}, {2, 2}, "VALID"); },
      {"MaxPoolGrad", "grad has shape (1, 5, 5, 4)", "(1, 2, 2, 4)"});
  expect_refused([&] { (void)xdev::avg_pool_grad({1, 6, 6, 4}, pooled, {2, 2}, {2, 2}, "VALID"); },
                 {"AvgPoolGrad", "grad has shape (1, 2, 2, 4)", "(1, 3, 3, 4)"});
  const Tensor ints = xdev::zeros(Shape{1, 2, 2, 1}, DType::kInt32);
  expect_refused([&] { (void)xdev::avg_pool(ints, {1, 1}, {1, 1}, "VALID"); }, {"AvgPool", "int32"});
}

}  // namespace
