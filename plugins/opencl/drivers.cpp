// Loading the OpenCL drivers beside another LLVM (drivers.hpp).
#include "drivers.hpp"

#include <dlfcn.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>
#include <vector>

namespace xdev::opencl {
namespace {

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool kSanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif
#else
constexpr bool kSanitized = false;
#endif

// llvm::cl::Option::addArgument(): every LLVM's option registry has it.
constexpr char kLlvmSymbol[] = "_ZN4llvm2cl6Option11addArgumentEv";

// The library each .icd file names, as the ocl-icd loader reads them:
// OCL_ICD_VENDORS (a folder, or one .icd file), else /etc/OpenCL/vendors.
std::vector<std::string> icd_libraries() {
  namespace fs = std::filesystem;
  std::vector<fs::path> files;
  const char* vendors = std::getenv("OCL_ICD_VENDORS");
  fs::path where = vendors != nullptr && *vendors != '\0' ? fs::path(vendors)
                                                          : fs::path("/etc/OpenCL/vendors");
  std::error_code ec;
  if (fs::is_directory(where, ec)) {
    for (const auto& entry : fs::directory_iterator(where, ec)) {
      if (entry.path().extension() == ".icd") files.push_back(entry.path());
    }
  } else if (fs::is_regular_file(where, ec)) {
    files.push_back(where);
  }
  std::vector<std::string> libraries;
  for (const fs::path& file : files) {
    std::ifstream in(file);
    std::string line;
    if (std::getline(in, line)) {
      while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
      if (!line.empty()) libraries.push_back(line);
    }
  }
  return libraries;
}

}  // namespace

std::string open_drivers_beside_foreign_llvm() {
  if (kSanitized) return "";
  void* llvm = dlsym(RTLD_DEFAULT, kLlvmSymbol);
  if (llvm == nullptr) return "";
  Dl_info where{};
  const std::string owner = dladdr(llvm, &where) != 0 && where.dli_fname != nullptr
                                ? where.dli_fname
                                : "an unknown library";
  std::string done;
  for (const std::string& library : icd_libraries()) {
    // Kept open for the process: the ICD loader uses it from now on.
    void* handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND);
    done += (done.empty() ? "" : ", ") + library +
            (handle != nullptr ? "" : std::string(" (failed: ") + dlerror() + ")");
  }
  if (done.empty()) return "";
  return "another LLVM is loaded in this process (" + owner +
         "): the OpenCL drivers were opened with RTLD_DEEPBIND so that they bind their own: " +
         done;
}

}  // namespace xdev::opencl
