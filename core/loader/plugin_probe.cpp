#include "loader/plugin_probe.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <set>
#include <sstream>
#include <string_view>
#include <system_error>
#include <thread>
#include <vector>

#include <boost/dll/runtime_symbol_info.hpp>

#include "config.hpp"
#include "common/env.hpp"
#include "common/log.hpp"
#include "loader/plugin_loader.hpp"
#include "common/status.hpp"

extern char** environ;

namespace fs = std::filesystem;

namespace xdev::detail {
namespace {

using Clock = std::chrono::steady_clock;

constexpr const char* kHelperName = "xdev-plugin-probe";
constexpr const char* kCacheName = "plugin-probe.cache";
// First line of the cache file; a file written by another version is ignored.
constexpr std::string_view kCacheMagic = "xdev-plugin-probe-cache 1 " XDEV_VERSION_STRING;
constexpr size_t kCacheMaxEntries = 256;
constexpr int kReportFd = 3;

std::atomic<uint64_t> g_probes_started{0};

// File identity: a plugin rebuilt or replaced in place gets probed again.
struct Identity {
  std::string path;
  uint64_t dev = 0, ino = 0, size = 0;
  int64_t mtime_sec = 0, mtime_nsec = 0;

  std::string line() const {
    std::ostringstream out;
    out << dev << '\t' << ino << '\t' << size << '\t' << mtime_sec << '\t' << mtime_nsec << '\t'
        << path;
    return out.str();
  }
};

bool identify(const fs::path& file, Identity& id) {
  struct stat st {};
  if (::stat(file.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return false;
  id.path = file.string();
  id.dev = static_cast<uint64_t>(st.st_dev);
  id.ino = static_cast<uint64_t>(st.st_ino);
  id.size = static_cast<uint64_t>(st.st_size);
  id.mtime_sec = st.st_mtim.tv_sec;
  id.mtime_nsec = st.st_mtim.tv_nsec;
  return true;
}

// Identities probed successfully in this process (or found in the cache).
std::mutex g_known_mutex;
std::set<std::string>& known() {
  static auto* set = new std::set<std::string>();
  return *set;
}

// The cache file's entries (identity lines), or none when it is missing,
// unreadable or of another version.
std::vector<std::string> read_cache(const fs::path& file) {
  std::vector<std::string> entries;
  std::ifstream in(file);
  if (!in) return entries;
  std::string line;
  if (!std::getline(in, line) || line != kCacheMagic) return entries;
  while (std::getline(in, line)) {
    if (!line.empty()) entries.push_back(line);
  }
  return entries;
}

// Adds `entry` (dropping older entries for the same path), written to a
// temporary file and renamed over the cache, so readers never see half a
// file. Errors are ignored: the cache only saves time.
void add_to_cache(const fs::path& file, const Identity& id) {
  try {
    std::error_code ec;
    fs::create_directories(file.parent_path(), ec);
    std::vector<std::string> entries = read_cache(file);
    const std::string suffix = '\t' + id.path;
    entries.erase(std::remove_if(entries.begin(), entries.end(),
                                 [&](const std::string& e) {
                                   return e.size() >= suffix.size() &&
                                          e.compare(e.size() - suffix.size(), suffix.size(),
                                                    suffix) == 0;
                                 }),
                  entries.end());
    entries.push_back(id.line());
    if (entries.size() > kCacheMaxEntries) {
      entries.erase(entries.begin(),
                    entries.begin() + static_cast<std::ptrdiff_t>(entries.size() - kCacheMaxEntries));
    }
    fs::path tmp = file;
    static std::atomic<uint64_t> counter{0};
    tmp += "." + std::to_string(::getpid()) + "." + std::to_string(counter.fetch_add(1)) + ".tmp";
    {
      std::ofstream out(tmp, std::ios::trunc);
      if (!out) return;
      out << kCacheMagic << '\n';
      for (const std::string& e : entries) out << e << '\n';
      out.flush();
      if (!out) {
        fs::remove(tmp, ec);
        return;
      }
    }
    fs::rename(tmp, file, ec);
    if (ec) fs::remove(tmp, ec);
  } catch (...) {
  }
}

std::string signal_name(int sig) {
  if (const char* abbrev = ::sigabbrev_np(sig)) return std::string("SIG") + abbrev;
  return "signal " + std::to_string(sig);
}

// Report lines are "key\tvalue" with '\\', '\n' and '\t' escaped.
std::string escape(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == '\\') out += "\\\\";
    else if (c == '\n') out += "\\n";
    else if (c == '\t') out += "\\t";
    else out += c;
  }
  return out;
}

std::string unescape(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 1 < s.size()) {
      ++i;
      out += s[i] == 'n' ? '\n' : s[i] == 't' ? '\t' : s[i];
    } else {
      out += s[i];
    }
  }
  return out;
}

