// Helpers for writing an xdev device plugin in C++ (C++20): the C
// helpers of <xdev/plugin_helpers.h> (included) plus what only C++ needs.
// Header-only; a plugin still links nothing of xdev.
//
// What it offers (not compiled: a table of contents, not code):
//   PluginHost          the plugin-wide host table (for calls with a NULL
//                       handle), status creation with a fallback, logging,
//                       the exception guard every slot needs (no C++
//                       exception may cross the ABI), the query entry and
//                       initialize's argument checks
//   InstanceRegistration  RAII: an initialized instance's host table is the
//                       fallback while the instance lives
//   require(), check_allocation()  a slot's argument checks
//   PropertyList        key/value strings and the xdev_property_t array that
//                       points into them, with stable addresses
//   KernelList          kernels registered at run time (e.g. with a context)
//   kernel_info(), pointers_to()  constexpr kernel tables
//   format()            printf into a std::string
//   env_value::parse_*  environment values with range checks (<xdev/env_value.hpp>)
//
// Typical use (docs/plugin-guide.md has the whole walk-through):
//
//   namespace ph = xdev::plugin_helpers;
//   ph::PluginHost g_host{"mine"};
//
//   xdev_status_t* stream_create(xdev_device_t* device,
//                                xdev_stream_t** out) noexcept {
//     if (device == nullptr) return g_host.null_argument(nullptr, "stream_create", "device");
//     return g_host.guard(device->host, "stream_create", [&]() -> xdev_status_t* {
//       *out = new xdev_stream_t{device};  // may throw: the guard reports it
//       return nullptr;
//     });
//   }
//   XDEV_PLUGIN_ENTRY_POINT xdev_status_t* xdev_plugin_query(xdev_plugin_query_args_t* args) {
//     return g_host.answer_query(args, kPluginApi);
//   }
#pragma once

#include <xdev/env_value.hpp>
#include <xdev/plugin_helpers.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cinttypes>
#include <cstdarg>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <deque>
#include <exception>
#include <initializer_list>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <utility>
#include <vector>

