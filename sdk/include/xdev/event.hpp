// Synchronizing with devices and timing their work (CUDA events, the way
// torch.cuda.Event and cudaEventElapsedTime are used):
//
//   xdev::Event start("/GPU:0"), end("/GPU:0");
//   start.record();
//   auto c = xdev::matmul(x, w);          // enqueued on GPU:0's stream
//   end.record();
//   double ms = xdev::elapsed_ms(start, end);   // waits for `end`
//
// Ops return once their work is enqueued; host time around them measures the
// enqueue, not the device. Time device work with events, or synchronize()
// before reading a host clock.
#pragma once

#include <memory>
#include <string_view>

#include <xdev/device.hpp>
#include <xdev/export.hpp>

namespace xdev {

// Blocks until all work enqueued so far on `device` (any spelling:
// "GPU:0", "/device:CPU:0") completed. Throws xdev::Error with the first
// asynchronous error of that work, naming the device, or kNotFound for an
// unknown device.
XDEV_API void synchronize(std::string_view device);
XDEV_API void synchronize(const Device& device);
// Every logical device.
XDEV_API void synchronize();

// A marker in a device's stream.
class XDEV_API Event {
 public:
  // An event of `device`; "" means the device a new tensor would go to (the
  // innermost DeviceScope's, else the first device). Throws kNotFound for an
  // unknown device.
  explicit Event(std::string_view device = "");
  ~Event();
  Event(Event&&) noexcept;
  Event& operator=(Event&&) noexcept;
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;

  // Marks the current end of the device's stream: the event completes when
  // all work enqueued on the device before it completed. Recording again
  // moves the mark.
  void record();
  // Blocks the host until the event completed (at once if never recorded).
  void synchronize() const;
  // True when the event completed (or was never recorded); does not block.
  bool query() const;
  // Makes work enqueued later on `device`'s stream wait for this event,
  // without blocking the host (devices of another plugin: the host waits).
  void wait(std::string_view device) const;
  bool recorded() const;
  const Device& device() const;

  // The core's state (opaque).
  struct Impl;
  const Impl* impl() const { return impl_.get(); }

 private:
  std::unique_ptr<Impl> impl_;
};

// Milliseconds of device time from `start` to `end` (both recorded, on one
// device); waits for `end` to complete first. Throws Error(kUnimplemented)
// naming the plugin when its devices cannot time events (no
// XDEV_CAP_EVENT_TIMING, plugins before ABI 1.4), kInvalidArgument when the
// events belong to two devices, kFailedPrecondition when one was never
// recorded.
XDEV_API double elapsed_ms(const Event& start, const Event& end);

}  // namespace xdev
