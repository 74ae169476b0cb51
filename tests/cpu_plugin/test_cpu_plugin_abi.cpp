// The cpu plugin through its raw ABI: dlopen the plugin file named by
// XDEV_TEST_CPU_PLUGIN, call xdev_plugin_query and drive every slot of the
// table the way the core does, with the core's own host services.
#include <dlfcn.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <xdev/plugin.h>

#include "core_plugin_harness.hpp"

namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr uint64_t kMiB = uint64_t{1} << 20;

// ---------------------------------------------------------------------------
// Helpers (the shared raw-ABI harness: tests/support/core_plugin_harness.hpp)

using xdev_test::exported_symbols;
using xdev_test::first_error;
using xdev_test::Ok;
using xdev_test::Outcome;
using xdev_test::query_accepts;
using xdev_test::query_refuses;
using xdev_test::query_table;
using xdev_test::random_bytes;
using xdev_test::take;

std::string plugin_path() { return xdev_test::env_or("XDEV_TEST_CPU_PLUGIN"); }

const xdev_host_api_t* host_api() { return xdev_test::process_core_host("cpu"); }

// The plugin library named by XDEV_TEST_CPU_PLUGIN, loaded with dlopen and
// unloaded with dlclose.
class Library : public xdev_test::PluginLibrary {
 public:
  Library() { open_env("XDEV_TEST_CPU_PLUGIN"); }
};

xdev_plugin_query_args_t query_args() { return xdev_test::query_args(host_api()); }
xdev_plugin_init_args_t init_args() { return xdev_test::init_args(host_api()); }

// ---------------------------------------------------------------------------
// xdev_plugin_query

TEST(CpuPluginQuery, ReturnsAV1TableWithEveryRequiredSlot) {
  Library library;
  const xdev_plugin_api_t* api = query_table(library, host_api());
  ASSERT_NE(api, nullptr);

  EXPECT_EQ(api->struct_size, XDEV_PLUGIN_API_STRUCT_SIZE);
  EXPECT_EQ(api->ext, nullptr);
  EXPECT_EQ(api->abi_version.major, 1U);
  EXPECT_EQ(api->abi_version.minor, uint32_t{XDEV_ABI_VERSION_MINOR});
  EXPECT_STREQ(api->name, "cpu");
  ASSERT_NE(api->plugin_version, nullptr);
  EXPECT_STRNE(api->plugin_version, "");
  // Device memory is host memory (the core may memcpy it), and streams may be
  // used from several threads at once (they run work synchronously); events
  // are timed by the host clock at record (ABI 1.4).
  EXPECT_EQ(api->capabilities,
            XDEV_CAP_HOST_ADDRESSABLE | XDEV_CAP_CONCURRENT_STREAMS | XDEV_CAP_EVENT_TIMING);
  EXPECT_NE(api->event_elapsed_ms, nullptr);

  // Every REQUIRED slot is set (the first NULL one is named).
  EXPECT_STREQ(xdev_plugin_missing_slot(api), nullptr);

  // An optional slot is set exactly when its capability bit is.
  const bool host_memory = (api->capabilities & XDEV_CAP_HOST_MEMORY) != 0;
  EXPECT_EQ(api->host_memory_allocate != nullptr, host_memory);
  EXPECT_EQ(api->host_memory_free != nullptr, host_memory);
  EXPECT_EQ(api->copy_peer != nullptr, (api->capabilities & XDEV_CAP_PEER_COPY) != 0);
  EXPECT_NE(api->describe_status, nullptr);
}

TEST(CpuPluginQuery, RefusesArgumentsTooSmallForV1) {
  Library library;
  ASSERT_TRUE(library.loaded()) << library.error();
  xdev_plugin_query_args_t args = query_args();
  args.struct_size = offsetof(xdev_plugin_query_args_t, plugin_api);  // host, no plugin_api
  args.plugin_api = reinterpret_cast<const xdev_plugin_api_t*>(&args);  // must stay untouched
  EXPECT_STATUS(library.query()(&args), XDEV_STATUS_ABI_MISMATCH,
                std::to_string(offsetof(xdev_plugin_query_args_t, plugin_api)));
  EXPECT_EQ(args.plugin_api, reinterpret_cast<const xdev_plugin_api_t*>(&args));
  EXPECT_EQ(library.query()(nullptr), nullptr);  // nothing to report with: must not crash
}

