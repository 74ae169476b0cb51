// XDEV_PLUGINS (core/loader/plugin_filter.hpp): only the plugins named are loaded;
// every other file found is listed as skipped with the reason and never
// mapped, the in-tree cpu and cuda plugins included.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "loader/plugin_filter.hpp"
#include "devices/runtime.hpp"
#include "loader_support.hpp"
#include "plugin_harness.hpp"

namespace fs = std::filesystem;

namespace xdev::detail {
namespace {

using ::testing::HasSubstr;

const fs::path kGood = XDEV_TEST_PLUGINS_GOOD_DIR;

// Sets an environment variable for one scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    had_ = std::getenv(name) != nullptr;
    ::setenv(name, value, 1);
  }
  ~ScopedEnv() {
    if (had_) {
      ::setenv(name_, old_.c_str(), 1);
    } else {
      ::unsetenv(name_);
    }
  }

 private:
  const char* name_;
  std::string old_;
  bool had_ = false;
};

using xdev_test::mapped_files;

TEST(PluginFilter, UnsetOrEmptyLoadsEverything) {
  EXPECT_FALSE(PluginFilter::parse("").has_value());
  EXPECT_FALSE(PluginFilter::parse(" , ,").has_value());
}

TEST(PluginFilter, NamesSelectTheConventionalFileNames) {
  const auto filter = PluginFilter::parse(" cpu , sim");
  ASSERT_TRUE(filter.has_value());
  EXPECT_TRUE(filter->selects("/x/xdev_plugin_cpu.so"));
  EXPECT_TRUE(filter->selects("/y/xdev_test_sim.so"));
  EXPECT_TRUE(filter->selects("/y/sim.so"));
  EXPECT_FALSE(filter->selects("/x/xdev_plugin_cuda.so"));
  EXPECT_FALSE(filter->selects("/x/xdev_plugin_cpu2.so"));
  EXPECT_FALSE(filter->selects("/x/xdev_plugin_my_cpu.so"));
  EXPECT_EQ(filter->expected_name("/x/xdev_plugin_cpu.so"), "cpu");
  EXPECT_EQ(filter->skip_reason(), "not named in XDEV_PLUGINS (cpu,sim)");
}

TEST(PluginFilter, PathsSelectThatFile) {
  const fs::path file = kGood / "xdev_test_minimal.so";
  const auto filter = PluginFilter::parse(file.string());
  ASSERT_TRUE(filter.has_value());
  EXPECT_TRUE(filter->selects(file));
  EXPECT_EQ(filter->expected_name(file), "");  // any plugin name
  ASSERT_EQ(filter->paths().size(), 1u);
  EXPECT_EQ(filter->paths()[0], fs::canonical(file));
  EXPECT_FALSE(filter->selects(kGood / "other.so"));
}

// The in-tree plugins (the cpu plugin, and the cuda plugin where it is
// built) sit in the build tree's plugin directories, the default ones of a
// libxdev.so running from the build tree; naming only the test plugin keeps
// them out of the process entirely.
TEST(PluginFilter, PluginsNotNamedAreListedButNeverLoaded) {
  ScopedEnv only("XDEV_PLUGINS", "minimal");
  ScopedEnv path("XDEV_PLUGIN_PATH", kGood.c_str());
  RuntimeOptions options;
  options.plugin_dirs = split_path_list(XDEV_TEST_BUILD_PLUGIN_PATH);
  options.use_default_dirs = false;  // this binary links the core statically
  Runtime runtime(options);
  bool cpu_listed = false;
  int loaded = 0;
  for (const auto& p : runtime.plugins()) {
    if (p->loaded()) {
      ++loaded;
      EXPECT_EQ(p->name, "minimal");
      continue;
    }
    EXPECT_EQ(p->reason, "not named in XDEV_PLUGINS (minimal)") << p->path;
    if (p->path.filename() == "xdev_plugin_cpu.so") cpu_listed = true;
  }
  EXPECT_EQ(loaded, 1);
  EXPECT_TRUE(cpu_listed) << "the in-tree cpu plugin should be found and skipped";
  EXPECT_EQ(runtime.physical_devices().size(), 2u);  // the minimal plugin's
  const std::string maps = mapped_files();
  EXPECT_THAT(maps, ::testing::Not(HasSubstr("xdev_plugin_cpu.so")));
  EXPECT_THAT(maps, ::testing::Not(HasSubstr("xdev_plugin_cuda.so")));
  EXPECT_THAT(maps, ::testing::Not(HasSubstr("libcudart")));
  EXPECT_THAT(maps, ::testing::Not(HasSubstr("libopenblas")));
}

TEST(PluginFilter, AFileMatchingANameMustHoldThatPlugin) {
  const fs::path dir = fs::temp_directory_path() / ("xdev_filter_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  fs::copy_file(kGood / "xdev_test_minimal.so", dir / "xdev_plugin_other.so",
                fs::copy_options::overwrite_existing);
  ScopedEnv only("XDEV_PLUGINS", "other");
  ScopedEnv path("XDEV_PLUGIN_PATH", dir.c_str());
  RuntimeOptions options;
  options.use_default_dirs = false;
  Runtime runtime(options);
  ASSERT_EQ(runtime.plugins().size(), 1u);
  EXPECT_FALSE(runtime.plugins()[0]->loaded());
  EXPECT_EQ(runtime.plugins()[0]->reason,
            "the file name matches 'other' in XDEV_PLUGINS, but the plugin is named 'minimal'");
  EXPECT_TRUE(runtime.physical_devices().empty());
  fs::remove_all(dir);
}

TEST(PluginFilter, APathOutsideTheSearchPathIsLoaded) {
  ScopedEnv only("XDEV_PLUGINS", (kGood / "xdev_test_minimal.so").c_str());
  ScopedEnv no_path("XDEV_PLUGIN_PATH", "");
  RuntimeOptions options;
  options.use_default_dirs = false;
  Runtime runtime(options);
  ASSERT_EQ(runtime.plugins().size(), 1u);
  EXPECT_TRUE(runtime.plugins()[0]->loaded()) << runtime.plugins()[0]->reason;
  EXPECT_EQ(runtime.physical_devices().size(), 2u);
}

TEST(PluginFilter, IgnoredWhenTheRuntimeIgnoresTheEnvironment) {
  ScopedEnv only("XDEV_PLUGINS", "nothing_by_this_name");
  RuntimeOptions options = xdev_test::only_dirs({kGood});
  Runtime runtime(options);
  EXPECT_EQ(runtime.physical_devices().size(), 2u);
}

}  // namespace
}  // namespace xdev::detail
