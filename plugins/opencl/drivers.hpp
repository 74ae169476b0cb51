// Loading the OpenCL drivers (ICDs) safely beside another LLVM.
#pragma once

#include <string>

namespace xdev::opencl {

// PoCL (and other ICDs built on LLVM) break when the process already holds
// another LLVM with global symbols, TensorFlow's libtensorflow_framework
// among them: the ICD's LLVM registers its command-line options into the
// other copy's tables and the process crashes inside clGetPlatformIDs. When
// such an LLVM is visible, every ICD the loader would open is opened here
// first with RTLD_DEEPBIND, so that it and its dependencies bind to their
// own LLVM; the loader's later dlopen of the same file gets that handle.
// Returns what was done, for the plugin's log ("" when nothing was needed).
// Not under AddressSanitizer (its runtime refuses RTLD_DEEPBIND).
std::string open_drivers_beside_foreign_llvm();

}  // namespace xdev::opencl