bool executable(const fs::path& p) { return ::access(p.c_str(), X_OK) == 0; }

fs::path find_helper() {
  std::error_code ec;
  fs::path self = boost::dll::this_line_location(ec);
  if (ec || self.empty()) return {};
  fs::path dir = fs::canonical(self, ec).parent_path();
  if (ec) return {};
  // Installed: <libdir>/xdev/xdev-plugin-probe, beside <libdir>/xdev/plugins.
  fs::path installed = dir / fs::path(XDEV_PLUGINDIR_FROM_LIBDIR).parent_path() / kHelperName;
  if (executable(installed)) return installed;
  // Build tree: the core (libxdev, or a test linked with the core) runs from
  // under the build root, and the helper is built in tools/conformance.
  fs::path build_root = fs::canonical(fs::path(XDEV_BUILD_CORE_DIR), ec).parent_path();
  if (ec) return {};
  const std::string root = build_root.string() + "/";
  if (dir.string().compare(0, root.size(), root) == 0 || dir == build_root) {
    fs::path in_tree = build_root / "tools" / "conformance" / kHelperName;
    if (executable(in_tree)) return in_tree;
  }
  return {};
}

bool debug_logging() { return log_level() <= XDEV_LOG_DEBUG; }

struct ChildOutcome {
  bool spawned = false;
  std::string spawn_error;
  bool timed_out = false;
  bool have_status = false;
  int status = 0;
  std::string report;
};

// Starts the helper on `file` and collects its report, killing it at the
// deadline. posix_spawn only (vfork + exec): nothing runs in the child
// between the fork and the exec, which is what makes it safe in a
// multi-threaded host.
ChildOutcome run_helper(const fs::path& helper, const fs::path& file,
                        std::chrono::milliseconds timeout) {
  ChildOutcome out;
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) {
    out.spawn_error = std::string("pipe: ") + std::strerror(errno);
    return out;
  }
  int write_fd = pipe_fds[1];
  if (write_fd == kReportFd) {
    // dup2 onto itself would keep O_CLOEXEC; move it out of the way first.
    write_fd = ::fcntl(pipe_fds[1], F_DUPFD_CLOEXEC, kReportFd + 1);
    ::close(pipe_fds[1]);
    if (write_fd < 0) {
      ::close(pipe_fds[0]);
      out.spawn_error = std::string("fcntl: ") + std::strerror(errno);
      return out;
    }
  }
  posix_spawn_file_actions_t actions;
  ::posix_spawn_file_actions_init(&actions);
  ::posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  if (!debug_logging()) {
    // The plugin's own chatter is shown once, by the in-process load.
    ::posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
    ::posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
  }
  ::posix_spawn_file_actions_adddup2(&actions, write_fd, kReportFd);
  posix_spawnattr_t attr;
  ::posix_spawnattr_init(&attr);
  ::posix_spawnattr_setpgroup(&attr, 0);
  // Default dispositions and no blocked signals, whatever the host set.
  sigset_t all, none;
  sigfillset(&all);
  sigemptyset(&none);
  ::posix_spawnattr_setsigdefault(&attr, &all);
  ::posix_spawnattr_setsigmask(&attr, &none);
  ::posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF |
                                        POSIX_SPAWN_SETSIGMASK);
  std::string helper_arg = helper.string(), fd_arg = std::to_string(kReportFd),
              file_arg = file.string();
  std::string name_arg = kHelperName, flag_arg = "--report-fd";
  char* argv[] = {name_arg.data(), flag_arg.data(), fd_arg.data(), file_arg.data(), nullptr};
  pid_t pid = -1;
  const auto start = Clock::now();
  int rc = ::posix_spawn(&pid, helper_arg.c_str(), &actions, &attr, argv, environ);
  ::posix_spawn_file_actions_destroy(&actions);
  ::posix_spawnattr_destroy(&attr);
  ::close(write_fd);
  if (rc != 0) {
    ::close(pipe_fds[0]);
    out.spawn_error = "cannot start " + helper_arg + ": " + std::strerror(rc);
    return out;
  }
  out.spawned = true;
  g_probes_started.fetch_add(1, std::memory_order_relaxed);

  const auto deadline = start + timeout;
  char buffer[4096];
  while (true) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) {
      out.timed_out = true;
      break;
    }
    pollfd fd{pipe_fds[0], POLLIN, 0};
    int ready = ::poll(&fd, 1, static_cast<int>(std::min<int64_t>(left.count(), INT_MAX)));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) continue;
    ssize_t got = ::read(pipe_fds[0], buffer, sizeof buffer);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;  // EOF: the helper exited (or closed the pipe)
    if (out.report.size() < (64u << 10)) out.report.append(buffer, static_cast<size_t>(got));
  }
  ::close(pipe_fds[0]);
  if (!out.timed_out) {
    while (true) {
      pid_t w = ::waitpid(pid, &out.status, WNOHANG);
      if (w == pid) {
        out.have_status = true;
        break;
      }
      if (w < 0 && errno != EINTR) break;  // reaped by someone else (SIGCHLD ignored)
      if (Clock::now() >= deadline) {
        out.timed_out = true;
        break;
      }
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
  }
  if (out.timed_out) {
    ::kill(-pid, SIGKILL);
    ::kill(pid, SIGKILL);
    while (::waitpid(pid, &out.status, 0) < 0 && errno == EINTR) {
    }
    out.have_status = false;
  }
  return out;
}

}  // namespace

