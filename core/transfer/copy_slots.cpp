// The copy slots, old (addresses) or ABI 1.6 (allocation, offset): see
// copy_slots.hpp.
#include "transfer/copy_slots.hpp"

#include "common/plugin_call.hpp"

namespace xdev::detail {

// The 1.6 slot `field` of the device's table when the table has it (its
// struct_size covers it), else nullptr.
#define XDEV_AT_SLOT(device, field) \
  (XDEV_HAS_FIELD((device).api(), xdev_plugin_api_t, field) ? (device).api()->field : nullptr)

xdev_status_t* enqueue_host_to_device(LogicalDeviceState& device, DeviceMemory dst,
                                      const void* host, uint64_t bytes) {
  if (auto* at = XDEV_AT_SLOT(device, copy_host_to_device_at)) {
    return call_plugin(device.call_site("copy_host_to_device_at"), at, device.stream(),
                       dst.allocation, dst.offset, host, bytes);
  }
  return call_plugin(device.call_site("copy_host_to_device"), device.api()->copy_host_to_device,
                     device.stream(), dst.address(), host, bytes);
}

xdev_status_t* enqueue_device_to_host(LogicalDeviceState& device, void* host, DeviceMemory src,
                                      uint64_t bytes) {
  if (auto* at = XDEV_AT_SLOT(device, copy_device_to_host_at)) {
    return call_plugin(device.call_site("copy_device_to_host_at"), at, device.stream(), host,
                       src.allocation, src.offset, bytes);
  }
  return call_plugin(device.call_site("copy_device_to_host"), device.api()->copy_device_to_host,
                     device.stream(), host, src.address(), bytes);
}

xdev_status_t* enqueue_device_to_device(LogicalDeviceState& device, DeviceMemory dst,
                                        DeviceMemory src, uint64_t bytes) {
  if (auto* at = XDEV_AT_SLOT(device, copy_device_to_device_at)) {
    return call_plugin(device.call_site("copy_device_to_device_at"), at, device.stream(),
                       dst.allocation, dst.offset, src.allocation, src.offset, bytes);
  }
  return call_plugin(device.call_site("copy_device_to_device"),
                     device.api()->copy_device_to_device, device.stream(), dst.address(),
                     src.address(), bytes);
}

xdev_status_t* enqueue_peer(LogicalDeviceState& device, DeviceMemory dst,
                            LogicalDeviceState& src_device, DeviceMemory src, uint64_t bytes) {
  if (auto* at = XDEV_AT_SLOT(device, copy_peer_at)) {
    return call_plugin(device.call_site("copy_peer_at"), at, device.stream(), dst.allocation,
                       dst.offset, src_device.handle(), src.allocation, src.offset, bytes);
  }
  return call_plugin(device.call_site("copy_peer"), device.api()->copy_peer, device.stream(),
                     dst.address(), src_device.handle(), src.address(), bytes);
}

#undef XDEV_AT_SLOT

}  // namespace xdev::detail
