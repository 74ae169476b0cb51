// Plugin ABI 1.5 (docs/ABI-CHANGELOG.md) against the fixtures of
// tests/plugins/abi15 (test_plugin.c says what each declares):
//  - a 1.4 plugin keeps loading, and the core reads nothing past its table;
//  - a third-party plugin's CPU devices never take the host's CPU:0;
//  - max_allocation_bytes: the pool never asks a device for more at once;
//  - memory_kind picks the pool's default (reserve up front or grow);
//  - device_kernels: a device's own kernels, preferred over its type's;
//  - a crash in a plugin call during the probe names the call, an error
//    status names the slot, the plugin file and the device.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include <xdev/error.hpp>

#include "devices/runtime.hpp"
#include "distribute/device_collectives.hpp"
#include "loader/plugin_loader.hpp"
#include "loader_support.hpp"

namespace fs = std::filesystem;

namespace xdev::detail {
namespace {

const fs::path kDir = XDEV_TEST_PLUGINS_ABI15_DIR;
const fs::path kCpuDir = XDEV_TEST_CPU_PLUGIN_DIR;
constexpr uint64_t kMiB = uint64_t{1} << 20;

// The physical device `ordinal` of the plugin named `plugin`.
const PhysicalDeviceRecord& device_of(const Runtime& runtime, const std::string& plugin,
                                      uint32_t ordinal) {
  for (const auto& d : runtime.physical_devices()) {
    if (d.plugin->name == plugin && d.ordinal == ordinal) return d;
  }
  throw std::runtime_error("no device " + std::to_string(ordinal) + " of plugin " + plugin);
}

const LoadedPlugin& plugin_named(const Runtime& runtime, const std::string& name) {
  for (const auto& p : runtime.plugins()) {
    if (p->loaded() && p->name == name) return *p;
  }
  throw std::runtime_error("plugin " + name + " not loaded");
}

// The logical device over physical device `ordinal` of plugin `plugin`.
LogicalDeviceState& logical_of(Runtime& runtime, const std::string& plugin, uint32_t ordinal) {
  for (const auto& d : runtime.logical_devices()) {
    if (d->plugin()->name == plugin && d->physical().ordinal == ordinal) return *d;
  }
  throw std::runtime_error("no logical device over device " + std::to_string(ordinal) +
                           " of plugin " + plugin);
}

TEST(Abi1_5, APluginOfAbi1_4LoadsAndNothingPastItsTableIsRead) {
  auto plugin = load_plugin(kDir / "xdev_test_abi_1_4.so");
  ASSERT_TRUE(plugin->loaded()) << plugin->reason;
  EXPECT_EQ(xdev_test::version_text(plugin->abi_version), "1.4");
  ASSERT_EQ(plugin->devices.size(), 2u);
  // Undeclared: no allocation limit, memory kind derived.
  EXPECT_EQ(plugin->devices[0].max_allocation_bytes, 0u);
  EXPECT_EQ(plugin->devices[0].memory_kind, XDEV_MEMORY_KIND_UNDECLARED);
  // Its device_kernels slot lies beyond its struct_size and aborts when
  // called: reading the kernels (and opening the devices) must not call it.
  Runtime runtime(xdev_test::only_dirs({kDir}));
  const LoadedPlugin& old = plugin_named(runtime, "abi14");
  EXPECT_EQ(runtime.device_kernel_table(&old, 0).find(OpId::kAdd, DType::kFloat32,
                                                      DType::kFloat32),
            nullptr);
  EXPECT_FALSE(logical_of(runtime, "abi14", 1).kernels().has_op(OpId::kAdd));
  // Type TEST, undeclared: reserves up front, as before 1.5.
  EXPECT_FALSE(memory_growth(DeviceConfig{}, device_of(runtime, "abi14", 0)));
}

// The probe (X3) reads each device's kernels as the runtime will, and a
// crash report names the call the plugin crashed in.
TEST(Abi1_5, APluginThatCrashesInDeviceKernelsIsSkippedNamingTheSlot) {
  ::setenv("XDEV_PROBE_PLUGINS", "always", 1);
  auto plugin = load_plugin(kDir / "xdev_test_crash_device_kernels.so");
  ::unsetenv("XDEV_PROBE_PLUGINS");
  EXPECT_FALSE(plugin->loaded());
  EXPECT_EQ(plugin->reason, "crashed during load or initialize, in 'device_kernels': SIGABRT");
}

// An error status a plugin call returns reaches the user naming the slot,
// the plugin file and the device, with the plugin's message.
TEST(Abi1_5, AnErrorFromAPluginCallNamesTheSlotTheFileAndTheDevice) {
  Runtime runtime(xdev_test::only_dirs({kDir}));
  LogicalDeviceState& device = logical_of(runtime, "syncfails", 0);
  try {
    device.synchronize();
    ADD_FAILURE() << "stream_synchronize failed, synchronize() did not throw";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInternal);
    const fs::path file = fs::canonical(kDir) / "xdev_test_sync_fails.so";
    EXPECT_EQ(std::string(e.what()), "stream_synchronize of plugin " + file.string() +
                                         " on device " + device.name() +
                                         ": simulated synchronize failure");
  }
}

TEST(Abi1_5, AThirdPartyCpuPluginNeverTakesTheHostsCpu0) {
  // The third-party plugin's directory first: it loads before the cpu plugin.
  Runtime runtime(xdev_test::only_dirs({kDir, kCpuDir}));
  int cpus = 0;
  for (const auto& d : runtime.physical_devices()) cpus += d.info.device_type == "CPU" ? 1 : 0;
  ASSERT_EQ(cpus, 3);
  const PhysicalDeviceRecord& host = runtime.physical_device("/physical_device:CPU:0");
  EXPECT_EQ(host.info.plugin, "cpu");
  EXPECT_EQ(host.info.platform, "host");
  // Equal priorities: the host is also the first CPU in placement order.
  std::vector<std::string> order;
  for (const auto& d : runtime.physical_devices()) {
    if (d.info.device_type == "CPU") order.push_back(d.info.name);
  }
  EXPECT_EQ(order, (std::vector<std::string>{"/physical_device:CPU:0", "/physical_device:CPU:1",
                                             "/physical_device:CPU:2"}));
  EXPECT_EQ(device_of(runtime, "thirdcpu", 0).info.name, "/physical_device:CPU:1");
  EXPECT_EQ(device_of(runtime, "thirdcpu", 1).info.name, "/physical_device:CPU:2");
  // Without the cpu plugin the third party's devices are CPU:0 and CPU:1.
  Runtime alone(xdev_test::only_dirs({kDir}));
  EXPECT_EQ(device_of(alone, "thirdcpu", 0).info.name, "/physical_device:CPU:0");
}

TEST(Abi1_5, APluginThatOffersTheHostPlatformIsSkipped) {
  xdev_test::expect_skipped(
      fs::path(XDEV_TEST_PLUGINS_BAD_DIR) / "xdev_test_host_platform.so",
      "device type 0 (CPU) has platform \"host\", which only the 'cpu' plugin may offer (its "
      "CPU device is always CPU:0)");
}

TEST(Abi1_5, TheMemoryKindPicksThePoolDefaultNotTheTypeName) {
  ::unsetenv("XDEV_FORCE_GPU_ALLOW_GROWTH");
  ::unsetenv("TF_FORCE_GPU_ALLOW_GROWTH");
  Runtime runtime(xdev_test::only_dirs({kDir, kCpuDir}));
  const DeviceConfig config;
  // Declared: host memory grows, discrete memory is reserved up front,
  // whatever the type is called (thirdcpu's device 1 is a "CPU").
  EXPECT_TRUE(memory_growth(config, device_of(runtime, "limits", 1)));
  EXPECT_FALSE(memory_growth(config, device_of(runtime, "limits", 0)));
  EXPECT_FALSE(memory_growth(config, device_of(runtime, "thirdcpu", 1)));
  // Undeclared: from the type name, as before 1.5.
  EXPECT_TRUE(memory_growth(config, device_of(runtime, "thirdcpu", 0)));
  EXPECT_TRUE(memory_growth(config, device_of(runtime, "cpu", 0)));
  EXPECT_FALSE(memory_growth(config, device_of(runtime, "abi14", 0)));
  // The growth variable applies to every device of discrete memory; an
  // undeclared type that is not GPU stays as it was.
  ::setenv("XDEV_FORCE_GPU_ALLOW_GROWTH", "true", 1);
  EXPECT_TRUE(memory_growth(config, device_of(runtime, "limits", 0)));
  EXPECT_FALSE(memory_growth(config, device_of(runtime, "abi14", 0)));
  ::unsetenv("XDEV_FORCE_GPU_ALLOW_GROWTH");
  // What the user sets wins.
  DeviceConfig set;
  set.memory_growth[device_of(runtime, "limits", 1).info.name] = false;
  EXPECT_FALSE(memory_growth(set, device_of(runtime, "limits", 1)));
}

// Many 3 MiB tensors on a device whose memory_allocate refuses more than
// 4 MiB at once (INVALID_ARGUMENT, which the pool does not retry): the pool
// reserves regions of at most 4 MiB; one tensor above 4 MiB is an
// out-of-memory error naming the limit.
void fill_a_device_with_a_small_allocation_limit(bool growth) {
  Runtime runtime(xdev_test::only_dirs({kDir}));
  const std::string name = device_of(runtime, "limits", 0).info.name;
  runtime.configure("Memory growth", [&](DeviceConfig& c) { c.memory_growth[name] = growth; });
  LogicalDeviceState& device = logical_of(runtime, "limits", 0);
  // 4 MiB (less the validation layer's guards under XDEV_VALIDATE=1).
  const uint64_t max = device.physical().max_allocation_bytes;
  ASSERT_GT(max, 3 * kMiB);
  ASSERT_LE(max, 4 * kMiB);
  ASSERT_EQ(device.pool().options().max_region_bytes, max);
  std::vector<void*> blocks;
  for (int i = 0; i < 12; ++i) {
    void* p = nullptr;
    ASSERT_NO_THROW(p = device.allocate(3 * kMiB)) << "allocation " << i;
    blocks.push_back(p);
  }
  EXPECT_GE(device.pool().stats().bytes_reserved, 36 * kMiB);
  try {
    device.allocate(5 * kMiB);
    ADD_FAILURE() << "5 MiB at once on a device with a 4 MiB limit";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kOutOfMemory) << e.what();
    EXPECT_NE(std::string(e.what()).find("largest single allocation the device allows (" +
                                         std::to_string(max) + " bytes ("),
              std::string::npos)
        << e.what();
  }
  for (void* p : blocks) device.deallocate(p);
}

