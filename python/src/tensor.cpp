// xdev.Tensor and xdev.DType: properties, reading back (numpy(), the buffer
// protocol, DLPack), operators, indexing, and the conversion of Python
// values to tensors.
#include "bindings.hpp"

#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/string_view.h>
#include <nanobind/stl/vector.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <sstream>
#include <vector>

#include "interop/dlpack.h"

namespace xdev::python {
namespace {

// --- dtypes ---

nb::dlpack::dtype dl_dtype(DType dtype) {
  switch (dtype) {
    case DType::kFloat32: return nb::dtype<float>();
    case DType::kFloat64: return nb::dtype<double>();
    case DType::kInt32: return nb::dtype<int32_t>();
    case DType::kInt64: return nb::dtype<int64_t>();
    case DType::kBool: return nb::dtype<bool>();
    case DType::kFloat16:  // NumPy's float16
      return {static_cast<uint8_t>(nb::dlpack::dtype_code::Float), 16, 1};
    case DType::kBFloat16:  // ml_dtypes' bfloat16 (NumPy has none)
      return {static_cast<uint8_t>(nb::dlpack::dtype_code::Bfloat), 16, 1};
    case DType::kUInt8: return nb::dtype<uint8_t>();
    case DType::kInt8: return nb::dtype<int8_t>();
  }
  return nb::dtype<float>();
}

std::optional<DType> from_dl_dtype(nb::dlpack::dtype t) {
  if (t == nb::dtype<float>()) return DType::kFloat32;
  if (t == nb::dtype<double>()) return DType::kFloat64;
  if (t == nb::dtype<int32_t>()) return DType::kInt32;
  if (t == nb::dtype<int64_t>()) return DType::kInt64;
  if (t == nb::dtype<bool>()) return DType::kBool;
  if (t == nb::dtype<uint8_t>()) return DType::kUInt8;
  if (t == nb::dtype<int8_t>()) return DType::kInt8;
  if (t == dl_dtype(DType::kFloat16)) return DType::kFloat16;
  if (t == dl_dtype(DType::kBFloat16)) return DType::kBFloat16;
  return std::nullopt;
}

// --- scalars ---

std::string python_repr(nb::handle h) { return nb::cast<std::string>(nb::repr(h)); }

[[noreturn]] void cannot_convert(nb::handle value, DType dtype) {
  throw Error(ErrorCode::kInvalidArgument, "Cannot convert " + python_repr(value) +
                                               " to EagerTensor of dtype " +
                                               std::string(to_string(dtype)));
}

template <typename T>
Tensor scalar_of(T value, DType dtype) {
  return constant(&value, dtype, Shape{});
}

// A Python bool, int or float as a scalar tensor (TensorFlow's rules: the
// dtype of `like` when given, else bool, int32 (int64 when it does not fit),
// float32). Returns an undefined Tensor for other objects (NumPy scalars
// included: they keep their own dtype).
Tensor python_scalar(nb::handle obj, std::optional<DType> like) {
  if (PyBool_Check(obj.ptr())) {
    const bool v = obj.ptr() == Py_True;
    const DType d = like.value_or(DType::kBool);
    switch (d) {
      case DType::kBool: return scalar_of<uint8_t>(v ? 1 : 0, d);
      case DType::kInt32: return scalar_of<int32_t>(v ? 1 : 0, d);
      case DType::kInt64: return scalar_of<int64_t>(v ? 1 : 0, d);
      case DType::kFloat32: return scalar_of<float>(v ? 1.f : 0.f, d);
      case DType::kFloat64: return scalar_of<double>(v ? 1.0 : 0.0, d);
      case DType::kFloat16: return scalar_of<float16>(float16(v ? 1.f : 0.f), d);
      case DType::kBFloat16: return scalar_of<bfloat16>(bfloat16(v ? 1.f : 0.f), d);
      case DType::kUInt8: return scalar_of<uint8_t>(v ? 1 : 0, d);
      case DType::kInt8: return scalar_of<int8_t>(v ? 1 : 0, d);
    }
    cannot_convert(obj, d);
  }
  // Exact types: NumPy's float64 is a Python float subclass but keeps its dtype.
  if (PyLong_CheckExact(obj.ptr())) {
    int overflow = 0;
    const long long v = PyLong_AsLongLongAndOverflow(obj.ptr(), &overflow);
    if (v == -1 && PyErr_Occurred()) throw nb::python_error();
    const bool fits32 = overflow == 0 && v >= std::numeric_limits<int32_t>::min() &&
                        v <= std::numeric_limits<int32_t>::max();
    const DType d = like.value_or(fits32 || overflow != 0 ? DType::kInt32 : DType::kInt64);
    switch (d) {
      case DType::kBool: cannot_convert(obj, d);
      case DType::kInt32:
        if (!fits32) cannot_convert(obj, d);
        return scalar_of<int32_t>(static_cast<int32_t>(v), d);
      case DType::kInt64:
        if (overflow != 0) cannot_convert(obj, d);
        return scalar_of<int64_t>(v, d);
      case DType::kFloat32:
        return scalar_of<float>(static_cast<float>(PyLong_AsDouble(obj.ptr())), d);
      case DType::kFloat64: return scalar_of<double>(PyLong_AsDouble(obj.ptr()), d);
      case DType::kFloat16: return scalar_of<float16>(float16(PyLong_AsDouble(obj.ptr())), d);
      case DType::kBFloat16:
        return scalar_of<bfloat16>(bfloat16(PyLong_AsDouble(obj.ptr())), d);
      case DType::kUInt8:
        if (overflow != 0 || v < 0 || v > 255) cannot_convert(obj, d);
        return scalar_of<uint8_t>(static_cast<uint8_t>(v), d);
      case DType::kInt8:
        if (overflow != 0 || v < -128 || v > 127) cannot_convert(obj, d);
        return scalar_of<int8_t>(static_cast<int8_t>(v), d);
    }
    cannot_convert(obj, d);
  }
  if (PyFloat_CheckExact(obj.ptr())) {
    const double v = PyFloat_AS_DOUBLE(obj.ptr());
    const DType d = like.value_or(DType::kFloat32);
    switch (d) {
      case DType::kFloat32: return scalar_of<float>(static_cast<float>(v), d);
      case DType::kFloat64: return scalar_of<double>(v, d);
      case DType::kFloat16: return scalar_of<float16>(float16(v), d);  // rounded once
      case DType::kBFloat16: return scalar_of<bfloat16>(bfloat16(v), d);
      default: cannot_convert(obj, d);
    }
  }
  return Tensor();
}

PyObject* g_converter = nullptr;  // xdev._convert.convert_to_tensor, kept for the process
// The Python functions the Tensor type calls (cached_package_function).
PyObject* g_getitem = nullptr;
PyObject* g_as_dtype = nullptr;
PyObject* g_tensor_array = nullptr;
PyObject* g_tensor_repr = nullptr;
PyObject* g_tensor_str = nullptr;
PyObject* g_tensor_eq = nullptr;
PyObject* g_tensor_ne = nullptr;
PyObject* g_tensor_iter = nullptr;
PyObject* g_bfloat16_view = nullptr;

// --- reading back ---

// A fresh NumPy array with the tensor's values (a copy, writable).
nb::object to_numpy(const Tensor& t) {
  HostTensor* host;
  {
    nb::gil_scoped_release release;
    host = new HostTensor(t.to_host());
  }
  nb::capsule owner(host, [](void* p) noexcept { delete static_cast<HostTensor*>(p); });
  size_t shape[kMaxRank];
  for (int i = 0; i < host->shape().rank(); ++i) shape[i] = static_cast<size_t>(host->shape()[static_cast<size_t>(i)]);
  // NumPy has no bfloat16: its bits go out as uint16, viewed as ml_dtypes'
  // bfloat16 (what TensorFlow and JAX hand over) by xdev.dtypes.
  const bool bf16 = host->dtype() == DType::kBFloat16;
  nb::ndarray<nb::numpy> array(host->bytes(), static_cast<size_t>(host->shape().rank()), shape,
                               owner, nullptr,
                               bf16 ? nb::dtype<uint16_t>() : dl_dtype(host->dtype()));
  nb::object out = array.cast();
  if (bf16) out = cached_package_function(g_bfloat16_view, "xdev.dtypes", "_bfloat16_view")(out);
  return out;
}

// One value of a one-element tensor, as a Python object.
nb::object item(const Tensor& t, const char* what) {
  if (t.num_elements() != 1) {
    std::ostringstream s;
    s << what << " needs a tensor of one element, not shape " << t.shape();
    throw nb::type_error(s.str().c_str());
  }
  std::optional<HostTensor> values;
  {
    nb::gil_scoped_release release;
    values.emplace(t.to_host());
  }
  const HostTensor& host = *values;
  const std::byte* p = host.bytes();
  switch (host.dtype()) {
    case DType::kFloat32: { float v; std::memcpy(&v, p, 4); return nb::float_(v); }
    case DType::kFloat64: { double v; std::memcpy(&v, p, 8); return nb::float_(v); }
    case DType::kInt32: { int32_t v; std::memcpy(&v, p, 4); return nb::int_(v); }
    case DType::kInt64: { int64_t v; std::memcpy(&v, p, 8); return nb::int_(v); }
    case DType::kBool: return nb::bool_(static_cast<uint8_t>(*p) != 0);
    case DType::kFloat16:
    case DType::kBFloat16: return nb::float_(host.value_as<double>(0));
    case DType::kUInt8:
    case DType::kInt8: return nb::int_(host.value_as<int64_t>(0));
  }
  return nb::none();
}

// --- the buffer protocol (host-addressable tensors, read-only) ---

struct BufferBlock {
  DLManagedTensorVersioned* managed = nullptr;
  Py_ssize_t shape[kMaxRank] = {};
  Py_ssize_t strides[kMaxRank] = {};
  char format[2] = {0, 0};
};

char format_char(DType dtype) {
  switch (dtype) {
    case DType::kFloat32: return 'f';
    case DType::kFloat64: return 'd';
    case DType::kInt32: return 'i';
    case DType::kInt64: return 'q';
    case DType::kBool: return '?';
    case DType::kFloat16: return 'e';
    case DType::kUInt8: return 'B';
    case DType::kInt8: return 'b';
    case DType::kBFloat16: return 0;  // no struct format: refused
  }
  return 'B';
}

int tensor_getbuffer(PyObject* self, Py_buffer* view, int flags) {
  view->obj = nullptr;
  if ((flags & PyBUF_WRITABLE) == PyBUF_WRITABLE) {
    PyErr_SetString(PyExc_BufferError, "xdev tensors are immutable: their buffer is read-only");
    return -1;
  }
  const Tensor& t = *nb::inst_ptr<Tensor>(self);
  auto block = std::make_unique<BufferBlock>();
  try {
    if (dlpack_device(t).device_type != kDLCPU) {
      const std::string message = "the tensor lives on " + t.device().name +
                                  ", whose memory the host cannot read; use .numpy() for a copy";
      PyErr_SetString(PyExc_BufferError, message.c_str());
      return -1;
    }
    nb::gil_scoped_release release;
    block->managed = to_dlpack(t);
  } catch (const std::exception& e) {
    PyErr_SetString(PyExc_BufferError, e.what());
    return -1;
  }
  const DLTensor& dl = block->managed->dl_tensor;
  const Py_ssize_t item = static_cast<Py_ssize_t>(itemsize(t.dtype()));
  bool c_contiguous = true;
  Py_ssize_t expected = item;
  for (int i = dl.ndim - 1; i >= 0; --i) {
    block->shape[i] = static_cast<Py_ssize_t>(dl.shape[i]);
    block->strides[i] = static_cast<Py_ssize_t>(dl.strides[i]) * item;
    if (dl.shape[i] != 1 && block->strides[i] != expected) c_contiguous = false;
    expected *= static_cast<Py_ssize_t>(dl.shape[i]);
  }
  if (!c_contiguous && (flags & PyBUF_STRIDES) != PyBUF_STRIDES) {
    block->managed->deleter(block->managed);
    PyErr_SetString(PyExc_BufferError, "the tensor is a strided view: ask for a strided buffer");
    return -1;
  }
  block->format[0] = format_char(t.dtype());
  if (block->format[0] == 0) {
    block->managed->deleter(block->managed);
    PyErr_SetString(PyExc_BufferError,
                    "bfloat16 has no buffer-protocol format; use .numpy() (ml_dtypes) or cast");
    return -1;
  }
  view->buf = dl.data;
  view->obj = Py_NewRef(self);
  view->len = static_cast<Py_ssize_t>(t.num_elements()) * item;
  view->readonly = 1;
  view->itemsize = item;
  view->format = (flags & PyBUF_FORMAT) == PyBUF_FORMAT ? block->format : nullptr;
  view->ndim = dl.ndim;
  view->shape = (flags & PyBUF_ND) == PyBUF_ND ? block->shape : nullptr;
  view->strides = (flags & PyBUF_STRIDES) == PyBUF_STRIDES ? block->strides : nullptr;
  view->suboffsets = nullptr;
  view->internal = block.release();
  return 0;
}

void tensor_releasebuffer(PyObject*, Py_buffer* view) {
  auto* block = static_cast<BufferBlock*>(view->internal);
  if (block == nullptr) return;
  if (block->managed != nullptr) block->managed->deleter(block->managed);
  delete block;
}

PyType_Slot g_tensor_slots[] = {
    {Py_bf_getbuffer, reinterpret_cast<void*>(tensor_getbuffer)},
    {Py_bf_releasebuffer, reinterpret_cast<void*>(tensor_releasebuffer)},
    {0, nullptr},
};

// --- DLPack capsules (the Python array API's __dlpack__) ---

void versioned_capsule_destructor(PyObject* capsule) noexcept {
  if (PyCapsule_IsValid(capsule, "used_dltensor_versioned")) return;
  PyObject *type, *value, *traceback;
  PyErr_Fetch(&type, &value, &traceback);
  auto* managed = static_cast<DLManagedTensorVersioned*>(
      PyCapsule_GetPointer(capsule, "dltensor_versioned"));
  if (managed != nullptr && managed->deleter != nullptr) managed->deleter(managed);
  PyErr_Clear();
  PyErr_Restore(type, value, traceback);
}

void legacy_capsule_destructor(PyObject* capsule) noexcept {
  if (PyCapsule_IsValid(capsule, "used_dltensor")) return;
  PyObject *type, *value, *traceback;
  PyErr_Fetch(&type, &value, &traceback);
  auto* managed = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule, "dltensor"));
  if (managed != nullptr && managed->deleter != nullptr) managed->deleter(managed);
  PyErr_Clear();
  PyErr_Restore(type, value, traceback);
}

