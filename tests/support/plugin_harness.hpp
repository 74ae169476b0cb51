// What every test that drives a plugin through its raw ABI needs, written
// once: loading the file (dlopen + the entry symbol), the query and init
// arguments the core passes, the exported symbols of a plugin file, the
// core's kernel lookup, and a kernel-call builder with stable addresses.
//
// Header-only and free of GoogleTest and of the core, so the conformance
// runner (tools/conformance, which plays the core's part itself) uses it as
// well as the GoogleTest suites; core_plugin_harness.hpp adds the core's host
// table and status assertions for the latter.
#pragma once

#include <dlfcn.h>
#include <elf.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <fstream>
#include <iterator>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <xdev/plugin.h>
#include <xdev/plugin_helpers.h>

namespace xdev_test {

// The value of environment variable `name`, or `fallback` when it is unset
// or empty (tests get the plugin file from meson this way).
inline std::string env_or(const char* name, const std::string& fallback = "") {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0' ? value : fallback;
}

// A plugin file loaded with dlopen(RTLD_NOW | RTLD_LOCAL | extra_flags) and
// its entry point. Unloaded by close() or the destructor, unless released
// (a plugin whose threads may outlive shutdown must stay mapped, as the core
// keeps it with RTLD_NODELETE).
class PluginLibrary {
 public:
  PluginLibrary() = default;
  explicit PluginLibrary(const std::string& path, int extra_flags = 0) { open(path, extra_flags); }
  ~PluginLibrary() { close(); }
  PluginLibrary(const PluginLibrary&) = delete;
  PluginLibrary& operator=(const PluginLibrary&) = delete;

  // Loads `path`; false (and error()) when it cannot be loaded or has no
  // entry symbol.
  bool open(const std::string& path, int extra_flags = 0) {
    close();
    error_.clear();
    if (path.empty()) {
      error_ = "no plugin file given";
      return false;
    }
    handle_ = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL | extra_flags);
    if (handle_ == nullptr) {
      const char* why = ::dlerror();
      error_ = std::string("cannot be loaded: ") + (why != nullptr ? why : "dlopen failed");
      return false;
    }
    query_ = reinterpret_cast<xdev_plugin_query_fn_t>(::dlsym(handle_, XDEV_PLUGIN_ENTRY_SYMBOL));
    if (query_ == nullptr) {
      error_ = "missing entry symbol '" XDEV_PLUGIN_ENTRY_SYMBOL
               "' (export it with XDEV_PLUGIN_EXPORT)";
    }
    return query_ != nullptr;
  }

  bool loaded() const { return query_ != nullptr; }
  const std::string& error() const { return error_; }
  xdev_plugin_query_fn_t query() const { return query_; }
  void* handle() const { return handle_; }
  void* symbol(const char* name) const { return ::dlsym(handle_, name); }

  // Loads the file named by environment variable `variable` (meson test
  // sets it); an unset variable is an error naming it.
  bool open_env(const char* variable, int extra_flags = 0) {
    const std::string path = env_or(variable);
    if (path.empty()) {
      close();
      error_ = std::string(variable) + " is not set (meson test sets it to the plugin file)";
      return false;
    }
    return open(path, extra_flags);
  }

  // Unloads; dlclose's result (0 when it succeeded or nothing was loaded).
  int close() {
    if (handle_ == nullptr) return 0;
    const int result = ::dlclose(handle_);
    handle_ = nullptr;
    query_ = nullptr;
    return result;
  }
  // Keeps the library mapped for the life of the process (query() stays
  // usable; close() then does nothing).
  void release() { handle_ = nullptr; }

 private:
  void* handle_ = nullptr;
  xdev_plugin_query_fn_t query_ = nullptr;
  std::string error_;
};

// The query arguments a core of this header's version passes: it accepts
// ABI 1.0 up to this minor, and hands over `host`.
inline xdev_plugin_query_args_t query_args(const xdev_host_api_t* host) {
  xdev_plugin_query_args_t args{};
  args.struct_size = XDEV_PLUGIN_QUERY_ARGS_STRUCT_SIZE;
  args.core_min_version = {XDEV_ABI_VERSION_MAJOR, 0};
  args.core_max_version = {XDEV_ABI_VERSION_MAJOR, XDEV_ABI_VERSION_MINOR};
  args.host = host;
  return args;
}

// The arguments of initialize.
inline xdev_plugin_init_args_t init_args(const xdev_host_api_t* host) {
  xdev_plugin_init_args_t args{};
  args.struct_size = XDEV_PLUGIN_INIT_ARGS_STRUCT_SIZE;
  args.host = host;
  return args;
}

