// The cuda plugin through its raw ABI: dlopen the file named by
// XDEV_TEST_CUDA_PLUGIN, call xdev_plugin_query and drive the table the way
// the core does, with the core's own host services.
//
// The first group runs everywhere, also without a GPU or a driver (the
// zero-device path, and that the plugin then maps no CUDA library). Tests
// that need a device skip with the reason when the plugin reports none;
// tests that need two say "needs 2 GPUs" (tools/gpu-check accepts only those
// skips on a GPU machine).
#include <dlfcn.h>
#include <elf.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <iterator>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <xdev/plugin.h>

#include "core_plugin_harness.hpp"
#include "opdefs/op_table.hpp"

namespace {

using ::testing::AnyOf;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

// ---------------------------------------------------------------------------
// Helpers

using xdev_test::exported_symbols;
using xdev_test::KernelCall;
using xdev_test::Ok;
using xdev_test::Outcome;
using xdev_test::random_bytes;
using xdev_test::take;

const xdev_host_api_t* host_api() { return xdev_test::process_core_host("cuda"); }

std::string plugin_path() { return xdev_test::env_or("XDEV_TEST_CUDA_PLUGIN"); }

// The plugin library. Never unloaded: CUDA's runtime keeps threads and
// atexit handlers that must not outlive its code (the core loads plugins with
// RTLD_NODELETE for the same reason).
class Library : public xdev_test::PluginLibrary {
 public:
  static Library& get() {
    static Library* library = new Library;
    return *library;
  }

 private:
  Library() {
    open_env("XDEV_TEST_CUDA_PLUGIN", RTLD_NODELETE);
    release();
  }
};

xdev_plugin_query_args_t query_args() { return xdev_test::query_args(host_api()); }

const xdev_plugin_api_t* plugin_api() {
  Library& library = Library::get();
  if (!library.loaded()) return nullptr;
  xdev_plugin_query_args_t args = query_args();
  if (!Ok(library.query()(&args))) return nullptr;
  return args.plugin_api;
}

// One initialized plugin instance for a test.
class Instance {
 public:
  Instance() {
    api_ = plugin_api();
    if (api_ == nullptr) return;
    xdev_plugin_init_args_t args = xdev_test::init_args(host_api());
    init_ = take(api_->initialize(&args, &plugin_));
    if (plugin_ != nullptr) {
      uint32_t count = 0;
      if (Ok(api_->device_count(plugin_, &count))) count_ = count;
    }
  }
  ~Instance() {
    if (plugin_ != nullptr) api_->shutdown(plugin_);
  }
  Instance(const Instance&) = delete;
  Instance& operator=(const Instance&) = delete;

  const xdev_plugin_api_t* api() const { return api_; }
  xdev_plugin_t* plugin() const { return plugin_; }
  const Outcome& init_outcome() const { return init_; }
  uint32_t device_count() const { return count_; }
  std::string status() const {
    const char* s = api_->describe_status(plugin_);
    return s != nullptr ? s : "";
  }

 private:
  const xdev_plugin_api_t* api_ = nullptr;
  xdev_plugin_t* plugin_ = nullptr;
  Outcome init_;
  uint32_t count_ = 0;
};

// The reasons describe_status gives for zero devices.
auto NoDeviceReason() {
  return AnyOf(HasSubstr("CUDA driver not found"), HasSubstr("no CUDA-capable device"),
               HasSubstr("CUDA driver too old"), HasSubstr("CUDA unavailable"));
}

// The driver API calls the context tests need, looked up in the driver the
// plugin loaded (the test does not link CUDA).
struct Driver {
  int (*ctx_get_current)(void**) = nullptr;
  int (*ctx_set_current)(void*) = nullptr;
  int (*primary_retain)(void**, int) = nullptr;
  int (*primary_release)(int) = nullptr;
  int (*primary_get_state)(int, unsigned*, int*) = nullptr;
  bool ok() const {
    return ctx_get_current && ctx_set_current && primary_retain && primary_release &&
           primary_get_state;
  }
  static const Driver& get() {
    static const Driver driver = [] {
      Driver d;
      if (void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL)) {
        d.ctx_get_current = reinterpret_cast<int (*)(void**)>(dlsym(lib, "cuCtxGetCurrent"));
        d.ctx_set_current = reinterpret_cast<int (*)(void*)>(dlsym(lib, "cuCtxSetCurrent"));
        d.primary_retain =
            reinterpret_cast<int (*)(void**, int)>(dlsym(lib, "cuDevicePrimaryCtxRetain_v2"));
        if (d.primary_retain == nullptr) {
          d.primary_retain =
              reinterpret_cast<int (*)(void**, int)>(dlsym(lib, "cuDevicePrimaryCtxRetain"));
        }
        d.primary_release =
            reinterpret_cast<int (*)(int)>(dlsym(lib, "cuDevicePrimaryCtxRelease_v2"));
        d.primary_get_state = reinterpret_cast<int (*)(int, unsigned*, int*)>(
            dlsym(lib, "cuDevicePrimaryCtxGetState"));
      }
      return d;
    }();
    return driver;
  }
  void* current() const {
    void* context = nullptr;
    return ctx_get_current(&context) == 0 ? context : reinterpret_cast<void*>(-1);
  }
};

// A scratch provider for kernel calls made through the raw ABI (the core's
// role): device memory from memory_allocate, freed after the stream passed.
struct TestScratch {
  const xdev_plugin_api_t* api = nullptr;
  xdev_device_t* device = nullptr;
  std::vector<std::pair<void*, uint64_t>> blocks;
  static void* allocate(void* context, uint64_t size) {
    auto* self = static_cast<TestScratch*>(context);
    void* ptr = nullptr;
    if (xdev_status_t* s = self->api->memory_allocate(self->device, size, 256, &ptr)) {
      xdev::detail::StatusPtr owned(s);
      return nullptr;
    }
    self->blocks.emplace_back(ptr, size);
    return ptr;
  }
  void release() {
    for (auto& [ptr, size] : blocks) api->memory_free(device, ptr);
    blocks.clear();
  }
};

const xdev_kernel_info_t* find_kernel(const xdev_plugin_api_t* api, xdev_plugin_t* plugin,
                                      std::string_view op) {
  const xdev_kernel_info_t* const* kernels = nullptr;
  uint32_t count = 0;
  if (!Ok(api->kernels(plugin, &kernels, &count))) return nullptr;
  for (uint32_t i = 0; i < count; ++i) {
    if (op == kernels[i]->op) return kernels[i];
  }
  return nullptr;
}

// Skips the test when the plugin has fewer than `n` devices, with the
// plugin's status ("needs 2 GPUs ..." where it takes two).
#define REQUIRE_DEVICES(instance, n)                                                    \
  do {                                                                                  \
    if ((instance).device_count() < (n)) {                                              \
      if ((n) == 1) {                                                                   \
        GTEST_SKIP() << "no CUDA device (the plugin says: " << (instance).status() << ")"; \
      }                                                                                 \
      GTEST_SKIP() << "needs " << (n) << " GPUs, the plugin has "                       \
                   << (instance).device_count() << " (" << (instance).status() << ")";  \
    }                                                                                   \
  } while (0)