nb::object dlpack_capsule(const Tensor& t, nb::handle stream, nb::handle max_version,
                          nb::handle dl_device, nb::handle copy) {
  bool versioned = false;
  if (!max_version.is_none()) {
    versioned = nb::cast<int>(nb::tuple(nb::borrow(max_version))[0]) >= 1;
  }
  ToDLPackOptions options;
  if (!dl_device.is_none()) {
    nb::tuple d = nb::tuple(nb::borrow(dl_device));
    options.device = DLPackDevice{nb::cast<int32_t>(d[0]), nb::cast<int32_t>(d[1])};
  }
  if (!copy.is_none()) options.copy = nb::cast<bool>(copy);
  // The exporter waits for the device before handing the memory out, which
  // satisfies any consumer stream; for host memory DLPack wants no stream.
  if (!stream.is_none() && dlpack_device(t).device_type == kDLCPU && !options.device) {
    throw nb::value_error("__dlpack__: stream must be None for tensors in host memory");
  }
  if (!versioned && (options.device || options.copy)) {
    throw nb::buffer_error("__dlpack__: dl_device and copy need max_version >= (1, 0)");
  }
  try {
    if (versioned) {
      DLManagedTensorVersioned* managed;
      {
        nb::gil_scoped_release release;
        managed = to_dlpack(t, options);
      }
      PyObject* capsule = PyCapsule_New(managed, "dltensor_versioned", versioned_capsule_destructor);
      if (capsule == nullptr) {
        managed->deleter(managed);
        throw nb::python_error();
      }
      return nb::steal(capsule);
    }
    DLManagedTensor* managed;
    {
      nb::gil_scoped_release release;
      managed = to_dlpack_legacy(t);
    }
    PyObject* capsule = PyCapsule_New(managed, "dltensor", legacy_capsule_destructor);
    if (capsule == nullptr) {
      managed->deleter(managed);
      throw nb::python_error();
    }
    return nb::steal(capsule);
  } catch (const Error& e) {
    // DLPack says: BufferError when the export is not possible as asked.
    if (e.code() == ErrorCode::kUnimplemented || e.code() == ErrorCode::kInvalidArgument) {
      throw nb::buffer_error(e.what());
    }
    throw;
  }
}

