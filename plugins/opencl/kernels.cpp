// The kernels of the OpenCL plugin, from tables: each op is one row (its
// OpenCL C expression per dtype class, or its line-kernel body), turned
// into source by codegen.cpp, compiled on first use (programs.cpp) and
// enqueued on the call's stream. MatMul runs CLBlast.
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

namespace xdev::opencl {
namespace {

constexpr uint64_t kF32 = XDEV_DTYPE_BIT(XDEV_DTYPE_FLOAT32);
constexpr uint64_t kF64 = XDEV_DTYPE_BIT(XDEV_DTYPE_FLOAT64);
constexpr uint64_t kI32 = XDEV_DTYPE_BIT(XDEV_DTYPE_INT32);
constexpr uint64_t kI64 = XDEV_DTYPE_BIT(XDEV_DTYPE_INT64);
constexpr uint64_t kBool = XDEV_DTYPE_BIT(XDEV_DTYPE_BOOL);
constexpr uint64_t kFloats = kF32 | kF64;
constexpr uint64_t kInts = kI32 | kI64;
constexpr uint64_t kNumbers = kFloats | kInts;
constexpr uint64_t kAll = kNumbers | kBool;

bool is_float(xdev_dtype_t t) { return t == XDEV_DTYPE_FLOAT32 || t == XDEV_DTYPE_FLOAT64; }
bool is_int(xdev_dtype_t t) { return t == XDEV_DTYPE_INT32 || t == XDEV_DTYPE_INT64; }

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
  kMatMul,       // CLBlast
  kSlice,        // Copy of a view of the input
  kConcat,       // Copy of each input into a view of the output (ConcatV2, Pack)
  kPad,          // Fill, then Copy into the interior view
  kBiasAdd,      // Add with the bias as a broadcast view
  kGenerate,     // elementwise over no input: the expression of i (Range, RandomUniform)
  kTile,         // Copy reading the input at the output's coordinates modulo its shape
  kOneHot,       // elementwise over the output, the indices broadcast along `axis`
  kLayerNorm,    // line kernel over the axes from `begin_norm_axis`, with gamma and beta
  kGather,       // GatherV2: its own kernel, which flags indices out of range
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
// type, A the accumulator, O output; X(j), Y(j), OUT, count.
#define XDEV_SUM_BODY "A acc = 0; for (long j = 0; j < count; ++j) acc += (A)X(j);"
const char* const kSumFloat = XDEV_SUM_BODY " OUT = (O)acc;";
const char* const kMeanFloat = XDEV_SUM_BODY " OUT = (O)(acc / (A)count);";
const char* const kMeanInt = XDEV_SUM_BODY " OUT = count == 0 ? (O)0 : (O)((T)acc / (T)count);";
const char* const kProd =
    "A acc = 1; for (long j = 0; j < count; ++j) acc *= (A)X(j); OUT = (O)acc;";
const char* const kMaxFloat =
    "T acc = -INFINITY; for (long j = 0; j < count; ++j) acc = xdev_max_$T(acc, X(j)); OUT = acc;";
const char* const kMinFloat =
    "T acc = INFINITY; for (long j = 0; j < count; ++j) acc = xdev_min_$T(acc, X(j)); OUT = acc;";
const char* const kMaxInt =
    "T acc = $LOWEST; for (long j = 0; j < count; ++j) acc = xdev_max_$T(acc, X(j)); OUT = acc;";
const char* const kMinInt =
    "T acc = $HIGHEST; for (long j = 0; j < count; ++j) acc = xdev_min_$T(acc, X(j)); OUT = acc;";
const char* const kAny = "uchar acc = 0; for (long j = 0; j < count; ++j) acc |= X(j) != 0; OUT = acc;";
const char* const kAll_ = "uchar acc = 1; for (long j = 0; j < count; ++j) acc &= X(j) != 0; OUT = acc;";
#define XDEV_LINE_MAX "T m = -INFINITY; for (long j = 0; j < count; ++j) m = xdev_max_$T(m, X(j));"
const char* const kLogSumExp = XDEV_LINE_MAX
    " if (isnan(m) || isinf(m)) { OUT = m; return; }"
    " A s = 0; for (long j = 0; j < count; ++j) s += (A)exp(X(j) - m); OUT = (O)((A)m + log(s));";
const char* const kSoftmax = XDEV_LINE_MAX
    " A s = 0; for (long j = 0; j < count; ++j) s += (A)exp(X(j) - m);"
    " for (long j = 0; j < count; ++j) Y(j) = (O)((A)exp(X(j) - m) / s);";
const char* const kLogSoftmax = XDEV_LINE_MAX
    " A s = 0; for (long j = 0; j < count; ++j) s += (A)exp(X(j) - m); A ls = log(s);"
    " for (long j = 0; j < count; ++j) Y(j) = (O)((A)(X(j) - m) - ls);";
// Softmax, LogSoftmax, LogSumExp: the sum of exponentials in A (double where
// the device has fp64: a float sum of 10^5 terms drifts past the tolerance).
// ArgMax/ArgMin: the first extreme; a NaN wins (the first one).
const char* const kArgMaxFloat =
    "long best = 0; T bv = X(0); for (long j = 1; j < count && !isnan(bv); ++j) {"
    " T v = X(j); if (isnan(v) || v > bv) { bv = v; best = j; } } OUT = best;";
const char* const kArgMinFloat =
    "long best = 0; T bv = X(0); for (long j = 1; j < count && !isnan(bv); ++j) {"
    " T v = X(j); if (isnan(v) || v < bv) { bv = v; best = j; } } OUT = best;";
const char* const kArgMaxInt =
    "long best = 0; T bv = X(0); for (long j = 1; j < count; ++j) {"
    " T v = X(j); if (v > bv) { bv = v; best = j; } } OUT = best;";
const char* const kArgMinInt =
    "long best = 0; T bv = X(0); for (long j = 1; j < count; ++j) {"
    " T v = X(j); if (v < bv) { bv = v; best = j; } } OUT = best;";
// CumSum: $EXCLUSIVE and $REVERSE are 0 or 1 (the attributes).
const char* const kCumSum =
    "A acc = 0; for (long k = 0; k < count; ++k) { long j = $REVERSE ? count - 1 - k : k;"
    " if ($EXCLUSIVE) { Y(j) = (O)acc; acc += (A)X(j); } else { acc += (A)X(j); Y(j) = (O)acc; } }";

// LayerNorm: mean and variance in A (double where the device has it), then
// (x - mean) * rstd * gamma + beta, rounded once (docs/ops.md).
const char* const kLayerNormBody =
    "A sum = 0; for (long j = 0; j < count; ++j) sum += (A)X(j); A mean = sum / (A)count;"
    " A sq = 0; for (long j = 0; j < count; ++j) { A d = (A)X(j) - mean; sq += d * d; }"
    " A rstd = (A)1 / sqrt(sq / (A)count + eps);"
    " for (long j = 0; j < count; ++j)"
    " Y(j) = (O)(((A)X(j) - mean) * rstd * (A)gamma[ix.off[2] + j] + (A)beta[ix.off[3] + j]);";

#define XDEV_WRAP(op) "($T)(($U)a " op " ($U)b)"
constexpr OpRow kOps[] = {
    // Data movement and creation.
    {"Copy", Kind::kElementwise, kAll, 1, Out::kSame, "a", "a", "a"},
    {"Identity", Kind::kElementwise, kAll, 1, Out::kSame, "a", "a", "a"},
    {"BroadcastTo", Kind::kBroadcast, kAll, 1, Out::kSame, nullptr, nullptr, nullptr},
    {"Cast", Kind::kCast, kAll, 1, Out::kAttr, nullptr, nullptr, nullptr},
    {"Fill", Kind::kFill, kAll, 0, Out::kSame, nullptr, nullptr, nullptr},
    // Unary math.
    {"Neg", Kind::kElementwise, kNumbers, 1, Out::kSame, "-a", "xdev_neg_$T(a)", nullptr},
    {"Relu", Kind::kElementwise, kNumbers, 1, Out::kSame, "a > 0 ? a : ($T)0", "a > 0 ? a : ($T)0", nullptr},
    {"Abs", Kind::kElementwise, kNumbers, 1, Out::kSame, "fabs(a)", "a < 0 ? xdev_neg_$T(a) : a", nullptr},
    {"Sign", Kind::kElementwise, kNumbers, 1, Out::kSame, "a > 0 ? ($T)1 : (a < 0 ? ($T)-1 : a)",
     "($T)((a > 0) - (a < 0))", nullptr},
    {"Square", Kind::kElementwise, kNumbers, 1, Out::kSame, "a * a", "($T)(($U)a * ($U)a)", nullptr},
    {"Exp", Kind::kElementwise, kFloats, 1, Out::kSame, "exp(a)", nullptr, nullptr},
    {"Expm1", Kind::kElementwise, kFloats, 1, Out::kSame, "expm1(a)", nullptr, nullptr},
    {"Log", Kind::kElementwise, kFloats, 1, Out::kSame, "log(a)", nullptr, nullptr},
    {"Log1p", Kind::kElementwise, kFloats, 1, Out::kSame, "log1p(a)", nullptr, nullptr},
    {"Sqrt", Kind::kElementwise, kFloats, 1, Out::kSame, "sqrt(a)", nullptr, nullptr},
    {"Rsqrt", Kind::kElementwise, kFloats, 1, Out::kSame, "($T)1 / sqrt(a)", nullptr, nullptr},
    {"Reciprocal", Kind::kElementwise, kFloats, 1, Out::kSame, "($T)1 / a", nullptr, nullptr},
    {"Sin", Kind::kElementwise, kFloats, 1, Out::kSame, "sin(a)", nullptr, nullptr},
    {"Cos", Kind::kElementwise, kFloats, 1, Out::kSame, "cos(a)", nullptr, nullptr},
    {"Tanh", Kind::kElementwise, kFloats, 1, Out::kSame, "tanh(a)", nullptr, nullptr},
    {"Sigmoid", Kind::kElementwise, kFloats, 1, Out::kSame, "($T)1 / (($T)1 + exp(-a))", nullptr, nullptr},
    {"Erf", Kind::kElementwise, kFloats, 1, Out::kSame, "erf(a)", nullptr, nullptr},
    {"Softplus", Kind::kElementwise, kFloats, 1, Out::kSame, "fmax(a, ($T)0) + log1p(exp(-fabs(a)))", nullptr, nullptr},
    {"Floor", Kind::kElementwise, kFloats, 1, Out::kSame, "floor(a)", nullptr, nullptr},
    {"Ceil", Kind::kElementwise, kFloats, 1, Out::kSame, "ceil(a)", nullptr, nullptr},
    {"Round", Kind::kElementwise, kFloats, 1, Out::kSame, "rint(a)", nullptr, nullptr},
    {"LeakyRelu", Kind::kElementwise, kFloats, 1, Out::kSame, "a > 0 ? a : alpha * a", nullptr, nullptr,
     "alpha", 0.2},
    {"Gelu", Kind::kElementwise, kFloats, 1, Out::kSame,
     "($T)0.5$F * a * (($T)1 + erf(a * ($T)0.70710678118654752440$F))", nullptr, nullptr, nullptr, 0,
     "approximate",
     "($T)0.5$F * a * (($T)1 + tanh(($T)0.79788456080286535588$F * (a + ($T)0.044715$F * a * a * a)))"},
    {"IsNan", Kind::kElementwise, kFloats, 1, Out::kBool, "isnan(a) ? 1 : 0", nullptr, nullptr},
    {"IsFinite", Kind::kElementwise, kFloats, 1, Out::kBool, "isfinite(a) ? 1 : 0", nullptr, nullptr},
    {"LogicalNot", Kind::kElementwise, kBool, 1, Out::kSame, nullptr, nullptr, "a == 0"},
    // Binary math (inputs broadcast by the core: stride 0).
    {"Add", Kind::kElementwise, kAll, 2, Out::kSame, "a + b", XDEV_WRAP("+"), "a | b"},
    {"Sub", Kind::kElementwise, kNumbers, 2, Out::kSame, "a - b", XDEV_WRAP("-"), nullptr},
    {"Mul", Kind::kElementwise, kNumbers, 2, Out::kSame, "a * b", XDEV_WRAP("*"), nullptr},
    {"Div", Kind::kElementwise, kNumbers, 2, Out::kSame, "a / b", "xdev_div_$T(a, b)", nullptr},
    {"Pow", Kind::kElementwise, kFloats, 2, Out::kSame, "pow(a, b)", nullptr, nullptr},
    {"Maximum", Kind::kElementwise, kNumbers, 2, Out::kSame, "xdev_max_$T(a, b)", "xdev_max_$T(a, b)", nullptr},
    {"Minimum", Kind::kElementwise, kNumbers, 2, Out::kSame, "xdev_min_$T(a, b)", "xdev_min_$T(a, b)", nullptr},
    {"FloorDiv", Kind::kElementwise, kNumbers, 2, Out::kSame, "floor(a / b)", "xdev_floordiv_$T(a, b)", nullptr},
    {"FloorMod", Kind::kElementwise, kNumbers, 2, Out::kSame, "xdev_floormod_$T(a, b)",
     "xdev_floormod_$T(a, b)", nullptr},
    {"SquaredDifference", Kind::kElementwise, kNumbers, 2, Out::kSame, "(a - b) * (a - b)",
     "($T)((($U)a - ($U)b) * (($U)a - ($U)b))", nullptr},
    // Comparisons and logic.
    {"Equal", Kind::kElementwise, kAll, 2, Out::kBool, "a == b", "a == b", "a == b"},
    {"NotEqual", Kind::kElementwise, kAll, 2, Out::kBool, "a != b", "a != b", "a != b"},
    {"Less", Kind::kElementwise, kNumbers, 2, Out::kBool, "a < b", "a < b", nullptr},
    {"LessEqual", Kind::kElementwise, kNumbers, 2, Out::kBool, "a <= b", "a <= b", nullptr},
    {"Greater", Kind::kElementwise, kNumbers, 2, Out::kBool, "a > b", "a > b", nullptr},
    {"GreaterEqual", Kind::kElementwise, kNumbers, 2, Out::kBool, "a >= b", "a >= b", nullptr},
    {"LogicalAnd", Kind::kElementwise, kBool, 2, Out::kSame, nullptr, nullptr, "a && b"},
    {"LogicalOr", Kind::kElementwise, kBool, 2, Out::kSame, nullptr, nullptr, "a || b"},
    // Select is looked up by the condition's dtype; x and y are any dtype.
    {"Select", Kind::kElementwise, kBool, 3, Out::kAttr, nullptr, nullptr, "a ? b : c"},
    {"ClipByValue", Kind::kElementwise, kNumbers, 3, Out::kSame,
     "isnan(a) ? a : fmin(fmax(a, b), c)", "xdev_min_$T(xdev_max_$T(a, b), c)", nullptr},
    {"AddN", Kind::kAddN, kNumbers, 0, Out::kSame, nullptr, nullptr, nullptr},
    // Reductions over `axes`.
    {"Sum", Kind::kReduce, kNumbers, 1, Out::kSame, kSumFloat, kSumFloat, nullptr},
    {"Mean", Kind::kReduce, kNumbers, 1, Out::kSame, kMeanFloat, kMeanInt, nullptr},
    {"Max", Kind::kReduce, kNumbers, 1, Out::kSame, kMaxFloat, kMaxInt, nullptr},
    {"Min", Kind::kReduce, kNumbers, 1, Out::kSame, kMinFloat, kMinInt, nullptr},
    {"Prod", Kind::kReduce, kNumbers, 1, Out::kSame, kProd, kProd, nullptr},
    {"Any", Kind::kReduce, kBool, 1, Out::kSame, nullptr, nullptr, kAny},
    {"All", Kind::kReduce, kBool, 1, Out::kSame, nullptr, nullptr, kAll_},
    {"LogSumExp", Kind::kReduce, kFloats, 1, Out::kSame, kLogSumExp, nullptr, nullptr},
    {"LayerNorm", Kind::kLayerNorm, kFloats, 3, Out::kSame, kLayerNormBody, nullptr, nullptr},
    // Along one axis.
    {"Softmax", Kind::kAlongAxis, kFloats, 1, Out::kSame, kSoftmax, nullptr, nullptr},
    {"LogSoftmax", Kind::kAlongAxis, kFloats, 1, Out::kSame, kLogSoftmax, nullptr, nullptr},
    {"CumSum", Kind::kAlongAxis, kNumbers, 1, Out::kSame, kCumSum, kCumSum, nullptr},
    {"ArgMax", Kind::kArg, kNumbers, 1, Out::kInt64, kArgMaxFloat, kArgMaxInt, nullptr},
    {"ArgMin", Kind::kArg, kNumbers, 1, Out::kInt64, kArgMinFloat, kArgMinInt, nullptr},
    // CLBlast.
    {"MatMul", Kind::kMatMul, kFloats, 2, Out::kSame, nullptr, nullptr, nullptr},
    // Movement: views and copies.
    {"Slice", Kind::kSlice, kAll, 1, Out::kSame, nullptr, nullptr, nullptr},
    {"ConcatV2", Kind::kConcat, kAll, 0, Out::kSame, nullptr, nullptr, nullptr},
    {"Pack", Kind::kConcat, kAll, 0, Out::kSame, nullptr, nullptr, nullptr},
    {"PadV2", Kind::kPad, kAll, 1, Out::kSame, nullptr, nullptr, nullptr},
    {"BiasAdd", Kind::kBiasAdd, kFloats, 2, Out::kSame, "a + b", nullptr, nullptr},
    {"StridedSlice", Kind::kStridedSlice, kAll, 1, Out::kSame, nullptr, nullptr, nullptr},
    {"GatherV2", Kind::kGather, kAll, 2, Out::kSame, nullptr, nullptr, nullptr},
    {"Tile", Kind::kTile, kAll, 1, Out::kSame, nullptr, nullptr, nullptr},
    // OneHot is looked up by the indices' dtype; its output is any dtype.
    {"OneHot", Kind::kOneHot, kInts, 1, Out::kAttr, nullptr, "((long)a == (i / inner) % depth) ? on : off",
     nullptr},
    // Generated: the output element's flat index i.
    {"RandomUniform", Kind::kGenerate, kFloats, 0, Out::kSame,
     "lo + range * (($T)(xdev_random_bits(seed, (ulong)i) >> $SHIFT) * $SCALE)", nullptr, nullptr},
    {"Range", Kind::kGenerate, kNumbers, 0, Out::kSame, "start + (double)i * delta",
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

int64_t elements(const xdev_tensor_t& t) {
  int64_t n = 1;
  for (int32_t d = 0; d < t.rank; ++d) n *= t.shape[d];
  return n;
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
xdev_status_t* buffer_of(const xdev_kernel_call_t* call, const xdev_tensor_t& t, int64_t count,
                         const char* what, Buffer* out) {
  const size_t size = dtype_size(t.dtype);
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
xdev_status_t* launch(const xdev_kernel_call_t* call, const std::string& source,
                      const std::vector<Arg>& args, int64_t n) {
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
    const size_t local = std::min<size_t>(kGroup, d->info->max_group);
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
// saturating, NaN 0; anything -> bool is x != 0; the rest C conversions.
std::string cast_expr(xdev_dtype_t from, xdev_dtype_t to) {
  if (to == XDEV_DTYPE_BOOL) return "a != 0";
  if (is_float(from) && is_int(to)) return std::string("convert_") + cl_type(to) + "_sat_rtz(a)";
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
// A float parameter in the precision of `dtype` (float or double).
Param float_param(const std::string& name, xdev_dtype_t dtype, double value) {
  if (dtype == XDEV_DTYPE_FLOAT32) return param("float " + name, static_cast<float>(value));
  return param("double " + name, value);
}

// `expr` for every element of `out` (any strides: the core's outputs are
// dense, views of them are not), reading `inputs` (the output's rank, any
// strides).
xdev_status_t* run_elementwise_with(const xdev_kernel_call_t* call, const std::string& expr,
                                    const xdev_tensor_t* const* inputs, uint32_t arity,
                                    const xdev_tensor_t& out,
                                    const std::vector<Param>& params = {}, bool tile = false) {
  const int64_t n = elements(out);
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
    if (xdev_status_t* s = buffer_of(call, t, n, "an input", &buffers[k])) return s;
    ix.off[k] = buffers[k].offset;
    std::copy(t.strides, t.strides + t.rank, ix.st[k]);
    dtypes.push_back(t.dtype);
  }
  if (xdev_status_t* s = buffer_of(call, out, n, "the output", &buffers[arity])) return s;
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
  const int64_t n = elements(out);
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
  return fill_with(call, *call->outputs[0], attr_number(call, "value", 0));
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
  const int64_t* begin = ints_attr(call, "begin", x.rank);
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
  const bool pack = std::strcmp(call->op, "Pack") == 0;
  const xdev_tensor_t& out = *call->outputs[0];
  const int64_t axis = static_cast<int64_t>(attr_number(call, "axis", 0));
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
  const int64_t* paddings = ints_attr(call, "paddings", 2 * x.rank);
  if (paddings == nullptr) {
    return op_fail(call, XDEV_STATUS_INVALID_ARGUMENT, "attribute 'paddings' (ints, 2 per axis) missing");
  }
  if (xdev_status_t* s = fill_with(call, out, attr_number(call, "constant_values", 0))) return s;
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
  const xdev_attr_t* format = find_attr(call, "data_format");
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
  const int64_t axis = static_cast<int64_t>(attr_number(call, "axis", -1));
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
  const std::string type = cl_type(out.dtype);
  Param on{type + " on", converted(out.dtype, attr_number(call, "on_value", 1))};
  Param off{type + " off", converted(out.dtype, attr_number(call, "off_value", 0))};
  const xdev_tensor_t* in[1] = {&spread};
  return run_elementwise_with(call, expr_for(row, indices.dtype, call), in, 1, out,
                              {param("long inner", inner), param("long depth", out.shape[axis]),
                               std::move(on), std::move(off)});
}

xdev_status_t* run_strided_slice(const xdev_kernel_call_t* call) {
  if (xdev_status_t* s = check_inputs(call, 1)) return s;
  const xdev_tensor_t& x = *call->inputs[0];
  const xdev_tensor_t& out = *call->outputs[0];
  const xdev_attr_t* begin = find_attr(call, "begin");
  const int64_t count = begin != nullptr && begin->kind == XDEV_ATTR_INTS ? begin->value.ints.count : -1;
  const int64_t* b = ints_attr(call, "begin", count);
  const int64_t* e = ints_attr(call, "end", count);
  const int64_t* st = ints_attr(call, "strides", count);
  if (count < 0 || b == nullptr || e == nullptr || st == nullptr) {
    return op_fail(call, XDEV_STATUS_INVALID_ARGUMENT,
                   "attributes 'begin', 'end', 'strides' (ints of one length) missing");
  }
  const auto mask = [call](const char* name) {
    return static_cast<int64_t>(attr_number(call, name, 0));
  };
  strided_slice_spec::Dense dense;
  strided_slice_spec::make_dense(x.rank, x.shape, b, e, st, count, mask("begin_mask"),
                                 mask("end_mask"), mask("ellipsis_mask"), mask("new_axis_mask"),
                                 mask("shrink_axis_mask"), dense);
  if (dense.error[0] != '\0') return op_fail(call, XDEV_STATUS_INVALID_ARGUMENT, "%s", dense.error);
  int64_t start = 0;
  for (int32_t d = 0; d < x.rank; ++d) start += dense.axes[d].begin * x.strides[d];
  int64_t strides[XDEV_MAX_RANK] = {};
  for (int32_t j = 0; j < dense.output_rank; ++j) {
    const int32_t src = dense.output_source[j];
    strides[j] = src >= 0 ? dense.axes[src].stride * x.strides[src] : 0;
  }
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
  const int64_t axis = static_cast<int64_t>(attr_number(call, "axis", 0));
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
  ix.n = elements(out);
  if (ix.n == 0) return nullptr;
  Buffer pb, ib, ob;
  if (xdev_status_t* s = buffer_of(call, params, elements(params), "params", &pb)) return s;
  if (xdev_status_t* s = buffer_of(call, indices, elements(indices), "indices", &ib)) return s;
  if (xdev_status_t* s = buffer_of(call, out, ix.n, "the output", &ob)) return s;
  ix.off[0] = pb.offset;
  ix.off[1] = ib.offset;
  ix.off[2] = ob.offset;
  const int64_t n = params.shape[axis];
  const int64_t m = elements(indices);
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
    stream->error_op = "GatherV2";
  }
  return s;
}

xdev_status_t* run_generate(const OpRow& row, const xdev_kernel_call_t* call) {
  if (call->output_count != 1) return check_inputs(call, 0);
  const xdev_tensor_t& out = *call->outputs[0];
  std::string expr = expr_for(row, out.dtype, call);
  std::vector<Param> params;
  if (std::strcmp(row.op, "RandomUniform") == 0) {
    const xdev_attr_t* seed = find_attr(call, "seed");
    if (seed == nullptr || seed->kind != XDEV_ATTR_INT) {
      return op_fail(call, XDEV_STATUS_INVALID_ARGUMENT, "attribute 'seed' (int) missing");
    }
    const double lo = attr_number(call, "minval", 0), hi = attr_number(call, "maxval", 1);
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
    params = {param("double start", attr_number(call, "start", 0)),
              param("double delta", attr_number(call, "delta", 1))};
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

// The line kernels: `reduced` marks the input axes each line runs along.
xdev_status_t* run_line(const OpRow& row, const xdev_kernel_call_t* call) {
  const bool layer_norm = row.kind == Kind::kLayerNorm;
  if (xdev_status_t* s = check_inputs(call, layer_norm ? 3 : 1)) return s;
  const xdev_tensor_t& x = *call->inputs[0];
  const xdev_tensor_t& out = *call->outputs[0];
  bool reduced[XDEV_MAX_RANK] = {};
  if (row.kind == Kind::kReduce) {
    const xdev_attr_t* axes = find_attr(call, "axes");
    if (axes != nullptr && axes->kind == XDEV_ATTR_INTS) {
      for (int64_t i = 0; i < axes->value.ints.count; ++i) {
        const int64_t a = axes->value.ints.values[i];
        if (a >= 0 && a < x.rank) reduced[a] = true;
      }
    }
  } else if (layer_norm) {
    const int64_t first = static_cast<int64_t>(attr_number(call, "begin_norm_axis", -1));
    if (first < 0 || first >= x.rank) {
      return op_fail(call, XDEV_STATUS_INVALID_ARGUMENT, "begin_norm_axis %" PRId64 " is not an "
                     "axis of the rank-%d input", first, x.rank);
    }
    for (int64_t d = first; d < x.rank; ++d) reduced[d] = true;
  } else {
    const int64_t a = static_cast<int64_t>(attr_number(call, "axis", -1));
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
  if (xdev_status_t* s = buffer_of(call, out, elements(out), "the output", &out_b)) return s;
  ix.off[0] = in_b.offset;
  ix.off[1] = out_b.offset;
  const char* body = expr_for(row, x.dtype, call);
  if (body == nullptr) {
    return op_fail(call, XDEV_STATUS_UNIMPLEMENTED, "no kernel for dtype %s", dtype_name(x.dtype));
  }
  const bool fp64 = call->device->info->fp64;
  // Accumulators: integers wrap in their unsigned type; float sums and
  // products are computed in double where the device has it.
  std::string acc = cl_type(x.dtype);
  if (is_int(x.dtype)) acc = x.dtype == XDEV_DTYPE_INT32 ? "uint" : "ulong";
  if (is_float(x.dtype) && fp64) acc = "double";
  std::string text = body;
  const auto replace = [&text](const std::string& from, const std::string& to) {
    for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) {
      text.replace(at, from.size(), to);
    }
  };
  replace("$T", cl_type(x.dtype));
  replace("$LOWEST", x.dtype == XDEV_DTYPE_INT32 ? "INT_MIN" : "LONG_MIN");
  replace("$HIGHEST", x.dtype == XDEV_DTYPE_INT32 ? "INT_MAX" : "LONG_MAX");
  replace("$EXCLUSIVE", attr_bool(call, "exclusive") ? "1" : "0");
  replace("$REVERSE", attr_bool(call, "reverse") ? "1" : "0");
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
    eps = acc == "double" ? param("double eps", attr_number(call, "epsilon", 0.001))
                          : param("float eps", static_cast<float>(attr_number(call, "epsilon", 0.001)));
    extra = ", __global const T* gamma, __global const T* beta, " + eps.decl;
    args.push_back({sizeof(cl_mem), &gamma_b.mem});
    args.push_back({sizeof(cl_mem), &beta_b.mem});
    args.push_back({eps.bytes.size(), eps.bytes.data()});
  }
  const std::string source = line_source(text, x.dtype, out.dtype, acc.c_str(), fp64, extra);
  return launch(call, source, args, ix.n);
}

xdev_status_t* run_matmul(const xdev_kernel_call_t* call) {
  if (xdev_status_t* s = check_inputs(call, 2)) return s;
  const xdev_tensor_t& a = *call->inputs[0];
  const xdev_tensor_t& b = *call->inputs[1];
  const xdev_tensor_t& c = *call->outputs[0];
  if (a.rank != 2 || b.rank != 2 || c.rank != 2) {
    return op_fail(call, XDEV_STATUS_INVALID_ARGUMENT, "ranks %d, %d -> %d; MatMul takes 2", a.rank,
                   b.rank, c.rank);
  }
  const bool ta = attr_bool(call, "transpose_a");
  const bool tb = attr_bool(call, "transpose_b");
  const size_t m = static_cast<size_t>(c.shape[0]);
  const size_t n = static_cast<size_t>(c.shape[1]);
  const size_t k = static_cast<size_t>(ta ? a.shape[0] : a.shape[1]);
  Buffer ab, bb, cb;
  if (xdev_status_t* s = buffer_of(call, a, elements(a), "a", &ab)) return s;
  if (xdev_status_t* s = buffer_of(call, b, elements(b), "b", &bb)) return s;
  if (xdev_status_t* s = buffer_of(call, c, elements(c), "the output", &cb)) return s;
  if (m == 0 || n == 0) return nullptr;
  cl_command_queue queue = call->stream->queue;
  const size_t size = dtype_size(c.dtype);
  if (k == 0) {
    const unsigned char zero[8] = {};
    const cl_int err = clEnqueueFillBuffer(queue, cb.mem, zero, size, cb.offset * size,
                                           m * n * size, 0, nullptr, nullptr);
    return err == CL_SUCCESS ? nullptr
                             : op_fail(call, status_code_for(err), "clEnqueueFillBuffer failed: %s",
                                       cl_error_name(err).c_str());
  }
  const size_t lda = std::max<size_t>(1, static_cast<size_t>(a.shape[1]));
  const size_t ldb = std::max<size_t>(1, static_cast<size_t>(b.shape[1]));
  const CLBlastTranspose ta_ = ta ? CLBlastTransposeYes : CLBlastTransposeNo;
  const CLBlastTranspose tb_ = tb ? CLBlastTransposeYes : CLBlastTransposeNo;
  CLBlastStatusCode status;
  if (c.dtype == XDEV_DTYPE_FLOAT32) {
    status = CLBlastSgemm(CLBlastLayoutRowMajor, ta_, tb_, m, n, k, 1.0f, ab.mem, ab.offset, lda,
                          bb.mem, bb.offset, ldb, 0.0f, cb.mem, cb.offset, n, &queue, nullptr);
  } else if (c.dtype == XDEV_DTYPE_FLOAT64) {
    status = CLBlastDgemm(CLBlastLayoutRowMajor, ta_, tb_, m, n, k, 1.0, ab.mem, ab.offset, lda,
                          bb.mem, bb.offset, ldb, 0.0, cb.mem, cb.offset, n, &queue, nullptr);
  } else {
    return op_fail(call, XDEV_STATUS_UNIMPLEMENTED, "no kernel for dtype %s", dtype_name(c.dtype));
  }
  if (status != CLBlastSuccess) {
    const std::string what = status > -1000 ? cl_error_name(static_cast<cl_int>(status))
                                            : "CLBlast status " + std::to_string(status);
    return op_fail(call, status == CLBlastOpenCLOutOfResources
                             ? XDEV_STATUS_OUT_OF_MEMORY : XDEV_STATUS_INTERNAL,
                   "CLBlast %sgemm failed: %s", c.dtype == XDEV_DTYPE_FLOAT32 ? "S" : "D",
                   what.c_str());
  }
  return nullptr;
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
            if (std::strcmp(r.op, "Add") == 0) return &r;
          }
          return static_cast<const OpRow*>(nullptr);
        }();
        return run_add_n(*add, call);
      }
      case Kind::kReduce:
      case Kind::kAlongAxis:
      case Kind::kArg:
      case Kind::kLayerNorm: return run_line(row, call);
      case Kind::kMatMul: return run_matmul(call);
      case Kind::kSlice: return run_slice(call);
      case Kind::kConcat: return run_concat(call);
      case Kind::kPad: return run_pad(call);
      case Kind::kBiasAdd: return run_bias_add(row, call);
      case Kind::kGenerate: return run_generate(row, call);
      case Kind::kTile: return run_tile(call);
      case Kind::kGather: return run_gather(call);
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
      const uint64_t out_mask = row.kind == Kind::kCast ? kAll & fp64_mask(all_fp64) : 0;
      if (type_mask != 0) {
        p->type_kernels.add(ph::kernel_info(row.op, type_mask, out_mask, kernel_entry,
                                            const_cast<OpRow*>(&row), type));
      }
      for (const auto& d : p->devices) {
        if (d->type_index != type || !d->fp64 || all_fp64) continue;
        const uint64_t extra = row.dtypes & kF64;
        if (extra != 0 || row.kind == Kind::kCast) {
          d->kernels.add(ph::kernel_info(row.op, row.kind == Kind::kCast ? kAll : extra,
                                         row.kind == Kind::kCast ? kAll : 0, kernel_entry,
                                         const_cast<OpRow*>(&row), type));
        }
      }
    }
  }
}

}  // namespace xdev::opencl
