// The cpu plugin's kernels (docs/ops.md) and the table that registers them.
#pragma once

#include <xdev/plugin.h>

#include <cstdint>

namespace xdev::cpu {

// Every kernel of the plugin for device type 0 ("CPU"), in a static table.
const xdev_kernel_info_t* const* kernel_infos(uint32_t* count) noexcept;

// The kernel functions (xdev_kernel_fn_t); kernel_context is unused.
xdev_status_t* kernel_matmul(void* context, const xdev_kernel_call_t* call) noexcept;
xdev_status_t* kernel_batch_mat_mul_v2(void* context, const xdev_kernel_call_t* call) noexcept;
xdev_status_t* kernel_add(void* context, const xdev_kernel_call_t* call) noexcept;
xdev_status_t* kernel_sub(void* context, const xdev_kernel_call_t* call) noexcept;
xdev_status_t* kernel_mul(void* context, const xdev_kernel_call_t* call) noexcept;
xdev_status_t* kernel_div(void* context, const xdev_kernel_call_t* call) noexcept;
xdev_status_t* kernel_neg(void* context, const xdev_kernel_call_t* call) noexcept;
xdev_status_t* kernel_relu(void* context, const xdev_kernel_call_t* call) noexcept;
xdev_status_t* kernel_add_n(void* context, const xdev_kernel_call_t* call) noexcept;
xdev_status_t* kernel_cast(void* context, const xdev_kernel_call_t* call) noexcept;
xdev_status_t* kernel_sum(void* context, const xdev_kernel_call_t* call) noexcept;
xdev_status_t* kernel_mean(void* context, const xdev_kernel_call_t* call) noexcept;
// Further reductions (reduce.cpp).
xdev_status_t* kernel_max(void* context, const xdev_kernel_call_t* call) noexcept;
xdev_status_t* kernel_min(void* context, const xdev_kernel_call_t* call) noexcept;
xdev_status_t* kernel_prod(void* context, const xdev_kernel_call_t* call) noexcept;
xdev_status_t* kernel_any(void* context, const xdev_kernel_call_t* call) noexcept;
xdev_status_t* kernel_all(void* context, const xdev_kernel_call_t* call) noexcept;
xdev_status_t* kernel_log_sum_exp(void* context, const xdev_kernel_call_t* call) noexcept;
// Along one axis (scan.cpp).
xdev_status_t* kernel_arg_max(void* context, const xdev_kernel_call_t* call) noexcept;
xdev_status_t* kernel_arg_min(void* context, const xdev_kernel_call_t* call) noexcept;
xdev_status_t* kernel_cum_sum(void* context, const xdev_kernel_call_t* call) noexcept;
xdev_status_t* kernel_softmax(void* context, const xdev_kernel_call_t* call) noexcept;
xdev_status_t* kernel_log_softmax(void* context, const xdev_kernel_call_t* call) noexcept;
xdev_status_t* kernel_copy(void* context, const xdev_kernel_call_t* call) noexcept;
// Data movement (movement.cpp); Identity is kernel_copy.
xdev_status_t* kernel_concat_v2(void* context, const xdev_kernel_call_t* call) noexcept;
xdev_status_t* kernel_pack(void* context, const xdev_kernel_call_t* call) noexcept;
xdev_status_t* kernel_tile(void* context, const xdev_kernel_call_t* call) noexcept;
xdev_status_t* kernel_pad_v2(void* context, const xdev_kernel_call_t* call) noexcept;
xdev_status_t* kernel_gather_v2(void* context, const xdev_kernel_call_t* call) noexcept;
xdev_status_t* kernel_tensor_scatter_add(void* context, const xdev_kernel_call_t* call) noexcept;
xdev_status_t* kernel_fill(void* context, const xdev_kernel_call_t* call) noexcept;
xdev_status_t* kernel_random_uniform(void* context, const xdev_kernel_call_t* call) noexcept;
// Elementwise math (math.cpp).
xdev_status_t* kernel_abs(void* context, const xdev_kernel_call_t* call) noexcept;
xdev_status_t* kernel_sign(void* context, const xdev_kernel_call_t* call) noexcept;
xdev_status_t* kernel_square(void* context, const xdev_kernel_call_t* call) noexcept;
xdev_status_t* kernel_exp(void* context, const xdev_kernel_call_t* call) noexcept;
xdev_status_t* kernel_expm1(void* context, const xdev_kernel_call_t* call) noexcept;
xdev_status_t* kernel_log(void* context, const xdev_kernel_call_t* call) noexcept;
xdev_status_t* kernel_log1p(void* context, const xdev_kernel_call_t* call) noexcept;
xdev_status_t* kernel_sqrt(void* context, const xdev_kernel_call_t* call) noexcept;
xdev_status_t* kernel_rsqrt(void* context, const xdev_kernel_call_t* call) noexcept;
xdev_status_t* kernel_reciprocal(void* context, const xdev_kernel_call_t* call) noexcept;
xdev_status_t* kernel_sin(void* context, const xdev_kernel_call_t* call) noexcept;
xdev_status_t* kernel_cos(void* context, const xdev_kernel_call_t* call) noexcept;
xdev_status_t* kernel_tanh(void* context, const xdev_kernel_call_t* call) noexcept;
xdev_status_t* kernel_sigmoid(void* context, const xdev_kernel_call_t* call) noexcept;
xdev_status_t* kernel_erf(void* context, const xdev_kernel_call_t* call) noexcept;
xdev_status_t* kernel_softplus(void* context, const xdev_kernel_call_t* call) noexcept;
xdev_status_t* kernel_floor(void* context, const xdev_kernel_call_t* call) noexcept;
xdev_status_t* kernel_ceil(void* context, const xdev_kernel_call_t* call) noexcept;
xdev_status_t* kernel_round(void* context, const xdev_kernel_call_t* call) noexcept;
xdev_status_t* kernel_leaky_relu(void* context, const xdev_kernel_call_t* call) noexcept;
xdev_status_t* kernel_gelu(void* context, const xdev_kernel_call_t* call) noexcept;
// Binary math (elementwise.cpp).
xdev_status_t* kernel_maximum(void* context, const xdev_kernel_call_t* call) noexcept;
xdev_status_t* kernel_minimum(void* context, const xdev_kernel_call_t* call) noexcept;
xdev_status_t* kernel_floor_div(void* context, const xdev_kernel_call_t* call) noexcept;
xdev_status_t* kernel_floor_mod(void* context, const xdev_kernel_call_t* call) noexcept;
xdev_status_t* kernel_squared_difference(void* context, const xdev_kernel_call_t* call) noexcept;
xdev_status_t* kernel_pow(void* context, const xdev_kernel_call_t* call) noexcept;
// Comparisons and logic (compare.cpp).
xdev_status_t* kernel_equal(void* context, const xdev_kernel_call_t* call) noexcept;
xdev_status_t* kernel_not_equal(void* context, const xdev_kernel_call_t* call) noexcept;
xdev_status_t* kernel_less(void* context, const xdev_kernel_call_t* call) noexcept;
xdev_status_t* kernel_less_equal(void* context, const xdev_kernel_call_t* call) noexcept;
xdev_status_t* kernel_greater(void* context, const xdev_kernel_call_t* call) noexcept;
xdev_status_t* kernel_greater_equal(void* context, const xdev_kernel_call_t* call) noexcept;
xdev_status_t* kernel_logical_and(void* context, const xdev_kernel_call_t* call) noexcept;
xdev_status_t* kernel_logical_or(void* context, const xdev_kernel_call_t* call) noexcept;
xdev_status_t* kernel_logical_not(void* context, const xdev_kernel_call_t* call) noexcept;
xdev_status_t* kernel_is_nan(void* context, const xdev_kernel_call_t* call) noexcept;
xdev_status_t* kernel_is_finite(void* context, const xdev_kernel_call_t* call) noexcept;
xdev_status_t* kernel_select(void* context, const xdev_kernel_call_t* call) noexcept;
xdev_status_t* kernel_clip_by_value(void* context, const xdev_kernel_call_t* call) noexcept;
// NN ops (nn.cpp).
xdev_status_t* kernel_bias_add(void* context, const xdev_kernel_call_t* call) noexcept;
xdev_status_t* kernel_softmax_cross_entropy_with_logits(void* context,
                                                        const xdev_kernel_call_t* call) noexcept;
xdev_status_t* kernel_layer_norm(void* context, const xdev_kernel_call_t* call) noexcept;
// Indexing (indexing_ops.cpp).
xdev_status_t* kernel_slice(void* context, const xdev_kernel_call_t* call) noexcept;
xdev_status_t* kernel_strided_slice(void* context, const xdev_kernel_call_t* call) noexcept;
xdev_status_t* kernel_range(void* context, const xdev_kernel_call_t* call) noexcept;
xdev_status_t* kernel_one_hot(void* context, const xdev_kernel_call_t* call) noexcept;
xdev_status_t* kernel_broadcast_to(void* context, const xdev_kernel_call_t* call) noexcept;
// Conv2D and its gradients (conv.cpp), pooling (pool.cpp).
xdev_status_t* kernel_conv2d(void* context, const xdev_kernel_call_t* call) noexcept;
xdev_status_t* kernel_conv2d_backprop_input(void* context, const xdev_kernel_call_t* call) noexcept;
xdev_status_t* kernel_conv2d_backprop_filter(void* context,
                                             const xdev_kernel_call_t* call) noexcept;
xdev_status_t* kernel_max_pool(void* context, const xdev_kernel_call_t* call) noexcept;
xdev_status_t* kernel_avg_pool(void* context, const xdev_kernel_call_t* call) noexcept;
xdev_status_t* kernel_max_pool_grad(void* context, const xdev_kernel_call_t* call) noexcept;
xdev_status_t* kernel_avg_pool_grad(void* context, const xdev_kernel_call_t* call) noexcept;

}  // namespace xdev::cpu