// Names of the symbols a shared library exports (defined, global or weak,
// default or protected visibility), read from its ELF dynamic symbol table.
// Empty when the file is not a 64-bit ELF file.
inline std::set<std::string> exported_symbols(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  const std::vector<char> image((std::istreambuf_iterator<char>(file)),
                                std::istreambuf_iterator<char>());
  std::set<std::string> names;
  if (image.size() < sizeof(Elf64_Ehdr)) return names;
  Elf64_Ehdr header;
  std::memcpy(&header, image.data(), sizeof(header));
  if (std::memcmp(header.e_ident, ELFMAG, SELFMAG) != 0 ||
      header.e_ident[EI_CLASS] != ELFCLASS64) {
    return names;
  }
  auto section = [&](size_t index) {
    Elf64_Shdr shdr;
    std::memcpy(&shdr, image.data() + header.e_shoff + index * header.e_shentsize, sizeof(shdr));
    return shdr;
  };
  for (size_t i = 0; i < header.e_shnum; ++i) {
    const Elf64_Shdr dynsym = section(i);
    if (dynsym.sh_type != SHT_DYNSYM) continue;
    const Elf64_Shdr strtab = section(dynsym.sh_link);
    for (size_t k = 0; k < dynsym.sh_size / sizeof(Elf64_Sym); ++k) {
      Elf64_Sym sym;
      std::memcpy(&sym, image.data() + dynsym.sh_offset + k * sizeof(Elf64_Sym), sizeof(sym));
      const unsigned bind = ELF64_ST_BIND(sym.st_info);
      const unsigned visibility = ELF64_ST_VISIBILITY(sym.st_other);
      if (sym.st_shndx == SHN_UNDEF || sym.st_name == 0) continue;
      if (bind != STB_GLOBAL && bind != STB_WEAK && bind != STB_GNU_UNIQUE) continue;
      if (visibility != STV_DEFAULT && visibility != STV_PROTECTED) continue;
      names.insert(image.data() + strtab.sh_offset + sym.st_name);
    }
  }
  return names;
}

// `size` bytes from a generator seeded with `seed` (the same bytes for the
// same seed).
inline std::vector<unsigned char> random_bytes(size_t size, uint64_t seed) {
  std::mt19937_64 engine(seed);
  std::vector<unsigned char> bytes(size);
  size_t i = 0;
  for (; i + 8 <= size; i += 8) {
    const uint64_t word = engine();
    std::memcpy(bytes.data() + i, &word, 8);
  }
  for (; i < size; ++i) bytes[i] = static_cast<unsigned char>(engine());
  return bytes;
}

// The kernel the core picks for (op, input dtype, output dtype): the first
// registered one whose masks accept the dtypes (an output mask of 0 accepts
// any). NULL when none does.
inline const xdev_kernel_info_t* find_kernel(const xdev_kernel_info_t* const* kernels,
                                             uint32_t count, const std::string& op,
                                             xdev_dtype_t input, xdev_dtype_t output) {
  for (uint32_t i = 0; i < count; ++i) {
    const xdev_kernel_info_t* k = kernels[i];
    if (op != k->op || (k->input_dtypes & XDEV_DTYPE_BIT(input)) == 0) continue;
    if (k->output_dtypes != 0 && (k->output_dtypes & XDEV_DTYPE_BIT(output)) == 0) continue;
    return k;
  }
  return nullptr;
}

// Any kernel registered for `op` (for calls the kernel itself must refuse).
inline const xdev_kernel_info_t* any_kernel(const xdev_kernel_info_t* const* kernels,
                                            uint32_t count, const std::string& op) {
  for (uint32_t i = 0; i < count; ++i) {
    if (op == kernels[i]->op) return kernels[i];
  }
  return nullptr;
}

