// The xdev conformance suite: tests that drive one plugin file through the C
// ABI alone (sdk/include/xdev/plugin.h), without the core.
//
// Each test runs in its own process (the runner in tools/conformance re-runs
// itself with --run-one NAME), so a test may crash the plugin without taking
// the others down. A test passes by returning, fails by calling fail() (or
// any helper that checks a status), and is skipped by calling skip() with the
// reason: a capability the plugin does not declare, too few devices, a kernel
// it does not register. There are no silent skips.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <xdev/plugin.h>

// The runner's own status object (it plays the core's part).
struct xdev_status_t {
  xdev_status_code_t code;
  std::string message;
};

namespace xdev_conformance {

// Thrown by skip() / fail(); the runner turns them into SKIP / FAIL lines.
struct TestSkipped {
  std::string reason;
};
struct TestFailed {
  std::string reason;
};

[[noreturn]] void skip(const std::string& reason);
[[noreturn]] void fail(const std::string& reason);
// fail(what) unless `condition`.
void require(bool condition, const std::string& what);

// "OUT_OF_MEMORY", "INVALID_ARGUMENT", ... ("code N" for unknown codes).
std::string code_name(xdev_status_code_t code);
// Takes ownership of a status. NULL: returns. Otherwise fails the test with
// "<what>: <CODE>: <message>".
void check(xdev_status_t* status, const std::string& what);
// Takes ownership; fails unless the call returned an error status (any code
// when `codes` is empty, else one of `codes`). Returns the code.
xdev_status_code_t expect_error(xdev_status_t* status, const std::string& what,
                                std::vector<xdev_status_code_t> codes = {});

struct Options {
  std::string plugin_path;
  uint64_t seed = 1;
  uint32_t device = 0;  // the ordinal single-device tests use
  // Load the plugin under the validation layer (core/validation): what it
  // reports is a violation that fails the test. xdev-conformance turns it on
  // unless --no-validate.
  bool validate = false;
  // kernel.*: each case of an op and each dtype it is defined for run once
  // (not every case in every dtype): a cheaper run for slow (instrumented)
  // builds. xdev-conformance --reduced.
  bool reduced = false;
};

// --reduced: which of an op's `cases` cases run for its dtype run `run` of
// `runs` (one run per dtype, or dtype pair, a kernel accepts): case j runs
// when j = run (mod runs), and a run no case falls to takes case
// run (mod cases). Over the runs every case runs once and every run has a
// case; with one run, every case. Ascending indices.
inline std::vector<size_t> reduced_cases(size_t cases, size_t run, size_t runs) {
  std::vector<size_t> chosen;
  if (cases == 0) return chosen;
  if (runs <= 1) {
    for (size_t j = 0; j < cases; ++j) chosen.push_back(j);
    return chosen;
  }
  for (size_t j = run % runs; j < cases; j += runs) chosen.push_back(j);
  if (chosen.empty()) chosen.push_back(run % cases);
  return chosen;
}

// Everything a test needs: the loaded plugin, the host table the runner
// gives it, and per-test handles that are released in reverse order at the
// end (so a test that fails half-way still closes its devices).
class Context {
 public:
  explicit Context(const Options& options);
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;
  // Releases what the test left (finish()), reporting nothing.
  ~Context();

  const Options& options() const { return options_; }
  std::mt19937_64& random() { return random_; }

  // dlopen + xdev_plugin_query, and the basic checks without which nothing
  // else can run (entry symbol, a table, major version 1, v1.0 size, the
  // required slots). Fails the test naming what is wrong. Idempotent.
  const xdev_plugin_api_t& api();
  // The query arguments as passed (for tests of the negotiation itself).
  const xdev_host_api_t& host() const { return host_; }
  // api() + initialize (once; shutdown at the end of the test).
  xdev_plugin_t* plugin();
  // Device count; skips the test when the plugin reports none (naming its
  // describe_status) or fewer than `at_least`.
  uint32_t devices(uint32_t at_least = 1);
  // Properties of physical device `ordinal` (core-sized struct).
  xdev_device_properties_t properties(uint32_t ordinal);
  // Device handle, opened once per test, closed at the end.
  xdev_device_t* device(uint32_t ordinal);
  // The device's max_allocation_bytes (ABI 1.5; 0: no limit) for a handle
  // device() returned.
  uint64_t max_allocation(xdev_device_t* device);
  // The device single-device tests use (--device, default 0).
  xdev_device_t* device() { return device(default_device()); }
  uint32_t default_device();

