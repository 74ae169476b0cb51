// The opaque ABI objects of the simulated accelerator plugin. Each is
// created and destroyed by this plugin only; the core holds pointers.
#pragma once

#include <xdev/plugin.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "arena.hpp"
#include "collectives.hpp"
#include "common.hpp"
#include "queue.hpp"

namespace xdev::sim {

// Settings read from the environment at initialize.
struct Config {
  uint32_t device_count = 2;             // XDEV_SIM_DEVICES
  uint64_t memory_mb = 256;              // XDEV_SIM_MEMORY_MB, per device
  std::chrono::microseconds delay{0};    // XDEV_SIM_DELAY_US, per copy/kernel
  uint64_t scratch_bytes = 0;            // XDEV_SIM_SCRATCH_BYTES, per MatMul
  // XDEV_SIM_KERNELS: the host kernels (plugins/cpu) the plugin registers.
  std::vector<const xdev_kernel_info_t*> kernels;
  // XDEV_SIM_KERNEL_DTYPES: the input dtypes they are registered for.
  uint64_t kernel_dtypes = ~uint64_t{0};
  // XDEV_SIM_COLLECTIVE_DELAY_US: slept before each collective runs.
  std::chrono::microseconds collective_delay{0};
};

// What a rank's queued collectives share with its communicator, which the
// core may abort (and so free) while they are queued.
struct RankState {
  std::shared_ptr<CollectiveGroup> group;
  int32_t rank = 0;
  uint64_t round = 0;  // touched by the stream worker only
  std::atomic<bool> aborted{false};
};

// The kernel_context of a registered kernel.
struct KernelContext {
  const xdev_plugin_t* plugin = nullptr;
  const xdev_kernel_info_t* host = nullptr;  // the host kernel it runs
  uint64_t input_dtypes = 0;                 // what it is registered for
};

// What device_get_properties hands out for one device; lives in the plugin
// until shutdown.
struct DeviceText {
  std::string name;         // "Sim Accelerator 0"
  std::string bus_id;       // "sim:00"
  std::string description;  // "device: 0, name: ..., compute capability: 0.0"
  std::string label;        // "Sim Accelerator 0 (sim:00)", for messages
  ph::PropertyList properties;
};

}  // namespace xdev::sim

// One initialized plugin.
struct xdev_plugin_t {
  const xdev_host_api_t* host = nullptr;  // owned by the core, outlives us
  // Makes `host` the plugin's fallback table while this instance lives.
  std::optional<xdev::sim::ph::InstanceRegistration> registration;
  xdev::sim::Config config;
  std::vector<xdev::sim::DeviceText> devices;  // one per ordinal
  std::string status_line;                     // describe_status

  xdev_device_type_info_t type{};
  const xdev_device_type_info_t* types[1] = {&type};
  xdev::sim::ph::KernelList kernels;
  // One per entry of `kernels`, its kernel_context (stable addresses).
  std::deque<xdev::sim::KernelContext> kernel_contexts;

  std::mutex mutex;                   // guards `open`
  std::vector<xdev_device_t*> open;   // by ordinal; NULL while closed
};

// One opened device. The sets let device_close and shutdown release what the
// core forgot (with a warning) instead of leaking threads.
struct xdev_device_t {
  xdev_plugin_t* plugin = nullptr;
  uint32_t ordinal = 0;
  const xdev::sim::DeviceText* text = nullptr;  // plugin->devices[ordinal]
  std::unique_ptr<xdev::sim::Arena> arena;

  std::mutex mutex;  // guards the sets
  std::set<xdev_stream_t*> streams;
  std::set<xdev_event_t*> events;
  std::set<void*> host_blocks;  // from host_memory_allocate
};

struct xdev_stream_t {
  xdev_device_t* device = nullptr;
  std::unique_ptr<xdev::sim::WorkQueue> queue;
};

struct xdev_event_t {
  xdev_device_t* device = nullptr;
  std::mutex mutex;  // guards `mark`
  // The mark of the last event_record; NULL while never recorded.
  std::shared_ptr<xdev::sim::Mark> mark;
};

// One device's rank of a group (ABI 1.7).
struct xdev_communicator_t {
  xdev_device_t* device = nullptr;
  std::shared_ptr<xdev::sim::RankState> state;
};
