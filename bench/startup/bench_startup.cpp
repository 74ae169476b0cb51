// Start-up as a new user sees it: whole processes, started and waited for,
// timed from posix_spawn to wait4, with the peak resident memory wait4
// reports (docs/performance.md "Start-up" has the table and the goals).
//
// The child (startup_child.cpp) links libxdev. It runs from an installed
// layout this program builds in a temporary directory, one per plugin set:
//   <dir>/lib/libxdev.so.0, <dir>/lib/xdev/xdev-plugin-probe,
//   <dir>/lib/xdev/plugins/<the plugins>, <dir>/bin/xdev-startup-child
// so libxdev finds exactly those plugins the way an installed libxdev does
// (LD_LIBRARY_PATH=<dir>/lib; XDEV_PLUGIN_PATH is removed from the child's
// environment). Plugin sets: "all" (every plugin this build installs: cpu,
// and cuda when it was built) and "cpu".
//
//   none            the child does nothing but link libxdev: the baseline
//   list/all        lists its devices, every in-tree plugin installed
//   list/cpu        lists its devices, only the cpu plugin installed
//   list/cpu_eager  as list/cpu with OpenBLAS preloaded (LD_PRELOAD): what
//                   discovery cost when the cpu plugin linked OpenBLAS
//   matmul/cpu      lists, then one 64×64 product: OpenBLAS loads
//   list/other      lists its devices, the one plugin file named by
//                   XDEV_BENCH_STARTUP_OTHER_PLUGIN installed (only when that
//                   is set: e.g. an older build of the cpu plugin, to measure
//                   a change in the same run)
//
// Each process is started once untimed first (page cache, probe cache). Run
// with --benchmark_repetitions and --benchmark_enable_random_interleaving;
// bench/startup/table.py prints the table from the JSON output.
#include <spawn.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <benchmark/benchmark.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iterator>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

extern char** environ;

namespace fs = std::filesystem;

namespace {

// One installed layout.
struct Layout {
  fs::path root;
  std::string error;  // why it could not be made
};

// Copies `from` to `to`, creating directories, keeping the mode bits.
void install_file(const fs::path& from, const fs::path& to) {
  fs::create_directories(to.parent_path());
  fs::copy_file(from, to, fs::copy_options::overwrite_existing);
}

// The temporary directory all layouts live in; removed at exit.
const fs::path& stage_root() {
  static const fs::path root = [] {
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern = std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") +
                          "/xdev-startup-XXXXXX";
    if (mkdtemp(pattern.data()) == nullptr) return fs::path();
    fs::path made(pattern);
    std::atexit([] {
      std::error_code ec;
      fs::remove_all(stage_root(), ec);
    });
    return made;
  }();
  return root;
}

std::vector<std::string> plugin_files(const std::string& set) {
  if (set == "other") return {std::getenv("XDEV_BENCH_STARTUP_OTHER_PLUGIN")};
  std::vector<std::string> files = {XDEV_BENCH_CPU_PLUGIN};
  if (set == "all" && std::strlen(XDEV_BENCH_CUDA_PLUGIN) > 0) {
    files.push_back(XDEV_BENCH_CUDA_PLUGIN);
  }
  return files;
}

const Layout& layout(const std::string& set) {
  static std::map<std::string, Layout> layouts;
  auto it = layouts.find(set);
  if (it != layouts.end()) return it->second;
  Layout made;
  try {
    if (stage_root().empty()) throw std::runtime_error("mkdtemp failed");
    made.root = stage_root() / set;
    const fs::path lib = made.root / "lib";
    install_file(XDEV_BENCH_LIBXDEV, lib / XDEV_BENCH_LIBXDEV_SONAME);
    install_file(XDEV_BENCH_PROBE_HELPER, lib / "xdev" / "xdev-plugin-probe");
    for (const std::string& file : plugin_files(set)) {
      install_file(file, lib / "xdev" / "plugins" / fs::path(file).filename());
    }
    install_file(XDEV_BENCH_STARTUP_CHILD, made.root / "bin" / "xdev-startup-child");
  } catch (const std::exception& e) {
    made.error = std::string("cannot build the layout '") + set + "': " + e.what();
  }
  return layouts.emplace(set, std::move(made)).first->second;
}

struct Outcome {
  bool ok = false;
  std::string error;
  double seconds = 0;  // posix_spawn to wait4
  long peak_rss_kib = 0;
  double cpu_seconds = 0;  // user + system of the child
};

// Starts the layout's child with `mode`, waits for it.
Outcome run_child(const Layout& where, const char* mode, bool preload_openblas) {
  Outcome out;
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string entry = *e;
    if (entry.rfind("XDEV_PLUGIN_PATH=", 0) == 0 || entry.rfind("LD_LIBRARY_PATH=", 0) == 0 ||
        entry.rfind("LD_PRELOAD=", 0) == 0) {
      continue;
    }
    env.push_back(entry);
  }
  env.push_back("LD_LIBRARY_PATH=" + (where.root / "lib").string());
  if (preload_openblas) env.push_back(std::string("LD_PRELOAD=") + XDEV_BENCH_OPENBLAS_SONAME);
  std::vector<char*> envp;
  for (std::string& entry : env) envp.push_back(entry.data());
  envp.push_back(nullptr);
  std::string program = (where.root / "bin" / "xdev-startup-child").string();
  std::string mode_arg = mode;
  char* argv[] = {program.data(), mode_arg.data(), nullptr};

