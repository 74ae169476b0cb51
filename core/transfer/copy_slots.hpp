// The plugin's copy slots, called with device memory as (allocation, offset)
// (memory/device_memory.hpp). Plugin ABI 1.6: when the plugin has the *_at
// slots (copy_host_to_device_at, ...) they get the pair as it is; otherwise
// (every plugin before 1.6) the old slots get the address allocation +
// offset. A plugin with XDEV_CAP_HANDLE_MEMORY always has the *_at slots (the
// loader checks), so no address is ever formed from one of its handles.
//
// Each enqueues on `device`'s stream and returns the plugin's status (NULL on
// success); the caller holds the stream (stream_mutex) as the slot's
// thread-safety asks and checks or inspects the status.
#pragma once

#include <cstdint>

#include <xdev/plugin.h>

#include "devices/logical_device.hpp"
#include "memory/device_memory.hpp"

namespace xdev::detail {

// Host memory `host` -> `dst` on `device`.
xdev_status_t* enqueue_host_to_device(LogicalDeviceState& device, DeviceMemory dst,
                                      const void* host, uint64_t bytes);
// `src` on `device` -> host memory `host`.
xdev_status_t* enqueue_device_to_host(LogicalDeviceState& device, void* host, DeviceMemory src,
                                      uint64_t bytes);
// `src` -> `dst`, both memory of `device`'s physical device.
xdev_status_t* enqueue_device_to_device(LogicalDeviceState& device, DeviceMemory dst,
                                        DeviceMemory src, uint64_t bytes);
// `src` on `src_device` -> `dst` on `device`, two devices of one plugin that
// declares XDEV_CAP_PEER_COPY.
xdev_status_t* enqueue_peer(LogicalDeviceState& device, DeviceMemory dst,
                            LogicalDeviceState& src_device, DeviceMemory src, uint64_t bytes);

}  // namespace xdev::detail