// --- indexing ---

std::optional<int64_t> slice_bound(PyObject* v) {
  if (v == Py_None) return std::nullopt;
  const Py_ssize_t i = PyNumber_AsSsize_t(v, PyExc_IndexError);
  if (i == -1 && PyErr_Occurred()) throw nb::python_error();
  return static_cast<int64_t>(i);
}

[[noreturn]] void bad_index(nb::handle key) {
  const std::string message =
      "Only integers, slices (`:`), ellipsis (`...`), xdev.newaxis (`None`) and scalar "
      "int32/int64 tensors are valid indices, got " + python_repr(key);
  throw nb::type_error(message.c_str());
}

Index to_index(nb::handle key) {
  PyObject* k = key.ptr();
  if (k == Py_None) return Index::new_axis();
  if (k == Py_Ellipsis) return Index::ellipsis();
  if (PySlice_Check(k)) {
    auto* s = reinterpret_cast<PySliceObject*>(k);
    const std::optional<int64_t> step = slice_bound(s->step);
    return Index::range(slice_bound(s->start), slice_bound(s->stop), step.value_or(1));
  }
  if (PyBool_Check(k)) bad_index(key);
  if (PyLong_Check(k) || PyIndex_Check(k)) {
    if (nb::isinstance<Tensor>(key)) {
      const Tensor& t = nb::cast<const Tensor&>(key);
      if (t.rank() != 0 || (t.dtype() != DType::kInt32 && t.dtype() != DType::kInt64)) bad_index(key);
    }
    const Py_ssize_t i = PyNumber_AsSsize_t(k, PyExc_IndexError);
    if (i == -1 && PyErr_Occurred()) throw nb::python_error();
    return Index(static_cast<int64_t>(i));
  }
  bad_index(key);
}

