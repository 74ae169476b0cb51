// The cuda plugin's kernels against the cpu plugin's, through
// the public SDK (inputs on /CPU:0; each op once under DeviceScope("/GPU:0"),
// once under "/CPU:0"): elementwise math, binary math, comparisons and
// logic, Select, ClipByValue, the reductions, ArgMax/ArgMin, CumSum,
// Softmax/LogSoftmax, data movement, the NN ops (BiasAdd,
// SoftmaxCrossEntropyWithLogits, LayerNorm), the indexing ops
// (StridedSlice, BroadcastTo, Range, OneHot), the convolutions and the
// pools (NHWC/NCHW, SAME/VALID, strides, dilations, ties). Random inputs with broadcasting,
// strided (transposed) views, 0-size and scalar shapes, and the edge values
// docs/ops.md names (NaN, ±inf, ±0, integer MIN/MAX, halves for Round).
// Exact ops are compared bit for bit; float math within the tolerances of
// docs/ops.md, doubled (each device may be that far from the exact result).
//
// Without a GPU every test skips with the reason (XDEV_REQUIRE_GPU).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include <xdev/xdev.hpp>

#include "cuda_test_util.hpp"

namespace {

using ::testing::HasSubstr;
using xdev::DType;
using xdev::HostTensor;
using xdev::Shape;
using xdev::Tensor;
using xdev_cuda_test::GpuComparesToCpu;
using xdev_cuda_test::GpuMatchesCpu;
using xdev_cuda_test::random_tensor;
using xdev_cuda_test::Tolerance;

constexpr DType kFloatTypes[] = {DType::kFloat32, DType::kFloat64};
constexpr DType kNumberTypes[] = {DType::kFloat32, DType::kFloat64, DType::kInt32,
                                  DType::kInt64};
constexpr DType kAllTypes[] = {DType::kFloat32, DType::kFloat64, DType::kInt32, DType::kInt64,
                               DType::kBool};

std::string text(DType d) { return std::string(xdev::to_string(d)); }
std::string shape_text(const Shape& s) {
  std::ostringstream o;
  o << s;
  return o.str();
}
bool is_float(DType d) { return d == DType::kFloat32 || d == DType::kFloat64; }
double eps(DType d) { return d == DType::kFloat32 ? 0x1p-23 : 0x1p-52; }
// docs/ops.md: floats agree within the smallest normal number (devices may
// flush subnormals).
double tiny(DType d) {
  return d == DType::kFloat32 ? std::numeric_limits<float>::min()
                              : std::numeric_limits<double>::min();
}

// A tensor on /CPU:0 from doubles converted to `dtype` (integers exactly
// when they fit; bool: != 0).
Tensor values_tensor(DType dtype, const std::vector<double>& v, const Shape& shape) {
  xdev::DeviceScope cpu("/CPU:0");
  return xdev::cast(xdev::constant(v, shape), dtype);
}

// The edge values of docs/ops.md for `dtype`, as a vector tensor.
Tensor edge_values(DType dtype) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  constexpr double kNan = std::numeric_limits<double>::quiet_NaN();
  xdev::DeviceScope cpu("/CPU:0");
  switch (dtype) {
    case DType::kFloat32:
    case DType::kFloat64:
      return values_tensor(dtype,
                           {kNan, kInf, -kInf, 0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1.5, 2.5, -2.5,
                            3.0, 1e-3, -1e-3, 7.25, -7.25, 30.0, -30.0, 100.0, -100.0, 1000.0,
                            -1000.0, 1e30, -1e30},
                           {25});
    case DType::kInt32:
      return xdev::constant(std::vector<int32_t>{std::numeric_limits<int32_t>::min(),
                                                 std::numeric_limits<int32_t>::min() + 1, -7, -2,
                                                 -1, 0, 1, 2, 7, 46341,
                                                 std::numeric_limits<int32_t>::max()},
                            Shape{11});
    case DType::kInt64:
      return xdev::constant(std::vector<int64_t>{std::numeric_limits<int64_t>::min(),
                                                 std::numeric_limits<int64_t>::min() + 1, -7, -2,
                                                 -1, 0, 1, 2, 7, int64_t{3037000500},
                                                 std::numeric_limits<int64_t>::max()},
                            Shape{11});
    case DType::kBool:
      return values_tensor(DType::kBool, {0, 1}, {2});
  }
  return {};
}

// `x` as a column [n, 1] and as a row [1, n]: a binary op of the two sees
// every pair of values (and broadcasts on both axes).
Tensor as_column(const Tensor& x) { return xdev::reshape(x, {x.shape().num_elements(), 1}); }
Tensor as_row(const Tensor& x) { return xdev::reshape(x, {1, x.shape().num_elements()}); }

// Compares float results within bound(i, want) (NaN equal to NaN, equal
// values, infinities included, always fine); anything else exactly.
xdev_cuda_test::Compare within(std::function<double(int64_t, double)> bound) {
  return [bound](const HostTensor& got, const HostTensor& want) -> ::testing::AssertionResult {
    if (got.dtype() != want.dtype() || !(got.shape() == want.shape())) {
      return ::testing::AssertionFailure() << "dtype/shape " << got.dtype() << got.shape()
                                           << " vs " << want.dtype() << want.shape();
    }
    if (!is_float(got.dtype())) return xdev_cuda_test::Same(got, want);
    for (int64_t i = 0; i < got.num_elements(); ++i) {
      const double a = got.value_as_double(i), b = want.value_as_double(i);
      if (std::isnan(a) && std::isnan(b)) continue;
      if (a == b || std::fabs(a - b) <= bound(i, b)) continue;
      std::ostringstream s;
      s.precision(17);
      s << "element " << i << ": gpu " << a << " vs cpu " << b << " (allowed "
        << bound(i, b) << ")";
      return ::testing::AssertionFailure() << s.str();
    }
    return ::testing::AssertionSuccess();
  };
}

// docs/ops.md's elementwise-math tolerance, 4·eps·|result| + 4·eps·|x|,
// doubled (both devices may be that far from the exact result), plus the
// smallest normal number.
xdev_cuda_test::Compare math_tolerance(const Tensor& x) {
  const HostTensor hx = x.to_host();
  const double e = eps(x.dtype()), t = tiny(x.dtype());
  return within([hx, e, t](int64_t i, double want) {
    const double xi = hx.num_elements() == 0 ? 0.0 : hx.value_as_double(i);
    return t + 8 * e * std::fabs(want) + 8 * e * (std::isfinite(xi) ? std::fabs(xi) : 0.0);
  });
}

// The shapes every elementwise test runs on: a matrix, a vector, a scalar,
// an empty one.
const std::vector<Shape> kUnaryShapes = {{17, 31}, {1000}, {}, {0, 5}};

// Pairs that broadcast (NumPy), on one or several axes and both sides.
const std::vector<std::pair<Shape, Shape>> kBinaryShapes = {
    {{300, 33}, {300, 33}}, {{5, 1, 7}, {1, 6, 7}}, {{4, 3}, {3}},   {{2, 3, 4}, {}},
    {{3, 1}, {1, 4}},       {{1}, {9}},             {{0, 3}, {3}},   {{}, {}},
    {{2, 1, 3, 1, 5}, {4, 1, 7, 1}}};

// ---------------------------------------------------------------------------
// Elementwise math of one input

struct UnaryCase {
  const char* name;
  std::function<Tensor(const Tensor&)> fn;
  bool integers;  // also int32/int64
  bool exact;     // bit for bit (Abs, Sign, Square, Floor, Ceil, Round)
  double lo, hi;  // random inputs
};

