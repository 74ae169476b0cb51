// The cpu plugin's kernels (docs/ops.md) and the table that registers them.
#pragma once

#include <xdev/plugin.h>

#include <cstdint>

namespace xdev::cpu {

// Every kernel of the plugin for device type 0 ("CPU"), in a static table.
const xdev_kernel_info_t* const* kernel_infos(uint32_t* count) noexcept;

// The kernel functions (xdev_kernel_fn_t); kernel_context is unused.
xdev_status_t* kernel_matmul(void* context, const xdev_kernel_call_t* call) noexcept;
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
xdev_status_t* kernel_copy(void* context, const xdev_kernel_call_t* call) noexcept;
xdev_status_t* kernel_fill(void* context, const xdev_kernel_call_t* call) noexcept;
xdev_status_t* kernel_random_uniform(void* context, const xdev_kernel_call_t* call) noexcept;

}  // namespace xdev::cpu
