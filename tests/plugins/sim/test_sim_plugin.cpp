// The simulated accelerator plugin through its ABI alone, as the core sees
// it: dlopen the built file, call xdev_plugin_query with the core's host
// table, then use the table. What later tests of the core rely on is checked
// here first: the device list follows the environment, device addresses
// cannot be dereferenced, copies and kernels really run asynchronously and in
// order, events order work across streams and devices, errors are statuses.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <xdev/plugin.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cinttypes>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <filesystem>
#include <initializer_list>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "core_plugin_harness.hpp"
#include "opdefs/op_table.hpp"
#include "sanitizers.hpp"

#ifndef XDEV_SIM_PLUGIN_FILE
#error "XDEV_SIM_PLUGIN_FILE must name the built plugin"
#endif

namespace {

// Documented in the plugin (common.hpp) and published as the "address_tag"
// property; the test checks the two agree.
constexpr uint64_t kAddressTag = UINT64_C(0x4080000000000000);
constexpr uint64_t kMiB = uint64_t{1} << 20;

// ---------------------------------------------------------------------------
// Statuses (ASSERT_OK, EXPECT_OK: tests/support/core_plugin_harness.hpp)

using xdev_test::fails_with;
using xdev_test::KernelCall;
using xdev_test::Outcome;
using xdev_test::random_bytes;
using xdev_test::take;

std::string hex(const void* pointer) {
  char text[32];
  std::snprintf(text, sizeof(text), "0x%" PRIx64, reinterpret_cast<uint64_t>(pointer));
  return text;
}

// ---------------------------------------------------------------------------
// Environment

// Sets (or, for NULL, unsets) environment variables for one scope. Only
// used before initialize, while the plugin runs no thread.
class ScopedEnv {
 public:
  ScopedEnv(std::initializer_list<std::pair<const char*, const char*>> values) {
    for (const auto& [name, value] : values) {
      const char* old = std::getenv(name);
      saved_.emplace_back(name, old != nullptr ? std::optional<std::string>(old) : std::nullopt);
      set(name, value);
    }
  }
  ~ScopedEnv() {
    for (auto it = saved_.rbegin(); it != saved_.rend(); ++it) {
      set(it->first.c_str(), it->second ? it->second->c_str() : nullptr);
    }
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  static void set(const char* name, const char* value) {
    if (value != nullptr) {
      ::setenv(name, value, 1);
    } else {
      ::unsetenv(name);
    }
  }
  std::vector<std::pair<std::string, std::optional<std::string>>> saved_;
};

// ---------------------------------------------------------------------------
// Test data

template <typename T>
std::vector<T> random_values(size_t count, unsigned seed) {
  std::mt19937 engine(seed);
  std::uniform_int_distribution<int> value(-8, 8);
  std::vector<T> data(count);
  for (T& x : data) x = static_cast<T>(value(engine));
  return data;
}

void* offset(void* device_address, uint64_t bytes) {
  return reinterpret_cast<void*>(reinterpret_cast<uint64_t>(device_address) + bytes);
}

// ---------------------------------------------------------------------------
// The fixture: the plugin file is loaded once; each test initializes an
// instance with the environment it sets and shuts it down at the end,
// releasing what it made.

class SimPlugin : public ::testing::Test {
 protected:
  // The plugin file (XDEV_SIM_PLUGIN_FILE from the environment, else the
  // one this test was built with), loaded for the whole program.
  static const xdev_test::PluginLibrary& library() {
    static const xdev_test::PluginLibrary* const library = new xdev_test::PluginLibrary(
        xdev_test::env_or("XDEV_SIM_PLUGIN_FILE", XDEV_SIM_PLUGIN_FILE));
    return *library;
  }

  void SetUp() override {
    ASSERT_TRUE(library().loaded()) << library().error();
    xdev_plugin_query_args_t args = xdev_test::query_args(&host_);
    ASSERT_OK(library().query()(&args));
    ASSERT_NE(args.plugin_api, nullptr);
    api_ = args.plugin_api;
  }

  void TearDown() override {
    if (plugin_ == nullptr) return;
    for (xdev_stream_t* stream : streams_) {
      take(api_->stream_synchronize(stream));  // errors were the test's business
      api_->stream_destroy(stream);
    }
    for (xdev_event_t* event : events_) api_->event_destroy(event);
    for (const auto& [pointer, device] : allocations_) api_->memory_free(device, pointer);
    for (const auto& [pointer, device] : host_blocks_) api_->host_memory_free(device, pointer);
    for (const auto& [ordinal, device] : devices_) api_->device_close(device);
    api_->shutdown(plugin_);
    plugin_ = nullptr;
  }

  // Initializes the plugin with `env` set (NULL: unset) while it reads its
  // configuration.
  void start(std::initializer_list<std::pair<const char*, const char*>> env) {
    ScopedEnv scoped(env);
    start();
  }

  // start(env), then opens device 0.
  xdev_device_t* start_on_device(std::initializer_list<std::pair<const char*, const char*>> env) {
    start(env);
    return device(0);
  }

  // Initializes the plugin with the environment as it is now.
  void start() {
    const xdev_plugin_init_args_t args = xdev_test::init_args(&host_);
    ASSERT_OK(api_->initialize(&args, &plugin_));
    ASSERT_NE(plugin_, nullptr);
  }

  Outcome try_start() {
    const xdev_plugin_init_args_t args = xdev_test::init_args(&host_);
    return take(api_->initialize(&args, &plugin_));
  }

  uint32_t device_count() {
    uint32_t count = 0;
    EXPECT_OK(api_->device_count(plugin_, &count));
    return count;
  }

  xdev_device_t* device(uint32_t ordinal) {
    auto it = devices_.find(ordinal);
    if (it != devices_.end()) return it->second;
    xdev_device_t* device = create<xdev_device_t>(
        [&](xdev_device_t** out) { return api_->device_open(plugin_, ordinal, out); });
    if (device != nullptr) devices_[ordinal] = device;
    return device;
  }

  xdev_stream_t* stream(xdev_device_t* device) {
    return keep(streams_, create<xdev_stream_t>([&](xdev_stream_t** out) {
                  return api_->stream_create(device, out);
                }));
  }

  xdev_event_t* event(xdev_device_t* device) {
    return keep(events_, create<xdev_event_t>(
                             [&](xdev_event_t** out) { return api_->event_create(device, out); }));
  }

  // Adds `handle`, when there is one, to what TearDown releases.
  template <typename Handle>
  static Handle* keep(std::vector<Handle*>& owned, Handle* handle) {
    if (handle != nullptr) owned.push_back(handle);
    return handle;
  }

  // Calls a creating slot through `slot(&handle)`; the test fails unless it
  // succeeded. The handle it handed out, or NULL.
  template <typename Handle, typename Slot>
  static Handle* create(Slot&& slot) {
    Handle* handle = nullptr;
    const Outcome outcome = take(slot(&handle));
    EXPECT_TRUE(outcome.ok()) << outcome.message;
    return handle;
  }

  void* allocate(xdev_device_t* device, uint64_t size, uint64_t alignment = 64) {
    void* pointer = nullptr;
    const Outcome outcome = take(api_->memory_allocate(device, size, alignment, &pointer));
    EXPECT_TRUE(outcome.ok()) << outcome.message;
    if (pointer != nullptr) allocations_[pointer] = device;
    return pointer;
  }

  Outcome try_allocate(xdev_device_t* device, uint64_t size, void** out, uint64_t alignment = 64) {
    *out = nullptr;
    Outcome outcome = take(api_->memory_allocate(device, size, alignment, out));
    if (*out != nullptr) allocations_[*out] = device;
    return outcome;
  }

  void release(void* pointer) {
    auto it = allocations_.find(pointer);
    ASSERT_NE(it, allocations_.end());
    api_->memory_free(it->second, pointer);
    allocations_.erase(it);
  }

  std::pair<uint64_t, uint64_t> memory(xdev_device_t* device) {
    uint64_t free = 0;
    uint64_t total = 0;
    EXPECT_OK(api_->memory_query(device, &free, &total));
    return {free, total};
  }

  void upload(xdev_stream_t* stream, void* dst, const void* src, uint64_t size) {
    ASSERT_OK(api_->copy_host_to_device(stream, dst, src, size));
    ASSERT_OK(api_->stream_synchronize(stream));
  }

  template <typename T>
  std::vector<T> download(xdev_stream_t* stream, const void* src, size_t count) {
    std::vector<T> values(count);
    EXPECT_OK(api_->copy_device_to_host(stream, values.data(), src, count * sizeof(T)));
    EXPECT_OK(api_->stream_synchronize(stream));
    return values;
  }

  const xdev_kernel_info_t* kernel(const char* op) {
    const xdev_kernel_info_t* const* kernels = nullptr;
    uint32_t count = 0;
    EXPECT_OK(api_->kernels(plugin_, &kernels, &count));
    for (uint32_t i = 0; i < count; ++i) {
      if (std::strcmp(kernels[i]->op, op) == 0) return kernels[i];
    }
    return nullptr;
  }

  Outcome run(const char* op, KernelCall& call) {
    const xdev_kernel_info_t* info = kernel(op);
    if (info == nullptr) return {XDEV_STATUS_NOT_FOUND, std::string("no kernel ") + op};
    return take(info->fn(info->kernel_context, call.get()));
  }

  // Forgets every handle without releasing it (for the shutdown test).
  void forget_handles() {
    streams_.clear();
    events_.clear();
    allocations_.clear();
    host_blocks_.clear();
    devices_.clear();
  }

