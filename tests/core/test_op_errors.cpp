// The eager op layer's error paths, through the public SDK like a user
// program: every bad argument is xdev::Error(kInvalidArgument) naming the op
// and the value at fault, raised before any device is touched. Also the
// regressions of the SDK-boundary hardening: overflowing sizes (class 1),
// unchecked enums and element types (class 2), lossy read-back (class 5),
// and ops that returned garbage for bad arguments (class 7).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <xdev/xdev.hpp>

namespace {

using ::testing::HasSubstr;
using xdev::DType;
using xdev::ErrorCode;
using xdev::Shape;
using xdev::Tensor;

// Runs `call`, which must throw xdev::Error with `code`; returns the message.
template <typename F>
std::string error_of(F&& call, ErrorCode code = ErrorCode::kInvalidArgument) {
  try {
    call();
  } catch (const xdev::Error& e) {
    EXPECT_EQ(e.code(), code) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "no xdev::Error was thrown";
  return "";
}

#define EXPECT_INVALID(call, ...)                                   \
  EXPECT_THAT(error_of([&] { (void)(call); }), ::testing::AllOf(__VA_ARGS__))

class OpErrors : public ::testing::Test {
 protected:
  void SetUp() override {
    xdev::clear_recent_placements();
    xdev::reset_placement_counters();
  }
  // A refused call placed nothing, copied nothing, ran no kernel.
  void TearDown() override {
    EXPECT_TRUE(xdev::recent_placements().empty()) << "a refused op was placed";
    EXPECT_EQ(xdev::placement_counters().implicit_copies, 0u);
  }
  // After making a test's input tensors.
  static void clear_recent() {
    xdev::clear_recent_placements();
    xdev::reset_placement_counters();
  }
};

// --- the eager layer's checks, op by op ---------------------------------------------

TEST_F(OpErrors, AnEmptyTensorIsNamed) {
  const Tensor x = xdev::ones({2});
  clear_recent();
  EXPECT_INVALID(xdev::add(Tensor{}, x), HasSubstr("Add: x is an empty (default-constructed) tensor"));
  EXPECT_INVALID(xdev::matmul(x, Tensor{}), HasSubstr("MatMul: b is an empty"));
  EXPECT_INVALID(xdev::add_n({x, Tensor{}}), HasSubstr("AddN: input 1 is an empty"));
  EXPECT_INVALID(xdev::sum(Tensor{}), HasSubstr("Sum: x is an empty"));
  EXPECT_INVALID(xdev::cast(Tensor{}, DType::kInt32), HasSubstr("Cast: x is an empty"));
}

TEST_F(OpErrors, DtypesMustMatchAndBeDefinedForTheOp) {
  const Tensor x = xdev::ones({2}), i = xdev::ones({2}, DType::kInt32);
  const Tensor flags = xdev::ones({2}, DType::kBool);
  clear_recent();
  EXPECT_INVALID(xdev::add(x, i), HasSubstr("Add: inputs have different dtypes"),
                 HasSubstr("float32"), HasSubstr("int32"));
  EXPECT_INVALID(xdev::sub(flags, flags), HasSubstr("Sub: x is bool"),
                 HasSubstr("float32, float64, int32, int64"));
  EXPECT_INVALID(xdev::matmul(flags, flags), HasSubstr("MatMul: a is bool"));
  EXPECT_INVALID(xdev::relu(flags), HasSubstr("Relu: x is bool"));
  EXPECT_INVALID(xdev::mean(flags), HasSubstr("Mean: x is bool"));
  EXPECT_INVALID(xdev::add_n({x, i}), HasSubstr("AddN: inputs have different dtypes"),
                 HasSubstr("input 1 is int32"));
  EXPECT_INVALID(xdev::random_uniform({2}, 0, 1, DType::kInt32),
                 HasSubstr("RandomUniform: attribute 'dtype' is int32"),
                 HasSubstr("float32, float64"));
}

TEST_F(OpErrors, ShapesThatDoNotFitAreNamed) {
  const Tensor m23 = xdev::ones({2, 3}), v4 = xdev::ones({4}), v3 = xdev::ones({3});
  clear_recent();
  EXPECT_INVALID(xdev::add(m23, v4),
                 HasSubstr("Add: shapes (2, 3) and (4,) cannot be broadcast together "
                           "(dimension 1: 3 vs 4)"));
  EXPECT_INVALID(xdev::matmul(v3, v3), HasSubstr("MatMul: inputs must have rank 2"),
                 HasSubstr("(3,)"));
  EXPECT_INVALID(xdev::matmul(m23, m23), HasSubstr("MatMul: inner dimensions differ"),
                 HasSubstr("(3 vs 2)"));
  EXPECT_INVALID(xdev::add_n({v3, v4}), HasSubstr("AddN: input 1 has shape (4,), input 0 has (3,)"));
  EXPECT_INVALID(xdev::add_n({}), HasSubstr("AddN: needs at least 1 input, got 0"));
}

TEST_F(OpErrors, AxesAndPermutations) {
  const Tensor m = xdev::ones({2, 3});
  clear_recent();
  EXPECT_INVALID(xdev::sum(m, {2}), HasSubstr("Sum: axis 2 is out of range for rank 2"));
  EXPECT_INVALID(xdev::mean(m, {-3}), HasSubstr("Mean: axis -3 is out of range for rank 2"));
  EXPECT_INVALID(xdev::sum(m, {1, -1}), HasSubstr("Sum: an axis is given twice"));
  EXPECT_INVALID(xdev::transpose(m, {0, 0}), HasSubstr("Transpose: perm is not a permutation"));
  EXPECT_INVALID(xdev::transpose(m, {0}), HasSubstr("Transpose: perm has 1 entries for rank 2"));
}

TEST_F(OpErrors, Reshape) {
  const Tensor m = xdev::ones({2, 3});
  clear_recent();
  EXPECT_INVALID(xdev::reshape(m, {-1, -1}), HasSubstr("Reshape: only one dimension may be -1"));
  EXPECT_INVALID(xdev::reshape(m, {-2, 3}), HasSubstr("Reshape: negative dimension in (-2, 3)"));
  EXPECT_INVALID(xdev::reshape(m, {4, -1}), HasSubstr("Reshape: cannot infer the -1 in (4, -1)"));
  EXPECT_INVALID(xdev::reshape(m, {7}), HasSubstr("Reshape: cannot reshape (2, 3) (6 elements)"));
}

TEST_F(OpErrors, CreationArguments) {
  EXPECT_INVALID(xdev::zeros({2, -3}), HasSubstr("Fill: attribute 'shape' is {2, -3}"),
                 HasSubstr("-3"));
  EXPECT_INVALID(xdev::random_uniform({2}, 1.0, 1.0), HasSubstr("RandomUniform: minval 1"),
                 HasSubstr("must be less than maxval 1"));
  const float one = 1.f;
  EXPECT_INVALID(xdev::constant(&one, DType::kFloat32, Shape{-2}),
                 HasSubstr("constant: negative dimension -2 in shape (-2,)"));
  EXPECT_INVALID(xdev::constant(nullptr, DType::kFloat32, Shape{2}),
                 HasSubstr("constant: data is NULL"));
  EXPECT_INVALID(xdev::constant(std::vector<float>{1.f, 2.f}, Shape{3}),
                 HasSubstr("constant: 2 values do not fill a shape of 3 elements"));
}

// --- class 1: sizes that overflow, or no device could ever hold -----------------------

TEST_F(OpErrors, FillOfAWrappingByteSizeIsRefused) {
  // 2^61 float64 elements are 2^64 bytes: wrapped to 0, the kernel used to
  // write 2^61 elements into a 1-byte buffer.
  EXPECT_INVALID(xdev::fill({int64_t{1} << 61}, 1.0, DType::kFloat64),
                 HasSubstr("Fill: shape (2305843009213693952,) of float64"));
  EXPECT_INVALID(xdev::zeros({int64_t{1} << 32, int64_t{1} << 32}),
                 HasSubstr("Fill: shape (4294967296, 4294967296)"),
                 HasSubstr("more elements than an int64 can count"));
  EXPECT_INVALID(xdev::random_uniform({int64_t{1} << 62, 4}),
                 HasSubstr("RandomUniform: shape (4611686018427387904, 4)"));
  // Past every device's address space, without overflowing: still invalid,
  // not an out-of-memory error.
  EXPECT_INVALID(xdev::zeros({int64_t{1} << 47}, DType::kFloat64),
                 HasSubstr("Fill: shape (140737488355328,) of float64"), HasSubstr("2^48"));
}

TEST_F(OpErrors, ConstantAndHostBuffersOfAWrappingSizeAreRefused) {
  const float one = 1.f;
  EXPECT_INVALID(xdev::constant(&one, DType::kFloat32, Shape{int64_t{1} << 62, 4}),
                 HasSubstr("constant: shape (4611686018427387904, 4)"));
  EXPECT_INVALID(xdev::HostTensor(DType::kFloat64, Shape{int64_t{1} << 61}),
                 HasSubstr("HostTensor: shape (2305843009213693952,)"));
  EXPECT_INVALID((Shape{int64_t{1} << 32, int64_t{1} << 32}.num_elements()),
                 HasSubstr("the shape (4294967296, 4294967296) has more elements than an int64"));
}

TEST_F(OpErrors, MatMulOfEmptyInputsWithAHugeOutputIsRefused) {
  // [2^32, 0] x [0, 2^32]: empty inputs, a 2^64-element output.
  const Tensor a = xdev::zeros({int64_t{1} << 32, 0}), b = xdev::zeros({0, int64_t{1} << 32});
  clear_recent();
  EXPECT_INVALID(xdev::matmul(a, b), HasSubstr("MatMul: shape (4294967296, 4294967296)"));
}

TEST_F(OpErrors, ReshapeIntoAShapeWhoseProductWrapsIsRefused) {
  // (2^62 + 1) * 16 = 2^66 + 16 wraps to 16 in 64 bits: the element counts
  // used to match, and the view claimed 2^66 elements of a 64-byte buffer.
  const Tensor x = xdev::ones({16});
  clear_recent();
  const int64_t wraps = (int64_t{1} << 62) + 1;
  EXPECT_INVALID(xdev::reshape(x, {wraps, 16}),
                 HasSubstr("Reshape: shape (4611686018427387905, 16) has more elements than an "
                           "int64 can count"));
  EXPECT_INVALID(xdev::reshape(x, {wraps, 16, -1}), HasSubstr("Reshape: shape"));
}

TEST_F(OpErrors, MemoryLimitsInMiBThatWrapAreRefused) {
  // 2^44 MiB is 2^64 bytes: it used to wrap to a 0-byte limit.
  const xdev::PhysicalDevice cpu = xdev::list_physical_devices("CPU").at(0);
  EXPECT_INVALID(xdev::set_logical_device_configuration(cpu, {{.memory_limit = int64_t{1} << 44}}),
                 HasSubstr("set_logical_device_configuration"), HasSubstr("2^64"));
  EXPECT_INVALID(xdev::set_logical_device_configuration(
                     cpu, {{.memory_limit = int64_t{1} << 43}, {.memory_limit = int64_t{1} << 43}}),
                 HasSubstr("2^64"));
}

// --- class 2: enums and element types checked at the boundary ---------------------------

TEST_F(OpErrors, AnOutOfRangeDtypeIsRefusedEverywhere) {
  const auto bad = static_cast<DType>(99);
  EXPECT_FALSE(xdev::is_valid(bad));
  EXPECT_TRUE(xdev::is_valid(DType::kBool));
  const Tensor x = xdev::ones({2});
  clear_recent();
  EXPECT_INVALID(xdev::cast(x, bad), HasSubstr("Cast: attribute 'dtype' is dtype code 99"));
  EXPECT_INVALID(xdev::cast(x, static_cast<DType>(0)), HasSubstr("dtype code 0"));
  EXPECT_INVALID(xdev::zeros({2}, bad), HasSubstr("Fill: attribute 'dtype' is dtype code 99"));
  EXPECT_INVALID(xdev::ones({2}, static_cast<DType>(-1)), HasSubstr("dtype code -1"));
  EXPECT_INVALID(xdev::random_uniform({2}, 0, 1, bad), HasSubstr("RandomUniform"),
                 HasSubstr("dtype code 99"));
  const float one = 1.f;
  EXPECT_INVALID(xdev::constant(&one, bad, Shape{1}), HasSubstr("constant: dtype code 99"));
  EXPECT_INVALID(xdev::constant({1.f, 2.f}, bad), HasSubstr("constant: dtype code 99"));
  EXPECT_INVALID(xdev::HostTensor(bad, Shape{1}), HasSubstr("dtype code 99"));
}

// constant(std::vector<T>) and the typed read-backs take the nine element
// types only: a vector of uint8_t used to be read as float32 (4 bytes per
// element, past its end). It does not compile now.
template <typename T>
concept ConstantTakes = requires(const std::vector<T>& v) { xdev::constant(v, Shape{1}); };
template <typename T>
concept ToVectorTakes = requires(const Tensor& t) { t.to_vector<T>(); };
static_assert(ConstantTakes<float> && ConstantTakes<double> && ConstantTakes<int32_t> &&
              ConstantTakes<int64_t>);
// uint8_t and int8_t are the uint8 and int8 dtypes now (one byte each), the
// 16-bit floats xdev::float16 and xdev::bfloat16.
static_assert(ConstantTakes<uint8_t> && ConstantTakes<int8_t> && ConstantTakes<xdev::float16> &&
              ConstantTakes<xdev::bfloat16>);
static_assert(!ConstantTakes<int16_t> && !ConstantTakes<uint32_t> &&
              !ConstantTakes<long double> && !ConstantTakes<char> && !ConstantTakes<uint16_t>);
static_assert(ToVectorTakes<float> && ToVectorTakes<bool> && ToVectorTakes<uint8_t> &&
              !ToVectorTakes<uint16_t>);

TEST(OpElementTypes, TheFiveElementTypesRoundTrip) {
  EXPECT_EQ(xdev::constant(std::vector<int64_t>{-5, 7}, Shape{2}).to_vector<int64_t>(),
            (std::vector<int64_t>{-5, 7}));
  EXPECT_EQ(xdev::constant(std::vector<int32_t>{3}, Shape{1}).dtype(), DType::kInt32);
  EXPECT_EQ(xdev::constant(std::vector<double>{0.5}, Shape{1}).dtype(), DType::kFloat64);
}

// --- class 5: item<T>() exact for every integer dtype ----------------------------------

TEST(OpReadBack, ItemOfLargeIntegersIsExact) {
  const int64_t big = (int64_t{1} << 53) + 1;  // not a double
  EXPECT_EQ(xdev::constant(std::vector<int64_t>{big}, Shape{}).item<int64_t>(), big);
  const int64_t max = std::numeric_limits<int64_t>::max();
  EXPECT_EQ(xdev::constant(std::vector<int64_t>{max}, Shape{}).item<int64_t>(), max);
  const int64_t min = std::numeric_limits<int64_t>::min() + 1;
  EXPECT_EQ(xdev::constant(std::vector<int64_t>{min}, Shape{}).item<int64_t>(), min);
  EXPECT_EQ(xdev::constant(std::vector<int32_t>{-2147483647}, Shape{}).item<int64_t>(),
            -2147483647);
  EXPECT_EQ(xdev::constant(std::vector<int64_t>{big}, Shape{}).item<uint64_t>(),
            static_cast<uint64_t>(big));
  // Sum of int64 stays exact on the way back.
  EXPECT_EQ(xdev::sum(xdev::constant(std::vector<int64_t>{big, 1}, Shape{2})).item<int64_t>(),
            big + 1);
}

TEST(OpReadBack, ItemConvertsLikeCast) {
  EXPECT_EQ(xdev::constant({2.7f}).item<int32_t>(), 2);  // toward zero
  EXPECT_EQ(xdev::constant({-2.7}).item<int64_t>(), -2);
  EXPECT_EQ(xdev::constant({1e30}).item<int32_t>(), std::numeric_limits<int32_t>::max());
  EXPECT_EQ(xdev::constant({-1e30}).item<int64_t>(), std::numeric_limits<int64_t>::min());
  EXPECT_EQ(xdev::constant({std::nan("")}).item<int64_t>(), 0);
  EXPECT_EQ(xdev::constant({0.5}).item<bool>(), true);
  EXPECT_EQ(xdev::constant({true}).item<float>(), 1.0f);
  EXPECT_EQ(xdev::constant({3}).item<double>(), 3.0);
  EXPECT_EQ(xdev::constant({0.1f}).item<double>(), static_cast<double>(0.1f));
  EXPECT_INVALID(xdev::constant({1.f, 2.f}).item<float>(),
                 HasSubstr("item() needs a tensor of one element"));
}

// --- class 7: no garbage from bad arguments ---------------------------------------------

TEST_F(OpErrors, RandomUniformRefusesBoundsThatGiveNonFiniteValues) {
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_INVALID(xdev::random_uniform({4}, 0.0, inf),
                 HasSubstr("RandomUniform: attribute 'maxval' is inf; it must be finite"));
  EXPECT_INVALID(xdev::random_uniform({4}, -inf, 0.0, DType::kFloat64),
                 HasSubstr("attribute 'minval' is -inf"));
  EXPECT_INVALID(xdev::random_uniform({4}, std::nan(""), 1.0), HasSubstr("'minval' is nan"));
  // Finite bounds whose width overflows: -1e308 + inf * u.
  EXPECT_INVALID(xdev::random_uniform({4}, -1e308, 1e308, DType::kFloat64),
                 HasSubstr("maxval - minval"), HasSubstr("overflows float64"));
  // In float32 the bounds are rounded first: out of range, or equal there.
  EXPECT_INVALID(xdev::random_uniform({4}, 0.0, 1e39),
                 HasSubstr("within float32's finite range"));
  EXPECT_INVALID(xdev::random_uniform({4}, -3e38, 3e38), HasSubstr("overflows float32"));
  EXPECT_INVALID(xdev::random_uniform({4}, 1.0, 1.0 + 1e-12),
                 HasSubstr("the interval is empty in float32"));
}

TEST(OpRandom, ARefusedCallTakesNoSeed) {
  xdev::set_random_seed(1234);
  const std::vector<float> first = xdev::random_uniform({8}).to_vector<float>();
  xdev::set_random_seed(1234);
  EXPECT_THROW(xdev::random_uniform({8}, 0.0, std::numeric_limits<double>::infinity()),
               xdev::Error);
  EXPECT_EQ(xdev::random_uniform({8}).to_vector<float>(), first);
}

TEST(OpRandom, ValidBoundsStillGiveValuesInTheInterval) {
  for (DType dtype : {DType::kFloat32, DType::kFloat64}) {
    const xdev::HostTensor v = xdev::random_uniform({1000}, -1e300 * (dtype == DType::kFloat64),
                                                    3.0, dtype, 7)
                                   .to_host();
    for (int64_t i = 0; i < v.num_elements(); ++i) {
      const double x = v.value_as_double(i);
      ASSERT_TRUE(std::isfinite(x)) << i;
      ASSERT_LE(x, 3.0) << i;
    }
  }
}

}  // namespace
