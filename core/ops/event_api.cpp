// <xdev/event.hpp>: synchronize() and Event over a logical device's stream
// and the plugin's event slots (elapsed_ms: ABI 1.4's event_elapsed_ms).
// Here in ops/ because it resolves device names and the scope's device
// through placement/ (core/README.md: calls go down the layers).
#include <xdev/event.hpp>

#include <mutex>

#include <xdev/error.hpp>

#include "common/status.hpp"
#include "devices/runtime.hpp"
#include "placement/decide.hpp"

namespace xdev {

using detail::LogicalDeviceState;

void synchronize(std::string_view device) { detail::resolve_device(device)->synchronize(); }
void synchronize(const Device& device) { synchronize(device.name); }
void synchronize() {
  for (const auto& d : detail::Runtime::global().logical_devices()) d->synchronize();
}

struct Event::Impl {
  LogicalDeviceState* device = nullptr;
  xdev_event_t* event = nullptr;
  bool recorded = false;
  ~Impl() {
    if (event != nullptr) device->api()->event_destroy(event);
  }
};

Event::Event(std::string_view device) : impl_(std::make_unique<Impl>()) {
  detail::Runtime::global().ensure_initialized();
  impl_->device =
      device.empty() ? detail::place_creation("Event") : detail::resolve_device(device);
  LogicalDeviceState* d = impl_->device;
  detail::check(d->api()->event_create(d->handle(), &impl_->event),
                "creating an event on " + d->name());
}

Event::~Event() = default;
Event::Event(Event&&) noexcept = default;
Event& Event::operator=(Event&&) noexcept = default;

namespace {

// Runs `call` under the device's stream rule (plugin.h).
template <typename F>
xdev_status_t* on_stream(LogicalDeviceState* d, F&& call) {
  if (d->concurrent_streams()) return call();
  std::lock_guard lock(d->stream_mutex());
  return call();
}

const Event::Impl& live(const Event::Impl* impl) {
  if (impl == nullptr) {
    throw Error(ErrorCode::kFailedPrecondition, "the event was moved from");
  }
  return *impl;
}

}  // namespace

void Event::record() {
  live(impl_.get());
  LogicalDeviceState* d = impl_->device;
  detail::check(on_stream(d, [&] { return d->api()->event_record(impl_->event, d->stream()); }),
                "recording an event on " + d->name());
  impl_->recorded = true;
}

void Event::synchronize() const {
  const Impl& e = live(impl_.get());
  detail::check(e.device->api()->event_synchronize(e.event),
                "waiting for an event of " + e.device->name());
}

bool Event::query() const {
  const Impl& e = live(impl_.get());
  int32_t done = 0;
  detail::check(e.device->api()->event_query(e.event, &done),
                "querying an event of " + e.device->name());
  return done != 0;
}

void Event::wait(std::string_view device) const {
  const Impl& e = live(impl_.get());
  LogicalDeviceState* d = detail::resolve_device(device);
  if (d->plugin() != e.device->plugin()) {
    synchronize();  // the ABI orders streams of one plugin only
    return;
  }
  detail::check(on_stream(d, [&] { return d->api()->stream_wait_event(d->stream(), e.event); }),
                "making " + d->name() + " wait for an event of " + e.device->name());
}

bool Event::recorded() const { return live(impl_.get()).recorded; }
const Device& Event::device() const { return live(impl_.get()).device->info(); }

double elapsed_ms(const Event& start, const Event& end) {
  const Event::Impl& a = live(start.impl());
  const Event::Impl& b = live(end.impl());
  if (a.device->handle() != b.device->handle()) {
    throw Error(ErrorCode::kInvalidArgument,
                "elapsed_ms: the events belong to two devices (" + a.device->name() + " and " +
                    b.device->name() + ")");
  }
  if (!a.recorded || !b.recorded) {
    throw Error(ErrorCode::kFailedPrecondition,
                std::string("elapsed_ms: the ") + (!a.recorded ? "start" : "end") +
                    " event was never recorded");
  }
  const xdev_plugin_api_t* api = a.device->api();
  if ((api->capabilities & XDEV_CAP_EVENT_TIMING) == 0 ||
      !XDEV_HAS_FIELD(api, xdev_plugin_api_t, event_elapsed_ms)) {
    throw Error(ErrorCode::kUnimplemented,
                "elapsed_ms: plugin " + a.device->plugin()->name + " of " + a.device->name() +
                    " cannot time events (it does not declare XDEV_CAP_EVENT_TIMING, ABI 1.4)");
  }
  end.synchronize();
  start.synchronize();
  double ms = 0;
  detail::check(api->event_elapsed_ms(a.event, b.event, &ms),
                "timing events of " + a.device->name());
  return ms;
}

}  // namespace xdev