TEST(CpuPluginQuery, NegotiatesTheVersion) {
  Library library;
  ASSERT_TRUE(library.loaded()) << library.error();
  const std::string mine = "implements ABI 1." + std::to_string(XDEV_ABI_VERSION_MINOR);
  constexpr uint32_t kMinor = XDEV_ABI_VERSION_MINOR;
  // A core of another major, older or newer.
  EXPECT_TRUE(query_refuses(library.query(), host_api(), {2, 0}, {2, 3}, {mine, "2.0 to 2.3"}));
  EXPECT_TRUE(query_refuses(library.query(), host_api(), {0, 1}, {0, 9}, {mine, "0.1 to 0.9"}));
  // A core that needs a newer minor than this plugin's.
  EXPECT_TRUE(query_refuses(library.query(), host_api(), {1, kMinor + 1}, {1, kMinor + 2},
                            {"the core accepts 1."}));
  // A core of a newer minor: minors only append.
  EXPECT_TRUE(query_accepts(library.query(), host_api(), {1, 0}, {1, kMinor + 5}));
}

TEST(CpuPluginLibrary, ExportsOnlyTheEntrySymbol) {
  ASSERT_FALSE(plugin_path().empty()) << "XDEV_TEST_CPU_PLUGIN is not set";
  EXPECT_EQ(exported_symbols(plugin_path()), std::set<std::string>{XDEV_PLUGIN_ENTRY_SYMBOL});
}

// ---------------------------------------------------------------------------
// initialize

class CpuPluginTable : public ::testing::Test {
 protected:
  void SetUp() override {
    api_ = query_table(library_, host_api());
    ASSERT_NE(api_, nullptr);
  }

  Library library_;
  const xdev_plugin_api_t* api_ = nullptr;
};

TEST_F(CpuPluginTable, InitializeRefusesBadArguments) {
  xdev_plugin_t* plugin = reinterpret_cast<xdev_plugin_t*>(this);
  xdev_plugin_init_args_t args = init_args();

  EXPECT_STATUS(api_->initialize(nullptr, &plugin), XDEV_STATUS_INVALID_ARGUMENT, "args is NULL");
  EXPECT_EQ(plugin, nullptr);
  EXPECT_STATUS(api_->initialize(&args, nullptr), XDEV_STATUS_INVALID_ARGUMENT,
                "out_plugin is NULL");

  args.struct_size = offsetof(xdev_plugin_init_args_t, host);
  EXPECT_STATUS(api_->initialize(&args, &plugin), XDEV_STATUS_ABI_MISMATCH,
                std::to_string(offsetof(xdev_plugin_init_args_t, host)));

  args = init_args();
  args.host = nullptr;
  EXPECT_STATUS(api_->initialize(&args, &plugin), XDEV_STATUS_INVALID_ARGUMENT, "args->host");
  EXPECT_EQ(plugin, nullptr);
}

// ---------------------------------------------------------------------------
// An initialized plugin

class CpuPlugin : public CpuPluginTable {
 protected:
  void SetUp() override {
    CpuPluginTable::SetUp();
    if (HasFatalFailure()) return;
    const xdev_plugin_init_args_t args = init_args();
    ASSERT_TRUE(Ok(api_->initialize(&args, &plugin_)));
    ASSERT_NE(plugin_, nullptr);
  }
  void TearDown() override {
    if (plugin_ != nullptr) api_->shutdown(plugin_);
    plugin_ = nullptr;
    EXPECT_EQ(library_.close(), 0) << dlerror();
  }

  xdev_device_properties_t properties(uint32_t ordinal = 0) {
    xdev_device_properties_t props{};
    props.struct_size = XDEV_DEVICE_PROPERTIES_STRUCT_SIZE;
    EXPECT_TRUE(Ok(api_->device_get_properties(plugin_, ordinal, &props)));
    return props;
  }

  xdev_plugin_t* plugin_ = nullptr;
};