nb::object getitem(const Tensor& t, nb::handle key) {
  std::vector<Index> indices;
  if (PyTuple_Check(key.ptr())) {
    for (nb::handle k : nb::borrow<nb::tuple>(key)) indices.push_back(to_index(k));
  } else {
    indices.push_back(to_index(key));
  }
  try {
    return nb::cast(slice(t, indices));
  } catch (const Error& e) {
    if (e.code() != ErrorCode::kUnimplemented) throw;
  }
  // A negative step: no kernel reverses, so NumPy does it on a read-back.
  nb::handle fallback = cached_package_function(g_getitem, "xdev._fallback", "getitem");
  return fallback(nb::cast(t), key);
}

// --- operators ---

using BinaryFn = Tensor (*)(const Tensor&, const Tensor&);

// `x op other` and `other op x` for a tensor x and a tensor-like other.
template <BinaryFn Fn>
void def_operator(nb::class_<Tensor>& cls, const char* name, const char* rname) {
  cls.def(name, [](const Tensor& x, const Tensor& y) { return Fn(x, y); }, nb::is_operator(),
          release_gil());
  cls.def(name, [](const Tensor& x, nb::handle y) {
    Tensor other = to_tensor(y, x.dtype());
    nb::gil_scoped_release release;
    return Fn(x, other);
  }, nb::is_operator());
  cls.def(rname, [](const Tensor& x, nb::handle y) {
    Tensor other = to_tensor(y, x.dtype());
    nb::gil_scoped_release release;
    return Fn(other, x);
  }, nb::is_operator());
}

