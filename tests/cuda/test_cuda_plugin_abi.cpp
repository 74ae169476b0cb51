// The cuda plugin through its raw ABI: dlopen the file named by
// XDEV_TEST_CUDA_PLUGIN, call xdev_plugin_query and drive the table the way
// the core does, with the core's own host services.
//
// The first group runs everywhere, also without a GPU or a driver (the
// zero-device path). Tests that need a device skip with the reason when the
// plugin reports none.
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
#include <string>
#include <string_view>
#include <vector>

#include <xdev/plugin.h>

#include "loader/host_api.hpp"
#include "common/status.hpp"

namespace {

using ::testing::AnyOf;
using ::testing::HasSubstr;
using ::testing::StartsWith;

// ---------------------------------------------------------------------------
// Helpers

const xdev_host_api_t* host_api() {
  static xdev::detail::HostContext context{"cuda"};
  static const xdev_host_api_t host = xdev::detail::make_host_api(&context);
  return &host;
}

struct Outcome {
  xdev_status_code_t code = XDEV_STATUS_OK;
  std::string message;
};

Outcome take(xdev_status_t* status) {
  if (status == nullptr) return {};
  xdev::detail::StatusPtr owned(status);
  return {owned->code, owned->message};
}

::testing::AssertionResult Ok(xdev_status_t* status) {
  if (status == nullptr) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << xdev::detail::take_message(status);
}

#define EXPECT_STATUS(expr, expected_code, needle)                                 \
  do {                                                                             \
    const Outcome outcome_ = take(expr);                                           \
    EXPECT_EQ(outcome_.code, (expected_code)) << #expr << ": " << outcome_.message; \
    EXPECT_THAT(outcome_.message, HasSubstr(needle)) << #expr;                     \
  } while (0)

std::string plugin_path() {
  const char* path = std::getenv("XDEV_TEST_CUDA_PLUGIN");
  return path != nullptr ? path : "";
}

// The plugin library. Never unloaded: CUDA's runtime keeps threads and
// atexit handlers that must not outlive its code (the core loads plugins with
// RTLD_NODELETE for the same reason).
class Library {
 public:
  static Library& get() {
    static Library* library = new Library;
    return *library;
  }
  bool loaded() const { return query_ != nullptr; }
  const std::string& error() const { return error_; }
  xdev_plugin_query_fn_t query() const { return query_; }

 private:
  Library() {
    const std::string path = plugin_path();
    if (path.empty()) {
      error_ = "XDEV_TEST_CUDA_PLUGIN is not set (meson test sets it to the plugin file)";
      return;
    }
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
    if (handle == nullptr) {
      error_ = std::string("dlopen failed: ") + dlerror();
      return;
    }
    query_ = reinterpret_cast<xdev_plugin_query_fn_t>(dlsym(handle, XDEV_PLUGIN_ENTRY_SYMBOL));
    if (query_ == nullptr) error_ = path + " has no " XDEV_PLUGIN_ENTRY_SYMBOL;
  }
  xdev_plugin_query_fn_t query_ = nullptr;
  std::string error_;
};

xdev_plugin_query_args_t query_args() {
  xdev_plugin_query_args_t args{};
  args.struct_size = XDEV_PLUGIN_QUERY_ARGS_STRUCT_SIZE;
  args.core_min_version = {XDEV_ABI_VERSION_MAJOR, 0};
  args.core_max_version = {XDEV_ABI_VERSION_MAJOR, XDEV_ABI_VERSION_MINOR};
  args.host = host_api();
  return args;
}

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
    xdev_plugin_init_args_t args{};
    args.struct_size = XDEV_PLUGIN_INIT_ARGS_STRUCT_SIZE;
    args.host = host_api();
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

std::vector<unsigned char> random_bytes(size_t size, uint64_t seed) {
  std::mt19937_64 engine(seed);
  std::vector<unsigned char> bytes(size);
  for (auto& b : bytes) b = static_cast<unsigned char>(engine());
  return bytes;
}

// Exported (defined, global, default-visibility) dynamic symbols.
std::set<std::string> exported_symbols(const std::string& path) {
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

// The reasons describe_status gives for zero devices.
auto NoDeviceReason() {
  return AnyOf(HasSubstr("CUDA driver not found"), HasSubstr("no CUDA-capable device"),
               HasSubstr("CUDA driver too old"), HasSubstr("CUDA unavailable"));
}

#define REQUIRE_DEVICE(instance)                                                   \
  do {                                                                             \
    if ((instance).device_count() == 0) {                                          \
      GTEST_SKIP() << "no CUDA device (the plugin says: " << (instance).status() << ")"; \
    }                                                                              \
  } while (0)

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
  EXPECT_EQ(api->abi_version.minor, static_cast<uint32_t>(XDEV_ABI_VERSION_MINOR));
  EXPECT_STREQ(api->name, "cuda");
  ASSERT_NE(api->plugin_version, nullptr);
  EXPECT_GT(std::strlen(api->plugin_version), 0U);
  EXPECT_EQ(api->capabilities,
            XDEV_CAP_HOST_MEMORY | XDEV_CAP_PEER_COPY | XDEV_CAP_EVENTS);
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
  };
  for (size_t i = 0; i < std::size(slots); ++i) EXPECT_NE(slots[i], nullptr) << "slot " << i;
}

TEST(CudaPluginQuery, ExportsOnlyTheEntryPoint) {
  ASSERT_FALSE(plugin_path().empty());
  EXPECT_EQ(exported_symbols(plugin_path()), std::set<std::string>{"xdev_plugin_query"});
}