  xdev::detail::HostContext context_{"sim"};
  xdev_host_api_t host_ = xdev::detail::make_host_api(&context_);  // the core's host table
  const xdev_plugin_api_t* api_ = nullptr;
  xdev_plugin_t* plugin_ = nullptr;

  std::map<uint32_t, xdev_device_t*> devices_;
  std::vector<xdev_stream_t*> streams_;
  std::vector<xdev_event_t*> events_;
  std::map<void*, xdev_device_t*> allocations_;
  std::map<void*, xdev_device_t*> host_blocks_;
};

using SimPluginDeathTest = SimPlugin;

// ---------------------------------------------------------------------------
// The table and the devices

TEST_F(SimPlugin, QueryGivesACompleteV1Table) {
  EXPECT_EQ(api_->struct_size, size_t{XDEV_PLUGIN_API_STRUCT_SIZE});
  EXPECT_EQ(api_->abi_version.major, uint32_t{XDEV_ABI_VERSION_MAJOR});
  EXPECT_EQ(api_->abi_version.minor, uint32_t{XDEV_ABI_VERSION_MINOR});
  EXPECT_STREQ(api_->name, "sim");
  EXPECT_NE(api_->plugin_version, nullptr);
  EXPECT_EQ(api_->capabilities, XDEV_CAP_EVENTS | XDEV_CAP_PEER_COPY | XDEV_CAP_HOST_MEMORY |
                                    XDEV_CAP_EVENT_TIMING | XDEV_CAP_COLLECTIVES);
  EXPECT_STREQ(xdev_plugin_missing_slot(api_), nullptr);
  // Optional slots its capabilities promise.
  EXPECT_NE(api_->event_elapsed_ms, nullptr);  // ABI 1.4
  EXPECT_NE(api_->collective_id, nullptr);     // ABI 1.7
  EXPECT_NE(api_->communicator_create, nullptr);
  EXPECT_NE(api_->communicator_destroy, nullptr);
  EXPECT_NE(api_->communicator_abort, nullptr);
  EXPECT_NE(api_->communicator_poll, nullptr);
  EXPECT_NE(api_->collective, nullptr);
  EXPECT_NE(api_->host_memory_allocate, nullptr);
  EXPECT_NE(api_->host_memory_free, nullptr);
  EXPECT_NE(api_->copy_peer, nullptr);
  EXPECT_NE(api_->describe_status, nullptr);
}

TEST_F(SimPlugin, QueryRefusesACoreOfAnotherMajor) {
  EXPECT_TRUE(xdev_test::query_refuses(library().query(), &host_, {2, 0}, {2, 3},
                                       {"sim plugin implements ABI 1.", "2.0 to 2.3"}));
}

TEST_F(SimPlugin, DefaultsAreTwoDevicesOf256MiB) {
  start({{"XDEV_SIM_DEVICES", nullptr},
         {"XDEV_SIM_MEMORY_MB", nullptr},
         {"XDEV_SIM_DELAY_US", nullptr}});
  EXPECT_EQ(device_count(), 2u);
  EXPECT_STREQ(api_->describe_status(plugin_), "2 simulated devices, 256 MiB each");
  xdev_device_properties_t props{};
  props.struct_size = XDEV_DEVICE_PROPERTIES_STRUCT_SIZE;
  ASSERT_OK(api_->device_get_properties(plugin_, 1, &props));
  EXPECT_EQ(props.memory_total, 256 * kMiB);
  EXPECT_EQ(memory(device(1)), std::make_pair(256 * kMiB, 256 * kMiB));
}

TEST_F(SimPlugin, DeviceCountAndMemoryComeFromTheEnvironment) {
  // The test's own environment (meson sets XDEV_SIM_DEVICES=3,
  // XDEV_SIM_MEMORY_MB=64) first, then a few more values.
  {
    const char* devices = std::getenv("XDEV_SIM_DEVICES");
    const char* memory_mb = std::getenv("XDEV_SIM_MEMORY_MB");
    start();
    const uint32_t expected = devices != nullptr && *devices != '\0' ? std::atoi(devices) : 2;
    const uint64_t mb = memory_mb != nullptr && *memory_mb != '\0' ? std::atoi(memory_mb) : 256;
    EXPECT_EQ(device_count(), expected);
    if (expected > 0) {
      EXPECT_EQ(memory(device(0)).second, mb * kMiB);
    }
    TearDown();
    devices_.clear();
  }
  for (const char* count : {"0", "1", "5"}) {
    start({{"XDEV_SIM_DEVICES", count}, {"XDEV_SIM_MEMORY_MB", "3"}});
    EXPECT_EQ(device_count(), static_cast<uint32_t>(std::atoi(count)));
    std::string status = std::string(count) + " simulated device" +
                         (std::string(count) == "1" ? "" : "s") + ", 3 MiB each";
    EXPECT_EQ(api_->describe_status(plugin_), status);
    if (std::atoi(count) > 0) {
      EXPECT_EQ(memory(device(0)).second, 3 * kMiB);
    }
    TearDown();
    devices_.clear();
  }
}

TEST_F(SimPlugin, ZeroDevicesIsAValidMachine) {
  start({{"XDEV_SIM_DEVICES", "0"}});
  EXPECT_EQ(device_count(), 0u);
  xdev_device_t* device = nullptr;
  EXPECT_TRUE(fails_with(take(api_->device_open(plugin_, 0, &device)), XDEV_STATUS_NOT_FOUND,
                         {"ordinal 0", "0 devices"}));
  EXPECT_EQ(device, nullptr);
  const xdev_kernel_info_t* matmul = kernel("MatMul");
  EXPECT_NE(matmul, nullptr);  // kernels are listed even without devices
}

TEST_F(SimPlugin, BadEnvironmentFailsInitializeNamingTheVariable) {
  const std::pair<const char*, const char*> bad[] = {
      {"XDEV_SIM_DEVICES", "two"},   {"XDEV_SIM_DEVICES", "-1"},  {"XDEV_SIM_DEVICES", "65"},
      {"XDEV_SIM_MEMORY_MB", "0"},   {"XDEV_SIM_MEMORY_MB", "1e3"},
      {"XDEV_SIM_DELAY_US", " 5"},   {"XDEV_SIM_DELAY_US", "99999999999999999999999"},
      {"XDEV_SIM_KERNELS", "MatMul,Sqaure"},  {"XDEV_SIM_KERNELS", "MatMul,,Add"},
      {"XDEV_SIM_KERNELS", "matmul"},         {"XDEV_SIM_KERNEL_DTYPES", "float128"},
      {"XDEV_SIM_KERNEL_DTYPES", "float32;int32"},
  };
  for (const auto& [name, value] : bad) {
    ScopedEnv env{{name, value}};
    const Outcome outcome = try_start();
    EXPECT_TRUE(fails_with(outcome, XDEV_STATUS_INVALID_ARGUMENT,
                           {std::string(name) + "='" + value + "'"}));
    EXPECT_EQ(plugin_, nullptr);
  }
}

TEST_F(SimPlugin, DevicesLookLikeGpus) {
  start({{"XDEV_SIM_DEVICES", "3"}, {"XDEV_SIM_MEMORY_MB", "8"}});
  const xdev_device_type_info_t* const* types = nullptr;
  uint32_t type_count = 0;
  ASSERT_OK(api_->device_types(plugin_, &types, &type_count));
  ASSERT_EQ(type_count, 1u);
  EXPECT_EQ(types[0]->struct_size, size_t{XDEV_DEVICE_TYPE_INFO_STRUCT_SIZE});
  EXPECT_STREQ(types[0]->type, "GPU");
  EXPECT_STREQ(types[0]->platform, "sim");
  EXPECT_EQ(types[0]->priority, XDEV_PRIORITY_GPU);
  EXPECT_EQ(types[0]->dlpack_device_type, XDEV_DLPACK_EXT_DEV);  // ABI 1.3

  for (uint32_t i = 0; i < 3; ++i) {
    SCOPED_TRACE(i);
    xdev_device_properties_t props{};
    props.struct_size = XDEV_DEVICE_PROPERTIES_STRUCT_SIZE;
    ASSERT_OK(api_->device_get_properties(plugin_, i, &props));
    const std::string n = std::to_string(i);
    EXPECT_EQ(props.type_index, 0u);
    EXPECT_EQ(std::string(props.name), "Sim Accelerator " + n);
    EXPECT_EQ(std::string(props.bus_id), "sim:0" + n);
    EXPECT_EQ(std::string(props.description),
              "device: " + n + ", name: Sim Accelerator " + n + ", pci bus id: sim:0" + n +
                  ", compute capability: 0.0");
    EXPECT_EQ(props.memory_total, 8 * kMiB);
    EXPECT_EQ(props.numa_node, -1);
    std::map<std::string, std::string> properties;
    for (uint32_t p = 0; p < props.property_count; ++p) {
      properties[props.properties[p].key] = props.properties[p].value;
    }
    EXPECT_EQ(properties["address_tag"], "0x4080000000000000");
    EXPECT_EQ(properties["compute_capability"], "0.0");
  }
  xdev_device_properties_t props{};
  props.struct_size = XDEV_DEVICE_PROPERTIES_STRUCT_SIZE;
  EXPECT_TRUE(fails_with(take(api_->device_get_properties(plugin_, 3, &props)),
                         XDEV_STATUS_NOT_FOUND, {"ordinal 3", "3 devices"}));
}

TEST_F(SimPlugin, PropertiesFillOnlyWhatTheCoresStructCovers) {
  start();
  // A core whose struct ends at memory_total.
  xdev_device_properties_t props{};
  std::memset(&props, 0xAB, sizeof(props));
  props.struct_size = XDEV_STRUCT_SIZE(xdev_device_properties_t, memory_total);
  props.ext = nullptr;
  const xdev_device_properties_t untouched = props;
  ASSERT_OK(api_->device_get_properties(plugin_, 0, &props));
  EXPECT_STREQ(props.name, "Sim Accelerator 0");
  EXPECT_EQ(std::memcmp(&props.bus_id, &untouched.bus_id,
                        sizeof(props) - offsetof(xdev_device_properties_t, bus_id)),
            0);
}

TEST_F(SimPlugin, DevicesOpenOnceAndOnlyWhenTheyExist) {
  start({{"XDEV_SIM_DEVICES", "2"}});
  ASSERT_NE(device(1), nullptr);
  xdev_device_t* again = nullptr;
  EXPECT_TRUE(fails_with(take(api_->device_open(plugin_, 1, &again)),
                         XDEV_STATUS_FAILED_PRECONDITION, {"Sim Accelerator 1", "already open"}));
  EXPECT_TRUE(fails_with(take(api_->device_open(plugin_, 7, &again)), XDEV_STATUS_NOT_FOUND,
                         {"ordinal 7"}));
  // Closed, it opens again.
  api_->device_close(devices_[1]);
  devices_.erase(1);
  EXPECT_NE(device(1), nullptr);
}

// ---------------------------------------------------------------------------
// Memory

TEST_F(SimPlugin, DeviceAddressesAreTaggedAndAligned) {
  xdev_device_t* dev = start_on_device({});
  ASSERT_NE(dev, nullptr);
  for (uint64_t alignment : {1, 2, 64, 128, 256, 4096, 65536}) {
    SCOPED_TRACE(alignment);
    for (uint64_t size : {1, 63, 64, 1000}) {
      void* pointer = allocate(dev, size, alignment);
      ASSERT_NE(pointer, nullptr);
      const auto value = reinterpret_cast<uint64_t>(pointer);
      EXPECT_GE(value, kAddressTag);
      // Below the tag lies a user-space host address (< 2^47).
      EXPECT_LT(value - kAddressTag, uint64_t{1} << 47);
      EXPECT_EQ(value % std::max<uint64_t>(alignment, 64), 0u);
    }
  }
  void* pointer = nullptr;
  EXPECT_TRUE(fails_with(try_allocate(dev, 0, &pointer), XDEV_STATUS_INVALID_ARGUMENT,
                         {"size is 0"}));
  EXPECT_TRUE(fails_with(try_allocate(dev, 64, &pointer, 96), XDEV_STATUS_INVALID_ARGUMENT,
                         {"alignment 96"}));
  EXPECT_TRUE(fails_with(try_allocate(dev, 64, &pointer, 0), XDEV_STATUS_INVALID_ARGUMENT,
                         {"alignment 0"}));
}

TEST_F(SimPluginDeathTest, TheCoreCannotDereferenceDeviceAddresses) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  start();
  void* pointer = allocate(device(0), 64);
  ASSERT_NE(pointer, nullptr);
  EXPECT_DEATH(
      {
        const volatile char value = *static_cast<volatile char*>(pointer);
        (void)value;
      },
      "");
  EXPECT_DEATH(*static_cast<volatile char*>(pointer) = 1, "");
}

TEST_F(SimPlugin, OutOfMemoryIsAStatusThatNamesTheRequestAndTheDevice) {
  start({{"XDEV_SIM_MEMORY_MB", "16"}, {"XDEV_SIM_DEVICES", "2"}});
  xdev_device_t* dev = device(1);
  ASSERT_NE(dev, nullptr);
  void* pointer = nullptr;
  EXPECT_TRUE(fails_with(try_allocate(dev, 17 * kMiB, &pointer), XDEV_STATUS_OUT_OF_MEMORY,
                         {"17825792 bytes", "Sim Accelerator 1", "16777216"}));
  EXPECT_EQ(pointer, nullptr);
  EXPECT_TRUE(fails_with(try_allocate(dev, UINT64_MAX, &pointer), XDEV_STATUS_OUT_OF_MEMORY, {}));
  EXPECT_TRUE(fails_with(try_allocate(dev, 64, &pointer, uint64_t{1} << 62),
                         XDEV_STATUS_OUT_OF_MEMORY, {}));

  // Exhaust it in 1 MiB blocks.
  std::vector<void*> blocks;
  for (int i = 0; i < 100; ++i) {
    void* block = nullptr;
    const Outcome outcome = try_allocate(dev, kMiB, &block);
    if (!outcome.ok()) {
      EXPECT_TRUE(fails_with(outcome, XDEV_STATUS_OUT_OF_MEMORY,
                             {"1048576 bytes", "0 of 16777216 bytes free"}));
      break;
    }
    blocks.push_back(block);
  }
  EXPECT_EQ(blocks.size(), 16u);
  EXPECT_EQ(memory(dev), std::make_pair(uint64_t{0}, 16 * kMiB));
  // The other device is not affected.
  EXPECT_EQ(memory(device(0)).first, 16 * kMiB);

  // Free every other block: 8 MiB free, but no 2 MiB hole.
  for (size_t i = 0; i < blocks.size(); i += 2) release(blocks[i]);
  EXPECT_EQ(memory(dev).first, 8 * kMiB);
  EXPECT_TRUE(fails_with(try_allocate(dev, 2 * kMiB, &pointer), XDEV_STATUS_OUT_OF_MEMORY,
                         {"largest free block 1048576"}));
  // Freed neighbours merge again.
  for (size_t i = 1; i < blocks.size(); i += 2) release(blocks[i]);
  EXPECT_EQ(memory(dev).first, 16 * kMiB);
  EXPECT_NE(allocate(dev, 16 * kMiB), nullptr);
  EXPECT_EQ(memory(dev).first, 0u);
}

TEST_F(SimPlugin, HostMemoryServesCopies) {
  xdev_device_t* dev = start_on_device({});
  xdev_stream_t* s = stream(dev);
  void* pinned = nullptr;
  ASSERT_OK(api_->host_memory_allocate(dev, 1000, &pinned));
  ASSERT_NE(pinned, nullptr);
  host_blocks_[pinned] = dev;
  EXPECT_EQ(reinterpret_cast<uint64_t>(pinned) % 64, 0u);
  const std::vector<unsigned char> data = random_bytes(1000, 7);
  std::memcpy(pinned, data.data(), data.size());
  void* d = allocate(dev, 1000);
  upload(s, d, pinned, 1000);
  EXPECT_EQ(download<unsigned char>(s, d, 1000), data);
  api_->host_memory_free(dev, pinned);
  host_blocks_.erase(pinned);
  // Unknown pointers are ignored (and logged), not freed.
  int local = 0;
  api_->host_memory_free(dev, &local);
  EXPECT_TRUE(fails_with(take(api_->host_memory_allocate(dev, 0, &pinned)),
                         XDEV_STATUS_INVALID_ARGUMENT, {"size is 0"}));
}

// ---------------------------------------------------------------------------
// Copies

TEST_F(SimPlugin, CopiesRoundTripOddSizesAtOddOffsets) {
  xdev_device_t* dev = start_on_device({});
  xdev_stream_t* s = stream(dev);
  unsigned seed = 1;
  for (uint64_t size : {1, 3, 63, 65, 4097, 100003}) {
    for (uint64_t shift : {0, 1, 7, 129}) {
      SCOPED_TRACE(testing::Message() << size << " bytes at +" << shift);
      const std::vector<unsigned char> data = random_bytes(size, seed++);
      void* a = allocate(dev, size + shift + 3);
      void* b = allocate(dev, size + 2 * shift + 5);
      ASSERT_OK(api_->copy_host_to_device(s, offset(a, shift), data.data(), size));
      ASSERT_OK(api_->copy_device_to_device(s, offset(b, 2 * shift + 1), offset(a, shift), size));
      std::vector<unsigned char> back(size + 2, 0x5A);
      ASSERT_OK(api_->copy_device_to_host(s, back.data() + 1, offset(b, 2 * shift + 1), size));
      ASSERT_OK(api_->stream_synchronize(s));
      EXPECT_EQ(back.front(), 0x5A);
      EXPECT_EQ(back.back(), 0x5A);
      EXPECT_TRUE(std::equal(data.begin(), data.end(), back.begin() + 1));
      release(a);
      release(b);
    }
  }
  // Size 0 copies do nothing, whatever the addresses.
  EXPECT_OK(api_->copy_host_to_device(s, nullptr, nullptr, 0));
  EXPECT_OK(api_->copy_device_to_host(s, nullptr, nullptr, 0));
  EXPECT_OK(api_->copy_device_to_device(s, nullptr, nullptr, 0));
  EXPECT_OK(api_->stream_synchronize(s));
}

TEST_F(SimPlugin, PeerCopyMovesDataBetweenDevices) {
  xdev_device_t* d0 = start_on_device({{"XDEV_SIM_DEVICES", "2"}});
  xdev_device_t* d1 = device(1);
  xdev_stream_t* s0 = stream(d0);
  xdev_stream_t* s1 = stream(d1);
  const std::vector<unsigned char> data = random_bytes(5001, 11);
  void* a = allocate(d0, 5001);
  void* b = allocate(d1, 5010);
  upload(s0, a, data.data(), data.size());
  ASSERT_OK(api_->copy_peer(s1, offset(b, 9), d0, a, data.size()));
  EXPECT_EQ(download<unsigned char>(s1, offset(b, 9), data.size()), data);
  // The source must be on src_device, the destination on the stream's.
  EXPECT_TRUE(fails_with(take(api_->copy_peer(s1, b, d1, a, 16)), XDEV_STATUS_INVALID_ARGUMENT,
                         {"copy_peer", "source", hex(a), "Sim Accelerator 1"}));
  EXPECT_TRUE(fails_with(take(api_->copy_peer(s1, a, d0, a, 16)), XDEV_STATUS_INVALID_ARGUMENT,
                         {"destination", hex(a), "Sim Accelerator 1"}));
  EXPECT_TRUE(fails_with(take(api_->copy_peer(s1, b, nullptr, a, 16)),
                         XDEV_STATUS_INVALID_ARGUMENT, {"src_device"}));
}

// ---------------------------------------------------------------------------
// Asynchrony, ordering, events

TEST_F(SimPlugin, WorkRunsAsynchronouslyAndInOrder) {
  start({{"XDEV_SIM_DELAY_US", "100000"}});
  EXPECT_NE(std::string(api_->describe_status(plugin_)).find("100000 us delay"),
            std::string::npos);
  xdev_device_t* dev = device(0);
  xdev_stream_t* s = stream(dev);
  xdev_event_t* done = event(dev);
  constexpr size_t kSize = 4096;
  const std::vector<unsigned char> first = random_bytes(kSize, 21);
  const std::vector<unsigned char> second = random_bytes(kSize, 22);
  std::vector<unsigned char> back(kSize, 0);
  void* d = allocate(dev, kSize);

  const auto start_time = std::chrono::steady_clock::now();
  ASSERT_OK(api_->copy_host_to_device(s, d, first.data(), kSize));
  ASSERT_OK(api_->copy_host_to_device(s, d, second.data(), kSize));
  ASSERT_OK(api_->copy_device_to_host(s, back.data(), d, kSize));
  ASSERT_OK(api_->event_record(done, s));
  // Enqueueing returned before the work (3 x 100 ms) ran. `back` is not
  // read before synchronizing: the worker may be writing it.
  int32_t finished = 1;
  ASSERT_OK(api_->event_query(done, &finished));
  EXPECT_EQ(finished, 0);
  ASSERT_OK(api_->stream_synchronize(s));
  EXPECT_GE(std::chrono::steady_clock::now() - start_time, std::chrono::milliseconds(300));
  ASSERT_OK(api_->event_query(done, &finished));
  EXPECT_EQ(finished, 1);
  // In order: the read-back saw the second write.
  EXPECT_EQ(back, second);
}

#if defined(XDEV_TEST_TSAN)
TEST_F(SimPlugin, HostSourceIsReadWhenTheCopyRuns) {
  GTEST_SKIP() << "changes the host buffer while the copy is queued, racing the worker on "
                  "purpose; ThreadSanitizer would report that race, which the ABI forbids the "
                  "core and this test commits deliberately";
}
#else
TEST_F(SimPlugin, HostSourceIsReadWhenTheCopyRuns) {
  // A plugin that snapshots the host buffer at enqueue would hide a core
  // that lets the buffer change or die before the copy ran.
  xdev_device_t* dev = start_on_device({{"XDEV_SIM_DELAY_US", "200000"}});
  xdev_stream_t* s = stream(dev);
  std::vector<unsigned char> source(256, 1);
  std::vector<unsigned char> back(256, 0);
  void* d = allocate(dev, 256);
  ASSERT_OK(api_->copy_host_to_device(s, d, source.data(), source.size()));
  std::fill(source.begin(), source.end(), 2);  // the copy has not run yet
  ASSERT_OK(api_->copy_device_to_host(s, back.data(), d, back.size()));
  ASSERT_OK(api_->stream_synchronize(s));
  EXPECT_EQ(back, std::vector<unsigned char>(256, 2));
}
#endif

TEST_F(SimPlugin, EventOrdersWorkAcrossStreams) {
  xdev_device_t* dev = start_on_device({{"XDEV_SIM_DELAY_US", "30000"}});
  xdev_stream_t* producer = stream(dev);
  xdev_stream_t* consumer = stream(dev);
  xdev_event_t* ready = event(dev);
  constexpr size_t kChunk = 1000;
  constexpr size_t kChunks = 5;
  const std::vector<unsigned char> data = random_bytes(kChunk * kChunks, 31);
  void* d = allocate(dev, data.size());
  const std::vector<unsigned char> zeros(data.size(), 0);
  upload(producer, d, zeros.data(), zeros.size());

  // The producer writes the buffer in 5 slow pieces; the consumer reads it
  // all after the event, and would see zeros had it not waited.
  for (size_t i = 0; i < kChunks; ++i) {
    ASSERT_OK(api_->copy_host_to_device(producer, offset(d, i * kChunk),
                                        data.data() + i * kChunk, kChunk));
  }
  ASSERT_OK(api_->event_record(ready, producer));
  ASSERT_OK(api_->stream_wait_event(consumer, ready));
  std::vector<unsigned char> back(data.size(), 0xEE);
  ASSERT_OK(api_->copy_device_to_host(consumer, back.data(), d, back.size()));
  ASSERT_OK(api_->stream_synchronize(consumer));  // not the producer
  EXPECT_EQ(back, data);
  int32_t finished = 0;
  ASSERT_OK(api_->event_query(ready, &finished));
  EXPECT_EQ(finished, 1);
}

TEST_F(SimPlugin, EventOrdersAPeerCopyAcrossDevices) {
  xdev_device_t* d0 = start_on_device({{"XDEV_SIM_DELAY_US", "30000"}, {"XDEV_SIM_DEVICES", "2"}});
  xdev_device_t* d1 = device(1);
  xdev_stream_t* s0 = stream(d0);
  xdev_stream_t* s1 = stream(d1);
  xdev_event_t* written = event(d0);
  const std::vector<unsigned char> data = random_bytes(3000, 41);
  void* a = allocate(d0, data.size());
  void* b = allocate(d1, data.size());
  for (size_t i = 0; i < 3; ++i) {
    ASSERT_OK(api_->copy_host_to_device(s0, offset(a, i * 1000), data.data() + i * 1000, 1000));
  }
  ASSERT_OK(api_->event_record(written, s0));
  ASSERT_OK(api_->stream_wait_event(s1, written));
  ASSERT_OK(api_->copy_peer(s1, b, d0, a, data.size()));
  std::vector<unsigned char> back(data.size(), 0);
  ASSERT_OK(api_->copy_device_to_host(s1, back.data(), b, back.size()));
  ASSERT_OK(api_->stream_synchronize(s1));
  EXPECT_EQ(back, data);
}

TEST_F(SimPlugin, EventsCompleteWhenTheirStreamGetsThere) {
  xdev_device_t* dev = start_on_device({{"XDEV_SIM_DELAY_US", "50000"}});
  xdev_stream_t* s = stream(dev);
  xdev_stream_t* other = stream(dev);
  xdev_event_t* e = event(dev);

  // Never recorded: complete, and waiting for it does nothing.
  int32_t finished = 0;
  ASSERT_OK(api_->event_query(e, &finished));
  EXPECT_EQ(finished, 1);
  ASSERT_OK(api_->event_synchronize(e));
  ASSERT_OK(api_->stream_wait_event(other, e));

  // event_synchronize blocks until the work before the mark ran.
  const std::vector<unsigned char> data = random_bytes(512, 51);
  std::vector<unsigned char> back(512, 0);
  void* d = allocate(dev, 512);
  ASSERT_OK(api_->copy_host_to_device(s, d, data.data(), data.size()));
  ASSERT_OK(api_->copy_device_to_host(s, back.data(), d, back.size()));
  ASSERT_OK(api_->event_record(e, s));
  ASSERT_OK(api_->event_synchronize(e));
  EXPECT_EQ(back, data);
  ASSERT_OK(api_->event_query(e, &finished));
  EXPECT_EQ(finished, 1);

  // Re-recording replaces the mark: pending again until the new point.
  ASSERT_OK(api_->copy_host_to_device(s, d, data.data(), data.size()));
  ASSERT_OK(api_->event_record(e, s));
  ASSERT_OK(api_->event_query(e, &finished));
  EXPECT_EQ(finished, 0);
  ASSERT_OK(api_->event_synchronize(e));
  ASSERT_OK(api_->event_query(e, &finished));
  EXPECT_EQ(finished, 1);

  // An event may be destroyed while its mark is pending.
  xdev_event_t* short_lived = nullptr;
  ASSERT_OK(api_->event_create(dev, &short_lived));
  ASSERT_OK(api_->copy_host_to_device(s, d, data.data(), data.size()));
  ASSERT_OK(api_->event_record(short_lived, s));
  ASSERT_OK(api_->stream_wait_event(other, short_lived));
  api_->event_destroy(short_lived);
  ASSERT_OK(api_->stream_synchronize(other));
  ASSERT_OK(api_->stream_synchronize(s));
}

TEST_F(SimPlugin, AsynchronousErrorsComeFromTheNextSynchronize) {
  xdev_device_t* dev = start_on_device({{"XDEV_SIM_DELAY_US", "200000"}});
  xdev_stream_t* s = stream(dev);
  std::vector<unsigned char> data(128, 3);
  void* d = allocate(dev, 128);
  // A core bug: memory freed while a copy into it is still queued.
  ASSERT_OK(api_->copy_host_to_device(s, d, data.data(), data.size()));
  release(d);
  EXPECT_TRUE(fails_with(take(api_->stream_synchronize(s)), XDEV_STATUS_INVALID_ARGUMENT,
                         {"asynchronous", "copy_host_to_device", hex(d), "no live allocation"}));
  // Reported once.
  EXPECT_OK(api_->stream_synchronize(s));

  // A stream destroyed with an error nobody collected logs it and goes.
  xdev_stream_t* careless = nullptr;
  ASSERT_OK(api_->stream_create(dev, &careless));
  void* d2 = allocate(dev, 128);
  ASSERT_OK(api_->copy_host_to_device(careless, d2, data.data(), data.size()));
  release(d2);
  api_->stream_destroy(careless);
}

// ---------------------------------------------------------------------------
// Addresses the plugin refuses

TEST_F(SimPlugin, AddressesOutsideLiveAllocationsAreInvalidArguments) {
  xdev_device_t* d0 = start_on_device({{"XDEV_SIM_DEVICES", "2"}});
  xdev_device_t* d1 = device(1);
  xdev_stream_t* s = stream(d0);
  std::vector<unsigned char> host(256, 0);
  void* a = allocate(d0, 100);
  void* other_device = allocate(d1, 100);

  struct Case {
    const char* what;
    void* device_address;
    uint64_t size;
    std::string expected;
  };
  const Case cases[] = {
      {"a host pointer", host.data(), 16, "not in the memory of Sim Accelerator 0"},
      {"the bare tag", reinterpret_cast<void*>(kAddressTag), 16, "not in the memory"},
      {"another device's memory", other_device, 16, "not in the memory of Sim Accelerator 0"},
      {"past the allocation", offset(a, 90), 16, "overruns the allocation of 100 bytes"},
      {"after the allocation's end", offset(a, 100), 1, "no live allocation"},
      {"never allocated", offset(a, 4096), 1, "no live allocation"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    EXPECT_TRUE(fails_with(take(api_->copy_host_to_device(s, c.device_address, host.data(),
                                                          c.size)),
                           XDEV_STATUS_INVALID_ARGUMENT,
                           {"copy_host_to_device", "destination", hex(c.device_address),
                            c.expected}));
    EXPECT_TRUE(fails_with(take(api_->copy_device_to_host(s, host.data(), c.device_address,
                                                          c.size)),
                           XDEV_STATUS_INVALID_ARGUMENT,
                           {"copy_device_to_host", "source", hex(c.device_address), c.expected}));
    EXPECT_TRUE(fails_with(take(api_->copy_device_to_device(s, a, c.device_address, c.size)),
                           XDEV_STATUS_INVALID_ARGUMENT, {"copy_device_to_device", c.expected}));
  }
  // Freed memory.
  void* freed = allocate(d0, 64);
  release(freed);
  EXPECT_TRUE(fails_with(take(api_->copy_host_to_device(s, freed, host.data(), 8)),
                         XDEV_STATUS_INVALID_ARGUMENT, {hex(freed), "no live allocation"}));
  // A device address where host memory belongs.
  EXPECT_TRUE(fails_with(take(api_->copy_host_to_device(s, a, other_device, 8)),
                         XDEV_STATUS_INVALID_ARGUMENT, {"source", "sim device address"}));
  EXPECT_TRUE(fails_with(take(api_->copy_device_to_host(s, a, a, 8)),
                         XDEV_STATUS_INVALID_ARGUMENT, {"destination", "sim device address"}));
  // Overlapping regions within a device.
  EXPECT_TRUE(fails_with(take(api_->copy_device_to_device(s, offset(a, 8), a, 16)),
                         XDEV_STATUS_INVALID_ARGUMENT, {"overlap"}));
  EXPECT_TRUE(fails_with(take(api_->copy_host_to_device(s, a, nullptr, 8)),
                         XDEV_STATUS_INVALID_ARGUMENT, {"src is NULL"}));
  // Freeing what is no allocation is ignored (and logged); memory still works.
  api_->memory_free(d0, host.data());
  api_->memory_free(d0, offset(a, 64));
  api_->memory_free(d0, nullptr);
  EXPECT_OK(api_->copy_host_to_device(s, a, host.data(), 100));
  EXPECT_OK(api_->stream_synchronize(s));
}

// ---------------------------------------------------------------------------
// Kernels

// The ops and dtypes of the cpu plugin's host kernels (plugins/cpu/kernels/
// registry.cpp), which the sim runs.
constexpr uint64_t kF32 = XDEV_DTYPE_BIT(XDEV_DTYPE_FLOAT32);
constexpr uint64_t kF64 = XDEV_DTYPE_BIT(XDEV_DTYPE_FLOAT64);
constexpr uint64_t kFloats = kF32 | kF64;
constexpr uint64_t kNumeric =
    kFloats | XDEV_DTYPE_BIT(XDEV_DTYPE_INT32) | XDEV_DTYPE_BIT(XDEV_DTYPE_INT64);
constexpr uint64_t kBool = XDEV_DTYPE_BIT(XDEV_DTYPE_BOOL);
constexpr uint64_t kHalves = XDEV_DTYPE_BIT(XDEV_DTYPE_FLOAT16) | XDEV_DTYPE_BIT(XDEV_DTYPE_BFLOAT16);
constexpr uint64_t kEvery = kNumeric | kBool | kHalves | XDEV_DTYPE_BIT(XDEV_DTYPE_UINT8) |
                            XDEV_DTYPE_BIT(XDEV_DTYPE_INT8);

TEST_F(SimPlugin, EveryOpOfTheHostKernelsIsRegisteredByDefault) {
  start();
  const xdev_kernel_info_t* const* kernels = nullptr;
  uint32_t count = 0;
  ASSERT_OK(api_->kernels(plugin_, &kernels, &count));
  // One kernel per op of the op table: the cpu plugin has them all.
  EXPECT_EQ(count, static_cast<uint32_t>(xdev::detail::kOpCount));
  std::set<std::string> ops;
  for (uint32_t i = 0; i < count; ++i) {
    EXPECT_EQ(kernels[i]->struct_size, size_t{XDEV_KERNEL_INFO_STRUCT_SIZE});
    EXPECT_EQ(kernels[i]->type_index, 0u);
    EXPECT_NE(kernels[i]->fn, nullptr);
    EXPECT_TRUE(ops.insert(kernels[i]->op).second) << kernels[i]->op << " twice";
  }
  for (const xdev::detail::OpDef& def : xdev::detail::op_defs()) {
    EXPECT_EQ(ops.count(def.name), 1u) << def.name;
  }
  // With the host kernels' dtypes (arithmetic, comparisons, ArgMax: the
  // 8-bit integers too).
  constexpr uint64_t kBytes = XDEV_DTYPE_BIT(XDEV_DTYPE_UINT8) | XDEV_DTYPE_BIT(XDEV_DTYPE_INT8);
  struct Expected {
    const char* op;
    uint64_t inputs;
    uint64_t outputs;
  };
  // Float ops take float16 and bfloat16; Cast, Select and data movement
  // every dtype.
  for (const Expected& e :
       {Expected{"MatMul", kNumeric | kHalves, kNumeric | kHalves},
        Expected{"Add", kNumeric | kBool | kHalves | kBytes,
                 kNumeric | kBool | kHalves | kBytes},
        Expected{"Cast", kEvery, kEvery}, Expected{"Exp", kFloats | kHalves, kFloats | kHalves},
        Expected{"Less", kNumeric | kHalves | kBytes, kBool},
        Expected{"Select", kBool, kEvery},
        Expected{"Slice", kEvery, kEvery},
        Expected{"RandomUniform", kFloats, kFloats},
        Expected{"ArgMax", kNumeric | kBool | kHalves | kBytes,
                 XDEV_DTYPE_BIT(XDEV_DTYPE_INT64)}}) {
    const xdev_kernel_info_t* info = kernel(e.op);
    ASSERT_NE(info, nullptr) << e.op;
    EXPECT_EQ(info->input_dtypes, e.inputs) << e.op;
    EXPECT_EQ(info->output_dtypes, e.outputs) << e.op;
  }
}

TEST_F(SimPlugin, TheEnvironmentPicksOpsAndDtypes) {
  // The set the sim had before it ran the host kernels: what the tests of
  // fallback and placement set (tests/core/meson.build).
  start({{"XDEV_SIM_KERNELS", "MatMul, Add"}, {"XDEV_SIM_KERNEL_DTYPES", "float32,float64"}});
  const xdev_kernel_info_t* const* kernels = nullptr;
  uint32_t count = 0;
  ASSERT_OK(api_->kernels(plugin_, &kernels, &count));
  ASSERT_EQ(count, 2u);
  std::vector<std::string> ops;
  for (uint32_t i = 0; i < count; ++i) {
    EXPECT_EQ(kernels[i]->input_dtypes, kFloats);
    ops.push_back(kernels[i]->op);
  }
  EXPECT_EQ(ops, (std::vector<std::string>{"MatMul", "Add"}));  // the host kernels' order
  EXPECT_EQ(kernel("Cast"), nullptr);  // the core must fall back to the CPU
  TearDown();

  // Dtypes alone: an op left with no input dtype is not registered.
  start({{"XDEV_SIM_KERNELS", "Exp,LogicalNot,Add"}, {"XDEV_SIM_KERNEL_DTYPES", "bool"}});
  ASSERT_OK(api_->kernels(plugin_, &kernels, &count));
  ASSERT_EQ(count, 2u);
  EXPECT_EQ(kernel("Exp"), nullptr);
  ASSERT_NE(kernel("LogicalNot"), nullptr);
  EXPECT_EQ(kernel("Add")->input_dtypes, kBool);
  // Looked up by input 0; the 8-bit integers too.
  EXPECT_EQ(kernel("Add")->output_dtypes,
            kNumeric | kBool | kHalves | XDEV_DTYPE_BIT(XDEV_DTYPE_UINT8) |
                XDEV_DTYPE_BIT(XDEV_DTYPE_INT8));
}

TEST_F(SimPlugin, MatMulComputesTheWalkthroughProduct) {
  xdev_device_t* dev = start_on_device({});
  xdev_stream_t* s = stream(dev);
  auto check = [&](auto zero, xdev_dtype_t dtype) {
    using T = decltype(zero);
    const std::vector<T> a = {1, 2, 3, 4, 5, 6};
    const std::vector<T> b = {1, 2, 3, 4, 5, 6};
    void* da = allocate(dev, sizeof(T) * 6);
    void* db = allocate(dev, sizeof(T) * 6);
    void* dc = allocate(dev, sizeof(T) * 4);
    upload(s, da, a.data(), sizeof(T) * 6);
    upload(s, db, b.data(), sizeof(T) * 6);
    KernelCall call("MatMul", dev, s);
    call.input(da, dtype, {2, 3}).input(db, dtype, {3, 2}).output(dc, dtype, {2, 2});
    const Outcome outcome = run("MatMul", call);
    ASSERT_TRUE(outcome.ok()) << outcome.message;
    EXPECT_EQ(download<T>(s, dc, 4), (std::vector<T>{22, 28, 49, 64}));
  };
  check(float{}, XDEV_DTYPE_FLOAT32);
  check(double{}, XDEV_DTYPE_FLOAT64);
}

TEST_F(SimPlugin, MatMulHonoursTransposes) {
  xdev_device_t* dev = start_on_device({});
  xdev_stream_t* s = stream(dev);
  const int64_t m = 4, k = 5, n = 3;
  // Logical a [m, k] and b [k, n], stored transposed when asked.
  const std::vector<double> a = random_values<double>(m * k, 61);
  const std::vector<double> b = random_values<double>(k * n, 62);
  std::vector<double> expected(m * n, 0);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      for (int64_t p = 0; p < k; ++p) expected[i * n + j] += a[i * k + p] * b[p * n + j];
    }
  }
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) {
      SCOPED_TRACE(testing::Message() << "transpose_a " << ta << ", transpose_b " << tb);
      std::vector<double> stored_a(a.size());
      std::vector<double> stored_b(b.size());
      for (int64_t i = 0; i < m; ++i) {
        for (int64_t p = 0; p < k; ++p) (ta ? stored_a[p * m + i] : stored_a[i * k + p]) = a[i * k + p];
      }
      for (int64_t p = 0; p < k; ++p) {
        for (int64_t j = 0; j < n; ++j) (tb ? stored_b[j * k + p] : stored_b[p * n + j]) = b[p * n + j];
      }
      for (xdev_dtype_t dtype : {XDEV_DTYPE_FLOAT64, XDEV_DTYPE_FLOAT32}) {
        const bool f32 = dtype == XDEV_DTYPE_FLOAT32;
        const size_t item = f32 ? 4 : 8;
        auto bytes_of = [&](const std::vector<double>& values) {
          std::vector<unsigned char> bytes(values.size() * item);
          for (size_t i = 0; i < values.size(); ++i) {
            if (f32) {
              const float value = static_cast<float>(values[i]);
              std::memcpy(bytes.data() + i * 4, &value, 4);
            } else {
              std::memcpy(bytes.data() + i * 8, &values[i], 8);
            }
          }
          return bytes;
        };
        const std::vector<unsigned char> host_a = bytes_of(stored_a);
        const std::vector<unsigned char> host_b = bytes_of(stored_b);
        void* da = allocate(dev, host_a.size());
        void* db = allocate(dev, host_b.size());
        void* dc = allocate(dev, m * n * item);
        upload(s, da, host_a.data(), host_a.size());
        upload(s, db, host_b.data(), host_b.size());
        KernelCall call("MatMul", dev, s);
        call.input(da, dtype, ta ? std::vector<int64_t>{k, m} : std::vector<int64_t>{m, k})
            .input(db, dtype, tb ? std::vector<int64_t>{n, k} : std::vector<int64_t>{k, n})
            .output(dc, dtype, {m, n})
            .attr("transpose_a", ta)
            .attr("transpose_b", tb);
        const Outcome outcome = run("MatMul", call);
        ASSERT_TRUE(outcome.ok()) << outcome.message;
        const std::vector<unsigned char> result = download<unsigned char>(s, dc, m * n * item);
        for (int64_t i = 0; i < m * n; ++i) {
          double value = 0;
          if (f32) {
            float f = 0;
            std::memcpy(&f, result.data() + i * 4, 4);
            value = f;
          } else {
            std::memcpy(&value, result.data() + i * 8, 8);
          }
          EXPECT_DOUBLE_EQ(value, expected[i]) << "element " << i;
        }
      }
    }
  }
}

