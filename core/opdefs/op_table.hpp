// The op table: every op the core defines, written once (op_table.cpp).
//
// An entry (OpDef) says what the op takes and gives: inputs and the dtypes
// each accepts, attributes (kind, default, range), the rule for the output
// dtypes, the shape function that checks argument combinations and computes
// output shapes, and the layout the kernel needs. Everything else derives
// from it: the OpId enum and name lookup, the SDK's argument checks and
// shape inference (check_call, used by run_op.cpp), the conformance suite's
// kernel tests (tests/conformance/suite/tests_kernels.cpp), the op table of
// docs/ops.md (tools/op-table), and the completeness check of the host
// references (tests/conformance/reference).
//
// This header and op_table.cpp need only the SDK headers and
// opdefs/shape.cpp, so tools that talk to plugins without libxdev compile
// them in. docs/adding-an-op.md is the recipe for a new op.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <xdev/dtype.hpp>
#include <xdev/ops.hpp>
#include <xdev/plugin.h>
#include <xdev/tensor.hpp>

namespace xdev::detail {

// Every op, once: X(Name), where Name is the op's ABI name ("MatMul"). The
// enum, the name list and the array of definitions are all expanded from
// this list, so none of them can fall out of step with another. A new op is
// a line here plus its OpDef in op_table.cpp.
#define XDEV_OPS(X) \
  X(MatMul)         \
  X(Add)            \
  X(Sub)            \
  X(Mul)            \
  X(Div)            \
  X(Neg)            \
  X(Relu)           \
  X(AddN)           \
  X(Cast)           \
  X(Sum)            \
  X(Mean)           \
  X(Copy)           \
  X(Fill)           \
  X(RandomUniform)  \
  X(Abs) \
  X(Sign) \
  X(Square) \
  X(Exp) \
  X(Expm1) \
  X(Log) \
  X(Log1p) \
  X(Sqrt) \
  X(Rsqrt) \
  X(Reciprocal) \
  X(Sin) \
  X(Cos) \
  X(Tanh) \
  X(Sigmoid) \
  X(Erf) \
  X(Softplus) \
  X(Floor) \
  X(Ceil) \
  X(Round) \
  X(LeakyRelu) \
  X(Gelu) \
  X(Pow) \
  X(Maximum) \
  X(Minimum) \
  X(FloorDiv) \
  X(FloorMod) \
  X(SquaredDifference) \
  X(Equal) \
  X(NotEqual) \
  X(Less) \
  X(LessEqual) \
  X(Greater) \
  X(GreaterEqual) \
  X(LogicalAnd) \
  X(LogicalOr) \
  X(LogicalNot) \
  X(IsNan) \
  X(IsFinite) \
  X(Select) \
  X(ClipByValue) \
  X(Max) \
  X(Min) \
  X(Prod) \
  X(Any) \
  X(All) \
  X(LogSumExp) \
  X(ArgMax) \
  X(ArgMin) \
  X(CumSum)         \
  X(Softmax)        \
  X(LogSoftmax)     \
  X(ConcatV2)       \
  X(Pack)           \
  X(Identity)       \
  X(Tile)           \
  X(PadV2)          \
  X(GatherV2)       \
  X(BiasAdd)        \
  X(SoftmaxCrossEntropyWithLogits) \
  X(LayerNorm)      \
  X(Slice)          \
  X(StridedSlice)   \
  X(Range)          \
  X(OneHot)         \
  X(BroadcastTo)    \
  X(Conv2D)         \
  X(Conv2DBackpropInput) \
  X(Conv2DBackpropFilter) \
  X(MaxPool)        \
  X(AvgPool)        \
  X(MaxPoolGrad)    \
  X(AvgPoolGrad)    \
  X(BatchMatMulV2)  \
  X(TensorScatterAdd)

enum class OpId : uint8_t {
#define XDEV_OP_ENUMERATOR(name) k##name,
  XDEV_OPS(XDEV_OP_ENUMERATOR)
#undef XDEV_OP_ENUMERATOR
  kCount
};
inline constexpr int kOpCount = static_cast<int>(OpId::kCount);

// Capacities of one call: attributes of one op, outputs of one op. The table
// is checked against them at compile time (op_table.cpp).
inline constexpr size_t kMaxOpAttrs = 8;
inline constexpr size_t kMaxOpOutputs = 4;

// --- attribute names ---------------------------------------------------------
//
// The names of the attributes the table defines, one object each: the
// entries, the shape functions and the SDK wrappers all use these, so a
// lookup matches by address before it compares characters (and a typo does
// not compile).
namespace attr {
inline constexpr char kTransposeA[] = "transpose_a";
inline constexpr char kTransposeB[] = "transpose_b";
inline constexpr char kAxes[] = "axes";
inline constexpr char kKeepdims[] = "keepdims";
inline constexpr char kDtype[] = "dtype";
inline constexpr char kValue[] = "value";
inline constexpr char kShape[] = "shape";
inline constexpr char kSeed[] = "seed";
inline constexpr char kMinval[] = "minval";
inline constexpr char kMaxval[] = "maxval";
inline constexpr char kAlpha[] = "alpha";
inline constexpr char kApproximate[] = "approximate";
inline constexpr char kAxis[] = "axis";
inline constexpr char kExclusive[] = "exclusive";
inline constexpr char kReverse[] = "reverse";
inline constexpr char kMultiples[] = "multiples";
inline constexpr char kPaddings[] = "paddings";
inline constexpr char kConstantValues[] = "constant_values";
inline constexpr char kDataFormat[] = "data_format";
inline constexpr char kBeginNormAxis[] = "begin_norm_axis";
inline constexpr char kEpsilon[] = "epsilon";
inline constexpr char kBegin[] = "begin";
inline constexpr char kSize[] = "size";
inline constexpr char kEnd[] = "end";
inline constexpr char kStrides[] = "strides";
inline constexpr char kBeginMask[] = "begin_mask";
inline constexpr char kEndMask[] = "end_mask";
inline constexpr char kEllipsisMask[] = "ellipsis_mask";
inline constexpr char kNewAxisMask[] = "new_axis_mask";
inline constexpr char kShrinkAxisMask[] = "shrink_axis_mask";
inline constexpr char kStart[] = "start";
inline constexpr char kLimit[] = "limit";
inline constexpr char kDelta[] = "delta";
inline constexpr char kDepth[] = "depth";
inline constexpr char kOnValue[] = "on_value";
inline constexpr char kOffValue[] = "off_value";
inline constexpr char kDilations[] = "dilations";
inline constexpr char kPadding[] = "padding";
inline constexpr char kKsize[] = "ksize";
inline constexpr char kInputSizes[] = "input_sizes";
inline constexpr char kFilterSizes[] = "filter_sizes";
inline constexpr char kOrigInputShape[] = "orig_input_shape";
inline constexpr char kAdjX[] = "adj_x";
inline constexpr char kAdjY[] = "adj_y";
}  // namespace attr

// --- dtype sets ------------------------------------------------------------

constexpr uint64_t dtype_bit(DType dtype) noexcept {
  return XDEV_DTYPE_BIT(static_cast<unsigned>(dtype));
}
// float16 and bfloat16 are float dtypes: every float op takes them (kernels
// compute in float32 and round once, docs/ops.md "Dtypes").
inline constexpr uint64_t kHalfDTypes = dtype_bit(DType::kFloat16) | dtype_bit(DType::kBFloat16);
inline constexpr uint64_t kFloatDTypes =
    dtype_bit(DType::kFloat32) | dtype_bit(DType::kFloat64) | kHalfDTypes;
inline constexpr uint64_t kIntDTypes = dtype_bit(DType::kInt32) | dtype_bit(DType::kInt64);
inline constexpr uint64_t kNumberDTypes = kFloatDTypes | kIntDTypes;
inline constexpr uint64_t kBoolDTypes = dtype_bit(DType::kBool);
// Numbers and bool: the dtypes with arithmetic or logic (Add, Equal, NotEqual).
inline constexpr uint64_t kValueDTypes = kNumberDTypes | kBoolDTypes;
// The 8-bit integers: arithmetic, comparisons and reductions take them, as
// TensorFlow's CPU kernels do (Neg, Abs and Sign int8 only).
inline constexpr uint64_t kByteDTypes = dtype_bit(DType::kUInt8) | dtype_bit(DType::kInt8);
inline constexpr uint64_t kArithmeticDTypes = kNumberDTypes | kByteDTypes;
inline constexpr uint64_t kSignedDTypes = kNumberDTypes | dtype_bit(DType::kInt8);
// Every dtype (uint8 and int8 too): Cast, Fill and data movement.
inline constexpr uint64_t kAllDTypes = kValueDTypes | kByteDTypes;
// The dtypes of a set, in enum order.
std::string dtype_set_text(uint64_t dtypes);
// "bool", "int", "float", "dtype", "ints", "string" ("kind 9" for a value
// that is no kind): an attribute kind as errors and docs/ops.md name it.
std::string attr_kind_name(xdev_attr_kind_t kind);

// --- the definition of an op -----------------------------------------------

struct OpDef;
class AttrValues;

struct InputDef {
  const char* name;           // "x"; a variadic input is numbered: x0, x1, ...
  uint64_t dtypes;            // the dtypes it accepts
  int same_dtype_as = -1;     // index of an earlier input whose dtype it must have
};

// Where an output's dtype comes from.
enum class DTypeRule : uint8_t {
  kInput,  // the dtype of input `input`
  kAttr,   // the value of the dtype attribute `attr` (Cast, Fill)
  kFixed,  // always `fixed` (comparisons: bool)
};

struct OutputDef {
  const char* name;
  DTypeRule dtype_rule = DTypeRule::kInput;
  int input = 0;
  const char* attr = nullptr;
  DType fixed = DType::kBool;
};

// Kinds are the ABI's (XDEV_ATTR_BOOL, ...). A string attribute is one of
// its `choices` (BiasAdd's data_format: "NHWC" or "NCHW").
struct AttrDef {
  const char* name;
  xdev_attr_kind_t kind;
  const char* doc;               // one line for docs/ops.md
  bool required = true;          // else the default below is used
  bool default_bool = false;
  int64_t default_int = 0;
  double default_float = 0.0;
  DType default_dtype = DType::kFloat32;
  // kInt, and each element of kInts: the range allowed (inclusive).
  int64_t min = INT64_MIN;
  int64_t max = INT64_MAX;
  bool finite = false;           // kFloat: NaN and infinities are refused
  uint64_t dtypes = kAllDTypes;  // kDType: the values allowed
  // kString: the values allowed (the first is the default when not required).
  std::span<const char* const> choices = {};
  // false: only the core uses it (a creation op's shape and dtype); the
  // kernel gets it through the output tensor instead.
  bool to_kernel = true;
};

// The input shapes an op takes, for the conformance suite's case generator
// and the docs: ops of one class share their generator and shape function.
enum class ShapeClass : uint8_t {
  kSame,       // every input and output has the shape of input 0 (unary, AddN, Cast)
  kBroadcast,  // NumPy broadcasting of the inputs (binary elementwise)
  kReduce,     // input 0 reduced over `axes`, `keepdims`
  kMatMul,     // [M, K] x [K, N] with transposes
  kFromAttr,   // no inputs: the shape attribute (Fill, RandomUniform)
  kAxis,       // input 0 along one `axis` (ArgMax, ArgMin drop it; CumSum keeps it)
  kConcat,     // inputs of one rank joined along an existing `axis` (ConcatV2)
  kStack,      // inputs of one shape stacked along a new `axis` (Pack)
  kTile,       // input 0 repeated `multiples` times along each axis (Tile)
  kPad,        // input 0 with `paddings` before and after each axis (PadV2)
  kGather,     // slices of input 0 along `axis` picked by the indices of input 1 (GatherV2)
  kBiasAdd,    // input 0 of rank >= 2 plus input 1 (rank 1) along its channel axis
  kXent,       // [batch, classes] features and labels (rows or columns of 1 broadcast)
  kLayerNorm,  // input 0 normalised over its axes from `begin_norm_axis`; gamma, beta of those
  kSlice,      // a window of input 0: `begin` and `size` per axis (Slice)
  kStridedSlice,  // input 0 sliced by begin/end/strides and masks (StridedSlice)
  kRange,      // no inputs: start, limit, delta give the length (Range)
  kOneHot,     // indices (input 0) with an axis of `depth` inserted at `axis` (OneHot)
  kBroadcastTo,  // input 0 broadcast to the `shape` attribute (BroadcastTo)
  kConv2D,     // 4-d input (NHWC/NCHW) and [KH, KW, Cin, Cout] filter, strides, dilations, padding
  kConv2DBackpropInput,   // filter and out_backprop -> the input of `input_sizes`
  kConv2DBackpropFilter,  // input and out_backprop -> the filter of `filter_sizes`
  kPool,       // 4-d input pooled over `ksize` windows (MaxPool, AvgPool)
  kMaxPoolGrad,  // orig_input, orig_output, grad of MaxPool -> the gradient of orig_input
  kAvgPoolGrad,  // grad of AvgPool -> the gradient of an input of `orig_input_shape`
  kBatchMatMul,  // [..., M, K] x [..., K, N] with adjoints, batch axes broadcast (BatchMatMulV2)
  kScatter,    // tensor, indices [..., D], updates indices[:-1] + tensor[D:] (TensorScatterAdd)
};

// Output shapes from input shapes and attributes. Throws
// xdev::Error(kInvalidArgument) naming the op and the values at fault when
// the combination is not allowed; writes one shape per output.
using ShapeFn = void (*)(const OpDef& def, std::span<const Shape* const> inputs,
                         const AttrValues& attrs, std::span<Shape> outputs);

struct OpDef {
  OpId id;
  const char* name;     // the ABI name: what plugins register and kernels receive
  const char* summary;  // what it computes, one line for docs/ops.md
  std::span<const InputDef> inputs = {};
  bool variadic = false;  // the last input repeats: at least min_inputs in all
  int min_inputs = 0;
  std::span<const AttrDef> attrs = {};
  std::span<const OutputDef> outputs = {};
  ShapeClass shape_class;
  ShapeFn shape;
  const char* output_doc;        // the output shape, for docs/ops.md
  bool broadcast_inputs = false;  // the core passes inputs as stride-0 views of the output shape
  bool contiguous_inputs = false; // the kernel needs row-major inputs