const std::vector<UnaryCase>& unary_cases() {
  static const std::vector<UnaryCase> cases = {
      {"abs", [](const Tensor& x) { return xdev::abs(x); }, true, true, -9, 9},
      {"sign", [](const Tensor& x) { return xdev::sign(x); }, true, true, -3, 3},
      {"square", [](const Tensor& x) { return xdev::square(x); }, true, true, -9, 9},
      {"exp", [](const Tensor& x) { return xdev::exp(x); }, false, false, -10, 10},
      {"expm1", [](const Tensor& x) { return xdev::expm1(x); }, false, false, -3, 3},
      {"log", [](const Tensor& x) { return xdev::log(x); }, false, false, 0.001, 100},
      {"log1p", [](const Tensor& x) { return xdev::log1p(x); }, false, false, -0.9, 10},
      {"sqrt", [](const Tensor& x) { return xdev::sqrt(x); }, false, false, 0, 100},
      {"rsqrt", [](const Tensor& x) { return xdev::rsqrt(x); }, false, false, 0.01, 100},
      {"reciprocal", [](const Tensor& x) { return xdev::reciprocal(x); }, false, false, -5, 5},
      {"sin", [](const Tensor& x) { return xdev::sin(x); }, false, false, -7, 7},
      {"cos", [](const Tensor& x) { return xdev::cos(x); }, false, false, -7, 7},
      {"tanh", [](const Tensor& x) { return xdev::tanh(x); }, false, false, -5, 5},
      {"sigmoid", [](const Tensor& x) { return xdev::sigmoid(x); }, false, false, -20, 20},
      {"erf", [](const Tensor& x) { return xdev::erf(x); }, false, false, -4, 4},
      {"softplus", [](const Tensor& x) { return xdev::softplus(x); }, false, false, -20, 20},
      {"floor", [](const Tensor& x) { return xdev::floor(x); }, false, true, -10, 10},
      {"ceil", [](const Tensor& x) { return xdev::ceil(x); }, false, true, -10, 10},
      {"round", [](const Tensor& x) { return xdev::round(x); }, false, true, -10, 10},
      {"leaky_relu", [](const Tensor& x) { return xdev::leaky_relu(x); }, false, false, -5, 5},
      {"leaky_relu(alpha=-1.5)", [](const Tensor& x) { return xdev::leaky_relu(x, -1.5); },
       false, false, -5, 5},
      {"gelu", [](const Tensor& x) { return xdev::gelu(x); }, false, false, -6, 6},
      {"gelu(approximate)", [](const Tensor& x) { return xdev::gelu(x, true); }, false, false,
       -6, 6},
  };
  return cases;
}

::testing::AssertionResult UnaryMatches(const UnaryCase& c, const Tensor& x) {
  if (c.exact) return GpuMatchesCpu([&] { return c.fn(x); });
  return GpuComparesToCpu([&] { return c.fn(x); }, math_tolerance(x));
}

TEST(CudaGpu, ElementwiseMathMatchesTheCpu) {
  XDEV_REQUIRE_GPU();
  uint64_t seed = 10000;
  for (const UnaryCase& c : unary_cases()) {
    for (DType dtype : kNumberTypes) {
      if (!is_float(dtype) && !c.integers) continue;
      SCOPED_TRACE(std::string(c.name) + " " + text(dtype));
      for (const Shape& shape : kUnaryShapes) {
        SCOPED_TRACE(shape_text(shape));
        EXPECT_TRUE(UnaryMatches(c, random_tensor(dtype, shape, seed++, c.lo, c.hi)));
      }
      // A strided view (transposed), and the edge values.
      const Tensor t = xdev::transpose(random_tensor(dtype, {23, 19}, seed++, c.lo, c.hi));
      EXPECT_TRUE(UnaryMatches(c, t));
      EXPECT_TRUE(UnaryMatches(c, edge_values(dtype)));
    }
  }
}

TEST(CudaGpu, RoundIsHalfToEvenAndSignKeepsZerosAndNan) {
  XDEV_REQUIRE_GPU();
  for (DType dtype : kFloatTypes) {
    SCOPED_TRACE(text(dtype));
    const Tensor x = values_tensor(dtype, {0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 3.5}, {7});
    Tensor r;
    {
      xdev::DeviceScope gpu("/GPU:0");
      r = xdev::round(x);
    }
    EXPECT_EQ(r.device().device_type, "GPU");
    const HostTensor h = r.to_host();
    const double want[] = {0, 2, 2, -0.0, -2, -2, 4};
    for (int64_t i = 0; i < 7; ++i) {
      EXPECT_EQ(h.value_as_double(i), want[i]) << i;
      EXPECT_EQ(std::signbit(h.value_as_double(i)), std::signbit(want[i])) << i;
    }
  }
}

TEST(CudaGpu, PredicatesMatchTheCpu) {
  XDEV_REQUIRE_GPU();
  uint64_t seed = 11000;
  for (DType dtype : kFloatTypes) {
    SCOPED_TRACE(text(dtype));
    for (const Tensor& x : {edge_values(dtype), random_tensor(dtype, {40, 3}, seed++)}) {
      EXPECT_TRUE(GpuMatchesCpu([&] { return xdev::is_nan(x); }));
      EXPECT_TRUE(GpuMatchesCpu([&] { return xdev::is_finite(x); }));
      EXPECT_TRUE(GpuMatchesCpu([&] { return xdev::is_finite(xdev::transpose(as_column(x))); }));
    }
  }
  for (const Shape& shape : kUnaryShapes) {
    const Tensor b = random_tensor(DType::kBool, shape, seed++);
    EXPECT_TRUE(GpuMatchesCpu([&] { return xdev::logical_not(b); }));
  }
}

// ---------------------------------------------------------------------------
// Binary math, comparisons, logic

struct BinaryCase {
  const char* name;
  Tensor (*fn)(const Tensor&, const Tensor&);
  bool integers;  // also int32/int64
  bool exact;
};

TEST(CudaGpu, BinaryMathMatchesTheCpu) {
  XDEV_REQUIRE_GPU();
  const BinaryCase cases[] = {
      {"pow", &xdev::pow, false, false},
      {"maximum", &xdev::maximum, true, true},
      {"minimum", &xdev::minimum, true, true},
      {"floor_div", &xdev::floor_div, true, true},
      {"floor_mod", &xdev::floor_mod, true, true},
      {"squared_difference", &xdev::squared_difference, true, true},
  };
  uint64_t seed = 12000;
  for (const BinaryCase& c : cases) {
    for (DType dtype : kNumberTypes) {
      if (!is_float(dtype) && !c.integers) continue;
      SCOPED_TRACE(std::string(c.name) + " " + text(dtype));
      // pow: 4 ulp of the exact power per device.
      const Tolerance tol =
          c.exact || !is_float(dtype) ? Tolerance{} : Tolerance{8 * eps(dtype), tiny(dtype)};
      for (const auto& [sx, sy] : kBinaryShapes) {
        const Tensor x = random_tensor(dtype, sx, seed++, c.exact ? -20 : 0, 20);
        // Integer divisors include 0 (defined as 0) and -1.
        const Tensor y = random_tensor(dtype, sy, seed++, -4, 4);
        EXPECT_TRUE(GpuMatchesCpu([&] { return c.fn(x, y); }, tol));
      }
      // A strided view against a broadcast row, and every pair of edge values.
      const Tensor t = xdev::transpose(random_tensor(dtype, {9, 13}, seed++, -20, 20));
      const Tensor row = random_tensor(dtype, {9}, seed++, 1, 6);
      EXPECT_TRUE(GpuMatchesCpu([&] { return c.fn(t, row); }, tol));
      const Tensor e = edge_values(dtype);
      EXPECT_TRUE(GpuMatchesCpu([&] { return c.fn(as_column(e), as_row(e)); }, tol));
    }
  }
}

TEST(CudaGpu, ComparisonsAndLogicMatchTheCpu) {
  XDEV_REQUIRE_GPU();
  const BinaryCase cases[] = {
      {"equal", &xdev::equal, true, true},
      {"not_equal", &xdev::not_equal, true, true},
      {"less", &xdev::less, true, true},
      {"less_equal", &xdev::less_equal, true, true},
      {"greater", &xdev::greater, true, true},
      {"greater_equal", &xdev::greater_equal, true, true},
      {"logical_and", &xdev::logical_and, false, true},
      {"logical_or", &xdev::logical_or, false, true},
  };
  uint64_t seed = 13000;
  for (const BinaryCase& c : cases) {
    const std::string name = c.name;
    const bool logic = name.rfind("logical", 0) == 0;
    const bool takes_bool = logic || name == "equal" || name == "not_equal";
    for (DType dtype : kAllTypes) {
      if (dtype == DType::kBool ? !takes_bool : logic) continue;
      SCOPED_TRACE(name + " " + text(dtype));
      for (const auto& [sx, sy] : kBinaryShapes) {
        // A small range: many equal pairs.
        const Tensor x = random_tensor(dtype, sx, seed++, -2, 2);
        const Tensor y = random_tensor(dtype, sy, seed++, -2, 2);
        EXPECT_TRUE(GpuMatchesCpu([&] { return c.fn(x, y); }));
      }
      const Tensor e = edge_values(dtype);
      EXPECT_TRUE(GpuMatchesCpu([&] { return c.fn(as_column(e), as_row(e)); }));
      const Tensor t = xdev::transpose(random_tensor(dtype, {9, 13}, seed++, -2, 2));
      EXPECT_TRUE(GpuMatchesCpu([&] { return c.fn(t, t); }));
    }
  }
}