TEST_F(SimPlugin, AddBroadcastsStrideZeroInputs) {
  xdev_device_t* dev = start_on_device({});
  xdev_stream_t* s = stream(dev);
  auto check = [&](auto zero, xdev_dtype_t dtype) {
    using T = decltype(zero);
    // x: a [2, 3] matrix stored after 2 elements of padding (byte_offset).
    const std::vector<T> x = {-1, -1, 1, 2, 3, 4, 5, 6};
    const std::vector<T> row = {10, 20, 30};
    const std::vector<T> column = {100, 200};
    const std::vector<T> scalar = {7};
    // xt: [3, 2] storage read as its transpose, a [2, 3] view.
    const std::vector<T> xt = {1, 4, 2, 5, 3, 6};
    void* dx = allocate(dev, sizeof(T) * x.size());
    void* drow = allocate(dev, sizeof(T) * 3);
    void* dcolumn = allocate(dev, sizeof(T) * 2);
    void* dscalar = allocate(dev, sizeof(T));
    void* dxt = allocate(dev, sizeof(T) * 6);
    void* out = allocate(dev, sizeof(T) * 6);
    upload(s, dx, x.data(), sizeof(T) * x.size());
    upload(s, drow, row.data(), sizeof(T) * 3);
    upload(s, dcolumn, column.data(), sizeof(T) * 2);
    upload(s, dscalar, scalar.data(), sizeof(T));
    upload(s, dxt, xt.data(), sizeof(T) * 6);

    struct Case {
      const char* what;
      void* y;
      std::vector<int64_t> y_strides;
      std::vector<T> expected;
    };
    const Case cases[] = {
        {"row broadcast", drow, {0, 1}, {11, 22, 33, 14, 25, 36}},
        {"column broadcast", dcolumn, {1, 0}, {101, 102, 103, 204, 205, 206}},
        {"scalar broadcast", dscalar, {0, 0}, {8, 9, 10, 11, 12, 13}},
        {"transposed view", dxt, {1, 2}, {2, 4, 6, 8, 10, 12}},
    };
    for (const Case& c : cases) {
      SCOPED_TRACE(c.what);
      KernelCall call("Add", dev, s);
      call.input(dx, dtype, {2, 3}, {}, 2 * sizeof(T))
          .input(c.y, dtype, {2, 3}, c.y_strides)
          .output(out, dtype, {2, 3});
      const Outcome outcome = run("Add", call);
      ASSERT_TRUE(outcome.ok()) << outcome.message;
      EXPECT_EQ(download<T>(s, out, 6), c.expected);
    }
    // Rank 0.
    KernelCall call("Add", dev, s);
    call.input(dscalar, dtype, {}).input(dscalar, dtype, {}).output(out, dtype, {});
    const Outcome outcome = run("Add", call);
    ASSERT_TRUE(outcome.ok()) << outcome.message;
    EXPECT_EQ(download<T>(s, out, 1), std::vector<T>{14});
  };
  check(float{}, XDEV_DTYPE_FLOAT32);
  check(double{}, XDEV_DTYPE_FLOAT64);
}