  // Skips unless the plugin declares `cap` (named `cap_name` in the reason).
  void require_capability(uint64_t cap, const char* cap_name);
  bool has_capability(uint64_t cap);
  // XDEV_CAP_HANDLE_MEMORY (ABI 1.6): device memory is opaque handles. The
  // suite then never forms an address from an allocation: it passes
  // (allocation, offset) pairs to the *_at copy slots and scratch_allocate_at.
  bool handle_memory() { return has_capability(XDEV_CAP_HANDLE_MEMORY); }
  // Skips a test that needs device addresses when the memory is handles,
  // with "<what> needs device addresses; ..." as the reason.
  void require_addresses(const std::string& what);

  // The dlopen handle (for the negotiation tests that call the entry again).
  void* library() const { return library_; }
  // Statuses the plugin created with a bad code (OK or unknown), and log
  // lines it wrote; checked at the end of every test.
  std::vector<std::string>& violations() { return violations_; }

  // Releases everything this test opened (devices, plugin); called by the
  // runner after the test body, so failures there are reported too.
  void finish();

  // Registers a cleanup to run at finish() (reverse order).
  void on_finish(std::function<void()> cleanup);

 private:
  Options options_;
  std::mt19937_64 random_;
  void* library_ = nullptr;
  const xdev_plugin_api_t* api_ = nullptr;
  xdev_host_api_t host_{};
  xdev_plugin_t* plugin_ = nullptr;
  bool device_count_known_ = false;
  uint32_t device_count_ = 0;
  std::vector<xdev_device_t*> devices_;
  std::vector<std::function<void()>> cleanups_;
  std::vector<std::string> violations_;
};

// --- RAII handles over the ABI (each fails the test on error) -------------
//
// Movable; each releases its object through the plugin's table when it is
// destroyed or reset. A stream is synchronized before it is destroyed (the
// ABI's precondition).

// The deleter of the handles: the table's release slot for each kind.
struct Release {
  const xdev_plugin_api_t* api = nullptr;
  xdev_device_t* device = nullptr;  // memory_free's device
  void operator()(void* memory) const;
  void operator()(xdev_stream_t* stream) const;
  void operator()(xdev_event_t* event) const;
};

// One object of the plugin, released through its table (Release).
template <typename T>
class Handle {
 public:
  void reset() { object_.reset(); }
  T* get() const { return object_.get(); }

 protected:
  std::unique_ptr<T, Release> object_;
};

// A place in device memory: what memory_allocate returned, and a byte offset
// inside it. Kept as a pair so that handle plugins (XDEV_CAP_HANDLE_MEMORY)
// never see an address formed from a handle; for pointer plugins the copies
// pass allocation + offset to the old slots (address()).
struct DevicePtr {
  void* allocation = nullptr;
  uint64_t offset = 0;
  // allocation + offset: only for pointer plugins (integer arithmetic only).
  void* address() const { return static_cast<char*>(allocation) + offset; }
};

class DeviceMemory : public Handle<void> {
 public:
  DeviceMemory() = default;
  // Skips the test when `size` is over the device's max_allocation_bytes
  // (a test sized beyond a device's limit cannot run on it, like one that
  // needs a capability it lacks).
  DeviceMemory(Context& ctx, xdev_device_t* device, uint64_t size, uint64_t alignment = 64);
  // The place `offset` bytes in.
  DevicePtr at(uint64_t offset = 0) const { return {get(), offset}; }
  uint64_t size() const { return size_; }

 private:
  uint64_t size_ = 0;
};

class Stream : public Handle<xdev_stream_t> {
 public:
  Stream() = default;
  Stream(Context& ctx, xdev_device_t* device);

