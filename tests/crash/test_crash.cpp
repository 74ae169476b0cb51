// Crash-proof loading (X3): plugins that segfault, abort, throw, exit or hang
// while they load, or lie in their answers, are skipped with their reason and
// the process goes on; the probe's cache and its switches (plugin_probe.hpp).
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "loader/plugin_loader.hpp"
#include "loader/plugin_probe.hpp"
#include "devices/runtime.hpp"
#include "loader_support.hpp"
#include "test_dir.hpp"

namespace fs = std::filesystem;

namespace xdev::detail {
namespace {

const fs::path kCrash = XDEV_TEST_CRASH_FIXTURES_DIR;
const fs::path kGood = XDEV_TEST_PLUGINS_GOOD_DIR;
const fs::path kCpu = XDEV_TEST_CPU_PLUGIN_DIR;

// Every test gets its own cache directory and the default probe settings.
class ProbeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = xdev_test::fresh_test_dir("xdev_crash");
    ::setenv("XDG_CACHE_HOME", (dir_ / "cache").c_str(), 1);
    ::unsetenv("XDEV_PROBE_PLUGINS");
    ::unsetenv("XDEV_PROBE_TIMEOUT_MS");
    // In sanitizer builds the probe helper is instrumented too: let a
    // fixture's segfault be a segfault (AddressSanitizer would report it and
    // exit with status 1, ThreadSanitizer with 66). No effect in other builds.
    for (const char* variable : {"ASAN_OPTIONS", "TSAN_OPTIONS"}) {
      std::string options = std::getenv(variable) != nullptr ? std::getenv(variable) : "";
      if (options.find("handle_segv=0") == std::string::npos) {
        options += std::string(options.empty() ? "" : ":") + "handle_segv=0:handle_sigbus=0";
        ::setenv(variable, options.c_str(), 1);
      }
    }
    forget_probed_plugins();
  }
  void TearDown() override {
    ::unsetenv("XDG_CACHE_HOME");
    ::unsetenv("XDEV_PROBE_PLUGINS");
    ::unsetenv("XDEV_PROBE_TIMEOUT_MS");
    fs::remove_all(dir_);
  }
  fs::path cache_file() const { return dir_ / "cache" / "xdev" / "plugin-probe.cache"; }
  // A private copy of the minimal plugin (its own file identity).
  fs::path copy_of_minimal(const std::string& name = "copy.so") {
    fs::path to = dir_ / name;
    fs::copy_file(kGood / "xdev_test_minimal.so", to, fs::copy_options::overwrite_existing);
    return to;
  }
  fs::path dir_;
};

struct CrashCase {
  const char* file;
  const char* reason;  // "{path}" stands for the fixture's path
};

// What an escaping exception reads like (the guard of every plugin call,
// core/common/plugin_call.hpp, names the slot and the file).
const char* const kThrowInitReason =
    "initialize failed: INTERNAL: initialize of plugin {path} let a C++ exception escape "
    "(std::runtime_error: crash fixture: initialize throws); no exception may cross the "
    "plugin ABI";

std::string expected_reason(const char* reason, const fs::path& file) {
  std::string out = reason;
  if (size_t at = out.find("{path}"); at != std::string::npos) out.replace(at, 6, file.string());
  return out;
}

class Misbehaving : public ProbeTest, public ::testing::WithParamInterface<CrashCase> {};

TEST_P(Misbehaving, IsSkippedWithItsReason) {
  const fs::path file = kCrash / GetParam().file;
  xdev_test::expect_skipped(file, expected_reason(GetParam().reason, file));
  // Still skipped the second time (failures are not cached).
  auto again = load_plugin(file);
  EXPECT_EQ(again->reason, expected_reason(GetParam().reason, file));
}

INSTANTIATE_TEST_SUITE_P(
    Fixtures, Misbehaving,
    ::testing::Values(
        CrashCase{"xdev_crash_segv_init.so",
                  "crashed during load or initialize, in 'initialize': SIGSEGV"},
        CrashCase{"xdev_crash_abort_init.so",
                  "crashed during load or initialize, in 'initialize': SIGABRT"},
        CrashCase{"xdev_crash_throw_init.so", kThrowInitReason},
        CrashCase{"xdev_crash_segv_query.so",
                  "crashed during load or initialize, in 'xdev_plugin_query': SIGSEGV"},
        CrashCase{"xdev_crash_segv_load.so",
                  "crashed during load or initialize, in 'dlopen': SIGSEGV"},
        CrashCase{"xdev_crash_exit_init.so",
                  "exited with status 3 during load or initialize, in 'initialize'"},
        CrashCase{"xdev_crash_lie_type_size.so",
                  "device type 0 has struct_size 16, smaller than the v1.0 size 36"},
        CrashCase{"xdev_crash_lie_count.so",
                  "device_count reported 4000000000 devices; a plugin may report at most 65536"},
        CrashCase{"xdev_crash_dup_type.so", "device type GPU is offered twice"}),
    [](const auto& info) {
      std::string name = info.param.file;
      name = name.substr(11, name.size() - 11 - 3);  // xdev_crash_X.so -> X
      return name;
    });