#define REQUIRE_DEVICE(instance) REQUIRE_DEVICES(instance, 1)

// ---------------------------------------------------------------------------
// Everywhere: loading, the table, the zero-device path

TEST(CudaPluginQuery, LoadsAndReturnsAV1TableWithItsCapabilities) {
  Library& library = Library::get();
  ASSERT_TRUE(library.loaded()) << library.error();
  xdev_plugin_query_args_t args = query_args();
  ASSERT_TRUE(Ok(library.query()(&args)));
  const xdev_plugin_api_t* api = args.plugin_api;
  ASSERT_NE(api, nullptr);
  EXPECT_EQ(api->struct_size, XDEV_PLUGIN_API_STRUCT_SIZE);
  EXPECT_EQ(api->abi_version.major, 1U);
  EXPECT_EQ(api->abi_version.minor, uint32_t{XDEV_ABI_VERSION_MINOR});
  EXPECT_STREQ(api->name, "cuda");
  ASSERT_NE(api->plugin_version, nullptr);
  EXPECT_GT(std::strlen(api->plugin_version), 0U);
  EXPECT_EQ(api->capabilities, XDEV_CAP_HOST_MEMORY | XDEV_CAP_PEER_COPY | XDEV_CAP_EVENTS |
                                   XDEV_CAP_EVENT_TIMING |
                                   (XDEV_TEST_CUDA_NCCL ? XDEV_CAP_COLLECTIVES : 0));
  EXPECT_NE(api->event_elapsed_ms, nullptr);  // ABI 1.4
  // ABI 1.7: NCCL's device collectives exactly when the plugin was built with it.
  EXPECT_EQ(api->collective != nullptr, XDEV_TEST_CUDA_NCCL != 0);
  EXPECT_EQ(api->communicator_create != nullptr, XDEV_TEST_CUDA_NCCL != 0);
  const void* slots[] = {
      reinterpret_cast<const void*>(api->initialize),
      reinterpret_cast<const void*>(api->shutdown),
      reinterpret_cast<const void*>(api->describe_status),
      reinterpret_cast<const void*>(api->device_types),
      reinterpret_cast<const void*>(api->device_count),
      reinterpret_cast<const void*>(api->device_get_properties),
      reinterpret_cast<const void*>(api->device_open),
      reinterpret_cast<const void*>(api->device_close),
      reinterpret_cast<const void*>(api->memory_allocate),
      reinterpret_cast<const void*>(api->memory_free),
      reinterpret_cast<const void*>(api->memory_query),
      reinterpret_cast<const void*>(api->host_memory_allocate),
      reinterpret_cast<const void*>(api->host_memory_free),
      reinterpret_cast<const void*>(api->stream_create),
      reinterpret_cast<const void*>(api->stream_destroy),
      reinterpret_cast<const void*>(api->stream_synchronize),
      reinterpret_cast<const void*>(api->event_create),
      reinterpret_cast<const void*>(api->event_destroy),
      reinterpret_cast<const void*>(api->event_record),
      reinterpret_cast<const void*>(api->stream_wait_event),
      reinterpret_cast<const void*>(api->event_synchronize),
      reinterpret_cast<const void*>(api->event_query),
      reinterpret_cast<const void*>(api->copy_host_to_device),
      reinterpret_cast<const void*>(api->copy_device_to_host),
      reinterpret_cast<const void*>(api->copy_device_to_device),
      reinterpret_cast<const void*>(api->copy_peer),
      reinterpret_cast<const void*>(api->kernels),
      reinterpret_cast<const void*>(api->stream_native_handle),  // 1.3: DLPack streams
  };
  for (size_t i = 0; i < std::size(slots); ++i) EXPECT_NE(slots[i], nullptr) << "slot " << i;
}

TEST(CudaPluginQuery, ExportsOnlyTheEntryPoint) {
  ASSERT_FALSE(plugin_path().empty());
  EXPECT_EQ(exported_symbols(plugin_path()), std::set<std::string>{"xdev_plugin_query"});
}

// The implementation library beside the shim is never a plugin of its own.
TEST(CudaPluginQuery, TheImplementationExportsOnlyItsOwnEntry) {
  const char* impl = std::getenv("XDEV_TEST_CUDA_IMPL");
  ASSERT_NE(impl, nullptr) << "meson test sets XDEV_TEST_CUDA_IMPL";
  EXPECT_EQ(exported_symbols(impl), std::set<std::string>{"xdev_cuda_impl_query"});
  // Where the shim looks for it: cuda_impl/ beside the plugin file.
  const std::string dir = plugin_path().substr(0, plugin_path().rfind('/'));
  EXPECT_EQ(std::string(impl), dir + "/cuda_impl/xdev_cuda_impl.so");
}

TEST(CudaPluginQuery, RefusesACoreOfAnotherMajorVersion) {
  Library& library = Library::get();
  ASSERT_TRUE(library.loaded()) << library.error();
  xdev_plugin_query_args_t args = query_args();
  args.core_min_version = {2, 0};
  args.core_max_version = {2, 3};
  EXPECT_STATUS(library.query()(&args), XDEV_STATUS_ABI_MISMATCH,
                "ABI 1." + std::to_string(XDEV_ABI_VERSION_MINOR));
  EXPECT_EQ(args.plugin_api, nullptr);
}

TEST(CudaPlugin, InitializesAndOffersTheGpuType) {
  Instance instance;
  ASSERT_NE(instance.api(), nullptr);
  ASSERT_EQ(instance.init_outcome().code, XDEV_STATUS_OK) << instance.init_outcome().message;
  ASSERT_NE(instance.plugin(), nullptr);
  const xdev_device_type_info_t* const* types = nullptr;
  uint32_t count = 0;
  ASSERT_TRUE(Ok(instance.api()->device_types(instance.plugin(), &types, &count)));
  ASSERT_EQ(count, 1U);
  EXPECT_EQ(types[0]->struct_size, XDEV_DEVICE_TYPE_INFO_STRUCT_SIZE);
  EXPECT_STREQ(types[0]->type, "GPU");
  EXPECT_STREQ(types[0]->platform, "cuda");
  EXPECT_EQ(types[0]->priority, XDEV_PRIORITY_GPU);
  // 1.3: declared as CUDA memory, so DLPack capsules of CUDA tensors are taken in place.
  EXPECT_EQ(types[0]->dlpack_device_type, XDEV_DLPACK_CUDA);
  EXPECT_FALSE(instance.status().empty());
}

