#include "device_state.hpp"

#include "log.hpp"
#include "runtime.hpp"
#include "status.hpp"
#include "transfer/staging.hpp"

namespace xdev::detail {

OpenedDevice::~OpenedDevice() {
  if (handle != nullptr && plugin != nullptr && plugin->api != nullptr && plugin->handle) {
    plugin->api->device_close(handle);
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
      raw_(*opened_->plugin->api, opened_->handle, info_.name),
      pool_(raw_, pool_options) {
  check(api()->stream_create(handle(), &stream_), "creating a stream on " + info_.name);
  concurrent_streams_ = (api()->capabilities & XDEV_CAP_CONCURRENT_STREAMS) != 0;
  staging_ = std::make_unique<StagingBuffers>(*this);
}

LogicalDeviceState::~LogicalDeviceState() {
  if (stream_ != nullptr) {
    if (xdev_status_t* s = api()->stream_synchronize(stream_)) {
      log(XDEV_LOG_WARNING, "at shutdown, " + info_.name + ": " + take_message(s));
    }
    staging_.reset();  // its events and pinned buffers, while the stream exists
    api()->stream_destroy(stream_);
  }
}

void LogicalDeviceState::deallocate(void* ptr) noexcept {
  try {
    pool_.deallocate(ptr);
  } catch (const std::exception& e) {
    log(XDEV_LOG_ERROR, std::string("freeing device memory: ") + e.what());
  }
}

void LogicalDeviceState::synchronize() {
  std::lock_guard lock(stream_mutex_);
  check(api()->stream_synchronize(stream_), "synchronizing " + info_.name);
}

}  // namespace xdev::detail
