// Version negotiation (docs/behaviour.md P2, X7): plugins compiled against the frozen
// v1.0 header keep loading into the current core; a newer minor loads; an
// unknown extension anywhere is skipped; another major is refused naming both
// versions.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "loader/plugin_loader.hpp"
#include "devices/runtime.hpp"
#include "loader_support.hpp"

namespace fs = std::filesystem;

namespace xdev::detail {
namespace {

const fs::path kDir = XDEV_TEST_ABI_V1_0_DIR;

TEST(AbiV1_0, APluginBuiltAgainstTheFrozenHeaderLoads) {
  auto plugin = load_plugin(kDir / "xdev_abi_v1_0.so");
  ASSERT_TRUE(plugin->loaded()) << plugin->reason;
  EXPECT_EQ(plugin->name, "abi-v1.0");
  EXPECT_EQ(xdev_test::version_text(plugin->abi_version), "1.0");
  ASSERT_EQ(plugin->types.size(), 1u);
  EXPECT_EQ(plugin->types[0].type, "V1_0");
  ASSERT_EQ(plugin->devices.size(), 1u);
  EXPECT_EQ(plugin->devices[0].name, "ABI 1.0 Device");
  EXPECT_EQ(plugin->devices[0].memory_total, 256u << 20);
}

TEST(AbiV1_0, UnknownExtensionsAreSkipped) {
  auto plugin = load_plugin(kDir / "xdev_abi_unknown_extensions.so");
  ASSERT_TRUE(plugin->loaded()) << plugin->reason;
  EXPECT_EQ(plugin->types.size(), 1u);
}

TEST(AbiV1_0, ANewerMinorLoads) {
  auto plugin = load_plugin(kDir / "xdev_abi_future_minor.so");
  ASSERT_TRUE(plugin->loaded()) << plugin->reason;
  EXPECT_EQ(xdev_test::version_text(plugin->abi_version), "1.99");
}

TEST(AbiV1_0, AnotherMajorIsRefusedNamingBothVersions) {
  auto plugin = load_plugin(kDir / "xdev_abi_major_0.so");
  EXPECT_FALSE(plugin->loaded());
  EXPECT_EQ(plugin->reason,
            "built for plugin ABI 0.9, but this core supports ABI 1.x (up to " +
                std::to_string(core_abi_version().major) + "." +
                std::to_string(core_abi_version().minor) + "); major versions must match");
}

TEST(AbiV1_0, AllLoadSideBySideWithTheirKernels) {
  RuntimeOptions options = xdev_test::only_dirs({kDir});
  Runtime runtime(options);
  int loaded = 0;
  for (const auto& p : runtime.plugins()) {
    if (!p->loaded()) continue;
    ++loaded;
    // The kernels registered through the frozen struct (and with unknown
    // extensions on them) are in the kernel table.
    const KernelTable& kernels = runtime.kernel_table(p.get(), 0);
    EXPECT_TRUE(kernels.has_op(OpId::kAdd)) << p->name;
    EXPECT_TRUE(kernels.has_op(OpId::kNeg)) << p->name;
    EXPECT_NE(kernels.find(OpId::kAdd, DType::kFloat32, DType::kFloat32), nullptr) << p->name;
  }
  EXPECT_EQ(loaded, 3);  // v1.0, unknown extensions, future minor; not major 0
  // Three plugins of type V1_0, one device each, numbered in one sequence.
  ASSERT_EQ(runtime.physical_devices().size(), 3u);
  EXPECT_EQ(runtime.physical_devices()[2].info.name, "/physical_device:V1_0:2");
}

}  // namespace
}  // namespace xdev::detail