Tensor matmul2(const Tensor& a, const Tensor& b) { return tf_matmul(a, b); }

// TensorFlow's `/`: true division; integers are divided as float64.
Tensor truediv(const Tensor& x, const Tensor& y) {
  if (x.dtype() == DType::kInt32 || x.dtype() == DType::kInt64 || x.dtype() == DType::kBool) {
    if (x.dtype() == y.dtype()) return div(cast(x, DType::kFloat64), cast(y, DType::kFloat64));
  }
  return div(x, y);
}

std::string shape_text(const Shape& s) {
  std::ostringstream out;
  out << s;
  return out.str();
}

}  // namespace

DType to_dtype(nb::handle obj) {
  if (nb::isinstance<DType>(obj)) return nb::cast<DType>(obj);
  nb::handle as_dtype = cached_package_function(g_as_dtype, "xdev.dtypes", "as_dtype");
  return nb::cast<DType>(as_dtype(obj));
}

Tensor to_tensor(nb::handle obj, std::optional<DType> like) {
  if (nb::isinstance<Tensor>(obj)) return nb::cast<Tensor>(obj);
  if (Tensor t = python_scalar(obj, like); t.defined()) return t;
  if (g_converter == nullptr) {
    g_converter = package_function("xdev._convert", "convert_to_tensor").release().ptr();
  }
  nb::object result = nb::borrow(g_converter)(obj, like ? nb::cast(*like) : nb::none());
  return nb::cast<Tensor>(result);
}

