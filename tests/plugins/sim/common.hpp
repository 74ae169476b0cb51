// Pieces shared by the files of the simulated accelerator plugin ("sim").
#pragma once

#include <xdev/plugin.h>
#include <xdev/plugin_helpers.hpp>

#include <cstdint>
#include <string>

namespace xdev::sim {

// The SDK's plugin helpers (statuses, guards, tables).
namespace ph = xdev::plugin_helpers;

// Device addresses handed to the core are the host address inside a device's
// arena plus this tag. Bit 62 makes them non-canonical on x86-64 (4- and
// 5-level paging); bit 55 puts them in the kernel half on AArch64, whose
// top-byte-ignore would otherwise hide bit 62. So a dereference by the core
// faults, while byte-offset arithmetic on them still works. Bit 63 is clear,
// so they stay positive as intptr_t. A multiple of 2^55: alignment of the
// host address is alignment of the device address.
inline constexpr uint64_t kAddressTag = UINT64_C(0x4080000000000000);

// A failure inside the plugin before it becomes an xdev_status_t at the ABI
// boundary; code XDEV_STATUS_OK means none. Plain data, so work failing on a
// worker thread can keep it until stream_synchronize returns it: a status
// object made and never handed to the core would leak (only the core frees
// statuses).
struct Failure {
  xdev_status_code_t code = XDEV_STATUS_OK;
  std::string message;

  explicit operator bool() const noexcept { return code != XDEV_STATUS_OK; }
};

// A Failure with a printf-formatted message.
[[gnu::format(printf, 2, 3)]] Failure make_failure(xdev_status_code_t code, const char* format,
                                                   ...);

// "float32", "int64", ... ("dtype 42" for values that are no dtype).
std::string dtype_name(xdev_dtype_t dtype);

}  // namespace xdev::sim
