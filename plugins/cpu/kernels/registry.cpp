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

// A float op (widen.hpp): the kernel F behind widened(), registered for
// float16 and bfloat16 beside `inputs`, and for them as outputs wherever
// `outputs` has a float dtype (comparisons and ArgMax keep theirs).
template <xdev_kernel_fn_t F>
constexpr xdev_kernel_info_t widened_info(const char* op, uint64_t inputs, uint64_t outputs) {
  return info(op, inputs | kHalves, (outputs & kFloats) != 0 ? outputs | kHalves : outputs,
              &widened<F>);
}

constexpr xdev_kernel_info_t kInfos[] = {
    widened_info<kernel_matmul>("MatMul", kNumeric, kNumeric),
    widened_info<kernel_add>("Add", kNumeric | kBool, kNumeric | kBool),
    widened_info<kernel_sub>("Sub", kNumeric, kNumeric),
    widened_info<kernel_mul>("Mul", kNumeric, kNumeric),
    widened_info<kernel_div>("Div", kNumeric, kNumeric),
    widened_info<kernel_neg>("Neg", kNumeric, kNumeric),
    widened_info<kernel_relu>("Relu", kNumeric, kNumeric),
    widened_info<kernel_add_n>("AddN", kNumeric, kNumeric),
    info("Cast", kEveryDtype, kEveryDtype, &kernel_cast),
    widened_info<kernel_sum>("Sum", kNumeric, kNumeric),
    widened_info<kernel_mean>("Mean", kNumeric, kNumeric),
    info("Copy", kEveryDtype, kEveryDtype, &kernel_copy),
    info("Fill", kEveryDtype, kEveryDtype, &kernel_fill),
    info("RandomUniform", kFloats, kFloats, &kernel_random_uniform),
    widened_info<kernel_abs>("Abs", kNumeric, kNumeric),
    widened_info<kernel_sign>("Sign", kNumeric, kNumeric),
    widened_info<kernel_square>("Square", kNumeric, kNumeric),
    widened_info<kernel_exp>("Exp", kFloats, kFloats),
    widened_info<kernel_expm1>("Expm1", kFloats, kFloats),
    widened_info<kernel_log>("Log", kFloats, kFloats),
    widened_info<kernel_log1p>("Log1p", kFloats, kFloats),
    widened_info<kernel_sqrt>("Sqrt", kFloats, kFloats),
    widened_info<kernel_rsqrt>("Rsqrt", kFloats, kFloats),
    widened_info<kernel_reciprocal>("Reciprocal", kFloats, kFloats),
    widened_info<kernel_sin>("Sin", kFloats, kFloats),
    widened_info<kernel_cos>("Cos", kFloats, kFloats),
    widened_info<kernel_tanh>("Tanh", kFloats, kFloats),
    widened_info<kernel_sigmoid>("Sigmoid", kFloats, kFloats),
    widened_info<kernel_erf>("Erf", kFloats, kFloats),
    widened_info<kernel_softplus>("Softplus", kFloats, kFloats),
    widened_info<kernel_floor>("Floor", kFloats, kFloats),
    widened_info<kernel_ceil>("Ceil", kFloats, kFloats),
    widened_info<kernel_round>("Round", kFloats, kFloats),
    widened_info<kernel_leaky_relu>("LeakyRelu", kFloats, kFloats),
    widened_info<kernel_gelu>("Gelu", kFloats, kFloats),
    widened_info<kernel_maximum>("Maximum", kNumeric, kNumeric),
    widened_info<kernel_minimum>("Minimum", kNumeric, kNumeric),
    widened_info<kernel_floor_div>("FloorDiv", kNumeric, kNumeric),
    widened_info<kernel_floor_mod>("FloorMod", kNumeric, kNumeric),
    widened_info<kernel_squared_difference>("SquaredDifference", kNumeric, kNumeric),
    widened_info<kernel_pow>("Pow", kFloats, kFloats),
    widened_info<kernel_equal>("Equal", kAllDtypes, kBool),
    widened_info<kernel_not_equal>("NotEqual", kAllDtypes, kBool),
    widened_info<kernel_less>("Less", kNumeric, kBool),
    widened_info<kernel_less_equal>("LessEqual", kNumeric, kBool),
    widened_info<kernel_greater>("Greater", kNumeric, kBool),
    widened_info<kernel_greater_equal>("GreaterEqual", kNumeric, kBool),
    info("LogicalAnd", kBool, kBool, &kernel_logical_and),
    info("LogicalOr", kBool, kBool, &kernel_logical_or),
    info("LogicalNot", kBool, kBool, &kernel_logical_not),
    widened_info<kernel_is_nan>("IsNan", kFloats, kBool),
    widened_info<kernel_is_finite>("IsFinite", kFloats, kBool),
    // Looked up by the condition's dtype; x, y and the output any dtype.
    info("Select", kBool, kEveryDtype, &kernel_select),
    widened_info<kernel_clip_by_value>("ClipByValue", kNumeric, kNumeric),
    widened_info<kernel_max>("Max", kNumeric, kNumeric),
    widened_info<kernel_min>("Min", kNumeric, kNumeric),
    widened_info<kernel_prod>("Prod", kNumeric, kNumeric),
    info("Any", kBool, kBool, &kernel_any),
    info("All", kBool, kBool, &kernel_all),
    widened_info<kernel_log_sum_exp>("LogSumExp", kFloats, kFloats),
    widened_info<kernel_arg_max>("ArgMax", kNumeric, kI64),
    widened_info<kernel_arg_min>("ArgMin", kNumeric, kI64),
    widened_info<kernel_cum_sum>("CumSum", kNumeric, kNumeric),
    widened_info<kernel_softmax>("Softmax", kFloats, kFloats),
    widened_info<kernel_log_softmax>("LogSoftmax", kFloats, kFloats),
    info("ConcatV2", kEveryDtype, kEveryDtype, &kernel_concat_v2),
    info("Pack", kEveryDtype, kEveryDtype, &kernel_pack),
    info("Identity", kEveryDtype, kEveryDtype, &kernel_copy),
    info("Tile", kEveryDtype, kEveryDtype, &kernel_tile),
    info("PadV2", kEveryDtype, kEveryDtype, &kernel_pad_v2),
    info("GatherV2", kEveryDtype, kEveryDtype, &kernel_gather_v2),
    widened_info<kernel_bias_add>("BiasAdd", kFloats, kFloats),
    widened_info<kernel_softmax_cross_entropy_with_logits>(
        "SoftmaxCrossEntropyWithLogits", kFloats, kFloats),
    widened_info<kernel_layer_norm>("LayerNorm", kFloats, kFloats),
    info("Slice", kEveryDtype, kEveryDtype, &kernel_slice),
    info("StridedSlice", kEveryDtype, kEveryDtype, &kernel_strided_slice),
    // Looked up by the output dtype (no inputs).
    info("Range", kNumeric, kNumeric, &kernel_range),
    // Looked up by the indices' dtype; the output any dtype.
    info("OneHot", kI32 | kI64, kEveryDtype, &kernel_one_hot),
    info("BroadcastTo", kEveryDtype, kEveryDtype, &kernel_broadcast_to),
    widened_info<kernel_conv2d>("Conv2D", kFloats, kFloats),
    widened_info<kernel_conv2d_backprop_input>("Conv2DBackpropInput", kFloats, kFloats),
    widened_info<kernel_conv2d_backprop_filter>("Conv2DBackpropFilter", kFloats, kFloats),
    widened_info<kernel_max_pool>("MaxPool", kFloats, kFloats),
    widened_info<kernel_avg_pool>("AvgPool", kFloats, kFloats),
    widened_info<kernel_max_pool_grad>("MaxPoolGrad", kFloats, kFloats),
    widened_info<kernel_avg_pool_grad>("AvgPoolGrad", kFloats, kFloats),
    widened_info<kernel_batch_mat_mul_v2>("BatchMatMulV2", kNumeric, kNumeric),
    // Looked up by the tensor's dtype; the indices int32 or int64.
    widened_info<kernel_tensor_scatter_add>("TensorScatterAdd", kNumeric, kNumeric),
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
