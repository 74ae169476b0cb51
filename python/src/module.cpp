// The extension module xdev._xdev.
#include "bindings.hpp"

#include <nanobind/stl/string.h>

#include <string>

namespace xdev::python {

nb::object package_function(const char* module, const char* name) {
  return nb::module_::import_(module).attr(name);
}

nb::handle cached_package_function(PyObject*& slot, const char* module, const char* name) {
  // Called with the GIL held. No function-local static: its guard would be
  // held across the import, which may let go of the GIL, and a second thread
  // waiting on the guard with the GIL would deadlock the first. Two threads may
  // both import; the second keeps the first's object.
  if (slot == nullptr) {
    nb::object f = package_function(module, name);
    if (slot == nullptr) slot = f.release().ptr();
  }
  return nb::handle(slot);
}

}  // namespace xdev::python

NB_MODULE(_xdev, m) {
  using namespace xdev::python;
  m.doc() = "xdev's C++ SDK, bound with nanobind (use the xdev package, not this module)";
  m.attr("__version__") = std::string(xdev::version());
  bind_errors(m);
  bind_devices(m);
  bind_tensor(m);
  bind_ops(m);
  bind_interop(m);
  bind_distribute(m);
  bind_events(m);
  bind_training(m);
}