TEST(CudaGpu, SelectAndClipByValueMatchTheCpu) {
  XDEV_REQUIRE_GPU();
  // Three shapes that broadcast together, on several axes.
  const std::vector<std::array<Shape, 3>> shapes = {
      {Shape{40, 30}, Shape{40, 30}, Shape{40, 30}}, {Shape{5, 1, 7}, Shape{1, 6, 1}, Shape{7}},
      {Shape{}, Shape{3, 4}, Shape{4}},              {Shape{2, 1}, Shape{}, Shape{1, 3}},
      {Shape{0, 2}, Shape{2}, Shape{}}};
  uint64_t seed = 14000;
  for (DType dtype : kAllTypes) {
    SCOPED_TRACE(text(dtype));
    for (const auto& s : shapes) {
      const Tensor c = random_tensor(DType::kBool, s[0], seed++);
      const Tensor x = random_tensor(dtype, s[1], seed++, -10, 10);
      const Tensor y = random_tensor(dtype, s[2], seed++, -10, 10);
      EXPECT_TRUE(GpuMatchesCpu([&] { return xdev::select(c, x, y); }));
      if (dtype == DType::kBool) continue;
      // lo > hi in places (the result is hi).
      const Tensor lo = random_tensor(dtype, s[0], seed++, -5, 2);
      const Tensor hi = random_tensor(dtype, s[2], seed++, -2, 5);
      EXPECT_TRUE(GpuMatchesCpu([&] { return xdev::clip_by_value(x, lo, hi); }));
    }
    // Edge values copied bit for bit (NaN, -0) and clipped (NaN stays).
    const Tensor e = edge_values(dtype);
    const Tensor c = random_tensor(DType::kBool, e.shape(), seed++);
    // [n, 5] transposed: a strided [5, n] view; c and e broadcast along axis 0.
    const Tensor t = xdev::transpose(random_tensor(dtype, {e.shape()[0], 5}, seed++));
    EXPECT_TRUE(GpuMatchesCpu([&] { return xdev::select(c, as_row(e), t); }));
    if (dtype == DType::kBool) continue;
    const Tensor lo = values_tensor(dtype, {-1}, {});
    const Tensor hi = values_tensor(dtype, {2}, {});
    EXPECT_TRUE(GpuMatchesCpu([&] { return xdev::clip_by_value(as_column(e), lo, hi); }));
    EXPECT_TRUE(GpuMatchesCpu([&] { return xdev::clip_by_value(lo, as_column(e), as_row(e)); }));
  }
}

// ---------------------------------------------------------------------------
// Reductions

struct ReduceShape {
  Shape shape;
  std::vector<int> axes;
};
// Short and long lines, many and few, kept axes inner and outer (each
// segment width of segment_plan.hpp), empty reductions and empty outputs.
const std::vector<ReduceShape> kReduceShapes = {
    {{6, 7, 8}, {}},       {{6, 7, 8}, {0}},        {{6, 7, 8}, {1}},      {{6, 7, 8}, {2}},
    {{6, 7, 8}, {0, 2}},   {{1 << 18}, {0}},        {{64, 4096}, {1}},     {{4096, 64}, {0}},
    {{3, 100000}, {1}},    {{20000, 40}, {1}},      {{100000, 5}, {1}},    {{5, 0}, {1}},
    {{0, 4}, {0}},         {{0, 4}, {1}},           {{2, 3, 4, 5}, {1, 3}}, {{7}, {}},
    {{}, {}},
};

TEST(CudaGpu, ReductionsMatchTheCpu) {
  XDEV_REQUIRE_GPU();
  using Fn = Tensor (*)(const Tensor&, const std::vector<int>&, bool);
  const std::pair<const char*, Fn> exact[] = {{"max", &xdev::max}, {"min", &xdev::min}};
  uint64_t seed = 15000;
  for (const ReduceShape& c : kReduceShapes) {
    for (bool keepdims : {false, true}) {
      std::ostringstream trace;
      trace << "shape " << c.shape << " axes " << ::testing::PrintToString(c.axes)
            << " keepdims " << keepdims;
      SCOPED_TRACE(trace.str());
      const double n = static_cast<double>(std::max<int64_t>(1, c.shape.num_elements()));
      for (DType dtype : kNumberTypes) {
        SCOPED_TRACE(text(dtype));
        const Tensor x = random_tensor(dtype, c.shape, seed++, -10, 10);
        for (const auto& [name, fn] : exact) {
          SCOPED_TRACE(name);
          EXPECT_TRUE(GpuMatchesCpu([&] { return fn(x, c.axes, keepdims); }));
        }
        // Prod of values near 1 (no overflow); integers wrap exactly.
        const Tensor p = is_float(dtype) ? random_tensor(dtype, c.shape, seed++, 0.9, 1.1) : x;
        const Tolerance prod_tol =
            is_float(dtype) ? Tolerance{8 * eps(dtype) + 4 * n * 0x1p-52, tiny(dtype)}
                            : Tolerance{};
        EXPECT_TRUE(GpuMatchesCpu([&] { return xdev::prod(p, c.axes, keepdims); }, prod_tol));
        if (is_float(dtype)) {
          // docs/ops.md: (4·eps + 2·n·2⁻⁵²)·(1 + |result|), per device.
          const double t = 2 * (4 * eps(dtype) + 2 * n * 0x1p-52);
          EXPECT_TRUE(GpuMatchesCpu([&] { return xdev::logsumexp(x, c.axes, keepdims); },
                                    Tolerance{t, t}));
        }
      }
      const Tensor b = random_tensor(DType::kBool, c.shape, seed++);
      EXPECT_TRUE(GpuMatchesCpu([&] { return xdev::any(b, c.axes, keepdims); }));
      EXPECT_TRUE(GpuMatchesCpu([&] { return xdev::all(b, c.axes, keepdims); }));
      // Mostly true / mostly false, so all/any are not trivially decided.
      const Tensor ones = xdev::logical_or(b, random_tensor(DType::kBool, c.shape, seed++));
      EXPECT_TRUE(GpuMatchesCpu([&] { return xdev::all(ones, c.axes, keepdims); }));
    }
  }
}

TEST(CudaGpu, ReductionsOfEdgeValuesMatchTheCpu) {
  XDEV_REQUIRE_GPU();
  constexpr double kInf = std::numeric_limits<double>::infinity();
  constexpr double kNan = std::numeric_limits<double>::quiet_NaN();
  // Rows: a NaN, +inf, all -inf, large logits, mixed infinities.
  const std::vector<double> v = {1,    kNan, 3,     -1,    kInf, 2,    -kInf, -kInf, -kInf,
                                 1000, 1000, -1000, -kInf, kInf, 0.5,  -0.0,  0.0,   -0.0};
  for (DType dtype : kFloatTypes) {
    SCOPED_TRACE(text(dtype));
    const Tensor x = values_tensor(dtype, v, {6, 3});
    for (const std::vector<int>& axes :
         {std::vector<int>{1}, std::vector<int>{0}, std::vector<int>{}}) {
      EXPECT_TRUE(GpuMatchesCpu([&] { return xdev::max(x, axes); }));
      EXPECT_TRUE(GpuMatchesCpu([&] { return xdev::min(x, axes); }));
      EXPECT_TRUE(GpuMatchesCpu([&] { return xdev::prod(x, axes); }));
      const double t = 2 * (4 * eps(dtype) + 2 * 18 * 0x1p-52);
      EXPECT_TRUE(GpuMatchesCpu([&] { return xdev::logsumexp(x, axes); }, Tolerance{t, t}));
      EXPECT_TRUE(GpuMatchesCpu([&] { return xdev::logsumexp(xdev::transpose(x), axes); },
                                Tolerance{t, t}));
    }
  }
  for (DType dtype : {DType::kInt32, DType::kInt64}) {
    const Tensor e = edge_values(dtype);
    EXPECT_TRUE(GpuMatchesCpu([&] { return xdev::max(e); }));
    EXPECT_TRUE(GpuMatchesCpu([&] { return xdev::min(e); }));
    EXPECT_TRUE(GpuMatchesCpu([&] { return xdev::prod(e); }));  // wraps
  }
}

// ---------------------------------------------------------------------------
// Along one axis

struct AxisShape {
  Shape shape;
  int axis;
};
const std::vector<AxisShape> kAxisShapes = {
    {{6, 7, 8}, 0},     {{6, 7, 8}, 1},     {{6, 7, 8}, 2},    {{6, 7, 8}, -1},
    {{3, 100000}, 1},   {{100000, 3}, 0},   {{20000, 40}, 1},  {{40, 20000}, 0},
    {{1, 5}, 0},        {{9}, 0},           {{2, 1, 3}, 1},    {{1000, 2000}, 1},
};