  // Each through the *_at slot for a handle plugin, else the old slot with
  // the address.
  void upload(DevicePtr dst, const void* src, uint64_t size);
  void download(void* dst, DevicePtr src, uint64_t size);
  void copy(DevicePtr dst, DevicePtr src, uint64_t size);
  void synchronize();
  // Downloads expected.size() bytes at `place`, synchronizes, and fails with
  // "<what>: first difference at ..." unless they are `expected`.
  void require_contents(DevicePtr place, const std::vector<unsigned char>& expected,
                        const std::string& what);

 private:
  bool handles_ = false;  // the plugin's memory is handles
};

class Event : public Handle<xdev_event_t> {
 public:
  Event() = default;
  Event(Context& ctx, xdev_device_t* device);
};

// The copy calls as the suite makes them, returning the plugin's status:
// the *_at slot when `handles`, else the old slot with the address.
xdev_status_t* copy_host_to_device(const xdev_plugin_api_t& api, bool handles,
                                   xdev_stream_t* stream, DevicePtr dst, const void* src,
                                   uint64_t size);
xdev_status_t* copy_device_to_host(const xdev_plugin_api_t& api, bool handles,
                                   xdev_stream_t* stream, void* dst, DevicePtr src, uint64_t size);
xdev_status_t* copy_device_to_device(const xdev_plugin_api_t& api, bool handles,
                                     xdev_stream_t* stream, DevicePtr dst, DevicePtr src,
                                     uint64_t size);
xdev_status_t* copy_peer(const xdev_plugin_api_t& api, bool handles, xdev_stream_t* stream,
                         DevicePtr dst, xdev_device_t* src_device, DevicePtr src, uint64_t size);

// Fails unless `entry` (named `where` in the message) is non-NULL with a
// struct_size of at least `v1_size`.
template <typename T>
void require_entry(const T* entry, size_t v1_size, const std::string& where) {
  require(entry != nullptr, where + " is NULL");
  require(entry->struct_size >= v1_size,
          where + " has struct_size " + std::to_string(entry->struct_size) +
              ", smaller than the v1.0 size " + std::to_string(v1_size));
}

// What a list slot (device_types, kernels) hands out; fails the test on an
// error status or a count without an array.
template <typename T>
std::vector<const T*> read_list(Context& ctx,
                                xdev_status_t* (*slot)(xdev_plugin_t*, const T* const**, uint32_t*),
                                const std::string& name) {
  const T* const* items = nullptr;
  uint32_t count = 0;
  check(slot(ctx.plugin(), &items, &count), name);
  require(count == 0 || items != nullptr,
          name + " reported " + std::to_string(count) + " entries but returned no array");
  return {items, items + count};
}

// Random bytes from the test's generator.
std::vector<unsigned char> random_bytes(Context& ctx, size_t size);
// "first difference at byte N (got 0xAB, expected 0xCD)" or "".
std::string first_difference(const unsigned char* got, const unsigned char* want, size_t size);

// --- the test list -----------------------------------------------------------

using TestFn = void (*)(Context&);
struct TestCase {
  std::string name;         // "group.name"
  std::string description;  // one line
  TestFn fn;
};

// Every test, in the order they run: by group (abi, device, memory, copy,
// stream, event, concurrency, kernel, error), within a group in the order
// they were registered.
const std::vector<TestCase>& all_tests();

// Registers a test at static initialization (within one file, in
// definition order). Use XDEV_CONFORMANCE_TEST.
struct Registration {
  Registration(const char* name, const char* description, TestFn fn);
};

// Defines and registers a test (in an unnamed namespace of a tests_*.cpp):
//   XDEV_CONFORMANCE_TEST(abi_load, "abi.load", "what it checks") { ... ctx ... }
#define XDEV_CONFORMANCE_TEST(function, name, description)      \
  void function(Context& ctx);                                  \
  const Registration k_##function{name, description, function}; \
  void function([[maybe_unused]] Context& ctx)

// The kernel tests (tests_kernels.cpp) add theirs from a list.
void add_kernel_tests(std::vector<TestCase>& tests);

// Outcome of one test run in this process.
struct Outcome {
  enum class Kind { kPass, kFail, kSkip } kind = Kind::kPass;
  std::string reason;
};
// Runs `test` with a fresh Context: body, then finish(), then the checks of
// the host table (bad status codes). Never throws.
Outcome run_test(const TestCase& test, const Options& options);

}  // namespace xdev_conformance
