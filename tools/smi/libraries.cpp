#include "libraries.hpp"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>

#include <cstring>
#include <fstream>

namespace xdev_smi {

std::vector<std::string> needed_libraries(const std::string& file, std::string* error) {
  // One read of the whole file (a plugin with its kernels is tens of MiB; a
  // character at a time took 90 s in an unoptimised, instrumented build).
  std::ifstream in(file, std::ios::binary | std::ios::ate);
  std::vector<char> data;
  if (in) {
    const std::streamoff size = in.tellg();
    if (size > 0) {
      data.resize(static_cast<size_t>(size));
      in.seekg(0);
      if (!in.read(data.data(), static_cast<std::streamsize>(size))) data.clear();
    }
  }
  auto fail = [&](const std::string& why) {
    if (error != nullptr) *error = why;
    return std::vector<std::string>{};
  };
  if (data.size() < sizeof(Elf64_Ehdr) || std::memcmp(data.data(), ELFMAG, SELFMAG) != 0) {
    return fail("not an ELF file");
  }
  Elf64_Ehdr eh;
  std::memcpy(&eh, data.data(), sizeof eh);
  if (eh.e_ident[EI_CLASS] != ELFCLASS64) return fail("not a 64-bit ELF file");
  auto section = [&](size_t i, Elf64_Shdr* out) {
    const uint64_t at = eh.e_shoff + i * uint64_t{eh.e_shentsize};
    if (eh.e_shentsize < sizeof(Elf64_Shdr) || at + sizeof(Elf64_Shdr) > data.size()) return false;
    std::memcpy(out, data.data() + at, sizeof *out);
    return true;
  };
  std::vector<std::string> needed;
  for (size_t i = 0; i < eh.e_shnum; ++i) {
    Elf64_Shdr dyn;
    if (!section(i, &dyn) || dyn.sh_type != SHT_DYNAMIC) continue;
    Elf64_Shdr str;
    if (!section(dyn.sh_link, &str) || str.sh_offset + str.sh_size > data.size()) {
      return fail("bad dynamic string table");
    }
    for (uint64_t off = dyn.sh_offset; off + sizeof(Elf64_Dyn) <= dyn.sh_offset + dyn.sh_size &&
                                       off + sizeof(Elf64_Dyn) <= data.size();
         off += sizeof(Elf64_Dyn)) {
      Elf64_Dyn d;
      std::memcpy(&d, data.data() + off, sizeof d);
      if (d.d_tag == DT_NULL) break;
      if (d.d_tag != DT_NEEDED || d.d_un.d_val >= str.sh_size) continue;
      const char* s = data.data() + str.sh_offset + d.d_un.d_val;
      needed.emplace_back(s, strnlen(s, str.sh_size - d.d_un.d_val));
    }
  }
  return needed;
}

namespace {

Lookup lookup(const std::string& name, int flags) {
  Lookup out;
  void* handle = ::dlopen(name.c_str(), flags);
  if (handle == nullptr) {
    const char* e = ::dlerror();
    out.where = e != nullptr ? e : "not found";
    return out;
  }
  out.found = true;
  struct link_map* map = nullptr;
  if (::dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map != nullptr && map->l_name != nullptr) {
    out.where = map->l_name;
  }
  if ((flags & RTLD_NOLOAD) != 0) ::dlclose(handle);  // drops only the reference NOLOAD took
  return out;
}

}  // namespace

Lookup find_library(const std::string& name) { return lookup(name, RTLD_LAZY | RTLD_LOCAL); }

std::vector<std::pair<std::string, Lookup>> resolve_needed(const std::string& file,
                                                           const std::vector<std::string>& needed,
                                                           std::string* load_error) {
  std::vector<std::pair<std::string, Lookup>> out;
  // Stays loaded, as find_library's libraries do: the doctor is a report at
  // the end of a process, and unloading a plugin under the core is not safe.
  void* self = ::dlopen(file.c_str(), RTLD_LAZY | RTLD_LOCAL);
  if (self == nullptr) {
    const char* e = ::dlerror();
    if (load_error != nullptr) *load_error = e != nullptr ? e : "cannot be loaded";
  }
  for (const auto& lib : needed) {
    Lookup l;
    if (self != nullptr) l = lookup(lib, RTLD_LAZY | RTLD_LOCAL | RTLD_NOLOAD);
    if (!l.found) l = find_library(lib);
    out.emplace_back(lib, l);
  }
  return out;
}

}  // namespace xdev_smi