TEST(CudaGpu, ArgMaxAndArgMinMatchTheCpu) {
  XDEV_REQUIRE_GPU();
  uint64_t seed = 16000;
  for (const AxisShape& c : kAxisShapes) {
    for (DType dtype : kNumberTypes) {
      SCOPED_TRACE(shape_text(c.shape) + " axis " + std::to_string(c.axis) +
                   " " + text(dtype));
      // A small integer range: ties everywhere (the first index wins).
      const Tensor x = random_tensor(dtype, c.shape, seed++, -3, 3);
      const Tensor r = is_float(dtype) ? xdev::round(x) : x;
      for (const Tensor& t : {x, r}) {
        EXPECT_TRUE(GpuMatchesCpu([&] { return xdev::argmax(t, c.axis); }));
        EXPECT_TRUE(GpuMatchesCpu([&] { return xdev::argmin(t, c.axis); }));
      }
    }
  }
  // NaN wins (the first one); a strided view; int extremes.
  for (DType dtype : kNumberTypes) {
    SCOPED_TRACE(text(dtype));
    const Tensor e = edge_values(dtype);
    const Tensor m = xdev::reshape(xdev::tile(e, {3}), {3, e.shape()[0]});
    for (int axis : {0, 1}) {
      EXPECT_TRUE(GpuMatchesCpu([&] { return xdev::argmax(m, axis); }));
      EXPECT_TRUE(GpuMatchesCpu([&] { return xdev::argmin(xdev::transpose(m), axis); }));
    }
  }
}

TEST(CudaGpu, CumSumMatchesTheCpu) {
  XDEV_REQUIRE_GPU();
  uint64_t seed = 17000;
  for (const AxisShape& c : kAxisShapes) {
    for (DType dtype : kNumberTypes) {
      const Tensor x = random_tensor(dtype, c.shape, seed++, -100, 100);
      for (bool exclusive : {false, true}) {
        for (bool reverse : {false, true}) {
          SCOPED_TRACE(shape_text(c.shape) + " axis " +
                       std::to_string(c.axis) + " " + text(dtype) + " exclusive " +
                       std::to_string(exclusive) + " reverse " + std::to_string(reverse));
          // docs/ops.md: exact given the axis order (double accumulation).
          EXPECT_TRUE(GpuMatchesCpu([&] { return xdev::cumsum(x, c.axis, exclusive, reverse); }));
        }
      }
    }
  }
  for (DType dtype : kNumberTypes) {
    SCOPED_TRACE(text(dtype));
    const Tensor t = xdev::transpose(random_tensor(dtype, {30, 20}, seed++));
    EXPECT_TRUE(GpuMatchesCpu([&] { return xdev::cumsum(t, 1, true, true); }));
    const Tensor e = edge_values(dtype);  // integers wrap; NaN and inf propagate
    EXPECT_TRUE(GpuMatchesCpu([&] { return xdev::cumsum(e, 0); }));
    EXPECT_TRUE(GpuMatchesCpu([&] { return xdev::cumsum(xdev::zeros({4, 0}, dtype), 1); }));
  }
}

TEST(CudaGpu, SoftmaxAndLogSoftmaxMatchTheCpu) {
  XDEV_REQUIRE_GPU();
  uint64_t seed = 18000;
  auto check = [](const Tensor& x, int axis) {
    const int rank = x.shape().rank();
    const int64_t n = x.shape()[axis < 0 ? axis + rank : axis];
    // docs/ops.md: (8 + ⌈log2(n + 1)⌉) ulp per device; LogSoftmax of 1 + |want|.
    const double ulps = 2 * (8 + std::ceil(std::log2(static_cast<double>(n) + 1)));
    const double t = ulps * eps(x.dtype());
    EXPECT_TRUE(
        GpuMatchesCpu([&] { return xdev::softmax(x, axis); }, Tolerance{t, tiny(x.dtype())}));
    EXPECT_TRUE(GpuMatchesCpu([&] { return xdev::log_softmax(x, axis); }, Tolerance{t, t}));
  };
  for (const AxisShape& c : kAxisShapes) {
    for (DType dtype : kFloatTypes) {
      SCOPED_TRACE(shape_text(c.shape) + " axis " + std::to_string(c.axis) +
                   " " + text(dtype));
      check(random_tensor(dtype, c.shape, seed++, -20, 20), c.axis);
    }
  }
  constexpr double kInf = std::numeric_limits<double>::infinity();
  constexpr double kNan = std::numeric_limits<double>::quiet_NaN();
  for (DType dtype : kFloatTypes) {
    SCOPED_TRACE(text(dtype));
    // Rows: large logits, a NaN, +inf, -inf, all -inf.
    const Tensor x = values_tensor(
        dtype, {-1000, 1000, 0, 1, kNan, 2, 1, kInf, 2, 1, -kInf, 2, -kInf, -kInf, -kInf}, {5, 3});
    check(x, 1);
    check(x, 0);
    check(xdev::transpose(x), 0);
    check(xdev::zeros({3, 0}, dtype), 1);  // an empty axis
  }
}

// ---------------------------------------------------------------------------
// Data movement: every dtype, bit for bit

TEST(CudaGpu, ConcatStackAndIdentityMatchTheCpu) {
  XDEV_REQUIRE_GPU();
  uint64_t seed = 19000;
  for (DType dtype : kAllTypes) {
    SCOPED_TRACE(text(dtype));
    const Tensor a = random_tensor(dtype, {4, 3, 5}, seed++);
    const Tensor b = random_tensor(dtype, {4, 2, 5}, seed++);
    const Tensor empty = random_tensor(dtype, {4, 0, 5}, seed++);
    const Tensor t = xdev::transpose(random_tensor(dtype, {5, 1, 4}, seed++), {2, 1, 0});
    EXPECT_TRUE(GpuMatchesCpu([&] { return xdev::concat({a, b, empty, t}, 1); }));
    EXPECT_TRUE(GpuMatchesCpu([&] { return xdev::concat({a}, 0); }));
    EXPECT_TRUE(GpuMatchesCpu([&] { return xdev::concat({a, a}, -1); }));
    EXPECT_TRUE(GpuMatchesCpu([&] { return xdev::concat({a, xdev::transpose(a, {0, 1, 2})}, 0); }));
    const Tensor big = random_tensor(dtype, {500, 500}, seed++);
    EXPECT_TRUE(GpuMatchesCpu([&] { return xdev::concat({big, xdev::transpose(big)}, 0); }));
    for (int axis : {0, 1, 2, 3, -1}) {
      SCOPED_TRACE("stack axis " + std::to_string(axis));
      EXPECT_TRUE(GpuMatchesCpu([&] {
        return xdev::stack({a, a, xdev::transpose(xdev::transpose(a))}, axis);
      }));
    }
    const Tensor s1 = random_tensor(dtype, {}, seed++), s2 = random_tensor(dtype, {}, seed++);
    EXPECT_TRUE(GpuMatchesCpu([&] { return xdev::stack({s1, s2, s1}); }));
    EXPECT_TRUE(GpuMatchesCpu([&] { return xdev::stack({empty, empty}, 1); }));
    EXPECT_TRUE(GpuMatchesCpu([&] { return xdev::identity(xdev::transpose(a, {1, 2, 0})); }));
    EXPECT_TRUE(GpuMatchesCpu([&] { return xdev::identity(s1); }));
  }
  // NaN payloads and -0 survive.
  const Tensor e = edge_values(DType::kFloat32);
  EXPECT_TRUE(GpuMatchesCpu([&] { return xdev::concat({e, e}, 0); }));
}

TEST(CudaGpu, TileAndPadMatchTheCpu) {
  XDEV_REQUIRE_GPU();
  constexpr double kNan = std::numeric_limits<double>::quiet_NaN();
  uint64_t seed = 20000;
  for (DType dtype : kAllTypes) {
    SCOPED_TRACE(text(dtype));
    const Tensor x = random_tensor(dtype, {3, 4, 5}, seed++);
    const Tensor t = xdev::transpose(x, {2, 0, 1});
    for (const std::vector<int64_t>& m :
         {std::vector<int64_t>{1, 1, 1}, {2, 3, 1}, {1, 0, 2}, {4, 1, 3}}) {
      EXPECT_TRUE(GpuMatchesCpu([&] { return xdev::tile(x, m); }));
      EXPECT_TRUE(GpuMatchesCpu([&] { return xdev::tile(t, m); }));
    }
    const Tensor s = random_tensor(dtype, {}, seed++);
    const Tensor empty = random_tensor(dtype, {0, 3}, seed++);
    EXPECT_TRUE(GpuMatchesCpu([&] { return xdev::tile(s, {}); }));
    const Tensor long_vector = random_tensor(dtype, {1000}, seed++);
    EXPECT_TRUE(GpuMatchesCpu([&] { return xdev::tile(long_vector, {300}); }));
    for (double value : {0.0, -1.5, 7.0, kNan, 1e10}) {
      SCOPED_TRACE("pad value " + std::to_string(value));
      EXPECT_TRUE(GpuMatchesCpu([&] { return xdev::pad(x, {{1, 2}, {0, 0}, {3, 1}}, value); }));
      EXPECT_TRUE(GpuMatchesCpu([&] { return xdev::pad(t, {{0, 1}, {2, 0}, {1, 1}}, value); }));
      EXPECT_TRUE(GpuMatchesCpu([&] { return xdev::pad(s, {}, value); }));
      EXPECT_TRUE(GpuMatchesCpu([&] { return xdev::pad(empty, {{1, 1}, {1, 0}}, value); }));
    }
  }
}

