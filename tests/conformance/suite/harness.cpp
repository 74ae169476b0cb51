// The suite's harness: the host table the runner gives the plugin, loading
// through the ABI, and RAII handles. It plays the core's part exactly as
// docs/plugin-abi.md describes it, and nothing more.
#include <dlfcn.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <exception>
#include <functional>
#include <iterator>
#include <utility>

#include "plugin_harness.hpp"
#include "suite.hpp"
#include "validation/layer.hpp"

namespace xdev_conformance {
namespace {

// Highest status code of ABI 1.0.
constexpr int kLastKnownCode = XDEV_STATUS_ABI_MISMATCH;
// The v1.0 size of the plugin table: the least a plugin of major 1 provides.
constexpr size_t kPluginApiV1Size = 264;

xdev_status_t* host_status_create(void* host_context, xdev_status_code_t code,
                                  const char* message) {
  auto* context = static_cast<Context*>(host_context);
  // The code as the int the plugin passed (a C plugin may pass any int; C++
  // must not load an out-of-range one as the enum).
  int raw = 0;
  static_assert(sizeof raw == sizeof code);
  std::memcpy(&raw, &code, sizeof raw);
  if (raw == XDEV_STATUS_OK || raw < 0 || raw > kLastKnownCode) {
    if (context != nullptr) {
      try {
        context->violations().push_back("status_create was called with code " +
                                        std::to_string(raw) +
                                        (raw == XDEV_STATUS_OK ? " (OK: success is NULL)" : "") +
                                        " and message \"" + (message ? message : "") + "\"");
      } catch (...) {
      }
    }
    // Kept as an error the runner can name (an unknown code reads as one).
    raw = XDEV_STATUS_INTERNAL;
  }
  return new xdev_status_t{static_cast<xdev_status_code_t>(raw), message != nullptr ? message : ""};
}

void host_log(void* /*host_context*/, xdev_log_level_t level, const char* message) {
  static const char* const kLevels[] = {"debug", "info", "warning", "error"};
  const char* name = level >= XDEV_LOG_DEBUG && level <= XDEV_LOG_ERROR ? kLevels[level] : "?";
  std::fprintf(stderr, "plugin log (%s): %s\n", name, message != nullptr ? message : "(null)");
}

std::string version_text(xdev_version_t v) {
  return std::to_string(v.major) + "." + std::to_string(v.minor);
}

}  // namespace

void skip(const std::string& reason) { throw TestSkipped{reason}; }
void fail(const std::string& reason) { throw TestFailed{reason}; }
void require(bool condition, const std::string& what) {
  if (!condition) fail(what);
}

std::string code_name(xdev_status_code_t code) {
  switch (code) {
    case XDEV_STATUS_OK: return "OK";
    case XDEV_STATUS_INVALID_ARGUMENT: return "INVALID_ARGUMENT";
    case XDEV_STATUS_NOT_FOUND: return "NOT_FOUND";
    case XDEV_STATUS_OUT_OF_MEMORY: return "OUT_OF_MEMORY";
    case XDEV_STATUS_UNIMPLEMENTED: return "UNIMPLEMENTED";
    case XDEV_STATUS_FAILED_PRECONDITION: return "FAILED_PRECONDITION";
    case XDEV_STATUS_UNAVAILABLE: return "UNAVAILABLE";
    case XDEV_STATUS_INTERNAL: return "INTERNAL";
    case XDEV_STATUS_ABI_MISMATCH: return "ABI_MISMATCH";
  }
  return "code " + std::to_string(static_cast<int>(code));
}

void check(xdev_status_t* status, const std::string& what) {
  if (status == nullptr) return;
  std::string text = what + ": " + code_name(status->code) + ": " + status->message;
  delete status;
  fail(text);
}

xdev_status_code_t expect_error(xdev_status_t* status, const std::string& what,
                                std::vector<xdev_status_code_t> codes) {
  if (status == nullptr) fail(what + " succeeded; it must return an error status");
  xdev_status_code_t code = status->code;
  std::string message = status->message;
  delete status;
  if (!codes.empty()) {
    bool ok = false;
    std::string expected;
    for (xdev_status_code_t c : codes) {
      ok = ok || c == code;
      expected += (expected.empty() ? "" : " or ") + code_name(c);
    }
    if (!ok) {
      fail(what + " returned " + code_name(code) + " (\"" + message + "\"), expected " + expected);
    }
  }
  return code;
}

Context::Context(const Options& options) : options_(options) {
  random_.seed(options.seed);
  host_ = xdev_test::host_table(this, &host_status_create, &host_log);
}

Context::~Context() {
  try {
    finish();
  } catch (...) {
  }
}

void Context::on_finish(std::function<void()> cleanup) { cleanups_.push_back(std::move(cleanup)); }

void Context::finish() {
  while (!cleanups_.empty()) {
    auto cleanup = std::move(cleanups_.back());
    cleanups_.pop_back();
    cleanup();
  }
  for (size_t i = devices_.size(); i-- > 0;) {
    if (devices_[i] != nullptr) api_->device_close(devices_[i]);
    devices_[i] = nullptr;
  }
  if (plugin_ != nullptr) {
    xdev_plugin_t* plugin = plugin_;
    plugin_ = nullptr;
    api_->shutdown(plugin);
  }
  // The library stays mapped: a plugin's threads may outlive shutdown (the
  // core pins plugins the same way), and the process ends right after.
}

const xdev_plugin_api_t& Context::api() {
  if (api_ != nullptr) return *api_;
  xdev_plugin_query_fn_t query = nullptr;
  {
    xdev_test::PluginLibrary library;
    if (!library.open(options_.plugin_path)) fail(library.error());
    library_ = library.handle();
    query = library.query();
    library.release();  // stays mapped: see finish()
  }
  xdev_plugin_query_args_t args = xdev_test::query_args(&host_);
  check(query(&args), XDEV_PLUGIN_ENTRY_SYMBOL " failed");
  const xdev_plugin_api_t* api = args.plugin_api;
  require(api != nullptr, XDEV_PLUGIN_ENTRY_SYMBOL " returned no plugin table");
  if (api->abi_version.major != XDEV_ABI_VERSION_MAJOR) {
    fail("built for plugin ABI " + version_text(api->abi_version) +
         ", but this runner supports ABI " + std::to_string(XDEV_ABI_VERSION_MAJOR) +
         ".x (up to " + version_text({XDEV_ABI_VERSION_MAJOR, XDEV_ABI_VERSION_MINOR}) +
         "); major versions must match");
  }
  if (api->struct_size < kPluginApiV1Size) {
    fail("plugin table struct_size " + std::to_string(api->struct_size) +
         " is smaller than the v1.0 table (" + std::to_string(kPluginApiV1Size) + " bytes)");
  }
  require(api->name != nullptr && api->name[0] != '\0', "plugin table has no name");
  const bool handles = (api->capabilities & XDEV_CAP_HANDLE_MEMORY) != 0;
  if (const char* slot = xdev_plugin_missing_slot(api)) {
    const std::string name = slot;
    if (handles && name.size() > 3 && name.compare(name.size() - 3, 3, "_at") == 0) {
      fail("required slot '" + name +
           "' is NULL: the plugin declares XDEV_CAP_HANDLE_MEMORY (ABI 1.6), so its copies take "
           "(allocation, offset) through the *_at slots");
    }
    fail("required slot '" + name + "' is NULL");
  }
  if (handles) {
    // ABI 1.6, docs/plugin-abi.md "Handle-based memory": the core skips both.
    if ((api->capabilities & XDEV_CAP_HOST_ADDRESSABLE) != 0) {
      fail("declares both XDEV_CAP_HANDLE_MEMORY and XDEV_CAP_HOST_ADDRESSABLE: memory that is "
           "handles cannot be read by the host in place");
    }
    if ((api->capabilities & XDEV_CAP_PEER_COPY) != 0 &&
        (!XDEV_HAS_FIELD(api, xdev_plugin_api_t, copy_peer_at) || api->copy_peer_at == nullptr)) {
      fail("required slot 'copy_peer_at' is NULL: the plugin declares XDEV_CAP_HANDLE_MEMORY "
           "and XDEV_CAP_PEER_COPY (ABI 1.6), so its peer copies take (allocation, offset)");
    }
    // The validation layer needs addresses for its guard bytes (as in the
    // core, which does not wrap such a plugin either).
    options_.validate = false;
  }
  if (options_.validate) {
    xdev::validation::Options v;
    v.plugin_file = options_.plugin_path.substr(options_.plugin_path.rfind('/') + 1);
    v.sink = [this](const xdev::validation::Report& r) { violations_.push_back(r.text()); };
    v.status_code = [](const xdev_status_t* s) { return s->code; };
    v.status_destroy = [](xdev_status_t* s) { delete s; };
    api = xdev::validation::wrap(api, &host_, std::move(v));
  }
  api_ = api;
  return *api_;
}

xdev_plugin_t* Context::plugin() {
  if (plugin_ != nullptr) return plugin_;
  const xdev_plugin_api_t& a = api();
  const xdev_plugin_init_args_t init = xdev_test::init_args(&host_);
  xdev_plugin_t* handle = nullptr;
  xdev_status_t* status = nullptr;
  try {
    status = a.initialize(&init, &handle);
  } catch (const std::exception& e) {
    fail(std::string("initialize threw a C++ exception (") + e.what() +
         "); no exception may cross the ABI");
  } catch (...) {
    fail("initialize threw a C++ exception; no exception may cross the ABI");
  }
  check(status, "initialize failed");
  require(handle != nullptr, "initialize succeeded but returned no plugin state");
  plugin_ = handle;
  return plugin_;
}

uint32_t Context::devices(uint32_t at_least) {
  if (!device_count_known_) {
    uint32_t count = 0;
    check(api().device_count(plugin(), &count), "device_count");
    // The core's limit (plugin_loader.hpp): more is a lie, not a machine.
    if (count > 65536) {
      fail("device_count reported " + std::to_string(count) +
           " devices; a plugin may report at most 65536");
    }
    device_count_ = count;
    device_count_known_ = true;
    devices_.assign(count, nullptr);
  }
  if (device_count_ == 0) {
    std::string why;
    if (api_->describe_status != nullptr) {
      const char* s = api_->describe_status(plugin_);
      if (s != nullptr && s[0] != '\0') why = std::string(" (its status: ") + s + ")";
    }
    skip("the plugin reports 0 devices" + why);
  }
  if (device_count_ < at_least) {
    skip("needs " + std::to_string(at_least) + " devices; the plugin reports " +
         std::to_string(device_count_));
  }
  return device_count_;
}

uint32_t Context::default_device() {
  uint32_t count = devices();
  if (options_.device >= count) {
    fail("--device " + std::to_string(options_.device) + " asked for, but the plugin reports " +
         std::to_string(count) + " device(s)");
  }
  return options_.device;
}

xdev_device_properties_t Context::properties(uint32_t ordinal) {
  xdev_device_properties_t props{};
  props.struct_size = XDEV_DEVICE_PROPERTIES_STRUCT_SIZE;
  check(api().device_get_properties(plugin(), ordinal, &props),
        "device_get_properties(" + std::to_string(ordinal) + ")");
  return props;
}

uint64_t Context::max_allocation(xdev_device_t* device) {
  for (uint32_t ordinal = 0; ordinal < devices_.size(); ++ordinal) {
    if (devices_[ordinal] == device) return properties(ordinal).max_allocation_bytes;
  }
  fail("max_allocation: a device handle the suite did not open");
}

xdev_device_t* Context::device(uint32_t ordinal) {
  uint32_t count = devices();
  require(ordinal < count, "device ordinal " + std::to_string(ordinal) + " out of range");
  if (devices_[ordinal] == nullptr) {
    xdev_device_t* handle = nullptr;
    check(api_->device_open(plugin_, ordinal, &handle),
          "device_open(" + std::to_string(ordinal) + ")");
    require(handle != nullptr, "device_open(" + std::to_string(ordinal) +
                                   ") succeeded but returned no device");
    devices_[ordinal] = handle;
  }
  return devices_[ordinal];
}

bool Context::has_capability(uint64_t cap) { return (api().capabilities & cap) != 0; }

void Context::require_addresses(const std::string& what) {
  if (handle_memory()) {
    skip(what + " needs device addresses; the plugin's memory is handles "
         "(XDEV_CAP_HANDLE_MEMORY)");
  }
}

void Context::require_capability(uint64_t cap, const char* cap_name) {
  if (!has_capability(cap)) {
    skip(std::string("the plugin does not declare ") + cap_name);
  }
}

// --- RAII handles -------------------------------------------------------------

void Release::operator()(void* memory) const { api->memory_free(device, memory); }

void Release::operator()(xdev_stream_t* stream) const {
  if (xdev_status_t* s = api->stream_synchronize(stream)) delete s;
  api->stream_destroy(stream);
}

void Release::operator()(xdev_event_t* event) const { api->event_destroy(event); }

DeviceMemory::DeviceMemory(Context& ctx, xdev_device_t* device, uint64_t size, uint64_t alignment)
    : size_(size) {
  const std::string what = "memory_allocate(" + std::to_string(size) + " bytes";
  const uint64_t limit = ctx.max_allocation(device);
  if (limit != 0 && size > limit) {
    skip("needs an allocation of " + std::to_string(size) + " bytes; the device allows at most " +
         std::to_string(limit) + " (max_allocation_bytes)");
  }
  void* ptr = nullptr;
  check(ctx.api().memory_allocate(device, size, alignment, &ptr),
        what + ", alignment " + std::to_string(alignment) + ")");
  require(ptr != nullptr, what + ") succeeded but returned NULL");
  object_ = {ptr, Release{&ctx.api(), device}};
}

Stream::Stream(Context& ctx, xdev_device_t* device) {
  xdev_stream_t* stream = nullptr;
  check(ctx.api().stream_create(device, &stream), "stream_create");
  require(stream != nullptr, "stream_create succeeded but returned NULL");
  object_ = {stream, Release{&ctx.api(), nullptr}};
  handles_ = ctx.handle_memory();
}

xdev_status_t* copy_host_to_device(const xdev_plugin_api_t& api, bool handles,
                                   xdev_stream_t* stream, DevicePtr dst, const void* src,
                                   uint64_t size) {
  return handles ? api.copy_host_to_device_at(stream, dst.allocation, dst.offset, src, size)
                 : api.copy_host_to_device(stream, dst.address(), src, size);
}
xdev_status_t* copy_device_to_host(const xdev_plugin_api_t& api, bool handles,
                                   xdev_stream_t* stream, void* dst, DevicePtr src, uint64_t size) {
  return handles ? api.copy_device_to_host_at(stream, dst, src.allocation, src.offset, size)
                 : api.copy_device_to_host(stream, dst, src.address(), size);
}
xdev_status_t* copy_device_to_device(const xdev_plugin_api_t& api, bool handles,
                                     xdev_stream_t* stream, DevicePtr dst, DevicePtr src,
                                     uint64_t size) {
  return handles ? api.copy_device_to_device_at(stream, dst.allocation, dst.offset,
                                                src.allocation, src.offset, size)
                 : api.copy_device_to_device(stream, dst.address(), src.address(), size);
}
xdev_status_t* copy_peer(const xdev_plugin_api_t& api, bool handles, xdev_stream_t* stream,
                         DevicePtr dst, xdev_device_t* src_device, DevicePtr src, uint64_t size) {
  return handles ? api.copy_peer_at(stream, dst.allocation, dst.offset, src_device,
                                    src.allocation, src.offset, size)
                 : api.copy_peer(stream, dst.address(), src_device, src.address(), size);
}

void Stream::upload(DevicePtr dst, const void* src, uint64_t size) {
  check(copy_host_to_device(*object_.get_deleter().api, handles_, get(), dst, src, size),
        "copy_host_to_device(" + std::to_string(size) + " bytes)");
}
void Stream::download(void* dst, DevicePtr src, uint64_t size) {
  check(copy_device_to_host(*object_.get_deleter().api, handles_, get(), dst, src, size),
        "copy_device_to_host(" + std::to_string(size) + " bytes)");
}
void Stream::copy(DevicePtr dst, DevicePtr src, uint64_t size) {
  check(copy_device_to_device(*object_.get_deleter().api, handles_, get(), dst, src, size),
        "copy_device_to_device(" + std::to_string(size) + " bytes)");
}
void Stream::require_contents(DevicePtr place, const std::vector<unsigned char>& expected,
                              const std::string& what) {
  std::vector<unsigned char> back(expected.size());
  download(back.data(), place, back.size());
  synchronize();
  const std::string diff = first_difference(back.data(), expected.data(), back.size());
  require(diff.empty(), what + ": " + diff);
}

void Stream::synchronize() {
  check(object_.get_deleter().api->stream_synchronize(get()), "stream_synchronize");
}

Event::Event(Context& ctx, xdev_device_t* device) {
  xdev_event_t* event = nullptr;
  check(ctx.api().event_create(device, &event), "event_create");
  require(event != nullptr, "event_create succeeded but returned NULL");
  object_ = {event, Release{&ctx.api(), nullptr}};
}

std::vector<unsigned char> random_bytes(Context& ctx, size_t size) {
  std::vector<unsigned char> out(size);
  size_t i = 0;
  for (; i + 8 <= size; i += 8) {
    uint64_t v = ctx.random()();
    std::memcpy(out.data() + i, &v, 8);
  }
  if (i < size) {
    uint64_t v = ctx.random()();
    std::memcpy(out.data() + i, &v, size - i);
  }
  return out;
}

std::string first_difference(const unsigned char* got, const unsigned char* want, size_t size) {
  for (size_t i = 0; i < size; ++i) {
    if (got[i] != want[i]) {
      char text[96];
      std::snprintf(text, sizeof text, "first difference at byte %zu (got 0x%02x, expected 0x%02x)",
                    i, got[i], want[i]);
      return text;
    }
  }
  return "";
}

// --- running one test -------------------------------------------------------------

namespace {

// The tests registered so far (constructed on first use: registrations run
// during static initialization, in no fixed order across files).
std::vector<TestCase>& registered() {
  static std::vector<TestCase> tests;
  return tests;
}

// Where a test's group runs; unknown groups last.
size_t group_rank(const std::string& name) {
  static const char* const kGroups[] = {"abi",   "device",      "memory", "copy", "stream",
                                        "event", "concurrency", "kernel", "error"};
  const std::string group = name.substr(0, name.find('.'));
  for (size_t i = 0; i < std::size(kGroups); ++i) {
    if (group == kGroups[i]) return i;
  }
  return std::size(kGroups);
}

}  // namespace

Registration::Registration(const char* name, const char* description, TestFn fn) {
  registered().push_back({name, description, fn});
}

const std::vector<TestCase>& all_tests() {
  static const std::vector<TestCase> tests = [] {
    std::vector<TestCase> t = registered();
    add_kernel_tests(t);
    std::stable_sort(t.begin(), t.end(), [](const TestCase& a, const TestCase& b) {
      return group_rank(a.name) < group_rank(b.name);
    });
    return t;
  }();
  return tests;
}

Outcome run_test(const TestCase& test, const Options& options) {
  Outcome outcome;
  // Each test gets its own deterministic data: the seed mixed with its name.
  Options local = options;
  uint64_t h = 1469598103934665603ull;
  for (char c : test.name) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  local.seed = options.seed ^ h;
  Context ctx(local);
  auto record = [&](Outcome::Kind kind, const std::string& reason) {
    if (outcome.kind == Outcome::Kind::kPass) outcome = Outcome{kind, reason};
  };
  try {
    test.fn(ctx);
  } catch (const TestSkipped& s) {
    record(Outcome::Kind::kSkip, s.reason);
  } catch (const TestFailed& f) {
    record(Outcome::Kind::kFail, f.reason);
  } catch (const std::exception& e) {
    record(Outcome::Kind::kFail, std::string("a C++ exception escaped (") + e.what() +
                                     "); no exception may cross the ABI");
  } catch (...) {
    record(Outcome::Kind::kFail, "a C++ exception escaped; no exception may cross the ABI");
  }
  try {
    ctx.finish();
  } catch (const TestFailed& f) {
    record(Outcome::Kind::kFail, "while releasing: " + f.reason);
  } catch (...) {
    record(Outcome::Kind::kFail, "while releasing: unexpected exception");
  }
  if (!ctx.violations().empty() && outcome.kind != Outcome::Kind::kFail) {
    outcome = Outcome{Outcome::Kind::kFail, ctx.violations().front()};
  }
  return outcome;
}

}  // namespace xdev_conformance