uint64_t probe_processes_started() { return g_probes_started.load(std::memory_order_relaxed); }

void forget_probed_plugins() {
  std::lock_guard lock(g_known_mutex);
  known().clear();
}

ProbeSettings probe_settings_from_environment() {
  ProbeSettings settings;
  switch (env::probe_plugins()) {
    case env::ProbeChoice::kOff: settings.mode = ProbeMode::kOff; break;
    case env::ProbeChoice::kAlways: settings.mode = ProbeMode::kAlways; break;
    case env::ProbeChoice::kCached: settings.mode = ProbeMode::kCached; break;
  }
  settings.timeout = env::probe_timeout();
  // XDG's rule: a relative XDG_CACHE_HOME is ignored.
  const auto xdg = env::text("XDG_CACHE_HOME");
  const auto home = env::text("HOME");
  if (xdg && !xdg->empty() && (*xdg)[0] == '/') {
    settings.cache_file = fs::path(*xdg) / "xdev" / kCacheName;
  } else if (home && !home->empty() && (*home)[0] == '/') {
    settings.cache_file = fs::path(*home) / ".cache" / "xdev" / kCacheName;
  }
  static const fs::path helper = [] {
    try {
      return find_helper();
    } catch (...) {
      return fs::path();
    }
  }();
  settings.helper = helper;
  return settings;
}

ProbeResult probe_plugin(const fs::path& file, const ProbeSettings& settings) {
  ProbeResult result;
  try {
    if (settings.mode == ProbeMode::kOff) {
      result.reason = "probing is off (XDEV_PROBE_PLUGINS)";
      return result;
    }
    Identity id;
    if (!identify(file, id)) {
      // Missing or not a regular file: the in-process load reports why, and
      // cannot crash on it.
      result.reason = "not a regular file";
      return result;
    }
    const std::string key = id.line();
    const bool use_cache = settings.mode == ProbeMode::kCached;
    if (use_cache) {
      {
        std::lock_guard lock(g_known_mutex);
        if (known().count(key) != 0) {
          result.kind = ProbeResult::Kind::kLoads;
          result.from_cache = true;
          return result;
        }
      }
      if (!settings.cache_file.empty()) {
        for (const std::string& entry : read_cache(settings.cache_file)) {
          if (entry == key) {
            std::lock_guard lock(g_known_mutex);
            known().insert(key);
            result.kind = ProbeResult::Kind::kLoads;
            result.from_cache = true;
            return result;
          }
        }
      }
    }
    if (settings.helper.empty()) {
      result.reason = std::string("no ") + kHelperName + " found beside libxdev";
      return result;
    }

    ChildOutcome child = run_helper(settings.helper, file, settings.timeout);
    if (!child.spawned) {
      result.reason = child.spawn_error;
      return result;
    }
    // Parse what the helper managed to report.
    std::string state, reason, last_call;
    bool complete = false;
    std::istringstream lines(child.report);
    std::string line;
    while (std::getline(lines, line)) {
      const size_t tab = line.find('\t');
      const std::string k = line.substr(0, tab);
      const std::string v = tab == std::string::npos ? "" : unescape(line.substr(tab + 1));
      if (k == "call") last_call = v;
      else if (k == "state") state = v;
      else if (k == "reason") reason = v;
      else if (k == "name") result.name = v;
      else if (k == "version") result.plugin_version = v;
      else if (k == "abi") {
        unsigned major = 0, minor = 0;
        if (std::sscanf(v.c_str(), "%u.%u", &major, &minor) == 2) result.abi_version = {major, minor};
      } else if (k == "end") complete = true;
    }

    // The call the helper was in when it stopped: ", in 'initialize'".
    const std::string in_call = last_call.empty() ? "" : ", in '" + last_call + "'";
    if (child.timed_out) {
      result.kind = ProbeResult::Kind::kCrashed;
      result.reason = "timed out during load or initialize" + in_call + " (killed after " +
                      std::to_string(settings.timeout.count()) + " ms)";
    } else if (child.have_status && WIFSIGNALED(child.status)) {
      result.kind = ProbeResult::Kind::kCrashed;
      result.reason = "crashed during load or initialize" + in_call + ": " +
                      signal_name(WTERMSIG(child.status));
    } else if (!complete) {
      result.kind = ProbeResult::Kind::kCrashed;
      result.reason = child.have_status && WIFEXITED(child.status)
                          ? "exited with status " + std::to_string(WEXITSTATUS(child.status)) +
                                " during load or initialize" + in_call
                          : "ended during load or initialize without a report" + in_call;
    } else if (state == "loaded") {
      result.kind = ProbeResult::Kind::kLoads;
      {
        std::lock_guard lock(g_known_mutex);
        known().insert(key);
      }
      if (use_cache && !settings.cache_file.empty()) add_to_cache(settings.cache_file, id);
    } else {
      result.kind = ProbeResult::Kind::kSkipped;
      result.reason = reason.empty() ? "skipped by the probe" : reason;
    }
    return result;
  } catch (...) {
    result.kind = ProbeResult::Kind::kUnavailable;
    result.reason = "the probe failed unexpectedly";
    return result;
  }
}

