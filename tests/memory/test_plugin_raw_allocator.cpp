// PluginRawAllocator: a plugin's memory_allocate/memory_free as a RawAllocator.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

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
  // ABI 1.6: a pointer plugin's block is (the region's base, the offset in
  // it), which add up to the pointer the pool returned.
  DeviceMemory m1, m2;
  void* p = pool.allocate(1000, &m1);
  void* q = pool.allocate(1000, &m2);
  EXPECT_NE(p, nullptr);
  EXPECT_EQ(m1.address(), p);
  EXPECT_EQ(m2.address(), q);
  EXPECT_EQ(m1.allocation, m2.allocation);
  EXPECT_NE(m1.offset, m2.offset);
  pool.deallocate(p);
  pool.deallocate(q);
  EXPECT_EQ(pool.release_free_regions(), 2u << 20);
  device.fail_with = XDEV_STATUS_OUT_OF_MEMORY;
  EXPECT_THAT([&] { pool.allocate(1000); },
              xdev_test::ThrowsError(ErrorCode::kOutOfMemory, ::testing::HasSubstr("GPU:0")));
}

// ABI 1.6, XDEV_CAP_HANDLE_MEMORY: the plugin's allocations are tokens (here
// 1, 3, 5, ...), never addresses. The pool works on made-up ranges and gives
// every block back as (the token, the offset in it).
struct TokenDevice {
  uint64_t next = 1;
  std::vector<void*> freed;
};
xdev_status_t* token_allocate(xdev_device_t* device, uint64_t, uint64_t, void** out_ptr) {
  auto* d = reinterpret_cast<TokenDevice*>(device);
  *out_ptr = reinterpret_cast<void*>(static_cast<uintptr_t>(d->next));
  d->next += 2;
  return nullptr;
}
void token_free(xdev_device_t* device, void* ptr) {
  reinterpret_cast<TokenDevice*>(device)->freed.push_back(ptr);
}

TEST(PluginRawAllocator, HandleMemoryGetsMadeUpRangesAndTheBlocksNameTheHandle) {
  xdev_plugin_api_t api{};
  api.capabilities = XDEV_CAP_HANDLE_MEMORY;
  api.memory_allocate = token_allocate;
  api.memory_free = token_free;
  TokenDevice device;
  PluginRawAllocator raw(api, reinterpret_cast<xdev_device_t*>(&device), "HND:0",
                         "fake_plugin.so");
  void* a = raw.allocate(1000, 256);
  void* b = raw.allocate(1000, 256);
  const auto ua = reinterpret_cast<uintptr_t>(a), ub = reinterpret_cast<uintptr_t>(b);
  EXPECT_GE(ua, PluginRawAllocator::kHandleAddressBase);
  EXPECT_EQ(ua % 4096, 0u);
  EXPECT_GE(ub, ua + 1000);  // the ranges never overlap
  EXPECT_EQ(raw.allocation(a), reinterpret_cast<void*>(uintptr_t{1}));
  EXPECT_EQ(raw.allocation(b), reinterpret_cast<void*>(uintptr_t{3}));
  raw.deallocate(a);
  ASSERT_EQ(device.freed.size(), 1u);
  EXPECT_EQ(device.freed[0], reinterpret_cast<void*>(uintptr_t{1}));  // the handle, not the range
  raw.deallocate(b);

  // Under a pool: two regions of 1 MiB (the limit reserved up front), blocks
  // carved out of them named as (token, offset).
  PoolOptions options;
  options.limit_bytes = 2 << 20;
  options.max_region_bytes = 1 << 20;
  options.allow_growth = false;
  BfcPool pool(raw, options);
  DeviceMemory first, second, other;
  void* p = pool.allocate(256 << 10, &first);
  void* q = pool.allocate(256 << 10, &second);
  void* r = pool.allocate(900 << 10, &other);  // does not fit beside them
  EXPECT_EQ(reinterpret_cast<uintptr_t>(first.allocation) % 2, 1u);
  EXPECT_EQ(first.allocation, second.allocation);
  EXPECT_EQ(second.offset - first.offset, uint64_t{256} << 10);
  EXPECT_NE(other.allocation, first.allocation);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(other.allocation) % 2, 1u);
  DeviceMemory none{reinterpret_cast<void*>(uintptr_t{7}), 9};
  EXPECT_EQ(pool.allocate(0, &none), nullptr);
  EXPECT_EQ(none.allocation, nullptr);
  pool.deallocate(p);
  pool.deallocate(q);
  pool.deallocate(r);
}

}  // namespace
}  // namespace xdev::detail