TEST(CudaGpu, GatherMatchesTheCpu) {
  XDEV_REQUIRE_GPU();
  uint64_t seed = 21000;
  for (DType dtype : kAllTypes) {
    const Tensor params = random_tensor(dtype, {6, 7, 5}, seed++);
    for (DType index_type : {DType::kInt32, DType::kInt64}) {
      SCOPED_TRACE(text(dtype) + " indices " + text(index_type));
      for (int axis : {0, 1, 2, -1}) {
        const int64_t n = params.shape()[axis < 0 ? axis + 3 : axis];
        const Tensor idx = random_tensor(index_type, {4, 3}, seed++, 0, static_cast<double>(n - 1));
        const Tensor scalar = random_tensor(index_type, {}, seed++, 0, static_cast<double>(n - 1));
        const Tensor none = random_tensor(index_type, {0}, seed++, 0, 1);
        EXPECT_TRUE(GpuMatchesCpu([&] { return xdev::gather(params, idx, axis); }));
        EXPECT_TRUE(GpuMatchesCpu([&] { return xdev::gather(params, scalar, axis); }));
        EXPECT_TRUE(GpuMatchesCpu([&] { return xdev::gather(params, none, axis); }));
        // A strided params view (the core makes it contiguous first).
        // (axis 1 has 7 in both: every index drawn above fits.)
        EXPECT_TRUE(GpuMatchesCpu(
            [&] { return xdev::gather(xdev::transpose(params, {2, 1, 0}), idx, 1); }));
      }
    }
  }
}

TEST(CudaGpu, GatherRefusesAnIndexOutOfRange) {
  XDEV_REQUIRE_GPU();
  const Tensor params = random_tensor(DType::kFloat32, {5, 3}, 1);
  for (const std::vector<int64_t>& bad : {std::vector<int64_t>{0, 4, 5, 1}, {2, -1}}) {
    const Tensor idx = xdev::constant(bad, Shape{static_cast<int64_t>(bad.size())});
    xdev::DeviceScope gpu("/GPU:0");
    try {
      (void)xdev::gather(params, idx, 0).to_host();
      ADD_FAILURE() << "no error for an index out of range";
    } catch (const xdev::Error& e) {
      EXPECT_EQ(e.code(), xdev::ErrorCode::kInvalidArgument) << e.what();
      EXPECT_THAT(e.what(), HasSubstr("out of range [0, 5)")) << e.what();
      EXPECT_THAT(e.what(), HasSubstr(bad[1] == -1 ? "indices[1] = -1" : "indices[2] = 5"));
    }
  }
}

// ---------------------------------------------------------------------------
// NN ops: BiasAdd, SoftmaxCrossEntropyWithLogits, LayerNorm

TEST(CudaGpu, BiasAddMatchesTheCpu) {
  XDEV_REQUIRE_GPU();
  // (value shape, data_format): the channel the last axis (NHWC) or axis 1.
  const std::vector<std::pair<Shape, const char*>> cases = {
      {{4, 5}, "NHWC"},          {{2, 3, 4, 6}, "NHWC"}, {{2, 3, 4, 5}, "NCHW"},
      {{2, 3}, "NCHW"},          {{3, 1}, "NHWC"},       {{7, 1, 5}, "NCHW"},
      {{0, 3}, "NHWC"},          {{2, 0, 4}, "NCHW"},    {{300, 1000}, "NHWC"},
      {{8, 64, 32, 32}, "NCHW"}, {{1, 2, 3, 4, 5, 6, 7}, "NCHW"}};
  uint64_t seed = 22000;
  for (DType dtype : kFloatTypes) {
    for (const auto& [shape, format] : cases) {
      SCOPED_TRACE(shape_text(shape) + " " + format + " " + text(dtype));
      const int64_t channels = shape[std::string(format) == "NCHW" ? 1 : shape.rank() - 1];
      const Tensor value = random_tensor(dtype, shape, seed++, -10, 10);
      const Tensor bias = random_tensor(dtype, {channels}, seed++, -10, 10);
      // One addition in the dtype: bit for bit.
      EXPECT_TRUE(GpuMatchesCpu([&] { return xdev::bias_add(value, bias, format); }));
    }
    SCOPED_TRACE(text(dtype));
    // A strided value (transposed; the core makes it contiguous) and edge
    // values in value and bias (NaN, ±inf, ±0 kept as Add keeps them).
    const Tensor t = xdev::transpose(random_tensor(dtype, {6, 9}, seed++));
    const Tensor b6 = random_tensor(dtype, {6}, seed++);
    EXPECT_TRUE(GpuMatchesCpu([&] { return xdev::bias_add(t, b6); }));
    // pairs[i, j] = e[i]: with the bias e along axis 1, every pair of edge values.
    const Tensor e = edge_values(dtype);
    const int64_t n = e.shape()[0];
    const Tensor pairs = xdev::transpose(xdev::reshape(xdev::tile(e, {n}), {n, n}));
    EXPECT_TRUE(GpuMatchesCpu([&] { return xdev::bias_add(pairs, e); }));
    EXPECT_TRUE(
        GpuMatchesCpu([&] { return xdev::bias_add(xdev::reshape(pairs, {n, n, 1}), e, "NCHW"); }));
  }
}

// docs/ops.md's NN tolerances, doubled (each device may be that far from
// the exact result): (8 + ⌈log2(n + 1)⌉) ulp of the dtype times `scale`
// (a tensor of the output's shape, computed on /CPU:0 in float64), plus the
// smallest normal number.
xdev_cuda_test::Compare scaled_ulps(const Tensor& scale, DType dtype, int64_t n) {
  const HostTensor h = scale.to_host();
  const double ulps = 2 * (8 + std::ceil(std::log2(static_cast<double>(n) + 1))) * eps(dtype);
  const double t = tiny(dtype);
  return within([h, ulps, t](int64_t i, double) { return t + ulps * h.value_as_double(i); });
}

// SoftmaxCrossEntropyWithLogits: the loss within that of Σ_c |label| ·
// (|ln s| + |f − m| + 1), backprop within that of softmax + |label|.
::testing::AssertionResult XentMatches(const Tensor& features, const Tensor& labels) {
  const Shape& fs = features.shape();
  const Shape& ls = labels.shape();
  const int64_t rows = fs[0] == 1 ? ls[0] : fs[0];
  const int64_t cols = fs[1] == 1 ? ls[1] : fs[1];
  xdev_cuda_test::Compare loss_bound, backprop_bound;
  {
    xdev::DeviceScope cpu("/CPU:0");
    const Tensor zero = xdev::zeros({rows, cols}, DType::kFloat64);  // broadcasts both
    const Tensor f = xdev::cast(features, DType::kFloat64) + zero;
    const Tensor y = xdev::abs(xdev::cast(labels, DType::kFloat64)) + zero;
    const Tensor shifted = f - xdev::max(f, {1}, true);
    const Tensor log_s = xdev::logsumexp(shifted, {1}, true);
    loss_bound = scaled_ulps(
        xdev::sum(y * (xdev::abs(log_s) + xdev::abs(shifted) + 1.0), {1}), features.dtype(), cols);
    backprop_bound = scaled_ulps(xdev::exp(shifted - log_s) + y, features.dtype(), cols);
  }
  ::testing::AssertionResult loss = GpuComparesToCpu(
      [&] { return xdev::softmax_cross_entropy_with_logits(features, labels).loss; }, loss_bound);
  if (!loss) return ::testing::AssertionFailure() << "loss: " << loss.message();
  ::testing::AssertionResult backprop = GpuComparesToCpu(
      [&] { return xdev::softmax_cross_entropy_with_logits(features, labels).backprop; },
      backprop_bound);
  if (!backprop) return ::testing::AssertionFailure() << "backprop: " << backprop.message();
  return ::testing::AssertionSuccess();
}

// Labels of `rows` x `cols` with a 1 at (b, (7 b) mod cols), else 0.
Tensor one_hot(DType dtype, int64_t rows, int64_t cols) {
  std::vector<double> v(static_cast<size_t>(rows * cols), 0.0);
  for (int64_t b = 0; b < rows; ++b) v[static_cast<size_t>(b * cols + (7 * b) % cols)] = 1.0;
  return values_tensor(dtype, v, {rows, cols});
}