void bind_tensor(nb::module_& m) {
  nb::enum_<DType>(m, "DType",
                   "Element types (tf.DType): float32, float64, int32, int64, bool, float16, "
                   "bfloat16, uint8, int8.")
      .value("float32", DType::kFloat32)
      .value("float64", DType::kFloat64)
      .value("int32", DType::kInt32)
      .value("int64", DType::kInt64)
      .value("bool", DType::kBool)
      .value("float16", DType::kFloat16)
      .value("bfloat16", DType::kBFloat16)
      .value("uint8", DType::kUInt8)
      .value("int8", DType::kInt8)
      .def("__repr__", [](DType d) { return "xdev." + std::string(to_string(d)); })
      .def_prop_ro("size", [](DType d) { return itemsize(d); }, "Bytes per element.")
      .def_prop_ro("is_floating", [](DType d) {
        return is_floating(d);
      })
      .def_prop_ro("is_integer", [](DType d) {
        return d == DType::kInt32 || d == DType::kInt64 || d == DType::kUInt8 ||
               d == DType::kInt8;
      })
      .def_prop_ro("is_bool", [](DType d) { return d == DType::kBool; })
      .def_prop_ro("as_numpy_dtype", [](DType d) {
        // The one table of NumPy types is xdev.dtypes'.
        return package_function("xdev.dtypes", "_as_numpy_type")(d);
      }, "The NumPy scalar type (numpy.float32, ..., ml_dtypes.bfloat16).");

  nb::class_<Tensor> cls(m, "Tensor",
                         "A typed, shaped, immutable array on one device (tf.Tensor).",
                         nb::type_slots(g_tensor_slots));
  cls.def_prop_ro("shape", [](const Tensor& t) {
       nb::list dims;
       for (int64_t d : t.shape()) dims.append(d);
       return nb::tuple(dims);
     }, "The dimensions, as a tuple of ints.")
      .def_prop_ro("dtype", &Tensor::dtype)
      .def_prop_ro("device", [](const Tensor& t) { return t.device().name; },
                   "The canonical name of the logical device the tensor lives on.")
      .def_prop_ro("ndim", &Tensor::rank)
      .def_prop_ro("strides", [](const Tensor& t) { return t.strides().to_vector(); },
                   "Strides in elements (views made by indexing or transposing are strided).")
      .def("is_contiguous", &Tensor::is_contiguous)
      .def("numpy", &to_numpy, "The values as a new NumPy array (a copy, read back from the device).")
      .def("item", [](const Tensor& t) { return item(t, "item()"); },
           "The value of a one-element tensor as a Python number.")
      .def("to", [](const Tensor& t, std::string_view device) { return t.to(device); },
           nb::arg("device"), release_gil(),
           "This tensor if it lives on `device` already, else a copy there.")
      .def("to", [](const Tensor& t, const Device& device) { return t.to(device); },
           nb::arg("device"), release_gil())
      .def("copy_to", [](const Tensor& t, std::string_view device) { return t.copy_to(device); },
           nb::arg("device"), release_gil(), "Always a new buffer on `device`.")
      .def("copy_to", [](const Tensor& t, const Device& device) { return t.copy_to(device); },
           nb::arg("device"), release_gil())
      .def("cpu", [](const Tensor& t) { return t.to("/CPU:0"); }, release_gil(),
           "The tensor on /CPU:0 (a copy unless it lives there).")
      .def("__len__", [](const Tensor& t) {
        if (t.rank() == 0) throw nb::type_error("Scalar tensor has no `len()`");
        return static_cast<size_t>(t.shape()[0]);
      })
      .def("__bool__", [](const Tensor& t) {
        if (t.num_elements() != 1) {
          throw nb::value_error(("The truth value of a tensor of shape " + shape_text(t.shape()) +
                                 " is ambiguous (it has " + std::to_string(t.num_elements()) +
                                 " elements)")
                                    .c_str());
        }
        return nb::cast<bool>(nb::bool_(item(t, "bool()")));
      })
      .def("__float__", [](const Tensor& t) { return nb::float_(item(t, "float()")); })
      .def("__int__", [](const Tensor& t) { return nb::int_(item(t, "int()")); })
      .def("__index__", [](const Tensor& t) {
        if (t.dtype() != DType::kInt32 && t.dtype() != DType::kInt64) {
          throw nb::type_error("only integer scalar tensors can be used as an index");
        }
        return nb::int_(item(t, "__index__()"));
      })
      .def("__getitem__", &getitem)
      .def("__neg__", [](const Tensor& t) { return neg(t); }, release_gil())
      .def("__dlpack__", &dlpack_capsule, nb::kw_only(), nb::arg("stream").none() = nb::none(),
           nb::arg("max_version").none() = nb::none(), nb::arg("dl_device").none() = nb::none(),
           nb::arg("copy").none() = nb::none(),
           "A DLPack capsule of the tensor's memory (no copy; read-only).")
      .def("__dlpack_device__", [](const Tensor& t) {
        const DLPackDevice d = dlpack_device(t);
        return nb::make_tuple(d.device_type, d.device_id);
      })
      .def("__hash__", [](const Tensor&) -> Py_hash_t {
        throw nb::type_error("Tensor is unhashable (== compares elementwise); use id(tensor) as the key");
      });
  cls.attr("__array_priority__") = 100;
  // Written in Python (xdev/_tensor.py, xdev/_fallback.py): NumPy's protocol,
  // the repr, iteration, and the ops the op table lacks (host fallbacks).
  cls.def("__array__", [](nb::handle self, nb::handle dtype, nb::handle copy) {
    nb::handle f = cached_package_function(g_tensor_array, "xdev._tensor", "tensor_array");
    return f(self, dtype, copy);
  }, nb::arg("dtype").none() = nb::none(), nb::arg("copy").none() = nb::none(),
     "A NumPy array: shares host memory (read-only), copies device memory.");
  cls.def("__repr__", [](nb::handle self) {
    nb::handle f = cached_package_function(g_tensor_repr, "xdev._tensor", "tensor_repr");
    return f(self);
  });
  cls.def("__str__", [](nb::handle self) {
    nb::handle f = cached_package_function(g_tensor_str, "xdev._tensor", "tensor_str");
    return f(self);
  });
  cls.def("__eq__", [](nb::handle self, nb::handle other) {
    nb::handle f = cached_package_function(g_tensor_eq, "xdev._tensor", "tensor_eq");
    return f(self, other);
  }, nb::is_operator());
  cls.def("__ne__", [](nb::handle self, nb::handle other) {
    nb::handle f = cached_package_function(g_tensor_ne, "xdev._tensor", "tensor_ne");
    return f(self, other);
  }, nb::is_operator());
  cls.def("__iter__", [](nb::handle self) {
    nb::handle f = cached_package_function(g_tensor_iter, "xdev._tensor", "tensor_iter");
    return f(self);
  });
  struct PyOperator {
    const char* name;
    const char* function;
    bool reflected;
  };
  static const PyOperator kPyOperators[] = {
      {"__pow__", "pow", false},          {"__rpow__", "pow", true},
      {"__lt__", "less", false},          {"__le__", "less_equal", false},
      {"__gt__", "greater", false},       {"__ge__", "greater_equal", false},
  };
  for (const PyOperator& op : kPyOperators) {
    // Looked up per call: xdev.math imports this module, so it cannot be
    // imported while this module is being made.
    const char* function = op.function;
    if (op.reflected) {
      cls.def(op.name, [function](nb::handle self, nb::handle other) {
        return package_function("xdev.math", function)(other, self);
      }, nb::is_operator());
    } else {
      cls.def(op.name, [function](nb::handle self, nb::handle other) {
        return package_function("xdev.math", function)(self, other);
      }, nb::is_operator());
    }
  }
  def_operator<add>(cls, "__add__", "__radd__");
  def_operator<sub>(cls, "__sub__", "__rsub__");
  def_operator<mul>(cls, "__mul__", "__rmul__");
  def_operator<truediv>(cls, "__truediv__", "__rtruediv__");
  def_operator<matmul2>(cls, "__matmul__", "__rmatmul__");
  // TensorFlow's `//`, `%` and, on bool tensors, `& | ~`.
  def_operator<floor_div>(cls, "__floordiv__", "__rfloordiv__");
  def_operator<floor_mod>(cls, "__mod__", "__rmod__");
  def_operator<logical_and>(cls, "__and__", "__rand__");
  def_operator<logical_or>(cls, "__or__", "__ror__");
  cls.def("__invert__", [](const Tensor& t) { return logical_not(t); }, release_gil());
  cls.def("__abs__", [](const Tensor& t) { return xdev::abs(t); }, release_gil());

  m.def("_set_converter", [](nb::handle fn) {
    Py_XDECREF(g_converter);
    g_converter = Py_NewRef(fn.ptr());
  });
  m.def("_to_tensor", [](nb::handle obj, nb::handle like) {
    return to_tensor(obj, like.is_none() ? std::nullopt : std::optional<DType>(to_dtype(like)));
  }, nb::arg("value"), nb::arg("like").none() = nb::none());
  // From a NumPy array (or anything with the buffer protocol / DLPack on the
  // CPU) of one of xdev's dtypes; the values are copied.
  // `as`: the dtype whose bits the array holds, when NumPy cannot say it
  // (ml_dtypes' bfloat16 arrives as a uint16 view); same element size.
  m.def("_constant_from_array", [](nb::ndarray<nb::ro, nb::c_contig, nb::device::cpu> array,
                                   std::optional<DType> as) {
    std::optional<DType> dtype = from_dl_dtype(array.dtype());
    if (as) {
      if (array.dtype().lanes != 1 || array.dtype().bits != 8 * itemsize(*as)) {
        throw nb::type_error("_constant_from_array: `as` has another element size");
      }
      dtype = as;
    }
    if (!dtype) throw nb::type_error("_constant_from_array: unsupported dtype");
    Shape shape;
    for (size_t i = 0; i < array.ndim(); ++i) shape.push_back(static_cast<int64_t>(array.shape(i)));
    nb::gil_scoped_release release;
    return constant(array.data(), *dtype, shape);
  }, nb::arg("array"), nb::arg("as").none() = nb::none());
}

}  // namespace xdev::python