TEST_F(SimPlugin, KernelCallsAreCheckedWhenTheyAreMade) {
  xdev_device_t* dev = start_on_device(
      {{"XDEV_SIM_DEVICES", "2"}, {"XDEV_SIM_KERNEL_DTYPES", "float32,float64"}});
  xdev_stream_t* s = stream(dev);
  xdev_stream_t* s1 = stream(device(1));
  void* a = allocate(dev, 64);
  void* b = allocate(dev, 64);
  void* c = allocate(dev, 64);
  std::vector<float> host(16);
  const auto f32 = XDEV_DTYPE_FLOAT32;

  {
    KernelCall call("MatMul", dev, s);
    call.input(a, XDEV_DTYPE_INT32, {2, 2}).input(b, XDEV_DTYPE_INT32, {2, 2});
    call.output(c, XDEV_DTYPE_INT32, {2, 2});
    EXPECT_TRUE(fails_with(run("MatMul", call), XDEV_STATUS_UNIMPLEMENTED,
                           {"MatMul on Sim Accelerator 0", "no kernel for dtype int32",
                            "registered: float32, float64"}));
  }
  {
    KernelCall call("Less", dev, s);
    call.input(a, f32, {4}).input(b, f32, {4}).output(c, f32, {4});
    EXPECT_TRUE(fails_with(run("Less", call), XDEV_STATUS_UNIMPLEMENTED,
                           {"no kernel for output dtype float32", "registered: bool"}));
  }
  {
    KernelCall call("Add", dev, s);
    call.input(a, f32, {4}).input(b, f32, {4}).output(a, f32, {4});
    EXPECT_TRUE(fails_with(run("Add", call), XDEV_STATUS_INVALID_ARGUMENT,
                           {"Add output 0 aliases Add input 0"}));
  }
  {
    KernelCall call("Add", dev, s);
    call.input(a, f32, {2, 2}).input(b, f32, {2, 2}).output(c, f32, {2, 2}, {1, 2});
    EXPECT_TRUE(fails_with(run("Add", call), XDEV_STATUS_INVALID_ARGUMENT,
                           {"Add output 0 must be contiguous"}));
  }
  {
    KernelCall call("Add", dev, s);
    call.input(host.data(), f32, {4}).input(b, f32, {4}).output(c, f32, {4});
    EXPECT_TRUE(fails_with(run("Add", call), XDEV_STATUS_INVALID_ARGUMENT,
                           {"Add input 0", hex(host.data()), "not in the memory"}));
  }
  {
    // 17 floats do not fit in a 64-byte allocation; every tensor of any op
    // is checked, the output too.
    KernelCall call("Neg", dev, s);
    call.input(a, f32, {4}).output(c, f32, {17});
    EXPECT_TRUE(fails_with(run("Neg", call), XDEV_STATUS_INVALID_ARGUMENT,
                           {"Neg output 0", "overruns"}));
  }
  {
    KernelCall call("AddN", dev, s);
    call.input(a, f32, {4}).input(b, f32, {4}).input(c, f32, {17}).output(c, f32, {4});
    EXPECT_TRUE(fails_with(run("AddN", call), XDEV_STATUS_INVALID_ARGUMENT,
                           {"AddN input 2", "overruns"}));
  }
  {
    KernelCall call("Neg", dev, s);
    call.input(a, f32, {4});
    EXPECT_TRUE(fails_with(run("Neg", call), XDEV_STATUS_INVALID_ARGUMENT,
                           {"Neg on Sim Accelerator 0", "the call has no output"}));
  }
  {
    KernelCall call("Sum", dev, s);
    call.input(a, f32, {4}).output(c, f32, {});
    xdev_attr_t axes{};
    axes.name = "axes";
    axes.kind = XDEV_ATTR_INTS;
    axes.value.ints.values = nullptr;  // a garbage list is refused before it is copied
    axes.value.ints.count = 1;
    call.attribute(axes);
    EXPECT_TRUE(fails_with(run("Sum", call), XDEV_STATUS_INVALID_ARGUMENT,
                           {"attribute 'axes' has 1 ints"}));
    axes.value.ints.values = reinterpret_cast<const int64_t*>(host.data());
    axes.value.ints.count = int64_t{1} << 40;
    KernelCall huge("Sum", dev, s);
    huge.input(a, f32, {4}).output(c, f32, {}).attribute(axes);
    EXPECT_TRUE(fails_with(run("Sum", huge), XDEV_STATUS_INVALID_ARGUMENT,
                           {"attribute 'axes' has 1099511627776 ints"}));
  }
  {
    KernelCall call("MatMul", dev, s);
    call.input(a, f32, {2, 2}).input(b, f32, {2, 2}).output(c, f32, {2, 2});
    xdev_kernel_call_t* raw = call.get();
    raw->attr_count = 2;  // and attrs NULL
    const xdev_kernel_info_t* matmul = kernel("MatMul");
    EXPECT_TRUE(fails_with(take(matmul->fn(matmul->kernel_context, raw)),
                           XDEV_STATUS_INVALID_ARGUMENT, {"2 attributes but no array"}));
  }
  {
    KernelCall call("Add", dev, s1);  // a stream of device 1
    call.input(a, f32, {4}).input(b, f32, {4}).output(c, f32, {4});
    EXPECT_TRUE(fails_with(run("Add", call), XDEV_STATUS_INVALID_ARGUMENT,
                           {"stream belongs to Sim Accelerator 1"}));
  }
  {
    KernelCall call("Sub", dev, s);
    call.input(a, f32, {4}).input(b, f32, {4}).output(c, f32, {4});
    const xdev_kernel_info_t* add = kernel("Add");
    EXPECT_TRUE(fails_with(take(add->fn(add->kernel_context, call.get())),
                           XDEV_STATUS_INVALID_ARGUMENT, {"called for op 'Sub'"}));
    EXPECT_TRUE(fails_with(take(add->fn(add->kernel_context, nullptr)),
                           XDEV_STATUS_INVALID_ARGUMENT, {"call is NULL"}));
  }
  // Nothing was enqueued by the refused calls.
  EXPECT_OK(api_->stream_synchronize(s));
}