TEST_F(ProbeTest, AHangingPluginIsKilledAtTheTimeout) {
  ::setenv("XDEV_PROBE_TIMEOUT_MS", "400", 1);
  const auto start = std::chrono::steady_clock::now();
  auto plugin = load_plugin(kCrash / "xdev_crash_hang_init.so");
  const auto took = std::chrono::steady_clock::now() - start;
  EXPECT_FALSE(plugin->loaded());
  EXPECT_EQ(plugin->reason, "timed out during load or initialize, in 'initialize' (killed after 400 ms)");
  EXPECT_LT(took, std::chrono::seconds(10));
}

// A timeout too large for the clock (10^13 ms) made the deadline
// wrap into the past, and every plugin "timed out". It is bounded now.
TEST_F(ProbeTest, AHugeTimeoutDoesNotMakeEveryPluginTimeOut) {
  ::setenv("XDEV_PROBE_TIMEOUT_MS", "10000000000000", 1);
  ::setenv("XDEV_PROBE_PLUGINS", "always", 1);
  auto plugin = load_plugin(copy_of_minimal());
  EXPECT_TRUE(plugin->loaded()) << plugin->reason;
}

TEST_F(ProbeTest, TheRuntimeKeepsWorkingAmongMisbehavingPlugins) {
  ::setenv("XDEV_PROBE_TIMEOUT_MS", "400", 1);
  RuntimeOptions options = xdev_test::only_dirs({kCrash, kGood});
  Runtime runtime(options);
  ASSERT_EQ(runtime.plugins().size(), 12u);
  std::vector<std::string> loaded;
  for (const auto& p : runtime.plugins()) {
    if (p->loaded()) {
      loaded.push_back(p->name);
    } else {
      EXPECT_FALSE(p->reason.empty()) << p->path;
    }
  }
  // The one that only crashes when a copy runs loads (no probe can see that),
  // and so does the good one.
  EXPECT_EQ(loaded, (std::vector<std::string>{"crash-segv-copy", "minimal"}));
  ASSERT_EQ(runtime.physical_devices().size(), 3u);
  EXPECT_EQ(runtime.physical_devices()[0].info.name, "/physical_device:TEST:0");
  EXPECT_EQ(runtime.physical_devices()[2].info.name, "/physical_device:EXAMPLE:0");
}

TEST_F(ProbeTest, WithoutProbingAThrowingPluginIsStillCaughtInProcess) {
  ::setenv("XDEV_PROBE_PLUGINS", "0", 1);
  const uint64_t before = probe_processes_started();
  auto plugin = load_plugin(kCrash / "xdev_crash_throw_init.so");
  EXPECT_EQ(plugin->reason,
            expected_reason(kThrowInitReason, kCrash / "xdev_crash_throw_init.so"));
  auto good = load_plugin(copy_of_minimal());
  EXPECT_TRUE(good->loaded()) << good->reason;
  EXPECT_EQ(probe_processes_started(), before);
  EXPECT_FALSE(fs::exists(cache_file()));
}

TEST_F(ProbeTest, ASuccessfulProbeIsCachedByFileIdentity) {
  const fs::path file = copy_of_minimal();
  const uint64_t start = probe_processes_started();
  auto first = load_plugin(file);
  ASSERT_TRUE(first->loaded()) << first->reason;
  EXPECT_EQ(probe_processes_started(), start + 1);
  ASSERT_TRUE(fs::exists(cache_file()));
  std::ifstream in(cache_file());
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_NE(text.str().find(file.string()), std::string::npos) << text.str();

  // Known in this process, then known from the cache file.
  auto second = load_plugin(file);
  EXPECT_TRUE(second->loaded());
  forget_probed_plugins();
  auto third = load_plugin(file);
  EXPECT_TRUE(third->loaded());
  EXPECT_EQ(probe_processes_started(), start + 1);

  // A new modification time is a new file: probed again.
  fs::last_write_time(file, fs::last_write_time(file) + std::chrono::seconds(5));
  auto touched = load_plugin(file);
  EXPECT_TRUE(touched->loaded());
  EXPECT_EQ(probe_processes_started(), start + 2);

  // Another file at the same path (new inode and size): probed again. (This
  // process keeps the first library: dlopen of a loaded path returns it.)
  fs::remove(file);
  fs::copy_file(kCrash / "xdev_crash_segv_init.so", file);
  auto replaced = load_plugin(file);
  EXPECT_FALSE(replaced->loaded());
  EXPECT_EQ(replaced->reason, "crashed during load or initialize, in 'initialize': SIGSEGV");
  EXPECT_EQ(probe_processes_started(), start + 3);
}

TEST_F(ProbeTest, AlwaysProbesAndLeavesTheCacheAlone) {
  ::setenv("XDEV_PROBE_PLUGINS", "always", 1);
  const fs::path file = copy_of_minimal();
  const uint64_t start = probe_processes_started();
  for (int i = 0; i < 3; ++i) {
    auto plugin = load_plugin(file);
    EXPECT_TRUE(plugin->loaded()) << plugin->reason;
  }
  EXPECT_EQ(probe_processes_started(), start + 3);
  EXPECT_FALSE(fs::exists(cache_file()));
}