TEST(CudaPlugin, ZeroDevicesComeWithTheReason) {
  Instance instance;
  ASSERT_NE(instance.plugin(), nullptr) << instance.init_outcome().message;
  std::cout << "describe_status: " << instance.status() << "\n";
  if (instance.device_count() > 0) {
    // The zero-device path runs in cuda_plugin_abi_hidden_devices here
    // (CUDA_VISIBLE_DEVICES empty): this run checks the status of devices.
    EXPECT_THAT(instance.status(), StartsWith(std::to_string(instance.device_count()) + " device"));
    return;
  }
  EXPECT_THAT(instance.status(), NoDeviceReason());
  // Asking for a device names the reason.
  xdev_device_properties_t props{};
  props.struct_size = XDEV_DEVICE_PROPERTIES_STRUCT_SIZE;
  EXPECT_STATUS(instance.api()->device_get_properties(instance.plugin(), 0, &props),
                XDEV_STATUS_NOT_FOUND, instance.status());
  xdev_device_t* device = nullptr;
  EXPECT_STATUS(instance.api()->device_open(instance.plugin(), 0, &device), XDEV_STATUS_NOT_FOUND,
                "no CUDA device with ordinal 0");
  EXPECT_EQ(device, nullptr);
}

// Registered a second time with CUDA_VISIBLE_DEVICES="" (meson.build): on a
// GPU machine that is the "no CUDA-capable device" path.
TEST(CudaPlugin, HiddenDevicesGiveZeroDevices) {
  const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
  if (visible == nullptr || visible[0] != '\0') {
    GTEST_SKIP() << "runs with CUDA_VISIBLE_DEVICES set to \"\" (test cuda_plugin_abi_hidden_devices)";
  }
  Instance instance;
  ASSERT_NE(instance.plugin(), nullptr) << instance.init_outcome().message;
  EXPECT_EQ(instance.device_count(), 0U);
  EXPECT_THAT(instance.status(),
              AnyOf(HasSubstr("no CUDA-capable device"), HasSubstr("CUDA driver not found"),
                    HasSubstr("CUDA driver too old")));
}

// Without a device the plugin registers nothing (nothing could run it, and
// the kernels live in the implementation it did not load); with one, a
// kernel for every op of the op table.
TEST(CudaPlugin, RegistersTheKernelsOfTheOpSet) {
  Instance instance;
  ASSERT_NE(instance.plugin(), nullptr) << instance.init_outcome().message;
  const xdev_kernel_info_t* const* kernels = nullptr;
  uint32_t count = 0;
  ASSERT_TRUE(Ok(instance.api()->kernels(instance.plugin(), &kernels, &count)));
  if (instance.device_count() == 0) {
    EXPECT_EQ(count, 0U);
    return;
  }
  std::set<std::string> ops;
  for (uint32_t i = 0; i < count; ++i) {
    ASSERT_NE(kernels[i], nullptr);
    EXPECT_EQ(kernels[i]->struct_size, XDEV_KERNEL_INFO_STRUCT_SIZE);
    EXPECT_EQ(kernels[i]->type_index, 0U);
    EXPECT_NE(kernels[i]->fn, nullptr);
    EXPECT_NE(kernels[i]->input_dtypes, 0U) << kernels[i]->op;
    ops.insert(kernels[i]->op);
  }
  // Every op of the core's op table: every op, everywhere.
  std::set<std::string> defined;
  for (const xdev::detail::OpDef& def : xdev::detail::op_defs()) defined.insert(def.name);
  EXPECT_EQ(ops, defined);
}

TEST(CudaPlugin, NullArgumentsAreInvalidArguments) {
  Instance instance;
  ASSERT_NE(instance.plugin(), nullptr) << instance.init_outcome().message;
  const xdev_plugin_api_t* api = instance.api();
  EXPECT_STATUS(api->device_count(instance.plugin(), nullptr), XDEV_STATUS_INVALID_ARGUMENT,
                "out_count");
  EXPECT_STATUS(api->device_count(nullptr, nullptr), XDEV_STATUS_INVALID_ARGUMENT, "plugin");
  EXPECT_STATUS(api->memory_allocate(nullptr, 64, 64, nullptr), XDEV_STATUS_INVALID_ARGUMENT,
                "device");
  EXPECT_STATUS(api->stream_synchronize(nullptr), XDEV_STATUS_INVALID_ARGUMENT, "stream");
  EXPECT_STATUS(api->copy_host_to_device(nullptr, nullptr, nullptr, 4),
                XDEV_STATUS_INVALID_ARGUMENT, "stream");
  EXPECT_STATUS(api->event_synchronize(nullptr), XDEV_STATUS_INVALID_ARGUMENT, "event");
  int64_t handle = 0;
  EXPECT_STATUS(api->stream_native_handle(nullptr, &handle), XDEV_STATUS_INVALID_ARGUMENT,
                "stream");
  EXPECT_STREQ(api->describe_status(nullptr), "invalid plugin handle (NULL)");
  xdev_kernel_call_t call{};
  call.struct_size = XDEV_KERNEL_CALL_STRUCT_SIZE;
  const xdev_kernel_info_t* const* kernels = nullptr;
  uint32_t count = 0;
  ASSERT_TRUE(Ok(api->kernels(instance.plugin(), &kernels, &count)));
  if (instance.device_count() == 0) return;  // no kernels (above)
  ASSERT_GT(count, 0U);
  EXPECT_STATUS(kernels[0]->fn(kernels[0]->kernel_context, &call), XDEV_STATUS_INVALID_ARGUMENT,
                "stream");
}

// The plugin looks for the driver and a device before it maps the
// CUDA runtime or cuBLAS, so a process on a machine without a GPU (or with
// CUDA_VISIBLE_DEVICES="") maps none of them; with a device, the runtime
// comes with the implementation library.
TEST(CudaPlugin, MapsNoCudaLibraryWithoutADevice) {
  Instance instance;
  ASSERT_NE(instance.plugin(), nullptr) << instance.init_outcome().message;
  const std::string text = xdev_test::mapped_files();
  std::cout << "describe_status: " << instance.status() << "\n";
  if (instance.device_count() > 0) {
    EXPECT_THAT(text, HasSubstr("xdev_cuda_impl.so"));
    EXPECT_THAT(text, HasSubstr("libcudart.so"));
    return;
  }
  EXPECT_THAT(text, Not(HasSubstr("libcudart.so")));
  EXPECT_THAT(text, Not(HasSubstr("libcublas")));
  EXPECT_THAT(text, Not(HasSubstr("xdev_cuda_impl.so")));
  // The driver itself is mapped only where it exists (it said "no device").
  void* driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
  if (instance.status().find("CUDA driver not found") != std::string::npos) {
    EXPECT_EQ(driver, nullptr) << "libcuda.so.1 is loaded although the plugin found no driver";
    EXPECT_THAT(text, Not(HasSubstr("libcuda.so")));
  }
}

// The shim's decisions with a fake driver first on LD_LIBRARY_PATH
// (fake_driver/; meson tests cuda_shim_*, FAKE_CUDA_EXPECT says which):
//  too_old    a driver of CUDA 12.2: the reason names both versions and the
//             driver branch to install; no runtime loaded
//  no_device  cuInit says CUDA_ERROR_NO_DEVICE: no runtime loaded
//  device     the driver reports a device: the implementation and the CUDA
//             runtime are loaded, and the plugin reports what the runtime
//             found (the fake driver cannot run it: zero devices, a reason)

