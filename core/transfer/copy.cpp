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
#include "transfer/staging.hpp"

namespace xdev::detail {
namespace {

void upload_bytes(LogicalDeviceState* dst, void* dst_data, uint64_t dst_offset, const void* host,
                  uint64_t bytes);
void download_bytes(LogicalDeviceState* src, const void* src_data, uint64_t src_offset,
                    void* host, uint64_t bytes);

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
void copy_within(LogicalDeviceState* dev, void* dst, const void* src, uint64_t bytes) {
  std::lock_guard lock(dev->stream_mutex());
  check(call_plugin(dev->call_site("copy_device_to_device"), dev->api()->copy_device_to_device,
                    dev->stream(), dst, src, bytes),
        "copying " + std::to_string(bytes) + " bytes within " + dev->name());
}

// Returns the path the bytes took (the trace's "path").
const char* transfer(LogicalDeviceState* src, const char* src_ptr, LogicalDeviceState* dst,
                     char* dst_ptr, uint64_t bytes) {
  if (bytes == 0) return "none";
  if (src == dst) {
    copy_within(dst, dst_ptr, src_ptr, bytes);
    return "within the device";
  }
  src->synchronize();
  if (src->handle() == dst->handle()) {
    // Two logical devices of one physical device.
    copy_within(dst, dst_ptr, src_ptr, bytes);
    dst->synchronize();
    return "within the physical device";
  }
  if (src->plugin() == dst->plugin() && (dst->api()->capabilities & XDEV_CAP_PEER_COPY)) {
    xdev_status_t* status;
    {
      std::lock_guard lock(dst->stream_mutex());
      status = call_plugin(dst->call_site("copy_peer"), dst->api()->copy_peer, dst->stream(),
                           dst_ptr, src->handle(), src_ptr, bytes);
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
  if (src->host_addressable()) {
    upload_bytes(dst, dst_ptr, 0, src_ptr, bytes);
    return "from host-addressable memory";
  }
  if (dst->host_addressable()) {
    download_bytes(src, src_ptr, 0, dst_ptr, bytes);
    return "to host-addressable memory";
  }
  std::vector<char> staging(bytes);
  download_bytes(src, src_ptr, 0, staging.data(), bytes);
  upload_bytes(dst, dst_ptr, 0, staging.data(), bytes);
  return "staged through the host";
}

void upload_bytes(LogicalDeviceState* dst, void* dst_data, uint64_t dst_offset, const void* host,
                  uint64_t bytes) {
  if (bytes == 0) return;
  char* target = static_cast<char*>(dst_data) + dst_offset;
  if (dst->host_addressable()) {
    dst->synchronize();
    std::memcpy(target, host, bytes);
    return;
  }
  if (dst->staging().upload(target, host, bytes)) return;  // pinned, double-buffered
  {
    std::lock_guard lock(dst->stream_mutex());
    check(call_plugin(dst->call_site("copy_host_to_device"), dst->api()->copy_host_to_device,
                      dst->stream(), target, host, bytes),
          "copying " + std::to_string(bytes) + " bytes to " + dst->name());
  }
  // The host buffer may go away when we return.
  dst->synchronize();
}

void download_bytes(LogicalDeviceState* src, const void* src_data, uint64_t src_offset,
                    void* host, uint64_t bytes) {
  if (bytes == 0) return;
  const char* source = static_cast<const char*>(src_data) + src_offset;
  if (src->host_addressable()) {
    src->synchronize();
    std::memcpy(host, source, bytes);
    return;
  }
  if (src->staging().download(host, source, bytes)) return;  // pinned, double-buffered
  {
    std::lock_guard lock(src->stream_mutex());
    check(call_plugin(src->call_site("copy_device_to_host"), src->api()->copy_device_to_host,
                      src->stream(), host, source, bytes),
          "copying " + std::to_string(bytes) + " bytes from " + src->name());
  }
  src->synchronize();
}

}  // namespace

void upload(LogicalDeviceState* dst, void* dst_data, uint64_t dst_offset, const void* host,
            uint64_t bytes) {
  const uint64_t begin_ns = trace::on() ? trace::now_ns() : 0;
  upload_bytes(dst, dst_data, dst_offset, host, bytes);
  if (begin_ns != 0) {
    trace_copy(dst, "host_to_device", dst->host_addressable() ? "memcpy" : "copy slot", "host",
               dst->name(), bytes, begin_ns);
  }
}

void download(LogicalDeviceState* src, const void* src_data, uint64_t src_offset, void* host,
              uint64_t bytes) {
  const uint64_t begin_ns = trace::on() ? trace::now_ns() : 0;
  download_bytes(src, src_data, src_offset, host, bytes);
  if (begin_ns != 0) {
    trace_copy(src, "device_to_host", src->host_addressable() ? "memcpy" : "copy slot",
               src->name(), "host", bytes, begin_ns);
  }
}

namespace {

void traced_transfer(LogicalDeviceState* src, const char* src_ptr, LogicalDeviceState* dst,
                     char* dst_ptr, uint64_t bytes) {
  const uint64_t begin_ns = trace::on() ? trace::now_ns() : 0;
  const char* path = transfer(src, src_ptr, dst, dst_ptr, bytes);
  if (begin_ns != 0) {
    trace_copy(dst, "device_to_device", path, src->name(), dst->name(), bytes, begin_ns);
  }
}

}  // namespace

std::shared_ptr<TensorImpl> copy_tensor(const TensorImpl& src, LogicalDeviceState* dst) {
  const uint64_t item = itemsize(src.dtype);
  if (src.contiguous() || src.num_elements() == 0) {
    auto out = make_tensor(dst, src.dtype, src.shape);
    traced_transfer(src.device(), static_cast<const char*>(src.storage->data) + src.byte_offset,
                    dst, static_cast<char*>(out->storage->data), src.num_elements() * item);
    return out;
  }
  // A strided view: move only the bytes it spans, keep its strides.
  auto out = std::make_shared<TensorImpl>();
  auto storage = std::make_shared<Storage>(dst, std::max<uint64_t>(src.span_bytes(), 1));
  out->storage = storage.get();
  out->owner = storage;
  out->dtype = src.dtype;
  out->shape = src.shape;
  out->strides = src.strides;
  out->byte_offset = 0;
  traced_transfer(src.device(), static_cast<const char*>(src.storage->data) + src.byte_offset,
                  dst, static_cast<char*>(storage->data), src.span_bytes());
  return out;
}

}  // namespace xdev::detail
