// The kernels of the OpenCL plugin, from tables: each op is one row (its
// OpenCL C expression per dtype class, or its line-kernel body), turned
// into source by codegen.cpp, compiled on first use (programs.cpp) and
// enqueued on the call's stream. MatMul and BatchMatMulV2 run CLBlast (floats).
#include <xdev/op_names.h>
#include <algorithm>
#include <cinttypes>
#include <cstring>
#include <string>
#include <vector>

#include "codegen.hpp"
#include "common.hpp"  // first: it picks the OpenCL version of the headers
#include <clblast_c.h>
#include "kernels/common.hpp"  // plugins/cpu: the conversions of Cast and Fill
#include <xdev/strided_slice.hpp>
#include <xdev/window_geometry.hpp>

namespace xdev::opencl {
namespace {

using ph::element_count;
using ph::kAll;  // the SDK's dtype masks (<xdev/plugin_helpers.hpp>)
using ph::kBool;
using ph::kF32;
using ph::kF64;
using ph::kFloats;
using ph::kI32;
using ph::kI64;
using ph::kInts;
using ph::kNumbers;

using ph::kEvery;
using ph::kHalves;

// Float ops of the op table take float16 and bfloat16 too (computed in
// float, codegen.hpp value_type); the data movement ops every dtype.
constexpr uint64_t kFloatsH = kFloats | kHalves;
constexpr uint64_t kNumbersH = kNumbers | kHalves;

// Floats computed with the float expressions of the tables (16-bit ones in float).
bool is_float(xdev_dtype_t t) {
  return t == XDEV_DTYPE_FLOAT32 || t == XDEV_DTYPE_FLOAT64 || is_half(t);
}
bool is_int(xdev_dtype_t t) { return t == XDEV_DTYPE_INT32 || t == XDEV_DTYPE_INT64; }
// Any integer dtype (Cast's targets).
bool is_integer(xdev_dtype_t t) {
  return is_int(t) || t == XDEV_DTYPE_UINT8 || t == XDEV_DTYPE_INT8;
}

// ---- the op tables ----------------------------------------------------------

// How an op runs.
enum class Kind {
  kElementwise,  // one expression per element (arity inputs, any strides)
  kCast,         // elementwise, expression by (input, output) dtype
  kFill,         // clEnqueueFillBuffer with the converted value
  kAddN,         // Add, input by input, into the output
  kReduce,       // line kernel over `axes`
  kAlongAxis,    // line kernel along `axis`, output of the input's shape
  kArg,          // line kernel along `axis`, output without it (ArgMax/ArgMin)
  kMatMul,       // CLBlast (floats) or the generated GEMM (integers)
  kBatchMatMul,  // the same, batched (BatchMatMulV2)
  kSlice,        // Copy of a view of the input
  kConcat,       // Copy of each input into a view of the output (ConcatV2, Pack)
  kPad,          // Fill, then Copy into the interior view
  kBiasAdd,      // Add with the bias as a broadcast view
  kGenerate,     // elementwise over no input: the expression of i (Range, RandomUniform)
  kTile,         // Copy reading the input at the output's coordinates modulo its shape
  kOneHot,       // elementwise over the output, the indices broadcast along `axis`
  kLayerNorm,    // line kernel over the axes from `begin_norm_axis`, with gamma and beta
  kGather,       // GatherV2: its own kernel, which flags indices out of range
  kSoftmaxXent,  // line kernel per row with labels and a second output (backprop)
  kWindow,       // pools, convolutions and their gradients (window_source; int_expr: the WindowOp)
  kScatter,      // TensorScatterAdd: a copy, then its own kernel (flags indices like GatherV2)
  kStridedSlice, // Copy of the strided view <xdev/strided_slice.hpp> describes
  kBroadcast,    // Copy of the input as a view of the output's rank (stride 0 to repeat)
};

enum class Out { kSame, kBool, kInt64, kAttr };

struct OpRow {
  const char* op;
  Kind kind;
  uint64_t dtypes;  // input dtypes registered (float64 only where the device has it)
  uint32_t arity;
  Out out;
  const char* float_expr;  // elementwise: expression for float inputs; line kernels: body
  const char* int_expr;    // ... for int32/int64 inputs
  const char* bool_expr;   // ... for bool inputs
  const char* param = nullptr;          // a float attribute passed as `$T <param>`
  double param_default = 0;
  const char* bool_attr = nullptr;      // an attribute that picks alt_float_expr
  const char* alt_float_expr = nullptr;
  bool needs_fp64 = false;  // registered only where every device of the type has fp64
};

// Line-kernel bodies (codegen.hpp, line_source): T input, U its unsigned
// type, A the accumulator, O output; X(j), SET_Y(j, v), SET_OUT(v), count.
#define XDEV_SUM_BODY "A acc = 0; for (long j = 0; j < count; ++j) acc += (A)X(j);"
constexpr const char* kSumFloat = XDEV_SUM_BODY " SET_OUT((O)acc);";
constexpr const char* kMeanFloat = XDEV_SUM_BODY " SET_OUT((O)(acc / (A)count));";
constexpr const char* kMeanInt = XDEV_SUM_BODY " SET_OUT(count == 0 ? (O)0 : (O)((T)acc / (T)count));";
constexpr const char* kProd =
    "A acc = 1; for (long j = 0; j < count; ++j) acc *= (A)X(j); SET_OUT((O)acc);";
constexpr const char* kMaxFloat =
    "T acc = -INFINITY; for (long j = 0; j < count; ++j) acc = xdev_max_$T(acc, X(j)); SET_OUT(acc);";
constexpr const char* kMinFloat =
    "T acc = INFINITY; for (long j = 0; j < count; ++j) acc = xdev_min_$T(acc, X(j)); SET_OUT(acc);";
constexpr const char* kMaxInt =
    "T acc = $LOWEST; for (long j = 0; j < count; ++j) acc = xdev_max_$T(acc, X(j)); SET_OUT(acc);";
constexpr const char* kMinInt =
    "T acc = $HIGHEST; for (long j = 0; j < count; ++j) acc = xdev_min_$T(acc, X(j)); SET_OUT(acc);";
constexpr const char* kAny = "uchar acc = 0; for (long j = 0; j < count; ++j) acc |= X(j) != 0; SET_OUT(acc);";
constexpr const char* kAll_ = "uchar acc = 1; for (long j = 0; j < count; ++j) acc &= X(j) != 0; SET_OUT(acc);";
#define XDEV_LINE_MAX "T m = -INFINITY; for (long j = 0; j < count; ++j) m = xdev_max_$T(m, X(j));"
constexpr const char* kLogSumExp = XDEV_LINE_MAX
    " if (isnan(m) || isinf(m)) { SET_OUT(m); return; }"
    " A s = 0; for (long j = 0; j < count; ++j) s += (A)exp(X(j) - m); SET_OUT((O)((A)m + log(s)));";
constexpr const char* kSoftmax = XDEV_LINE_MAX
    " A s = 0; for (long j = 0; j < count; ++j) s += (A)exp(X(j) - m);"
    " for (long j = 0; j < count; ++j) SET_Y(j, (O)((A)exp(X(j) - m) / s));";
constexpr const char* kLogSoftmax = XDEV_LINE_MAX
    " A s = 0; for (long j = 0; j < count; ++j) s += (A)exp(X(j) - m); A ls = log(s);"
    " for (long j = 0; j < count; ++j) SET_Y(j, (O)((A)(X(j) - m) - ls));";
// Softmax, LogSoftmax, LogSumExp: the sum of exponentials in A (double where
// the device has fp64: a float sum of 10^5 terms drifts past the tolerance).
// ArgMax/ArgMin: the first extreme; a NaN wins (the first one).
constexpr const char* kArgMaxFloat =
    "long best = 0; T bv = X(0); for (long j = 1; j < count && !isnan(bv); ++j) {"
    " T v = X(j); if (isnan(v) || v > bv) { bv = v; best = j; } } SET_OUT(best);";
constexpr const char* kArgMinFloat =
    "long best = 0; T bv = X(0); for (long j = 1; j < count && !isnan(bv); ++j) {"
    " T v = X(j); if (isnan(v) || v < bv) { bv = v; best = j; } } SET_OUT(best);";
constexpr const char* kArgMaxInt =
    "long best = 0; T bv = X(0); for (long j = 1; j < count; ++j) {"
    " T v = X(j); if (v > bv) { bv = v; best = j; } } SET_OUT(best);";
constexpr const char* kArgMinInt =
    "long best = 0; T bv = X(0); for (long j = 1; j < count; ++j) {"
    " T v = X(j); if (v < bv) { bv = v; best = j; } } SET_OUT(best);";
// CumSum: $EXCLUSIVE and $REVERSE are 0 or 1 (the attributes).
constexpr const char* kCumSum =
    "A acc = 0; for (long k = 0; k < count; ++k) { long j = $REVERSE ? count - 1 - k : k;"
    " if ($EXCLUSIVE) { SET_Y(j, (O)acc); acc += (A)X(j); } else { acc += (A)X(j); SET_Y(j, (O)acc); } }";

// LayerNorm: mean and variance in A (double where the device has it), then
// (x - mean) * rstd * gamma + beta, rounded once (docs/ops.md).
constexpr const char* kLayerNormBody =
    "A sum = 0; for (long j = 0; j < count; ++j) sum += (A)X(j); A mean = sum / (A)count;"
    " A sq = 0; for (long j = 0; j < count; ++j) { A d = (A)X(j) - mean; sq += d * d; }"
    " A rstd = (A)1 / sqrt(sq / (A)count + eps);"
    " for (long j = 0; j < count; ++j)"
    " SET_Y(j, (O)(((A)X(j) - mean) * rstd * (A)LD(gamma, ix.off[2] + j) + (A)LD(beta, ix.off[3] + j)));";

// SoftmaxCrossEntropyWithLogits, per row (X: features; labels and backprop
// through the extra parameters): the maximum (a NaN stays), the sum of
// exponentials, then loss = sum labels * (log sum - shifted) and backprop =
// softmax - labels, all in A (double where the device has it).
constexpr const char* kSoftmaxXentBody =
    "A top = -INFINITY; for (long j = 0; j < count; ++j) { A v = (A)X(j);"
    " if (v > top || isnan(v)) top = v; if (isnan(top)) break; }"
    " A s = 0; for (long j = 0; j < count; ++j) s += exp((A)X(j) - top); A ls = log(s);"
    " A loss = 0; for (long j = 0; j < count; ++j) { A sh = (A)X(j) - top;"
    " A lab = (A)LD(labels, ix.off[2] + line * lrow + j * lcol); loss += lab * (ls - sh);"
    " ST(backprop, ix.off[3] + line * count + j, exp(sh) / s - lab); } SET_OUT((O)loss);";

// The reductions as work-group trees (codegen.hpp, tree_source): state,
// init, add (element x at j), merge (b into a), finish. Used for lines of
// kTreeMin elements or more; shorter ones run the line kernels above.
constexpr TreeReduce kTreeSum = {"A", "s = 0", "s += (A)x", "a += b", "(O)s"};
constexpr TreeReduce kTreeMeanFloat = {"A", "s = 0", "s += (A)x", "a += b", "(O)(s / (A)count)"};
constexpr TreeReduce kTreeMeanInt = {"A", "s = 0", "s += (A)x", "a += b",
                                     "count == 0 ? (O)0 : (O)((T)s / (T)count)"};
constexpr TreeReduce kTreeProd = {"A", "s = 1", "s *= (A)x", "a *= b", "(O)s"};
constexpr TreeReduce kTreeMaxFloat = {"T", "s = -INFINITY", "s = xdev_max_$T(s, x)",
                                      "a = xdev_max_$T(a, b)", "s"};
constexpr TreeReduce kTreeMinFloat = {"T", "s = INFINITY", "s = xdev_min_$T(s, x)",
                                      "a = xdev_min_$T(a, b)", "s"};
constexpr TreeReduce kTreeMaxInt = {"T", "s = $LOWEST", "s = xdev_max_$T(s, x)",
                                    "a = xdev_max_$T(a, b)", "s"};
constexpr TreeReduce kTreeMinInt = {"T", "s = $HIGHEST", "s = xdev_min_$T(s, x)",
                                    "a = xdev_min_$T(a, b)", "s"};
constexpr TreeReduce kTreeAny = {"uchar", "s = 0", "s |= x != 0", "a |= b", "s"};
constexpr TreeReduce kTreeAll = {"uchar", "s = 1", "s &= x != 0", "a &= b", "s"};
// LogSumExp in one pass: the running maximum m (a NaN sticks) and the sum
// of e^(x - m), rescaled when m grows; a -inf adds nothing; an infinite or
// NaN maximum is the result (as in the line kernel).
constexpr TreeReduce kTreeLogSumExp = {
    "struct { A m; A s; }", "s.m = -INFINITY; s.s = 0",
    "if (isnan(x)) s.m = (A)x; else if ((A)x > s.m) { s.s = s.s * exp(s.m - (A)x) + 1; "
    "s.m = (A)x; } else if (!(isinf(x) && x < 0)) s.s += exp((A)x - s.m)",
    "A m = xdev_max_$A(a.m, b.m); if (!isnan(m) && !isinf(m)) "
    "a.s = a.s * exp(a.m - m) + b.s * exp(b.m - m); a.m = m",
    "(isnan(s.m) || isinf(s.m)) ? (O)s.m : (O)(s.m + log(s.s))"};
// ArgMax/ArgMin: the value and its position (-1: none yet); each item sees
// its elements in order, so it keeps the first; merges compare positions.
// A NaN wins over numbers (the first NaN).
#define XDEV_ARG_FLOAT(cmp)                                                          \
  "if (s.i < 0 || (!isnan(s.v) && (isnan(x) || x " cmp " s.v))) { s.v = x; s.i = j; }", \
      "if (b.i >= 0 && (a.i < 0 || (isnan(b.v) && (!isnan(a.v) || b.i < a.i)) ||"    \
      " (!isnan(a.v) && !isnan(b.v) && (b.v " cmp " a.v || (b.v == a.v && b.i < a.i))))) a = b"
#define XDEV_ARG_INT(cmp)                                        \
  "if (s.i < 0 || x " cmp " s.v) { s.v = x; s.i = j; }",           \
      "if (b.i >= 0 && (a.i < 0 || b.v " cmp " a.v || (b.v == a.v && b.i < a.i))) a = b"
constexpr TreeReduce kTreeArgMaxFloat = {"struct { T v; long i; }", "s.v = 0; s.i = -1",
                                         XDEV_ARG_FLOAT(">"), "s.i"};
constexpr TreeReduce kTreeArgMinFloat = {"struct { T v; long i; }", "s.v = 0; s.i = -1",
                                         XDEV_ARG_FLOAT("<"), "s.i"};
constexpr TreeReduce kTreeArgMaxInt = {"struct { T v; long i; }", "s.v = 0; s.i = -1",
                                       XDEV_ARG_INT(">"), "s.i"};
constexpr TreeReduce kTreeArgMinInt = {"struct { T v; long i; }", "s.v = 0; s.i = -1",
                                       XDEV_ARG_INT("<"), "s.i"};
#undef XDEV_ARG_FLOAT
#undef XDEV_ARG_INT

// The tree of a reduction row for `dtype`'s class, or nullptr (not a tree op).
const TreeReduce* tree_for(const OpRow& row, bool floating) {
  struct Entry {
    const char* op;
    const TreeReduce* for_float;
    const TreeReduce* for_int;  // integers and bool
  };
  static constexpr Entry kTrees[] = {
      {XDEV_OP_Sum, &kTreeSum, &kTreeSum},
      {XDEV_OP_Mean, &kTreeMeanFloat, &kTreeMeanInt},
      {XDEV_OP_Prod, &kTreeProd, &kTreeProd},
      {XDEV_OP_Max, &kTreeMaxFloat, &kTreeMaxInt},
      {XDEV_OP_Min, &kTreeMinFloat, &kTreeMinInt},
      {XDEV_OP_Any, nullptr, &kTreeAny},
      {XDEV_OP_All, nullptr, &kTreeAll},
      {XDEV_OP_LogSumExp, &kTreeLogSumExp, nullptr},
      {XDEV_OP_ArgMax, &kTreeArgMaxFloat, &kTreeArgMaxInt},
      {XDEV_OP_ArgMin, &kTreeArgMinFloat, &kTreeArgMinInt},
  };
  for (const Entry& e : kTrees) {
    if (std::strcmp(e.op, row.op) == 0) return floating ? e.for_float : e.for_int;
  }
  return nullptr;
}

#define XDEV_WRAP(op) "($T)(($U)a " op " ($U)b)"
constexpr OpRow kOps[] = {
    // Data movement and creation.
    {XDEV_OP_Copy, Kind::kElementwise, kEvery, 1, Out::kSame, "a", "a", "a"},
    {XDEV_OP_Identity, Kind::kElementwise, kEvery, 1, Out::kSame, "a", "a", "a"},
    {XDEV_OP_BroadcastTo, Kind::kBroadcast, kEvery, 1, Out::kSame, nullptr, nullptr, nullptr},
    {XDEV_OP_Cast, Kind::kCast, kEvery, 1, Out::kAttr, nullptr, nullptr, nullptr},
    {XDEV_OP_Fill, Kind::kFill, kEvery, 0, Out::kSame, nullptr, nullptr, nullptr},
    // Unary math.
    {XDEV_OP_Neg, Kind::kElementwise, kNumbersH, 1, Out::kSame, "-a", "xdev_neg_$T(a)", nullptr},
    {XDEV_OP_Relu, Kind::kElementwise, kNumbersH, 1, Out::kSame, "a > 0 ? a : ($T)0", "a > 0 ? a : ($T)0", nullptr},
    {XDEV_OP_Abs, Kind::kElementwise, kNumbersH, 1, Out::kSame, "fabs(a)", "a < 0 ? xdev_neg_$T(a) : a", nullptr},
    {XDEV_OP_Sign, Kind::kElementwise, kNumbersH, 1, Out::kSame, "a > 0 ? ($T)1 : (a < 0 ? ($T)-1 : a)",
     "($T)((a > 0) - (a < 0))", nullptr},
    {XDEV_OP_Square, Kind::kElementwise, kNumbersH, 1, Out::kSame, "a * a", "($T)(($U)a * ($U)a)", nullptr},
    {XDEV_OP_Exp, Kind::kElementwise, kFloatsH, 1, Out::kSame, "exp(a)", nullptr, nullptr},
    {XDEV_OP_Expm1, Kind::kElementwise, kFloatsH, 1, Out::kSame, "expm1(a)", nullptr, nullptr},
    {XDEV_OP_Log, Kind::kElementwise, kFloatsH, 1, Out::kSame, "log(a)", nullptr, nullptr},
    {XDEV_OP_Log1p, Kind::kElementwise, kFloatsH, 1, Out::kSame, "log1p(a)", nullptr, nullptr},
    {XDEV_OP_Sqrt, Kind::kElementwise, kFloatsH, 1, Out::kSame, "sqrt(a)", nullptr, nullptr},
    {XDEV_OP_Rsqrt, Kind::kElementwise, kFloatsH, 1, Out::kSame, "($T)1 / sqrt(a)", nullptr, nullptr},
    {XDEV_OP_Reciprocal, Kind::kElementwise, kFloatsH, 1, Out::kSame, "($T)1 / a", nullptr, nullptr},
    {XDEV_OP_Sin, Kind::kElementwise, kFloatsH, 1, Out::kSame, "sin(a)", nullptr, nullptr},
    {XDEV_OP_Cos, Kind::kElementwise, kFloatsH, 1, Out::kSame, "cos(a)", nullptr, nullptr},
    {XDEV_OP_Tanh, Kind::kElementwise, kFloatsH, 1, Out::kSame, "tanh(a)", nullptr, nullptr},
    {XDEV_OP_Sigmoid, Kind::kElementwise, kFloatsH, 1, Out::kSame, "($T)1 / (($T)1 + exp(-a))", nullptr, nullptr},
    {XDEV_OP_Erf, Kind::kElementwise, kFloatsH, 1, Out::kSame, "erf(a)", nullptr, nullptr},
    {XDEV_OP_Softplus, Kind::kElementwise, kFloatsH, 1, Out::kSame, "fmax(a, ($T)0) + log1p(exp(-fabs(a)))", nullptr, nullptr},
    {XDEV_OP_Floor, Kind::kElementwise, kFloatsH, 1, Out::kSame, "floor(a)", nullptr, nullptr},
    {XDEV_OP_Ceil, Kind::kElementwise, kFloatsH, 1, Out::kSame, "ceil(a)", nullptr, nullptr},
    {XDEV_OP_Round, Kind::kElementwise, kFloatsH, 1, Out::kSame, "rint(a)", nullptr, nullptr},
    {XDEV_OP_LeakyRelu, Kind::kElementwise, kFloatsH, 1, Out::kSame, "a > 0 ? a : alpha * a", nullptr, nullptr,
     XDEV_ATTR_NAME_alpha, 0.2},
    {XDEV_OP_Gelu, Kind::kElementwise, kFloatsH, 1, Out::kSame,
     "($T)0.5$F * a * (($T)1 + erf(a * ($T)0.70710678118654752440$F))", nullptr, nullptr, nullptr, 0,
     XDEV_ATTR_NAME_approximate,
     "($T)0.5$F * a * (($T)1 + tanh(($T)0.79788456080286535588$F * (a + ($T)0.044715$F * a * a * a)))"},
    {XDEV_OP_IsNan, Kind::kElementwise, kFloatsH, 1, Out::kBool, "isnan(a) ? 1 : 0", nullptr, nullptr},
    {XDEV_OP_IsFinite, Kind::kElementwise, kFloatsH, 1, Out::kBool, "isfinite(a) ? 1 : 0", nullptr, nullptr},
    {XDEV_OP_LogicalNot, Kind::kElementwise, kBool, 1, Out::kSame, nullptr, nullptr, "a == 0"},
    // Binary math (inputs broadcast by the core: stride 0).
    {XDEV_OP_Add, Kind::kElementwise, kAll | kHalves, 2, Out::kSame, "a + b", XDEV_WRAP("+"), "a | b"},
    {XDEV_OP_Sub, Kind::kElementwise, kNumbersH, 2, Out::kSame, "a - b", XDEV_WRAP("-"), nullptr},
    {XDEV_OP_Mul, Kind::kElementwise, kNumbersH, 2, Out::kSame, "a * b", XDEV_WRAP("*"), nullptr},
    {XDEV_OP_Div, Kind::kElementwise, kNumbersH, 2, Out::kSame, "a / b", "xdev_div_$T(a, b)", nullptr},
    {XDEV_OP_Pow, Kind::kElementwise, kFloatsH, 2, Out::kSame, "pow(a, b)", nullptr, nullptr},
    {XDEV_OP_Maximum, Kind::kElementwise, kNumbersH, 2, Out::kSame, "xdev_max_$T(a, b)", "xdev_max_$T(a, b)", nullptr},
    {XDEV_OP_Minimum, Kind::kElementwise, kNumbersH, 2, Out::kSame, "xdev_min_$T(a, b)", "xdev_min_$T(a, b)", nullptr},
    {XDEV_OP_FloorDiv, Kind::kElementwise, kNumbersH, 2, Out::kSame, "floor(a / b)", "xdev_floordiv_$T(a, b)", nullptr},
    {XDEV_OP_FloorMod, Kind::kElementwise, kNumbersH, 2, Out::kSame, "xdev_floormod_$T(a, b)",
     "xdev_floormod_$T(a, b)", nullptr},
    {XDEV_OP_SquaredDifference, Kind::kElementwise, kNumbersH, 2, Out::kSame, "(a - b) * (a - b)",
     "($T)((($U)a - ($U)b) * (($U)a - ($U)b))", nullptr},
    // Comparisons and logic.
    {XDEV_OP_Equal, Kind::kElementwise, kAll | kHalves, 2, Out::kBool, "a == b", "a == b", "a == b"},
    {XDEV_OP_NotEqual, Kind::kElementwise, kAll | kHalves, 2, Out::kBool, "a != b", "a != b", "a != b"},
    {XDEV_OP_Less, Kind::kElementwise, kNumbersH, 2, Out::kBool, "a < b", "a < b", nullptr},
    {XDEV_OP_LessEqual, Kind::kElementwise, kNumbersH, 2, Out::kBool, "a <= b", "a <= b", nullptr},
    {XDEV_OP_Greater, Kind::kElementwise, kNumbersH, 2, Out::kBool, "a > b", "a > b", nullptr},
    {XDEV_OP_GreaterEqual, Kind::kElementwise, kNumbersH, 2, Out::kBool, "a >= b", "a >= b", nullptr},
    {XDEV_OP_LogicalAnd, Kind::kElementwise, kBool, 2, Out::kSame, nullptr, nullptr, "a && b"},
    {XDEV_OP_LogicalOr, Kind::kElementwise, kBool, 2, Out::kSame, nullptr, nullptr, "a || b"},
    // Select is looked up by the condition's dtype; x and y are any dtype.
    {XDEV_OP_Select, Kind::kElementwise, kBool, 3, Out::kAttr, nullptr, nullptr, "a ? b : c"},
    {XDEV_OP_ClipByValue, Kind::kElementwise, kNumbersH, 3, Out::kSame,
     "isnan(a) ? a : fmin(fmax(a, b), c)", "xdev_min_$T(xdev_max_$T(a, b), c)", nullptr},
    {XDEV_OP_AddN, Kind::kAddN, kNumbersH, 0, Out::kSame, nullptr, nullptr, nullptr},
    // Reductions over `axes`.
    {XDEV_OP_Sum, Kind::kReduce, kNumbersH, 1, Out::kSame, kSumFloat, kSumFloat, nullptr},
    {XDEV_OP_Mean, Kind::kReduce, kNumbersH, 1, Out::kSame, kMeanFloat, kMeanInt, nullptr},
    {XDEV_OP_Max, Kind::kReduce, kNumbersH, 1, Out::kSame, kMaxFloat, kMaxInt, nullptr},
    {XDEV_OP_Min, Kind::kReduce, kNumbersH, 1, Out::kSame, kMinFloat, kMinInt, nullptr},
    {XDEV_OP_Prod, Kind::kReduce, kNumbersH, 1, Out::kSame, kProd, kProd, nullptr},
    {XDEV_OP_Any, Kind::kReduce, kBool, 1, Out::kSame, nullptr, nullptr, kAny},
    {XDEV_OP_All, Kind::kReduce, kBool, 1, Out::kSame, nullptr, nullptr, kAll_},
    {XDEV_OP_LogSumExp, Kind::kReduce, kFloatsH, 1, Out::kSame, kLogSumExp, nullptr, nullptr},
    {XDEV_OP_SoftmaxCrossEntropyWithLogits, Kind::kSoftmaxXent, kFloatsH, 2, Out::kSame,
     kSoftmaxXentBody, nullptr, nullptr},
    // Sliding windows: `int_expr` names the WindowOp (window_op below).
    {XDEV_OP_MaxPool, Kind::kWindow, kFloatsH, 1, Out::kSame, nullptr, "0", nullptr},
    {XDEV_OP_AvgPool, Kind::kWindow, kFloatsH, 1, Out::kSame, nullptr, "1", nullptr},
    {XDEV_OP_MaxPoolGrad, Kind::kWindow, kFloatsH, 3, Out::kSame, nullptr, "2", nullptr},
    {XDEV_OP_AvgPoolGrad, Kind::kWindow, kFloatsH, 1, Out::kSame, nullptr, "3", nullptr},
    {XDEV_OP_Conv2D, Kind::kWindow, kFloatsH, 2, Out::kSame, nullptr, "4", nullptr},
    {XDEV_OP_Conv2DBackpropInput, Kind::kWindow, kFloatsH, 2, Out::kSame, nullptr, "5", nullptr},
    {XDEV_OP_Conv2DBackpropFilter, Kind::kWindow, kFloatsH, 2, Out::kSame, nullptr, "6", nullptr},
    {XDEV_OP_LayerNorm, Kind::kLayerNorm, kFloatsH, 3, Out::kSame, kLayerNormBody, nullptr, nullptr},
    // Along one axis.
    {XDEV_OP_Softmax, Kind::kAlongAxis, kFloatsH, 1, Out::kSame, kSoftmax, nullptr, nullptr},
    {XDEV_OP_LogSoftmax, Kind::kAlongAxis, kFloatsH, 1, Out::kSame, kLogSoftmax, nullptr, nullptr},
    {XDEV_OP_CumSum, Kind::kAlongAxis, kNumbersH, 1, Out::kSame, kCumSum, kCumSum, nullptr},
    {XDEV_OP_ArgMax, Kind::kArg, kNumbersH, 1, Out::kInt64, kArgMaxFloat, kArgMaxInt, nullptr},
    {XDEV_OP_ArgMin, Kind::kArg, kNumbersH, 1, Out::kInt64, kArgMinFloat, kArgMinInt, nullptr},
    // CLBlast.
    {XDEV_OP_MatMul, Kind::kMatMul, kNumbersH, 2, Out::kSame, nullptr, nullptr, nullptr},
    {XDEV_OP_BatchMatMulV2, Kind::kBatchMatMul, kNumbersH, 2, Out::kSame, nullptr, nullptr, nullptr},
    // Movement: views and copies.
    {XDEV_OP_Slice, Kind::kSlice, kEvery, 1, Out::kSame, nullptr, nullptr, nullptr},
    {XDEV_OP_ConcatV2, Kind::kConcat, kEvery, 0, Out::kSame, nullptr, nullptr, nullptr},
    {XDEV_OP_Pack, Kind::kConcat, kEvery, 0, Out::kSame, nullptr, nullptr, nullptr},
    {XDEV_OP_PadV2, Kind::kPad, kEvery, 1, Out::kSame, nullptr, nullptr, nullptr},
    {XDEV_OP_BiasAdd, Kind::kBiasAdd, kFloatsH, 2, Out::kSame, "a + b", nullptr, nullptr},
    {XDEV_OP_StridedSlice, Kind::kStridedSlice, kEvery, 1, Out::kSame, nullptr, nullptr, nullptr},
    {XDEV_OP_GatherV2, Kind::kGather, kEvery, 2, Out::kSame, nullptr, nullptr, nullptr},
    {XDEV_OP_TensorScatterAdd, Kind::kScatter, kNumbersH, 3, Out::kSame, nullptr, nullptr, nullptr},
    {XDEV_OP_Tile, Kind::kTile, kEvery, 1, Out::kSame, nullptr, nullptr, nullptr},
    // OneHot is looked up by the indices' dtype; its output is any dtype.
    {XDEV_OP_OneHot, Kind::kOneHot, kInts, 1, Out::kAttr, nullptr, "((long)a == (i / inner) % depth) ? on : off",
     nullptr},
    // Generated: the output element's flat index i.
    {XDEV_OP_RandomUniform, Kind::kGenerate, kFloats, 0, Out::kSame,
     "lo + range * (($T)(xdev_random_bits(seed, (ulong)i) >> $SHIFT) * $SCALE)", nullptr, nullptr},
    {XDEV_OP_Range, Kind::kGenerate, kNumbers, 0, Out::kSame, "start + (double)i * delta",
     "start + (double)i * delta", nullptr, nullptr, 0, nullptr, nullptr, true},
};
#undef XDEV_WRAP

// ---- helpers ----------------------------------------------------------------

const xdev_attr_t* find_attr(const xdev_kernel_call_t* call, const char* name) {
  for (uint32_t i = 0; i < call->attr_count; ++i) {
    if (call->attrs[i].name != nullptr && std::strcmp(call->attrs[i].name, name) == 0) {
      return &call->attrs[i];
    }
  }
  return nullptr;
}
double attr_number(const xdev_kernel_call_t* call, const char* name, double fallback) {
  const xdev_attr_t* a = find_attr(call, name);
  if (a == nullptr) return fallback;
  switch (a->kind) {
    case XDEV_ATTR_FLOAT: return a->value.f;
    case XDEV_ATTR_INT: return static_cast<double>(a->value.i);
    case XDEV_ATTR_BOOL: return a->value.b;
    default: return fallback;
  }
}
bool attr_bool(const xdev_kernel_call_t* call, const char* name) {
  return attr_number(call, name, 0) != 0;
}

// The call's failure: "opencl plugin: <op> on device N (name): ...".
[[gnu::format(printf, 3, 4)]] xdev_status_t* op_fail(const xdev_kernel_call_t* call,
                                                     xdev_status_code_t code, const char* format,
                                                     ...) {
  va_list args;
  va_start(args, format);
  const std::string what = ph::vformat(format, args);
  va_end(args);
  return g_host.fail(call->device->host, code, "opencl plugin: %s on device %u (%s): %s",
                     call->op, call->device->ordinal, call->device->info->name.c_str(),
                     what.c_str());
}

// A tensor's buffer and its element offset.
struct Buffer {
  cl_mem mem = nullptr;
  int64_t offset = 0;  // in elements
};
// `own`: a buffer of the plugin's own (Scratch), taken as it is when `t` lies in it.
xdev_status_t* buffer_of(const xdev_kernel_call_t* call, const xdev_tensor_t& t, int64_t count,
                         const char* what, Buffer* out, const Buffer* own = nullptr) {
  const size_t size = dtype_size(t.dtype);
  if (own != nullptr && size != 0 && t.data == own->mem) {
    *out = {own->mem, own->offset + static_cast<int64_t>(t.byte_offset / size)};
    return nullptr;
  }
  if (size == 0) {
    return op_fail(call, XDEV_STATUS_UNIMPLEMENTED, "%s has dtype %s, which this plugin has no "
                   "kernel for", what, dtype_name(t.dtype));
  }
  if (t.byte_offset % size != 0) {
    return op_fail(call, XDEV_STATUS_INVALID_ARGUMENT,
                   "%s: byte offset %" PRIu64 " is not a multiple of its element size %zu", what,
                   t.byte_offset, size);
  }
  // The nearest and furthest elements (strides may be 0, or negative in
  // StridedSlice's views of its input).
  int64_t first = 0, last = 0;
  for (int32_t d = 0; d < t.rank; ++d) {
    if (t.shape[d] <= 0) continue;
    const int64_t reach = (t.shape[d] - 1) * t.strides[d];
    (reach < 0 ? first : last) += reach;
  }
  const uint64_t below = static_cast<uint64_t>(-first) * size;
  if (count != 0 && below > t.byte_offset) {
    return op_fail(call, XDEV_STATUS_INVALID_ARGUMENT, "%s reaches %" PRIu64 " bytes before "
                   "the start of its allocation", what, below - t.byte_offset);
  }
  Location loc;
  const uint64_t span = count == 0 ? 0 : static_cast<uint64_t>(last - first + 1) * size;
  const uint64_t start = count == 0 ? t.byte_offset : t.byte_offset - below;
  const std::string why = locate(call->device, t.data, start, span, &loc);
  if (!why.empty()) return op_fail(call, XDEV_STATUS_INVALID_ARGUMENT, "%s: %s", what, why.c_str());
  *out = {loc.mem, static_cast<int64_t>((loc.offset + (count == 0 ? 0 : below)) / size)};
  return nullptr;
}

// Sets the arguments in order and runs `n` work items of the program's
// kernel on the call's stream.
struct Arg {
  size_t size;
  const void* value;
};
// `group` != 0: work groups of that many items, `n` a multiple of it (an Arg
// with a NULL value is local memory of its size).
xdev_status_t* launch(const xdev_kernel_call_t* call, const std::string& source,
                      const std::vector<Arg>& args, int64_t n, size_t group = 0) {
  xdev_device_t* d = call->device;
  cl_program program = nullptr;
  if (xdev_status_t* s = get_program(d, source, &program)) return s;
  cl_int err = CL_SUCCESS;
  cl_kernel kernel = clCreateKernel(program, "xdev_kernel", &err);
  if (err != CL_SUCCESS) return cl_failure(d->host, d, "clCreateKernel", err);
  cl_uint index = 0;
  for (const Arg& a : args) {
    err = clSetKernelArg(kernel, index++, a.size, a.value);
    if (err != CL_SUCCESS) break;
  }
  if (err == CL_SUCCESS) {
    // Work groups of kGroup items (every kernel checks i < n, so the global
    // size rounds up): left to the driver, PoCL picked tiny groups and ran an
    // elementwise Add over 2^20 floats about 4x slower (bench/opencl).
    constexpr size_t kGroup = 128;
    const size_t local = group != 0 ? group : std::min<size_t>(kGroup, d->info->max_group);
    const size_t global = (static_cast<size_t>(n) + local - 1) / local * local;
    err = clEnqueueNDRangeKernel(call->stream->queue, kernel, 1, nullptr, &global, &local, 0,
                                 nullptr, nullptr);
  }
  clReleaseKernel(kernel);
  if (err != CL_SUCCESS) {
    return op_fail(call, status_code_for(err), "launching the kernel failed: %s",
                   cl_error_name(err).c_str());
  }
  clFlush(call->stream->queue);
  return nullptr;
}

const char* expr_for(const OpRow& row, xdev_dtype_t t, const xdev_kernel_call_t* call) {
  if (is_float(t)) {
    if (row.bool_attr != nullptr && attr_bool(call, row.bool_attr)) return row.alt_float_expr;
    return row.float_expr;
  }
  return is_int(t) ? row.int_expr : row.bool_expr;
}

// Cast's expression (docs/ops.md "Cast"): float -> int toward zero,
// saturating, NaN 0; anything -> bool is x != 0; -> float16/bfloat16 rounds
// the exact value once (float64, int32 and int64 through a float rounded to
// odd, which the store rounds to nearest even); the rest C conversions.
std::string cast_expr(xdev_dtype_t from, xdev_dtype_t to) {
  if (from == to) return "a";
  if (to == XDEV_DTYPE_BOOL) return "a != 0";
  if (is_half(to)) {
    if (from == XDEV_DTYPE_FLOAT64) return "xdev_odd_from_double(a)";
    if (is_int(from)) return "xdev_odd_from_long((long)a)";
    return "(float)a";
  }
  if (is_float(from) && is_integer(to)) {
    return std::string("convert_") + cl_type(to) + "_sat_rtz(a)";
  }
  return "a";
}

uint64_t fp64_mask(bool fp64) { return fp64 ? ~uint64_t{0} : ~kF64; }

// ---- the kernel functions ---------------------------------------------------

// A scalar kernel parameter: its OpenCL C declaration and its bytes.
struct Param {
  std::string decl;
  std::vector<unsigned char> bytes;
};
template <typename T>
Param param(const std::string& decl, T value) {
  Param p{decl, std::vector<unsigned char>(sizeof value)};
  std::memcpy(p.bytes.data(), &value, sizeof value);
  return p;
}
// A float parameter in the precision `dtype` is computed in (float or double).
Param float_param(const std::string& name, xdev_dtype_t dtype, double value) {
  if (dtype != XDEV_DTYPE_FLOAT64) return param("float " + name, static_cast<float>(value));
  return param("double " + name, value);
}

// `expr` for every element of `out` (any strides: the core's outputs are
// dense, views of them are not), reading `inputs` (the output's rank, any
// strides).
xdev_status_t* run_elementwise_with(const xdev_kernel_call_t* call, const std::string& expr,
                                    const xdev_tensor_t* const* inputs, uint32_t arity,
                                    const xdev_tensor_t& out,
                                    const std::vector<Param>& params = {}, bool tile = false,
                                    const Buffer* own = nullptr) {
  const int64_t n = element_count(out);
  if (n == 0) return nullptr;
  Index ix;
  ix.n = n;
  ix.rank = out.rank;
  std::copy(out.shape, out.shape + out.rank, ix.shape);
  std::vector<xdev_dtype_t> dtypes;
  Buffer buffers[4];
  for (uint32_t k = 0; k < arity; ++k) {
    const xdev_tensor_t& t = *inputs[k];
    if (t.rank != out.rank) {
      return op_fail(call, XDEV_STATUS_INVALID_ARGUMENT, "input %u has rank %d, the output %d", k,
                     t.rank, out.rank);
    }
    if (tile) std::copy(t.shape, t.shape + t.rank, ix.rshape);
    if (xdev_status_t* s = buffer_of(call, t, n, "an input", &buffers[k], own)) return s;
    ix.off[k] = buffers[k].offset;
    std::copy(t.strides, t.strides + t.rank, ix.st[k]);
    dtypes.push_back(t.dtype);
  }
  if (xdev_status_t* s = buffer_of(call, out, n, "the output", &buffers[arity], own)) return s;
  ix.off[arity] = buffers[arity].offset;
  std::copy(out.strides, out.strides + out.rank, ix.st[arity]);
  std::string decls;
  for (const Param& p : params) decls += (decls.empty() ? "" : ", ") + p.decl;
  const bool fp64 = call->device->info->fp64;
  const std::string source = elementwise_source(expr, dtypes, out.dtype, decls, fp64, tile);
  std::vector<Arg> args;
  for (uint32_t k = 0; k <= arity; ++k) args.push_back({sizeof(cl_mem), &buffers[k].mem});
  args.push_back({sizeof ix, &ix});
  for (const Param& p : params) args.push_back({p.bytes.size(), p.bytes.data()});
  return launch(call, source, args, n);
}

// Dense row-major strides of `t` into `strides`.
void dense_strides(const xdev_tensor_t& t, int64_t* strides) {
  int64_t stride = 1;
  for (int32_t d = t.rank - 1; d >= 0; --d) {
    strides[d] = stride;
    stride *= t.shape[d];
  }
}

// A dense float32 tensor of `like`'s shape for the call's partial results:
// scratch from the core's pool (scratch_allocate_at, ABI 1.6) where the core
// offers it, else a buffer of the plugin's own, released when the Scratch
// goes (OpenCL frees it once the work enqueued on it is done).
struct Scratch {
  xdev_tensor_t tensor{};
  int64_t strides[XDEV_MAX_RANK] = {};
  Buffer own;
  Scratch() = default;
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  ~Scratch() {
    if (own.mem != nullptr) clReleaseMemObject(own.mem);
  }
};
// `bytes` of scratch: its (buffer, byte offset) in *where (out->tensor's
// data and byte_offset, or out->own).
xdev_status_t* scratch_bytes(const xdev_kernel_call_t* call, uint64_t bytes, Scratch* out,
                             Location* where) {
  uint64_t offset = 0;
  void* alloc = XDEV_HAS_FIELD(call, xdev_kernel_call_t, scratch_allocate_at) &&
                        call->scratch_allocate_at != nullptr
                    ? call->scratch_allocate_at(call->scratch_context, bytes, &offset)
                    : nullptr;
  if (alloc != nullptr) {
    out->tensor.data = alloc;
    out->tensor.byte_offset = offset;
    const std::string why = locate(call->device, alloc, offset, bytes, where);
    if (!why.empty()) return op_fail(call, XDEV_STATUS_INTERNAL, "scratch: %s", why.c_str());
    return nullptr;
  }
  cl_int err = CL_SUCCESS;
  out->own.mem = clCreateBuffer(call->device->context, CL_MEM_READ_WRITE, bytes, nullptr, &err);
  if (err != CL_SUCCESS) {
    out->own.mem = nullptr;
    return op_fail(call, status_code_for(err), "clCreateBuffer of %" PRIu64 " bytes of "
                   "scratch failed: %s", bytes, cl_error_name(err).c_str());
  }
  out->tensor.data = out->own.mem;
  out->tensor.byte_offset = 0;
  *where = {out->own.mem, 0};
  return nullptr;
}

xdev_status_t* float_scratch(const xdev_kernel_call_t* call, const xdev_tensor_t& like,
                             Scratch* out) {
  const uint64_t bytes = static_cast<uint64_t>(element_count(like)) * sizeof(float);
  out->tensor = like;
  out->tensor.dtype = XDEV_DTYPE_FLOAT32;
  dense_strides(like, out->strides);
  out->tensor.strides = out->strides;
  Location where;
  return scratch_bytes(call, bytes, out, &where);
}

xdev_status_t* check_inputs(const xdev_kernel_call_t* call, uint32_t want) {
  if (call->input_count != want || call->output_count != 1) {
    return op_fail(call, XDEV_STATUS_INVALID_ARGUMENT, "%u input(s) and %u output(s) given; "
                   "the op takes %u and 1", call->input_count, call->output_count, want);
  }
  return nullptr;
}

xdev_status_t* run_elementwise(const OpRow& row, const xdev_kernel_call_t* call) {
  if (xdev_status_t* s = check_inputs(call, row.arity)) return s;
  const xdev_dtype_t t = call->inputs[0]->dtype;
  const char* expr = expr_for(row, t, call);
  if (expr == nullptr) {
    return op_fail(call, XDEV_STATUS_UNIMPLEMENTED, "no kernel for dtype %s", dtype_name(t));
  }
  std::vector<Param> params;
  if (row.param != nullptr) {
    params.push_back(float_param(row.param, t, attr_number(call, row.param, row.param_default)));
  }
  return run_elementwise_with(call, expr, call->inputs, row.arity, *call->outputs[0], params);
}

xdev_status_t* run_cast(const xdev_kernel_call_t* call) {
  if (xdev_status_t* s = check_inputs(call, 1)) return s;
  return run_elementwise_with(call, cast_expr(call->inputs[0]->dtype, call->outputs[0]->dtype),
                              call->inputs, 1, *call->outputs[0]);
}

// `value` converted to `dtype` as Cast converts (docs/ops.md), as bytes.
std::vector<unsigned char> converted(xdev_dtype_t dtype, double value) {
  std::vector<unsigned char> bytes(dtype_size(dtype));
  const auto put = [&bytes](auto v) { std::memcpy(bytes.data(), &v, sizeof v); };
  switch (dtype) {
    case XDEV_DTYPE_FLOAT32: put(static_cast<float>(value)); break;
    case XDEV_DTYPE_FLOAT64: put(value); break;
    case XDEV_DTYPE_INT32: put(cpu::convert<int32_t>(value)); break;
    case XDEV_DTYPE_INT64: put(cpu::convert<int64_t>(value)); break;
    case XDEV_DTYPE_BOOL: put(static_cast<unsigned char>(value != 0 ? 1 : 0)); break;
    case XDEV_DTYPE_FLOAT16: put(cpu::convert<float16>(value).bits); break;
    case XDEV_DTYPE_BFLOAT16: put(cpu::convert<bfloat16>(value).bits); break;
    case XDEV_DTYPE_UINT8: put(cpu::convert<uint8_t>(value)); break;
    case XDEV_DTYPE_INT8: put(cpu::convert<int8_t>(value)); break;
    default: break;
  }
  return bytes;
}

// Every element of the dense tensor `out` = `value`, converted as Cast converts.
xdev_status_t* fill_with(const xdev_kernel_call_t* call, const xdev_tensor_t& out, double value) {
  const std::vector<unsigned char> pattern_bytes = converted(out.dtype, value);
  const unsigned char* pattern = pattern_bytes.data();
  const size_t size = pattern_bytes.size();
  if (size == 0) {
    return op_fail(call, XDEV_STATUS_UNIMPLEMENTED, "no kernel for dtype %s", dtype_name(out.dtype));
  }
  const int64_t n = element_count(out);
  Buffer b;
  if (xdev_status_t* s = buffer_of(call, out, n, "the output", &b)) return s;
  if (n == 0) return nullptr;
  const cl_int err = clEnqueueFillBuffer(call->stream->queue, b.mem, pattern, size,
                                         b.offset * size, n * size, 0, nullptr, nullptr);
  if (err != CL_SUCCESS) return op_fail(call, status_code_for(err), "clEnqueueFillBuffer failed: %s",
                                        cl_error_name(err).c_str());
  clFlush(call->stream->queue);
  return nullptr;
}

xdev_status_t* run_fill(const xdev_kernel_call_t* call) {
  if (call->output_count != 1) return check_inputs(call, 0);
  return fill_with(call, *call->outputs[0], attr_number(call, XDEV_ATTR_NAME_value, 0));
}

// A view of `base` (its buffer): `shape` with `strides`, starting `elements`
// elements after its start. The arrays must outlive the view's use.
xdev_tensor_t view_of(const xdev_tensor_t& base, int32_t rank, const int64_t* shape,
                      const int64_t* strides, int64_t elements) {
  xdev_tensor_t v = base;
  v.rank = rank;
  v.shape = shape;
  v.strides = strides;
  v.byte_offset = base.byte_offset + static_cast<uint64_t>(elements) * dtype_size(base.dtype);
  return v;
}

// `out` = the view of `x` with out's shape and `strides`, `start` elements in.
xdev_status_t* copy_view(const xdev_kernel_call_t* call, const xdev_tensor_t& x,
                         const int64_t* strides, int64_t start, const xdev_tensor_t& out) {
  const xdev_tensor_t view = view_of(x, out.rank, out.shape, strides, start);
  const xdev_tensor_t* in[1] = {&view};
  return run_elementwise_with(call, "a", in, 1, out);
}

const int64_t* ints_attr(const xdev_kernel_call_t* call, const char* name, int64_t want) {
  static const int64_t kNone[1] = {0};  // a rank-0 call's empty list (values may be NULL)
  const xdev_attr_t* a = find_attr(call, name);
  if (a == nullptr || a->kind != XDEV_ATTR_INTS || a->value.ints.count < want) return nullptr;
  return want == 0 ? kNone : a->value.ints.values;
}

xdev_status_t* run_slice(const xdev_kernel_call_t* call) {
  if (xdev_status_t* s = check_inputs(call, 1)) return s;
  const xdev_tensor_t& x = *call->inputs[0];
  const xdev_tensor_t& out = *call->outputs[0];
  const int64_t* begin = ints_attr(call, XDEV_ATTR_NAME_begin, x.rank);
  if (begin == nullptr) {
    return op_fail(call, XDEV_STATUS_INVALID_ARGUMENT, "attribute 'begin' (ints, one per axis) missing");
  }
  int64_t start = 0;
  for (int32_t d = 0; d < x.rank; ++d) start += begin[d] * x.strides[d];
  return copy_view(call, x, x.strides, start, out);
}

// ConcatV2 (inputs along `axis`) and Pack (input k at index k of the new `axis`).
xdev_status_t* run_concat(const xdev_kernel_call_t* call) {
  if (call->input_count == 0 || call->output_count != 1) return check_inputs(call, 1);
  const bool pack = std::strcmp(call->op, XDEV_OP_Pack) == 0;
  const xdev_tensor_t& out = *call->outputs[0];
  const int64_t axis = static_cast<int64_t>(attr_number(call, XDEV_ATTR_NAME_axis, 0));
  if (axis < 0 || axis >= out.rank) {
    return op_fail(call, XDEV_STATUS_INVALID_ARGUMENT, "axis %" PRId64 " is not an axis of the "
                   "rank-%d output", axis, out.rank);
  }
  int64_t dense[XDEV_MAX_RANK];
  dense_strides(out, dense);
  int64_t strides[XDEV_MAX_RANK];  // the output's strides over an input's axes
  for (int32_t d = 0, k = 0; d < out.rank; ++d) {
    if (!pack || d != axis) strides[k++] = dense[d];
  }
  int64_t position = 0;
  for (uint32_t k = 0; k < call->input_count; ++k) {
    const xdev_tensor_t& x = *call->inputs[k];
    const xdev_tensor_t part = view_of(out, x.rank, x.shape, strides, position * dense[axis]);
    position += pack ? 1 : (x.rank > axis ? x.shape[axis] : 0);
    const xdev_tensor_t* in[1] = {&x};
    if (xdev_status_t* s = run_elementwise_with(call, "a", in, 1, part)) return s;
  }
  return nullptr;
}

xdev_status_t* run_pad(const xdev_kernel_call_t* call) {
  if (xdev_status_t* s = check_inputs(call, 1)) return s;
  const xdev_tensor_t& x = *call->inputs[0];
  const xdev_tensor_t& out = *call->outputs[0];
  const int64_t* paddings = ints_attr(call, XDEV_ATTR_NAME_paddings, 2 * x.rank);
  if (paddings == nullptr) {
    return op_fail(call, XDEV_STATUS_INVALID_ARGUMENT, "attribute 'paddings' (ints, 2 per axis) missing");
  }
  if (xdev_status_t* s = fill_with(call, out, attr_number(call, XDEV_ATTR_NAME_constant_values, 0))) return s;
  int64_t dense[XDEV_MAX_RANK];
  dense_strides(out, dense);
  int64_t start = 0;
  for (int32_t d = 0; d < x.rank; ++d) start += paddings[2 * d] * dense[d];
  const xdev_tensor_t interior = view_of(out, x.rank, x.shape, dense, start);
  const xdev_tensor_t* in[1] = {&x};
  return run_elementwise_with(call, "a", in, 1, interior);
}

xdev_status_t* run_bias_add(const OpRow& row, const xdev_kernel_call_t* call) {
  if (xdev_status_t* s = check_inputs(call, 2)) return s;
  const xdev_tensor_t& value = *call->inputs[0];
  const xdev_tensor_t& bias = *call->inputs[1];
  const xdev_attr_t* format = find_attr(call, XDEV_ATTR_NAME_data_format);
  const bool nchw = format != nullptr && format->kind == XDEV_ATTR_STRING &&
                    format->value.s != nullptr && std::strcmp(format->value.s, "NCHW") == 0;
  const int32_t channel = nchw ? 1 : value.rank - 1;
  if (channel < 0 || channel >= value.rank || bias.rank != 1) {
    return op_fail(call, XDEV_STATUS_INVALID_ARGUMENT, "bias of rank %d for a rank-%d value",
                   bias.rank, value.rank);
  }
  int64_t strides[XDEV_MAX_RANK] = {};
  strides[channel] = bias.strides[0];
  const xdev_tensor_t spread = view_of(bias, value.rank, value.shape, strides, 0);
  const xdev_tensor_t* in[2] = {&value, &spread};
  return run_elementwise_with(call, expr_for(row, value.dtype, call), in, 2, *call->outputs[0]);
}

xdev_status_t* run_tile(const xdev_kernel_call_t* call) {
  if (xdev_status_t* s = check_inputs(call, 1)) return s;
  return run_elementwise_with(call, "a", call->inputs, 1, *call->outputs[0], {}, true);
}

xdev_status_t* run_one_hot(const OpRow& row, const xdev_kernel_call_t* call) {
  if (xdev_status_t* s = check_inputs(call, 1)) return s;
  const xdev_tensor_t& indices = *call->inputs[0];
  const xdev_tensor_t& out = *call->outputs[0];
  const int64_t axis = static_cast<int64_t>(attr_number(call, XDEV_ATTR_NAME_axis, -1));
  if (axis < 0 || axis >= out.rank || out.rank != indices.rank + 1) {
    return op_fail(call, XDEV_STATUS_INVALID_ARGUMENT, "axis %" PRId64 " for a rank-%d output",
                   axis, out.rank);
  }
  // The indices as a tensor of the output's rank, broadcast along `axis`.
  int64_t strides[XDEV_MAX_RANK] = {};
  for (int32_t d = 0, k = 0; d < out.rank; ++d) {
    if (d != axis) strides[d] = indices.strides[k++];
  }
  const xdev_tensor_t spread = view_of(indices, out.rank, out.shape, strides, 0);
  int64_t inner = 1;
  for (int32_t d = static_cast<int32_t>(axis) + 1; d < out.rank; ++d) inner *= out.shape[d];
  // The values as Cast converts them; a 16-bit float one widened to the
  // float the kernel stores from (exact, so the store keeps it).
  const auto value = [&](const char* name, const char* attr, double fallback) {
    const std::vector<unsigned char> bits = converted(out.dtype, attr_number(call, attr, fallback));
    if (!is_half(out.dtype)) return Param{std::string(cl_type(out.dtype)) + " " + name, bits};
    uint16_t b = 0;
    std::memcpy(&b, bits.data(), sizeof b);
    const float f = out.dtype == XDEV_DTYPE_FLOAT16 ? float(float16::from_bits(b))
                                                    : float(bfloat16::from_bits(b));
    return param(std::string("float ") + name, f);
  };
  Param on = value("on", XDEV_ATTR_NAME_on_value, 1), off = value("off", XDEV_ATTR_NAME_off_value, 0);
  const xdev_tensor_t* in[1] = {&spread};
  return run_elementwise_with(call, expr_for(row, indices.dtype, call), in, 1, out,
                              {param("long inner", inner), param("long depth", out.shape[axis]),
                               std::move(on), std::move(off)});
}

xdev_status_t* run_strided_slice(const xdev_kernel_call_t* call) {
  if (xdev_status_t* s = check_inputs(call, 1)) return s;
  const xdev_tensor_t& x = *call->inputs[0];
  const xdev_tensor_t& out = *call->outputs[0];
  const xdev_attr_t* begin = find_attr(call, XDEV_ATTR_NAME_begin);
  const int64_t count = begin != nullptr && begin->kind == XDEV_ATTR_INTS ? begin->value.ints.count : -1;
  const int64_t* b = ints_attr(call, XDEV_ATTR_NAME_begin, count);
  const int64_t* e = ints_attr(call, XDEV_ATTR_NAME_end, count);
  const int64_t* st = ints_attr(call, XDEV_ATTR_NAME_strides, count);
  if (count < 0 || b == nullptr || e == nullptr || st == nullptr) {
    return op_fail(call, XDEV_STATUS_INVALID_ARGUMENT,
                   "attributes 'begin', 'end', 'strides' (ints of one length) missing");
  }
  const auto mask = [call](const char* name) {
    return static_cast<int64_t>(attr_number(call, name, 0));
  };
  strided_slice_spec::Dense dense;
  strided_slice_spec::make_dense(x.rank, x.shape, b, e, st, count, mask(XDEV_ATTR_NAME_begin_mask),
                                 mask(XDEV_ATTR_NAME_end_mask), mask(XDEV_ATTR_NAME_ellipsis_mask), mask(XDEV_ATTR_NAME_new_axis_mask),
                                 mask(XDEV_ATTR_NAME_shrink_axis_mask), dense);
  if (dense.error[0] != '\0') return op_fail(call, XDEV_STATUS_INVALID_ARGUMENT, "%s", dense.error);
  int64_t start = 0;
  for (int32_t d = 0; d < x.rank; ++d) start += dense.axes[d].begin * x.strides[d];
  int64_t strides[XDEV_MAX_RANK] = {};
  for (int32_t j = 0; j < dense.output_rank; ++j) strides[j] = dense.view_stride(j, x.strides);
  return copy_view(call, x, strides, start, out);
}

xdev_status_t* run_broadcast(const xdev_kernel_call_t* call) {
  if (xdev_status_t* s = check_inputs(call, 1)) return s;
  const xdev_tensor_t& x = *call->inputs[0];
  const xdev_tensor_t& out = *call->outputs[0];
  if (x.rank > out.rank) {
    return op_fail(call, XDEV_STATUS_INVALID_ARGUMENT, "input of rank %d for a rank-%d output",
                   x.rank, out.rank);
  }
  // NumPy rules: axes aligned at the end; a missing or size-1 axis repeats.
  int64_t strides[XDEV_MAX_RANK] = {};
  const int32_t lead = out.rank - x.rank;
  for (int32_t j = lead; j < out.rank; ++j) {
    strides[j] = x.shape[j - lead] == 1 ? 0 : x.strides[j - lead];
  }
  return copy_view(call, x, strides, 0, out);
}

xdev_status_t* run_gather(const xdev_kernel_call_t* call) {
  if (xdev_status_t* s = check_inputs(call, 2)) return s;
  const xdev_tensor_t& params = *call->inputs[0];
  const xdev_tensor_t& indices = *call->inputs[1];
  const xdev_tensor_t& out = *call->outputs[0];
  const int64_t axis = static_cast<int64_t>(attr_number(call, XDEV_ATTR_NAME_axis, 0));
  if (axis < 0 || axis >= params.rank) {
    return op_fail(call, XDEV_STATUS_INVALID_ARGUMENT, "axis %" PRId64 " is not an axis of the "
                   "rank-%d params", axis, params.rank);
  }
  if (indices.dtype != XDEV_DTYPE_INT32 && indices.dtype != XDEV_DTYPE_INT64) {
    return op_fail(call, XDEV_STATUS_UNIMPLEMENTED, "indices of dtype %s (int32 or int64 only)",
                   dtype_name(indices.dtype));
  }
  int64_t inner = 1;
  for (int32_t d = static_cast<int32_t>(axis) + 1; d < params.rank; ++d) inner *= params.shape[d];
  Index ix;
  ix.n = element_count(out);
  if (ix.n == 0) return nullptr;
  Buffer pb, ib, ob;
  if (xdev_status_t* s = buffer_of(call, params, element_count(params), "params", &pb)) return s;
  if (xdev_status_t* s = buffer_of(call, indices, element_count(indices), "indices", &ib)) return s;
  if (xdev_status_t* s = buffer_of(call, out, ix.n, "the output", &ob)) return s;
  ix.off[0] = pb.offset;
  ix.off[1] = ib.offset;
  ix.off[2] = ob.offset;
  const int64_t n = params.shape[axis];
  const int64_t m = element_count(indices);
  xdev_stream_t* stream = call->stream;
  const std::string source = gather_source(params.dtype, indices.dtype, call->device->info->fp64);
  xdev_status_t* s = launch(call, source,
                            {{sizeof(cl_mem), &pb.mem}, {sizeof(cl_mem), &ib.mem},
                             {sizeof(cl_mem), &ob.mem}, {sizeof ix, &ix}, {sizeof n, &n},
                             {sizeof m, &m}, {sizeof inner, &inner},
                             {sizeof(cl_mem), &stream->errors}},
                            ix.n);
  if (s == nullptr) {
    stream->check_errors = true;  // stream_synchronize reads the flag
    stream->error_op = XDEV_OP_GatherV2;
    stream->error_effect = "the output has 0 there";
  }
  return s;
}

// TensorScatterAdd: out = tensor, then each row of `updates` added at the
// output row its index row names (a row: the tensor's elements from axis D
// on). One work item per column of a row adds that column of every update
// in their order in `updates`, so the result is deterministic and the same
// as the cpu plugin's (no atomics). An index out of range is flagged like
// GatherV2's (stream_synchronize fails naming it); its update is skipped.
xdev_status_t* run_scatter(const xdev_kernel_call_t* call) {
  if (xdev_status_t* s = check_inputs(call, 3)) return s;
  const xdev_tensor_t& tensor = *call->inputs[0];
  const xdev_tensor_t& indices = *call->inputs[1];
  const xdev_tensor_t& updates = *call->inputs[2];
  const xdev_tensor_t& out = *call->outputs[0];
  if (indices.dtype != XDEV_DTYPE_INT32 && indices.dtype != XDEV_DTYPE_INT64) {
    return op_fail(call, XDEV_STATUS_UNIMPLEMENTED, "indices of dtype %s (int32 or int64 only)",
                   dtype_name(indices.dtype));
  }
  if (updates.dtype != tensor.dtype || out.dtype != tensor.dtype) {
    return op_fail(call, XDEV_STATUS_INVALID_ARGUMENT, "tensor %s, updates %s, output %s: one "
                   "dtype expected", dtype_name(tensor.dtype), dtype_name(updates.dtype),
                   dtype_name(out.dtype));
  }
  // Shapes: updates = indices[:-1] + tensor[D:], the output tensor's.
  const int64_t depth = indices.rank == 0 ? -1 : indices.shape[indices.rank - 1];
  bool fits = depth >= 0 && depth <= tensor.rank && out.rank == tensor.rank &&
              updates.rank == indices.rank - 1 + tensor.rank - depth;
  for (int32_t d = 0; fits && d < tensor.rank; ++d) fits = out.shape[d] == tensor.shape[d];
  for (int32_t d = 0; fits && d < updates.rank; ++d) {
    fits = updates.shape[d] == (d < indices.rank - 1 ? indices.shape[d]
                                                     : tensor.shape[depth + d - (indices.rank - 1)]);
  }
  if (!fits) {
    return op_fail(call, XDEV_STATUS_INVALID_ARGUMENT, "the shapes of tensor (rank %d), indices "
                   "(rank %d) and updates (rank %d) do not fit (updates: indices[:-1] + "
                   "tensor[D:]) or the output is not tensor's shape", tensor.rank, indices.rank,
                   updates.rank);
  }
  // float16/bfloat16 add into float32 scratch, rounded into the output
  // once at the end (an output row may take several updates).
  Scratch sum;
  const bool half = is_half(out.dtype) && element_count(out) > 0;
  if (half) {
    if (xdev_status_t* s = float_scratch(call, out, &sum)) return s;
  }
  const Buffer* own = sum.own.mem != nullptr ? &sum.own : nullptr;
  const xdev_tensor_t& acc = half ? sum.tensor : out;
  const xdev_tensor_t* copy[1] = {&tensor};
  if (xdev_status_t* s = run_elementwise_with(call, "a", copy, 1, acc, {}, false, own)) return s;
  int64_t rows = 1, inner = 1;
  for (int32_t d = 0; d + 1 < indices.rank; ++d) rows *= indices.shape[d];
  for (int32_t d = static_cast<int32_t>(depth); d < tensor.rank; ++d) inner *= tensor.shape[d];
  const xdev_tensor_t* rounded[1] = {&sum.tensor};
  if (rows == 0 || inner == 0 || element_count(out) == 0) {
    return half ? run_elementwise_with(call, "a", rounded, 1, out, {}, false, own) : nullptr;
  }
  Index ix;
  ix.n = inner;
  ix.rank = tensor.rank;
  std::copy(tensor.shape, tensor.shape + tensor.rank, ix.shape);
  Buffer ub, ib, ob;
  if (xdev_status_t* s = buffer_of(call, updates, element_count(updates), "updates", &ub)) return s;
  if (xdev_status_t* s = buffer_of(call, indices, element_count(indices), "indices", &ib)) return s;
  if (xdev_status_t* s = buffer_of(call, acc, element_count(out), "the output", &ob, own)) return s;
  ix.off[0] = ub.offset;
  ix.off[1] = ib.offset;
  ix.off[2] = ob.offset;
  xdev_stream_t* stream = call->stream;
  const std::string source =
      scatter_source(updates.dtype, acc.dtype, indices.dtype, call->device->info->fp64);
  xdev_status_t* s = launch(call, source,
                            {{sizeof(cl_mem), &ub.mem}, {sizeof(cl_mem), &ib.mem},
                             {sizeof(cl_mem), &ob.mem}, {sizeof ix, &ix}, {sizeof rows, &rows},
                             {sizeof depth, &depth}, {sizeof inner, &inner},
                             {sizeof(cl_mem), &stream->errors}},
                            ix.n);
  if (s == nullptr) {
    stream->check_errors = true;
    stream->error_op = XDEV_OP_TensorScatterAdd;
    stream->error_effect = "its update is not added";
  }
  if (s != nullptr || !half) return s;
  return run_elementwise_with(call, "a", rounded, 1, out, {}, false, own);
}

xdev_status_t* run_generate(const OpRow& row, const xdev_kernel_call_t* call) {
  if (call->output_count != 1) return check_inputs(call, 0);
  const xdev_tensor_t& out = *call->outputs[0];
  std::string expr = expr_for(row, out.dtype, call);
  std::vector<Param> params;
  if (std::strcmp(row.op, XDEV_OP_RandomUniform) == 0) {
    const xdev_attr_t* seed = find_attr(call, XDEV_ATTR_NAME_seed);
    if (seed == nullptr || seed->kind != XDEV_ATTR_INT) {
      return op_fail(call, XDEV_STATUS_INVALID_ARGUMENT, "attribute 'seed' (int) missing");
    }
    const double lo = attr_number(call, XDEV_ATTR_NAME_minval, 0), hi = attr_number(call, XDEV_ATTR_NAME_maxval, 1);
    const bool f32 = out.dtype == XDEV_DTYPE_FLOAT32;
    // The bounds in the output dtype first, then the arithmetic in it.
    const double range = f32 ? static_cast<double>(static_cast<float>(hi) - static_cast<float>(lo))
                             : hi - lo;
    params = {param("ulong seed", static_cast<uint64_t>(seed->value.i)),
              float_param("lo", out.dtype, lo), float_param("range", out.dtype, range)};
    const auto replace = [&expr](const std::string& from, const std::string& to) {
      expr.replace(expr.find(from), from.size(), to);
    };
    replace("$SHIFT", f32 ? "40" : "11");
    replace("$SCALE", f32 ? "0x1.0p-24f" : "0x1.0p-53");
  } else {
    params = {param("double start", attr_number(call, XDEV_ATTR_NAME_start, 0)),
              param("double delta", attr_number(call, XDEV_ATTR_NAME_delta, 1))};
  }
  return run_elementwise_with(call, expr, nullptr, 0, out, params);
}

xdev_status_t* run_add_n(const OpRow& add, const xdev_kernel_call_t* call) {
  if (call->input_count == 0 || call->output_count != 1) return check_inputs(call, 1);
  const xdev_tensor_t& out = *call->outputs[0];
  const xdev_dtype_t t = out.dtype;
  if (call->input_count == 1) {
    return run_elementwise_with(call, "a", call->inputs, 1, out);
  }
  const char* expr = expr_for(add, t, call);
  if (is_half(t) && call->input_count > 2 && element_count(out) > 0) {
    // float16/bfloat16: the sum in float32 scratch, rounded once at the end.
    Scratch sum;
    if (xdev_status_t* s = float_scratch(call, out, &sum)) return s;
    const Buffer* own = sum.own.mem != nullptr ? &sum.own : nullptr;
    const xdev_tensor_t* pair[2] = {call->inputs[0], call->inputs[1]};
    if (xdev_status_t* s = run_elementwise_with(call, expr, pair, 2, sum.tensor, {}, false, own)) {
      return s;
    }
    for (uint32_t k = 2; k < call->input_count; ++k) {
      const xdev_tensor_t* next[2] = {&sum.tensor, call->inputs[k]};
      if (xdev_status_t* s = run_elementwise_with(call, expr, next, 2, sum.tensor, {}, false, own)) {
        return s;
      }
    }
    const xdev_tensor_t* rounded[1] = {&sum.tensor};
    return run_elementwise_with(call, "a", rounded, 1, out, {}, false, own);
  }
  const xdev_tensor_t* pair[2] = {call->inputs[0], call->inputs[1]};
  if (xdev_status_t* s = run_elementwise_with(call, expr, pair, 2, out)) return s;
  xdev_tensor_t acc = out;  // the output as an input (dense strides)
  int64_t strides[XDEV_MAX_RANK];
  dense_strides(out, strides);
  acc.strides = strides;
  for (uint32_t k = 2; k < call->input_count; ++k) {
    const xdev_tensor_t* next[2] = {&acc, call->inputs[k]};
    if (xdev_status_t* s = run_elementwise_with(call, expr, next, 2, out)) return s;
  }
  return nullptr;
}

// Accumulators of the line and tree kernels: integers wrap in their
// unsigned type; float sums and products are computed in double where the
// device has it, else in float (float16/bfloat16 too).
std::string accumulator_for(xdev_dtype_t dtype, bool fp64) {
  if (is_int(dtype)) return dtype == XDEV_DTYPE_INT32 ? "uint" : "ulong";
  if (is_float(dtype) && fp64) return "double";
  return value_type(dtype);
}

// A body's placeholders filled in: $T (the value type), $A (the
// accumulator), the integer limits, CumSum's attributes.
std::string line_text(const xdev_kernel_call_t* call, const char* body, xdev_dtype_t dtype,
                      const std::string& acc) {
  std::string text = body;
  const auto replace = [&text](const std::string& from, const std::string& to) {
    for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) {
      text.replace(at, from.size(), to);
    }
  };
  replace("$T", value_type(dtype));
  replace("$A", acc);
  replace("$LOWEST", dtype == XDEV_DTYPE_INT32 ? "INT_MIN" : "LONG_MIN");
  replace("$HIGHEST", dtype == XDEV_DTYPE_INT32 ? "INT_MAX" : "LONG_MAX");
  replace("$EXCLUSIVE", attr_bool(call, XDEV_ATTR_NAME_exclusive) ? "1" : "0");
  replace("$REVERSE", attr_bool(call, XDEV_ATTR_NAME_reverse) ? "1" : "0");
  return text;
}

// Lines this long or longer reduce in a work-group tree (run_tree) when
// there are fewer than kTreeLines per compute unit; otherwise a work item
// per line fills the device and reads neighbouring lines side by side (on
// PoCL, SumRows of [1024, 1024] took twice as long as trees: bench/opencl).
constexpr int64_t kTreeMin = 64;
constexpr int64_t kTreeLines = 256;

// A reduction over ix's lines (run_line's Index, every line at least
// kTreeMin long) in work groups: one group per line where there are enough
// lines to fill the device, else several per line (parts), whose states a
// second kernel merges. Reduced axes that are contiguous in the input merge
// into one, which the kernel reads without division.
xdev_status_t* run_tree(const xdev_kernel_call_t* call, const TreeReduce& tree, Index ix,
                        const Buffer& in_b, const Buffer& out_b) {
  int32_t r = 0;
  for (int32_t d = 1; d < ix.rrank; ++d) {
    if (ix.rst[0][r] == ix.rst[0][d] * ix.rshape[d]) {
      ix.rshape[r] *= ix.rshape[d];
      ix.rst[0][r] = ix.rst[0][d];
    } else {
      ++r;
      ix.rshape[r] = ix.rshape[d];
      ix.rst[0][r] = ix.rst[0][d];
    }
  }
  ix.rrank = r + 1;
  const DeviceInfo& info = *call->device->info;
  size_t group = 1;
  while (group * 2 <= std::min<size_t>(256, info.max_group)) group *= 2;
  // Enough groups for every compute unit a few times over, each with a few
  // elements per item at least.
  const int64_t want = 4 * static_cast<int64_t>(info.compute_units);
  int64_t parts = 1;
  if (ix.n < want) {
    parts = std::min<int64_t>((want + ix.n - 1) / ix.n,
                              std::max<int64_t>(1, ix.count / (4 * static_cast<int64_t>(group))));
  }
  const xdev_dtype_t input = call->inputs[0]->dtype, output = call->outputs[0]->dtype;
  const bool fp64 = info.fp64;
  // CPU devices: each item streams a contiguous run (PoCL: Sum of 2^20 in
  // 1.1 to 1.9 ms, items side by side 5.5 ms); GPUs: side by side (coalesced).
  const bool chunked = info.cpu;
  const std::string acc = accumulator_for(input, fp64);
  std::string texts[5];
  const char* const parts_of[5] = {tree.state, tree.init, tree.add, tree.merge, tree.finish};
  for (int k = 0; k < 5; ++k) texts[k] = line_text(call, parts_of[k], input, acc);
  const TreeReduce filled = {texts[0].c_str(), texts[1].c_str(), texts[2].c_str(),
                             texts[3].c_str(), texts[4].c_str()};
  // States are at most 16 bytes (two 8-byte fields).
  constexpr uint64_t kState = 16;
  Scratch scratch;
  Location partials{in_b.mem, 0};
  if (parts > 1) {
    if (xdev_status_t* s = scratch_bytes(call, static_cast<uint64_t>(ix.n * parts) * kState,
                                         &scratch, &partials)) {
      return s;
    }
  }
  const int64_t offset = static_cast<int64_t>(partials.offset);
  std::vector<Arg> args = {{sizeof(cl_mem), &in_b.mem}, {sizeof(cl_mem), &out_b.mem},
                           {sizeof(cl_mem), &partials.mem}, {sizeof ix, &ix},
                           {sizeof parts, &parts}, {sizeof offset, &offset},
                           {kState * group, nullptr}};
  const std::string first = tree_source(filled, input, output, acc.c_str(), fp64, 1, static_cast<int>(group),
                                   chunked);
  if (xdev_status_t* s = launch(call, first, args, ix.n * parts * static_cast<int64_t>(group),
                                group)) {
    return s;
  }
  if (parts == 1) return nullptr;
  const std::string second = tree_source(filled, input, output, acc.c_str(), fp64, 2, static_cast<int>(group),
                                   chunked);
  return launch(call, second, args, ix.n * static_cast<int64_t>(group), group);
}

// The line kernels: `reduced` marks the input axes each line runs along.
xdev_status_t* run_line(const OpRow& row, const xdev_kernel_call_t* call) {
  const bool layer_norm = row.kind == Kind::kLayerNorm;
  if (xdev_status_t* s = check_inputs(call, layer_norm ? 3 : 1)) return s;
  const xdev_tensor_t& x = *call->inputs[0];
  const xdev_tensor_t& out = *call->outputs[0];
  bool reduced[XDEV_MAX_RANK] = {};
  if (row.kind == Kind::kReduce) {
    const xdev_attr_t* axes = find_attr(call, XDEV_ATTR_NAME_axes);
    if (axes != nullptr && axes->kind == XDEV_ATTR_INTS) {
      for (int64_t i = 0; i < axes->value.ints.count; ++i) {
        const int64_t a = axes->value.ints.values[i];
        if (a >= 0 && a < x.rank) reduced[a] = true;
      }
    }
  } else if (layer_norm) {
    const int64_t first = static_cast<int64_t>(attr_number(call, XDEV_ATTR_NAME_begin_norm_axis, -1));
    if (first < 0 || first >= x.rank) {
      return op_fail(call, XDEV_STATUS_INVALID_ARGUMENT, "begin_norm_axis %" PRId64 " is not an "
                     "axis of the rank-%d input", first, x.rank);
    }
    for (int64_t d = first; d < x.rank; ++d) reduced[d] = true;
  } else {
    const int64_t a = static_cast<int64_t>(attr_number(call, XDEV_ATTR_NAME_axis, -1));
    if (a < 0 || a >= x.rank) {
      return op_fail(call, XDEV_STATUS_INVALID_ARGUMENT, "axis %" PRId64 " is not an axis of "
                     "the rank-%d input", a, x.rank);
    }
    reduced[a] = true;
  }
  const bool same_shape = row.kind == Kind::kAlongAxis || layer_norm;
  // Dense strides of the output over the input's axes (reduced axes have
  // none unless the output keeps them).
  int64_t out_strides[XDEV_MAX_RANK] = {};
  int64_t stride = 1;
  for (int32_t d = x.rank - 1; d >= 0; --d) {
    if (same_shape || !reduced[d]) {
      out_strides[d] = stride;
      stride *= x.shape[d];
    }
  }
  Index ix;
  ix.count = 1;
  for (int32_t d = 0; d < x.rank; ++d) {
    if (reduced[d]) {
      ix.rshape[ix.rrank] = x.shape[d];
      ix.rst[0][ix.rrank] = x.strides[d];
      ix.rst[1][ix.rrank] = out_strides[d];
      ++ix.rrank;
      ix.count *= x.shape[d];
    } else {
      ix.shape[ix.rank] = x.shape[d];
      ix.st[0][ix.rank] = x.strides[d];
      ix.st[1][ix.rank] = out_strides[d];
      ++ix.rank;
    }
  }
  ix.n = 1;
  for (int64_t d = 0; d < ix.rank; ++d) ix.n *= ix.shape[d];
  if (ix.n == 0) return nullptr;
  Buffer in_b, out_b;
  if (xdev_status_t* s = buffer_of(call, x, ix.count * ix.n, "the input", &in_b)) return s;
  if (xdev_status_t* s = buffer_of(call, out, element_count(out), "the output", &out_b)) return s;
  ix.off[0] = in_b.offset;
  ix.off[1] = out_b.offset;
  const TreeReduce* tree = tree_for(row, is_float(x.dtype));
  if (tree != nullptr && ix.count >= kTreeMin && ix.n < kTreeLines * call->device->info->compute_units) {
    return run_tree(call, *tree, ix, in_b, out_b);
  }
  const char* body = expr_for(row, x.dtype, call);
  if (body == nullptr) {
    return op_fail(call, XDEV_STATUS_UNIMPLEMENTED, "no kernel for dtype %s", dtype_name(x.dtype));
  }
  const bool fp64 = call->device->info->fp64;
  const std::string acc = accumulator_for(x.dtype, fp64);
  const std::string text = line_text(call, body, x.dtype, acc);
  std::vector<Arg> args = {{sizeof(cl_mem), &in_b.mem}, {sizeof(cl_mem), &out_b.mem},
                            {sizeof ix, &ix}};
  std::string extra;
  Buffer gamma_b, beta_b;
  Param eps;
  if (layer_norm) {
    const xdev_tensor_t& gamma = *call->inputs[1];
    const xdev_tensor_t& beta = *call->inputs[2];
    if (xdev_status_t* s = buffer_of(call, gamma, ix.count, "gamma", &gamma_b)) return s;
    if (xdev_status_t* s = buffer_of(call, beta, ix.count, "beta", &beta_b)) return s;
    ix.off[2] = gamma_b.offset;
    ix.off[3] = beta_b.offset;
    eps = acc == "double" ? param("double eps", attr_number(call, XDEV_ATTR_NAME_epsilon, 0.001))
                          : param("float eps", static_cast<float>(attr_number(call, XDEV_ATTR_NAME_epsilon, 0.001)));
    extra = ", __global const TS* gamma, __global const TS* beta, " + eps.decl;
    args.push_back({sizeof(cl_mem), &gamma_b.mem});
    args.push_back({sizeof(cl_mem), &beta_b.mem});
    args.push_back({eps.bytes.size(), eps.bytes.data()});
  }
  const std::string source = line_source(text, x.dtype, out.dtype, acc.c_str(), fp64, extra);
  return launch(call, source, args, ix.n);
}

// SoftmaxCrossEntropyWithLogits: features and labels [rows or 1, cols or 1]
// (broadcast: step 0), loss [rows], backprop [rows, cols]; one line per row.
xdev_status_t* run_softmax_xent(const OpRow& row, const xdev_kernel_call_t* call) {
  if (call->input_count != 2 || call->output_count != 2) {
    return op_fail(call, XDEV_STATUS_INVALID_ARGUMENT, "%u input(s) and %u output(s) given; the "
                   "op takes 2 and 2", call->input_count, call->output_count);
  }
  const xdev_tensor_t& f = *call->inputs[0];
  const xdev_tensor_t& l = *call->inputs[1];
  const xdev_tensor_t& loss = *call->outputs[0];
  const xdev_tensor_t& bp = *call->outputs[1];
  if (bp.rank != 2 || loss.rank != 1 || loss.shape[0] != bp.shape[0] || f.rank != 2 ||
      l.rank != 2 || bp.dtype != f.dtype || loss.dtype != f.dtype || l.dtype != f.dtype) {
    return op_fail(call, XDEV_STATUS_INVALID_ARGUMENT, "loss must be [batch] and backprop "
                   "[batch, classes] of the features' dtype, features and labels rank 2");
  }
  const int64_t rows = bp.shape[0], cols = bp.shape[1];
  for (const xdev_tensor_t* t : {&f, &l}) {
    if ((t->shape[0] != rows && t->shape[0] != 1) || (t->shape[1] != cols && t->shape[1] != 1)) {
      return op_fail(call, XDEV_STATUS_INVALID_ARGUMENT, "features and labels must broadcast to "
                     "backprop's shape");
    }
  }
  Index ix;
  ix.n = rows;
  ix.rank = 1;
  ix.shape[0] = rows;
  ix.st[0][0] = f.shape[0] == 1 ? 0 : f.shape[1];
  ix.st[1][0] = 1;
  ix.rrank = 1;
  ix.count = cols;
  ix.rshape[0] = cols;
  ix.rst[0][0] = f.shape[1] == 1 ? 0 : 1;
  if (rows == 0) return nullptr;
  Buffer fb, lb, lossb, bpb;
  if (xdev_status_t* s = buffer_of(call, f, element_count(f), "features", &fb)) return s;
  if (xdev_status_t* s = buffer_of(call, l, element_count(l), "labels", &lb)) return s;
  if (xdev_status_t* s = buffer_of(call, loss, rows, "loss", &lossb)) return s;
  if (xdev_status_t* s = buffer_of(call, bp, element_count(bp), "backprop", &bpb)) return s;
  ix.off[0] = fb.offset;
  ix.off[1] = lossb.offset;
  ix.off[2] = lb.offset;
  ix.off[3] = bpb.offset;
  const int64_t lrow = l.shape[0] == 1 ? 0 : l.shape[1], lcol = l.shape[1] == 1 ? 0 : 1;
  const bool fp64 = call->device->info->fp64;
  const std::string source =
      line_source(expr_for(row, f.dtype, call), f.dtype, f.dtype, fp64 ? "double" : "float", fp64,
                  ", __global const TS* labels, __global OS* backprop, long lrow, long lcol");
  return launch(call, source,
                {{sizeof(cl_mem), &fb.mem}, {sizeof(cl_mem), &lossb.mem}, {sizeof ix, &ix},
                 {sizeof(cl_mem), &lb.mem}, {sizeof(cl_mem), &bpb.mem}, {sizeof lrow, &lrow},
                 {sizeof lcol, &lcol}},
                ix.n);
}

// ---- sliding windows ----------------------------------------------------------

// A (height, width) attribute (window::spatial_pair); (1, 1) when absent
// and not required.
xdev_status_t* window_pair(const xdev_kernel_call_t* call, const char* name, bool required,
                           bool nchw, int64_t* h, int64_t* w) {
  const xdev_attr_t* a = find_attr(call, name);
  *h = *w = 1;
  if (a == nullptr && !required) return nullptr;
  if (a == nullptr || a->kind != XDEV_ATTR_INTS ||
      (a->value.ints.count > 0 && a->value.ints.values == nullptr) ||
      !window::spatial_pair(a->value.ints.values, a->value.ints.count, nchw, *h, *w) || *h < 1 ||
      *w < 1) {
    return op_fail(call, XDEV_STATUS_INVALID_ARGUMENT, "the attribute '%s' must be 2 ints "
                   "(height, width) >= 1, or 4 with 1 for batch and channels", name);
  }
  return nullptr;
}

const char* attr_string(const xdev_kernel_call_t* call, const char* name, const char* fallback) {
  const xdev_attr_t* a = find_attr(call, name);
  return a != nullptr && a->kind == XDEV_ATTR_STRING && a->value.s != nullptr ? a->value.s
                                                                               : fallback;
}

WindowImage window_image(const int64_t* shape, bool nchw) {
  const window::Image im = window::dense_image(shape, nchw);
  return {nchw ? 1 : 0, im.n, im.h, im.w, im.c, im.step_n, im.step_h, im.step_w, im.step_c};
}

// The pools, the convolutions and their gradients (docs/ops.md), one
// element of the output per work item (window_source). The windows slide
// over `image` giving `windows` (their shapes from the inputs, the output
// or the attributes input_sizes/filter_sizes: the output's shape).
xdev_status_t* run_window(const OpRow& row, const xdev_kernel_call_t* call) {
  if (xdev_status_t* s = check_inputs(call, row.arity)) return s;
  const auto op = static_cast<WindowOp>(row.int_expr[0] - '0');
  const xdev_tensor_t& out = *call->outputs[0];
  for (uint32_t k = 0; k < call->input_count; ++k) {
    if (call->inputs[k]->dtype != out.dtype) {
      return op_fail(call, XDEV_STATUS_INVALID_ARGUMENT, "input %u has dtype %s, the output %s", k,
                     dtype_name(call->inputs[k]->dtype), dtype_name(out.dtype));
    }
  }
  const xdev_tensor_t* image = nullptr;   // what the windows slide over
  const xdev_tensor_t* pooled = nullptr;  // one element per window and channel
  const xdev_tensor_t* filter = nullptr;
  switch (op) {
    case WindowOp::kMaxPool:
    case WindowOp::kAvgPool: image = call->inputs[0]; pooled = &out; break;
    case WindowOp::kMaxPoolGrad: image = call->inputs[0]; pooled = call->inputs[2]; break;
    case WindowOp::kAvgPoolGrad: image = &out; pooled = call->inputs[0]; break;
    case WindowOp::kConv2D: image = call->inputs[0]; filter = call->inputs[1]; pooled = &out; break;
    case WindowOp::kConvInput: image = &out; filter = call->inputs[0]; pooled = call->inputs[1]; break;
    case WindowOp::kConvFilter: image = call->inputs[0]; filter = &out; pooled = call->inputs[1]; break;
  }
  const char* format = attr_string(call, XDEV_ATTR_NAME_data_format, "NHWC");
  const char* padding = attr_string(call, XDEV_ATTR_NAME_padding, "");
  const bool nchw = std::strcmp(format, "NCHW") == 0;
  const bool same = std::strcmp(padding, "SAME") == 0;
  if ((!nchw && std::strcmp(format, "NHWC") != 0) || (!same && std::strcmp(padding, "VALID") != 0)) {
    return op_fail(call, XDEV_STATUS_INVALID_ARGUMENT, "data_format '%s' (NHWC or NCHW) or "
                   "padding '%s' (SAME or VALID) unknown", format, padding);
  }
  if (image->rank != 4 || pooled->rank != 4 || (filter != nullptr && filter->rank != 4)) {
    return op_fail(call, XDEV_STATUS_INVALID_ARGUMENT, "images (and the filter) of rank 4 expected");
  }
  Window g;
  g.in = window_image(image->shape, nchw);
  g.out = window_image(pooled->shape, nchw);
  if (xdev_status_t* s = window_pair(call, XDEV_ATTR_NAME_strides, true, nchw, &g.sy, &g.sx)) return s;
  if (filter != nullptr) {
    if (xdev_status_t* s = window_pair(call, XDEV_ATTR_NAME_dilations, false, nchw, &g.dy, &g.dx)) return s;
    g.kh = filter->shape[0];
    g.kw = filter->shape[1];
    if (filter->shape[2] != g.in.c || filter->shape[3] != g.out.c) {
      return op_fail(call, XDEV_STATUS_INVALID_ARGUMENT, "the filter [%" PRId64 ", %" PRId64 ", %"
                     PRId64 ", %" PRId64 "] does not match %" PRId64 " input and %" PRId64
                     " output channels", filter->shape[0], filter->shape[1], filter->shape[2],
                     filter->shape[3], g.in.c, g.out.c);
    }
  } else if (xdev_status_t* s = window_pair(call, XDEV_ATTR_NAME_ksize, true, nchw, &g.kh, &g.kw)) {
    return s;
  }
  window::Axis y{g.in.h, g.kh, g.sy, g.dy}, x{g.in.w, g.kw, g.sx, g.dx};
  if (!window::resolve(y, same) || !window::resolve(x, same) || y.out != g.out.h ||
      x.out != g.out.w || g.out.n != g.in.n || (filter == nullptr && g.in.c != g.out.c)) {
    return op_fail(call, XDEV_STATUS_INVALID_ARGUMENT, "windows of %" PRId64 "x%" PRId64 " over %"
                   PRId64 "x%" PRId64 " (batch %" PRId64 ") do not give %" PRId64 "x%" PRId64
                   " (batch %" PRId64 ")", g.kh, g.kw, g.in.h, g.in.w, g.in.n, g.out.h, g.out.w,
                   g.out.n);
  }
  g.py = y.pad_before;
  g.px = x.pad_before;
  Index ix;
  ix.n = element_count(out);
  if (ix.n == 0) return nullptr;
  Buffer buffers[4];
  for (uint32_t k = 0; k < 3; ++k) {
    const xdev_tensor_t& t = k < call->input_count ? *call->inputs[k] : *call->inputs[0];
    if (xdev_status_t* s = buffer_of(call, t, element_count(t), "an input", &buffers[k])) return s;
    ix.off[k] = buffers[k].offset;
  }
  if (xdev_status_t* s = buffer_of(call, out, ix.n, "the output", &buffers[3])) return s;
  ix.off[3] = buffers[3].offset;
  const std::string source = window_source(op, out.dtype, call->device->info->fp64);
  return launch(call, source,
                {{sizeof(cl_mem), &buffers[0].mem}, {sizeof(cl_mem), &buffers[1].mem},
                 {sizeof(cl_mem), &buffers[2].mem}, {sizeof(cl_mem), &buffers[3].mem},
                 {sizeof ix, &ix}, {sizeof g, &g}},
                ix.n);
}

// CLBlast's GEMM for float32/float64, batched (one offset per matrix, so
// broadcast batch axes repeat an offset) when there are several matrices.
template <typename T>
struct ClblastGemm;
template <>
struct ClblastGemm<float> {
  static constexpr auto one = CLBlastSgemm;
  static constexpr auto batched = CLBlastSgemmBatched;
};
template <>
struct ClblastGemm<double> {
  static constexpr auto one = CLBlastDgemm;
  static constexpr auto batched = CLBlastDgemmBatched;
};
struct Clblast {
  template <typename T>
  static CLBlastStatusCode gemm(CLBlastTranspose ta, CLBlastTranspose tb, size_t m, size_t n,
                                size_t k, cl_mem a, const std::vector<size_t>& ao, size_t lda,
                                cl_mem b, const std::vector<size_t>& bo, size_t ldb, cl_mem c,
                                const std::vector<size_t>& co, cl_command_queue* queue) {
    constexpr auto one_matrix = ClblastGemm<T>::one;
    constexpr auto batched = ClblastGemm<T>::batched;
    if (ao.size() == 1) {
      return one_matrix(CLBlastLayoutRowMajor, ta, tb, m, n, k, T{1}, a, ao[0], lda, b, bo[0], ldb,
                        T{0}, c, co[0], n, queue, nullptr);
    }
    const std::vector<T> alphas(ao.size(), T{1}), betas(ao.size(), T{0});
    return batched(CLBlastLayoutRowMajor, ta, tb, m, n, k, alphas.data(), a, ao.data(), lda, b,
                   bo.data(), ldb, betas.data(), c, co.data(), n, ao.size(), queue, nullptr);
  }
};

// MatMul (rank 2, transpose_a/transpose_b) and BatchMatMulV2 (the batch axes
// broadcast, adj_x/adj_y): out[..., M, N] = op(x)[..., M, K] . op(y)[..., K, N].
// Floats whose matrices are row-major run CLBlast; integers (and other
// layouts) the generated kernel (gemm_source), wrapping like the cpu plugin.
xdev_status_t* run_matmul(const xdev_kernel_call_t* call, bool batched) {
  if (xdev_status_t* s = check_inputs(call, 2)) return s;
  const xdev_tensor_t& x = *call->inputs[0];
  const xdev_tensor_t& y = *call->inputs[1];
  const xdev_tensor_t& out = *call->outputs[0];
  if (batched ? (x.rank < 2 || y.rank < 2 || out.rank != std::max(x.rank, y.rank))
              : (x.rank != 2 || y.rank != 2 || out.rank != 2)) {
    return op_fail(call, XDEV_STATUS_INVALID_ARGUMENT, "ranks %d, %d -> %d; %s", x.rank, y.rank,
                   out.rank, batched ? "x and y need rank >= 2 and the output their larger rank"
                                     : "MatMul takes 2");
  }
  const bool ax = attr_bool(call, batched ? XDEV_ATTR_NAME_adj_x : XDEV_ATTR_NAME_transpose_a);
  const bool ay = attr_bool(call, batched ? XDEV_ATTR_NAME_adj_y : XDEV_ATTR_NAME_transpose_b);
  const int32_t xr = x.rank, yr = y.rank, orank = out.rank;
  const int64_t m = out.shape[orank - 2], n = out.shape[orank - 1];
  const int64_t k = x.shape[xr - (ax ? 2 : 1)];
  if (x.shape[xr - (ax ? 1 : 2)] != m || y.shape[yr - (ay ? 1 : 2)] != k ||
      y.shape[yr - (ay ? 2 : 1)] != n) {
    return op_fail(call, XDEV_STATUS_INVALID_ARGUMENT, "op(x) is %" PRId64 "x%" PRId64 ", op(y) %"
                   PRId64 "x%" PRId64 ", the output %" PRId64 "x%" PRId64,
                   x.shape[xr - (ax ? 1 : 2)], k, y.shape[yr - (ay ? 1 : 2)],
                   y.shape[yr - (ay ? 2 : 1)], m, n);
  }
  // The Index over the output's batch axes: x's and y's strides aligned
  // from the right, 0 where they broadcast.
  Index ix;
  ix.rank = orank - 2;
  int64_t batches = 1;
  for (int32_t d = 0; d < ix.rank; ++d) {
    ix.shape[d] = out.shape[d];
    batches *= out.shape[d];
    const xdev_tensor_t* in[2] = {&x, &y};
    for (int t = 0; t < 2; ++t) {
      const int32_t j = d - (orank - in[t]->rank);
      const int64_t extent = j >= 0 ? in[t]->shape[j] : 1;
      if (extent != 1 && extent != out.shape[d]) {
        return op_fail(call, XDEV_STATUS_INVALID_ARGUMENT, "batch axis %d: %s has %" PRId64
                       ", the output %" PRId64, d, t == 0 ? "x" : "y", extent, out.shape[d]);
      }
      ix.st[t][d] = extent == 1 ? 0 : in[t]->strides[j];
    }
  }
  Buffer xb, yb, ob;
  if (xdev_status_t* s = buffer_of(call, x, element_count(x), "x", &xb)) return s;
  if (xdev_status_t* s = buffer_of(call, y, element_count(y), "y", &yb)) return s;
  if (xdev_status_t* s = buffer_of(call, out, element_count(out), "the output", &ob)) return s;
  if (batches == 0 || m == 0 || n == 0) return nullptr;
  cl_command_queue queue = call->stream->queue;
  const size_t size = dtype_size(out.dtype);
  if (k == 0) {  // empty products: zeros
    const unsigned char zero[8] = {};
    const cl_int err = clEnqueueFillBuffer(queue, ob.mem, zero, size, ob.offset * size,
                                           static_cast<size_t>(batches * m * n) * size, 0,
                                           nullptr, nullptr);
    return err == CL_SUCCESS ? nullptr
                             : op_fail(call, status_code_for(err), "clEnqueueFillBuffer failed: %s",
                                       cl_error_name(err).c_str());
  }
  ix.off[0] = xb.offset;
  ix.off[1] = yb.offset;
  ix.off[2] = ob.offset;
  // Element strides of op(x) (row, k) and op(y) (k, column).
  const int64_t* xs = x.strides + xr - 2;
  const int64_t* ys = y.strides + yr - 2;
  const int64_t xm = ax ? xs[1] : xs[0], xk = ax ? xs[0] : xs[1];
  const int64_t yk = ay ? ys[1] : ys[0], yn = ay ? ys[0] : ys[1];
  const bool row_major = xs[1] == 1 && ys[1] == 1 && xs[0] >= x.shape[xr - 1] &&
                         ys[0] >= y.shape[yr - 1];
  // float16/bfloat16 take the generated kernel, accumulating in float.
  if ((out.dtype == XDEV_DTYPE_FLOAT32 || out.dtype == XDEV_DTYPE_FLOAT64) && row_major) {
    std::vector<size_t> xo(static_cast<size_t>(batches)), yo(xo.size()), oo(xo.size());
    for (int64_t b = 0; b < batches; ++b) {
      // xdev_at of the OpenCL prelude, on the host.
      int64_t at[2] = {ix.off[0], ix.off[1]};
      for (int64_t d = ix.rank - 1, i = b; d >= 0; --d) {
        for (int t = 0; t < 2; ++t) at[t] += (i % ix.shape[d]) * ix.st[t][d];
        i /= ix.shape[d];
      }
      xo[b] = static_cast<size_t>(at[0]);
      yo[b] = static_cast<size_t>(at[1]);
      oo[b] = static_cast<size_t>(ob.offset + b * m * n);
    }
    const CLBlastTranspose ta = ax ? CLBlastTransposeYes : CLBlastTransposeNo;
    const CLBlastTranspose tb = ay ? CLBlastTransposeYes : CLBlastTransposeNo;
    const size_t lda = static_cast<size_t>(std::max<int64_t>(1, xs[0]));
    const size_t ldb = static_cast<size_t>(std::max<int64_t>(1, ys[0]));
    const bool f32 = out.dtype == XDEV_DTYPE_FLOAT32;
    const CLBlastStatusCode status =
        (f32 ? Clblast::gemm<float> : Clblast::gemm<double>)(
            ta, tb, static_cast<size_t>(m), static_cast<size_t>(n), static_cast<size_t>(k), xb.mem,
            xo, lda, yb.mem, yo, ldb, ob.mem, oo, &queue);
    if (status != CLBlastSuccess) {
      const std::string what = status > -1000 ? cl_error_name(static_cast<cl_int>(status))
                                              : "CLBlast status " + std::to_string(status);
      return op_fail(call, status == CLBlastOpenCLOutOfResources
                               ? XDEV_STATUS_OUT_OF_MEMORY : XDEV_STATUS_INTERNAL,
                     "CLBlast %sgemm%s failed: %s", f32 ? "S" : "D",
                     batches > 1 ? "Batched" : "", what.c_str());
    }
    return nullptr;
  }
  if (!is_float(out.dtype) && !is_int(out.dtype)) {
    return op_fail(call, XDEV_STATUS_UNIMPLEMENTED, "no kernel for dtype %s",
                   dtype_name(out.dtype));
  }
  ix.n = batches * m * n;
  const std::string source = gemm_source(out.dtype, call->device->info->fp64);
  return launch(call, source,
                {{sizeof(cl_mem), &xb.mem}, {sizeof(cl_mem), &yb.mem}, {sizeof(cl_mem), &ob.mem},
                 {sizeof ix, &ix}, {sizeof m, &m}, {sizeof n, &n}, {sizeof k, &k},
                 {sizeof xm, &xm}, {sizeof xk, &xk}, {sizeof yk, &yk}, {sizeof yn, &yn}},
                ix.n);
}

xdev_status_t* kernel_entry(void* context, const xdev_kernel_call_t* call) noexcept {
  const auto& row = *static_cast<const OpRow*>(context);
  if (call == nullptr || call->device == nullptr || call->stream == nullptr) {
    return g_host.fail(nullptr, XDEV_STATUS_INVALID_ARGUMENT,
                       "opencl plugin: %s: the call, its device or its stream is NULL", row.op);
  }
  if (call->output_count != 0 && call->outputs == nullptr) {
    return op_fail(call, XDEV_STATUS_INVALID_ARGUMENT, "outputs is NULL");
  }
  if (call->input_count != 0 && call->inputs == nullptr) {
    return op_fail(call, XDEV_STATUS_INVALID_ARGUMENT, "inputs is NULL");
  }
  return g_host.guard(call->device->host, row.op, [&]() -> xdev_status_t* {
    switch (row.kind) {
      case Kind::kElementwise: return run_elementwise(row, call);
      case Kind::kCast: return run_cast(call);
      case Kind::kFill: return run_fill(call);
      case Kind::kAddN: {
        static const OpRow* const add = [] {
          for (const OpRow& r : kOps) {
            if (std::strcmp(r.op, XDEV_OP_Add) == 0) return &r;
          }
          return static_cast<const OpRow*>(nullptr);
        }();
        return run_add_n(*add, call);
      }
      case Kind::kReduce:
      case Kind::kAlongAxis:
      case Kind::kArg:
      case Kind::kLayerNorm: return run_line(row, call);
      case Kind::kMatMul: return run_matmul(call, false);
      case Kind::kBatchMatMul: return run_matmul(call, true);
      case Kind::kSlice: return run_slice(call);
      case Kind::kConcat: return run_concat(call);
      case Kind::kPad: return run_pad(call);
      case Kind::kBiasAdd: return run_bias_add(row, call);
      case Kind::kGenerate: return run_generate(row, call);
      case Kind::kTile: return run_tile(call);
      case Kind::kGather: return run_gather(call);
      case Kind::kScatter: return run_scatter(call);
      case Kind::kWindow: return run_window(row, call);
      case Kind::kSoftmaxXent: return run_softmax_xent(row, call);
      case Kind::kStridedSlice: return run_strided_slice(call);
      case Kind::kBroadcast: return run_broadcast(call);
      case Kind::kOneHot: return run_one_hot(row, call);
    }
    return op_fail(call, XDEV_STATUS_INTERNAL, "unknown kind");
  });
}

}  // namespace