TEST(CudaShim, DecidesFromTheDriverBeforeLoadingTheRuntime) {
  const char* expect = std::getenv("FAKE_CUDA_EXPECT");
  ASSERT_NE(expect, nullptr) << "runs as the meson tests cuda_shim_* (FAKE_CUDA_EXPECT)";
  Instance instance;
  ASSERT_NE(instance.plugin(), nullptr) << instance.init_outcome().message;
  const std::string status = instance.status();
  const std::string maps = xdev_test::mapped_files();
  std::cout << "describe_status: " << status << "\n";
  EXPECT_THAT(maps, HasSubstr("fake_driver/libcuda.so.1"));  // the fake, not a real driver
  const std::string scenario = expect;
  if (scenario == "too_old") {
    EXPECT_EQ(status, "CUDA driver too old: it supports CUDA 12.2, the plugin needs CUDA 13.0 "
                      "(NVIDIA driver R580 or newer)");
  } else if (scenario == "no_device") {
    EXPECT_THAT(status, StartsWith("no CUDA-capable device"));
  }
  if (scenario == "too_old" || scenario == "no_device") {
    EXPECT_EQ(instance.device_count(), 0U);
    EXPECT_THAT(maps, Not(HasSubstr("libcudart")));
    EXPECT_THAT(maps, Not(HasSubstr("xdev_cuda_impl.so")));
    xdev_device_t* device = nullptr;
    EXPECT_STATUS(instance.api()->device_open(instance.plugin(), 0, &device),
                  XDEV_STATUS_NOT_FOUND, status);
    return;
  }
  ASSERT_EQ(scenario, "device");
  EXPECT_THAT(maps, HasSubstr("cuda_impl/xdev_cuda_impl.so"));
  EXPECT_THAT(maps, HasSubstr("libcudart.so"));
  EXPECT_THAT(maps, Not(HasSubstr("libcublas")));  // loaded with the first stream only
  // The implementation answers now (with the fake driver it finds nothing).
  EXPECT_EQ(instance.device_count(), 0U);
  EXPECT_THAT(status, NoDeviceReason());
  EXPECT_STREQ(instance.api()->name, "cuda");
}

TEST(CudaPlugin, TwoInstancesLiveSideBySide) {
  Instance first;
  Instance second;
  ASSERT_NE(first.plugin(), nullptr);
  ASSERT_NE(second.plugin(), nullptr);
  EXPECT_NE(first.plugin(), second.plugin());
  EXPECT_EQ(first.device_count(), second.device_count());
  EXPECT_EQ(first.status(), second.status());
}

// ---------------------------------------------------------------------------
// With a device

class CudaDevice : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_NE(instance_.plugin(), nullptr) << instance_.init_outcome().message;
    REQUIRE_DEVICE(instance_);
    api_ = instance_.api();
    ASSERT_TRUE(Ok(api_->device_open(instance_.plugin(), 0, &device_)));
    ASSERT_TRUE(Ok(api_->stream_create(device_, &stream_)));
  }
  void TearDown() override {
    if (stream_ != nullptr) api_->stream_destroy(stream_);
    if (device_ != nullptr) api_->device_close(device_);
  }

  Instance instance_;
  const xdev_plugin_api_t* api_ = nullptr;
  xdev_device_t* device_ = nullptr;
  xdev_stream_t* stream_ = nullptr;
};

TEST_F(CudaDevice, DescribesTheDevice) {
  xdev_device_properties_t props{};
  props.struct_size = XDEV_DEVICE_PROPERTIES_STRUCT_SIZE;
  ASSERT_TRUE(Ok(api_->device_get_properties(instance_.plugin(), 0, &props)));
  EXPECT_EQ(props.type_index, 0U);
  ASSERT_NE(props.name, nullptr);
  EXPECT_GT(std::strlen(props.name), 0U);
  EXPECT_GT(props.memory_total, uint64_t{1} << 28);
  ASSERT_NE(props.bus_id, nullptr);
  EXPECT_EQ(std::strlen(props.bus_id), 12U) << props.bus_id;  // 0000:05:00.0
  EXPECT_GE(props.numa_node, -1);
  ASSERT_NE(props.description, nullptr);
  const std::string description = props.description;
  EXPECT_THAT(description, StartsWith(std::string("device: 0, name: ") + props.name +
                                      ", pci bus id: " + props.bus_id +
                                      ", compute capability: "));
  std::set<std::string> keys;
  for (uint32_t i = 0; i < props.property_count; ++i) keys.insert(props.properties[i].key);
  EXPECT_TRUE(keys.count("compute_capability"));
  EXPECT_TRUE(keys.count("multiprocessor_count"));
  std::cout << description << "\n";

  // A core with a smaller (older) struct gets only what it covers.
  xdev_device_properties_t small{};
  small.struct_size = XDEV_STRUCT_SIZE(xdev_device_properties_t, memory_total);
  small.bus_id = "untouched";
  ASSERT_TRUE(Ok(api_->device_get_properties(instance_.plugin(), 0, &small)));
  EXPECT_STREQ(small.bus_id, "untouched");
}

TEST_F(CudaDevice, OpeningTwiceIsAFailedPrecondition) {
  xdev_device_t* again = nullptr;
  EXPECT_STATUS(api_->device_open(instance_.plugin(), 0, &again), XDEV_STATUS_FAILED_PRECONDITION,
                "already open");
}

TEST_F(CudaDevice, AllocatesAlignedMemoryAndReportsOutOfMemory) {
  uint64_t free_bytes = 0, total = 0;
  ASSERT_TRUE(Ok(api_->memory_query(device_, &free_bytes, &total)));
  EXPECT_GT(total, 0U);
  EXPECT_LE(free_bytes, total);
  for (uint64_t alignment : {uint64_t{1}, uint64_t{64}, uint64_t{256}, uint64_t{4096},
                             uint64_t{1} << 21}) {
    void* ptr = nullptr;
    ASSERT_TRUE(Ok(api_->memory_allocate(device_, 1000, alignment, &ptr))) << alignment;
    EXPECT_EQ(reinterpret_cast<uintptr_t>(ptr) % alignment, 0U) << alignment;
    api_->memory_free(device_, ptr);
  }
  void* ptr = nullptr;
  EXPECT_STATUS(api_->memory_allocate(device_, 0, 64, &ptr), XDEV_STATUS_INVALID_ARGUMENT,
                "size is 0");
  EXPECT_STATUS(api_->memory_allocate(device_, 64, 3, &ptr), XDEV_STATUS_INVALID_ARGUMENT,
                "power of two");
  // Twice the device: refused before cudaMalloc; the whole device: cudaMalloc
  // fails (the context already uses some). Both name the size and device.
  EXPECT_STATUS(api_->memory_allocate(device_, total * 2, 256, &ptr), XDEV_STATUS_OUT_OF_MEMORY,
                std::to_string(total * 2) + " bytes");
  EXPECT_STATUS(api_->memory_allocate(device_, total, 256, &ptr), XDEV_STATUS_OUT_OF_MEMORY,
                "on cuda device 0");
  // The device still works after a failed allocation.
  ASSERT_TRUE(Ok(api_->memory_allocate(device_, 1 << 20, 256, &ptr)));
  api_->memory_free(device_, ptr);
  api_->memory_free(device_, nullptr);
}

