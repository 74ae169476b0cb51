// The validation layer for plugins (XDEV_VALIDATE=1, xdev-conformance by
// default): a plugin table whose every slot calls the plugin's own and checks
// what comes back. Self-contained (the plugin ABI and the standard library
// only), so that libxdev and xdev-conformance, which talks to plugins
// without libxdev, share it. README.md lists the checks.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include <xdev/plugin.h>

namespace xdev::validation {

// One finding. Every field names where: the plugin file, the ABI slot or the
// kernel's op, the device ("device 0 (Sim Accelerator 0)") and the tensor
// ("output 0 [2,2] float32"); fields that do not apply are empty.
struct Report {
  std::string plugin_file;
  std::string slot;
  std::string device;
  std::string tensor;
  std::string message;
  // "validation: FILE: SLOT on DEVICE, TENSOR: MESSAGE"
  std::string text() const;
};

struct Options {
  // The plugin's file name, for the reports.
  std::string plugin_file;
  // Receives every report (from any thread; calls are serialized).
  std::function<void(const Report&)> sink;
  // The code of a status the plugin returned (status objects belong to the
  // embedder). May be empty: then no check needs a code.
  std::function<xdev_status_code_t(const xdev_status_t*)> status_code;
  // Destroys a status the layer received and does not pass on (its own
  // copies for canaries, guards and poison failed). May be empty: then such
  // statuses are leaked.
  std::function<void(xdev_status_t*)> status_destroy;
};

// Wraps `api`, a table that passed the loader's checks (major version 1,
// at least the v1.0 size, required slots present). `host` is the host table
// the plugin was given in xdev_plugin_query: the wrapped `initialize`
// recognizes its plugin by it, so call initialize through the returned
// table with that host. Handles the returned table gives out (plugin,
// devices, streams, events) are the layer's own, usable only with it;
// memory addresses are the plugin's (offset past the layer's guard bytes).
// The table and the layer's state live until the process exits.
const xdev_plugin_api_t* wrap(const xdev_plugin_api_t* api, const xdev_host_api_t* host,
                              Options options);

// Bytes of guard placed before and after every memory_allocate block
// (at least; more when the alignment asks for more).
inline constexpr uint64_t kGuardBytes = 256;
// The byte outputs are filled with before a kernel runs.
inline constexpr unsigned char kCanary = 0xA5;
// ... and float16 / bfloat16 outputs: 0xA5A5 is an ordinary float16 value
// (-0.0221), which a kernel may well compute; 0xFFFF is a NaN whose payload
// no arithmetic produces (a NaN result is 0x7E00 / 0xFE00 or its input's).
inline constexpr unsigned char kHalfCanary = 0xFF;
// The byte freed memory is filled with before it goes back to the plugin.
inline constexpr unsigned char kPoison = 0xDD;
// The guard bytes' value.
inline constexpr unsigned char kGuard = 0x5A;

}  // namespace xdev::validation