// One op attribute, as the core passes it. Names and lists must outlive the
// kernel call.
inline xdev_attr_t attr_bool(const char* name, bool value) {
  xdev_attr_t a{};
  a.name = name;
  a.kind = XDEV_ATTR_BOOL;
  a.value.b = value ? 1 : 0;
  return a;
}
inline xdev_attr_t attr_int(const char* name, int64_t value) {
  xdev_attr_t a{};
  a.name = name;
  a.kind = XDEV_ATTR_INT;
  a.value.i = value;
  return a;
}
inline xdev_attr_t attr_float(const char* name, double value) {
  xdev_attr_t a{};
  a.name = name;
  a.kind = XDEV_ATTR_FLOAT;
  a.value.f = value;
  return a;
}
inline xdev_attr_t attr_dtype(const char* name, xdev_dtype_t value) {
  xdev_attr_t a{};
  a.name = name;
  a.kind = XDEV_ATTR_DTYPE;
  a.value.dtype = value;
  return a;
}
inline xdev_attr_t attr_ints(const char* name, const std::vector<int64_t>& values) {
  xdev_attr_t a{};
  a.name = name;
  a.kind = XDEV_ATTR_INTS;
  a.value.ints.values = values.data();
  a.value.ints.count = static_cast<int64_t>(values.size());
  return a;
}

// Row-major strides (in elements) of `shape`.
inline std::vector<int64_t> row_major_strides(const std::vector<int64_t>& shape) {
  std::vector<int64_t> strides(shape.size());
  int64_t step = 1;
  for (size_t k = shape.size(); k-- > 0;) {
    strides[k] = step;
    step *= shape[k];
  }
  return strides;
}

// A kernel call with stable addresses for everything it points to, built
// the way the core builds one.
class KernelCall {
 public:
  KernelCall(const char* op, xdev_device_t* device, xdev_stream_t* stream) {
    call_.struct_size = XDEV_KERNEL_CALL_STRUCT_SIZE;
    call_.ext = nullptr;
    call_.op = op;
    call_.device = device;
    call_.stream = stream;
  }
  KernelCall(const KernelCall&) = delete;
  KernelCall& operator=(const KernelCall&) = delete;

  // Strides default to row-major.
  KernelCall& input(void* data, xdev_dtype_t dtype, std::vector<int64_t> shape,
                    std::vector<int64_t> strides = {}, uint64_t byte_offset = 0) {
    inputs_.push_back(add(data, dtype, std::move(shape), std::move(strides), byte_offset));
    return *this;
  }
  KernelCall& output(void* data, xdev_dtype_t dtype, std::vector<int64_t> shape,
                     std::vector<int64_t> strides = {}) {
    outputs_.push_back(add(data, dtype, std::move(shape), std::move(strides), 0));
    return *this;
  }
  // A descriptor as is (its shape and strides must outlive the call).
  KernelCall& input(const xdev_tensor_t& tensor) {
    inputs_.push_back(&descriptors_.emplace_back(tensor));
    return *this;
  }
  KernelCall& output(const xdev_tensor_t& tensor) {
    outputs_.push_back(&descriptors_.emplace_back(tensor));
    return *this;
  }
  KernelCall& attribute(const xdev_attr_t& value) {
    attrs_.push_back(value);
    return *this;
  }
  KernelCall& attr(const char* name, bool value) { return attribute(attr_bool(name, value)); }
  KernelCall& attr(const char* name, int64_t value) { return attribute(attr_int(name, value)); }
  xdev_kernel_call_t* get() {
    call_.inputs = inputs_.data();
    call_.input_count = static_cast<uint32_t>(inputs_.size());
    call_.outputs = outputs_.data();
    call_.output_count = static_cast<uint32_t>(outputs_.size());
    call_.attrs = attrs_.empty() ? nullptr : attrs_.data();
    call_.attr_count = static_cast<uint32_t>(attrs_.size());
    return &call_;
  }

 private:
  struct Tensor {
    std::vector<int64_t> shape;
    std::vector<int64_t> strides;
    xdev_tensor_t tensor{};
  };

  const xdev_tensor_t* add(void* data, xdev_dtype_t dtype, std::vector<int64_t> shape,
                           std::vector<int64_t> strides, uint64_t byte_offset) {
    if (strides.empty()) strides = row_major_strides(shape);
    Tensor& t = tensors_.emplace_back();
    t.shape = std::move(shape);
    t.strides = std::move(strides);
    t.tensor.data = data;
    t.tensor.byte_offset = byte_offset;
    t.tensor.dtype = dtype;
    t.tensor.rank = static_cast<int32_t>(t.shape.size());
    t.tensor.shape = t.shape.data();
    t.tensor.strides = t.strides.data();
    return &t.tensor;
  }

  std::deque<Tensor> tensors_;  // a deque never moves its elements
  std::deque<xdev_tensor_t> descriptors_;
  std::vector<const xdev_tensor_t*> inputs_;
  std::vector<const xdev_tensor_t*> outputs_;
  std::vector<xdev_attr_t> attrs_;
  xdev_kernel_call_t call_{};
};

}  // namespace xdev_test