namespace {

// The helper's report fd, for report_call.
int g_report_fd = -1;

// Writes all of `text` to the report fd (the parent reads it line by line).
void write_report(const std::string& text) {
  const char* p = text.data();
  size_t left = text.size();
  while (left > 0) {
    ssize_t n = ::write(g_report_fd, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    p += n;
    left -= static_cast<size_t>(n);
  }
}

// The loader's call observer in the helper: each call is on the pipe before
// the plugin runs it, so a crash report names it. A call repeated (the
// properties of 65,536 devices) is written once, so that the report stays
// far below what the parent reads.
void report_call(const char* call) {
  static std::string last;
  if (last == call) return;
  last = call;
  write_report("call\t" + escape(call) + "\n");
}

}  // namespace

int plugin_probe_main(int argc, char** argv) {
  int fd = -1;
  const char* file = nullptr;
  for (int i = 1; i < argc; ++i) {
    std::string_view a = argv[i];
    if (a == "--report-fd" && i + 1 < argc) {
      fd = std::atoi(argv[++i]);
    } else if (file == nullptr && !a.empty() && a[0] != '-') {
      file = argv[i];
    } else {
      file = nullptr;
      break;
    }
  }
  if (fd < 0 || file == nullptr) {
    const char usage[] =
        "usage: xdev-plugin-probe --report-fd N PLUGIN.so\n"
        "Loads, initializes and shuts down one xdev plugin, and reports on fd N.\n"
        "The xdev core runs it to try a plugin before loading it (docs/plugin-guide.md).\n";
    ssize_t ignored = ::write(2, usage, sizeof usage - 1);
    (void)ignored;
    return 2;
  }
  std::string report;
  g_report_fd = fd;
  set_loader_call_observer(&report_call);
  {
    std::unique_ptr<LoadedPlugin> plugin = load_plugin_in_process(file);
    if (plugin->loaded()) {
      // What the runtime does next with a loaded plugin: read its kernels,
      // the type's and (ABI 1.5) each device's.
      auto touch = [](xdev_status_t* s, const xdev_kernel_info_t* const* kernels,
                      uint32_t count) {
        if (s != nullptr) {
          (void)take_message(s);
          return;
        }
        for (uint32_t i = 0; i < count && kernels != nullptr; ++i) {
          if (kernels[i] != nullptr && kernels[i]->op != nullptr) {
            volatile char first = kernels[i]->op[0];
            (void)first;
          }
        }
      };
      const xdev_plugin_api_t* api = plugin->api;
      const xdev_kernel_info_t* const* kernels = nullptr;
      uint32_t count = 0;
      note_loader_call("kernels");
      touch(api->kernels(plugin->handle, &kernels, &count), kernels, count);
      if (XDEV_HAS_FIELD(api, xdev_plugin_api_t, device_kernels) &&
          api->device_kernels != nullptr) {
        note_loader_call("device_kernels");
        for (const PluginDevice& device : plugin->devices) {
          kernels = nullptr;
          count = 0;
          touch(api->device_kernels(plugin->handle, device.ordinal, &kernels, &count), kernels,
                count);
        }
      }
      plugin->shut_down();
    }
    report += "state\t" + std::string(plugin->loaded() ? "loaded" : "skipped") + "\n";
    report += "reason\t" + escape(plugin->reason) + "\n";
    report += "name\t" + escape(plugin->name) + "\n";
    report += "version\t" + escape(plugin->plugin_version) + "\n";
    report += "abi\t" + std::to_string(plugin->abi_version.major) + "." +
              std::to_string(plugin->abi_version.minor) + "\n";
    report += "end\t\n";
  }
  set_loader_call_observer(nullptr);
  write_report(report);
  // No static destructors: plugin threads (oneTBB, drivers) may still run.
  ::_exit(0);
}

}  // namespace xdev::detail
