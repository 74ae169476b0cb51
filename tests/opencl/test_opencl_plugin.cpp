// The opencl plugin through its raw ABI (ABI 1.6, handle memory), on
// whatever OpenCL device the machine has: in CI PoCL's CPU device, shown as
// a GPU with XDEV_OPENCL_CPU_DEVICES=GPU (meson.build). Without an OpenCL
// device every test skips, saying why.
#include <gtest/gtest.h>
#include <xdev/plugin.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include "cache.hpp"
#include "core_plugin_harness.hpp"
#include "test_dir.hpp"

namespace {

using namespace xdev_test;

const PluginLibrary& library() {
  static const PluginLibrary* const lib =
      new PluginLibrary(env_or("XDEV_OPENCL_PLUGIN_FILE", XDEV_OPENCL_PLUGIN_FILE));
  return *lib;
}

class OpenclPlugin : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(library().loaded()) << library().error();
    xdev_plugin_query_args_t args = query_args(process_core_host("opencl"));
    ASSERT_OK(library().query()(&args));
    api_ = args.plugin_api;
    ASSERT_NE(api_, nullptr);
    EXPECT_NE(api_->capabilities & XDEV_CAP_HANDLE_MEMORY, 0u);
  }
  void TearDown() override { stop(); }

  // Initializes an instance; opens device 0 and a stream when it has one.
  void start() {
    const xdev_plugin_init_args_t init = init_args(process_core_host("opencl"));
    ASSERT_OK(api_->initialize(&init, &plugin_));
    ASSERT_OK(api_->device_count(plugin_, &count_));
    if (count_ == 0) return;
    ASSERT_OK(api_->device_open(plugin_, 0, &device_));
    ASSERT_OK(api_->stream_create(device_, &stream_));
  }
  // start(), or skip when there is no device.
  void start_or_skip() {
    start();
    if (count_ == 0) GTEST_SKIP() << "no OpenCL device: " << api_->describe_status(plugin_);
  }
  void stop() {
    if (plugin_ == nullptr) return;
    if (stream_ != nullptr) {
      take(api_->stream_synchronize(stream_));
      api_->stream_destroy(stream_);
    }
    for (void* a : allocations_) api_->memory_free(device_, a);
    if (device_ != nullptr) api_->device_close(device_);
    api_->shutdown(plugin_);
    plugin_ = nullptr;
    device_ = nullptr;
    stream_ = nullptr;
    allocations_.clear();
  }

  void* allocate(uint64_t size) {
    void* a = nullptr;
    EXPECT_OK(api_->memory_allocate(device_, size, 256, &a));
    allocations_.push_back(a);
    return a;
  }
  template <typename T>
  void upload(void* alloc, uint64_t offset, const std::vector<T>& values) {
    ASSERT_OK(api_->copy_host_to_device_at(stream_, alloc, offset, values.data(),
                                           values.size() * sizeof(T)));
    ASSERT_OK(api_->stream_synchronize(stream_));  // `values` may be a temporary
  }
  template <typename T>
  std::vector<T> download(void* alloc, uint64_t offset, size_t count) {
    std::vector<T> values(count);
    EXPECT_OK(api_->copy_device_to_host_at(stream_, values.data(), alloc, offset,
                                           count * sizeof(T)));
    EXPECT_OK(api_->stream_synchronize(stream_));
    return values;
  }
  const xdev_kernel_info_t* kernel(const char* op, xdev_dtype_t dtype) {
    const xdev_kernel_info_t* const* kernels = nullptr;
    uint32_t n = 0;
    EXPECT_OK(api_->kernels(plugin_, &kernels, &n));
    if (const xdev_kernel_info_t* k = find_kernel(kernels, n, op, dtype, dtype)) return k;
    EXPECT_OK(api_->device_kernels(plugin_, 0, &kernels, &n));
    return find_kernel(kernels, n, op, dtype, dtype);
  }
  Outcome run(const char* op, KernelCall& call, xdev_dtype_t dtype) {
    const xdev_kernel_info_t* k = kernel(op, dtype);
    if (k == nullptr) return {XDEV_STATUS_NOT_FOUND, std::string("no kernel for ") + op};
    return take(k->fn(k->kernel_context, call.get()));
  }

  const xdev_plugin_api_t* api_ = nullptr;
  xdev_plugin_t* plugin_ = nullptr;
  uint32_t count_ = 0;
  xdev_device_t* device_ = nullptr;
  xdev_stream_t* stream_ = nullptr;
  std::vector<void*> allocations_;
};

