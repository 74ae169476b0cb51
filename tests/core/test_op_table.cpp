// The op table (core/opdefs/op_table.hpp): names and ids derived from one list,
// and check_call, the one place a call is held to its op's entry.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include <xdev/error.hpp>

#include "plugin_harness.hpp"
#include "opdefs/op_table.hpp"
#include "ops/run_op.hpp"

namespace xdev::detail {
namespace {

using ::testing::HasSubstr;

using xdev_test::attr_bool;
using xdev_test::attr_float;
using xdev_test::attr_ints;

// The message of the xdev::Error(kInvalidArgument) check_call throws.
std::string refusal(OpId op, std::vector<InputInfo> inputs, std::vector<xdev_attr_t> attrs) {
  CheckedCall call;
  try {
    check_call(op_def(op), inputs, attrs, call);
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    return e.what();
  }
  ADD_FAILURE() << "accepted";
  return "";
}

TEST(OpTable, NamesAndIdsComeFromOneList) {
  std::set<std::string> names;
  for (const OpDef& def : op_defs()) {
    EXPECT_EQ(&op_def(def.id), &def);
    EXPECT_EQ(op_name(def.id), def.name);
    EXPECT_EQ(op_from_name(def.name), def.id);
    EXPECT_TRUE(names.insert(def.name).second) << def.name << " twice";
  }
  EXPECT_EQ(names.size(), static_cast<size_t>(kOpCount));
  EXPECT_EQ(op_from_name("matmul"), std::nullopt);  // case-sensitive
  EXPECT_EQ(op_from_name("Transpose"), std::nullopt);  // a view + Copy, not an op
}

TEST(OpTable, ACallGetsShapesDtypesAndTheKernelsAttributes) {
  const Shape a{2, 3}, b{2, 5};
  CheckedCall call;
  const std::vector<xdev_attr_t> attrs = {attr_bool("transpose_a", true)};
  check_call(op_def(OpId::kMatMul), std::vector<InputInfo>{{DType::kFloat64, &a}, {DType::kFloat64, &b}},
             attrs, call);
  ASSERT_EQ(call.output_count, 1u);
  EXPECT_EQ(call.output_shapes[0], (Shape{3, 5}));
  EXPECT_EQ(call.output_dtypes[0], DType::kFloat64);
  EXPECT_EQ(call.output_bytes[0], 3u * 5u * 8u);
  // Both transposes reach the kernel, the missing one with its default.
  ASSERT_EQ(call.kernel_attr_count, 2u);
  EXPECT_STREQ(call.kernel_attrs[0].name, "transpose_a");
  EXPECT_EQ(call.kernel_attrs[0].value.b, 1);
  EXPECT_STREQ(call.kernel_attrs[1].name, "transpose_b");
  EXPECT_EQ(call.kernel_attrs[1].value.b, 0);
}

TEST(OpTable, CoreOnlyAttributesStayOutOfTheKernelCall) {
  const std::vector<int64_t> dims = {4, 0, 2};
  xdev_attr_t dtype{};
  dtype.name = "dtype";
  dtype.kind = XDEV_ATTR_DTYPE;
  dtype.value.dtype = XDEV_DTYPE_INT64;
  CheckedCall call;
  check_call(op_def(OpId::kFill), {},
             std::vector<xdev_attr_t>{attr_float("value", 2.0), attr_ints("shape", dims), dtype}, call);
  EXPECT_EQ(call.output_shapes[0], (Shape{4, 0, 2}));
  EXPECT_EQ(call.output_dtypes[0], DType::kInt64);
  EXPECT_EQ(call.kernel_input_dtype, DType::kInt64);  // no inputs: looked up by the output
  ASSERT_EQ(call.kernel_attr_count, 1u);
  EXPECT_STREQ(call.kernel_attrs[0].name, "value");
}

TEST(OpTable, AttributesAreCheckedAgainstTheirDefinitions) {
  const Shape s{2};
  const std::vector<InputInfo> x = {{DType::kFloat32, &s}};
  EXPECT_THAT(refusal(OpId::kNeg, x, {attr_bool("fast", true)}),
              HasSubstr("Neg: unknown attribute 'fast'"));
  EXPECT_THAT(refusal(OpId::kMatMul, {{DType::kFloat32, &s}, {DType::kFloat32, &s}},
                      {attr_float("transpose_a", 1.0)}),
              HasSubstr("MatMul: attribute 'transpose_a' is given as float; it is bool"));
  EXPECT_THAT(refusal(OpId::kMatMul, {{DType::kFloat32, &s}, {DType::kFloat32, &s}},
                      {attr_bool("transpose_a", true), attr_bool("transpose_a", false)}),
              HasSubstr("attribute 'transpose_a' is given twice"));
  EXPECT_THAT(refusal(OpId::kCast, x, {}), HasSubstr("Cast: attribute 'dtype' (dtype) is missing"));
  const std::vector<int64_t> axes = {9};
  EXPECT_THAT(refusal(OpId::kSum, x, {attr_ints("axes", axes)}),
              HasSubstr("Sum: attribute 'axes' is {9}: value 0 (9) must be in [0, 7]"));
  const std::vector<int64_t> unsorted = {0, 0};
  const Shape m{2, 3};
  EXPECT_THAT(refusal(OpId::kMean, {{DType::kFloat32, &m}}, {attr_ints("axes", unsorted)}),
              HasSubstr("Mean: axes {0, 0} must be sorted, unique and in [0, 2)"));
}

// A string attribute is one of its choices; the first is its default.
TEST(OpTable, StringAttributesTakeOneOfTheirChoices) {
  const Shape value{2, 3, 4}, bias{4};
  const std::vector<InputInfo> in = {{DType::kFloat32, &value}, {DType::kFloat32, &bias}};
  CheckedCall call;
  check_call(op_def(OpId::kBiasAdd), in, {}, call);
  ASSERT_EQ(call.kernel_attr_count, 1u);
  EXPECT_STREQ(call.kernel_attrs[0].name, "data_format");
  ASSERT_EQ(call.kernel_attrs[0].kind, XDEV_ATTR_STRING);
  EXPECT_STREQ(call.kernel_attrs[0].value.s, "NHWC");
  xdev_attr_t format{};
  format.name = "data_format";
  format.kind = XDEV_ATTR_STRING;
  format.value.s = "NCWH";
  EXPECT_THAT(refusal(OpId::kBiasAdd, in, {format}),
              HasSubstr("BiasAdd: attribute 'data_format' is \"NCWH\"; it must be one of NHWC, "
                        "NCHW"));
  format.value.s = nullptr;
  EXPECT_THAT(refusal(OpId::kBiasAdd, in, {format}),
              HasSubstr("BiasAdd: attribute 'data_format' is a NULL string"));
  // NCHW: the bias runs along axis 1 (3), not 4.
  format.value.s = "NCHW";
  EXPECT_THAT(refusal(OpId::kBiasAdd, in, {format}),
              HasSubstr("bias of shape (4,) must be (3,), the channel dimension 1"));
}

// An op of two outputs gets a shape and dtype for each.
TEST(OpTable, SeveralOutputsGetTheirOwnShapes) {
  const Shape features{5, 3}, labels{1, 3};
  CheckedCall call;
  check_call(op_def(OpId::kSoftmaxCrossEntropyWithLogits),
             std::vector<InputInfo>{{DType::kFloat64, &features}, {DType::kFloat64, &labels}}, {},
             call);
  ASSERT_EQ(call.output_count, 2u);
  EXPECT_EQ(call.output_shapes[0], (Shape{5}));
  EXPECT_EQ(call.output_shapes[1], (Shape{5, 3}));
  EXPECT_EQ(call.output_dtypes[1], DType::kFloat64);
  EXPECT_EQ(call.output_bytes[1], 5u * 3u * 8u);
}

TEST(OpTable, InputsAreCountedAndTheirDtypesChecked) {
  const Shape s{2};
  EXPECT_THAT(refusal(OpId::kAdd, {{DType::kFloat32, &s}}, {}),
              HasSubstr("Add: takes 2 inputs, got 1"));
  EXPECT_THAT(refusal(OpId::kAddN, {}, {}), HasSubstr("AddN: needs at least 1 input, got 0"));
  EXPECT_THAT(refusal(OpId::kNeg, {{static_cast<DType>(42), &s}}, {}),
              HasSubstr("Neg: x has dtype code 42, not a dtype"));
  EXPECT_THAT(refusal(OpId::kMul, {{DType::kInt32, &s}, {DType::kInt64, &s}}, {}),
              HasSubstr("Mul: inputs have different dtypes, x is int32 and y is int64"));
}

TEST(OpTable, OutputSizesAreChecked) {
  const Shape big{int64_t{1} << 40, int64_t{1} << 30};
  const std::vector<InputInfo> x = {{DType::kFloat32, &big}};
  EXPECT_THAT(refusal(OpId::kCopy, x, {}), HasSubstr("Copy: shape (1099511627776, 1073741824)"));
}

// The attribute array of one call has a fixed capacity: one more is an
// error, never a write past the array.
TEST(OpTable, AttrsRefuseOneMoreThanTheirCapacity) {
  Attrs attrs;
  for (size_t i = 0; i < kMaxOpAttrs; ++i) attrs.add_int("n", static_cast<int64_t>(i));
  EXPECT_EQ(attrs.size(), kMaxOpAttrs);
  try {
    attrs.add_bool("one_more", true);
    FAIL() << "accepted attribute " << kMaxOpAttrs + 1;
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInternal);
    EXPECT_THAT(e.what(), HasSubstr("'one_more'"));
  }
  EXPECT_EQ(attrs.size(), kMaxOpAttrs);
  size_t most = 0;
  for (const OpDef& def : op_defs()) most = std::max(most, def.attrs.size());
  EXPECT_LE(most, kMaxOpAttrs);
}

// The dtype pairs kernels are looked up by (has_kernel, list_kernels,
// xdev-smi --ops): input 0's dtype (no inputs: the output's) and output 0's.
TEST(OpTable, KernelDTypesAreThePairsKernelsAreLookedUpBy) {
  using P = KernelDTypes;
  constexpr DType f32 = DType::kFloat32, f64 = DType::kFloat64, i32 = DType::kInt32,
                  i64 = DType::kInt64, b = DType::kBool, f16 = DType::kFloat16,
                  bf16 = DType::kBFloat16, u8 = DType::kUInt8, i8 = DType::kInt8;
  // Float ops take float16 and bfloat16 (in enum order, after bool).
  EXPECT_EQ(kernel_dtypes(op_def(OpId::kMatMul)),
            (std::vector<P>{{f32, f32}, {f64, f64}, {i32, i32}, {i64, i64}, {f16, f16},
                            {bf16, bf16}}));
  EXPECT_EQ(kernel_dtypes(op_def(OpId::kExp)),
            (std::vector<P>{{f32, f32}, {f64, f64}, {f16, f16}, {bf16, bf16}}));
  // Comparisons and ArgMax: the 8-bit integers too (ArgMax: bool as well).
  EXPECT_EQ(kernel_dtypes(op_def(OpId::kLess)),
            (std::vector<P>{{f32, b}, {f64, b}, {i32, b}, {i64, b}, {f16, b}, {bf16, b},
                            {u8, b}, {i8, b}}));
  EXPECT_EQ(kernel_dtypes(op_def(OpId::kArgMax)),
            (std::vector<P>{{f32, i64}, {f64, i64}, {i32, i64}, {i64, i64}, {b, i64},
                            {f16, i64}, {bf16, i64}, {u8, i64}, {i8, i64}}));
  // Select: by the condition (bool), the output is x's dtype: any of the nine.
  EXPECT_EQ(kernel_dtypes(op_def(OpId::kSelect)),
            (std::vector<P>{{b, f32}, {b, f64}, {b, i32}, {b, i64}, {b, b}, {b, f16}, {b, bf16},
                            {b, u8}, {b, i8}}));
  // No inputs: by the output dtype the attribute allows (RandomUniform and
  // Range: no 16-bit floats).
  EXPECT_EQ(kernel_dtypes(op_def(OpId::kRandomUniform)), (std::vector<P>{{f32, f32}, {f64, f64}}));
  EXPECT_EQ(kernel_dtypes(op_def(OpId::kRange)).size(), 4u);
  EXPECT_EQ(kernel_dtypes(op_def(OpId::kFill)).size(), 9u);
  // Cast: every dtype to every dtype.
  const std::vector<P> cast = kernel_dtypes(op_def(OpId::kCast));
  EXPECT_EQ(cast.size(), 81u);
  EXPECT_EQ(cast[1], (P{f32, f64}));
  // Every op has some; each input dtype is one its input 0 accepts.
  for (const OpDef& def : op_defs()) {
    const std::vector<P> pairs = kernel_dtypes(def);
    EXPECT_FALSE(pairs.empty()) << def.name;
    for (const P& p : pairs) {
      if (!def.inputs.empty()) {
        EXPECT_NE(def.inputs[0].dtypes & dtype_bit(p.input), 0u) << def.name;
      }
    }
  }
}

}  // namespace
}  // namespace xdev::detail
