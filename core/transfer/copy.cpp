// Copies between devices and between host and device: within one device,
// between logical devices of one physical device, peer copies inside one
// plugin, and staging through host memory otherwise.
#include "transfer/copy.hpp"

#include <algorithm>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "common/plugin_call.hpp"
#include "common/status.hpp"
#include "trace/trace.hpp"
#include "transfer/copy_slots.hpp"
#include "transfer/staging.hpp"

namespace xdev::detail {
namespace {

void upload_bytes(LogicalDeviceState* dst, DeviceMemory to, const void* host, uint64_t bytes);
void download_bytes(LogicalDeviceState* src, DeviceMemory from, void* host, uint64_t bytes);

// A copy on the trace: on the track of the device that receives the bytes
// (the source's, for device -> host).
void trace_copy(LogicalDeviceState* track, std::string_view direction, std::string_view path,
                std::string_view from, std::string_view to, uint64_t bytes, uint64_t begin_ns) {
  trace::Args args;
  args.num("bytes", bytes).str("direction", direction).str("path", path).str("from", from).str(
      "to", to);
  trace::complete(trace::Track{track->index(), track->name()}, "copy",
                  std::string("copy ") + std::string(direction), begin_ns, trace::now_ns(), args);
}

// Host <-> device transfers. The caller must not hold the device's stream lock.
void copy_within(LogicalDeviceState* dev, DeviceMemory dst, DeviceMemory src, uint64_t bytes) {
  std::lock_guard lock(dev->stream_mutex());
  check(enqueue_device_to_device(*dev, dst, src, bytes),
        "copying " + std::to_string(bytes) + " bytes within " + dev->name());
}

// Returns the path the bytes took (the trace's "path").
const char* transfer(LogicalDeviceState* src, DeviceMemory from, LogicalDeviceState* dst,
                     DeviceMemory to, uint64_t bytes) {
  if (bytes == 0) return "none";
  if (src == dst) {
    copy_within(dst, to, from, bytes);
    return "within the device";
  }
  src->synchronize();
  if (src->handle() == dst->handle()) {
    // Two logical devices of one physical device.
    copy_within(dst, to, from, bytes);
    dst->synchronize();
    return "within the physical device";
  }
  if (src->plugin() == dst->plugin() && (dst->api()->capabilities & XDEV_CAP_PEER_COPY)) {
    xdev_status_t* status;
    {
      std::lock_guard lock(dst->stream_mutex());
      status = enqueue_peer(*dst, to, *src, from, bytes);
    }
    if (status == nullptr) {
      dst->synchronize();
      return "peer";
    }
    if (status->code != XDEV_STATUS_UNIMPLEMENTED) {
      check(status, "peer copy of " + std::to_string(bytes) + " bytes from " + src->name() +
                        " to " + dst->name());
    }
    StatusPtr ignored(status);  // no direct path for this pair: stage below
  }
  // Host-addressable memory is addresses (the loader refuses it together
  // with XDEV_CAP_HANDLE_MEMORY).
  if (src->host_addressable()) {
    upload_bytes(dst, to, from.address(), bytes);
    return "from host-addressable memory";
  }
  if (dst->host_addressable()) {
    download_bytes(src, from, to.address(), bytes);
    return "to host-addressable memory";
  }
  std::vector<char> staging(bytes);
  download_bytes(src, from, staging.data(), bytes);
  upload_bytes(dst, to, staging.data(), bytes);
  return "staged through the host";
}

void upload_bytes(LogicalDeviceState* dst, DeviceMemory to, const void* host, uint64_t bytes) {
  if (bytes == 0) return;
  if (dst->host_addressable()) {
    dst->synchronize();
    std::memcpy(to.address(), host, bytes);
    return;
  }
  if (staging_buffers(*dst).upload(to, host, bytes)) return;  // pinned, double-buffered
  {
    std::lock_guard lock(dst->stream_mutex());
    check(enqueue_host_to_device(*dst, to, host, bytes),
          "copying " + std::to_string(bytes) + " bytes to " + dst->name());
  }
  // The host buffer may go away when we return.
  dst->synchronize();
}

void download_bytes(LogicalDeviceState* src, DeviceMemory from, void* host, uint64_t bytes) {
  if (bytes == 0) return;
  if (src->host_addressable()) {
    src->synchronize();
    std::memcpy(host, from.address(), bytes);
    return;
  }
  if (staging_buffers(*src).download(host, from, bytes)) return;  // pinned, double-buffered
  {
    std::lock_guard lock(src->stream_mutex());
    check(enqueue_device_to_host(*src, host, from, bytes),
          "copying " + std::to_string(bytes) + " bytes from " + src->name());
  }
  src->synchronize();
}

}  // namespace

void upload(LogicalDeviceState* dst, DeviceMemory to, const void* host, uint64_t bytes) {
  const uint64_t begin_ns = trace::on() ? trace::now_ns() : 0;
  upload_bytes(dst, to, host, bytes);
  if (begin_ns != 0) {
    trace_copy(dst, "host_to_device", dst->host_addressable() ? "memcpy" : "copy slot", "host",
               dst->name(), bytes, begin_ns);
  }
}

void download(LogicalDeviceState* src, DeviceMemory from, void* host, uint64_t bytes) {
  const uint64_t begin_ns = trace::on() ? trace::now_ns() : 0;
  download_bytes(src, from, host, bytes);
  if (begin_ns != 0) {
    trace_copy(src, "device_to_host", src->host_addressable() ? "memcpy" : "copy slot",
               src->name(), "host", bytes, begin_ns);
  }
}

void copy_between(LogicalDeviceState* src, DeviceMemory from, LogicalDeviceState* dst,
                  DeviceMemory to, uint64_t bytes) {
  const uint64_t begin_ns = trace::on() ? trace::now_ns() : 0;
  const char* path = transfer(src, from, dst, to, bytes);
  if (begin_ns != 0) {
    trace_copy(dst, "device_to_device", path, src->name(), dst->name(), bytes, begin_ns);
  }
}

}  // namespace xdev::detail
