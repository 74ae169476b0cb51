// PluginRawAllocator: a plugin's memory_allocate/memory_free as a RawAllocator.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include <xdev/error.hpp>
#include <xdev/plugin.h>

#include "error_matchers.hpp"
#include "memory/bfc_pool.hpp"
#include "memory/plugin_raw_allocator.hpp"
#include "common/status.hpp"

namespace xdev::detail {
namespace {

struct FakeDevice {
  xdev_status_code_t fail_with = XDEV_STATUS_OK;
  bool return_null = false;
  int frees = 0;
  uint64_t last_alignment = 0;
};

FakeDevice* as_device(xdev_device_t* d) { return reinterpret_cast<FakeDevice*>(d); }

xdev_status_t* fake_allocate(xdev_device_t* device, uint64_t size, uint64_t alignment, void** out_ptr) {
  FakeDevice* d = as_device(device);
  d->last_alignment = alignment;
  if (d->fail_with != XDEV_STATUS_OK) return make_status(d->fail_with, "fake plugin says no");
  *out_ptr = d->return_null ? nullptr : std::aligned_alloc(alignment, size);
  return nullptr;
}

void fake_free(xdev_device_t* device, void* ptr) {
  ++as_device(device)->frees;
  std::free(ptr);
}

xdev_plugin_api_t fake_api() {
  xdev_plugin_api_t api{};
  api.memory_allocate = fake_allocate;
  api.memory_free = fake_free;
  return api;
}

TEST(PluginRawAllocator, ForwardsToThePlugin) {
  const xdev_plugin_api_t api = fake_api();
  FakeDevice device;
  PluginRawAllocator raw(api, reinterpret_cast<xdev_device_t*>(&device), "CPU:0",
                         "fake_plugin.so");
  void* p = raw.allocate(4096, 256);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 256, 0u);
  EXPECT_EQ(device.last_alignment, 256u);
  raw.deallocate(p);
  raw.deallocate(nullptr);
  EXPECT_EQ(device.frees, 1);
}

TEST(PluginRawAllocator, OutOfMemoryIsNullOtherErrorsThrow) {
  const xdev_plugin_api_t api = fake_api();
  FakeDevice device;
  PluginRawAllocator raw(api, reinterpret_cast<xdev_device_t*>(&device), "GPU:3",
                         "fake_plugin.so");
  device.fail_with = XDEV_STATUS_OUT_OF_MEMORY;
  EXPECT_EQ(raw.allocate(4096, 256), nullptr);
  device.fail_with = XDEV_STATUS_UNAVAILABLE;
  try {
    raw.allocate(4096, 256);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kUnavailable);
    const std::string m = e.what();
    EXPECT_NE(m.find("GPU:3"), std::string::npos) << m;
    EXPECT_NE(m.find("fake plugin says no"), std::string::npos) << m;
  }
  device.fail_with = XDEV_STATUS_OK;
  device.return_null = true;
  EXPECT_THROW(raw.allocate(4096, 256), Error);
}

TEST(PluginRawAllocator, UnderAPoolOutOfMemoryIsThePoolsError) {
  const xdev_plugin_api_t api = fake_api();
  FakeDevice device;
  PluginRawAllocator raw(api, reinterpret_cast<xdev_device_t*>(&device), "GPU:0",
                         "fake_plugin.so");
  PoolOptions options;
  options.limit_bytes = 8 << 20;
  BfcPool pool(raw, options);
  void* p = pool.allocate(1000);
  EXPECT_NE(p, nullptr);
  pool.deallocate(p);
  EXPECT_EQ(pool.release_free_regions(), 2u << 20);
  device.fail_with = XDEV_STATUS_OUT_OF_MEMORY;
  EXPECT_THAT([&] { pool.allocate(1000); },
              xdev_test::ThrowsError(ErrorCode::kOutOfMemory, ::testing::HasSubstr("GPU:0")));
}

}  // namespace
}  // namespace xdev::detail
