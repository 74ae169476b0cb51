// The shared libraries a file needs (its ELF DT_NEEDED entries) and whether
// this process can find them, for `xdev-smi doctor`.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace xdev_smi {

// DT_NEEDED of a 64-bit ELF file; empty (and `error` set) when it cannot be
// read as one.
std::vector<std::string> needed_libraries(const std::string& file, std::string* error);

struct Lookup {
  bool found = false;
  std::string where;  // the path it resolved to, or the loader's message
};

// Whether the dynamic loader finds `name` (a soname or a path) from here:
// dlopen with RTLD_LAZY | RTLD_LOCAL (the library stays loaded).
Lookup find_library(const std::string& name);

// Where the loader finds each of `file`'s libraries when it loads `file`
// itself: its own RUNPATH first (the cuda plugin's implementation looks in
// NVIDIA's PyPI wheels before the toolkit), then the usual search. `file` is
// loaded (RTLD_LAZY | RTLD_LOCAL; no CUDA call is made by loading) and its
// libraries are looked up among what that load mapped. When `file` itself
// cannot be loaded, `load_error` says why (the loader names the library it
// missed) and each library is looked up from here instead.
std::vector<std::pair<std::string, Lookup>> resolve_needed(const std::string& file,
                                                           const std::vector<std::string>& needed,
                                                           std::string* load_error);

}  // namespace xdev_smi
