// The shared libraries a file needs (its ELF DT_NEEDED entries) and whether
// this process can find them, for `xdev-smi doctor`.
#pragma once

#include <string>
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

}  // namespace xdev_smi