namespace xdev {

// Hidden whatever the build flags: a plugin's copy of this inline code is its
// own, so two plugins built against different SDK versions never bind to each
// other's definitions.
namespace [[gnu::visibility("hidden")]] plugin_helpers {

// ---------------------------------------------------------------------------
// Dtypes

// Masks of XDEV_DTYPE_BIT for kernel descriptors, one name per dtype and per
// group, shared by every plugin.
inline constexpr uint64_t kF32 = XDEV_DTYPE_BIT(XDEV_DTYPE_FLOAT32);
inline constexpr uint64_t kF64 = XDEV_DTYPE_BIT(XDEV_DTYPE_FLOAT64);
inline constexpr uint64_t kI32 = XDEV_DTYPE_BIT(XDEV_DTYPE_INT32);
inline constexpr uint64_t kI64 = XDEV_DTYPE_BIT(XDEV_DTYPE_INT64);
inline constexpr uint64_t kBool = XDEV_DTYPE_BIT(XDEV_DTYPE_BOOL);
inline constexpr uint64_t kF16 = XDEV_DTYPE_BIT(XDEV_DTYPE_FLOAT16);
inline constexpr uint64_t kBF16 = XDEV_DTYPE_BIT(XDEV_DTYPE_BFLOAT16);
inline constexpr uint64_t kU8 = XDEV_DTYPE_BIT(XDEV_DTYPE_UINT8);
inline constexpr uint64_t kI8 = XDEV_DTYPE_BIT(XDEV_DTYPE_INT8);
inline constexpr uint64_t kFloats = kF32 | kF64;
inline constexpr uint64_t kInts = kI32 | kI64;
inline constexpr uint64_t kNumbers = kFloats | kInts;  // float32, float64, int32, int64
inline constexpr uint64_t kAll = kNumbers | kBool;     // ... and bool
inline constexpr uint64_t kHalves = kF16 | kBF16;
inline constexpr uint64_t kEvery = kAll | kHalves | kU8 | kI8;  // every dtype of the ABI

// "float32", ... as docs/ops.md names them; "invalid" for XDEV_DTYPE_INVALID
// and "an unknown dtype" for a value that is no dtype (never NULL).
inline const char* dtype_name(xdev_dtype_t dtype) noexcept {
  if (const char* name = xdev_plugin_dtype_name(dtype)) return name;
  return dtype == XDEV_DTYPE_INVALID ? "invalid" : "an unknown dtype";
}

// ---------------------------------------------------------------------------
// Tensors

// The number of elements of `t` (the product of its shape; 1 at rank 0).
inline int64_t element_count(const xdev_tensor_t& t) noexcept {
  int64_t n = 1;
  for (int32_t d = 0; d < t.rank; ++d) n *= t.shape[d];
  return n;
}

// True when `t`'s elements lie row-major and dense from its offset, as an op
// that asks for contiguous inputs (docs/ops.md) expects. Axes of size 1 may
// have any stride, and a tensor without elements is always contiguous (the
// core gives an empty tensor the strides of its shape with 0 read as 1, so
// [2, 0] has strides [1, 1]).
inline bool is_contiguous(const xdev_tensor_t& t) noexcept {
  if (element_count(t) == 0) return true;
  int64_t expected = 1;
  for (int32_t d = t.rank - 1; d >= 0; --d) {
    if (t.shape[d] != 1 && t.strides[d] != expected) return false;
    expected *= t.shape[d];
  }
  return true;
}

// ---------------------------------------------------------------------------
// Text

// printf into a std::string (the whole text, however long).
inline std::string vformat(const char* format, va_list args) {
  va_list copy;
  va_copy(copy, args);
  const int length = std::vsnprintf(nullptr, 0, format, copy);
  va_end(copy);
  if (length <= 0) return {};
  std::string text(static_cast<size_t>(length), '\0');
  std::vsnprintf(text.data(), text.size() + 1, format, args);
  return text;
}

[[gnu::format(printf, 1, 2)]] inline std::string format(const char* format, ...) {
  va_list args;
  va_start(args, format);
  std::string text = vformat(format, args);
  va_end(args);
  return text;
}

// ---------------------------------------------------------------------------
// The host table, statuses, the exception guard

// The host tables one plugin library has been given, and everything that
// makes statuses and log lines with them. A plugin defines one object of it
// at namespace scope (constant-initialized, so usable before any static
// constructor runs) and uses it from every slot.
//
// Calls with a NULL handle have no instance to take a table from; they report
// with the fallback table: the table of the most recently initialized
// instance that is still alive, else the one from the last xdev_plugin_query.
class PluginHost {
 public:
  // `plugin_name` ("cpu", "sim") names the plugin in the guard's messages;
  // it must outlive the object (a string literal).
  explicit constexpr PluginHost(const char* plugin_name) noexcept : name_(plugin_name) {}
  PluginHost(const PluginHost&) = delete;
  PluginHost& operator=(const PluginHost&) = delete;

  const char* name() const noexcept { return name_; }

  // The fallback table; NULL before any query.
  const xdev_host_api_t* fallback() const noexcept {
    return current_.load(std::memory_order_acquire);
  }

  // `host` when it can create statuses, else the fallback table.
  const xdev_host_api_t* pick(const xdev_host_api_t* host) const noexcept {
    return xdev_plugin_can_create_status(host) ? host : fallback();
  }

  // The whole body of xdev_plugin_query: remembers the query's host table as
  // the fallback (while no instance is alive) and answers with
  // xdev_plugin_query_answer.
  xdev_status_t* answer_query(xdev_plugin_query_args_t* args,
                              const xdev_plugin_api_t& api) noexcept {
    if (const xdev_host_api_t* host = xdev_plugin_query_host(args)) {
      std::lock_guard lock(mutex_);
      if (instances_.empty()) current_.store(host, std::memory_order_release);
    }
    return xdev_plugin_query_answer(args, &api);
  }