TEST(Abi1_5, ThePoolNeverAsksForMoreThanTheLargestSingleAllocationReservingUpFront) {
  fill_a_device_with_a_small_allocation_limit(false);
}

TEST(Abi1_5, ThePoolNeverAsksForMoreThanTheLargestSingleAllocationGrowing) {
  fill_a_device_with_a_small_allocation_limit(true);
}

TEST(Abi1_5, ADevicesOwnKernelsArePreferredOverItsTypes) {
  // Kernels are told apart by their context (under XDEV_VALIDATE=1 every
  // function is the layer's, every context the layer's record of one kernel).
  Runtime runtime(xdev_test::only_dirs({kDir}));
  const LoadedPlugin& limits = plugin_named(runtime, "limits");
  // The type's Add: float32 only.
  const KernelEntry* type_add =
      runtime.kernel_table(&limits, 0).find(OpId::kAdd, DType::kFloat32, DType::kFloat32);
  ASSERT_NE(type_add, nullptr);
  EXPECT_EQ(runtime.kernel_table(&limits, 0).find(OpId::kAdd, DType::kFloat64, DType::kFloat64),
            nullptr);
  // Device 0 has only the type's.
  const KernelTable& zero = runtime.device_kernel_table(&limits, 0);
  ASSERT_NE(zero.find(OpId::kAdd, DType::kFloat32, DType::kFloat32), nullptr);
  EXPECT_EQ(zero.find(OpId::kAdd, DType::kFloat32, DType::kFloat32)->context, type_add->context);
  EXPECT_EQ(zero.find(OpId::kAdd, DType::kFloat64, DType::kFloat64), nullptr);
  // Device 1 registered its own Add (float32 and float64): it wins for
  // float32 too.
  const KernelTable& one = runtime.device_kernel_table(&limits, 1);
  const KernelEntry* own64 = one.find(OpId::kAdd, DType::kFloat64, DType::kFloat64);
  ASSERT_NE(own64, nullptr);
  EXPECT_NE(own64->context, type_add->context);
  const KernelEntry* own32 = one.find(OpId::kAdd, DType::kFloat32, DType::kFloat32);
  ASSERT_NE(own32, nullptr);
  EXPECT_EQ(own32->context, own64->context);
  // The logical devices dispatch with their device's table.
  EXPECT_NE(logical_of(runtime, "limits", 1).kernels().find(OpId::kAdd, DType::kFloat64,
                                                            DType::kFloat64),
            nullptr);
  EXPECT_EQ(logical_of(runtime, "limits", 0).kernels().find(OpId::kAdd, DType::kFloat64,
                                                            DType::kFloat64),
            nullptr);
}

// ABI 1.7 (device collectives): a 1.5 plugin keeps loading, the core reads
// none of the collective slots past its table (two of them abort), and its
// devices take the host path between processes, saying why.
TEST(Abi1_7, APluginOfAbi1_5LoadsAndTakesTheHostPathBetweenProcesses) {
  auto plugin = load_plugin(kDir / "xdev_test_abi_1_5.so");
  ASSERT_TRUE(plugin->loaded()) << plugin->reason;
  EXPECT_EQ(xdev_test::version_text(plugin->abi_version), "1.5");
  Runtime runtime(xdev_test::only_dirs({kDir}));
  LogicalDeviceState& d0 = logical_of(runtime, "abi15", 0);
  LogicalDeviceState& d1 = logical_of(runtime, "abi15", 1);
  EXPECT_EQ(device_collectives_unavailable({&d0, &d1}),
            d0.name() + " is a device of plugin abi15 (ABI 1.5), which does not declare "
                        "XDEV_CAP_COLLECTIVES (ABI 1.7)");
}

}  // namespace
}  // namespace xdev::detail
