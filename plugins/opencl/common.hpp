// The objects of the OpenCL plugin and what every file of it shares.
#pragma once

#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 120
#endif
#include <CL/cl.h>
#include <xdev/plugin.h>
#include <xdev/plugin_helpers.hpp>

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "cache.hpp"

namespace xdev::opencl {

namespace ph = xdev::plugin_helpers;

extern ph::PluginHost g_host;

// "CL_OUT_OF_RESOURCES" for -5, "OpenCL error -1234" for unknown codes.
std::string cl_error_name(cl_int code);
// XDEV_STATUS_OUT_OF_MEMORY for the allocation failures, UNAVAILABLE for a
// lost device, INTERNAL for the rest.
xdev_status_code_t status_code_for(cl_int code);

// "float32", ... and the element size in bytes (0 for no dtype): the SDK's.
using ph::dtype_name;
inline size_t dtype_size(xdev_dtype_t dtype) { return xdev_plugin_dtype_size(dtype); }

// One OpenCL device the plugin exposes, found at initialize.
struct DeviceInfo {
  cl_platform_id platform = nullptr;
  cl_device_id id = nullptr;
  uint32_t type_index = 0;
  std::string name, driver, vendor, version, description, cache_key;
  uint64_t memory_total = 0;
  uint64_t max_allocation = 0;
  size_t max_group = 1;  // CL_DEVICE_MAX_WORK_GROUP_SIZE
  uint32_t compute_units = 1;  // CL_DEVICE_MAX_COMPUTE_UNITS
  bool cpu = false;            // CL_DEVICE_TYPE_CPU (PoCL, Intel's CPU runtime)
  bool unified_memory = false;
  bool fp64 = false;
  bool fp16 = false;
  ph::PropertyList properties;
  ph::KernelList kernels;  // device_kernels (what this device adds to its type's)
};

// One OpenCL context per platform, holding all its exposed devices, so events
// and buffers can be shared between them.
struct PlatformContext {
  cl_platform_id platform = nullptr;
  cl_context context = nullptr;
};

// A resolved device location: a buffer and a byte offset inside it.
struct Location {
  cl_mem mem = nullptr;
  uint64_t offset = 0;
};

}  // namespace xdev::opencl

struct xdev_plugin_t {
  const xdev_host_api_t* host = nullptr;
  std::unique_ptr<xdev::plugin_helpers::InstanceRegistration> registration;
  std::vector<std::string> type_names;
  std::vector<xdev_device_type_info_t> types;
  std::vector<const xdev_device_type_info_t*> type_pointers;
  std::vector<std::unique_ptr<xdev::opencl::DeviceInfo>> devices;
  std::vector<xdev::opencl::PlatformContext> contexts;
  xdev::plugin_helpers::KernelList type_kernels;
  std::string status_line;
  std::unique_ptr<xdev::opencl::ProgramCache> cache;
  // Address mode (README.md, "Memory modes"): for cores before ABI 1.6 and
  // for XDEV_OPENCL_MEMORY=addresses.
  bool address_mode = false;
};

// An opened device. Its memory is handles (XDEV_CAP_HANDLE_MEMORY, ABI 1.6):
// memory_allocate returns the cl_mem itself, and the core names memory only
// as (that cl_mem, byte offset), so the plugin keeps no address map.
struct xdev_device_t {
  xdev_plugin_t* plugin = nullptr;
  uint32_t ordinal = 0;
  xdev::opencl::DeviceInfo* info = nullptr;
  cl_context context = nullptr;
  const xdev_host_api_t* host = nullptr;

  std::mutex memory_mutex;
  std::unordered_map<cl_mem, uint64_t> allocations;  // live buffers and their sizes
  uint64_t allocated_bytes = 0;
  // Address mode only: the made-up address of each buffer (never host
  // memory), so that an address inside a buffer maps back to it.
  std::map<uint64_t, cl_mem> addresses;
  uint64_t next_address = 0;

  std::mutex program_mutex;
  std::unordered_map<std::string, cl_program> programs;  // by source + options
};

struct xdev_stream_t {
  xdev_device_t* device = nullptr;
  cl_command_queue queue = nullptr;
  // Errors kernels find on the device (GatherV2's index out of range): an
  // int flag and the offending value (a long at byte 8), read and cleared
  // by stream_synchronize when `check_errors` says a kernel may have set it.
  cl_mem errors = nullptr;
  bool check_errors = false;
  const char* error_op = "";
  const char* error_effect = "";  // what the kernel did instead ("the output has 0 there")
};

struct xdev_event_t {
  xdev_device_t* device = nullptr;
  cl_event event = nullptr;  // NULL until recorded
};

namespace xdev::opencl {

// The (cl_mem, offset) of `size` bytes at `offset` in allocation `alloc`; a
// status naming `what` and the device when that is no live allocation of the
// device or the bytes do not lie inside it.
xdev_status_t* resolve(xdev_device_t* device, const void* alloc, uint64_t offset, uint64_t size,
                       const char* what, Location* out);
// The same check: "" and *out, or why not (for callers that word the status).
std::string locate(xdev_device_t* device, const void* alloc, uint64_t offset, uint64_t size,
                   Location* out);

// A status for a failed OpenCL call: "opencl plugin: <device>: <call>
// failed: CL_..." with the code's status.
xdev_status_t* cl_failure(const xdev_host_api_t* host, const xdev_device_t* device,
                          const char* call, cl_int code);

// The program built from `source` for the device: from memory, else from the
// disk cache, else compiled (and stored). Compile errors carry the build log.
xdev_status_t* get_program(xdev_device_t* device, const std::string& source,
                           cl_program* out);

// Registers the plugin's kernels: those every device of a type runs go to
// plugin->type_kernels, the rest to each DeviceInfo::kernels.
void register_kernels(xdev_plugin_t* plugin);

}  // namespace xdev::opencl