  // The checks initialize starts with (xdev_plugin_check_init_args),
  // reported with the fallback table.
  xdev_status_t* check_init_args(const xdev_plugin_init_args_t* args,
                                 xdev_plugin_t** out_plugin) const noexcept {
    return xdev_plugin_check_init_args(fallback(), args, out_plugin);
  }

  // The frame of `initialize`: check_init_args; then, guarded, a new
  // default-constructed instance (the plugin's xdev_plugin_t) that
  // `setup(instance, host)` completes with args->host; a status it returns
  // is returned and the instance deleted, else *out_plugin is the instance.
  template <typename Instance, typename Setup>
  xdev_status_t* initialize(const xdev_plugin_init_args_t* args, Instance** out_plugin,
                            Setup&& setup) const noexcept {
    if (xdev_status_t* status = check_init_args(args, out_plugin)) return status;
    if (!xdev_plugin_init_args_usable(args, out_plugin)) return nullptr;  // nobody to tell
    const xdev_host_api_t* host = args->host;
    return guard(host, "initialize", [&]() -> xdev_status_t* {
      auto instance = std::make_unique<Instance>();
      if (xdev_status_t* status = setup(*instance, host)) return status;
      *out_plugin = instance.release();
      return nullptr;
    });
  }

  // An initialized instance's table becomes the fallback until the instance
  // is removed (InstanceRegistration does both).
  void add_instance(const xdev_host_api_t* host) {
    std::lock_guard lock(mutex_);
    instances_.push_back(host);
    current_.store(host, std::memory_order_release);
  }
  void remove_instance(const xdev_host_api_t* host) noexcept {
    std::lock_guard lock(mutex_);
    const auto it = std::find(instances_.begin(), instances_.end(), host);
    if (it != instances_.end()) instances_.erase(it);
    current_.store(instances_.empty() ? nullptr : instances_.back(), std::memory_order_release);
  }

  // A status with a printf-formatted message, made with pick(host). NULL
  // only when no table can make one (the core broke the protocol by calling
  // before xdev_plugin_query).
  [[gnu::format(printf, 4, 5)]] xdev_status_t* fail(const xdev_host_api_t* host,
                                                    xdev_status_code_t code, const char* format,
                                                    ...) const noexcept {
    va_list args;
    va_start(args, format);
    xdev_status_t* status = xdev_plugin_vstatus(pick(host), code, format, args);
    va_end(args);
    return status;
  }

  // INVALID_ARGUMENT "<slot>: <argument> is NULL".
  xdev_status_t* null_argument(const xdev_host_api_t* host, const char* slot,
                               const char* argument) const noexcept {
    return fail(host, XDEV_STATUS_INVALID_ARGUMENT, "%s: %s is NULL", slot, argument);
  }

  // A pointer argument of a slot and its name, for require().
  struct Arg {
    const char* name;
    const void* value;
  };

  // The NULL checks a slot starts with: INVALID_ARGUMENT "<slot>: <name> is
  // NULL" for the first of `args` (in order) that is NULL, else NULL.
  //   if (auto* s = g_host.require(host, "device_count",
  //                                {{"plugin", plugin}, {"out_count", out_count}})) return s;
  xdev_status_t* require(const xdev_host_api_t* host, const char* slot,
                         std::initializer_list<Arg> args) const noexcept {
    for (const Arg& arg : args) {
      if (arg.value == nullptr) return null_argument(host, slot, arg.name);
    }
    return nullptr;
  }