TEST_F(CpuPlugin, OffersOneDeviceTypeCpuOnHost) {
  const xdev_device_type_info_t* const* types = nullptr;
  uint32_t count = 0;
  ASSERT_TRUE(Ok(api_->device_types(plugin_, &types, &count)));
  ASSERT_EQ(count, 1U);
  ASSERT_NE(types, nullptr);
  ASSERT_NE(types[0], nullptr);
  EXPECT_EQ(types[0]->struct_size, XDEV_DEVICE_TYPE_INFO_STRUCT_SIZE);
  EXPECT_EQ(types[0]->ext, nullptr);
  EXPECT_STREQ(types[0]->type, "CPU");
  EXPECT_STREQ(types[0]->platform, "host");
  EXPECT_EQ(types[0]->priority, XDEV_PRIORITY_CPU);
  EXPECT_EQ(types[0]->dlpack_device_type, XDEV_DLPACK_CPU);  // ABI 1.3
}

TEST_F(CpuPlugin, CountsOneDevice) {
  uint32_t count = 0;
  ASSERT_TRUE(Ok(api_->device_count(plugin_, &count)));
  EXPECT_EQ(count, 1U);
}

TEST_F(CpuPlugin, DescribesDeviceZero) {
  const xdev_device_properties_t props = properties();
  EXPECT_EQ(props.type_index, 0U);
  ASSERT_NE(props.name, nullptr);
  EXPECT_STRNE(props.name, "");
  EXPECT_GT(props.memory_total, 0U);
  ASSERT_NE(props.bus_id, nullptr);
  EXPECT_STREQ(props.bus_id, "");
  EXPECT_EQ(props.numa_node, 0);
  ASSERT_NE(props.description, nullptr);
  const std::string description = props.description;
  EXPECT_THAT(description, HasSubstr("device: 0"));
  EXPECT_THAT(description, HasSubstr(std::string("name: ") + props.name));
  EXPECT_THAT(description, HasSubstr("cores: "));
  EXPECT_THAT(description, HasSubstr(" GiB"));
  EXPECT_EQ(description.find('\n'), std::string::npos) << "one line";

  std::map<std::string, std::string> values;
  ASSERT_GT(props.property_count, 0U);
  ASSERT_NE(props.properties, nullptr);
  for (uint32_t i = 0; i < props.property_count; ++i) {
    ASSERT_NE(props.properties[i].key, nullptr);
    ASSERT_NE(props.properties[i].value, nullptr);
    values[props.properties[i].key] = props.properties[i].value;
  }
  EXPECT_GE(std::stoi(values["cores"]), 1);
  EXPECT_THAT(values["blas"], HasSubstr("OpenBLAS"));
  EXPECT_THAT(values["tbb"], HasSubstr("oneTBB"));
  EXPECT_FALSE(values["simd"].empty());
  EXPECT_FALSE(values["blas_threads"].empty());
}

TEST_F(CpuPlugin, FillsOnlyThePropertiesTheCoreAskedFor) {
  // A core built against a smaller struct: only up to `name`.
  xdev_device_properties_t props{};
  props.struct_size = XDEV_STRUCT_SIZE(xdev_device_properties_t, name);
  props.memory_total = 12345;
  props.description = "untouched";
  ASSERT_TRUE(Ok(api_->device_get_properties(plugin_, 0, &props)));
  EXPECT_EQ(props.struct_size, XDEV_STRUCT_SIZE(xdev_device_properties_t, name));
  ASSERT_NE(props.name, nullptr);
  EXPECT_EQ(props.memory_total, 12345U);
  EXPECT_STREQ(props.description, "untouched");
}

TEST_F(CpuPlugin, UnknownOrdinalIsNotFound) {
  xdev_device_properties_t props{};
  props.struct_size = XDEV_DEVICE_PROPERTIES_STRUCT_SIZE;
  EXPECT_STATUS(api_->device_get_properties(plugin_, 1, &props), XDEV_STATUS_NOT_FOUND,
                "ordinal 1");
  xdev_device_t* device = reinterpret_cast<xdev_device_t*>(this);
  EXPECT_STATUS(api_->device_open(plugin_, 1, &device), XDEV_STATUS_NOT_FOUND, "ordinal 1");
  EXPECT_EQ(device, nullptr);
  EXPECT_STATUS(api_->device_open(plugin_, 4000000000U, &device), XDEV_STATUS_NOT_FOUND,
                "ordinal 4000000000");
}