void register_kernels(xdev_plugin_t* p) {
  for (uint32_t type = 0; type < p->types.size(); ++type) {
    // What every device of the type supports goes to the type; the rest
    // (float64 on some devices only) to those devices (ABI 1.5).
    bool all_fp64 = true;
    for (const auto& d : p->devices) {
      if (d->type_index == type) all_fp64 = all_fp64 && d->fp64;
    }
    for (const OpRow& row : kOps) {
      if (row.needs_fp64 && !all_fp64) continue;
      const uint64_t type_mask = row.dtypes & fp64_mask(all_fp64);
      // An output dtype chosen by an attribute (Cast, Select's branches,
      // OneHot's values) is limited to what the generated code can store:
      // never float16/bfloat16, which the op table offers for these ops.
      const uint64_t out_mask = row.out == Out::kAttr ? kEvery & fp64_mask(all_fp64) : 0;
      if (type_mask != 0) {
        p->type_kernels.add(ph::kernel_info(row.op, type_mask, out_mask, kernel_entry,
                                            const_cast<OpRow*>(&row), type));
      }
      for (const auto& d : p->devices) {
        if (d->type_index != type || !d->fp64 || all_fp64) continue;
        const uint64_t extra = row.dtypes & kF64;
        if (extra != 0 || row.kind == Kind::kCast) {
          d->kernels.add(ph::kernel_info(row.op, row.kind == Kind::kCast ? kEvery : extra,
                                         row.kind == Kind::kCast ? kEvery : 0, kernel_entry,
                                         const_cast<OpRow*>(&row), type));
        }
      }
    }
  }
}

}  // namespace xdev::opencl