TEST_F(CudaDevice, CopiesInEveryDirectionAtOddSizesAndOffsets) {
  const uint64_t capacity = (uint64_t{8} << 20) + 512;
  void* a = nullptr;
  void* b = nullptr;
  void* pinned = nullptr;
  ASSERT_TRUE(Ok(api_->memory_allocate(device_, capacity, 256, &a)));
  ASSERT_TRUE(Ok(api_->memory_allocate(device_, capacity, 256, &b)));
  ASSERT_TRUE(Ok(api_->host_memory_allocate(device_, capacity, &pinned)));
  uint64_t seed = 1;
  for (uint64_t size : {uint64_t{1}, uint64_t{3}, uint64_t{4097}, uint64_t{1000003},
                        (uint64_t{8} << 20) + 5}) {
    for (uint64_t offset : {uint64_t{0}, uint64_t{1}, uint64_t{7}, uint64_t{255}}) {
      for (bool use_pinned : {false, true}) {
        SCOPED_TRACE("size " + std::to_string(size) + ", offset " + std::to_string(offset) +
                     (use_pinned ? ", pinned" : ", pageable"));
        const std::vector<unsigned char> data = random_bytes(size, seed++);
        const unsigned char* source = data.data();
        if (use_pinned) {
          std::memcpy(pinned, data.data(), size);
          source = static_cast<const unsigned char*>(pinned);
        }
        char* dev_a = static_cast<char*>(a) + offset;
        char* dev_b = static_cast<char*>(b) + (255 - offset);
        ASSERT_TRUE(Ok(api_->copy_host_to_device(stream_, dev_a, source, size)));
        ASSERT_TRUE(Ok(api_->copy_device_to_device(stream_, dev_b, dev_a, size)));
        std::vector<unsigned char> back(size + 2, 0xAB);
        unsigned char* target = back.data() + 1;
        if (use_pinned) {
          std::memset(pinned, 0, size);
          ASSERT_TRUE(Ok(api_->copy_device_to_host(stream_, pinned, dev_b, size)));
          ASSERT_TRUE(Ok(api_->stream_synchronize(stream_)));
          std::memcpy(target, pinned, size);
        } else {
          ASSERT_TRUE(Ok(api_->copy_device_to_host(stream_, target, dev_b, size)));
          ASSERT_TRUE(Ok(api_->stream_synchronize(stream_)));
        }
        EXPECT_EQ(std::memcmp(target, data.data(), size), 0);
        EXPECT_EQ(back.front(), 0xAB);  // nothing written outside
        EXPECT_EQ(back.back(), 0xAB);
      }
    }
  }
  // Zero bytes always succeed; overlapping device ranges are refused.
  EXPECT_TRUE(Ok(api_->copy_host_to_device(stream_, a, nullptr, 0)));
  EXPECT_STATUS(api_->copy_device_to_device(stream_, static_cast<char*>(a) + 8, a, 64),
                XDEV_STATUS_INVALID_ARGUMENT, "overlap");
  api_->host_memory_free(device_, pinned);
  api_->memory_free(device_, b);
  api_->memory_free(device_, a);
}

TEST_F(CudaDevice, EventsOrderStreams) {
  xdev_stream_t* other = nullptr;
  ASSERT_TRUE(Ok(api_->stream_create(device_, &other)));
  xdev_event_t* event = nullptr;
  ASSERT_TRUE(Ok(api_->event_create(device_, &event)));
  int32_t done = 0;
  ASSERT_TRUE(Ok(api_->event_query(event, &done)));
  EXPECT_EQ(done, 1) << "a never-recorded event counts as completed";
  ASSERT_TRUE(Ok(api_->event_synchronize(event)));

  // A large copy on stream_, then a copy of its result on `other` that waits
  // for the event: the second must see the first's data.
  const uint64_t size = uint64_t{64} << 20;
  void* a = nullptr;
  void* b = nullptr;
  ASSERT_TRUE(Ok(api_->memory_allocate(device_, size, 256, &a)));
  ASSERT_TRUE(Ok(api_->memory_allocate(device_, size, 256, &b)));
  const std::vector<unsigned char> data = random_bytes(size, 42);
  ASSERT_TRUE(Ok(api_->copy_host_to_device(stream_, a, data.data(), size)));
  ASSERT_TRUE(Ok(api_->event_record(event, stream_)));
  ASSERT_TRUE(Ok(api_->stream_wait_event(other, event)));
  ASSERT_TRUE(Ok(api_->copy_device_to_device(other, b, a, size)));
  std::vector<unsigned char> back(size);
  ASSERT_TRUE(Ok(api_->copy_device_to_host(other, back.data(), b, size)));
  ASSERT_TRUE(Ok(api_->stream_synchronize(other)));
  ASSERT_TRUE(Ok(api_->event_synchronize(event)));
  ASSERT_TRUE(Ok(api_->event_query(event, &done)));
  EXPECT_EQ(done, 1);
  EXPECT_EQ(back, data);
  api_->memory_free(device_, b);
  api_->memory_free(device_, a);
  api_->event_destroy(event);
  api_->stream_destroy(other);
}

TEST_F(CudaDevice, RunsAKernelThroughTheAbi) {
  // Fill 1001 float32 elements with 2.5 and read them back.
  const xdev_kernel_info_t* const* kernels = nullptr;
  uint32_t count = 0;
  ASSERT_TRUE(Ok(api_->kernels(instance_.plugin(), &kernels, &count)));
  const xdev_kernel_info_t* fill = nullptr;
  for (uint32_t i = 0; i < count; ++i) {
    if (std::string_view(kernels[i]->op) == "Fill") fill = kernels[i];
  }
  ASSERT_NE(fill, nullptr);
  void* data = nullptr;
  ASSERT_TRUE(Ok(api_->memory_allocate(device_, 1001 * 4, 256, &data)));
  KernelCall call("Fill", device_, stream_);
  call.output(data, XDEV_DTYPE_FLOAT32, {1001}).attribute(xdev_test::attr_float("value", 2.5));
  ASSERT_TRUE(Ok(fill->fn(fill->kernel_context, call.get())));
  std::vector<float> back(1001);
  ASSERT_TRUE(Ok(api_->copy_device_to_host(stream_, back.data(), data, 1001 * 4)));
  ASSERT_TRUE(Ok(api_->stream_synchronize(stream_)));
  for (float v : back) ASSERT_EQ(v, 2.5f);
  // A dtype it did not register is refused by name.
  KernelCall half("Fill", device_, stream_);
  half.output(data, XDEV_DTYPE_FLOAT16, {1001}).attribute(xdev_test::attr_float("value", 2.5));
  EXPECT_STATUS(fill->fn(fill->kernel_context, half.get()), XDEV_STATUS_UNIMPLEMENTED, "float16");
  api_->memory_free(device_, data);
}