// What only the host kernel checks (an op's input count, shapes, attribute
// kinds) it finds when it runs on the stream: the call returns OK, the next
// stream_synchronize returns the refusal naming the op and the device, and
// the output is not written.
TEST_F(SimPlugin, WhatTheHostKernelRefusesFailsTheNextSynchronize) {
  xdev_device_t* dev = start_on_device({});
  xdev_stream_t* s = stream(dev);
  void* a = allocate(dev, 64);
  void* b = allocate(dev, 64);
  void* c = allocate(dev, 64);
  const std::vector<unsigned char> fill(64, 0xab);
  upload(s, c, fill.data(), fill.size());
  const auto f32 = XDEV_DTYPE_FLOAT32;
  auto refused = [&](KernelCall& call, const char* op, xdev_status_code_t code,
                     const std::string& what) {
    SCOPED_TRACE(what);
    const Outcome outcome = run(op, call);
    ASSERT_TRUE(outcome.ok()) << outcome.message;
    EXPECT_TRUE(fails_with(take(api_->stream_synchronize(s)), code,
                           {std::string(op) + " on Sim Accelerator 0 (sim:00), when it ran: ",
                            what}));
    EXPECT_OK(api_->stream_synchronize(s));  // reported once
    EXPECT_EQ(download<unsigned char>(s, c, 64), fill);
  };
  {
    KernelCall call("MatMul", dev, s);
    call.input(a, f32, {2, 2}).output(c, f32, {2, 2});
    refused(call, "MatMul", XDEV_STATUS_INVALID_ARGUMENT, "takes 2 inputs, got 1");
  }
  {
    KernelCall call("Add", dev, s);
    call.input(a, f32, {4}).input(b, XDEV_DTYPE_FLOAT64, {4}).output(c, f32, {4});
    refused(call, "Add", XDEV_STATUS_INVALID_ARGUMENT, "input 1 is float64 but input 0 is float32");
  }
  {
    KernelCall call("MatMul", dev, s);
    call.input(a, f32, {2, 2}).input(b, f32, {2, 2}).output(c, f32, {2, 2});
    xdev_attr_t transpose{};
    transpose.name = "transpose_a";
    transpose.kind = XDEV_ATTR_FLOAT;
    transpose.value.f = 1.0;
    call.attribute(transpose);
    refused(call, "MatMul", XDEV_STATUS_INVALID_ARGUMENT, "'transpose_a' must be a bool");
  }
  {
    // Every other float: neither a row- nor a column-major matrix.
    KernelCall call("MatMul", dev, s);
    call.input(a, f32, {2, 2}, {4, 2}).input(b, f32, {2, 2}).output(c, f32, {2, 2});
    refused(call, "MatMul", XDEV_STATUS_INVALID_ARGUMENT, "inputs must be contiguous");
  }
  {
    KernelCall call("MatMul", dev, s);
    call.input(a, f32, {2, 3}).input(b, f32, {2, 2}).output(c, f32, {2, 2});
    refused(call, "MatMul", XDEV_STATUS_INVALID_ARGUMENT, "op(a) is 2x3, op(b) 2x2");
  }
  {
    KernelCall call("Add", dev, s);
    call.input(a, f32, {4}).input(b, f32, {3}).output(c, f32, {4});
    refused(call, "Add", XDEV_STATUS_INVALID_ARGUMENT, "input 1 has shape (3,)");
  }
}