TEST_F(CpuPlugin, OpensDeviceZeroOnceAtATime) {
  xdev_device_t* device = nullptr;
  ASSERT_TRUE(Ok(api_->device_open(plugin_, 0, &device)));
  ASSERT_NE(device, nullptr);
  xdev_device_t* second = nullptr;
  EXPECT_STATUS(api_->device_open(plugin_, 0, &second), XDEV_STATUS_FAILED_PRECONDITION,
                "device 0 is already open");
  EXPECT_EQ(second, nullptr);
  api_->device_close(device);
  ASSERT_TRUE(Ok(api_->device_open(plugin_, 0, &device)));
  api_->device_close(device);
}

TEST_F(CpuPlugin, DescribesItsStatusInOneLine) {
  const char* status = api_->describe_status(plugin_);
  ASSERT_NE(status, nullptr);
  EXPECT_THAT(status, HasSubstr("1 device ("));
  EXPECT_THAT(status, HasSubstr(properties().name));
  EXPECT_THAT(status, HasSubstr("core"));
  EXPECT_THAT(status, Not(HasSubstr("\n")));
}

TEST_F(CpuPlugin, RegistersAKernelForEveryOpOfTheContract) {
  // test_cpu_kernels.cpp runs them; here: the table is well-formed.
  EXPECT_EQ(xdev_test::registered_ops(*api_, plugin_),
            (std::set<std::string>{"MatMul", "Add", "Sub", "Mul", "Div", "Neg", "Relu", "AddN",
                                   "Cast", "Sum", "Mean", "Copy", "Fill", "RandomUniform", "Abs",
                                   "Sign", "Square", "Exp", "Expm1", "Log", "Log1p", "Sqrt",
                                   "Rsqrt", "Reciprocal", "Sin", "Cos", "Tanh", "Sigmoid", "Erf",
                                   "Softplus", "Floor", "Ceil", "Round", "LeakyRelu", "Gelu", "Pow",
                                   "Maximum", "Minimum", "FloorDiv", "FloorMod",
                                   "SquaredDifference", "Equal", "NotEqual", "Less",
                                   "LessEqual", "Greater", "GreaterEqual", "LogicalAnd",
                                   "LogicalOr", "LogicalNot", "IsNan", "IsFinite", "Select",
                                   "ClipByValue", "Max", "Min", "Prod", "Any", "All",
                                   "LogSumExp", "ArgMax", "ArgMin", "CumSum", "Softmax",
                                   "LogSoftmax", "ConcatV2", "Pack", "Identity", "Tile",
                                   "PadV2", "GatherV2", "BiasAdd",
                                   "SoftmaxCrossEntropyWithLogits", "LayerNorm",
                                   "Slice", "StridedSlice", "Range", "OneHot",
                                   "BroadcastTo", "Conv2D",
                                   "Conv2DBackpropInput", "Conv2DBackpropFilter", "MaxPool",
                                   "AvgPool", "MaxPoolGrad", "AvgPoolGrad",
                                   "BatchMatMulV2", "TensorScatterAdd"}));
}

// OpenBLAS's thread count, kernel set and lazy loading: test_cpu_blas.cpp
// (each case needs a fresh process).

// A second instance of the same library, alive at the same time: shutting
// one down leaves the other fully working (also its NULL-argument errors,
// which use the plugin-wide host table).
TEST_F(CpuPlugin, TwoInstancesLiveSideBySide) {
  xdev_plugin_t* second = nullptr;
  const xdev_plugin_init_args_t args = init_args();
  ASSERT_TRUE(Ok(api_->initialize(&args, &second)));
  ASSERT_NE(second, nullptr);
  EXPECT_NE(second, plugin_);
  api_->shutdown(second);

  uint32_t count = 0;
  ASSERT_TRUE(Ok(api_->device_count(plugin_, &count)));
  EXPECT_EQ(count, 1U);
  EXPECT_STATUS(api_->device_count(nullptr, &count), XDEV_STATUS_INVALID_ARGUMENT,
                "plugin is NULL");
  EXPECT_STATUS(api_->stream_synchronize(nullptr), XDEV_STATUS_INVALID_ARGUMENT,
                "stream is NULL");
}

// ---------------------------------------------------------------------------
// An open device with a stream

