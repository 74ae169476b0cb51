// The simulated accelerator's kernels: every op of the cpu plugin, for every
// dtype it registers, computed by the cpu plugin's own host kernels (the
// static library plugins/cpu builds, `host_kernels`), so the sim has no
// kernel code of its own. XDEV_SIM_KERNELS and XDEV_SIM_KERNEL_DTYPES pick a
// subset, so that tests of fallback and placement still have ops and dtypes
// the sim lacks.
//
// A call is checked against the device's memory and copied out of the core's
// arrays when it is made (a status then); the host kernel runs on the stream's
// worker over host pointers into the device's mapping, after the addresses
// are checked again (memory freed too early). What only the host kernel
// checks (shapes an op requires, attributes) it reports when it runs, so the
// next stream_synchronize returns it, as a GPU reports a failed launch.
#pragma once

#include <xdev/plugin.h>

#include <cstdint>
#include <vector>

#include "arena.hpp"
#include "common.hpp"
#include "queue.hpp"

namespace xdev::sim {

// The host kernels whose ops `names` lists, comma-separated (spaces around a
// name ignored), in the cpu plugin's order; NULL or empty selects them all.
// A name that is not an op of the host kernels is INVALID_ARGUMENT naming it
// and `variable` (the environment variable it came from).
Failure select_kernels(const char* variable, const char* names,
                       std::vector<const xdev_kernel_info_t*>* out);

// The dtypes `names` lists, comma-separated ("float32,float64"), as a mask;
// NULL or empty is every dtype. The plugin registers each kernel for the
// input dtypes of its host kernel that are in the mask (and drops one left
// with none), so that tests have dtypes the sim lacks too.
Failure select_dtypes(const char* variable, const char* names, uint64_t* out);

// Checks a kernel call for `host` (the host kernel it runs), registered for
// the input dtypes `input_dtypes` (a subset of the host kernel's), and
// enqueues it. `call` is a v1.0 call whose device and stream are non-NULL and match and
// whose op is host.op; `arena` is the device's memory, `queue` the stream's,
// `log` the host table the kernel's log lines go to.
Failure enqueue_kernel(const xdev_kernel_info_t& host, uint64_t input_dtypes,
                       const xdev_kernel_call_t& call,
                       const Arena& arena, WorkQueue& queue, const xdev_host_api_t* log);

}  // namespace xdev::sim