// The host kernels run on the stream's worker over the device's memory:
// ops with attributes of every kind the core passes (ints, dtype, float),
// other output dtypes, no inputs, strided and offset inputs.
TEST_F(SimPlugin, HostKernelsComputeOnTheDevicesMemory) {
  xdev_device_t* dev = start_on_device({{"XDEV_SIM_DELAY_US", "1000"}});
  xdev_stream_t* s = stream(dev);
  const std::vector<int32_t> x = {-7, 3, 3, 9, 1, -2};  // [2, 3] after 1 int of padding
  std::vector<int32_t> stored = {99};
  stored.insert(stored.end(), x.begin(), x.end());
  void* dx = allocate(dev, sizeof(int32_t) * stored.size());
  upload(s, dx, stored.data(), sizeof(int32_t) * stored.size());
  void* out = allocate(dev, 64);
  const auto i32 = XDEV_DTYPE_INT32;
  {
    // Sum over axis 1 (an ints attribute), x read through byte_offset.
    KernelCall call("Sum", dev, s);
    xdev_attr_t axes{};
    const int64_t axis[] = {1};
    axes.name = "axes";
    axes.kind = XDEV_ATTR_INTS;
    axes.value.ints.values = axis;
    axes.value.ints.count = 1;
    call.input(dx, i32, {2, 3}, {}, sizeof(int32_t)).output(out, i32, {2}).attribute(axes);
    const Outcome outcome = run("Sum", call);
    ASSERT_TRUE(outcome.ok()) << outcome.message;
    EXPECT_EQ(download<int32_t>(s, out, 2), (std::vector<int32_t>{-1, 8}));
  }
  {
    // Cast int32 -> float64 of the transpose (strides {1, 3}).
    KernelCall call("Cast", dev, s);
    xdev_attr_t dtype{};
    dtype.name = "dtype";
    dtype.kind = XDEV_ATTR_DTYPE;
    dtype.value.dtype = XDEV_DTYPE_FLOAT64;
    call.input(dx, i32, {3, 2}, {1, 3}, sizeof(int32_t))
        .output(out, XDEV_DTYPE_FLOAT64, {3, 2})
        .attribute(dtype);
    const Outcome outcome = run("Cast", call);
    ASSERT_TRUE(outcome.ok()) << outcome.message;
    EXPECT_EQ(download<double>(s, out, 6), (std::vector<double>{-7, 9, 3, 1, 3, -2}));
  }
  {
    // ArgMax along axis 1: int64 indices.
    KernelCall call("ArgMax", dev, s);
    call.input(dx, i32, {2, 3}, {}, sizeof(int32_t))
        .output(out, XDEV_DTYPE_INT64, {2})
        .attr("axis", int64_t{1});
    const Outcome outcome = run("ArgMax", call);
    ASSERT_TRUE(outcome.ok()) << outcome.message;
    EXPECT_EQ(download<int64_t>(s, out, 2), (std::vector<int64_t>{1, 0}));
  }
  {
    // Fill: no inputs, looked up by the output's dtype.
    KernelCall call("Fill", dev, s);
    xdev_attr_t value{};
    value.name = "value";
    value.kind = XDEV_ATTR_FLOAT;
    value.value.f = 2.5;
    call.output(out, XDEV_DTYPE_FLOAT32, {3}).attribute(value);
    const Outcome outcome = run("Fill", call);
    ASSERT_TRUE(outcome.ok()) << outcome.message;
    EXPECT_EQ(download<float>(s, out, 3), (std::vector<float>{2.5f, 2.5f, 2.5f}));
  }
  {
    // A comparison: bool output.
    KernelCall call("Greater", dev, s);
    call.input(dx, i32, {6}, {}, sizeof(int32_t))
        .input(dx, i32, {6}, {0}, 4 * sizeof(int32_t))  // x[3] = 9 broadcast
        .output(out, XDEV_DTYPE_BOOL, {6});
    const Outcome outcome = run("Greater", call);
    ASSERT_TRUE(outcome.ok()) << outcome.message;
    EXPECT_EQ(download<unsigned char>(s, out, 6), (std::vector<unsigned char>{0, 0, 0, 0, 0, 0}));
  }
}

