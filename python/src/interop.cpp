// DLPack import (xdev.from_dlpack's C++ half) and safetensors files.
#include "bindings.hpp"

#include <nanobind/stl/map.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/string_view.h>
#include <nanobind/stl/tuple.h>

#include <map>
#include <string>

#include "interop/dlpack.h"

namespace xdev::python {

void bind_interop(nb::module_& m) {
  // Takes a DLPack capsule ("dltensor_versioned" or the legacy "dltensor");
  // on success the capsule is renamed "used_..." so its destructor leaves
  // the memory to xdev.
  m.def("_from_capsule", [](nb::handle capsule) {
    PyObject* c = capsule.ptr();
    if (PyCapsule_IsValid(c, "dltensor_versioned")) {
      auto* managed =
          static_cast<DLManagedTensorVersioned*>(PyCapsule_GetPointer(c, "dltensor_versioned"));
      Tensor t;
      {
        nb::gil_scoped_release release;
        t = from_dlpack(managed);
      }
      PyCapsule_SetName(c, "used_dltensor_versioned");
      return t;
    }
    if (PyCapsule_IsValid(c, "dltensor")) {
      auto* managed = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(c, "dltensor"));
      Tensor t;
      {
        nb::gil_scoped_release release;
        t = from_dlpack(managed);
      }
      PyCapsule_SetName(c, "used_dltensor");
      return t;
    }
    throw nb::value_error(
        "from_dlpack: not a DLPack capsule, or one already consumed (a capsule can be used once)");
  }, nb::arg("capsule"));
  m.def("dlpack_zero_copy_device", [](std::tuple<int32_t, int32_t> device) {
    return dlpack_zero_copy_device({std::get<0>(device), std::get<1>(device)});
  }, nb::arg("device"), release_gil(),
        "The logical device that takes memory on this DLPack device (type, id) without a "
        "copy, or None.");

  m.def("dlpack_stream", [](std::string_view device) { return dlpack_stream(device); },
        nb::arg("device"), release_gil(),
        "The native handle of the device's stream for __dlpack__(stream=...), or None.");
  m.def("dlpack_stream", [](const Device& device) { return dlpack_stream(device.name); },
        nb::arg("device"), release_gil());

  m.def("_load_file", [](const std::string& path, std::string_view device) {
    SafetensorsFile file;
    {
      nb::gil_scoped_release release;
      file = load_file(path, device);
    }
    return nb::make_tuple(file.tensors, file.dtypes, file.metadata);
  }, nb::arg("filename"), nb::arg("device") = "");
  m.def("_save_file", [](const std::map<std::string, Tensor>& tensors, const std::string& path,
                         const std::map<std::string, std::string>& metadata,
                         const std::map<std::string, std::string>& dtypes) {
    save_file(tensors, path, metadata, dtypes);
  }, nb::arg("tensors"), nb::arg("filename"), nb::arg("metadata"), nb::arg("dtypes"),
        release_gil());
}

}  // namespace xdev::python