TEST(CudaGpu, SoftmaxCrossEntropyMatchesTheCpu) {
  XDEV_REQUIRE_GPU();
  // (features, labels) shapes: equal, broadcast labels or features along
  // either axis, each segment width (a thread, a warp, a block per row),
  // no classes (a loss of 0 per row) and no rows.
  const std::vector<std::pair<Shape, Shape>> shapes = {
      {{64, 10}, {64, 10}},   {{64, 10}, {1, 10}},      {{1, 10}, {64, 10}},
      {{64, 10}, {64, 1}},    {{64, 1}, {64, 10}},      {{1, 1}, {5, 7}},
      {{5000, 8}, {5000, 8}}, {{2000, 100}, {1, 100}},  {{3, 100000}, {3, 100000}},
      {{4, 0}, {4, 0}},       {{4, 0}, {1, 0}},         {{0, 5}, {0, 5}},
      {{0, 5}, {1, 5}}};
  uint64_t seed = 23000;
  for (DType dtype : kFloatTypes) {
    for (const auto& [fs, ls] : shapes) {
      SCOPED_TRACE("features " + shape_text(fs) + " labels " + shape_text(ls) + " " +
                   text(dtype));
      const Tensor features = random_tensor(dtype, fs, seed++, -20, 20);
      const Tensor labels = random_tensor(dtype, ls, seed++, 0, 1);
      EXPECT_TRUE(XentMatches(features, labels));
    }
  }
  // Long rows with one-hot labels: backprop's bound is then the softmax
  // alone, which a plain running sum of 100000 float64 terms misses on one
  // of the two sides (both sum with compensation).
  for (DType dtype : kFloatTypes) {
    for (const Shape& shape : {Shape{3, 100000}, Shape{300, 3000}, Shape{1000, 12}}) {
      SCOPED_TRACE("one-hot " + shape_text(shape) + " " + text(dtype));
      const Tensor features = random_tensor(dtype, shape, seed++, -5, 5);
      EXPECT_TRUE(XentMatches(features, one_hot(dtype, shape[0], shape[1])));
    }
  }
  constexpr double kInf = std::numeric_limits<double>::infinity();
  constexpr double kNan = std::numeric_limits<double>::quiet_NaN();
  for (DType dtype : kFloatTypes) {
    SCOPED_TRACE(text(dtype));
    // Rows: large logits, a NaN (the row's loss and backprop NaN), +inf,
    // -inf with a label of 0 and of 1, all -inf, a NaN label.
    const Tensor f = values_tensor(dtype,
                                   {-1000, 1000, 0,     1,     kNan,  2,    1, kInf, 2,
                                    1,     -kInf, 2,    -kInf, -kInf, -kInf, 3, 1,   2},
                                   {6, 3});
    const Tensor l = values_tensor(dtype,
                                   {0.2, 0.3, 0.5, 0, 1, 0, 1, 0, 0,
                                    0.5, 0, 0.5, 1, 0, 0, kNan, 0.5, 0.5},
                                   {6, 3});
    EXPECT_TRUE(XentMatches(f, l));
    EXPECT_TRUE(XentMatches(f, as_row(values_tensor(dtype, {0.25, 0.25, 0.5}, {3}))));
    // A strided features view (transposed; the core makes it contiguous).
    const Tensor t = xdev::transpose(random_tensor(dtype, {9, 6}, seed++, -3, 3));
    EXPECT_TRUE(XentMatches(t, random_tensor(dtype, {6, 9}, seed++, 0, 1)));
  }
}

// LayerNorm (gamma and beta random) within that of |gamma| · (|x| + |mean|)
// / √(variance + epsilon) + |beta|, n the group's size.
::testing::AssertionResult LayerNormMatches(const Tensor& x, int axis, double epsilon,
                                            uint64_t seed) {
  const int rank = x.shape().rank();
  const int first = axis < 0 ? axis + rank : axis;
  std::vector<int64_t> group;
  std::vector<int> axes;
  for (int k = first; k < rank; ++k) {
    group.push_back(x.shape()[k]);
    axes.push_back(k);
  }
  const Shape group_shape(group);
  const Tensor gamma = random_tensor(x.dtype(), group_shape, seed, 0.5, 2);
  const Tensor beta = random_tensor(x.dtype(), group_shape, seed + 1, -1, 1);
  xdev_cuda_test::Compare bound;
  {
    xdev::DeviceScope cpu("/CPU:0");
    const Tensor x64 = xdev::cast(x, DType::kFloat64);
    const Tensor mean = xdev::mean(x64, axes, true);
    const Tensor d = x64 - mean;
    const Tensor rstd = xdev::rsqrt(xdev::mean(d * d, axes, true) + epsilon);
    bound = scaled_ulps((xdev::abs(x64) + xdev::abs(mean)) * rstd *
                                xdev::abs(xdev::cast(gamma, DType::kFloat64)) +
                            xdev::abs(xdev::cast(beta, DType::kFloat64)),
                        x.dtype(), group_shape.num_elements());
  }
  return GpuComparesToCpu([&] { return xdev::layer_norm(x, gamma, beta, axis, epsilon); },
                          bound);
}

TEST(CudaGpu, LayerNormMatchesTheCpu) {
  XDEV_REQUIRE_GPU();
  struct Case {
    Shape shape;
    int axis;
  };
  // Groups of one axis or several, the whole tensor, each segment width (a
  // thread, a warp, a block per group), a long float64 row, empty tensors.
  const std::vector<Case> cases = {
      {{4, 10}, 1},      {{3, 4, 5}, 1},     {{3, 4, 5}, -1},   {{3, 4, 5}, 0},
      {{7}, 0},          {{10000, 8}, -1},   {{5000, 64}, 1},   {{200, 3000}, 1},
      {{2, 100000}, 1},  {{2, 3, 4, 5, 6}, 2}, {{0, 5}, 1},     {{5, 0}, 1}};
  uint64_t seed = 24000;
  for (DType dtype : kFloatTypes) {
    for (const Case& c : cases) {
      for (double epsilon : {1e-3, 0.0}) {
        SCOPED_TRACE(shape_text(c.shape) + " axis " + std::to_string(c.axis) + " epsilon " +
                     std::to_string(epsilon) + " " + text(dtype));
        EXPECT_TRUE(LayerNormMatches(random_tensor(dtype, c.shape, seed, -3, 3), c.axis,
                                     epsilon, seed + 1));
        // An offset far from 0: x − mean cancels (the bound allows |x| + |mean|).
        EXPECT_TRUE(LayerNormMatches(random_tensor(dtype, c.shape, seed + 3, 100, 101), c.axis,
                                     epsilon, seed + 4));
        seed += 6;
      }
    }
  }
  constexpr double kInf = std::numeric_limits<double>::infinity();
  constexpr double kNan = std::numeric_limits<double>::quiet_NaN();
  for (DType dtype : kFloatTypes) {
    SCOPED_TRACE(text(dtype));
    // Rows: a NaN (the row NaN), an inf, a constant row (epsilon 0: 0/0 =
    // NaN; else 0 · rstd + beta), large values.
    const Tensor x = values_tensor(dtype, {1, kNan, 3, 1, kInf, 2, 5, 5, 5, 1e30, -1e30, 0},
                                   {4, 3});
    for (double epsilon : {0.0, 1e-3}) {
      EXPECT_TRUE(LayerNormMatches(x, 1, epsilon, seed));
      seed += 2;  // gamma's and beta's
    }
    // A strided view (transposed; the core makes it contiguous).
    const Tensor t = xdev::transpose(random_tensor(dtype, {6, 9}, seed++));
    EXPECT_TRUE(LayerNormMatches(t, 1, 1e-3, seed));
    seed += 2;
  }
}

// ---------------------------------------------------------------------------
// Indexing: StridedSlice (the SDK runs the op for a reversed window; others
// are views), BroadcastTo, Range, OneHot. Slice's kernel runs through the
// raw ABI (cuda_plugin_abi: the SDK's slice is always a view).

TEST(CudaGpu, StridedSliceMatchesTheCpu) {
  XDEV_REQUIRE_GPU();
  uint64_t seed = 25000;
  for (DType dtype : kAllTypes) {
    SCOPED_TRACE(text(dtype));
    const Tensor x = random_tensor(dtype, {4, 5, 6}, seed++, -100, 100);
    const Tensor t = xdev::transpose(random_tensor(dtype, {6, 5}, seed++, -100, 100));
    const Tensor none = random_tensor(dtype, {3, 0}, seed++);
    const Tensor big = random_tensor(dtype, {1000, 300}, seed++, -100, 100);
    // x[3:0:-1], x[0:4, 4::-2, 5::-3], x[2, ::-1] (shrunk), x[newaxis, ::-1],
    // a transposed view reversed, an empty reversed window, a large one.
    EXPECT_TRUE(GpuMatchesCpu([&] { return xdev::strided_slice(x, {3}, {0}, {-1}); }));
    EXPECT_TRUE(GpuMatchesCpu(
        [&] { return xdev::strided_slice(x, {0, 4, 5}, {4, 0, 0}, {1, -2, -3}, 0, 6); }));
    EXPECT_TRUE(GpuMatchesCpu(
        [&] { return xdev::strided_slice(x, {2, 0}, {3, 0}, {1, -1}, 2, 2, 0, 0, 1); }));
    EXPECT_TRUE(GpuMatchesCpu(
        [&] { return xdev::strided_slice(x, {0, 0}, {0, 0}, {1, -1}, 2, 2, 0, 1); }));
    EXPECT_TRUE(GpuMatchesCpu([&] { return xdev::strided_slice(t, {0}, {0}, {-1}, 1, 1); }));
    EXPECT_TRUE(GpuMatchesCpu(
        [&] { return xdev::strided_slice(none, {0, 0}, {0, 0}, {-1, 1}, 3, 3); }));
    EXPECT_TRUE(GpuMatchesCpu(
        [&] { return xdev::strided_slice(big, {0, 0}, {0, 0}, {-3, -1}, 3, 3); }));
  }
}

