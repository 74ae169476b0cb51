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
#include <xdev/plugin.h>
#include <xdev/plugin_helpers.h>

#include <array>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <fstream>
#include <functional>
#include <iterator>
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

namespace xdev_test {

// The value of environment variable `name`, or `fallback` when it is unset
// or empty (tests get the plugin file from meson this way).
inline std::string env_or(const char* name, const std::string& fallback = "") {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0' ? value : fallback;
}

// The text of /proc/self/maps: which files (plugins, CUDA or BLAS
// libraries) this process has mapped.
inline std::string mapped_files() {
  std::ifstream maps("/proc/self/maps");
  return {std::istreambuf_iterator<char>(maps), std::istreambuf_iterator<char>()};
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

// A host table of this header's version over the given functions (the core
// and the conformance runner each bring their own).
inline xdev_host_api_t host_table(void* context,
                                  xdev_status_t* (*status_create)(void*, xdev_status_code_t,
                                                                  const char*),
                                  void (*log)(void*, xdev_log_level_t, const char*)) {
  return {XDEV_HOST_API_STRUCT_SIZE,
          nullptr,
          {XDEV_ABI_VERSION_MAJOR, XDEV_ABI_VERSION_MINOR},
          context,
          status_create,
          log};
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

// Calls of the status-returning slots with one NULL argument each: a handle,
// an output pointer, or one side of a copy of 16 bytes; live handles for
// the other arguments. A plugin must answer each with an error status
// (INVALID_ARGUMENT, naming "<argument> is NULL" in a plugin that uses the
// SDK's helpers) instead of crashing. Optional slots the table leaves NULL
// are left out. The outputs the calls write into live in this object.
class NullArgumentCalls {
 public:
  enum class Kind { kHandle, kOutput };
  struct Call {
    const char* slot;
    const char* argument;
    Kind kind;
    std::function<xdev_status_t*()> run;
  };

  // `device` is open (physical device `ordinal` of `plugin`), `stream` and
  // `event` belong to it, `buffer` is 64 bytes of its memory; `host` is the
  // table initialize gets.
  NullArgumentCalls(const xdev_plugin_api_t& api, xdev_plugin_t* plugin, uint32_t ordinal,
                    xdev_device_t* device, xdev_stream_t* stream, xdev_event_t* event, void* buffer,
                    const xdev_host_api_t* host)
      : init_(init_args(host)) {
    props_.struct_size = XDEV_DEVICE_PROPERTIES_STRUCT_SIZE;
    char* const mem = static_cast<char*>(buffer);
    const uint64_t n = 16;  // bytes per copy
    // Per slot: the name of each argument that is passed NULL in turn
    // (nullptr: never), then the arguments of the other calls.
    each_null("initialize", api.initialize, {nullptr, "out_plugin"}, &init_, &plugin_);
    each_null("device_types", api.device_types, {"plugin", "out_types", "out_count"}, plugin,
              &types_, &count_);
    each_null("device_count", api.device_count, {"plugin", "out_count"}, plugin, &count_);
    each_null("device_get_properties", api.device_get_properties, {"plugin", nullptr, "out_props"},
              plugin, ordinal, &props_);
    each_null("device_open", api.device_open, {"plugin", nullptr, "out_device"}, plugin, ordinal,
              &device_);
    each_null("memory_allocate", api.memory_allocate, {"device", nullptr, nullptr, "out_ptr"},
              device, 64, 64, &ptr_);
    each_null("memory_query", api.memory_query, {"device", "out_free", "out_total"}, device, &free_,
              &total_);
    each_null("host_memory_allocate", api.host_memory_allocate, {"device", nullptr, "out_ptr"},
              device, 64, &ptr_);
    each_null("stream_create", api.stream_create, {"device", "out_stream"}, device, &stream_);
    each_null("stream_synchronize", api.stream_synchronize, {"stream"}, stream);
    each_null("event_create", api.event_create, {"device", "out_event"}, device, &event_);
    each_null("event_record", api.event_record, {"event", "stream"}, event, stream);
    each_null("stream_wait_event", api.stream_wait_event, {"stream", "event"}, stream, event);
    each_null("event_synchronize", api.event_synchronize, {"event"}, event);
    each_null("event_query", api.event_query, {"event", "out_done"}, event, &done_);
    each_null("copy_host_to_device", api.copy_host_to_device, {"stream", "dst", "src", nullptr},
              stream, mem, host_bytes_, n);
    each_null("copy_device_to_host", api.copy_device_to_host, {"stream", "dst", "src", nullptr},
              stream, host_bytes_, mem, n);
    each_null("copy_device_to_device", api.copy_device_to_device, {"stream", "dst", "src", nullptr},
              stream, mem + 32, mem, n);
    each_null("copy_peer", api.copy_peer, {"stream", nullptr, "src_device", nullptr, nullptr},
              stream, mem, device, mem + 32, n);
    each_null("kernels", api.kernels, {"plugin", "out_kernels", "out_count"}, plugin, &kernels_,
              &count_);
  }
  NullArgumentCalls(const NullArgumentCalls&) = delete;
  NullArgumentCalls& operator=(const NullArgumentCalls&) = delete;

  const std::vector<Call>& calls() const { return calls_; }

 private:
  // One call of `slot` (when the table sets it) per named argument, with
  // that argument NULL and `values` for the others.
  template <typename... Args, typename... Values>
  void each_null(const char* slot, xdev_status_t* (*fn)(Args...),
                 std::array<const char*, sizeof...(Args)> names, Values... values) {
    if (fn == nullptr) return;
    const std::tuple<Args...> args(values...);
    [&]<size_t... I>(std::index_sequence<I...>) { (add_null<I>(slot, fn, names[I], args), ...); }
    (std::index_sequence_for<Args...>{});
  }

  template <size_t I, typename... Args>
  void add_null(const char* slot, xdev_status_t* (*fn)(Args...), const char* name,
                std::tuple<Args...> args) {
    if constexpr (std::is_pointer_v<std::tuple_element_t<I, std::tuple<Args...>>>) {
      if (name == nullptr) return;
      std::get<I>(args) = nullptr;
      const bool handle = std::strcmp(name, "plugin") == 0 || std::strcmp(name, "device") == 0 ||
                          std::strcmp(name, "stream") == 0 || std::strcmp(name, "event") == 0 ||
                          std::strcmp(name, "src_device") == 0;
      calls_.push_back({slot, name, handle ? Kind::kHandle : Kind::kOutput,
                        [fn, args] { return std::apply(fn, args); }});
    }
  }

  xdev_plugin_init_args_t init_;
  xdev_device_properties_t props_{};
  const xdev_device_type_info_t* const* types_ = nullptr;
  const xdev_kernel_info_t* const* kernels_ = nullptr;
  uint32_t count_ = 0;
  uint64_t free_ = 0;
  uint64_t total_ = 0;
  int32_t done_ = 0;
  void* ptr_ = nullptr;
  xdev_plugin_t* plugin_ = nullptr;
  xdev_device_t* device_ = nullptr;
  xdev_stream_t* stream_ = nullptr;
  xdev_event_t* event_ = nullptr;
  unsigned char host_bytes_[64] = {};
  std::vector<Call> calls_;
};

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

// One op attribute of `Kind`, as the core passes it. Names and lists must
// outlive the kernel call.
template <xdev_attr_kind_t Kind, typename T>
xdev_attr_t attr_of(const char* name, const T& value) {
  xdev_attr_t a{};
  a.name = name;
  a.kind = Kind;
  if constexpr (Kind == XDEV_ATTR_BOOL) a.value.b = value ? 1 : 0;
  if constexpr (Kind == XDEV_ATTR_INT) a.value.i = value;
  if constexpr (Kind == XDEV_ATTR_FLOAT) a.value.f = value;
  if constexpr (Kind == XDEV_ATTR_DTYPE) a.value.dtype = value;
  if constexpr (Kind == XDEV_ATTR_INTS)
    a.value.ints = {value.data(), static_cast<int64_t>(value.size())};
  if constexpr (Kind == XDEV_ATTR_STRING) a.value.s = value;
  return a;
}
inline xdev_attr_t attr_bool(const char* n, bool v) { return attr_of<XDEV_ATTR_BOOL>(n, v); }
inline xdev_attr_t attr_int(const char* n, int64_t v) { return attr_of<XDEV_ATTR_INT>(n, v); }
inline xdev_attr_t attr_float(const char* n, double v) { return attr_of<XDEV_ATTR_FLOAT>(n, v); }
inline xdev_attr_t attr_dtype(const char* n, xdev_dtype_t v) {
  return attr_of<XDEV_ATTR_DTYPE>(n, v);
}
inline xdev_attr_t attr_ints(const char* n, const std::vector<int64_t>& v) {
  return attr_of<XDEV_ATTR_INTS>(n, v);
}
inline xdev_attr_t attr_string(const char* n, const char* v) {
  return attr_of<XDEV_ATTR_STRING>(n, v);
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
