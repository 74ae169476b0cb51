#include "devices/logical_device.hpp"

#include "common/log.hpp"
#include "devices/runtime.hpp"
#include "common/status.hpp"

namespace xdev::detail {
namespace {

// The logical device whose stream this thread holds (StreamLock), if any.
thread_local LogicalDeviceState* t_stream_holder = nullptr;

}  // namespace

OpenedDevice::~OpenedDevice() {
  if (handle != nullptr && plugin != nullptr && plugin->api != nullptr && plugin->handle) {
    call_plugin_void({plugin->path.native(), "device_close", ""}, plugin->api->device_close,
                     handle);
  }
}

LogicalDeviceState::LogicalDeviceState(Device info, int index,
                                       const PhysicalDeviceRecord& physical,
                                       std::shared_ptr<OpenedDevice> opened,
                                       const KernelTable& kernels, PoolOptions pool_options)
    : info_(std::move(info)),
      index_(index),
      physical_(&physical),
      priority_(physical.priority),
      opened_(std::move(opened)),
      kernels_(&kernels),
      raw_(*opened_->plugin->api, opened_->handle, info_.name, opened_->plugin->path.native()),
      pool_(raw_, pool_options) {
  check(call_plugin(call_site("stream_create"), api()->stream_create, handle(), &stream_),
        describe(call_site("stream_create")));
  // The bit exists since ABI 1.1: a 1.0 plugin's table never means it.
  concurrent_streams_ = plugin()->abi_version.minor >= 1 &&
                        (api()->capabilities & XDEV_CAP_CONCURRENT_STREAMS) != 0;
  if (xdev_status_t* s = call_plugin(call_site("event_create"), api()->event_create, handle(),
                                     &queue_event_)) {
    call_plugin_void(call_site("stream_destroy"), api()->stream_destroy, stream_);
    stream_ = nullptr;
    check(s, describe(call_site("event_create")));
  }
  handle_memory_ = (api()->capabilities & XDEV_CAP_HANDLE_MEMORY) != 0;
  raw_.set_wait_for_device_work([this] { return wait_for_queued_work(); });
}

LogicalDeviceState::~LogicalDeviceState() {
  if (queue_event_ != nullptr) {
    call_plugin_void(call_site("event_destroy"), api()->event_destroy, queue_event_);
  }
  if (stream_ != nullptr) {
    if (xdev_status_t* s =
            call_plugin(call_site("stream_synchronize"), api()->stream_synchronize, stream_)) {
      log(XDEV_LOG_WARNING, "at shutdown, " + info_.name + ": " + take_message(s));
    }
    staging_.buffers.reset();  // its events and pinned buffers, while the stream exists
    call_plugin_void(call_site("stream_destroy"), api()->stream_destroy, stream_);
  }
}

void LogicalDeviceState::trace_memory(const char* what, void* ptr) noexcept {
  try {
    if (ptr == nullptr) return;
    trace::Args args;
    args.id("pool", info_.name).num("bytes", pool_.allocation_size(ptr));
    trace::instant(trace::Track{index_, info_.name}, "memory", what, args);
  } catch (const std::exception&) {
    // Tracing never changes what the program does.
  }
}

void LogicalDeviceState::deallocate(void* ptr) noexcept {
  try {
    if (trace::on()) trace_memory("free", ptr);
    pool_.deallocate(ptr);
  } catch (const std::exception& e) {
    log(XDEV_LOG_ERROR, std::string("freeing device memory: ") + e.what());
  }
}

void LogicalDeviceState::synchronize() {
  std::lock_guard lock(stream_mutex_);
  check(call_plugin(call_site("stream_synchronize"), api()->stream_synchronize, stream_),
        describe(call_site("stream_synchronize")));
}

LogicalDeviceState::StreamLock::StreamLock(LogicalDeviceState& device)
    : lock_(device.stream_mutex_), previous_(t_stream_holder) {
  t_stream_holder = &device;
}

LogicalDeviceState::StreamLock::~StreamLock() { t_stream_holder = previous_; }

bool LogicalDeviceState::wait_for_queued_work() {
  auto record_and_wait = [this] {
    check(call_plugin(call_site("event_record"), api()->event_record, queue_event_, stream_),
          describe(call_site("event_record")));
    check(call_plugin(call_site("event_synchronize"), api()->event_synchronize, queue_event_),
          describe(call_site("event_synchronize")));
  };
  if (concurrent_streams_ || t_stream_holder == this) {
    record_and_wait();
    return true;
  }
  std::unique_lock lock(stream_mutex_, std::try_to_lock);
  if (!lock.owns_lock()) return false;
  record_and_wait();
  return true;
}

}  // namespace xdev::detail