  // memory_allocate's argument checks (docs/plugin-abi.md): INVALID_ARGUMENT
  // when `size` is 0 or `alignment` is not a power of two, else NULL.
  xdev_status_t* check_allocation(const xdev_host_api_t* host, const char* slot, uint64_t size,
                                  uint64_t alignment) const noexcept {
    if (size == 0) {
      return fail(host, XDEV_STATUS_INVALID_ARGUMENT, "%s: size is 0 bytes; it must be > 0",
                  slot);
    }
    if (alignment == 0 || (alignment & (alignment - 1)) != 0) {
      return fail(host, XDEV_STATUS_INVALID_ARGUMENT,
                  "%s: alignment %" PRIu64 " is not a power of two (size %" PRIu64 " bytes)",
                  slot, alignment, size);
    }
    return nullptr;
  }

  // The end of a slot that hands out a list (device_types, kernels): a status
  // when an output is NULL (`items_name` names the first), else the list.
  template <typename T>
  xdev_status_t* hand_out(const xdev_host_api_t* host, const char* slot, const char* items_name,
                          const T* const* items, uint32_t count, const T* const** out_items,
                          uint32_t* out_count) const noexcept {
    if (out_items == nullptr) return null_argument(host, slot, items_name);
    if (out_count == nullptr) return null_argument(host, slot, "out_count");
    *out_items = items;
    *out_count = count;
    return nullptr;
  }

  // A printf-formatted log line, written with `host` (else the fallback).
  [[gnu::format(printf, 4, 5)]] void log(const xdev_host_api_t* host, xdev_log_level_t level,
                                         const char* format, ...) const noexcept {
    va_list args;
    va_start(args, format);
    xdev_plugin_vlog(host != nullptr ? host : fallback(), level, format, args);
    va_end(args);
  }

  // Call inside a catch block: the exception being handled as a status
  // naming this plugin and `slot`. std::bad_alloc is OUT_OF_MEMORY; any other
  // exception is INTERNAL (a bug: no slot should let one out), with what()
  // when it is a std::exception.
  xdev_status_t* unexpected(const xdev_host_api_t* host, const char* slot) const noexcept {
    try {
      throw;
    } catch (const std::bad_alloc&) {
      return fail(host, XDEV_STATUS_OUT_OF_MEMORY, "%s plugin: %s: out of host memory", name_,
                  slot);
    } catch (const std::exception& error) {
      return fail(host, XDEV_STATUS_INTERNAL, "%s plugin: %s: unexpected exception: %s", name_,
                  slot, error.what());
    } catch (...) {
      return fail(host, XDEV_STATUS_INTERNAL,
                  "%s plugin: %s: unexpected exception of unknown type", name_, slot);
    }
  }

  // Runs `body` (returning xdev_status_t*) and turns any exception that
  // leaves it into a status (unexpected()). Wrap the body of every slot that
  // can throw: no C++ exception may cross the ABI.
  template <typename Body>
  xdev_status_t* guard(const xdev_host_api_t* host, const char* slot, Body&& body) const noexcept {
    try {
      return std::forward<Body>(body)();
    } catch (...) {
      return unexpected(host, slot);
    }
  }

  // guard() for a slot that returns nothing (shutdown, the destroy and free
  // slots): the exception becomes an ERROR log line instead.
  template <typename Body>
  void guard_void(const xdev_host_api_t* host, const char* slot, Body&& body) const noexcept {
    try {
      std::forward<Body>(body)();
    } catch (const std::exception& error) {
      log(host, XDEV_LOG_ERROR, "%s plugin: %s: unexpected exception: %s", name_, slot,
          error.what());
    } catch (...) {
      log(host, XDEV_LOG_ERROR, "%s plugin: %s: unexpected exception of unknown type", name_,
          slot);
    }
  }

