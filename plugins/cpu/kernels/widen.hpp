// float16 and bfloat16 for the float ops: widened(F) runs the float32
// kernel F on a call that holds 16-bit float tensors. Each such input is
// widened (exactly) into a dense float32 copy, each such output is computed
// into float32 scratch and rounded to nearest even once at the end
// (<xdev/half.hpp>), so every op computes and accumulates in float32 (or
// wider, where its float32 kernel does) with one definition per op.
#pragma once

#include "kernels/common.hpp"

namespace xdev::cpu {

// The slow path of widened(): validates the call (its tensors hold one 16-bit
// float dtype and no float32), converts, runs `fn`, rounds the outputs.
xdev_status_t* run_widened(xdev_kernel_fn_t fn, void* context,
                           const xdev_kernel_call_t* call) noexcept;

// Input 0 or output 0 is float16 or bfloat16 (the dtype kernels are looked
// up by; every float input of these ops shares it).
inline bool holds_half(const xdev_kernel_call_t* call) noexcept {
  if (call == nullptr || call->struct_size < XDEV_KERNEL_CALL_STRUCT_SIZE_1_0) return false;
  if (call->input_count > 0 && call->inputs != nullptr && call->inputs[0] != nullptr &&
      in_mask(call->inputs[0]->dtype, kHalves)) {
    return true;
  }
  return call->output_count > 0 && call->outputs != nullptr && call->outputs[0] != nullptr &&
         in_mask(call->outputs[0]->dtype, kHalves);
}

// The kernel F for float32/float64 (and integers), extended to float16 and
// bfloat16: what the kernel table registers for every float op.
template <xdev_kernel_fn_t F>
xdev_status_t* widened(void* context, const xdev_kernel_call_t* call) noexcept {
  return holds_half(call) ? run_widened(F, context, call) : F(context, call);
}

}  // namespace xdev::cpu
