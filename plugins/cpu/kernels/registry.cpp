// The kernels the cpu plugin registers (device type index 0, "CPU"). Float
// ops take float16 and bfloat16 through widened() (widen.hpp); Cast, Fill,
// Select and the data movement ops take every dtype.
#include <array>
#include <iterator>
#include <utility>

#include "kernels/common.hpp"
#include "kernels/kernels.hpp"
#include "kernels/widen.hpp"

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
    info("MatMul", kNumeric | kHalves, kNumeric | kHalves, &widened<kernel_matmul>),
    info("Add", kNumeric | kBool | kHalves, kNumeric | kBool | kHalves, &widened<kernel_add>),
    info("Sub", kNumeric | kHalves, kNumeric | kHalves, &widened<kernel_sub>),
    info("Mul", kNumeric | kHalves, kNumeric | kHalves, &widened<kernel_mul>),
    info("Div", kNumeric | kHalves, kNumeric | kHalves, &widened<kernel_div>),
    info("Neg", kNumeric | kHalves, kNumeric | kHalves, &widened<kernel_neg>),
    info("Relu", kNumeric | kHalves, kNumeric | kHalves, &widened<kernel_relu>),
    info("AddN", kNumeric | kHalves, kNumeric | kHalves, &widened<kernel_add_n>),
    info("Cast", kEveryDtype, kEveryDtype, &kernel_cast),
    info("Sum", kNumeric | kHalves, kNumeric | kHalves, &widened<kernel_sum>),
    info("Mean", kNumeric | kHalves, kNumeric | kHalves, &widened<kernel_mean>),
    info("Copy", kEveryDtype, kEveryDtype, &kernel_copy),
    info("Fill", kEveryDtype, kEveryDtype, &kernel_fill),
    info("RandomUniform", kFloats, kFloats, &kernel_random_uniform),
    info("Abs", kNumeric | kHalves, kNumeric | kHalves, &widened<kernel_abs>),
    info("Sign", kNumeric | kHalves, kNumeric | kHalves, &widened<kernel_sign>),
    info("Square", kNumeric | kHalves, kNumeric | kHalves, &widened<kernel_square>),
    info("Exp", kFloats | kHalves, kFloats | kHalves, &widened<kernel_exp>),
    info("Expm1", kFloats | kHalves, kFloats | kHalves, &widened<kernel_expm1>),
    info("Log", kFloats | kHalves, kFloats | kHalves, &widened<kernel_log>),
    info("Log1p", kFloats | kHalves, kFloats | kHalves, &widened<kernel_log1p>),
    info("Sqrt", kFloats | kHalves, kFloats | kHalves, &widened<kernel_sqrt>),
    info("Rsqrt", kFloats | kHalves, kFloats | kHalves, &widened<kernel_rsqrt>),
    info("Reciprocal", kFloats | kHalves, kFloats | kHalves, &widened<kernel_reciprocal>),
    info("Sin", kFloats | kHalves, kFloats | kHalves, &widened<kernel_sin>),
    info("Cos", kFloats | kHalves, kFloats | kHalves, &widened<kernel_cos>),
    info("Tanh", kFloats | kHalves, kFloats | kHalves, &widened<kernel_tanh>),
    info("Sigmoid", kFloats | kHalves, kFloats | kHalves, &widened<kernel_sigmoid>),
    info("Erf", kFloats | kHalves, kFloats | kHalves, &widened<kernel_erf>),
    info("Softplus", kFloats | kHalves, kFloats | kHalves, &widened<kernel_softplus>),
    info("Floor", kFloats | kHalves, kFloats | kHalves, &widened<kernel_floor>),
    info("Ceil", kFloats | kHalves, kFloats | kHalves, &widened<kernel_ceil>),
    info("Round", kFloats | kHalves, kFloats | kHalves, &widened<kernel_round>),
    info("LeakyRelu", kFloats | kHalves, kFloats | kHalves, &widened<kernel_leaky_relu>),
    info("Gelu", kFloats | kHalves, kFloats | kHalves, &widened<kernel_gelu>),
    info("Maximum", kNumeric | kHalves, kNumeric | kHalves, &widened<kernel_maximum>),
    info("Minimum", kNumeric | kHalves, kNumeric | kHalves, &widened<kernel_minimum>),
    info("FloorDiv", kNumeric | kHalves, kNumeric | kHalves, &widened<kernel_floor_div>),
    info("FloorMod", kNumeric | kHalves, kNumeric | kHalves, &widened<kernel_floor_mod>),
    info("SquaredDifference", kNumeric | kHalves, kNumeric | kHalves,
         &widened<kernel_squared_difference>),
    info("Pow", kFloats | kHalves, kFloats | kHalves, &widened<kernel_pow>),
    info("Equal", kAllDtypes | kHalves, kBool, &widened<kernel_equal>),
    info("NotEqual", kAllDtypes | kHalves, kBool, &widened<kernel_not_equal>),
    info("Less", kNumeric | kHalves, kBool, &widened<kernel_less>),
    info("LessEqual", kNumeric | kHalves, kBool, &widened<kernel_less_equal>),
    info("Greater", kNumeric | kHalves, kBool, &widened<kernel_greater>),
    info("GreaterEqual", kNumeric | kHalves, kBool, &widened<kernel_greater_equal>),
    info("LogicalAnd", kBool, kBool, &kernel_logical_and),
    info("LogicalOr", kBool, kBool, &kernel_logical_or),
    info("LogicalNot", kBool, kBool, &kernel_logical_not),
    info("IsNan", kFloats | kHalves, kBool, &widened<kernel_is_nan>),
    info("IsFinite", kFloats | kHalves, kBool, &widened<kernel_is_finite>),
    // Looked up by the condition's dtype; x, y and the output any dtype.
    info("Select", kBool, kEveryDtype, &kernel_select),
    info("ClipByValue", kNumeric | kHalves, kNumeric | kHalves, &widened<kernel_clip_by_value>),
    info("Max", kNumeric | kHalves, kNumeric | kHalves, &widened<kernel_max>),
    info("Min", kNumeric | kHalves, kNumeric | kHalves, &widened<kernel_min>),
    info("Prod", kNumeric | kHalves, kNumeric | kHalves, &widened<kernel_prod>),
    info("Any", kBool, kBool, &kernel_any),
    info("All", kBool, kBool, &kernel_all),
    info("LogSumExp", kFloats | kHalves, kFloats | kHalves, &widened<kernel_log_sum_exp>),
    info("ArgMax", kNumeric | kHalves, kI64, &widened<kernel_arg_max>),
    info("ArgMin", kNumeric | kHalves, kI64, &widened<kernel_arg_min>),
    info("CumSum", kNumeric | kHalves, kNumeric | kHalves, &widened<kernel_cum_sum>),
    info("Softmax", kFloats | kHalves, kFloats | kHalves, &widened<kernel_softmax>),
    info("LogSoftmax", kFloats | kHalves, kFloats | kHalves, &widened<kernel_log_softmax>),
    info("ConcatV2", kEveryDtype, kEveryDtype, &kernel_concat_v2),
    info("Pack", kEveryDtype, kEveryDtype, &kernel_pack),
    info("Identity", kEveryDtype, kEveryDtype, &kernel_copy),
    info("Tile", kEveryDtype, kEveryDtype, &kernel_tile),
    info("PadV2", kEveryDtype, kEveryDtype, &kernel_pad_v2),
    info("GatherV2", kEveryDtype, kEveryDtype, &kernel_gather_v2),
    info("BiasAdd", kFloats | kHalves, kFloats | kHalves, &widened<kernel_bias_add>),
    info("SoftmaxCrossEntropyWithLogits", kFloats | kHalves, kFloats | kHalves,
         &widened<kernel_softmax_cross_entropy_with_logits>),
    info("LayerNorm", kFloats | kHalves, kFloats | kHalves, &widened<kernel_layer_norm>),
    info("Slice", kEveryDtype, kEveryDtype, &kernel_slice),
    info("StridedSlice", kEveryDtype, kEveryDtype, &kernel_strided_slice),
    // Looked up by the output dtype (no inputs).
    info("Range", kNumeric, kNumeric, &kernel_range),
    // Looked up by the indices' dtype; the output any dtype.
    info("OneHot", kI32 | kI64, kEveryDtype, &kernel_one_hot),
    info("BroadcastTo", kEveryDtype, kEveryDtype, &kernel_broadcast_to),
    info("Conv2D", kFloats | kHalves, kFloats | kHalves, &widened<kernel_conv2d>),
    info("Conv2DBackpropInput", kFloats | kHalves, kFloats | kHalves,
         &widened<kernel_conv2d_backprop_input>),
    info("Conv2DBackpropFilter", kFloats | kHalves, kFloats | kHalves,
         &widened<kernel_conv2d_backprop_filter>),
    info("MaxPool", kFloats | kHalves, kFloats | kHalves, &widened<kernel_max_pool>),
    info("AvgPool", kFloats | kHalves, kFloats | kHalves, &widened<kernel_avg_pool>),
    info("MaxPoolGrad", kFloats | kHalves, kFloats | kHalves, &widened<kernel_max_pool_grad>),
    info("AvgPoolGrad", kFloats | kHalves, kFloats | kHalves, &widened<kernel_avg_pool_grad>),
    info("BatchMatMulV2", kNumeric | kHalves, kNumeric | kHalves,
         &widened<kernel_batch_mat_mul_v2>),
    // Looked up by the tensor's dtype; the indices int32 or int64.
    info("TensorScatterAdd", kNumeric | kHalves, kNumeric | kHalves,
         &widened<kernel_tensor_scatter_add>),
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