class CpuDevice : public CpuPlugin {
 protected:
  void SetUp() override {
    CpuPlugin::SetUp();
    if (HasFatalFailure()) return;
    ASSERT_TRUE(Ok(api_->device_open(plugin_, 0, &device_)));
    ASSERT_NE(device_, nullptr);
    ASSERT_TRUE(Ok(api_->stream_create(device_, &stream_)));
    ASSERT_NE(stream_, nullptr);
  }
  void TearDown() override {
    if (stream_ != nullptr) api_->stream_destroy(stream_);
    if (device_ != nullptr) api_->device_close(device_);
    CpuPlugin::TearDown();
  }

  // Device memory, freed with the fixture's device at the end of scope.
  struct Buffer {
    Buffer(const xdev_plugin_api_t* api_table, xdev_device_t* owner, unsigned char* bytes)
        : api(api_table), device(owner), data(bytes) {}
    const xdev_plugin_api_t* api;
    xdev_device_t* device;
    unsigned char* data;
    ~Buffer() { api->memory_free(device, data); }
    Buffer(const Buffer&) = delete;
    Buffer& operator=(const Buffer&) = delete;
  };

  Buffer allocate(uint64_t size, uint64_t alignment = 64) {
    void* ptr = nullptr;
    EXPECT_TRUE(Ok(api_->memory_allocate(device_, size, alignment, &ptr)))
        << "size " << size << ", alignment " << alignment;
    return Buffer{api_, device_, static_cast<unsigned char*>(ptr)};
  }

  xdev_device_t* device_ = nullptr;
  xdev_stream_t* stream_ = nullptr;
};

TEST_F(CpuDevice, AllocatesOddSizesAlignedToACacheLine) {
  for (const uint64_t size : {uint64_t{1}, uint64_t{3}, uint64_t{17}, uint64_t{4095},
                              kMiB + 7, 64 * kMiB}) {
    SCOPED_TRACE(size);
    const Buffer buffer = allocate(size);
    ASSERT_NE(buffer.data, nullptr);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(buffer.data) % 64, 0U);
    std::memset(buffer.data, 0xA5, size);  // all of it is usable
    EXPECT_EQ(buffer.data[size - 1], 0xA5);
  }
}

TEST_F(CpuDevice, HonoursTheRequestedAlignment) {
  for (const uint64_t alignment : {uint64_t{1}, uint64_t{8}, uint64_t{64}, uint64_t{128},
                                   uint64_t{256}, uint64_t{4096}}) {
    SCOPED_TRACE(alignment);
    for (const uint64_t size : {uint64_t{1}, uint64_t{100}, uint64_t{5000}}) {
      const Buffer buffer = allocate(size, alignment);
      ASSERT_NE(buffer.data, nullptr);
      const uint64_t expected = std::max<uint64_t>(alignment, 64);
      EXPECT_EQ(reinterpret_cast<uintptr_t>(buffer.data) % expected, 0U) << "size " << size;
    }
  }
}

TEST_F(CpuDevice, RefusesSizeZeroAndAlignmentsThatAreNotPowersOfTwo) {
  void* ptr = this;
  EXPECT_STATUS(api_->memory_allocate(device_, 0, 64, &ptr), XDEV_STATUS_INVALID_ARGUMENT,
                "size is 0 bytes");
  EXPECT_EQ(ptr, nullptr);
  EXPECT_STATUS(api_->memory_allocate(device_, 128, 96, &ptr), XDEV_STATUS_INVALID_ARGUMENT,
                "alignment 96 is not a power of two");
  EXPECT_STATUS(api_->memory_allocate(device_, 128, 0, &ptr), XDEV_STATUS_INVALID_ARGUMENT,
                "alignment 0 is not a power of two");
  EXPECT_EQ(ptr, nullptr);
}

TEST_F(CpuDevice, ReportsOutOfMemoryForAHugeRequest) {
  void* ptr = this;
  const uint64_t huge = uint64_t{1} << 60;
  EXPECT_STATUS(api_->memory_allocate(device_, huge, 64, &ptr), XDEV_STATUS_OUT_OF_MEMORY,
                std::to_string(huge) + " bytes");
  EXPECT_EQ(ptr, nullptr);
  EXPECT_STATUS(api_->memory_allocate(device_, UINT64_MAX, 64, &ptr), XDEV_STATUS_OUT_OF_MEMORY,
                std::to_string(UINT64_MAX) + " bytes");
  const uint64_t just_beyond = properties().memory_total + 1;
  EXPECT_STATUS(api_->memory_allocate(device_, just_beyond, 64, &ptr), XDEV_STATUS_OUT_OF_MEMORY,
                std::to_string(just_beyond) + " bytes");
  // A huge alignment cannot wrap the size check around.
  EXPECT_STATUS(api_->memory_allocate(device_, 64, uint64_t{1} << 63, &ptr),
                XDEV_STATUS_OUT_OF_MEMORY, "alignment 9223372036854775808");
  EXPECT_EQ(ptr, nullptr);
  // The device still works afterwards.
  const Buffer buffer = allocate(4096);
  EXPECT_NE(buffer.data, nullptr);
}