TEST(CudaGpu, BroadcastToMatchesTheCpu) {
  XDEV_REQUIRE_GPU();
  uint64_t seed = 26000;
  const std::vector<std::pair<Shape, Shape>> cases = {
      {{3, 1, 5}, {2, 3, 4, 5}}, {{}, {7, 3}},     {{0, 1}, {0, 4}},   {{1}, {1}},
      {{1, 1000}, {500, 1000}},  {{4, 1}, {4, 0}},
      {{2, 1, 1, 1, 1, 1, 3}, {2, 2, 2, 2, 2, 2, 2, 3}}};
  for (DType dtype : kAllTypes) {
    for (const auto& [from, to] : cases) {
      SCOPED_TRACE(shape_text(from) + " to " + shape_text(to) + " " + text(dtype));
      const Tensor x = random_tensor(dtype, from, seed++, -100, 100);
      EXPECT_TRUE(GpuMatchesCpu([&] { return xdev::broadcast_to_copy(x, to); }));
    }
    SCOPED_TRACE(text(dtype));
    const Tensor t = xdev::transpose(random_tensor(dtype, {3, 5}, seed++));  // strided [5, 3]
    EXPECT_TRUE(GpuMatchesCpu([&] { return xdev::broadcast_to_copy(t, {2, 5, 3}); }));
    const Tensor e = edge_values(dtype);  // NaN, -0 ... copied bit for bit
    EXPECT_TRUE(GpuMatchesCpu([&] { return xdev::broadcast_to_copy(e, {3, e.shape()[0]}); }));
  }
}

TEST(CudaGpu, RangeMatchesTheCpu) {
  XDEV_REQUIRE_GPU();
  struct Case {
    double start, limit, delta;
  };
  // Integral bounds for every dtype; fractional ones (whose i·delta rounds)
  // for the floats.
  const std::vector<Case> integral = {{0, 10, 1},     {5, 0, -2},          {-7, 8, 3},
                                      {0, 0, 1},      {3, 3, -1},          {0, 1000000, 1},
                                      {-1000, 1000, 7}, {2147483000, 2147483647, 100}};
  const std::vector<Case> fractional = {{0, 1, 0.1},   {-3.5, 7.25, 0.5}, {1e10, 1e10 + 1, 1e-3},
                                        {0.3, -0.7, -0.01}, {0, 1e6, 0.37}};
  for (DType dtype : kNumberTypes) {
    for (const Case& c : integral) {
      SCOPED_TRACE(std::to_string(c.start) + ".." + std::to_string(c.limit) + " by " +
                   std::to_string(c.delta) + " " + text(dtype));
      EXPECT_TRUE(GpuMatchesCpu([&] { return xdev::range(c.start, c.limit, c.delta, dtype); }));
    }
    if (!is_float(dtype)) continue;
    for (const Case& c : fractional) {
      SCOPED_TRACE(std::to_string(c.start) + ".." + std::to_string(c.limit) + " by " +
                   std::to_string(c.delta) + " " + text(dtype));
      EXPECT_TRUE(GpuMatchesCpu([&] { return xdev::range(c.start, c.limit, c.delta, dtype); }));
    }
  }
}

TEST(CudaGpu, OneHotMatchesTheCpu) {
  XDEV_REQUIRE_GPU();
  constexpr double kNan = std::numeric_limits<double>::quiet_NaN();
  uint64_t seed = 27000;
  const std::vector<std::pair<double, double>> values = {
      {1, 0}, {-2.5, 7}, {kNan, -0.0}, {3e9, -3e9}};
  for (DType index_type : {DType::kInt32, DType::kInt64}) {
    for (const Shape& shape : {Shape{5}, Shape{3, 4}, Shape{}, Shape{0, 3}, Shape{2, 3, 4}}) {
      for (int64_t depth : {0, 1, 4, 300}) {
        // Indices in [-2, depth + 1]: some out of range (a row of off_value).
        const Tensor idx = random_tensor(index_type, shape, seed++, -2,
                                         static_cast<double>(depth + 1));
        for (int axis = -1; axis <= shape.rank(); ++axis) {
          for (DType dtype : kAllTypes) {
            for (const auto& [on, off] : values) {
              SCOPED_TRACE(shape_text(shape) + " depth " + std::to_string(depth) + " axis " +
                           std::to_string(axis) + " " + text(index_type) + " -> " + text(dtype) +
                           " on " + std::to_string(on) + " off " + std::to_string(off));
              EXPECT_TRUE(GpuMatchesCpu(
                  [&] { return xdev::one_hot(idx, depth, on, off, axis, dtype); }));
            }
          }
        }
      }
    }
  }
}

// ---------------------------------------------------------------------------
// Convolution and pooling (docs/ops.md): NHWC and NCHW, SAME and VALID,
// strides, dilations, windows larger than the image, empty batches and
// channels, strided inputs (the core makes them contiguous).

struct WindowCase {
  int64_t n, h, w, cin, cout, kh, kw;
  std::vector<int64_t> strides, dilations;
  const char* padding;
  const char* format;
};

std::string case_text(const WindowCase& c) {
  std::ostringstream o;
  o << "n" << c.n << " " << c.h << "x" << c.w << " cin " << c.cin << " cout " << c.cout << " k "
    << c.kh << "x" << c.kw << " strides " << c.strides[0] << "," << c.strides[1];
  if (!c.dilations.empty()) o << " dilations " << c.dilations[0] << "," << c.dilations[1];
  o << " " << c.padding << " " << c.format;
  return o.str();
}

// The image shape of `c` in its data_format.
Shape image(const WindowCase& c, int64_t h, int64_t w, int64_t channels) {
  return std::string(c.format) == "NCHW" ? Shape{c.n, channels, h, w} : Shape{c.n, h, w, channels};
}

// The output's height and width (window_geometry.hpp's rules, written out).
std::pair<int64_t, int64_t> output_size(const WindowCase& c) {
  auto axis = [&](int64_t in, int64_t k, int64_t s, int64_t d) {
    const int64_t e = (k - 1) * d + 1;
    return std::string(c.padding) == "SAME" ? (in + s - 1) / s : (in - e + s) / s;
  };
  const int64_t dy = c.dilations.empty() ? 1 : c.dilations[0];
  const int64_t dx = c.dilations.empty() ? 1 : c.dilations[1];
  return {axis(c.h, c.kh, c.strides[0], dy), axis(c.w, c.kw, c.strides[1], dx)};
}

// docs/ops.md's tolerance of Conv2D, doubled (each device may be that far
// from the exact result): (n + 2) eps times Σ |terms| (`scale`, computed in
// float64 on /CPU:0), n the terms per element, plus the smallest normal.
xdev_cuda_test::Compare conv_tolerance(const Tensor& scale, DType dtype, int64_t n) {
  const HostTensor h = scale.to_host();
  const double e = 2 * static_cast<double>(n + 2) * eps(dtype), t = tiny(dtype);
  return within([h, e, t](int64_t i, double) { return t + e * h.value_as_double(i); });
}

Tensor abs64(const Tensor& x) {
  xdev::DeviceScope cpu("/CPU:0");
  return xdev::abs(xdev::cast(x, DType::kFloat64));
}