// TF32 is off unless XDEV_CUDA_ALLOW_TF32 asks for it; the MatMul tests
// of cuda_sdk would fail with it (their bound is float32's).
TEST_F(CudaDevice, Tf32IsOffUnlessTheUserAsks) {
  xdev_device_properties_t props{};
  props.struct_size = XDEV_DEVICE_PROPERTIES_STRUCT_SIZE;
  ASSERT_TRUE(Ok(api_->device_get_properties(instance_.plugin(), 0, &props)));
  std::string tf32;
  for (uint32_t i = 0; i < props.property_count; ++i) {
    if (std::string_view(props.properties[i].key) == "tf32") tf32 = props.properties[i].value;
  }
  if (std::getenv("XDEV_CUDA_ALLOW_TF32") == nullptr) {
    EXPECT_EQ(tf32, "off");
  }
}

// Kernel scratch (ABI 1.2): a split reduction and cuBLAS take their
// temporary memory from the caller, and work without it.
TEST_F(CudaDevice, KernelsTakeScratchFromTheCallerAndWorkWithout) {
  const xdev_kernel_info_t* sum = find_kernel(api_, instance_.plugin(), "Sum");
  const xdev_kernel_info_t* matmul = find_kernel(api_, instance_.plugin(), "MatMul");
  ASSERT_NE(sum, nullptr);
  ASSERT_NE(matmul, nullptr);
  // Sum over the last axis of [64, 4096] float32: 64 long rows, too few to
  // fill the GPU, so the plan splits them into chunks with partials.
  const int64_t rows = 64, cols = 4096;
  std::vector<float> host(static_cast<size_t>(rows * cols));
  for (size_t i = 0; i < host.size(); ++i) host[i] = static_cast<float>(i % 13) - 6.0f;
  void* x = nullptr;
  void* y = nullptr;
  ASSERT_TRUE(Ok(api_->memory_allocate(device_, host.size() * 4, 256, &x)));
  ASSERT_TRUE(Ok(api_->memory_allocate(device_, 4096 * 4096 * 4, 256, &y)));
  ASSERT_TRUE(Ok(api_->copy_host_to_device(stream_, x, host.data(), host.size() * 4)));
  const std::vector<int64_t> axes = {1};
  TestScratch scratch{api_, device_, {}};
  for (bool with_scratch : {true, false}) {
    SCOPED_TRACE(with_scratch ? "with scratch" : "without scratch");
    KernelCall sum_call("Sum", device_, stream_);
    sum_call.input(x, XDEV_DTYPE_FLOAT32, {rows, cols})
        .output(y, XDEV_DTYPE_FLOAT32, {rows})
        .attribute(xdev_test::attr_ints("axes", axes));
    xdev_kernel_call_t* call = sum_call.get();
    call->scratch_allocate = with_scratch ? &TestScratch::allocate : nullptr;
    call->scratch_context = &scratch;
    ASSERT_TRUE(Ok(sum->fn(sum->kernel_context, call)));
    std::vector<float> back(static_cast<size_t>(rows));
    ASSERT_TRUE(Ok(api_->copy_device_to_host(stream_, back.data(), y, back.size() * 4)));
    ASSERT_TRUE(Ok(api_->stream_synchronize(stream_)));
    EXPECT_EQ(scratch.blocks.empty(), !with_scratch);
    scratch.release();
    for (int64_t r = 0; r < rows; ++r) {
      double want = 0;
      for (int64_t c = 0; c < cols; ++c) want += host[static_cast<size_t>(r * cols + c)];
      ASSERT_EQ(back[static_cast<size_t>(r)], static_cast<float>(want)) << "row " << r;
    }
  }
  // MatMul asks for its cuBLAS workspace (4 or 32 MiB) once per call.
  const int64_t n = 128;
  KernelCall mm_call("MatMul", device_, stream_);
  mm_call.input(x, XDEV_DTYPE_FLOAT32, {n, n})
      .input(x, XDEV_DTYPE_FLOAT32, {n, n})
      .output(y, XDEV_DTYPE_FLOAT32, {n, n});
  xdev_kernel_call_t* call = mm_call.get();
  call->scratch_allocate = &TestScratch::allocate;
  call->scratch_context = &scratch;
  ASSERT_TRUE(Ok(matmul->fn(matmul->kernel_context, call)));
  ASSERT_TRUE(Ok(api_->stream_synchronize(stream_)));
  ASSERT_EQ(scratch.blocks.size(), 1U);
  EXPECT_TRUE(scratch.blocks[0].second == (uint64_t{4} << 20) ||
              scratch.blocks[0].second == (uint64_t{32} << 20))
      << scratch.blocks[0].second;
  scratch.release();
  call->scratch_allocate = nullptr;  // the handle's own workspace again
  ASSERT_TRUE(Ok(matmul->fn(matmul->kernel_context, call)));
  ASSERT_TRUE(Ok(api_->stream_synchronize(stream_)));
  api_->memory_free(device_, y);
  api_->memory_free(device_, x);
}

// Slice through the raw ABI (the SDK's slice is a view and never runs the
// op): the window of a strided (transposed) view, an empty window, and a
// window that does not fit, refused by axis.
TEST_F(CudaDevice, SliceCopiesTheWindowOfAStridedView) {
  const xdev_kernel_info_t* slice = find_kernel(api_, instance_.plugin(), "Slice");
  ASSERT_NE(slice, nullptr);
  // x: 4 x 6 int32 holding 0 ... 23; the view t = xᵀ, [6, 4] with strides [1, 6].
  std::vector<int32_t> host(24);
  for (int32_t i = 0; i < 24; ++i) host[static_cast<size_t>(i)] = i;
  void* x = nullptr;
  void* y = nullptr;
  ASSERT_TRUE(Ok(api_->memory_allocate(device_, 24 * 4, 256, &x)));
  ASSERT_TRUE(Ok(api_->memory_allocate(device_, 24 * 4, 256, &y)));
  ASSERT_TRUE(Ok(api_->copy_host_to_device(stream_, x, host.data(), 24 * 4)));
  const std::vector<int64_t> begin{1, 2}, size{-1, 2};
  KernelCall call("Slice", device_, stream_);
  call.input(x, XDEV_DTYPE_INT32, {6, 4}, {1, 6})
      .output(y, XDEV_DTYPE_INT32, {5, 2})
      .attribute(xdev_test::attr_ints("begin", begin))
      .attribute(xdev_test::attr_ints("size", size));
  ASSERT_TRUE(Ok(slice->fn(slice->kernel_context, call.get())));
  std::vector<int32_t> back(10);
  ASSERT_TRUE(Ok(api_->copy_device_to_host(stream_, back.data(), y, 10 * 4)));
  ASSERT_TRUE(Ok(api_->stream_synchronize(stream_)));
  // t[i][j] = x[j][i] = 6 j + i for i in [1, 6), j in [2, 4).
  std::vector<int32_t> want;
  for (int32_t i = 1; i < 6; ++i) {
    for (int32_t j = 2; j < 4; ++j) want.push_back(6 * j + i);
  }
  EXPECT_EQ(back, want);
  const std::vector<int64_t> at_end{6, 0}, none{0, 4};
  KernelCall empty("Slice", device_, stream_);
  empty.input(x, XDEV_DTYPE_INT32, {6, 4}, {1, 6})
      .output(y, XDEV_DTYPE_INT32, {0, 4})
      .attribute(xdev_test::attr_ints("begin", at_end))
      .attribute(xdev_test::attr_ints("size", none));
  EXPECT_TRUE(Ok(slice->fn(slice->kernel_context, empty.get())));
  const std::vector<int64_t> past{5, 0}, two{2, 4};
  KernelCall bad("Slice", device_, stream_);
  bad.input(x, XDEV_DTYPE_INT32, {6, 4}, {1, 6})
      .output(y, XDEV_DTYPE_INT32, {2, 4})
      .attribute(xdev_test::attr_ints("begin", past))
      .attribute(xdev_test::attr_ints("size", two));
  EXPECT_STATUS(slice->fn(slice->kernel_context, bad.get()), XDEV_STATUS_INVALID_ARGUMENT,
                "axis 0");
  ASSERT_TRUE(Ok(api_->stream_synchronize(stream_)));
  api_->memory_free(device_, y);
  api_->memory_free(device_, x);
}

