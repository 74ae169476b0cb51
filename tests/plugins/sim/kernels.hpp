// The simulated accelerator's kernels: MatMul and Add, float32 and float64,
// nothing else on purpose (no Cast: the core must fall back to the CPU).
//
// Each function validates a kernel call against docs/ops.md and the
// device's memory, copies what it needs out of the call (the core's arrays
// die when the call returns) and enqueues the computation on the stream's
// worker. The addresses are checked again when the work runs, so memory the
// core freed too early is reported by stream_synchronize.
#pragma once

#include <xdev/plugin.h>

#include <cstdint>

#include "arena.hpp"
#include "common.hpp"
#include "queue.hpp"

namespace xdev::sim {

// The dtypes both kernels are registered for.
inline constexpr uint64_t kKernelDtypes =
    XDEV_DTYPE_BIT(XDEV_DTYPE_FLOAT32) | XDEV_DTYPE_BIT(XDEV_DTYPE_FLOAT64);

// `call` is a v1.0 call whose device and stream are non-NULL and match;
// `arena` is the device's memory, `queue` the stream's.
Failure enqueue_matmul(const xdev_kernel_call_t& call, const Arena& arena, WorkQueue& queue);
Failure enqueue_add(const xdev_kernel_call_t& call, const Arena& arena, WorkQueue& queue);

}  // namespace xdev::sim