// The threads of this process (Linux: /proc/self/task).
size_t thread_count() {
  size_t count = 0;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/task")) {
    (void)entry;
    ++count;
  }
  return count;
}

// The host kernels run on the stream's worker alone, even where the cpu
// plugin splits the work over oneTBB's threads (32 Ki elements and more):
// the sim starts no thread besides its stream workers, so it needs no oneTBB
// scheduler handle (one would keep the cpu plugin's shutdown from joining
// its workers, docs in kernels.cpp).
TEST_F(SimPlugin, HostKernelsStartNoThreadsOfTheirOwn) {
  xdev_device_t* dev = start_on_device({});
  xdev_stream_t* s = stream(dev);
  const int64_t n = int64_t{1} << 20;
  void* x = allocate(dev, n * sizeof(float));
  void* y = allocate(dev, n * sizeof(float));
  void* out = allocate(dev, n * sizeof(float));
  const std::vector<float> ones(static_cast<size_t>(n), 1.0f);
  upload(s, x, ones.data(), n * sizeof(float));
  upload(s, y, ones.data(), n * sizeof(float));
  const size_t before = thread_count();
  {
    KernelCall call("Add", dev, s);
    call.input(x, XDEV_DTYPE_FLOAT32, {n}).input(y, XDEV_DTYPE_FLOAT32, {n});
    call.output(out, XDEV_DTYPE_FLOAT32, {n});
    const Outcome outcome = run("Add", call);
    ASSERT_TRUE(outcome.ok()) << outcome.message;
  }
  {
    KernelCall call("Sum", dev, s);
    call.input(out, XDEV_DTYPE_FLOAT32, {n}).output(x, XDEV_DTYPE_FLOAT32, {});
    const std::vector<int64_t> axes = {0};
    call.attribute(xdev_test::attr_ints("axes", axes));
    const Outcome outcome = run("Sum", call);
    ASSERT_TRUE(outcome.ok()) << outcome.message;
  }
  EXPECT_EQ(download<float>(s, x, 1), std::vector<float>{2.0f * static_cast<float>(n)});
  EXPECT_EQ(thread_count(), before);
}