const std::vector<WindowCase>& conv_cases() {
  static const std::vector<WindowCase> cases = {
      {2, 7, 8, 3, 4, 3, 3, {1, 1}, {}, "SAME", "NHWC"},
      {2, 7, 8, 3, 4, 3, 2, {2, 2}, {}, "VALID", "NCHW"},
      {2, 9, 9, 2, 3, 3, 3, {1, 1}, {2, 2}, "SAME", "NHWC"},
      {1, 10, 7, 3, 2, 2, 3, {2, 1}, {1, 2}, "VALID", "NCHW"},
      {3, 5, 5, 4, 5, 1, 1, {1, 1}, {}, "VALID", "NHWC"},
      {2, 3, 3, 2, 2, 5, 5, {1, 1}, {}, "SAME", "NCHW"},   // window larger than the image
      {2, 4, 4, 3, 2, 3, 3, {3, 3}, {}, "SAME", "NHWC"},
      {0, 5, 5, 2, 3, 3, 3, {1, 1}, {}, "SAME", "NHWC"},   // no images
      {2, 5, 5, 0, 3, 3, 3, {1, 1}, {}, "SAME", "NCHW"},   // no input channels
      {2, 5, 5, 2, 0, 3, 3, {1, 1}, {}, "VALID", "NHWC"},  // no output channels
      // Column matrices of several chunks (64 MiB each): 8 x 64 x 64
      // positions of 576 columns.
      {8, 64, 64, 64, 16, 3, 3, {1, 1}, {}, "SAME", "NHWC"},
      {8, 64, 64, 64, 16, 3, 3, {1, 1}, {}, "SAME", "NCHW"},
  };
  return cases;
}

TEST(CudaGpu, Conv2DAndItsGradientsMatchTheCpu) {
  XDEV_REQUIRE_GPU();
  uint64_t seed = 28000;
  for (DType dtype : kFloatTypes) {
    for (const WindowCase& c : conv_cases()) {
      SCOPED_TRACE(case_text(c) + " " + text(dtype));
      const auto [oh, ow] = output_size(c);
      const Shape in_shape = image(c, c.h, c.w, c.cin);
      const Tensor x = random_tensor(dtype, in_shape, seed++);
      const Tensor f = random_tensor(dtype, {c.kh, c.kw, c.cin, c.cout}, seed++);
      const Tensor dy = random_tensor(dtype, image(c, oh, ow, c.cout), seed++);
      const std::vector<int64_t> in_sizes(in_shape.begin(), in_shape.end());
      const std::vector<int64_t> f_sizes{c.kh, c.kw, c.cin, c.cout};
      Tensor y_scale, dx_scale, df_scale;
      {
        xdev::DeviceScope cpu("/CPU:0");
        y_scale = xdev::conv2d(abs64(x), abs64(f), c.strides, c.padding, c.format, c.dilations);
        dx_scale = xdev::conv2d_backprop_input(in_sizes, abs64(f), abs64(dy), c.strides,
                                               c.padding, c.format, c.dilations);
        df_scale = xdev::conv2d_backprop_filter(abs64(x), f_sizes, abs64(dy), c.strides,
                                                c.padding, c.format, c.dilations);
      }
      EXPECT_TRUE(GpuComparesToCpu(
          [&] { return xdev::conv2d(x, f, c.strides, c.padding, c.format, c.dilations); },
          conv_tolerance(y_scale, dtype, c.kh * c.kw * c.cin)))
          << "Conv2D";
      EXPECT_TRUE(GpuComparesToCpu(
          [&] {
            return xdev::conv2d_backprop_input(in_sizes, f, dy, c.strides, c.padding, c.format,
                                               c.dilations);
          },
          conv_tolerance(dx_scale, dtype, c.kh * c.kw * c.cout)))
          << "Conv2DBackpropInput";
      EXPECT_TRUE(GpuComparesToCpu(
          [&] {
            return xdev::conv2d_backprop_filter(x, f_sizes, dy, c.strides, c.padding, c.format,
                                                c.dilations);
          },
          conv_tolerance(df_scale, dtype, c.n * oh * ow)))
          << "Conv2DBackpropFilter";
    }
  }
  // Strided (transposed) operands; the core makes them contiguous.
  for (DType dtype : kFloatTypes) {
    SCOPED_TRACE("transposed " + text(dtype));
    const Tensor x = xdev::transpose(random_tensor(dtype, {3, 6, 5, 2}, seed++), {3, 2, 1, 0});
    const Tensor f = xdev::transpose(random_tensor(dtype, {3, 3, 2, 2}, seed++), {2, 1, 0, 3});
    Tensor scale;
    {
      xdev::DeviceScope cpu("/CPU:0");
      scale = xdev::conv2d(abs64(x), abs64(f), {1, 1}, "SAME");
    }
    EXPECT_TRUE(GpuComparesToCpu([&] { return xdev::conv2d(x, f, {1, 1}, "SAME"); },
                                 conv_tolerance(scale, dtype, 2 * 3 * 3)));
  }
}

// The cpu plugin's loops, term for term (window order, AvgPool in double,
// the gradients gathered in the order the cpu plugin scatters them): exact.
TEST(CudaGpu, PoolsAndTheirGradientsMatchTheCpuExactly) {
  XDEV_REQUIRE_GPU();
  const std::vector<WindowCase> cases = {
      {2, 7, 8, 3, 3, 3, 3, {2, 2}, {}, "SAME", "NHWC"},
      {2, 7, 8, 3, 3, 3, 3, {2, 2}, {}, "VALID", "NCHW"},
      {1, 9, 6, 2, 2, 2, 3, {1, 2}, {}, "SAME", "NCHW"},
      {3, 5, 5, 4, 4, 1, 1, {1, 1}, {}, "VALID", "NHWC"},
      {2, 3, 3, 2, 2, 5, 5, {1, 1}, {}, "SAME", "NHWC"},  // window larger than the image
      {2, 6, 6, 1, 1, 3, 3, {1, 1}, {}, "SAME", "NCHW"},  // overlapping windows
      {0, 5, 5, 2, 2, 2, 2, {2, 2}, {}, "VALID", "NHWC"}, // no images
      {2, 5, 5, 0, 0, 2, 2, {2, 2}, {}, "SAME", "NCHW"},  // no channels
      {4, 64, 64, 32, 32, 3, 3, {2, 2}, {}, "SAME", "NHWC"},
  };
  uint64_t seed = 29000;
  for (DType dtype : kFloatTypes) {
    for (const WindowCase& c : cases) {
      const auto [oh, ow] = output_size(c);
      const Shape in_shape = image(c, c.h, c.w, c.cin);
      const std::vector<int64_t> in_sizes(in_shape.begin(), in_shape.end());
      const std::vector<int64_t> k{c.kh, c.kw};
      const Tensor dy = random_tensor(dtype, image(c, oh, ow, c.cin), seed++);
      // Small integers: ties in most windows; then random reals.
      for (bool ties : {true, false}) {
        SCOPED_TRACE(case_text(c) + (ties ? " ties " : " ") + text(dtype));
        const Tensor x = ties ? xdev::cast(random_tensor(DType::kInt32, in_shape, seed++, 0, 2),
                                           dtype)
                              : random_tensor(dtype, in_shape, seed++);
        Tensor y;
        {
          xdev::DeviceScope cpu("/CPU:0");
          y = xdev::max_pool(x, k, c.strides, c.padding, c.format);
        }
        EXPECT_TRUE(
            GpuMatchesCpu([&] { return xdev::max_pool(x, k, c.strides, c.padding, c.format); }));
        EXPECT_TRUE(
            GpuMatchesCpu([&] { return xdev::avg_pool(x, k, c.strides, c.padding, c.format); }));
        EXPECT_TRUE(GpuMatchesCpu([&] {
          return xdev::max_pool_grad(x, y, dy, k, c.strides, c.padding, c.format);
        }));
        EXPECT_TRUE(GpuMatchesCpu([&] {
          return xdev::avg_pool_grad(in_sizes, dy, k, c.strides, c.padding, c.format);
        }));
      }
    }
    // NaN and ±inf in the windows: MaxPool takes the first NaN, and its
    // gradient goes there.
    SCOPED_TRACE("edge values " + text(dtype));
    const Tensor e = edge_values(dtype);  // 25 values
    const Tensor x = xdev::reshape(e, {1, 5, 5, 1});
    const Tensor dy = random_tensor(dtype, {1, 3, 3, 1}, seed++);
    Tensor y;
    {
      xdev::DeviceScope cpu("/CPU:0");
      y = xdev::max_pool(x, {2, 2}, {2, 2}, "SAME");
    }
    EXPECT_TRUE(GpuMatchesCpu([&] { return xdev::max_pool(x, {2, 2}, {2, 2}, "SAME"); }));
    EXPECT_TRUE(GpuMatchesCpu([&] { return xdev::avg_pool(x, {3, 3}, {2, 2}, "SAME"); }));
    EXPECT_TRUE(
        GpuMatchesCpu([&] { return xdev::max_pool_grad(x, y, dy, {2, 2}, {2, 2}, "SAME"); }));
    // A strided input (transposed; the core makes it contiguous).
    const Tensor t = xdev::transpose(random_tensor(dtype, {3, 6, 5, 2}, seed++), {3, 2, 1, 0});
    EXPECT_TRUE(GpuMatchesCpu([&] { return xdev::max_pool(t, {2, 2}, {1, 1}, "VALID"); }));
    EXPECT_TRUE(GpuMatchesCpu([&] { return xdev::avg_pool(t, {2, 2}, {1, 1}, "VALID"); }));
  }
}

}  // namespace
