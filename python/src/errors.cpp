// xdev::Error becomes a Python exception: xdev.errors.Error (a RuntimeError,
// like the C++ class is a std::runtime_error, so TensorFlow's
// `except RuntimeError` snippets work unchanged) with one subclass per code.
// The message is the C++ SDK's, word for word.
#include "bindings.hpp"

#include <array>

namespace xdev::python {
namespace {

struct ErrorType {
  ErrorCode code;
  const char* name;       // the Python class
  const char* code_name;  // to_string(code)
  const char* doc;
};

constexpr ErrorType kErrorTypes[] = {
    {ErrorCode::kInvalidArgument, "InvalidArgumentError", "INVALID_ARGUMENT",
     "A bad argument: a shape, dtype, attribute or name that an op or call does not accept."},
    {ErrorCode::kNotFound, "NotFoundError", "NOT_FOUND",
     "Something named does not exist: a device, a file, a plugin."},
    {ErrorCode::kOutOfMemory, "ResourceExhaustedError", "OUT_OF_MEMORY",
     "A device's memory pool cannot satisfy an allocation."},
    {ErrorCode::kUnimplemented, "UnimplementedError", "UNIMPLEMENTED",
     "No device or kernel implements what was asked."},
    {ErrorCode::kFailedPrecondition, "FailedPreconditionError", "FAILED_PRECONDITION",
     "The call is not possible in this state (e.g. configuring initialized devices)."},
    {ErrorCode::kUnavailable, "UnavailableError", "UNAVAILABLE",
     "A driver, device or file is unavailable."},
    {ErrorCode::kInternal, "InternalError", "INTERNAL", "A bug or an unexpected failure."},
    {ErrorCode::kAbiMismatch, "AbiMismatchError", "ABI_MISMATCH",
     "A plugin was built for an incompatible ABI."},
};

// Created once, owned by the module for the life of the process.
PyObject* g_base = nullptr;
std::array<PyObject*, 9> g_by_code{};

}  // namespace

void bind_errors(nb::module_& m) {
  g_base = PyErr_NewExceptionWithDoc(
      "xdev.errors.Error",
      "The base of every error xdev raises; `error_code` and `code_name` say which.",
      PyExc_RuntimeError, nullptr);
  if (g_base == nullptr) throw nb::python_error();
  m.attr("Error") = nb::handle(g_base);
  for (const ErrorType& t : kErrorTypes) {
    const std::string qualified = std::string("xdev.errors.") + t.name;
    PyObject* type = PyErr_NewExceptionWithDoc(qualified.c_str(), t.doc, g_base, nullptr);
    if (type == nullptr) throw nb::python_error();
    nb::handle h(type);
    h.attr("error_code") = static_cast<int>(t.code);
    h.attr("code_name") = t.code_name;
    m.attr(t.name) = h;
    g_by_code.at(static_cast<size_t>(t.code)) = type;
  }
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const Error& e) {
      const auto index = static_cast<size_t>(e.code());
      PyObject* type = index < g_by_code.size() && g_by_code[index] != nullptr ? g_by_code[index]
                                                                               : g_base;
      PyErr_SetString(type, e.what());
    }
  });
}

}  // namespace xdev::python