TEST_F(CpuDevice, FreeOfNullIsANoOp) {
  api_->memory_free(device_, nullptr);
  api_->memory_free(nullptr, nullptr);
  SUCCEED();
}

TEST_F(CpuDevice, QueriesFreeAndTotalMemory) {
  uint64_t free_bytes = 0;
  uint64_t total_bytes = 0;
  ASSERT_TRUE(Ok(api_->memory_query(device_, &free_bytes, &total_bytes)));
  EXPECT_EQ(total_bytes, properties().memory_total);
  EXPECT_GT(free_bytes, 0U);
  EXPECT_LE(free_bytes, total_bytes);
}

TEST_F(CpuDevice, CopiesRoundTripAtOddSizesAndOffsets) {
  // Sizes on both sides of any parallel-copy threshold up to 64 MiB.
  const std::vector<uint64_t> sizes = {1,       3,       17,          4095, 65537,
                                       kMiB + 7, 4 * kMiB + 1, 8 * kMiB + 3, 64 * kMiB + 13};
  const std::vector<uint64_t> offsets = {0, 1, 7, 63};
  uint64_t seed = 1;
  for (const uint64_t size : sizes) {
    const bool large = size > 8 * kMiB;
    for (const uint64_t offset : offsets) {
      if (large && offset != 7) continue;  // one odd offset is enough at this size
      SCOPED_TRACE(testing::Message() << "size " << size << ", offset " << offset);
      const uint64_t other = (offset * 5 + 3) % 64;
      const std::vector<unsigned char> source = random_bytes(size + 64, seed++);
      std::vector<unsigned char> result(size + 64, 0);
      const Buffer first = allocate(size + 64);
      const Buffer second = allocate(size + 64);
      ASSERT_NE(first.data, nullptr);
      ASSERT_NE(second.data, nullptr);

      ASSERT_TRUE(Ok(api_->copy_host_to_device(stream_, first.data + offset,
                                                source.data() + other, size)));
      ASSERT_TRUE(Ok(api_->copy_device_to_device(stream_, second.data + other,
                                                  first.data + offset, size)));
      ASSERT_TRUE(Ok(api_->copy_device_to_host(stream_, result.data() + offset,
                                                second.data + other, size)));
      ASSERT_TRUE(Ok(api_->stream_synchronize(stream_)));
      ASSERT_EQ(std::memcmp(result.data() + offset, source.data() + other, size), 0);
      // Nothing outside the destination range was written.
      for (uint64_t i = 0; i < offset; ++i) ASSERT_EQ(result[i], 0) << "byte " << i;
      for (uint64_t i = offset + size; i < result.size(); ++i) {
        ASSERT_EQ(result[i], 0) << "byte " << i;
      }
    }
  }
}

TEST_F(CpuDevice, CopiesOfZeroBytesSucceed) {
  EXPECT_TRUE(Ok(api_->copy_host_to_device(stream_, nullptr, nullptr, 0)));
  EXPECT_TRUE(Ok(api_->copy_device_to_host(stream_, nullptr, nullptr, 0)));
  EXPECT_TRUE(Ok(api_->copy_device_to_device(stream_, nullptr, nullptr, 0)));
}