TEST_F(OpenclPlugin, DevicesAreGpusOfPlatformOpenclWithTheirLimits) {
  start_or_skip();
  const xdev_device_type_info_t* const* types = nullptr;
  uint32_t type_count = 0;
  ASSERT_OK(api_->device_types(plugin_, &types, &type_count));
  xdev_device_properties_t props{};
  props.struct_size = XDEV_DEVICE_PROPERTIES_STRUCT_SIZE;
  ASSERT_OK(api_->device_get_properties(plugin_, 0, &props));
  ASSERT_LT(props.type_index, type_count);
  EXPECT_STREQ(types[props.type_index]->platform, "opencl");
  EXPECT_STRNE(types[props.type_index]->type, "CPU");
  EXPECT_GT(props.memory_total, 0u);
  EXPECT_GT(props.max_allocation_bytes, 0u);
  EXPECT_LE(props.max_allocation_bytes, props.memory_total);
  EXPECT_NE(props.memory_kind, XDEV_MEMORY_KIND_UNDECLARED);
  EXPECT_STRNE(props.name, "");
  bool has_driver = false;
  for (uint32_t i = 0; i < props.property_count; ++i) {
    has_driver = has_driver || std::string(props.properties[i].key) == "driver";
  }
  EXPECT_TRUE(has_driver);
}

TEST_F(OpenclPlugin, CpuDevicesAreHiddenUnlessAskedForAndNeverTypeCpu) {
  const char* old = std::getenv("XDEV_OPENCL_CPU_DEVICES");
  const std::string saved = old ? old : "";
  ::setenv("XDEV_OPENCL_CPU_DEVICES", "CPU", 1);
  const xdev_plugin_init_args_t init = init_args(process_core_host("opencl"));
  xdev_plugin_t* p = nullptr;
  EXPECT_STATUS(api_->initialize(&init, &p), XDEV_STATUS_INVALID_ARGUMENT,
                "XDEV_OPENCL_CPU_DEVICES=CPU");
  ::setenv("XDEV_OPENCL_CPU_DEVICES", "OCL_CPU", 1);
  start();
  const uint32_t shown = count_;
  stop();
  ::unsetenv("XDEV_OPENCL_CPU_DEVICES");
  start();
  const std::string status = api_->describe_status(plugin_);
  const uint32_t hidden = count_;
  stop();
  if (old != nullptr) ::setenv("XDEV_OPENCL_CPU_DEVICES", saved.c_str(), 1);
  if (shown == 0) GTEST_SKIP() << "no OpenCL device: " << status;
  // PoCL has a CPU device only: shown on request, hidden by default.
  if (hidden < shown) {
    EXPECT_NE(status.find("hidden"), std::string::npos) << status;
  }
}

TEST_F(OpenclPlugin, CopiesUseAllocationAndOffset) {
  start_or_skip();
  void* a = allocate(4096);
  void* b = allocate(4096);
  const std::vector<int32_t> values = {1, 2, 3, 4, 5, 6, 7};
  upload(a, 100, values);
  ASSERT_OK(api_->copy_device_to_device_at(stream_, b, 12, a, 100, values.size() * 4));
  EXPECT_EQ(download<int32_t>(b, 12, values.size()), values);
  EXPECT_STATUS(api_->copy_host_to_device_at(stream_, a, 4090, values.data(), 8),
                XDEV_STATUS_INVALID_ARGUMENT, "overrun allocation");
  int dummy = 0;
  EXPECT_STATUS(api_->copy_host_to_device_at(stream_, &dummy, 0, values.data(), 4),
                XDEV_STATUS_INVALID_ARGUMENT, "no live allocation");
}

TEST_F(OpenclPlugin, BroadcastAddAtAnOffsetInsideAnAllocation) {
  start_or_skip();
  void* mem = allocate(4096);
  upload(mem, 64, std::vector<float>{1, 2, 3, 4, 5, 6});  // x [2, 3]
  upload(mem, 256, std::vector<float>{10, 20, 30});       // y [3], broadcast over rows
  KernelCall call("Add", device_, stream_);
  call.input(mem, XDEV_DTYPE_FLOAT32, {2, 3}, {3, 1}, 64)
      .input(mem, XDEV_DTYPE_FLOAT32, {2, 3}, {0, 1}, 256)
      .output(mem, XDEV_DTYPE_FLOAT32, {2, 3});
  // The output at offset 1024: set byte_offset on the descriptor.
  const_cast<xdev_tensor_t*>(call.get()->outputs[0])->byte_offset = 1024;
  ASSERT_TRUE(run("Add", call, XDEV_DTYPE_FLOAT32).ok());
  EXPECT_EQ(download<float>(mem, 1024, 6), (std::vector<float>{11, 22, 33, 14, 25, 36}));
}

