// The kernels the cpu plugin registers (device type index 0, "CPU").
#include <array>
#include <iterator>
#include <utility>

#include "kernels/common.hpp"
#include "kernels/kernels.hpp"

namespace xdev::cpu {
namespace {

constexpr xdev_kernel_info_t info(const char* op, uint64_t inputs, uint64_t outputs,
                                  xdev_kernel_fn_t fn) {
  return xdev_kernel_info_t{
      .struct_size = XDEV_KERNEL_INFO_STRUCT_SIZE,
      .ext = nullptr,
      .op = op,
      .type_index = 0,
      .input_dtypes = inputs,
      .output_dtypes = outputs,
      .fn = fn,
      .kernel_context = nullptr,
  };
}

constexpr xdev_kernel_info_t kInfos[] = {
    info("MatMul", kNumeric, kNumeric, &kernel_matmul),
    info("Add", kNumeric | kBool, kNumeric | kBool, &kernel_add),
    info("Sub", kNumeric, kNumeric, &kernel_sub),
    info("Mul", kNumeric, kNumeric, &kernel_mul),
    info("Div", kNumeric, kNumeric, &kernel_div),
    info("Neg", kNumeric, kNumeric, &kernel_neg),
    info("Relu", kNumeric, kNumeric, &kernel_relu),
    info("AddN", kNumeric, kNumeric, &kernel_add_n),
    info("Cast", kAllDtypes, kAllDtypes, &kernel_cast),
    info("Sum", kNumeric, kNumeric, &kernel_sum),
    info("Mean", kNumeric, kNumeric, &kernel_mean),
    info("Copy", kAllDtypes, kAllDtypes, &kernel_copy),
    info("Fill", kAllDtypes, kAllDtypes, &kernel_fill),
    info("RandomUniform", kFloats, kFloats, &kernel_random_uniform),
    info("Abs", kNumeric, kNumeric, &kernel_abs),
    info("Sign", kNumeric, kNumeric, &kernel_sign),
    info("Square", kNumeric, kNumeric, &kernel_square),
    info("Exp", kFloats, kFloats, &kernel_exp),
    info("Expm1", kFloats, kFloats, &kernel_expm1),
    info("Log", kFloats, kFloats, &kernel_log),
    info("Log1p", kFloats, kFloats, &kernel_log1p),
    info("Sqrt", kFloats, kFloats, &kernel_sqrt),
    info("Rsqrt", kFloats, kFloats, &kernel_rsqrt),
    info("Reciprocal", kFloats, kFloats, &kernel_reciprocal),
    info("Sin", kFloats, kFloats, &kernel_sin),
    info("Cos", kFloats, kFloats, &kernel_cos),
    info("Tanh", kFloats, kFloats, &kernel_tanh),
    info("Sigmoid", kFloats, kFloats, &kernel_sigmoid),
    info("Erf", kFloats, kFloats, &kernel_erf),
    info("Softplus", kFloats, kFloats, &kernel_softplus),
    info("Floor", kFloats, kFloats, &kernel_floor),
    info("Ceil", kFloats, kFloats, &kernel_ceil),
    info("Round", kFloats, kFloats, &kernel_round),
    info("LeakyRelu", kFloats, kFloats, &kernel_leaky_relu),
    info("Gelu", kFloats, kFloats, &kernel_gelu),
    info("Maximum", kNumeric, kNumeric, &kernel_maximum),
    info("Minimum", kNumeric, kNumeric, &kernel_minimum),
    info("FloorDiv", kNumeric, kNumeric, &kernel_floor_div),
    info("FloorMod", kNumeric, kNumeric, &kernel_floor_mod),
    info("SquaredDifference", kNumeric, kNumeric, &kernel_squared_difference),
    info("Pow", kFloats, kFloats, &kernel_pow),
    info("Equal", kAllDtypes, kBool, &kernel_equal),
    info("NotEqual", kAllDtypes, kBool, &kernel_not_equal),
    info("Less", kNumeric, kBool, &kernel_less),
    info("LessEqual", kNumeric, kBool, &kernel_less_equal),
    info("Greater", kNumeric, kBool, &kernel_greater),
    info("GreaterEqual", kNumeric, kBool, &kernel_greater_equal),
    info("LogicalAnd", kBool, kBool, &kernel_logical_and),
    info("LogicalOr", kBool, kBool, &kernel_logical_or),
    info("LogicalNot", kBool, kBool, &kernel_logical_not),
    info("IsNan", kFloats, kBool, &kernel_is_nan),
    info("IsFinite", kFloats, kBool, &kernel_is_finite),
    // Looked up by the condition's dtype; x, y and the output any dtype.
    info("Select", kBool, kAllDtypes, &kernel_select),
    info("ClipByValue", kNumeric, kNumeric, &kernel_clip_by_value),
    info("Max", kNumeric, kNumeric, &kernel_max),
    info("Min", kNumeric, kNumeric, &kernel_min),
    info("Prod", kNumeric, kNumeric, &kernel_prod),
    info("Any", kBool, kBool, &kernel_any),
    info("All", kBool, kBool, &kernel_all),
    info("LogSumExp", kFloats, kFloats, &kernel_log_sum_exp),
    info("ArgMax", kNumeric, kI64, &kernel_arg_max),
    info("ArgMin", kNumeric, kI64, &kernel_arg_min),
    info("CumSum", kNumeric, kNumeric, &kernel_cum_sum),
    info("Softmax", kFloats, kFloats, &kernel_softmax),
    info("LogSoftmax", kFloats, kFloats, &kernel_log_softmax),
    info("ConcatV2", kAllDtypes, kAllDtypes, &kernel_concat_v2),
    info("Pack", kAllDtypes, kAllDtypes, &kernel_pack),
    info("Identity", kAllDtypes, kAllDtypes, &kernel_copy),
    info("Tile", kAllDtypes, kAllDtypes, &kernel_tile),
    info("PadV2", kAllDtypes, kAllDtypes, &kernel_pad_v2),
    info("GatherV2", kAllDtypes, kAllDtypes, &kernel_gather_v2),
    info("BiasAdd", kFloats, kFloats, &kernel_bias_add),
    info("SoftmaxCrossEntropyWithLogits", kFloats, kFloats,
         &kernel_softmax_cross_entropy_with_logits),
    info("LayerNorm", kFloats, kFloats, &kernel_layer_norm),
    info("Slice", kAllDtypes, kAllDtypes, &kernel_slice),
    info("StridedSlice", kAllDtypes, kAllDtypes, &kernel_strided_slice),
    // Looked up by the output dtype (no inputs).
    info("Range", kNumeric, kNumeric, &kernel_range),
    // Looked up by the indices' dtype; the output any dtype.
    info("OneHot", kI32 | kI64, kAllDtypes, &kernel_one_hot),
    info("BroadcastTo", kAllDtypes, kAllDtypes, &kernel_broadcast_to),
    info("Conv2D", kFloats, kFloats, &kernel_conv2d),
    info("Conv2DBackpropInput", kFloats, kFloats, &kernel_conv2d_backprop_input),
    info("Conv2DBackpropFilter", kFloats, kFloats, &kernel_conv2d_backprop_filter),
    info("MaxPool", kFloats, kFloats, &kernel_max_pool),
    info("AvgPool", kFloats, kFloats, &kernel_avg_pool),
    info("MaxPoolGrad", kFloats, kFloats, &kernel_max_pool_grad),
    info("AvgPoolGrad", kFloats, kFloats, &kernel_avg_pool_grad),
    info("BatchMatMulV2", kNumeric, kNumeric, &kernel_batch_mat_mul_v2),
    // Looked up by the tensor's dtype; the indices int32 or int64.
    info("TensorScatterAdd", kNumeric, kNumeric, &kernel_tensor_scatter_add),
};

template <size_t... I>
constexpr auto pointers(std::index_sequence<I...>) {
  return std::array<const xdev_kernel_info_t*, sizeof...(I)>{&kInfos[I]...};
}
constexpr auto kPointers = pointers(std::make_index_sequence<std::size(kInfos)>{});

}  // namespace

const xdev_kernel_info_t* const* kernel_infos(uint32_t* count) noexcept {
  *count = static_cast<uint32_t>(kPointers.size());
  return kPointers.data();
}

}  // namespace xdev::cpu
