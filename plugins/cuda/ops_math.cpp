// The cuda plugin's elementwise math kernels (docs/ops.md
// "Elementwise math", "Binary math", "Comparisons and logic"): checks and
// layouts here, the functors in math.cu. One template per kind of op; the
// op is a template argument.
#include <xdev/plugin.h>
#include <xdev/op_names.h>

#include <cinttypes>
#include <cstdint>
#include <iterator>

#include "call.hpp"
#include "launch.hpp"
#include "layout.hpp"
#include "ops.hpp"

namespace xdev::cuda {
namespace {

// Every input of the dtype of input `first` (which is in `mask`), and the
// output `out_dtype` (XDEV_DTYPE_INVALID: the inputs').
xdev_status_t* check_dtypes(Call& call, uint64_t mask, xdev_dtype_t out_dtype,
                            uint32_t first = 0) {
  const xdev_dtype_t dtype = call.input(first).dtype;
  if (!in_mask(mask, dtype)) return call.bad_dtype(dtype);
  for (uint32_t i = first + 1; i < call.input_count(); ++i) {
    if (call.input(i).dtype != dtype) {
      return g_host.fail(call.host(), XDEV_STATUS_INVALID_ARGUMENT,
                         "%s: input %" PRIu32 " is %s but input %" PRIu32 " is %s", call.op(), i,
                         dtype_name(call.input(i).dtype), first, dtype_name(dtype));
    }
  }
  const xdev_dtype_t want = out_dtype == XDEV_DTYPE_INVALID ? dtype : out_dtype;
  if (call.output().dtype != want) {
    return g_host.fail(call.host(), XDEV_STATUS_INVALID_ARGUMENT,
                       "%s: the output is %s, expected %s", call.op(),
                       dtype_name(call.output().dtype), dtype_name(want));
  }
  return nullptr;
}

// The checked call of an elementwise op with `inputs` inputs of one dtype
// in `mask` (from input `first` on), then launch(call, layout).
template <typename Launch>
xdev_status_t* elementwise(const xdev_kernel_call_t* raw, const char* name, uint32_t inputs,
                           uint64_t mask, xdev_dtype_t out_dtype, Launch&& launch,
                           uint32_t first = 0) noexcept {
  return guarded(raw, name, [&]() -> xdev_status_t* {
    Call call(raw, name);
    if (xdev_status_t* s = call.check(static_cast<int>(inputs))) return s;
    if (xdev_status_t* s = check_dtypes(call, mask, out_dtype, first)) return s;
    const xdev_tensor_t* operands[kMaxElementwiseInputs] = {};
    for (uint32_t i = 0; i < inputs; ++i) operands[i] = &call.input(i);
    const ElementwiseLayout l =
        elementwise_layout(call.output(), operands, static_cast<int>(inputs));
    return call.launched(launch(call, l));
  });
}

const void* in(const Call& call, uint32_t i) { return data_of(call.input(i)); }
void* out(const Call& call) { return data_of_output(call.output()); }

// ---------------------------------------------------------------------------
// One input

struct MathInfo {
  const char* name;
  uint64_t mask;
  bool to_bool;
};
constexpr MathInfo math_info(MathOp op) {
  switch (op) {
    case MathOp::kAbs: return {XDEV_OP_Abs, kNumbers, false};
    case MathOp::kSign: return {XDEV_OP_Sign, kNumbers, false};
    case MathOp::kSquare: return {XDEV_OP_Square, kNumbers, false};
    case MathOp::kExp: return {XDEV_OP_Exp, kFloats, false};
    case MathOp::kExpm1: return {XDEV_OP_Expm1, kFloats, false};
    case MathOp::kLog: return {XDEV_OP_Log, kFloats, false};
    case MathOp::kLog1p: return {XDEV_OP_Log1p, kFloats, false};
    case MathOp::kSqrt: return {XDEV_OP_Sqrt, kFloats, false};
    case MathOp::kRsqrt: return {XDEV_OP_Rsqrt, kFloats, false};
    case MathOp::kReciprocal: return {XDEV_OP_Reciprocal, kFloats, false};
    case MathOp::kSin: return {XDEV_OP_Sin, kFloats, false};
    case MathOp::kCos: return {XDEV_OP_Cos, kFloats, false};
    case MathOp::kTanh: return {XDEV_OP_Tanh, kFloats, false};
    case MathOp::kSigmoid: return {XDEV_OP_Sigmoid, kFloats, false};
    case MathOp::kErf: return {XDEV_OP_Erf, kFloats, false};
    case MathOp::kSoftplus: return {XDEV_OP_Softplus, kFloats, false};
    case MathOp::kFloor: return {XDEV_OP_Floor, kFloats, false};
    case MathOp::kCeil: return {XDEV_OP_Ceil, kFloats, false};
    case MathOp::kRound: return {XDEV_OP_Round, kFloats, false};
    case MathOp::kLeakyRelu: return {XDEV_OP_LeakyRelu, kFloats, false};
    case MathOp::kGelu:
    case MathOp::kGeluTanh: return {XDEV_OP_Gelu, kFloats, false};
    case MathOp::kLogicalNot: return {XDEV_OP_LogicalNot, kBool, false};
    case MathOp::kIsNan: return {XDEV_OP_IsNan, kFloats, true};
    case MathOp::kIsFinite: return {XDEV_OP_IsFinite, kFloats, true};
  }
  return {"?", 0, false};
}

template <MathOp kOp>
xdev_status_t* kernel_math(void*, const xdev_kernel_call_t* raw) noexcept {
  constexpr MathInfo info = math_info(kOp);
  return elementwise(raw, info.name, 1, info.mask,
                     info.to_bool ? XDEV_DTYPE_BOOL : XDEV_DTYPE_INVALID,
                     [&](Call& call, const ElementwiseLayout& l) {
                       MathOp op = kOp;
                       double alpha = 0.2;  // LeakyRelu's default
                       if (const xdev_attr_t* a = find_attr(raw, XDEV_ATTR_NAME_alpha, XDEV_ATTR_FLOAT);
                           a != nullptr && kOp == MathOp::kLeakyRelu) {
                         alpha = a->value.f;
                       }
                       if (const xdev_attr_t* a = find_attr(raw, XDEV_ATTR_NAME_approximate, XDEV_ATTR_BOOL);
                           a != nullptr && kOp == MathOp::kGelu && a->value.b != 0) {
                         op = MathOp::kGeluTanh;
                       }
                       return launch_math(op, call.input(0).dtype, l, in(call, 0), out(call),
                                          alpha, call.cuda_stream());
                     });
}

// ---------------------------------------------------------------------------
// Two and three inputs

constexpr const char* math_binary_name(MathBinaryOp op) {
  switch (op) {
    case MathBinaryOp::kPow: return XDEV_OP_Pow;
    case MathBinaryOp::kMaximum: return XDEV_OP_Maximum;
    case MathBinaryOp::kMinimum: return XDEV_OP_Minimum;
    case MathBinaryOp::kFloorDiv: return XDEV_OP_FloorDiv;
    case MathBinaryOp::kFloorMod: return XDEV_OP_FloorMod;
    case MathBinaryOp::kSquaredDifference: return XDEV_OP_SquaredDifference;
  }
  return "?";
}

template <MathBinaryOp kOp>
xdev_status_t* kernel_math_binary(void*, const xdev_kernel_call_t* raw) noexcept {
  constexpr uint64_t kMask = kOp == MathBinaryOp::kPow ? kFloats : kNumbers;
  return elementwise(raw, math_binary_name(kOp), 2, kMask, XDEV_DTYPE_INVALID,
                     [](Call& call, const ElementwiseLayout& l) {
                       return launch_math_binary(kOp, call.input(0).dtype, l, in(call, 0),
                                                 in(call, 1), out(call), call.cuda_stream());
                     });
}

struct CompareInfo {
  const char* name;
  uint64_t mask;
};
constexpr CompareInfo compare_info(CompareOp op) {
  switch (op) {
    case CompareOp::kEqual: return {XDEV_OP_Equal, kAll};
    case CompareOp::kNotEqual: return {XDEV_OP_NotEqual, kAll};
    case CompareOp::kLess: return {XDEV_OP_Less, kNumbers};
    case CompareOp::kLessEqual: return {XDEV_OP_LessEqual, kNumbers};
    case CompareOp::kGreater: return {XDEV_OP_Greater, kNumbers};
    case CompareOp::kGreaterEqual: return {XDEV_OP_GreaterEqual, kNumbers};
    case CompareOp::kLogicalAnd: return {XDEV_OP_LogicalAnd, kBool};
    case CompareOp::kLogicalOr: return {XDEV_OP_LogicalOr, kBool};
  }
  return {"?", 0};
}

template <CompareOp kOp>
xdev_status_t* kernel_compare(void*, const xdev_kernel_call_t* raw) noexcept {
  constexpr CompareInfo info = compare_info(kOp);
  return elementwise(raw, info.name, 2, info.mask, XDEV_DTYPE_BOOL,
                     [](Call& call, const ElementwiseLayout& l) {
                       return launch_compare(kOp, call.input(0).dtype, l, in(call, 0),
                                             in(call, 1), out(call), call.cuda_stream());
                     });
}

// Select(condition, x, y): the condition bool, x, y and the output of one
// dtype (any of the five), copied bit for bit.
xdev_status_t* kernel_select(void*, const xdev_kernel_call_t* raw) noexcept {
  constexpr const char* kOp = XDEV_OP_Select;
  return guarded(raw, kOp, [&]() -> xdev_status_t* {
    Call call(raw, kOp);
    if (xdev_status_t* s = call.check(3)) return s;
    if (call.input(0).dtype != XDEV_DTYPE_BOOL) return call.bad_dtype(call.input(0).dtype);
    if (xdev_status_t* s = check_dtypes(call, kAll, XDEV_DTYPE_INVALID, 1)) return s;
    const xdev_tensor_t* operands[3] = {&call.input(0), &call.input(1), &call.input(2)};
    const ElementwiseLayout l = elementwise_layout(call.output(), operands, 3);
    return call.launched(launch_select(itemsize(call.output().dtype), l, in(call, 0),
                                       in(call, 1), in(call, 2), out(call), call.cuda_stream()));
  });
}

xdev_status_t* kernel_clip_by_value(void*, const xdev_kernel_call_t* raw) noexcept {
  return elementwise(raw, XDEV_OP_ClipByValue, 3, kNumbers, XDEV_DTYPE_INVALID,
                     [](Call& call, const ElementwiseLayout& l) {
                       return launch_clip(call.input(0).dtype, l, in(call, 0), in(call, 1),
                                          in(call, 2), out(call), call.cuda_stream());
                     });
}

// ---------------------------------------------------------------------------
// The table

using ph::kernel_info;

template <MathOp kOp>
constexpr xdev_kernel_info_t math_entry() {
  constexpr MathInfo info = math_info(kOp);
  return kernel_info(info.name, info.mask, info.to_bool ? kBool : info.mask, &kernel_math<kOp>);
}
template <MathBinaryOp kOp>
constexpr xdev_kernel_info_t math_binary_entry() {
  constexpr uint64_t kMask = kOp == MathBinaryOp::kPow ? kFloats : kNumbers;
  return kernel_info(math_binary_name(kOp), kMask, kMask, &kernel_math_binary<kOp>);
}
template <CompareOp kOp>
constexpr xdev_kernel_info_t compare_entry() {
  constexpr CompareInfo info = compare_info(kOp);
  return kernel_info(info.name, info.mask, kBool, &kernel_compare<kOp>);
}

constexpr xdev_kernel_info_t kMathKernels[] = {
    math_entry<MathOp::kAbs>(),
    math_entry<MathOp::kSign>(),
    math_entry<MathOp::kSquare>(),
    math_entry<MathOp::kExp>(),
    math_entry<MathOp::kExpm1>(),
    math_entry<MathOp::kLog>(),
    math_entry<MathOp::kLog1p>(),
    math_entry<MathOp::kSqrt>(),
    math_entry<MathOp::kRsqrt>(),
    math_entry<MathOp::kReciprocal>(),
    math_entry<MathOp::kSin>(),
    math_entry<MathOp::kCos>(),
    math_entry<MathOp::kTanh>(),
    math_entry<MathOp::kSigmoid>(),
    math_entry<MathOp::kErf>(),
    math_entry<MathOp::kSoftplus>(),
    math_entry<MathOp::kFloor>(),
    math_entry<MathOp::kCeil>(),
    math_entry<MathOp::kRound>(),
    math_entry<MathOp::kLeakyRelu>(),
    math_entry<MathOp::kGelu>(),  // reads `approximate`: kGeluTanh
    math_entry<MathOp::kLogicalNot>(),
    math_entry<MathOp::kIsNan>(),
    math_entry<MathOp::kIsFinite>(),
    math_binary_entry<MathBinaryOp::kPow>(),
    math_binary_entry<MathBinaryOp::kMaximum>(),
    math_binary_entry<MathBinaryOp::kMinimum>(),
    math_binary_entry<MathBinaryOp::kFloorDiv>(),
    math_binary_entry<MathBinaryOp::kFloorMod>(),
    math_binary_entry<MathBinaryOp::kSquaredDifference>(),
    compare_entry<CompareOp::kEqual>(),
    compare_entry<CompareOp::kNotEqual>(),
    compare_entry<CompareOp::kLess>(),
    compare_entry<CompareOp::kLessEqual>(),
    compare_entry<CompareOp::kGreater>(),
    compare_entry<CompareOp::kGreaterEqual>(),
    compare_entry<CompareOp::kLogicalAnd>(),
    compare_entry<CompareOp::kLogicalOr>(),
    // Looked up by the condition's dtype; x, y and the output any dtype.
    kernel_info(XDEV_OP_Select, kBool, kAll, &kernel_select),
    kernel_info(XDEV_OP_ClipByValue, kNumbers, kNumbers, &kernel_clip_by_value),
};

}  // namespace

KernelTable math_kernels() noexcept { return {kMathKernels, std::size(kMathKernels)}; }

}  // namespace xdev::cuda