  // The input `i` of a call describes (variadic inputs repeat the last).
  const InputDef& input(size_t i) const {
    return inputs[i < inputs.size() ? i : inputs.size() - 1];
  }
  // The attribute `attr_name`, or nullptr; index_of gives its position.
  const AttrDef* attr(const char* attr_name) const;
  int index_of(const char* attr_name) const;
};

// Every definition, indexed by OpId.
std::span<const OpDef> op_defs() noexcept;
const OpDef& op_def(OpId op) noexcept;
// The ABI name: "MatMul", "Add", ...
std::string_view op_name(OpId op) noexcept;
std::optional<OpId> op_from_name(std::string_view name) noexcept;
// The dtype pairs kernels of `def` are looked up by (KernelTable::find):
// input 0's dtype (no inputs: output 0's) and output 0's, every pair the
// table defines, by input then output in enum order.
std::vector<KernelDTypes> kernel_dtypes(const OpDef& def);

// --- checking one call --------------------------------------------------------

// The attributes of one call as the shape function sees them: the given
// ones, else the def's defaults. Made by check_call once it accepted them.
class AttrValues {
 public:
  // `given[j]`: the value given for def.attrs[j], or nullptr.
  AttrValues(const OpDef& def, const xdev_attr_t* const* given) : def_(def), given_(given) {}
  bool get_bool(const char* name) const;
  int64_t get_int(const char* name) const;
  double get_float(const char* name) const;
  DType get_dtype(const char* name) const;
  std::span<const int64_t> get_ints(const char* name) const;
  std::string_view get_string(const char* name) const;