// The convolutions build their column matrix in kernel scratch (nothing
// allocates behind the core's pool); a call without any (the conformance
// suite makes such calls) runs the direct kernels, with the same result.
TEST_F(CudaDevice, ConvolutionsTakeTheirColumnsFromScratchAndWorkWithout) {
  const xdev_kernel_info_t* conv = find_kernel(api_, instance_.plugin(), "Conv2D");
  ASSERT_NE(conv, nullptr);
  // [1, 4, 4, 2] * [3, 3, 2, 1], SAME: 16 rows of 18 columns.
  std::vector<float> ones(32, 1.0f);
  void* x = nullptr;
  void* f = nullptr;
  void* y = nullptr;
  ASSERT_TRUE(Ok(api_->memory_allocate(device_, 32 * 4, 256, &x)));
  ASSERT_TRUE(Ok(api_->memory_allocate(device_, 18 * 4, 256, &f)));
  ASSERT_TRUE(Ok(api_->memory_allocate(device_, 16 * 4, 256, &y)));
  ASSERT_TRUE(Ok(api_->copy_host_to_device(stream_, x, ones.data(), 32 * 4)));
  ASSERT_TRUE(Ok(api_->copy_host_to_device(stream_, f, ones.data(), 18 * 4)));
  const std::vector<int64_t> strides{1, 1};
  TestScratch scratch{api_, device_, {}};
  for (bool with_scratch : {true, false}) {
    SCOPED_TRACE(with_scratch ? "with scratch" : "without scratch");
    KernelCall call("Conv2D", device_, stream_);
    call.input(x, XDEV_DTYPE_FLOAT32, {1, 4, 4, 2})
        .input(f, XDEV_DTYPE_FLOAT32, {3, 3, 2, 1})
        .output(y, XDEV_DTYPE_FLOAT32, {1, 4, 4, 1})
        .attribute(xdev_test::attr_ints("strides", strides))
        .attribute(xdev_test::attr_string("padding", "SAME"));
    xdev_kernel_call_t* raw = call.get();
    raw->scratch_allocate = with_scratch ? &TestScratch::allocate : nullptr;
    raw->scratch_context = &scratch;
    ASSERT_TRUE(Ok(conv->fn(conv->kernel_context, raw)));
    std::vector<float> back(16);
    ASSERT_TRUE(Ok(api_->copy_device_to_host(stream_, back.data(), y, 16 * 4)));
    ASSERT_TRUE(Ok(api_->stream_synchronize(stream_)));
    // With scratch: the columns (18 x 16 floats) and cuBLAS's workspace.
    EXPECT_EQ(scratch.blocks.size(), with_scratch ? 2U : 0U);
    scratch.release();
    // Each output sums the in-bounds taps: 2 channels x (rows x columns inside).
    for (int64_t oy = 0; oy < 4; ++oy) {
      for (int64_t ox = 0; ox < 4; ++ox) {
        const int64_t rows = (oy == 0 || oy == 3) ? 2 : 3, cols = (ox == 0 || ox == 3) ? 2 : 3;
        EXPECT_EQ(back[static_cast<size_t>(oy * 4 + ox)], static_cast<float>(2 * rows * cols))
            << oy << ", " << ox;
      }
    }
  }
  api_->memory_free(device_, y);
  api_->memory_free(device_, f);
  api_->memory_free(device_, x);
}

// The device guard puts back exactly the context the calling thread had. A
// thread with none ends with none (the old guard left device 0's context
// bound, or created it); a thread with its own stays with it.
TEST_F(CudaDevice, LeavesTheCallingThreadsContextAsItWas) {
  const Driver& driver = Driver::get();
  ASSERT_TRUE(driver.ok()) << "the driver API is not reachable";
  std::thread([&] {
    EXPECT_EQ(driver.current(), nullptr);
    void* ptr = nullptr;
    ASSERT_TRUE(Ok(api_->memory_allocate(device_, 4096, 256, &ptr)));
    const std::vector<unsigned char> data = random_bytes(4096, 3);
    ASSERT_TRUE(Ok(api_->copy_host_to_device(stream_, ptr, data.data(), data.size())));
    ASSERT_TRUE(Ok(api_->stream_synchronize(stream_)));
    api_->memory_free(device_, ptr);
    EXPECT_EQ(driver.current(), nullptr) << "a plugin call left a context bound to the thread";
  }).join();
  std::thread([&] {
    void* mine = nullptr;
    ASSERT_EQ(driver.primary_retain(&mine, 0), 0);
    ASSERT_EQ(driver.ctx_set_current(mine), 0);
    void* ptr = nullptr;
    ASSERT_TRUE(Ok(api_->memory_allocate(device_, 4096, 256, &ptr)));
    api_->memory_free(device_, ptr);
    EXPECT_EQ(driver.current(), mine);
    driver.ctx_set_current(nullptr);
    driver.primary_release(0);
  }).join();
}

// Device 1 alone never creates device 0's context (the old guard restored
// "device 0" after every call). Its own process: nothing may have touched
// device 0 before.
TEST(CudaGuardTwoDevices, UsingDevice1NeverCreatesDevice0sContext) {
  Instance instance;
  ASSERT_NE(instance.plugin(), nullptr) << instance.init_outcome().message;
  REQUIRE_DEVICES(instance, 2);
  const Driver& driver = Driver::get();
  ASSERT_TRUE(driver.ok());
  const xdev_plugin_api_t* api = instance.api();
  xdev_device_t* d1 = nullptr;
  ASSERT_TRUE(Ok(api->device_open(instance.plugin(), 1, &d1)));
  xdev_stream_t* s1 = nullptr;
  ASSERT_TRUE(Ok(api->stream_create(d1, &s1)));
  void* ptr = nullptr;
  ASSERT_TRUE(Ok(api->memory_allocate(d1, 1 << 20, 256, &ptr)));
  std::vector<unsigned char> data = random_bytes(1 << 20, 9);
  ASSERT_TRUE(Ok(api->copy_host_to_device(s1, ptr, data.data(), data.size())));
  ASSERT_TRUE(Ok(api->stream_synchronize(s1)));
  api->memory_free(d1, ptr);
  unsigned flags = 0;
  int active = -1;
  ASSERT_EQ(driver.primary_get_state(0, &flags, &active), 0);
  EXPECT_EQ(active, 0) << "device 0's primary context was created";
  api->stream_destroy(s1);
  api->device_close(d1);
}