TEST_F(ProbeTest, NoCacheWithoutHomeStillProbes) {
  const char* home = std::getenv("HOME");
  const std::string saved = home != nullptr ? home : "";
  ::unsetenv("HOME");
  ::unsetenv("XDG_CACHE_HOME");
  const fs::path file = copy_of_minimal();
  const uint64_t start = probe_processes_started();
  auto plugin = load_plugin(file);
  auto crash = load_plugin(kCrash / "xdev_crash_segv_init.so");
  if (home != nullptr) ::setenv("HOME", saved.c_str(), 1);
  EXPECT_TRUE(plugin->loaded()) << plugin->reason;
  EXPECT_EQ(crash->reason, "crashed during load or initialize, in 'initialize': SIGSEGV");
  EXPECT_EQ(probe_processes_started(), start + 2);
  EXPECT_FALSE(fs::exists(cache_file()));
}

TEST_F(ProbeTest, ABrokenCacheNeverStopsLoading) {
  const fs::path file = copy_of_minimal();
  // A cache directory that cannot be created.
  std::ofstream(dir_ / "a_file") << "not a directory";
  ::setenv("XDG_CACHE_HOME", (dir_ / "a_file").c_str(), 1);
  auto plugin = load_plugin(file);
  EXPECT_TRUE(plugin->loaded()) << plugin->reason;

  // A corrupt cache file is ignored, then replaced.
  ::setenv("XDG_CACHE_HOME", (dir_ / "cache").c_str(), 1);
  fs::create_directories(cache_file().parent_path());
  std::ofstream(cache_file()) << "garbage\n\x01\x02\n" << file.string() << "\n";
  forget_probed_plugins();
  const uint64_t start = probe_processes_started();
  auto again = load_plugin(file);
  EXPECT_TRUE(again->loaded()) << again->reason;
  EXPECT_EQ(probe_processes_started(), start + 1);
  std::ifstream in(cache_file());
  std::string magic;
  std::getline(in, magic);
  EXPECT_EQ(magic.rfind("xdev-plugin-probe-cache 1 ", 0), 0u) << magic;
}

TEST_F(ProbeTest, ProbingIsSafeInABusyMultiThreadedHost) {
  // Other threads allocate, take locks and log while plugins are probed: the
  // probe child is spawned and exec'd, so no lock they hold can leak into it.
  ::setenv("XDEV_PROBE_PLUGINS", "always", 1);
  std::atomic<bool> stop{false};
  std::mutex shared;
  std::vector<std::thread> busy;
  for (int t = 0; t < 4; ++t) {
    busy.emplace_back([&] {
      while (!stop.load()) {
        std::lock_guard lock(shared);
        std::vector<char> block(4096 + static_cast<size_t>(std::rand() % 4096));
        block[0] = 1;
      }
    });
  }
  const fs::path file = copy_of_minimal();
  for (int i = 0; i < 10; ++i) {
    auto plugin = load_plugin(file);
    EXPECT_TRUE(plugin->loaded()) << plugin->reason;
    auto crash = load_plugin(kCrash / "xdev_crash_abort_init.so");
    EXPECT_EQ(crash->reason, "crashed during load or initialize, in 'initialize': SIGABRT");
  }
  stop = true;
  for (auto& t : busy) t.join();
}

// Not a check: what a probe costs, printed for docs/plugin-guide.md.
TEST_F(ProbeTest, ReportsTheCostOfProbingTheCpuPlugin) {
  const fs::path cpu = kCpu / "xdev_plugin_cpu.so";
  if (!fs::exists(cpu)) GTEST_SKIP() << "no cpu plugin at " << cpu;
  using Clock = std::chrono::steady_clock;
  auto micros = [](Clock::duration d) {
    return std::chrono::duration_cast<std::chrono::microseconds>(d).count();
  };
  ProbeSettings settings = probe_settings_from_environment();
  ASSERT_FALSE(settings.helper.empty()) << "xdev-plugin-probe not found";
  auto t0 = Clock::now();
  ProbeResult cold = probe_plugin(cpu, settings);
  auto t1 = Clock::now();
  ASSERT_EQ(cold.kind, ProbeResult::Kind::kLoads) << cold.reason;
  forget_probed_plugins();
  ProbeResult from_file = probe_plugin(cpu, settings);
  auto t2 = Clock::now();
  ProbeResult from_memory = probe_plugin(cpu, settings);
  auto t3 = Clock::now();
  EXPECT_TRUE(from_file.from_cache);
  EXPECT_TRUE(from_memory.from_cache);
  std::printf("probe of the cpu plugin: uncached %lld us, cache file %lld us, known %lld us\n",
              static_cast<long long>(micros(t1 - t0)), static_cast<long long>(micros(t2 - t1)),
              static_cast<long long>(micros(t3 - t2)));
  RecordProperty("uncached_us", std::to_string(micros(t1 - t0)));
  RecordProperty("cache_file_us", std::to_string(micros(t2 - t1)));
  RecordProperty("known_us", std::to_string(micros(t3 - t2)));
}

}  // namespace
}  // namespace xdev::detail