TEST_F(OpenclPlugin, CastSaturatesAndSumReducesAxes) {
  start_or_skip();
  void* mem = allocate(4096);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  upload(mem, 0, std::vector<float>{-1.5f, 3e9f, nan, 2.9f});
  KernelCall cast("Cast", device_, stream_);
  cast.input(mem, XDEV_DTYPE_FLOAT32, {4}).output(mem, XDEV_DTYPE_INT32, {4});
  const_cast<xdev_tensor_t*>(cast.get()->outputs[0])->byte_offset = 512;
  cast.attribute(attr_dtype("dtype", XDEV_DTYPE_INT32));
  ASSERT_TRUE(run("Cast", cast, XDEV_DTYPE_FLOAT32).ok());
  EXPECT_EQ(download<int32_t>(mem, 512, 4),
            (std::vector<int32_t>{-1, std::numeric_limits<int32_t>::max(), 0, 2}));

  upload(mem, 1024, std::vector<int64_t>{1, 2, 3, 4, 5, 6});  // [2, 3]
  KernelCall sum("Sum", device_, stream_);
  sum.input(mem, XDEV_DTYPE_INT64, {2, 3}, {3, 1}, 1024).output(mem, XDEV_DTYPE_INT64, {3});
  const_cast<xdev_tensor_t*>(sum.get()->outputs[0])->byte_offset = 2048;
  const std::vector<int64_t> axes = {0};  // the attribute points into it
  sum.attribute(attr_ints("axes", axes));
  ASSERT_TRUE(run("Sum", sum, XDEV_DTYPE_INT64).ok());
  EXPECT_EQ(download<int64_t>(mem, 2048, 3), (std::vector<int64_t>{5, 7, 9}));
}

TEST_F(OpenclPlugin, MatMulRunsThroughClblast) {
  start_or_skip();
  void* mem = allocate(4096);
  upload(mem, 0, std::vector<float>{1, 2, 3, 4, 5, 6});     // a [2, 3]
  upload(mem, 256, std::vector<float>{1, 0, 0, 1, 1, 1});   // b [3, 2]
  KernelCall mm("MatMul", device_, stream_);
  mm.input(mem, XDEV_DTYPE_FLOAT32, {2, 3}).input(mem, XDEV_DTYPE_FLOAT32, {3, 2}, {}, 256)
      .output(mem, XDEV_DTYPE_FLOAT32, {2, 2});
  const_cast<xdev_tensor_t*>(mm.get()->outputs[0])->byte_offset = 512;
  const Outcome outcome = run("MatMul", mm, XDEV_DTYPE_FLOAT32);
  ASSERT_TRUE(outcome.ok()) << outcome.message;
  EXPECT_EQ(download<float>(mem, 512, 4), (std::vector<float>{4, 5, 10, 11}));
}

