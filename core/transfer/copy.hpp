// Moving bytes between devices and between host and device. Every function
// here is synchronous with respect to the devices involved.
#pragma once

#include <cstdint>
#include <memory>

#include "devices/logical_device.hpp"

namespace xdev::detail {

// Copies `bytes` from `from` on `src` to `to` on `dst`: within one device,
// between logical devices of one physical device, peer to peer, or staged
// through the host, whichever the plugins offer (traced as a
// device_to_device copy). Synchronous with respect to both devices.
// tensors/copy_tensor.cpp copies a tensor with it.
void copy_between(LogicalDeviceState* src, DeviceMemory from, LogicalDeviceState* dst,
                  DeviceMemory to, uint64_t bytes);

// Uploads `bytes` of host memory to `to` on `dst` (a Storage's memory, or a
// TensorImpl's memory()). Synchronous.
void upload(LogicalDeviceState* dst, DeviceMemory to, const void* host, uint64_t bytes);
// Reads `bytes` at `from` on `src` into host memory. Synchronous.
void download(LogicalDeviceState* src, DeviceMemory from, void* host, uint64_t bytes);

}  // namespace xdev::detail