 private:
  const char* name_;
  std::atomic<const xdev_host_api_t*> current_{nullptr};
  std::mutex mutex_;                              // guards instances_
  std::vector<const xdev_host_api_t*> instances_;  // live instances, oldest first
};

// Makes `host` the fallback table of `hosts` for its own lifetime: a member
// of the plugin's instance state, constructed in initialize, destroyed in
// shutdown.
class InstanceRegistration {
 public:
  InstanceRegistration(PluginHost& hosts, const xdev_host_api_t* host)
      : hosts_(&hosts), host_(host) {
    hosts.add_instance(host);
  }
  ~InstanceRegistration() { hosts_->remove_instance(host_); }
  InstanceRegistration(const InstanceRegistration&) = delete;
  InstanceRegistration& operator=(const InstanceRegistration&) = delete;

 private:
  PluginHost* hosts_;
  const xdev_host_api_t* host_;
};

// ---------------------------------------------------------------------------
// Tables the plugin hands out

// Free-form device properties: the strings and the xdev_property_t array
// that device_get_properties hands out, pointing into them. Addresses stay
// valid while the list lives and is not changed (also when the list itself
// is moved: the strings live in deque nodes, which a move keeps).
class PropertyList {
 public:
  PropertyList() = default;
  PropertyList(PropertyList&&) = default;
  PropertyList& operator=(PropertyList&&) = default;
  PropertyList(const PropertyList&) = delete;
  PropertyList& operator=(const PropertyList&) = delete;

  PropertyList& add(std::string key, std::string value) {
    const auto& [k, v] = text_.emplace_back(std::move(key), std::move(value));
    items_.push_back({k.c_str(), v.c_str()});
    return *this;
  }
  void clear() noexcept {
    items_.clear();
    text_.clear();
  }
  const xdev_property_t* data() const noexcept { return items_.empty() ? nullptr : items_.data(); }
  uint32_t size() const noexcept { return static_cast<uint32_t>(items_.size()); }

 private:
  std::deque<std::pair<std::string, std::string>> text_;
  std::vector<xdev_property_t> items_;
};

// One kernel descriptor with the v1 struct_size.
constexpr xdev_kernel_info_t kernel_info(const char* op, uint64_t input_dtypes,
                                         uint64_t output_dtypes, xdev_kernel_fn_t fn,
                                         void* kernel_context = nullptr,
                                         uint32_t type_index = 0) noexcept {
  return {XDEV_KERNEL_INFO_STRUCT_SIZE,
          nullptr,
          op,
          type_index,
          input_dtypes,
          output_dtypes,
          fn,
          kernel_context};
}

// The array of pointers the `kernels` (or `device_types`) slot hands out, to
// the elements of a constant array with static storage:
//   xdev_status_t* add(void* context, const xdev_kernel_call_t* call);
//   constexpr uint64_t kF32 = XDEV_DTYPE_BIT(XDEV_DTYPE_FLOAT32);
//   constexpr xdev_kernel_info_t kKernels[] = {kernel_info("Add", kF32, kF32, add)};
//   constexpr auto kKernelPointers = pointers_to(kKernels);
template <typename T, size_t N>
constexpr std::array<const T*, N> pointers_to(const T (&items)[N]) noexcept {
  std::array<const T*, N> pointers{};
  for (size_t i = 0; i < N; ++i) pointers[i] = &items[i];
  return pointers;
}

// Kernels registered at run time, e.g. with the instance as kernel_context.
// Descriptors keep their addresses while the list lives and is not changed.
class KernelList {
 public:
  KernelList() = default;
  KernelList(const KernelList&) = delete;
  KernelList& operator=(const KernelList&) = delete;

  KernelList& add(const xdev_kernel_info_t& info) {
    pointers_.push_back(&infos_.emplace_back(info));
    return *this;
  }
  const xdev_kernel_info_t* const* data() const noexcept { return pointers_.data(); }
  uint32_t size() const noexcept { return static_cast<uint32_t>(pointers_.size()); }

 private:
  std::deque<xdev_kernel_info_t> infos_;
  std::vector<const xdev_kernel_info_t*> pointers_;
};

}  // namespace plugin_helpers
}  // namespace xdev
