// The plugin loader against the fixtures in tests/plugins: the good plugin
// loads; every bad one is skipped with its exact reason (docs/behaviour.md P5).
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/log.hpp"
#include "loader/plugin_loader.hpp"
#include "devices/runtime.hpp"
#include "loader_support.hpp"

namespace fs = std::filesystem;

namespace xdev::detail {
namespace {

const fs::path kGood = XDEV_TEST_PLUGINS_GOOD_DIR;
const fs::path kBad = XDEV_TEST_PLUGINS_BAD_DIR;

TEST(Loader, LoadsTheMinimalPlugin) {
  auto plugin = load_plugin(kGood / "xdev_test_minimal.so");
  ASSERT_TRUE(plugin->loaded()) << plugin->reason;
  EXPECT_EQ(plugin->name, "minimal");
  EXPECT_EQ(plugin->abi_version.major, 1u);
  EXPECT_EQ(plugin->status_text, "2 test devices");
  ASSERT_EQ(plugin->types.size(), 1u);
  EXPECT_EQ(plugin->types[0].type, "TEST");
  EXPECT_EQ(plugin->types[0].platform, "test");
  EXPECT_EQ(plugin->types[0].priority, 50);
  ASSERT_EQ(plugin->devices.size(), 2u);
  EXPECT_EQ(plugin->devices[1].name, "Test Device One");
  EXPECT_EQ(plugin->devices[1].bus_id, "test:01");
  ASSERT_EQ(plugin->devices[0].properties.size(), 1u);
  EXPECT_EQ(plugin->devices[0].properties[0].first, "flavour");
}

struct BadCase {
  const char* file;
  const char* reason;
};

class BadPlugin : public ::testing::TestWithParam<BadCase> {};

TEST_P(BadPlugin, IsSkippedWithItsReason) {
  xdev_test::expect_skipped(kBad / GetParam().file, GetParam().reason);
}

INSTANTIATE_TEST_SUITE_P(
    Fixtures, BadPlugin,
    ::testing::Values(
        BadCase{"xdev_test_no_entry.so",
                "missing entry symbol 'xdev_plugin_query' (export it with XDEV_PLUGIN_EXPORT)"},
        BadCase{"xdev_test_wrong_major.so",
                "built for plugin ABI 2.0, but this core supports ABI 1.x (up to 1.7); major "
                "versions must match"},
        BadCase{"xdev_test_init_fails.so",
                "initialize failed: UNAVAILABLE: simulated init failure"},
        BadCase{"xdev_test_null_slot.so", "required slot 'memory_allocate' is NULL"},
        BadCase{"xdev_test_small_table.so",
                "plugin table struct_size 100 is smaller than the v1.0 table (264 bytes)"},
        BadCase{"xdev_test_bad_type.so",
                "device 1 reports type index 3, but the plugin offers 1 type(s)"},
        BadCase{"xdev_test_query_fails.so",
                "xdev_plugin_query failed: FAILED_PRECONDITION: simulated query failure"},
        BadCase{"xdev_test_not_elf.so", "cannot be loaded: invalid ELF header"},
        // ABI 1.5's load-time checks.
        BadCase{"xdev_test_upper_platform.so",
                "device type 0 (TEST) has platform \"Test\": platform names are lower case"},
        BadCase{"xdev_test_zero_memory.so",
                "device 0 (Test Device Zero) reports memory_total 0; a device must report the "
                "memory it has"},
        BadCase{"xdev_test_cap_no_slot.so", "declares XDEV_CAP_PEER_COPY but 'copy_peer' is NULL"},
        BadCase{"xdev_test_slot_no_cap.so",
                "slot 'copy_peer' is set but XDEV_CAP_PEER_COPY is not declared (an optional "
                "slot whose bit is clear must be NULL)"},
        BadCase{"xdev_test_host_platform.so",
                "device type 0 (CPU) has platform \"host\", which only the 'cpu' plugin may "
                "offer (its CPU device is always CPU:0)"}));

// The warning a skipped plugin leaves names its file and the field at fault.
TEST(Loader, TheSkipWarningNamesTheFileAndTheField) {
  std::vector<std::string> warnings;
  LogSink previous = set_log_sink([&](xdev_log_level_t level, std::string_view message) {
    if (level == XDEV_LOG_WARNING) warnings.emplace_back(message);
  });
  {
    Runtime runtime(xdev_test::only_dirs({kBad}));
  }
  set_log_sink(previous);
  const std::pair<const char*, const char*> expected[] = {
      {"xdev_test_upper_platform.so", "platform \"Test\""},
      {"xdev_test_zero_memory.so", "memory_total 0"},
      {"xdev_test_cap_no_slot.so", "'copy_peer'"},
      {"xdev_test_slot_no_cap.so", "'copy_peer'"},
      {"xdev_test_host_platform.so", "platform \"host\""},
  };
  for (const auto& [file, field] : expected) {
    const std::string path = (fs::canonical(kBad) / file).string();
    bool found = false;
    for (const std::string& w : warnings) {
      found = found || (w.find("skipping plugin " + path + ": ") != std::string::npos &&
                        w.find(field) != std::string::npos);
    }
    EXPECT_TRUE(found) << "no warning naming " << path << " and " << field;
  }
}

TEST(Loader, MissingFileIsSkippedNamingTheProblem) {
  auto plugin = load_plugin(kBad / "no_such_plugin.so");
  EXPECT_FALSE(plugin->loaded());
  EXPECT_NE(plugin->reason.find("cannot be loaded:"), std::string::npos) << plugin->reason;
  EXPECT_NE(plugin->reason.find("No such file"), std::string::npos) << plugin->reason;
}

TEST(Discovery, FindsSoFilesSortedAndOnce) {
  // The same directory twice, and a link to a plugin: each file once.
  fs::path dir = fs::temp_directory_path() / ("xdev_discovery_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  fs::create_symlink(kGood / "xdev_test_minimal.so", dir / "a_link.so");
  std::ofstream(dir / "readme.txt") << "not a plugin";
  auto files = find_plugin_files({kGood, dir, kGood, "/nonexistent/dir"});
  ASSERT_EQ(files.size(), 1u);
  EXPECT_EQ(files[0].filename(), "xdev_test_minimal.so");

  auto bad = find_plugin_files({kBad});
  ASSERT_EQ(bad.size(), 13u);
  EXPECT_TRUE(std::is_sorted(bad.begin(), bad.end()));
  fs::remove_all(dir);
}

TEST(Runtime, KeepsWorkingWithTheGoodPluginAmongBadOnes) {
  RuntimeOptions options = xdev_test::only_dirs({kBad, kGood});
  Runtime runtime(options);
  ASSERT_EQ(runtime.plugins().size(), 14u);
  int loaded = 0;
  for (const auto& p : runtime.plugins()) loaded += p->loaded() ? 1 : 0;
  EXPECT_EQ(loaded, 1);
  ASSERT_EQ(runtime.physical_devices().size(), 2u);
  EXPECT_EQ(runtime.physical_devices()[0].info.name, "/physical_device:TEST:0");
  EXPECT_EQ(runtime.physical_devices()[1].info.name, "/physical_device:TEST:1");
}

TEST(Runtime, APluginFoundTwiceUnderTwoNamesLoadsOnce) {
  fs::path dir = fs::temp_directory_path() / ("xdev_dup_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  fs::copy_file(kGood / "xdev_test_minimal.so", dir / "copy_of_minimal.so",
                fs::copy_options::overwrite_existing);
  RuntimeOptions options = xdev_test::only_dirs({kGood, dir});
  Runtime runtime(options);
  ASSERT_EQ(runtime.plugins().size(), 2u);
  EXPECT_TRUE(runtime.plugins()[0]->loaded());
  EXPECT_FALSE(runtime.plugins()[1]->loaded());
  EXPECT_EQ(runtime.plugins()[1]->reason,
            "a plugin named 'minimal' is already loaded from " +
                (kGood / "xdev_test_minimal.so").string());
  EXPECT_EQ(runtime.physical_devices().size(), 2u);
  fs::remove_all(dir);
}

TEST(Runtime, DevicesHaveDistinctNonZeroIncarnations) {
  RuntimeOptions options = xdev_test::only_dirs({kGood});
  Runtime first(options);
  const auto& devices = first.physical_devices();
  ASSERT_EQ(devices.size(), 2u);
  EXPECT_NE(devices[0].info.incarnation, 0u);
  EXPECT_NE(devices[0].info.incarnation, devices[1].info.incarnation);
  Runtime second(options);  // another runtime in the same process: new ids
  EXPECT_NE(second.physical_devices()[0].info.incarnation, devices[0].info.incarnation);
}

TEST(Runtime, ReadsXdevPluginPath) {
  ::setenv("XDEV_PLUGIN_PATH", (std::string(":") + kGood.string() + "::").c_str(), 1);
  RuntimeOptions options;
  options.use_default_dirs = false;
  Runtime runtime(options);
  ::unsetenv("XDEV_PLUGIN_PATH");
  ASSERT_EQ(runtime.search_path().size(), 1u);
  EXPECT_EQ(runtime.search_path()[0], kGood);
  EXPECT_EQ(runtime.physical_devices().size(), 2u);
}

TEST(SplitPathList, DropsEmptyEntries) {
  auto dirs = split_path_list("a::b:");
  ASSERT_EQ(dirs.size(), 2u);
  EXPECT_EQ(dirs[0], "a");
  EXPECT_EQ(dirs[1], "b");
  EXPECT_TRUE(split_path_list("").empty());
}

}  // namespace
}  // namespace xdev::detail