TEST_F(CpuDevice, RefusesNullAndOverlappingCopyRanges) {
  const Buffer buffer = allocate(256);
  unsigned char host[16] = {};
  EXPECT_STATUS(api_->copy_host_to_device(stream_, nullptr, host, 16),
                XDEV_STATUS_INVALID_ARGUMENT, "dst is NULL for a copy of 16 bytes");
  EXPECT_STATUS(api_->copy_device_to_host(stream_, host, nullptr, 16),
                XDEV_STATUS_INVALID_ARGUMENT, "src is NULL for a copy of 16 bytes");
  EXPECT_STATUS(api_->copy_device_to_device(stream_, buffer.data + 8, buffer.data, 100),
                XDEV_STATUS_INVALID_ARGUMENT, "100-byte ranges");
  EXPECT_STATUS(api_->copy_device_to_device(stream_, buffer.data, buffer.data + 99, 100),
                XDEV_STATUS_INVALID_ARGUMENT, "overlap");
  // Adjacent ranges do not overlap.
  EXPECT_TRUE(Ok(api_->copy_device_to_device(stream_, buffer.data + 100, buffer.data, 100)));
}

TEST_F(CpuDevice, StreamsAndEventsCompleteInOrder) {
  xdev_stream_t* other = nullptr;
  ASSERT_TRUE(Ok(api_->stream_create(device_, &other)));
  xdev_event_t* event = nullptr;
  ASSERT_TRUE(Ok(api_->event_create(device_, &event)));
  ASSERT_NE(event, nullptr);

  int32_t done = -1;
  ASSERT_TRUE(Ok(api_->event_synchronize(event)));  // never recorded: complete
  ASSERT_TRUE(Ok(api_->event_query(event, &done)));
  EXPECT_EQ(done, 1);

  // Work, a mark, a dependent stream.
  const Buffer buffer = allocate(1024);
  const std::vector<unsigned char> source = random_bytes(1024, 99);
  ASSERT_TRUE(Ok(api_->copy_host_to_device(stream_, buffer.data, source.data(), 1024)));
  ASSERT_TRUE(Ok(api_->event_record(event, stream_)));
  ASSERT_TRUE(Ok(api_->stream_wait_event(other, event)));
  std::vector<unsigned char> result(1024);
  ASSERT_TRUE(Ok(api_->copy_device_to_host(other, result.data(), buffer.data, 1024)));
  ASSERT_TRUE(Ok(api_->stream_synchronize(other)));
  EXPECT_EQ(result, source);

  done = -1;
  ASSERT_TRUE(Ok(api_->event_query(event, &done)));
  EXPECT_EQ(done, 1);
  ASSERT_TRUE(Ok(api_->event_synchronize(event)));
  ASSERT_TRUE(Ok(api_->event_record(event, other)));  // re-recording replaces the mark
  ASSERT_TRUE(Ok(api_->event_synchronize(event)));
  ASSERT_TRUE(Ok(api_->stream_synchronize(stream_)));

  api_->event_destroy(event);
  api_->stream_destroy(other);
}

TEST_F(CpuDevice, NullArgumentsAreInvalidArgumentStatuses) {
  xdev_event_t* event = nullptr;
  ASSERT_TRUE(Ok(api_->event_create(device_, &event)));
  void* buffer = nullptr;
  ASSERT_TRUE(Ok(api_->memory_allocate(device_, 64, 64, &buffer)));
  const auto& api = *api_;
  const xdev_test::NullArgumentCalls calls(api, plugin_, 0, device_, stream_, event, buffer,
                                           host_api());
  for (const auto& call : calls.calls()) {
    SCOPED_TRACE(std::string(call.slot) + "(" + call.argument + " NULL)");
    const Outcome outcome = take(call.run());
    EXPECT_EQ(outcome.code, XDEV_STATUS_INVALID_ARGUMENT) << outcome.message;
    EXPECT_THAT(outcome.message, HasSubstr(call.slot));
    EXPECT_THAT(outcome.message, HasSubstr(std::string(call.argument) + " is NULL"));
  }
  api.memory_free(device_, buffer);

  // The slots that return nothing accept NULL without crashing.
  ASSERT_NE(api.describe_status(nullptr), nullptr);
  api.shutdown(nullptr);
  api.device_close(nullptr);
  api.stream_destroy(nullptr);
  api.event_destroy(nullptr);
  api.memory_free(nullptr, nullptr);
  api.event_destroy(event);
}