 private:
  // The def's attribute `name` of `kind` and its given value (or nullptr).
  const AttrDef& find(const char* name, xdev_attr_kind_t kind, const xdev_attr_t*& given) const;
  const OpDef& def_;
  const xdev_attr_t* const* given_;
};

// What the caller knows about one input.
struct InputInfo {
  DType dtype;
  const Shape* shape;
};

// The outcome of check_call: what the kernel gets and what it must produce.
struct CheckedCall {
  // The attributes the kernel receives: every `to_kernel` attribute of the
  // def, in the def's order, defaults filled in. Names point into the table.
  std::array<xdev_attr_t, kMaxOpAttrs> kernel_attrs;
  uint32_t kernel_attr_count = 0;
  DType kernel_input_dtype;  // what kernels are looked up by (input 0, else output 0)
  std::array<DType, kMaxOpOutputs> output_dtypes;
  std::array<Shape, kMaxOpOutputs> output_shapes;
  // Bytes of each output, checked against overflow and kMaxTensorBytes.
  std::array<uint64_t, kMaxOpOutputs> output_bytes;
  size_t output_count = 0;
};

// Checks one call of `def` against the table: the number of inputs, each
// input's dtype, every attribute (known, of its kind, in range; missing
// required ones), then the shape function and the size of every output.
// Throws xdev::Error(kInvalidArgument) naming the op and the value at fault.
void check_call(const OpDef& def, std::span<const InputInfo> inputs,
                std::span<const xdev_attr_t> attrs, CheckedCall& out);

// "Add: " + why, as xdev::Error(kInvalidArgument).
[[noreturn]] void throw_invalid(const OpDef& def, const std::string& why);

}  // namespace xdev::detail
