// Plugin ABI 1.6 (docs/ABI-CHANGELOG.md): handle-based device memory.
//  - the plugin "handles" (tests/plugins/handles) returns tokens, not
//    addresses, from memory_allocate and resolves every (allocation, offset)
//    through its own table, refusing any range outside an allocation: ops,
//    pool sub-allocation, views with offsets, kernel scratch, copies to and
//    from the host, within a device, between its devices (peer), between two
//    logical devices of one physical device, to and from cpu and sim, to_host,
//    safetensors and all-reduce all work through the core, and DLPack export
//    is refused with a reason;
//  - the loader refuses a handle plugin without its *_at slots, or one that
//    also claims host-addressable memory, with a reason;
//  - a 1.6 pointer plugin that sets the optional *_at slots gets them;
//  - a plugin of ABI 1.5 (pointer-based, no *_at slots; the ones beyond its
//    table abort) loads and runs ops on pool sub-allocations and views, where
//    the core now passes data = the allocation and byte_offset = the offset
//    in it: (char*)data + byte_offset is the same address as before.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <numeric>
#include <string>
#include <vector>

#include <xdev/config.hpp>
#include <xdev/distribute.hpp>
#include <xdev/error.hpp>
#include <xdev/interop.hpp>
#include <xdev/xdev.hpp>

#include "interop/dlpack.h"
#include "loader/plugin_loader.hpp"
#include "loader_support.hpp"
#include "tensors/tensor_impl.hpp"

namespace fs = std::filesystem;