// The slots the header calls thread-safe, from several threads at once,
// large copies included (oneTBB runs inside each of them).
TEST_F(CpuDevice, ThreadSafeSlotsWorkFromSeveralThreads) {
  constexpr int kThreads = 4;
  constexpr uint64_t kSize = 9 * kMiB + 5;
  std::vector<std::string> failures(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      const std::vector<unsigned char> source = random_bytes(kSize, 1000 + t);
      std::vector<unsigned char> result(kSize);
      for (int round = 0; round < 3; ++round) {
        xdev_stream_t* stream = nullptr;
        xdev_event_t* event = nullptr;
        void* ptr = nullptr;
        std::string error = first_error({
            [&] { return api_->stream_create(device_, &stream); },
            [&] { return api_->event_create(device_, &event); },
            [&] { return api_->memory_allocate(device_, kSize, 128, &ptr); },
            [&] { return api_->copy_host_to_device(stream, ptr, source.data(), kSize); },
            [&] { return api_->event_record(event, stream); },
            [&] { return api_->copy_device_to_host(stream, result.data(), ptr, kSize); },
        });
        if (error.empty() && result != source) error = "round trip differs";
        api_->memory_free(device_, ptr);
        api_->event_destroy(event);
        api_->stream_destroy(stream);
        if (!error.empty()) {
          failures[t] = error;
          return;
        }
      }
    });
  }
  for (auto& thread : threads) thread.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(failures[t], "") << "thread " << t;
}

// ---------------------------------------------------------------------------
// Life cycle: load, use oneTBB, shut down, unload.

// One full life of the plugin in this process, with a copy large enough to
// run on oneTBB's worker threads. Returns "" or what went wrong.
std::string use_plugin_once() {
  Library library;
  if (!library.loaded()) return library.error();
  xdev_plugin_query_args_t query = query_args();
  const xdev_plugin_init_args_t args = init_args();
  xdev_plugin_t* plugin = nullptr;
  const auto& api = query.plugin_api;  // set by the first step
  if (std::string error = first_error({[&] { return library.query()(&query); },
                                       [&] { return api->initialize(&args, &plugin); }});
      !error.empty()) {
    return error;
  }
  xdev_device_t* device = nullptr;
  xdev_stream_t* stream = nullptr;
  void* buffer = nullptr;
  const uint64_t size = 32 * kMiB;
  const std::vector<unsigned char> source = random_bytes(size, 7);
  std::vector<unsigned char> result(size);
  std::string error = first_error({
      [&] { return api->device_open(plugin, 0, &device); },
      [&] { return api->stream_create(device, &stream); },
      [&] { return api->memory_allocate(device, size, 64, &buffer); },
      [&] { return api->copy_host_to_device(stream, buffer, source.data(), size); },
      [&] { return api->copy_device_to_host(stream, result.data(), buffer, size); },
  });
  if (error.empty() && result != source) error = "round trip differs";
  api->memory_free(device, buffer);
  if (stream != nullptr) api->stream_destroy(stream);
  if (device != nullptr) api->device_close(device);
  api->shutdown(plugin);
  if (library.close() != 0 && error.empty()) error = std::string("dlclose: ") + dlerror();
  // The library must really be gone, or these tests prove nothing about
  // unloading (a STB_GNU_UNIQUE symbol, for one, pins a library).
  if (void* still = dlopen(plugin_path().c_str(), RTLD_NOW | RTLD_NOLOAD)) {
    dlclose(still);
    if (error.empty()) error = "the plugin is still loaded after dlclose";
  }
  return error;
}

TEST(CpuPluginLifecycle, InitializesAgainAfterShutdownAndUnload) {
  for (int cycle = 0; cycle < 3; ++cycle) {
    EXPECT_EQ(use_plugin_once(), "") << "cycle " << cycle;
  }
}

// The unload crash (docs/plugin-abi.md, step 8) happens at or after dlclose, when oneTBB
// workers still run code of an unmapped library: run the cycles in a child
// process and require that it exits normally.
[[noreturn]] void use_plugin_three_times_and_exit() {
  for (int cycle = 0; cycle < 3; ++cycle) {
    const std::string error = use_plugin_once();
    if (!error.empty()) {
      std::fprintf(stderr, "cycle %d: %s\n", cycle, error.c_str());
      std::exit(2);
    }
    // Give a worker that outlived the unload time to fault.
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  std::exit(0);
}

TEST(CpuPluginLifecycleDeathTest, ProcessExitsCleanlyAfterUnloadingAPluginThatUsedTbb) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(use_plugin_three_times_and_exit(), ::testing::ExitedWithCode(0), "");
}

}  // namespace
