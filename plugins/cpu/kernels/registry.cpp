// The kernels the cpu plugin registers (device type index 0, "CPU"). Float
// ops take float16 and bfloat16 through widened() (widen.hpp); Cast, Fill,
// Select and the data movement ops take every dtype.
#include <xdev/op_names.h>
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

// A float op (widen.hpp): the kernel F behind widened(), registered for
// float16 and bfloat16 beside `inputs`, and for them as outputs wherever
// `outputs` has a float dtype (comparisons and ArgMax keep theirs).
template <xdev_kernel_fn_t F>
constexpr xdev_kernel_info_t widened_info(const char* op, uint64_t inputs, uint64_t outputs) {
  return info(op, inputs | kHalves, (outputs & kFloats) != 0 ? outputs | kHalves : outputs,
              &widened<F>);
}

constexpr xdev_kernel_info_t kInfos[] = {
    widened_info<kernel_matmul>(XDEV_OP_MatMul, kNumeric, kNumeric),
    widened_info<kernel_add>(XDEV_OP_Add, kArith | kBool, kArith | kBool),
    widened_info<kernel_sub>(XDEV_OP_Sub, kArith, kArith),
    widened_info<kernel_mul>(XDEV_OP_Mul, kArith, kArith),
    widened_info<kernel_div>(XDEV_OP_Div, kArith, kArith),
    widened_info<kernel_neg>(XDEV_OP_Neg, kSigned, kSigned),
    widened_info<kernel_relu>(XDEV_OP_Relu, kArith, kArith),
    widened_info<kernel_add_n>(XDEV_OP_AddN, kArith, kArith),
    info(XDEV_OP_Cast, kEveryDtype, kEveryDtype, &kernel_cast),
    widened_info<kernel_sum>(XDEV_OP_Sum, kArith, kArith),
    widened_info<kernel_mean>(XDEV_OP_Mean, kArith, kArith),
    info(XDEV_OP_Copy, kEveryDtype, kEveryDtype, &kernel_copy),
    info(XDEV_OP_Fill, kEveryDtype, kEveryDtype, &kernel_fill),
    info(XDEV_OP_RandomUniform, kFloats, kFloats, &kernel_random_uniform),
    widened_info<kernel_abs>(XDEV_OP_Abs, kSigned, kSigned),
    widened_info<kernel_sign>(XDEV_OP_Sign, kSigned, kSigned),
    widened_info<kernel_square>(XDEV_OP_Square, kArith, kArith),
    widened_info<kernel_exp>(XDEV_OP_Exp, kFloats, kFloats),
    widened_info<kernel_expm1>(XDEV_OP_Expm1, kFloats, kFloats),
    widened_info<kernel_log>(XDEV_OP_Log, kFloats, kFloats),
    widened_info<kernel_log1p>(XDEV_OP_Log1p, kFloats, kFloats),
    widened_info<kernel_sqrt>(XDEV_OP_Sqrt, kFloats, kFloats),
    widened_info<kernel_rsqrt>(XDEV_OP_Rsqrt, kFloats, kFloats),
    widened_info<kernel_reciprocal>(XDEV_OP_Reciprocal, kFloats, kFloats),
    widened_info<kernel_sin>(XDEV_OP_Sin, kFloats, kFloats),
    widened_info<kernel_cos>(XDEV_OP_Cos, kFloats, kFloats),
    widened_info<kernel_tanh>(XDEV_OP_Tanh, kFloats, kFloats),
    widened_info<kernel_sigmoid>(XDEV_OP_Sigmoid, kFloats, kFloats),
    widened_info<kernel_erf>(XDEV_OP_Erf, kFloats, kFloats),
    widened_info<kernel_softplus>(XDEV_OP_Softplus, kFloats, kFloats),
    widened_info<kernel_floor>(XDEV_OP_Floor, kFloats, kFloats),
    widened_info<kernel_ceil>(XDEV_OP_Ceil, kFloats, kFloats),
    widened_info<kernel_round>(XDEV_OP_Round, kFloats, kFloats),
    widened_info<kernel_leaky_relu>(XDEV_OP_LeakyRelu, kFloats, kFloats),
    widened_info<kernel_gelu>(XDEV_OP_Gelu, kFloats, kFloats),
    widened_info<kernel_maximum>(XDEV_OP_Maximum, kArith, kArith),
    widened_info<kernel_minimum>(XDEV_OP_Minimum, kArith, kArith),
    widened_info<kernel_floor_div>(XDEV_OP_FloorDiv, kArith, kArith),
    widened_info<kernel_floor_mod>(XDEV_OP_FloorMod, kArith, kArith),
    widened_info<kernel_squared_difference>(XDEV_OP_SquaredDifference, kNumeric, kNumeric),
    widened_info<kernel_pow>(XDEV_OP_Pow, kFloats, kFloats),
    widened_info<kernel_equal>(XDEV_OP_Equal, kAllDtypes | kBytes, kBool),
    widened_info<kernel_not_equal>(XDEV_OP_NotEqual, kAllDtypes | kBytes, kBool),
    widened_info<kernel_less>(XDEV_OP_Less, kArith, kBool),
    widened_info<kernel_less_equal>(XDEV_OP_LessEqual, kArith, kBool),
    widened_info<kernel_greater>(XDEV_OP_Greater, kArith, kBool),
    widened_info<kernel_greater_equal>(XDEV_OP_GreaterEqual, kArith, kBool),
    info(XDEV_OP_LogicalAnd, kBool, kBool, &kernel_logical_and),
    info(XDEV_OP_LogicalOr, kBool, kBool, &kernel_logical_or),
    info(XDEV_OP_LogicalNot, kBool, kBool, &kernel_logical_not),
    widened_info<kernel_is_nan>(XDEV_OP_IsNan, kFloats, kBool),
    widened_info<kernel_is_finite>(XDEV_OP_IsFinite, kFloats, kBool),
    // Looked up by the condition's dtype; x, y and the output any dtype.
    info(XDEV_OP_Select, kBool, kEveryDtype, &kernel_select),
    widened_info<kernel_clip_by_value>(XDEV_OP_ClipByValue, kArith, kArith),
    widened_info<kernel_max>(XDEV_OP_Max, kArith, kArith),
    widened_info<kernel_min>(XDEV_OP_Min, kArith, kArith),
    widened_info<kernel_prod>(XDEV_OP_Prod, kArith, kArith),
    info(XDEV_OP_Any, kBool, kBool, &kernel_any),
    info(XDEV_OP_All, kBool, kBool, &kernel_all),
    widened_info<kernel_log_sum_exp>(XDEV_OP_LogSumExp, kFloats, kFloats),
    widened_info<kernel_arg_max>(XDEV_OP_ArgMax, kArith | kBool, kI64),
    widened_info<kernel_arg_min>(XDEV_OP_ArgMin, kArith | kBool, kI64),
    widened_info<kernel_cum_sum>(XDEV_OP_CumSum, kArith, kArith),
    widened_info<kernel_softmax>(XDEV_OP_Softmax, kFloats, kFloats),
    widened_info<kernel_log_softmax>(XDEV_OP_LogSoftmax, kFloats, kFloats),
    info(XDEV_OP_ConcatV2, kEveryDtype, kEveryDtype, &kernel_concat_v2),
    info(XDEV_OP_Pack, kEveryDtype, kEveryDtype, &kernel_pack),
    info(XDEV_OP_Identity, kEveryDtype, kEveryDtype, &kernel_copy),
    info(XDEV_OP_Tile, kEveryDtype, kEveryDtype, &kernel_tile),
    info(XDEV_OP_PadV2, kEveryDtype, kEveryDtype, &kernel_pad_v2),
    info(XDEV_OP_GatherV2, kEveryDtype, kEveryDtype, &kernel_gather_v2),
    widened_info<kernel_bias_add>(XDEV_OP_BiasAdd, kFloats, kFloats),
    widened_info<kernel_softmax_cross_entropy_with_logits>(
        XDEV_OP_SoftmaxCrossEntropyWithLogits, kFloats, kFloats),
    widened_info<kernel_layer_norm>(XDEV_OP_LayerNorm, kFloats, kFloats),
    info(XDEV_OP_Slice, kEveryDtype, kEveryDtype, &kernel_slice),
    info(XDEV_OP_StridedSlice, kEveryDtype, kEveryDtype, &kernel_strided_slice),
    // Looked up by the output dtype (no inputs).
    info(XDEV_OP_Range, kNumeric, kNumeric, &kernel_range),
    // Looked up by the indices' dtype; the output any dtype.
    info(XDEV_OP_OneHot, kI32 | kI64, kEveryDtype, &kernel_one_hot),
    info(XDEV_OP_BroadcastTo, kEveryDtype, kEveryDtype, &kernel_broadcast_to),
    widened_info<kernel_conv2d>(XDEV_OP_Conv2D, kFloats, kFloats),
    widened_info<kernel_conv2d_backprop_input>(XDEV_OP_Conv2DBackpropInput, kFloats, kFloats),
    widened_info<kernel_conv2d_backprop_filter>(XDEV_OP_Conv2DBackpropFilter, kFloats, kFloats),
    widened_info<kernel_max_pool>(XDEV_OP_MaxPool, kFloats, kFloats),
    widened_info<kernel_avg_pool>(XDEV_OP_AvgPool, kFloats, kFloats),
    widened_info<kernel_max_pool_grad>(XDEV_OP_MaxPoolGrad, kFloats, kFloats),
    widened_info<kernel_avg_pool_grad>(XDEV_OP_AvgPoolGrad, kFloats, kFloats),
    widened_info<kernel_batch_mat_mul_v2>(XDEV_OP_BatchMatMulV2, kNumeric, kNumeric),
    // Looked up by the tensor's dtype; the indices int32 or int64.
    widened_info<kernel_tensor_scatter_add>(XDEV_OP_TensorScatterAdd, kArith, kArith),
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