namespace {

const fs::path kHandlesDir = XDEV_TEST_PLUGINS_HANDLES_DIR;
const fs::path kAbi15Dir = XDEV_TEST_PLUGINS_ABI15_DIR;

std::vector<float> iota(size_t n, float from = 0) {
  std::vector<float> v(n);
  std::iota(v.begin(), v.end(), from);
  return v;
}

xdev::Tensor on(const std::string& device, const std::vector<float>& values,
                const xdev::Shape& shape) {
  xdev::DeviceScope scope(device);
  return xdev::constant(values.data(), xdev::DType::kFloat32, shape);
}

// The (allocation, offset) the core hands the plugin for `t`.
xdev::detail::DeviceMemory memory_of(const xdev::Tensor& t) { return t.impl()->memory(); }

// The logical device "TYPE:N".
xdev::Device logical(const std::string& type_and_id) {
  for (const auto& d : xdev::list_logical_devices()) {
    if (d.name.ends_with("device:" + type_and_id)) return d;
  }
  throw std::runtime_error("no logical device " + type_and_id);
}

// One of the handles plugin's tokens: a small odd integer, never an address.
bool is_token(const void* allocation) {
  const auto v = reinterpret_cast<uintptr_t>(allocation);
  return v % 2 == 1 && v < 1024;
}

// --- the loader -----------------------------------------------------------

TEST(Abi1_6, AHandlePluginLoads) {
  auto plugin = xdev::detail::load_plugin(kHandlesDir / "xdev_test_handles.so");
  ASSERT_TRUE(plugin->loaded()) << plugin->reason;
  EXPECT_EQ(xdev_test::version_text(plugin->abi_version), "1.6");
  EXPECT_EQ(plugin->devices.size(), 2u);
}

TEST(Abi1_6, AHandlePluginWithoutItsAtSlotsIsRefusedWithAReason) {
  xdev_test::expect_skipped(
      kHandlesDir / "xdev_test_handles_no_at.so",
      "declares XDEV_CAP_HANDLE_MEMORY but 'copy_device_to_host_at' is NULL: a plugin whose "
      "memory is handles must take copies as (allocation, offset)");
  xdev_test::expect_skipped(
      kHandlesDir / "xdev_test_handles_no_peer_at.so",
      "declares XDEV_CAP_HANDLE_MEMORY but 'copy_peer_at' is NULL (it declares "
      "XDEV_CAP_PEER_COPY): a plugin whose memory is handles must take copies as "
      "(allocation, offset)");
  xdev_test::expect_skipped(kHandlesDir / "xdev_test_handles_addressable.so",
                            "declares both XDEV_CAP_HANDLE_MEMORY and XDEV_CAP_HOST_ADDRESSABLE "
                            "(memory that is handles cannot be host addresses)");
}

TEST(Abi1_6, APluginOfAbi1_5LoadsAndNothingPastItsTableIsRead) {
  auto plugin = xdev::detail::load_plugin(kAbi15Dir / "xdev_test_abi15.so");
  ASSERT_TRUE(plugin->loaded()) << plugin->reason;
  EXPECT_EQ(xdev_test::version_text(plugin->abi_version), "1.5");
}

// --- a handle plugin through the core ----------------------------------------

TEST(Abi1_6, KernelsGetTheAllocationAndTheOffsetInIt) {
  // Many small tensors share the pool's regions: most lie at an offset > 0
  // inside one handle, which the plugin resolves itself.
  std::vector<xdev::Tensor> keep;
  bool some_offset = false;
  for (int i = 0; i < 40; ++i) {
    keep.push_back(on("/device:HND:0", iota(100, float(i)), {100}));
    const auto m = memory_of(keep.back());
    EXPECT_TRUE(is_token(m.allocation)) << reinterpret_cast<uintptr_t>(m.allocation);
    some_offset = some_offset || m.offset > 0;
  }
  EXPECT_TRUE(some_offset);
  xdev::DeviceScope scope("/device:HND:0");
  for (int i = 0; i + 1 < 40; ++i) {
    const xdev::Tensor s = xdev::add(keep[i], keep[i + 1]);
    EXPECT_EQ(s.device().device_type, "HND");
    const auto got = s.to_vector<float>();
    for (int k = 0; k < 100; ++k) ASSERT_EQ(got[k], float(2 * k + 2 * i + 1)) << i << " " << k;
  }
  const xdev::Tensor p = xdev::mul(keep[2], keep[3]);
  EXPECT_EQ(p.to_vector<float>()[5], 7.0f * 8.0f);
  EXPECT_EQ(xdev::fill({3, 2}, 2.5).to_vector<float>(), std::vector<float>(6, 2.5f));
}

TEST(Abi1_6, ViewsWithOffsetsAndStrides) {
  const std::vector<float> host = iota(64);
  const xdev::Tensor x = on("/device:HND:0", host, {8, 8});
  xdev::DeviceScope scope("/device:HND:0");
  // A slice: byte_offset inside the storage, rows of stride 8.
  const xdev::Tensor s = xdev::slice(x, {2, 3}, {4, 4});
  const auto twice = xdev::add(s, s).to_vector<float>();
  for (int r = 0; r < 4; ++r) {
    for (int c = 0; c < 4; ++c) EXPECT_EQ(twice[r * 4 + c], 2 * host[(r + 2) * 8 + c + 3]);
  }
  // A transpose: strides (1, 8).
  const xdev::Tensor t = x.transpose();
  const auto sq = xdev::mul(t, t).to_vector<float>();
  for (int r = 0; r < 8; ++r) {
    for (int c = 0; c < 8; ++c) EXPECT_EQ(sq[r * 8 + c], host[c * 8 + r] * host[c * 8 + r]);
  }
  // Read back a strided view directly, and one made contiguous (Copy).
  const auto back = s.to_vector<float>();
  EXPECT_EQ(back[0], host[2 * 8 + 3]);
  EXPECT_EQ(back[15], host[5 * 8 + 6]);
  EXPECT_EQ(t.reshape({64}).to_vector<float>()[1], host[8]);
  // Broadcast (stride 0) and Sum over axes, whose partials are kernel
  // scratch taken with scratch_allocate_at.
  const xdev::Tensor row = on("/device:HND:0", iota(8, 100), {1, 8});
  EXPECT_EQ(xdev::add(x, row).to_vector<float>()[9], host[9] + 101);
  const auto cols = xdev::sum(s, {0}).to_vector<float>();
  EXPECT_EQ(cols[0], host[19] + host[27] + host[35] + host[43]);
  EXPECT_EQ(xdev::sum(t).item<float>(), 63.0f * 64.0f / 2.0f);
}

TEST(Abi1_6, CopiesBetweenDevices) {
  const std::vector<float> host = iota(48, 1);
  const xdev::Tensor x = on("/device:HND:0", host, {6, 8});
  const xdev::Tensor view = xdev::slice(x, {1, 2}, {3, 4});
  std::vector<float> view_host;
  for (int r = 1; r < 4; ++r) {
    for (int c = 2; c < 6; ++c) view_host.push_back(host[r * 8 + c]);
  }
  for (const char* other : {"CPU:0", "GPU:0", "HND:1", "HND:2"}) {
    SCOPED_TRACE(other);
    const xdev::Tensor there = x.to(logical(other));
    EXPECT_EQ(there.to_vector<float>(), host);
    // And back to HND:0, and a strided view both ways.
    EXPECT_EQ(there.to(x.device()).to_vector<float>(), host);
    const xdev::Tensor view_there = view.to(there.device());
    EXPECT_EQ(view_there.to_vector<float>(), view_host);
    EXPECT_EQ(view_there.to(x.device()).to_vector<float>(), view_host);
  }
  // Ops whose inputs live elsewhere copy them to the handle device.
  const xdev::Tensor on_cpu = on("/device:CPU:0", host, {6, 8});
  xdev::DeviceScope scope("/device:HND:1");
  const xdev::Tensor sum = xdev::add(on_cpu, x);
  EXPECT_EQ(sum.device(), logical("HND:1"));
  EXPECT_EQ(sum.to_vector<float>()[47], 2 * host[47]);
}

TEST(Abi1_6, DLPackExportOfHandleMemoryIsRefusedAndTheHostCopyWorks) {
  const xdev::Tensor x = on("/device:HND:0", iota(4), {4});
  try {
    xdev::to_dlpack(x);
    ADD_FAILURE() << "exported handle memory";
  } catch (const xdev::Error& e) {
    EXPECT_EQ(e.code(), xdev::ErrorCode::kUnimplemented);
    EXPECT_NE(std::string(e.what()).find("XDEV_CAP_HANDLE_MEMORY"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("HND:0"), std::string::npos) << e.what();
  }
  xdev::ToDLPackOptions to_host;
  to_host.device = xdev::DLPackDevice{1, 0};
  DLManagedTensorVersioned* m = xdev::to_dlpack(x, to_host);
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(static_cast<const float*>(m->dl_tensor.data)[3], 3.0f);
  m->deleter(m);
}

TEST(Abi1_6, SafetensorsRoundTrip) {
  const fs::path file = fs::temp_directory_path() / ("xdev_abi_1_6_" +
                                                     std::to_string(::getpid()) + ".safetensors");
  const xdev::Tensor x = on("/device:HND:0", iota(12, 5), {3, 4});
  xdev::save_file({{"x", x}, {"view", xdev::slice(x, {1, 1}, {2, 2})}}, file.string());
  const xdev::SafetensorsFile back = xdev::load_file(file.string(), "/device:HND:1");
  fs::remove(file);
  EXPECT_EQ(back.tensors.at("x").device().device_type, "HND");
  EXPECT_EQ(back.tensors.at("x").to_vector<float>(), iota(12, 5));
  EXPECT_EQ(back.tensors.at("view").to_vector<float>(), (std::vector<float>{10, 11, 14, 15}));
}

TEST(Abi1_6, AllReduceAcrossHandleDevices) {
  const xdev::MirroredStrategy strategy({"/device:HND:0", "/device:HND:1", "/device:HND:2"});
  std::vector<xdev::Tensor> parts = {on("/device:HND:0", iota(5, 0), {5}),
                                     on("/device:HND:1", iota(5, 10), {5}),
                                     on("/device:HND:2", iota(5, 20), {5})};
  const auto reduced = strategy.all_reduce(xdev::ReduceOp::kSum, parts);
  ASSERT_EQ(reduced.size(), 3u);
  for (const auto& r : reduced) {
    EXPECT_EQ(r.to_vector<float>(), (std::vector<float>{30, 33, 36, 39, 42}));
  }
}

// --- a 1.5 pointer plugin through the 1.6 core --------------------------------

TEST(Abi1_6, APointerPluginOfAbi1_5RunsOpsOnSubAllocationsAndViews) {
  std::vector<xdev::Tensor> keep;
  bool some_offset = false;
  for (int i = 0; i < 10; ++i) {
    keep.push_back(on("/device:TEST:0", iota(64, float(i)), {64}));
    some_offset = some_offset || memory_of(keep.back()).offset > 0;
  }
  EXPECT_TRUE(some_offset);
  xdev::DeviceScope scope("/device:TEST:0");
  const auto sum = xdev::add(keep[3], keep[4]).to_vector<float>();
  EXPECT_EQ(sum[10], 10.0f + 3 + 10.0f + 4);
  // Contiguous slices: byte_offset inside the storage, which the plugin
  // adds to data as it always did.
  const xdev::Tensor a = keep[0];
  const auto halves = xdev::add(xdev::slice(a, {16}, {16}), xdev::slice(a, {40}, {16}));
  EXPECT_EQ(halves.device().device_type, "TEST");
  const auto got = halves.to_vector<float>();
  for (int k = 0; k < 16; ++k) EXPECT_EQ(got[k], float(16 + k + 40 + k));
  // To and from the handle device, staged through the host.
  EXPECT_EQ(halves.to(keep[0].device()).to_vector<float>(), got);
  const xdev::Tensor h = on("/device:HND:0", got, {16});
  EXPECT_EQ(xdev::add(h, halves).device().device_type, "TEST");
}

// A 1.6 pointer plugin that sets the optional *_at slots gets them (its old
// copy slots abort unless the validation layer is on), and its kernel's
// scratch through scratch_allocate_at. Also run with XDEV_VALIDATE=1, whose
// layer translates its guarded blocks back to the plugin's allocations.
TEST(Abi1_6, APointerPluginWithAtSlotsGetsThem) {
  const std::vector<float> host = iota(300, 1);
  const xdev::Tensor x = on("/device:PTR:0", host, {300});
  const xdev::Tensor y = on("/device:PTR:0", iota(300, 7), {300});
  EXPECT_GT(memory_of(y).offset, 0u);
  xdev::DeviceScope scope("/device:PTR:0");
  const xdev::Tensor s = xdev::add(xdev::slice(x, {100}, {50}), xdev::slice(y, {20}, {50}));
  EXPECT_EQ(s.device().device_type, "PTR");
  const auto got = s.to_vector<float>();
  for (int k = 0; k < 50; ++k) ASSERT_EQ(got[k], float(101 + k + 27 + k)) << k;
  EXPECT_EQ(x.to(logical("PTR:1")).to(logical("HND:0")).to_vector<float>(), host);
  EXPECT_EQ(on("/device:HND:0", host, {300}).to(logical("PTR:1")).to_vector<float>(), host);
}

}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  // HND:1 (the plugin's device 1) becomes two logical devices, HND:1 and
  // HND:2, each with its own pool over the same plugin device.
  for (const auto& d : xdev::list_physical_devices("HND")) {
    if (d.id == 1) xdev::set_logical_device_configuration(d, {{4}, {4}});
  }
  return RUN_ALL_TESTS();
}
