// The xdev Python extension (xdev._xdev): nanobind bindings of the C++ SDK.
// The Python package (python/xdev) adds TensorFlow's module layout on top.
//
// Every call that runs ops, copies or waits for a device releases the GIL;
// the SDK itself is thread-safe, so Python threads run ops in parallel.
#pragma once

#include <nanobind/nanobind.h>

#include <optional>

#include <xdev/xdev.hpp>

namespace xdev::python {

namespace nb = nanobind;

// Releases the GIL for the duration of a bound call.
using release_gil = nb::call_guard<nb::gil_scoped_release>;

void bind_errors(nb::module_& m);
void bind_devices(nb::module_& m);
void bind_tensor(nb::module_& m);
void bind_ops(nb::module_& m);
void bind_interop(nb::module_& m);
void bind_distribute(nb::module_& m);
void bind_events(nb::module_& m);
void bind_training(nb::module_& m);

// A DType from a Python object: an xdev.DType, a name ("float32"), a NumPy
// dtype or scalar type. Raises TypeError for anything else.
DType to_dtype(nb::handle obj);

// A Tensor from a tensor-like Python object. Tensors pass as they are; Python
// numbers become scalars of `like` (or int32/int64, float32, bool without it,
// as TensorFlow does); everything else (NumPy arrays, nested lists, objects
// with __xdev_tensor__, DLPack exporters) goes through the package's
// converter (xdev._convert.convert_to_tensor). Called with the GIL held.
Tensor to_tensor(nb::handle obj, std::optional<DType> like = std::nullopt);

// tf.linalg.matmul: MatMul for two matrices, BatchMatMulV2 (the batch axes
// broadcast) when either input has rank > 2. Used by xdev.matmul and `@`.
Tensor tf_matmul(const Tensor& a, const Tensor& b, bool transpose_a = false,
                 bool transpose_b = false);

// Calls a function of the pure-Python part of the package, by module and name.
nb::object package_function(const char* module, const char* name);
// package_function, looked up once and kept in `slot` (a namespace-scope
// PyObject* starting null) for the life of the process.
nb::handle cached_package_function(PyObject*& slot, const char* module, const char* name);

}  // namespace xdev::python
