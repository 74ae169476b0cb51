// Moving bytes between devices and between host and device. Every function
// here is synchronous with respect to the devices involved.
#pragma once

#include <cstdint>
#include <memory>

#include "devices/logical_device.hpp"
#include "tensors/tensor_impl.hpp"

namespace xdev::detail {

// A copy of `src` on `dst` (a contiguous copy of the view's elements when the
// view is not contiguous; the same strides otherwise). Synchronous with
// respect to both devices.
std::shared_ptr<TensorImpl> copy_tensor(const TensorImpl& src, LogicalDeviceState* dst);

// Uploads `bytes` of host memory to `to` on `dst` (a Storage's memory, or a
// TensorImpl's memory()). Synchronous.
void upload(LogicalDeviceState* dst, DeviceMemory to, const void* host, uint64_t bytes);
// Reads `bytes` at `from` on `src` into host memory. Synchronous.
void download(LogicalDeviceState* src, DeviceMemory from, void* host, uint64_t bytes);

}  // namespace xdev::detail