TEST_F(OpenclPlugin, KernelErrorsNameTheDeviceAndTheOp) {
  start_or_skip();
  void* mem = allocate(256);
  KernelCall add("Add", device_, stream_);
  add.input(mem, XDEV_DTYPE_FLOAT32, {100}).input(mem, XDEV_DTYPE_FLOAT32, {100})
      .output(mem, XDEV_DTYPE_FLOAT32, {100});  // 400 bytes in a 256-byte allocation
  const Outcome outcome = run("Add", add, XDEV_DTYPE_FLOAT32);
  EXPECT_EQ(outcome.code, XDEV_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(outcome.message.find("Add on device 0"), std::string::npos) << outcome.message;
}

// An index out of range is found on the device: the next synchronize returns
// it, naming the op, the device and the index; the flag is then clear.
TEST_F(OpenclPlugin, GatherIndexOutOfRangeIsReportedBySynchronize) {
  start_or_skip();
  void* mem = allocate(1024);
  upload(mem, 0, std::vector<float>{10, 20, 30});
  upload(mem, 64, std::vector<int32_t>{2, 0, 7});
  KernelCall gather("GatherV2", device_, stream_);
  gather.input(mem, XDEV_DTYPE_FLOAT32, {3}).input(mem, XDEV_DTYPE_INT32, {3}, {}, 64)
      .output(mem, XDEV_DTYPE_FLOAT32, {3});
  const_cast<xdev_tensor_t*>(gather.get()->outputs[0])->byte_offset = 128;
  gather.attr("axis", int64_t{0});
  ASSERT_TRUE(run("GatherV2", gather, XDEV_DTYPE_FLOAT32).ok());
  EXPECT_STATUS(api_->stream_synchronize(stream_), XDEV_STATUS_INVALID_ARGUMENT,
                "GatherV2 on device 0");
  EXPECT_EQ(download<float>(mem, 128, 3), (std::vector<float>{30, 10, 0}));
  EXPECT_OK(api_->stream_synchronize(stream_));
}

// ---- the kernel cache ---------------------------------------------------------

using xdev::opencl::ProgramCache;

TEST(OpenclProgramCache, StoresAndLoadsAndRejectsCorruptEntries) {
  const auto dir = fresh_test_dir("opencl-cache");
  const ProgramCache cache(dir.string());
  const std::vector<unsigned char> payload = {1, 2, 3, 4, 5, 6, 7, 8, 9};
  EXPECT_EQ(cache.load("k").found, ProgramCache::Found::kMissing);
  ASSERT_EQ(cache.store("k", payload), "");
  ProgramCache::Loaded hit = cache.load("k");
  ASSERT_EQ(hit.found, ProgramCache::Found::kHit);
  EXPECT_EQ(hit.payload, payload);
  const std::string path = cache.path_for("k");
  // A flipped byte: checksum.
  {
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(-2, std::ios::end);
    f.put('\x7f');
  }
  ProgramCache::Loaded bad = cache.load("k");
  EXPECT_EQ(bad.found, ProgramCache::Found::kCorrupt);
  EXPECT_NE(bad.why.find("checksum"), std::string::npos) << bad.why;
  // Truncated.
  ASSERT_EQ(cache.store("k", payload), "");
  std::filesystem::resize_file(path, std::filesystem::file_size(path) - 3);
  bad = cache.load("k");
  EXPECT_EQ(bad.found, ProgramCache::Found::kCorrupt);
  EXPECT_NE(bad.why.find("truncated"), std::string::npos) << bad.why;
  // Empty and foreign files.
  std::ofstream(path, std::ios::trunc).close();
  EXPECT_EQ(cache.load("k").found, ProgramCache::Found::kCorrupt);
  // Disabled.
  EXPECT_EQ(ProgramCache("").load("k").found, ProgramCache::Found::kMissing);
  std::filesystem::remove_all(dir);
}

TEST(OpenclProgramCache, DirectoryComesFromTheEnvironment) {
  ::setenv("XDEV_OPENCL_CACHE_DIR", "/tmp/x", 1);
  EXPECT_EQ(ProgramCache::directory_from_environment(), "/tmp/x");
  ::setenv("XDEV_OPENCL_CACHE_DIR", "off", 1);
  EXPECT_EQ(ProgramCache::directory_from_environment(), "");
  ::unsetenv("XDEV_OPENCL_CACHE_DIR");
  ::setenv("XDG_CACHE_HOME", "/tmp/xdg", 1);
  EXPECT_EQ(ProgramCache::directory_from_environment(), "/tmp/xdg/xdev/opencl");
}

// The plugin writes an entry per program, and a corrupt entry is rebuilt
// (the kernel still computes the right values) and written again, valid.
TEST_F(OpenclPlugin, CorruptCacheEntriesAreRebuiltNotTrusted) {
  const auto dir = fresh_test_dir("opencl-plugin-cache");
  ::setenv("XDEV_OPENCL_CACHE_DIR", dir.c_str(), 1);
  const auto run_neg = [&](std::vector<int32_t>* out) {
    start_or_skip();
    if (count_ == 0) return;
    void* mem = allocate(256);
    upload(mem, 0, std::vector<int32_t>{1, -2, 3});
    KernelCall neg("Neg", device_, stream_);
    neg.input(mem, XDEV_DTYPE_INT32, {3}).output(mem, XDEV_DTYPE_INT32, {3});
    const_cast<xdev_tensor_t*>(neg.get()->outputs[0])->byte_offset = 64;
    ASSERT_TRUE(run("Neg", neg, XDEV_DTYPE_INT32).ok());
    *out = download<int32_t>(mem, 64, 3);
    stop();
  };
  std::vector<int32_t> out;
  run_neg(&out);
  if (IsSkipped()) return;
  EXPECT_EQ(out, (std::vector<int32_t>{-1, 2, -3}));
  std::vector<std::filesystem::path> entries;
  for (const auto& e : std::filesystem::directory_iterator(dir)) entries.push_back(e.path());
  ASSERT_EQ(entries.size(), 1u);
  const auto size = std::filesystem::file_size(entries[0]);
  {
    std::fstream f(entries[0], std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(size / 2));
    f.put('\x55');
    f.put('\xaa');
  }
  EXPECT_NE(ProgramCache::check_file(entries[0].string()), "");
  out.clear();
  run_neg(&out);
  EXPECT_EQ(out, (std::vector<int32_t>{-1, 2, -3}));
  EXPECT_EQ(ProgramCache::check_file(entries[0].string()), "");  // written again, valid
  // Truncated: rebuilt too.
  std::filesystem::resize_file(entries[0], size / 3);
  EXPECT_NE(ProgramCache::check_file(entries[0].string()), "");
  out.clear();
  run_neg(&out);
  EXPECT_EQ(out, (std::vector<int32_t>{-1, 2, -3}));
  EXPECT_EQ(ProgramCache::check_file(entries[0].string()), "");
  ::unsetenv("XDEV_OPENCL_CACHE_DIR");
  std::filesystem::remove_all(dir);
}

}  // namespace

