// The host references of the conformance suite (reference/op_reference.hpp)
// against values computed by hand from docs/ops.md.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <span>
#include <vector>

#include "plugin_harness.hpp"
#include "reference/op_reference.hpp"

namespace xdev_conformance::ref {
namespace {

Tensor from(xdev_dtype_t dtype, std::vector<int64_t> shape, const std::vector<double>& values) {
  Tensor t = make_contiguous(dtype, shape);
  for (size_t i = 0; i < values.size(); ++i) t.set_double(static_cast<int64_t>(i), values[i]);
  return t;
}

std::vector<double> values(const Tensor& t) {
  std::vector<double> out;
  for (int64_t i = 0; i < t.num_elements(); ++i) out.push_back(t.get_double(i));
  return out;
}

using xdev_test::attr_bool;
using xdev_test::attr_dtype;
using xdev_test::attr_float;
using xdev_test::attr_int;
using xdev_test::attr_ints;

// Conv2D, the pools and their gradients: the case maker gives every window
// attribute (strides, padding, ksize, the gradients' sizes).
bool is_window_class(xdev::detail::ShapeClass c) {
  using xdev::detail::ShapeClass;
  return c == ShapeClass::kConv2D || c == ShapeClass::kConv2DBackpropInput ||
         c == ShapeClass::kConv2DBackpropFilter || c == ShapeClass::kPool ||
         c == ShapeClass::kMaxPoolGrad || c == ShapeClass::kAvgPoolGrad;
}

xdev_attr_t attr_string(const char* name, const char* value) {
  xdev_attr_t a{};
  a.name = name;
  a.kind = XDEV_ATTR_STRING;
  a.value.s = value;
  return a;
}

// docs/adding-an-op.md: an op of the core's table without a reference does
// not build (a static_assert in op_reference.cpp); this names it as well, and
// checks that the suite can make test data for it: every attribute it needs
// a value for is chosen by its shape class, a dtype attribute, or given by
// the reference's attr_sets.
TEST(OpReference, EveryOpOfTheTableHasAReference) {
  for (const xdev::detail::OpDef& def : xdev::detail::op_defs()) {
    const Reference& r = reference(def.id);
    EXPECT_NE(r.run, nullptr) << def.name << " has no host reference";
    for (const xdev::detail::AttrDef& a : def.attrs) {
      if (!a.required || a.kind == XDEV_ATTR_DTYPE) continue;
      const bool by_class = (def.shape_class == xdev::detail::ShapeClass::kReduce &&
                             std::string(a.name) == "axes") ||
                            ((def.shape_class == xdev::detail::ShapeClass::kAxis ||
                              def.shape_class == xdev::detail::ShapeClass::kConcat ||
                              def.shape_class == xdev::detail::ShapeClass::kStack ||
                              def.shape_class == xdev::detail::ShapeClass::kGather) &&
                             std::string(a.name) == "axis") ||
                            (def.shape_class == xdev::detail::ShapeClass::kFromAttr &&
                             std::string(a.name) == "shape") ||
                            (def.shape_class == xdev::detail::ShapeClass::kBroadcastTo &&
                             std::string(a.name) == "shape") ||
                            (def.shape_class == xdev::detail::ShapeClass::kTile &&
                             std::string(a.name) == "multiples") ||
                            (def.shape_class == xdev::detail::ShapeClass::kPad &&
                             std::string(a.name) == "paddings") ||
                            (def.shape_class == xdev::detail::ShapeClass::kLayerNorm &&
                             std::string(a.name) == "begin_norm_axis") ||
                            def.shape_class == xdev::detail::ShapeClass::kSlice ||
                            def.shape_class == xdev::detail::ShapeClass::kStridedSlice ||
                            def.shape_class == xdev::detail::ShapeClass::kRange ||
                            (def.shape_class == xdev::detail::ShapeClass::kOneHot &&
                             (std::string(a.name) == "depth" || std::string(a.name) == "axis")) ||
                            is_window_class(def.shape_class);
      if (by_class) continue;
      ASSERT_NE(r.attr_sets, nullptr)
          << def.name << ": required attribute '" << a.name << "' has no sample values";
      for (const AttrSet& set : r.attr_sets(XDEV_DTYPE_FLOAT32)) {
        bool found = false;
        for (const AttrSample& s : set) found = found || s.name == a.name;
        EXPECT_TRUE(found) << def.name << ": an attribute set lacks '" << a.name << "'";
      }
    }
  }
}

// The references run by the op's table entry give what they give by name.
TEST(OpReference, RunByEntryAndByNameAgree) {
  Tensor x = from(XDEV_DTYPE_INT32, {3}, {-2, 0, 5});
  Tensor by_name = make_contiguous(XDEV_DTYPE_INT32, {3});
  Tensor by_entry = make_contiguous(XDEV_DTYPE_INT32, {3});
  const Tensor* in[] = {&x};
  ASSERT_FALSE(run("Relu", in, {}, by_name));
  ASSERT_FALSE(reference(OpId::kRelu).run(Call{OpId::kRelu, in, {}, std::span<Tensor>(&by_entry, 1)}));
  EXPECT_EQ(values(by_name), (std::vector<double>{0, 0, 5}));
  EXPECT_EQ(values(by_entry), values(by_name));
  EXPECT_TRUE(run("NoSuchOp", in, {}, by_name).has_value());
}

TEST(OpReference, MatMulOfTheWalkthrough) {
  Tensor a = from(XDEV_DTYPE_FLOAT32, {2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor b = from(XDEV_DTYPE_FLOAT32, {3, 2}, {1, 2, 3, 4, 5, 6});
  Tensor out = make_contiguous(XDEV_DTYPE_FLOAT32, {2, 2});
  const Tensor* in[] = {&a, &b};
  xdev_attr_t attrs[] = {attr_bool("transpose_a", false), attr_bool("transpose_b", false)};
  ASSERT_FALSE(run("MatMul", in, attrs, out));
  EXPECT_EQ(values(out), (std::vector<double>{22, 28, 49, 64}));
  // aᵀ is [3,2]: (aᵀ)ᵀ·b... use transpose_a on a [3,2] view of the same numbers.
  Tensor at = from(XDEV_DTYPE_FLOAT32, {3, 2}, {1, 4, 2, 5, 3, 6});
  const Tensor* in_t[] = {&at, &b};
  xdev_attr_t attrs_t[] = {attr_bool("transpose_a", true), attr_bool("transpose_b", false)};
  ASSERT_FALSE(run("MatMul", in_t, attrs_t, out));
  EXPECT_EQ(values(out), (std::vector<double>{22, 28, 49, 64}));
}

TEST(OpReference, IntegerDivisionRoundsTowardZeroAndZeroDivisorGivesZero) {
  Tensor x = from(XDEV_DTYPE_INT32, {4}, {7, -7, 7, 5});
  Tensor y = from(XDEV_DTYPE_INT32, {4}, {2, 2, -2, 0});
  Tensor out = make_contiguous(XDEV_DTYPE_INT32, {4});
  const Tensor* in[] = {&x, &y};
  ASSERT_FALSE(run("Div", in, {}, out));
  EXPECT_EQ(values(out), (std::vector<double>{3, -3, -3, 0}));
}

TEST(OpReference, BroadcastInputsHaveStrideZero) {
  Tensor x = from(XDEV_DTYPE_FLOAT64, {2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor row = from(XDEV_DTYPE_FLOAT64, {3}, {10, 20, 30});
  row.shape = {2, 3};
  row.strides = {0, 1};
  Tensor out = make_contiguous(XDEV_DTYPE_FLOAT64, {2, 3});
  const Tensor* in[] = {&x, &row};
  ASSERT_FALSE(run("Add", in, {}, out));
  EXPECT_EQ(values(out), (std::vector<double>{11, 22, 33, 14, 25, 36}));
}

TEST(OpReference, BoolAddIsLogicalOr) {
  Tensor x = from(XDEV_DTYPE_BOOL, {4}, {0, 1, 0, 1});
  Tensor y = from(XDEV_DTYPE_BOOL, {4}, {0, 0, 1, 1});
  Tensor out = make_contiguous(XDEV_DTYPE_BOOL, {4});
  const Tensor* in[] = {&x, &y};
  ASSERT_FALSE(run("Add", in, {}, out));
  EXPECT_EQ(values(out), (std::vector<double>{0, 1, 1, 1}));
}

TEST(OpReference, CastTruncatesAndBoolIsNonZero) {
  Tensor x = from(XDEV_DTYPE_FLOAT32, {4}, {2.7, -2.7, 0.0, -0.0});
  Tensor out = make_contiguous(XDEV_DTYPE_INT32, {4});
  const Tensor* in[] = {&x};
  xdev_attr_t attrs[] = {attr_dtype("dtype", XDEV_DTYPE_INT32)};
  ASSERT_FALSE(run("Cast", in, attrs, out));
  EXPECT_EQ(values(out), (std::vector<double>{2, -2, 0, 0}));
  Tensor flags = make_contiguous(XDEV_DTYPE_BOOL, {4});
  ASSERT_FALSE(run("Cast", in, attrs, flags));
  EXPECT_EQ(values(flags), (std::vector<double>{1, 1, 0, 0}));
}

// docs/ops.md: float -> int saturates and NaN gives 0, for Cast and Fill
// (the reference used a plain cast: undefined for 1e300, found by fuzz_ops).
TEST(OpReference, FloatToIntSaturatesAndNanGivesZero) {
  const double inf = std::numeric_limits<double>::infinity();
  Tensor x = from(XDEV_DTYPE_FLOAT64, {5}, {1e300, -1e300, inf, std::nan(""), -2.5});
  for (xdev_dtype_t dtype : {XDEV_DTYPE_INT32, XDEV_DTYPE_INT64}) {
    Tensor out = make_contiguous(dtype, {5});
    const Tensor* in[] = {&x};
    xdev_attr_t attrs[] = {attr_dtype("dtype", dtype)};
    ASSERT_FALSE(run("Cast", in, attrs, out));
    const int64_t high = dtype == XDEV_DTYPE_INT32 ? INT32_MAX : INT64_MAX;
    const int64_t low = dtype == XDEV_DTYPE_INT32 ? INT32_MIN : INT64_MIN;
    EXPECT_EQ(out.get_int(0), high);
    EXPECT_EQ(out.get_int(1), low);
    EXPECT_EQ(out.get_int(2), high);
    EXPECT_EQ(out.get_int(3), 0);
    EXPECT_EQ(out.get_int(4), -2);

    Tensor filled = make_contiguous(dtype, {1});
    xdev_attr_t fill_attrs[] = {attr_float("value", 1e300)};
    ASSERT_FALSE(run("Fill", {}, fill_attrs, filled));
    EXPECT_EQ(filled.get_int(0), high);
  }
}

// OneHot of no indices with the largest depth is valid (an empty output);
// the reference once took the depth through a double and converted 2^63
// back, which is undefined (found by fuzz_ops under clang's UBSan; its input
// is in tests/fuzz/corpus/fuzz_ops/onehot-depth-int64-max).
TEST(OpReference, OneHotTakesTheLargestDepthAsAnInteger) {
  Tensor indices = from(XDEV_DTYPE_INT64, {0}, {});
  const Tensor* in[] = {&indices};
  xdev_attr_t attrs[] = {attr_int("depth", INT64_MAX), attr_int("axis", 1),
                         attr_float("on_value", 1), attr_float("off_value", 0)};
  Tensor empty = make_contiguous(XDEV_DTYPE_FLOAT32, {0, INT64_MAX});
  EXPECT_FALSE(run("OneHot", in, attrs, empty));
  // And a small depth still gives the rows.
  Tensor two = from(XDEV_DTYPE_INT64, {2}, {1, 5});
  const Tensor* in2[] = {&two};
  xdev_attr_t attrs2[] = {attr_int("depth", 3), attr_int("axis", 1), attr_float("on_value", 1),
                          attr_float("off_value", 0)};
  Tensor out = make_contiguous(XDEV_DTYPE_FLOAT32, {2, 3});
  ASSERT_FALSE(run("OneHot", in2, attrs2, out));
  EXPECT_EQ(values(out), (std::vector<double>{0, 1, 0, 0, 0, 0}));
}

TEST(OpReference, MeanOfIntegersAndOfNothing) {
  Tensor x = from(XDEV_DTYPE_INT64, {2, 3}, {1, 2, 4, -1, -2, -4});
  Tensor out = make_contiguous(XDEV_DTYPE_INT64, {2});
  const Tensor* in[] = {&x};
  const std::vector<int64_t> axes = {1};
  xdev_attr_t attrs[] = {attr_ints("axes", axes), attr_bool("keepdims", false)};
  ASSERT_FALSE(run("Mean", in, attrs, out));
  EXPECT_EQ(values(out), (std::vector<double>{2, -2}));  // 7/3 and -7/3 toward zero

  Tensor empty = make_contiguous(XDEV_DTYPE_FLOAT32, {3, 0});
  Tensor mean = make_contiguous(XDEV_DTYPE_FLOAT32, {3});
  const Tensor* in_empty[] = {&empty};
  ASSERT_FALSE(run("Mean", in_empty, attrs, mean));
  EXPECT_TRUE(std::isnan(mean.get_double(0)));
  Tensor sum = make_contiguous(XDEV_DTYPE_FLOAT32, {3});
  ASSERT_FALSE(run("Sum", in_empty, attrs, sum));
  EXPECT_EQ(values(sum), (std::vector<double>{0, 0, 0}));
}

TEST(OpReference, ComparisonsTreatNaNAsUnequalAndInt64Exactly) {
  const double nan = std::nan("");
  Tensor x = from(XDEV_DTYPE_FLOAT64, {4}, {1, nan, -0.0, 2});
  Tensor y = from(XDEV_DTYPE_FLOAT64, {4}, {1, nan, 0.0, 3});
  const Tensor* in[] = {&x, &y};
  auto run2 = [&](const char* op) {
    Tensor out = make_contiguous(XDEV_DTYPE_BOOL, {4});
    EXPECT_FALSE(run(op, in, {}, out)) << op;
    return values(out);
  };
  EXPECT_EQ(run2("Equal"), (std::vector<double>{1, 0, 1, 0}));
  EXPECT_EQ(run2("NotEqual"), (std::vector<double>{0, 1, 0, 1}));
  EXPECT_EQ(run2("Less"), (std::vector<double>{0, 0, 0, 1}));
  EXPECT_EQ(run2("GreaterEqual"), (std::vector<double>{1, 0, 1, 0}));
  // 2^53 + 1 and 2^53 are one double but two int64 values.
  Tensor a = make_contiguous(XDEV_DTYPE_INT64, {1});
  Tensor b = make_contiguous(XDEV_DTYPE_INT64, {1});
  a.set_int(0, (int64_t{1} << 53) + 1);
  b.set_int(0, int64_t{1} << 53);
  const Tensor* ab[] = {&a, &b};
  Tensor out = make_contiguous(XDEV_DTYPE_BOOL, {1});
  ASSERT_FALSE(run("Greater", ab, {}, out));
  EXPECT_EQ(out.get_int(0), 1);
}

TEST(OpReference, SelectAndClipByValue) {
  const double nan = std::nan("");
  Tensor c = from(XDEV_DTYPE_BOOL, {3}, {1, 0, 1});
  Tensor x = from(XDEV_DTYPE_FLOAT32, {3}, {1, 2, 3});
  Tensor y = from(XDEV_DTYPE_FLOAT32, {3}, {-1, -2, -3});
  const Tensor* sel[] = {&c, &x, &y};
  Tensor out = make_contiguous(XDEV_DTYPE_FLOAT32, {3});
  ASSERT_FALSE(run("Select", sel, {}, out));
  EXPECT_EQ(values(out), (std::vector<double>{1, -2, 3}));
  Tensor v = from(XDEV_DTYPE_FLOAT64, {4}, {-5, 0.5, 7, nan});
  Tensor lo = from(XDEV_DTYPE_FLOAT64, {4}, {0, 0, 0, 0});
  Tensor hi = from(XDEV_DTYPE_FLOAT64, {4}, {1, 1, 1, 1});
  const Tensor* clip[] = {&v, &lo, &hi};
  Tensor clipped = make_contiguous(XDEV_DTYPE_FLOAT64, {4});
  ASSERT_FALSE(run("ClipByValue", clip, {}, clipped));
  EXPECT_EQ(clipped.get_double(0), 0.0);
  EXPECT_EQ(clipped.get_double(1), 0.5);
  EXPECT_EQ(clipped.get_double(2), 1.0);
  EXPECT_TRUE(std::isnan(clipped.get_double(3)));
}

TEST(OpReference, ReductionsOfNothingGiveTheirIdentity) {
  const std::vector<int64_t> axes = {1};
  xdev_attr_t attrs[] = {attr_ints("axes", axes), attr_bool("keepdims", false)};
  Tensor empty = make_contiguous(XDEV_DTYPE_FLOAT64, {2, 0});
  const Tensor* in[] = {&empty};
  auto reduce = [&](const char* op) {
    Tensor out = make_contiguous(XDEV_DTYPE_FLOAT64, {2});
    EXPECT_FALSE(run(op, in, attrs, out)) << op;
    return out.get_double(0);
  };
  EXPECT_EQ(reduce("Max"), -INFINITY);
  EXPECT_EQ(reduce("Min"), INFINITY);
  EXPECT_EQ(reduce("Prod"), 1.0);
  EXPECT_EQ(reduce("LogSumExp"), -INFINITY);
  Tensor bools = make_contiguous(XDEV_DTYPE_BOOL, {2, 0});
  const Tensor* bin[] = {&bools};
  Tensor any = make_contiguous(XDEV_DTYPE_BOOL, {2});
  Tensor all = make_contiguous(XDEV_DTYPE_BOOL, {2});
  ASSERT_FALSE(run("Any", bin, attrs, any));
  ASSERT_FALSE(run("All", bin, attrs, all));
  EXPECT_EQ(values(any), (std::vector<double>{0, 0}));
  EXPECT_EQ(values(all), (std::vector<double>{1, 1}));
  // LogSumExp of [1000, 1000] is 1000 + ln 2, without overflow.
  Tensor big = from(XDEV_DTYPE_FLOAT64, {1, 2}, {1000, 1000});
  const Tensor* bigin[] = {&big};
  Tensor lse = make_contiguous(XDEV_DTYPE_FLOAT64, {1});
  ASSERT_FALSE(run("LogSumExp", bigin, attrs, lse));
  EXPECT_DOUBLE_EQ(lse.get_double(0), 1000.0 + std::log(2.0));
}

TEST(OpReference, MathEdgeCasesOfTheDocs) {
  const double nan = std::nan(""), inf = INFINITY;
  auto run1 = [](const char* op, xdev_dtype_t dtype, const std::vector<double>& x,
                 std::span<const xdev_attr_t> attrs = {}) {
    Tensor in = from(dtype, {static_cast<int64_t>(x.size())}, x);
    Tensor out = make_contiguous(dtype, {static_cast<int64_t>(x.size())});
    const Tensor* inputs[] = {&in};
    EXPECT_FALSE(run(op, inputs, attrs, out)) << op;
    return values(out);
  };
  // Round: halves to even; Floor and Ceil of negatives.
  EXPECT_EQ(run1("Round", XDEV_DTYPE_FLOAT32, {0.5, 1.5, 2.5, -0.5, -1.5, 2.6}),
            (std::vector<double>{0, 2, 2, -0.0, -2, 3}));
  EXPECT_EQ(run1("Floor", XDEV_DTYPE_FLOAT64, {-1.5, 1.5}), (std::vector<double>{-2, 1}));
  EXPECT_EQ(run1("Ceil", XDEV_DTYPE_FLOAT64, {-1.5, 1.5}), (std::vector<double>{-1, 2}));
  // Sign keeps 0 and NaN; Log of a negative is NaN, of 0 -inf.
  std::vector<double> sign = run1("Sign", XDEV_DTYPE_FLOAT64, {-3, 0, 2, nan});
  EXPECT_EQ(sign[0], -1);
  EXPECT_EQ(sign[1], 0);
  EXPECT_EQ(sign[2], 1);
  EXPECT_TRUE(std::isnan(sign[3]));
  std::vector<double> log = run1("Log", XDEV_DTYPE_FLOAT64, {-1, 0, 1});
  EXPECT_TRUE(std::isnan(log[0]));
  EXPECT_EQ(log[1], -inf);
  EXPECT_EQ(log[2], 0);
  // Integers: Abs(MIN) = MIN, Square wraps, Sign.
  EXPECT_EQ(run1("Abs", XDEV_DTYPE_INT32, {-2147483648.0, -5, 5}),
            (std::vector<double>{-2147483648.0, 5, 5}));
  EXPECT_EQ(run1("Square", XDEV_DTYPE_INT32, {65536, -3}), (std::vector<double>{0, 9}));
  EXPECT_EQ(run1("Sign", XDEV_DTYPE_INT64, {-7, 0, 9}), (std::vector<double>{-1, 0, 1}));
  // Softplus does not overflow; Sigmoid and its limits.
  std::vector<double> softplus = run1("Softplus", XDEV_DTYPE_FLOAT64, {1000, -1000, 0});
  EXPECT_EQ(softplus[0], 1000);
  EXPECT_EQ(softplus[1], 0);
  EXPECT_DOUBLE_EQ(softplus[2], std::log(2.0));
  EXPECT_EQ(run1("Sigmoid", XDEV_DTYPE_FLOAT64, {0, -1000, 1000}), (std::vector<double>{0.5, 0, 1}));
  // LeakyRelu with its default slope and another; Gelu, both forms.
  xdev_attr_t alphas[] = {attr_float("alpha", 0.2)};
  EXPECT_EQ(run1("LeakyRelu", XDEV_DTYPE_FLOAT64, {-2, 3}, alphas), (std::vector<double>{-0.4, 3}));
  std::vector<double> gelu = run1("Gelu", XDEV_DTYPE_FLOAT64, {1, -1});
  EXPECT_NEAR(gelu[0], 0.8413447460685429, 1e-15);  // 1 · Φ(1)
  EXPECT_NEAR(gelu[1], -0.15865525393145707, 1e-15);
  xdev_attr_t approx[] = {attr_bool("approximate", true)};
  std::vector<double> gelu_tanh = run1("Gelu", XDEV_DTYPE_FLOAT64, {1}, approx);
  EXPECT_NEAR(gelu_tanh[0], 0.8411919906082768, 1e-15);  // 0.5 (1 + tanh(√(2/π) 1.044715))
}

TEST(OpReference, FloorDivAndFloorModRoundTowardMinusInfinity) {
  Tensor x = from(XDEV_DTYPE_INT64, {5}, {7, -7, 7, -7, 3});
  Tensor y = from(XDEV_DTYPE_INT64, {5}, {2, 2, -2, -2, 0});
  Tensor out = make_contiguous(XDEV_DTYPE_INT64, {5});
  const Tensor* in[] = {&x, &y};
  ASSERT_FALSE(run("FloorDiv", in, {}, out));
  EXPECT_EQ(values(out), (std::vector<double>{3, -4, -4, 3, 0}));
  ASSERT_FALSE(run("FloorMod", in, {}, out));
  EXPECT_EQ(values(out), (std::vector<double>{1, 1, -1, -1, 0}));
  Tensor a = from(XDEV_DTYPE_FLOAT64, {2}, {std::nan(""), 1});
  Tensor b = from(XDEV_DTYPE_FLOAT64, {2}, {1, 2});
  Tensor mx = make_contiguous(XDEV_DTYPE_FLOAT64, {2});
  const Tensor* ab[] = {&a, &b};
  ASSERT_FALSE(run("Maximum", ab, {}, mx));
  EXPECT_TRUE(std::isnan(mx.get_double(0)));
  EXPECT_EQ(mx.get_double(1), 2);
}

TEST(OpReference, RandomUniformFollowsTheDefinition) {
  // docs/ops.md's generator, element 0 of seed 0, written out.
  uint64_t x = 0 + 1 * 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  x = x ^ (x >> 31);
  const double u = static_cast<double>(x >> 11) * 0x1.0p-53;
  EXPECT_EQ(random_uniform_f64(0, 0, -1.0, 3.0), -1.0 + 4.0 * u);
  const float uf = static_cast<float>(x >> 40) * 0x1.0p-24f;
  EXPECT_EQ(random_uniform_f32(0, 0, 0.0, 1.0), uf);
}

// Slice and StridedSlice (tf.slice, tf.strided_slice): the windows NumPy's
// x[...] gives, a -1 size, a negative stride, and the masks.
TEST(OpReference, SlicesOfTheDocs) {
  Tensor x = from(XDEV_DTYPE_INT64, {3, 4}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11});
  const Tensor* in[] = {&x};
  Tensor window = make_contiguous(XDEV_DTYPE_INT64, {2, 3});
  const std::vector<int64_t> begin{1, 1}, size{2, -1};
  const xdev_attr_t slice_attrs[] = {attr_ints("begin", begin), attr_ints("size", size)};
  ASSERT_FALSE(run("Slice", in, slice_attrs, window));
  EXPECT_EQ(values(window), (std::vector<double>{5, 6, 7, 9, 10, 11}));
  // x[:, 3:0:-2]
  Tensor reversed = make_contiguous(XDEV_DTYPE_INT64, {3, 2});
  const std::vector<int64_t> b{0, 3}, e{3, 0}, s{1, -2};
  const xdev_attr_t attrs[] = {attr_ints("begin", b), attr_ints("end", e), attr_ints("strides", s)};
  ASSERT_FALSE(run("StridedSlice", in, attrs, reversed));
  EXPECT_EQ(values(reversed), (std::vector<double>{3, 1, 7, 5, 11, 9}));
  // x[-1, ::-1]: shrink entry 0, entry 1 masked both ways.
  Tensor row = make_contiguous(XDEV_DTYPE_INT64, {4});
  const std::vector<int64_t> b2{-1, 0}, e2{0, 0}, s2{1, -1};
  const xdev_attr_t masked[] = {attr_ints("begin", b2), attr_ints("end", e2),
                                attr_ints("strides", s2), attr_int("begin_mask", 2),
                                attr_int("end_mask", 2), attr_int("shrink_axis_mask", 1)};
  ASSERT_FALSE(run("StridedSlice", in, masked, row));
  EXPECT_EQ(values(row), (std::vector<double>{11, 10, 9, 8}));
}

// [[1, 2, 3], [4, 5, 6], [7, 8, 9]] under [[1, 2], [3, 4]] (docs/ops.md):
// SAME pads one element after; stride 2 keeps (0, 0), (0, 2), (2, 0), (2, 2).
TEST(OpReference, WindowOpsOfA3x3ImageByHand) {
  const Tensor x = from(XDEV_DTYPE_FLOAT64, {1, 3, 3, 1}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  const Tensor w = from(XDEV_DTYPE_FLOAT64, {2, 2, 1, 1}, {1, 2, 3, 4});
  const std::vector<int64_t> ones{1, 1}, twos{2, 2};
  const Tensor* conv_in[] = {&x, &w};
  Tensor same = make_contiguous(XDEV_DTYPE_FLOAT64, {1, 3, 3, 1});
  const xdev_attr_t same_attrs[] = {attr_ints("strides", ones), attr_string("padding", "SAME"),
                                    attr_ints("dilations", ones),
                                    attr_string("data_format", "NHWC")};
  ASSERT_FALSE(run("Conv2D", conv_in, same_attrs, same));
  EXPECT_EQ(values(same), (std::vector<double>{37, 47, 21, 67, 77, 33, 23, 26, 9}));
  Tensor strided = make_contiguous(XDEV_DTYPE_FLOAT64, {1, 2, 2, 1});
  const xdev_attr_t strided_attrs[] = {attr_ints("strides", twos), attr_string("padding", "SAME"),
                                       attr_ints("dilations", ones),
                                       attr_string("data_format", "NHWC")};
  ASSERT_FALSE(run("Conv2D", conv_in, strided_attrs, strided));
  EXPECT_EQ(values(strided), (std::vector<double>{37, 21, 23, 9}));
  // AvgPool SAME 2x2: the padding is not counted.
  const Tensor* pool_in[] = {&x};
  Tensor avg = make_contiguous(XDEV_DTYPE_FLOAT64, {1, 3, 3, 1});
  const xdev_attr_t pool_attrs[] = {attr_ints("ksize", twos), attr_ints("strides", ones),
                                    attr_string("padding", "SAME"),
                                    attr_string("data_format", "NHWC")};
  ASSERT_FALSE(run("AvgPool", pool_in, pool_attrs, avg));
  EXPECT_EQ(values(avg), (std::vector<double>{3, 4, 4.5, 6, 7, 7.5, 7.5, 8.5, 9}));
  // MaxPoolGrad: ties go to the first element of the window.
  const Tensor flat = from(XDEV_DTYPE_FLOAT64, {1, 2, 2, 1}, {1, 1, 1, 1});
  const Tensor five = from(XDEV_DTYPE_FLOAT64, {1, 1, 1, 1}, {5});
  const Tensor* grad_in[] = {&flat, &five, &five};
  Tensor routed = make_contiguous(XDEV_DTYPE_FLOAT64, {1, 2, 2, 1});
  const xdev_attr_t grad_attrs[] = {attr_ints("ksize", twos), attr_ints("strides", twos),
                                    attr_string("padding", "VALID"),
                                    attr_string("data_format", "NHWC")};
  ASSERT_FALSE(run("MaxPoolGrad", grad_in, grad_attrs, routed));
  EXPECT_EQ(values(routed), (std::vector<double>{5, 0, 0, 0}));
}

// BatchMatMulV2: the batch axes broadcast (a missing axis, or 1, on either
// side), adj_y swaps y's last two axes.
TEST(OpReference, BatchMatMulBroadcastsItsBatchAxes) {
  const Tensor x = from(XDEV_DTYPE_FLOAT32, {2, 1, 2}, {1, 2, 3, 4});
  const Tensor y = from(XDEV_DTYPE_FLOAT32, {2, 2}, {1, 2, 3, 4});
  const Tensor* in[] = {&x, &y};
  Tensor out = make_contiguous(XDEV_DTYPE_FLOAT32, {2, 1, 2});
  const xdev_attr_t plain[] = {attr_bool("adj_x", false), attr_bool("adj_y", false)};
  ASSERT_FALSE(run("BatchMatMulV2", in, plain, out));
  EXPECT_EQ(values(out), (std::vector<double>{7, 10, 15, 22}));
  const xdev_attr_t adj[] = {attr_bool("adj_x", false), attr_bool("adj_y", true)};
  ASSERT_FALSE(run("BatchMatMulV2", in, adj, out));
  EXPECT_EQ(values(out), (std::vector<double>{5, 11, 11, 25}));
  // [2, 1] batch of row vectors against a [1, 3] batch of columns.
  const Tensor rows = from(XDEV_DTYPE_INT64, {2, 1, 1, 2}, {1, 2, 3, 4});
  const Tensor cols = from(XDEV_DTYPE_INT64, {1, 3, 2, 1}, {1, 1, 2, 0, 0, 3});
  const Tensor* both[] = {&rows, &cols};
  Tensor grid = make_contiguous(XDEV_DTYPE_INT64, {2, 3, 1, 1});
  ASSERT_FALSE(run("BatchMatMulV2", both, plain, grid));
  EXPECT_EQ(values(grid), (std::vector<double>{3, 2, 6, 7, 6, 12}));
}

// TensorScatterAdd: repeated indices accumulate, an index of depth 1 into a
// matrix adds a row, integers wrap, an index out of range is an error.
TEST(OpReference, TensorScatterAddAccumulatesRepeatedIndices) {
  const Tensor ones = from(XDEV_DTYPE_FLOAT64, {4}, {1, 1, 1, 1});
  const Tensor at = from(XDEV_DTYPE_INT32, {3, 1}, {1, 3, 1});
  const Tensor upd = from(XDEV_DTYPE_FLOAT64, {3}, {1, 2, 5});
  const Tensor* in[] = {&ones, &at, &upd};
  Tensor out = make_contiguous(XDEV_DTYPE_FLOAT64, {4});
  ASSERT_FALSE(run("TensorScatterAdd", in, {}, out));
  EXPECT_EQ(values(out), (std::vector<double>{1, 7, 1, 3}));

  const Tensor matrix = make_contiguous(XDEV_DTYPE_FLOAT32, {3, 2});
  const Tensor rows = from(XDEV_DTYPE_INT64, {2, 1}, {2, 0});
  const Tensor slices = from(XDEV_DTYPE_FLOAT32, {2, 2}, {1, 2, 3, 4});
  const Tensor* row_in[] = {&matrix, &rows, &slices};
  Tensor row_out = make_contiguous(XDEV_DTYPE_FLOAT32, {3, 2});
  ASSERT_FALSE(run("TensorScatterAdd", row_in, {}, row_out));
  EXPECT_EQ(values(row_out), (std::vector<double>{3, 4, 0, 0, 1, 2}));

  const Tensor big = from(XDEV_DTYPE_INT32, {1}, {2147483647});
  const Tensor zero = from(XDEV_DTYPE_INT32, {1, 1}, {0});
  const Tensor one = from(XDEV_DTYPE_INT32, {1}, {1});
  const Tensor* wrap_in[] = {&big, &zero, &one};
  Tensor wrapped = make_contiguous(XDEV_DTYPE_INT32, {1});
  ASSERT_FALSE(run("TensorScatterAdd", wrap_in, {}, wrapped));
  EXPECT_EQ(values(wrapped), (std::vector<double>{-2147483648.0}));

  const Tensor outside = from(XDEV_DTYPE_INT32, {3, 1}, {1, 4, 1});
  const Tensor* bad_in[] = {&ones, &outside, &upd};
  const std::optional<std::string> error = run("TensorScatterAdd", bad_in, {}, out);
  ASSERT_TRUE(error.has_value());
  EXPECT_NE(error->find("index 4"), std::string::npos) << *error;
}

TEST(OpReference, CompareAllowsTheToleranceAndNothingMore) {
  Tensor want = from(XDEV_DTYPE_FLOAT32, {2}, {1.0, NAN});
  Tensor got = from(XDEV_DTYPE_FLOAT32, {2}, {1.001, NAN});
  std::vector<Tolerance> tight(2), loose(2, Tolerance{0.01, 0});
  EXPECT_TRUE(compare(got, want, tight).has_value());
  EXPECT_FALSE(compare(got, want, loose).has_value());
  Tensor ints = from(XDEV_DTYPE_INT32, {1}, {3});
  Tensor other = from(XDEV_DTYPE_INT32, {1}, {4});
  EXPECT_EQ(*compare(other, ints, loose), "element 0 is 4, expected 3");
}

}  // namespace
}  // namespace xdev_conformance::ref