TEST(CudaPluginQuery, RefusesACoreOfAnotherMajorVersion) {
  Library& library = Library::get();
  ASSERT_TRUE(library.loaded()) << library.error();
  xdev_plugin_query_args_t args = query_args();
  args.core_min_version = {2, 0};
  args.core_max_version = {2, 3};
  EXPECT_STATUS(library.query()(&args), XDEV_STATUS_ABI_MISMATCH, "ABI 1." + std::to_string(XDEV_ABI_VERSION_MINOR));
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
  EXPECT_FALSE(instance.status().empty());
}

TEST(CudaPlugin, ZeroDevicesComeWithTheReason) {
  Instance instance;
  ASSERT_NE(instance.plugin(), nullptr) << instance.init_outcome().message;
  std::cout << "describe_status: " << instance.status() << "\n";
  if (instance.device_count() > 0) {
    EXPECT_THAT(instance.status(), StartsWith(std::to_string(instance.device_count()) + " device"));
    GTEST_SKIP() << "this machine has " << instance.device_count()
                 << " CUDA device(s); the zero-device path runs where there is none (and in "
                    "cuda_plugin_abi_hidden_devices, with CUDA_VISIBLE_DEVICES empty)";
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

TEST(CudaPlugin, RegistersTheKernelsOfTheOpSet) {
  Instance instance;
  ASSERT_NE(instance.plugin(), nullptr) << instance.init_outcome().message;
  const xdev_kernel_info_t* const* kernels = nullptr;
  uint32_t count = 0;
  ASSERT_TRUE(Ok(instance.api()->kernels(instance.plugin(), &kernels, &count)));
  std::set<std::string> ops;
  for (uint32_t i = 0; i < count; ++i) {
    ASSERT_NE(kernels[i], nullptr);
    EXPECT_EQ(kernels[i]->struct_size, XDEV_KERNEL_INFO_STRUCT_SIZE);
    EXPECT_EQ(kernels[i]->type_index, 0U);
    EXPECT_NE(kernels[i]->fn, nullptr);
    EXPECT_NE(kernels[i]->input_dtypes, 0U) << kernels[i]->op;
    ops.insert(kernels[i]->op);
  }
  EXPECT_EQ(ops, (std::set<std::string>{"MatMul", "Add", "Sub", "Mul", "Div", "Neg", "Relu",
                                        "AddN", "Cast", "Sum", "Mean", "Copy", "Fill",
                                        "RandomUniform"}));
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
  xdev_kernel_call_t call{};
  call.struct_size = XDEV_KERNEL_CALL_STRUCT_SIZE;
  const xdev_kernel_info_t* const* kernels = nullptr;
  uint32_t count = 0;
  ASSERT_TRUE(Ok(api->kernels(instance.plugin(), &kernels, &count)));
  ASSERT_GT(count, 0U);
  EXPECT_STATUS(kernels[0]->fn(kernels[0]->kernel_context, &call), XDEV_STATUS_INVALID_ARGUMENT,
                "stream");
  EXPECT_STREQ(api->describe_status(nullptr), "invalid plugin handle (NULL)");
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
  const int64_t shape[1] = {1001};
  const int64_t strides[1] = {1};
  xdev_tensor_t out{data, 0, XDEV_DTYPE_FLOAT32, 1, shape, strides};
  const xdev_tensor_t* outputs[1] = {&out};
  xdev_attr_t value{};
  value.name = "value";
  value.kind = XDEV_ATTR_FLOAT;
  value.value.f = 2.5;
  xdev_kernel_call_t call{};
  call.struct_size = XDEV_KERNEL_CALL_STRUCT_SIZE;
  call.op = "Fill";
  call.device = device_;
  call.stream = stream_;
  call.outputs = outputs;
  call.output_count = 1;
  call.attrs = &value;
  call.attr_count = 1;
  ASSERT_TRUE(Ok(fill->fn(fill->kernel_context, &call)));
  std::vector<float> back(1001);
  ASSERT_TRUE(Ok(api_->copy_device_to_host(stream_, back.data(), data, 1001 * 4)));
  ASSERT_TRUE(Ok(api_->stream_synchronize(stream_)));
  for (float v : back) ASSERT_EQ(v, 2.5f);
  // A dtype it did not register is refused by name.
  out.dtype = XDEV_DTYPE_FLOAT16;
  EXPECT_STATUS(fill->fn(fill->kernel_context, &call), XDEV_STATUS_UNIMPLEMENTED, "float16");
  api_->memory_free(device_, data);
}

TEST(CudaPeers, CopyPeerOrSaysThereIsNoPath) {
  Instance instance;
  ASSERT_NE(instance.plugin(), nullptr) << instance.init_outcome().message;
  if (instance.device_count() < 2) {
    GTEST_SKIP() << "needs 2 CUDA devices, the plugin has " << instance.device_count() << " ("
                 << instance.status() << ")";
  }
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
  const Outcome peer = take(api->copy_peer(s1, static_cast<char*>(b) + 5, d0,
                                           static_cast<char*>(a) + 3, size));
  if (peer.code == XDEV_STATUS_UNIMPLEMENTED) {
    std::cout << "no peer path between devices 0 and 1: " << peer.message << "\n";
  } else {
    ASSERT_EQ(peer.code, XDEV_STATUS_OK) << peer.message;
    std::vector<unsigned char> back(size);
    ASSERT_TRUE(Ok(api->copy_device_to_host(s1, back.data(), static_cast<char*>(b) + 5, size)));
    ASSERT_TRUE(Ok(api->stream_synchronize(s1)));
    EXPECT_EQ(back, data);
  }
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