namespace {

// A core before ABI 1.6 (or XDEV_OPENCL_MEMORY=addresses) gets address mode:
// made-up addresses, the old copy slots, no XDEV_CAP_HANDLE_MEMORY; an
// address inside a buffer works like (buffer, offset).
TEST(OpenclAddressMode, ACoreBefore16GetsAddressesThatWorkInsideBuffers) {
  ASSERT_TRUE(library().loaded()) << library().error();
  xdev_plugin_query_args_t args = query_args(process_core_host("opencl"));
  args.core_max_version = {1, 5};
  ASSERT_OK(library().query()(&args));
  const xdev_plugin_api_t* api = args.plugin_api;
  ASSERT_NE(api, nullptr);
  EXPECT_EQ(api->capabilities & XDEV_CAP_HANDLE_MEMORY, 0u);
  ASSERT_NE(api->copy_host_to_device, nullptr);
  const xdev_plugin_init_args_t init = init_args(process_core_host("opencl"));
  xdev_plugin_t* plugin = nullptr;
  ASSERT_OK(api->initialize(&init, &plugin));
  uint32_t count = 0;
  ASSERT_OK(api->device_count(plugin, &count));
  if (count != 0) {
    xdev_device_t* device = nullptr;
    xdev_stream_t* stream = nullptr;
    void* mem = nullptr;
    ASSERT_OK(api->device_open(plugin, 0, &device));
    ASSERT_OK(api->stream_create(device, &stream));
    ASSERT_OK(api->memory_allocate(device, 1024, 256, &mem));
    EXPECT_NE(reinterpret_cast<uint64_t>(mem) & UINT64_C(0x4000000000000000), 0u) << mem;
    const std::vector<int32_t> values = {5, 6, 7};
    char* inside = static_cast<char*>(mem) + 100;
    ASSERT_OK(api->copy_host_to_device(stream, inside, values.data(), 12));
    std::vector<int32_t> back(3);
    ASSERT_OK(api->copy_device_to_host(stream, back.data(), inside, 12));
    ASSERT_OK(api->stream_synchronize(stream));
    EXPECT_EQ(back, values);
    EXPECT_STATUS(api->copy_device_to_host(stream, back.data(), inside + 1000, 12),
                  XDEV_STATUS_INVALID_ARGUMENT, "overrun allocation");
    api->memory_free(device, mem);
    api->stream_destroy(stream);
    api->device_close(device);
  }
  api->shutdown(plugin);
  // The next query of a 1.6 core gets handles again.
  xdev_plugin_query_args_t now = query_args(process_core_host("opencl"));
  ASSERT_OK(library().query()(&now));
  EXPECT_NE(now.plugin_api->capabilities & XDEV_CAP_HANDLE_MEMORY, 0u);
}

}  // namespace
