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
  if (code == XDEV_STATUS_OK || static_cast<int>(code) < 0 ||
      static_cast<int>(code) > kLastKnownCode) {
    if (context != nullptr) {
      try {
        context->violations().push_back("status_create was called with code " +
                                        std::to_string(static_cast<int>(code)) +
                                        (code == XDEV_STATUS_OK ? " (OK: success is NULL)" : "") +
                                        " and message \"" + (message ? message : "") + "\"");
      } catch (...) {
      }
    }
    if (code == XDEV_STATUS_OK) code = XDEV_STATUS_INTERNAL;
  }
  return new xdev_status_t{code, message != nullptr ? message : ""};
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
  if (const char* slot = xdev_plugin_missing_slot(api)) {
    fail("required slot '" + std::string(slot) + "' is NULL");
  }
  if ((api->capabilities & XDEV_CAP_HANDLE_MEMORY) != 0) {
    // ABI 1.6: the suite forms device addresses (allocation + offset) and
    // calls the old copy slots; it cannot test such a plugin yet.
    fail("the plugin's memory is handles (XDEV_CAP_HANDLE_MEMORY, ABI 1.6), which this runner "
         "does not test yet: it forms device addresses");
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
}

void Stream::upload(void* dst, const void* src, uint64_t size) {
  check(object_.get_deleter().api->copy_host_to_device(get(), dst, src, size),
        "copy_host_to_device(" + std::to_string(size) + " bytes)");
}
void Stream::download(void* dst, const void* src, uint64_t size) {
  check(object_.get_deleter().api->copy_device_to_host(get(), dst, src, size),
        "copy_device_to_host(" + std::to_string(size) + " bytes)");
}
void Stream::copy(void* dst, const void* src, uint64_t size) {
  check(object_.get_deleter().api->copy_device_to_device(get(), dst, src, size),
        "copy_device_to_device(" + std::to_string(size) + " bytes)");
}
void Stream::require_contents(const void* device_address,
                              const std::vector<unsigned char>& expected, const std::string& what) {
  std::vector<unsigned char> back(expected.size());
  download(back.data(), device_address, back.size());
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
