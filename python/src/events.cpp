// Tracing, synchronization and events (<xdev/trace.hpp>, <xdev/event.hpp>):
// xdev.trace.start/stop, xdev.synchronize, xdev.Event, xdev.elapsed_ms.
#include "bindings.hpp"

#include <nanobind/stl/string.h>
#include <nanobind/stl/string_view.h>

#include <string>

#include <xdev/event.hpp>
#include <xdev/trace.hpp>

namespace xdev::python {

void bind_events(nb::module_& m) {
  m.def("trace_start", &trace::start, nb::arg("path"),
        "Starts writing a Chrome trace-event file (Perfetto, chrome://tracing) at `path`.");
  m.def("trace_stop", &trace::stop, release_gil(),
        "Stops tracing; the file is complete JSON from here on.");
  m.def("trace_active", &trace::active, "True while a trace is being written.");

  m.def("synchronize", [](const std::string& device) {
          if (device.empty()) {
            xdev::synchronize();
          } else {
            xdev::synchronize(std::string_view(device));
          }
        },
        nb::arg("device") = "", release_gil(),
        "Blocks until the work enqueued on `device` (every device when empty) completed.");

  nb::class_<Event>(m, "Event",
                    "A marker in a device's stream (torch.cuda.Event, with timing).")
      .def(nb::init<std::string_view>(), nb::arg("device") = "")
      .def("record", &Event::record, release_gil(),
           "Marks the current end of the device's stream.")
      .def("synchronize", &Event::synchronize, release_gil(),
           "Blocks until the event completed.")
      .def("query", &Event::query, "True when the event completed (does not block).")
      .def("wait", &Event::wait, nb::arg("device"), release_gil(),
           "Makes later work on `device` wait for this event, without blocking the host.")
      .def("elapsed_ms", [](const Event& start, const Event& end) { return elapsed_ms(start, end); },
           nb::arg("end"), release_gil(),
           "Milliseconds of device time from this event to `end` (waits for `end`).")
      .def_prop_ro("recorded", &Event::recorded)
      .def_prop_ro("device", [](const Event& e) { return e.device().name; });

  m.def("elapsed_ms", &elapsed_ms, nb::arg("start"), nb::arg("end"), release_gil(),
        "Milliseconds of device time from `start` to `end` (both recorded on one device).");
}

}  // namespace xdev::python