// The addresses of any op are checked again when it runs: memory the core
// freed while the kernel was queued is reported by the next synchronize,
// and the kernel does not run.
TEST_F(SimPlugin, AnyKernelChecksItsMemoryAgainWhenItRuns) {
  xdev_device_t* dev = start_on_device({{"XDEV_SIM_DELAY_US", "200000"}});
  xdev_stream_t* s = stream(dev);
  void* x = allocate(dev, 64);
  void* out = allocate(dev, 64);
  KernelCall call("Exp", dev, s);
  call.input(x, XDEV_DTYPE_FLOAT32, {4}).output(out, XDEV_DTYPE_FLOAT32, {4});
  const Outcome outcome = run("Exp", call);
  ASSERT_TRUE(outcome.ok()) << outcome.message;
  release(x);
  EXPECT_TRUE(fails_with(take(api_->stream_synchronize(s)), XDEV_STATUS_INVALID_ARGUMENT,
                         {"Exp input 0", hex(x)}));
}

// ---------------------------------------------------------------------------
// Life cycle and threads

TEST_F(SimPlugin, ShutdownReleasesWhatTheCoreForgot) {
  start({{"XDEV_SIM_DELAY_US", "20000"}, {"XDEV_SIM_DEVICES", "2"}});
  std::vector<unsigned char> data(1024, 9);
  for (uint32_t ordinal : {0u, 1u}) {
    xdev_device_t* dev = device(ordinal);
    xdev_stream_t* s = stream(dev);
    xdev_event_t* e = event(dev);
    void* d = allocate(dev, data.size());
    void* pinned = nullptr;
    ASSERT_OK(api_->host_memory_allocate(dev, 100, &pinned));
    ASSERT_OK(api_->copy_host_to_device(s, d, data.data(), data.size()));
    ASSERT_OK(api_->event_record(e, s));
  }
  // No destroy, free or close: shutdown drains the streams, joins their
  // workers and frees everything (the sanitizer builds check no leak).
  forget_handles();
  api_->shutdown(plugin_);
  plugin_ = nullptr;
}

TEST_F(SimPlugin, ConcurrentStreamsAllocationsAndKernels) {
  start({{"XDEV_SIM_DEVICES", "2"}, {"XDEV_SIM_DELAY_US", "100"}});
  xdev_device_t* devices[] = {device(0), device(1)};
  const xdev_kernel_info_t* add = kernel("Add");
  ASSERT_NE(add, nullptr);
  constexpr int kThreads = 4;
  constexpr int kRounds = 20;
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      xdev_device_t* dev = devices[t % 2];
      xdev_stream_t* s = nullptr;
      if (!take(api_->stream_create(dev, &s)).ok()) {
        ++failures;
        return;
      }
      for (int round = 0; round < kRounds; ++round) {
        const int64_t n = 37 + round;
        const std::vector<double> x = random_values<double>(n, 100 * t + round);
        std::vector<double> back(n, 0);
        void* dx = nullptr;
        void* dout = nullptr;
        bool ok = take(api_->memory_allocate(dev, n * 8, 64, &dx)).ok() &&
                  take(api_->memory_allocate(dev, n * 8, 256, &dout)).ok() &&
                  take(api_->copy_host_to_device(s, dx, x.data(), n * 8)).ok();
        if (ok) {
          KernelCall call("Add", dev, s);
          call.input(dx, XDEV_DTYPE_FLOAT64, {n}).input(dx, XDEV_DTYPE_FLOAT64, {n});
          call.output(dout, XDEV_DTYPE_FLOAT64, {n});
          ok = take(add->fn(add->kernel_context, call.get())).ok() &&
               take(api_->copy_device_to_host(s, back.data(), dout, n * 8)).ok() &&
               take(api_->stream_synchronize(s)).ok();
        }
        for (int64_t i = 0; ok && i < n; ++i) ok = back[i] == 2 * x[i];
        api_->memory_free(dev, dx);
        api_->memory_free(dev, dout);
        if (!ok) ++failures;
      }
      api_->stream_destroy(s);
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(failures.load(), 0);
  for (xdev_device_t* dev : devices) EXPECT_EQ(memory(dev).first, memory(dev).second);
}

}  // namespace