  const auto start = std::chrono::steady_clock::now();
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, program.c_str(), nullptr, nullptr, argv, envp.data());
  if (rc != 0) {
    out.error = "posix_spawn " + program + ": " + std::strerror(rc);
    return out;
  }
  int status = 0;
  rusage usage{};
  if (wait4(pid, &status, 0, &usage) != pid) {
    out.error = std::string("wait4: ") + std::strerror(errno);
    return out;
  }
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  out.peak_rss_kib = usage.ru_maxrss;
  out.cpu_seconds = static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
                    1e-6 * static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    out.error = program + " " + mode + " failed (status " + std::to_string(status) +
                (WIFEXITED(status) && WEXITSTATUS(status) == 3 ? ": no device found" : "") + ")";
    return out;
  }
  out.ok = true;
  return out;
}

void BM_Startup(benchmark::State& state, const char* mode, std::string set, bool preload) {
  const Layout& where = layout(set);
  if (!where.error.empty()) {
    state.SkipWithError(where.error.c_str());
    return;
  }
  // Untimed first start: page cache, the probe cache of this layout.
  if (Outcome warm = run_child(where, mode, preload); !warm.ok) {
    state.SkipWithError(warm.error.c_str());
    return;
  }
  double rss = 0, cpu = 0;
  for (auto _ : state) {
    const Outcome run = run_child(where, mode, preload);
    if (!run.ok) {
      state.SkipWithError(run.error.c_str());
      return;
    }
    state.SetIterationTime(run.seconds);
    rss += static_cast<double>(run.peak_rss_kib);
    cpu += run.cpu_seconds;
  }
  const double n = static_cast<double>(state.iterations());
  state.counters["peak_rss_MiB"] = rss / n / 1024.0;
  state.counters["child_cpu_ms"] = cpu / n * 1e3;
  if (set == "other") {
    state.SetLabel(std::string("plugin: ") + std::getenv("XDEV_BENCH_STARTUP_OTHER_PLUGIN"));
  } else {
    state.SetLabel(set == "all" && std::strlen(XDEV_BENCH_CUDA_PLUGIN) > 0 ? "plugins: cpu, cuda"
                                                                           : "plugins: " + set);
  }
}

void register_all() {
  struct Case {
    const char* name;
    const char* mode;
    const char* set;
    bool preload;
  };
  const Case cases[] = {
      {"BM_Startup/none", "none", "all", false},
      {"BM_Startup/list/all", "list", "all", false},
      {"BM_Startup/list/cpu", "list", "cpu", false},
      {"BM_Startup/list/cpu_eager", "list", "cpu", true},
      {"BM_Startup/matmul/cpu", "matmul", "cpu", false},
  };
  std::vector<Case> all(std::begin(cases), std::end(cases));
  if (const char* other = std::getenv("XDEV_BENCH_STARTUP_OTHER_PLUGIN"); other && *other) {
    all.push_back({"BM_Startup/list/other", "list", "other", false});
  }
  for (const Case& c : all) {
    benchmark::RegisterBenchmark(c.name, BM_Startup, c.mode, std::string(c.set), c.preload)
        ->UseManualTime()
        ->Unit(benchmark::kMillisecond)
        ->MinTime(0.5);
  }
}

}  // namespace

int main(int argc, char** argv) {
  register_all();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