// After a device fault (here an illegal address) CUDA refuses every call on
// that device for the rest of the process. The plugin says so (UNAVAILABLE
// naming the device) instead of promising a synchronize that clears it, and
// keeps its other devices working. Its own process: the device stays
// broken.
TEST(CudaStickyFault, AFaultMakesTheDeviceUnavailableAndSparesTheOthers) {
  Instance instance;
  ASSERT_NE(instance.plugin(), nullptr) << instance.init_outcome().message;
  REQUIRE_DEVICE(instance);
  const xdev_plugin_api_t* api = instance.api();
  xdev_device_t* d0 = nullptr;
  ASSERT_TRUE(Ok(api->device_open(instance.plugin(), 0, &d0)));
  xdev_stream_t* s0 = nullptr;
  ASSERT_TRUE(Ok(api->stream_create(d0, &s0)));
  const xdev_kernel_info_t* fill = find_kernel(api, instance.plugin(), "Fill");
  ASSERT_NE(fill, nullptr);
  // Fill 1 Mi floats at an address no allocation has.
  KernelCall call("Fill", d0, s0);
  call.output(reinterpret_cast<void*>(uintptr_t{0x1000}), XDEV_DTYPE_FLOAT32, {1 << 20})
      .attribute(xdev_test::attr_float("value", 1.5));
  ASSERT_TRUE(Ok(fill->fn(fill->kernel_context, call.get())));  // the launch itself is fine
  const Outcome sync = take(api->stream_synchronize(s0));
  EXPECT_EQ(sync.code, XDEV_STATUS_UNAVAILABLE) << sync.message;
  EXPECT_THAT(sync.message, HasSubstr("cuda device 0"));
  EXPECT_THAT(sync.message, HasSubstr("unusable"));
  std::cout << "the fault: " << sync.message << "\n";
  // From now on every call on device 0 says so, without calling CUDA.
  EXPECT_STATUS(api->stream_synchronize(s0), XDEV_STATUS_UNAVAILABLE, "cuda device 0 is unusable");
  void* ptr = nullptr;
  EXPECT_STATUS(api->memory_allocate(d0, 4096, 256, &ptr), XDEV_STATUS_UNAVAILABLE,
                "cuda device 0 is unusable");
  xdev_stream_t* another = nullptr;
  EXPECT_STATUS(api->stream_create(d0, &another), XDEV_STATUS_UNAVAILABLE,
                "cuda device 0 is unusable");
  KernelCall empty("Fill", d0, s0);
  empty.output(nullptr, XDEV_DTYPE_FLOAT32, {1 << 20})
      .attribute(xdev_test::attr_float("value", 1.5));
  EXPECT_STATUS(fill->fn(fill->kernel_context, empty.get()), XDEV_STATUS_UNAVAILABLE,
                "cuda device 0 is unusable");
  if (instance.device_count() >= 2) {
    // Device 1 has its own context: unaffected.
    xdev_device_t* d1 = nullptr;
    ASSERT_TRUE(Ok(api->device_open(instance.plugin(), 1, &d1)));
    xdev_stream_t* s1 = nullptr;
    ASSERT_TRUE(Ok(api->stream_create(d1, &s1)));
    void* p1 = nullptr;
    ASSERT_TRUE(Ok(api->memory_allocate(d1, 4096, 256, &p1)));
    const std::vector<unsigned char> data = random_bytes(4096, 5);
    std::vector<unsigned char> back(4096);
    ASSERT_TRUE(Ok(api->copy_host_to_device(s1, p1, data.data(), data.size())));
    ASSERT_TRUE(Ok(api->copy_device_to_host(s1, back.data(), p1, back.size())));
    ASSERT_TRUE(Ok(api->stream_synchronize(s1)));
    EXPECT_EQ(back, data);
    api->memory_free(d1, p1);
    api->stream_destroy(s1);
    api->device_close(d1);
  } else {
    std::cout << "one GPU: that other devices keep working is checked where there are two\n";
  }
  api->stream_destroy(s0);
  api->device_close(d0);
}

// Without peer access cudaMemcpyPeerAsync stages through the host itself
// (pinned, pipelined): the plugin copies every pair.
TEST(CudaPeers, CopyPeerWorksForEveryPair) {
  Instance instance;
  ASSERT_NE(instance.plugin(), nullptr) << instance.init_outcome().message;
  REQUIRE_DEVICES(instance, 2);
  const xdev_plugin_api_t* api = instance.api();
  xdev_device_t* d0 = nullptr;
  xdev_device_t* d1 = nullptr;
  ASSERT_TRUE(Ok(api->device_open(instance.plugin(), 0, &d0)));
  ASSERT_TRUE(Ok(api->device_open(instance.plugin(), 1, &d1)));
  xdev_stream_t* s0 = nullptr;
  xdev_stream_t* s1 = nullptr;
  ASSERT_TRUE(Ok(api->stream_create(d0, &s0)));
  ASSERT_TRUE(Ok(api->stream_create(d1, &s1)));
  const uint64_t size = (uint64_t{3} << 20) + 17;
  void* a = nullptr;
  void* b = nullptr;
  ASSERT_TRUE(Ok(api->memory_allocate(d0, size + 64, 256, &a)));
  ASSERT_TRUE(Ok(api->memory_allocate(d1, size + 64, 256, &b)));
  const std::vector<unsigned char> data = random_bytes(size, 7);
  ASSERT_TRUE(Ok(api->copy_host_to_device(s0, static_cast<char*>(a) + 3, data.data(), size)));
  ASSERT_TRUE(Ok(api->stream_synchronize(s0)));
  ASSERT_TRUE(Ok(api->copy_peer(s1, static_cast<char*>(b) + 5, d0, static_cast<char*>(a) + 3,
                                size)));
  std::vector<unsigned char> back(size);
  ASSERT_TRUE(Ok(api->copy_device_to_host(s1, back.data(), static_cast<char*>(b) + 5, size)));
  ASSERT_TRUE(Ok(api->stream_synchronize(s1)));
  EXPECT_EQ(back, data);
  // An event of device 0 recorded on device 1's stream, waited for on device 0.
  xdev_event_t* event = nullptr;
  ASSERT_TRUE(Ok(api->event_create(d0, &event)));
  ASSERT_TRUE(Ok(api->event_record(event, s1)));
  ASSERT_TRUE(Ok(api->stream_wait_event(s0, event)));
  ASSERT_TRUE(Ok(api->stream_synchronize(s0)));
  api->event_destroy(event);
  api->memory_free(d1, b);
  api->memory_free(d0, a);
  api->stream_destroy(s1);
  api->stream_destroy(s0);
  api->device_close(d1);
  api->device_close(d0);
}

}  // namespace
