// xdev-conformance PLUGIN.so: the plugin conformance suite (docs/plugin-guide.md) as
// one command. It talks to the plugin through the C ABI alone, without the
// core or any other plugin. Every test runs in a child process (this program
// again, with --run-one NAME), so a plugin that crashes or hangs fails that
// test ("crashed: SIGSEGV", "timed out after 60 s") and the run goes on.
//
// Output: one line per test, `PASS name`, `FAIL name: reason`,
// `SKIP name: reason`, `XFAIL name: reason` (an expected failure) or
// `XPASS name: reason` (an unexpected pass), then alone on a line
// `N passed, N failed, N skipped, N expected failures, N unexpected passes`.
// --expectations FILE says which tests the plugin is expected to fail or not
// to support (docs/plugin-guide.md, "Expectation files"). Exit status 0 when
// nothing failed and nothing passed unexpectedly, 1 otherwise, 2 on bad
// usage (a malformed or stale expectation file included).
#include <fcntl.h>
#include <fnmatch.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <condition_variable>
#include <cerrno>
#include <cstring>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>

#include "suite/suite.hpp"

extern char** environ;

namespace {

namespace xc = xdev_conformance;
using Clock = std::chrono::steady_clock;

// The result fd protocol between child and parent: one line,
// "PASS", "FAIL\t<reason>" or "SKIP\t<reason>".
std::string one_line(std::string s) {
  for (char& c : s) {
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
  }
  return s;
}

int run_one(const std::string& name, const xc::Options& options, int result_fd) {
  const xc::TestCase* test = nullptr;
  for (const auto& t : xc::all_tests()) {
    if (t.name == name) test = &t;
  }
  std::string line;
  if (test == nullptr) {
    line = "FAIL\tno test named " + name + "\n";
  } else {
    xc::Outcome outcome = xc::run_test(*test, options);
    switch (outcome.kind) {
      case xc::Outcome::Kind::kPass: line = "PASS\n"; break;
      case xc::Outcome::Kind::kFail: line = "FAIL\t" + one_line(outcome.reason) + "\n"; break;
      case xc::Outcome::Kind::kSkip: line = "SKIP\t" + one_line(outcome.reason) + "\n"; break;
    }
  }
  std::fflush(stdout);
  std::fflush(stderr);
  const char* p = line.data();
  size_t left = line.size();
  while (left > 0) {
    ssize_t n = ::write(result_fd, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    p += n;
    left -= static_cast<size_t>(n);
  }
  // No static destructors or atexit handlers of the plugin: the test is over.
  ::_exit(0);
}

std::string signal_name(int sig) {
  if (const char* abbrev = ::sigabbrev_np(sig)) return std::string("SIG") + abbrev;
  return "signal " + std::to_string(sig);
}

struct Result {
  std::string name;
  // kXfail: failed as an expectation file says it does; kXpass: passed
  // although an expectation file says it fails or is unsupported.
  enum class Kind { kPass, kFail, kSkip, kXfail, kXpass } kind = Kind::kFail;
  std::string reason;
  std::string output;  // the child's stdout and stderr
  double seconds = 0;
};

// Runs `name` in a child: this program with --run-one.
Result run_isolated(const std::string& self, const std::string& name, const xc::Options& options,
                    int timeout_s) {
  Result result;
  result.name = name;
  const auto start = Clock::now();
  int result_pipe[2], output_pipe[2];
  if (::pipe2(result_pipe, O_CLOEXEC) != 0 || ::pipe2(output_pipe, O_CLOEXEC) != 0) {
    result.reason = std::string("cannot create a pipe: ") + std::strerror(errno);
    return result;
  }
  constexpr int kResultFd = 3;
  posix_spawn_file_actions_t actions;
  ::posix_spawn_file_actions_init(&actions);
  ::posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  ::posix_spawn_file_actions_adddup2(&actions, output_pipe[1], 1);
  ::posix_spawn_file_actions_adddup2(&actions, output_pipe[1], 2);
  ::posix_spawn_file_actions_adddup2(&actions, result_pipe[1], kResultFd);
  posix_spawnattr_t attr;
  ::posix_spawnattr_init(&attr);
  // Its own process group, so a timeout kills whatever it started too.
  ::posix_spawnattr_setpgroup(&attr, 0);
  ::posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);

  std::vector<std::string> args = {self,
                                   "--run-one", name,
                                   "--result-fd", std::to_string(kResultFd),
                                   "--seed", std::to_string(options.seed),
                                   "--device", std::to_string(options.device),
                                   options.plugin_path};
  if (!options.validate) args.insert(args.end() - 1, "--no-validate");
  if (options.reduced) args.insert(args.end() - 1, "--reduced");
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = -1;
  int rc = ::posix_spawn(&pid, self.c_str(), &actions, &attr, argv.data(), environ);
  ::posix_spawn_file_actions_destroy(&actions);
  ::posix_spawnattr_destroy(&attr);
  ::close(result_pipe[1]);
  ::close(output_pipe[1]);
  if (rc != 0) {
    ::close(result_pipe[0]);
    ::close(output_pipe[0]);
    result.reason = std::string("cannot start the test process: ") + std::strerror(rc);
    return result;
  }

  const auto deadline = start + std::chrono::seconds(timeout_s);
  std::string report;
  bool result_open = true, output_open = true, timed_out = false;
  char buffer[4096];
  while (result_open || output_open) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) {
      timed_out = true;
      break;
    }
    pollfd fds[2];
    nfds_t n = 0;
    if (result_open) fds[n++] = {result_pipe[0], POLLIN, 0};
    if (output_open) fds[n++] = {output_pipe[0], POLLIN, 0};
    int ready = ::poll(fds, n, static_cast<int>(std::min<long long>(left.count(), INT_MAX)));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) continue;
    for (nfds_t i = 0; i < n; ++i) {
      if (fds[i].revents == 0) continue;
      ssize_t got = ::read(fds[i].fd, buffer, sizeof buffer);
      if (got < 0 && errno == EINTR) continue;
      const bool is_result = fds[i].fd == result_pipe[0];
      if (got <= 0) {
        (is_result ? result_open : output_open) = false;
        continue;
      }
      if (is_result) {
        report.append(buffer, static_cast<size_t>(got));
      } else if (result.output.size() < (1u << 20)) {
        result.output.append(buffer, static_cast<size_t>(got));
      }
    }
  }
  int status = 0;
  if (!timed_out) {
    // The pipes are closed; the process should be gone or going.
    while (true) {
      pid_t w = ::waitpid(pid, &status, WNOHANG);
      if (w == pid) break;
      if (w < 0 && errno != EINTR) break;
      if (Clock::now() >= deadline) {
        timed_out = true;
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
  if (timed_out) {
    ::kill(-pid, SIGKILL);
    ::kill(pid, SIGKILL);
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
  } else {
    // Whatever the test started and left behind.
    ::kill(-pid, SIGKILL);
  }
  ::close(result_pipe[0]);
  ::close(output_pipe[0]);
  result.seconds = std::chrono::duration<double>(Clock::now() - start).count();

  if (timed_out) {
    result.reason = "timed out after " + std::to_string(timeout_s) + " s";
    return result;
  }
  if (WIFSIGNALED(status)) {
    result.reason = "crashed: " + signal_name(WTERMSIG(status));
    return result;
  }
  if (!report.empty() && report.back() == '\n') report.pop_back();
  if (report.empty()) {
    const int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    result.reason = "the test process exited with status " + std::to_string(code) +
                    " without a result (did the plugin call exit()?)";
    return result;
  }
  const size_t tab = report.find('\t');
  const std::string verdict = report.substr(0, tab);
  const std::string reason = tab == std::string::npos ? "" : report.substr(tab + 1);
  if (verdict == "PASS") {
    result.kind = Result::Kind::kPass;
  } else if (verdict == "SKIP") {
    result.kind = Result::Kind::kSkip;
    result.reason = reason;
  } else {
    result.kind = Result::Kind::kFail;
    result.reason = verdict == "FAIL" ? reason : "unreadable result \"" + report + "\"";
  }
  return result;
}

// Glob when the pattern has *, ? or [ (fnmatch on the whole name), else a
// substring of the name.
bool matches(const std::string& pattern, const std::string& name) {
  if (pattern.find_first_of("*?[") != std::string::npos) {
    return ::fnmatch(pattern.c_str(), name.c_str(), 0) == 0;
  }
  return name.find(pattern) != std::string::npos;
}

// --- expectation files -------------------------------------------------------
//
// One entry a line: `GLOB KIND [REASON]`, separated by white space; `#` starts
// a comment line. GLOB is matched against the whole test name (fnmatch);
// KIND is `pass`, `unsupported` or `xfail`; the latter two need a REASON (the
// rest of the line). The first entry whose glob matches a test decides; a test
// no entry matches is expected to pass.

struct Expectation {
  enum class Kind { kPass, kUnsupported, kXfail } kind = Kind::kPass;
  std::string glob;
  std::string reason;
  std::string where;  // "file:line", for messages
};

// Reads `file` into `out`; false with `error` naming file and line when a
// line is malformed or an entry matches no test of the suite (a stale entry:
// the test was renamed or removed).
bool read_expectations(const std::string& file, std::vector<Expectation>& out,
                       std::string& error) {
  std::ifstream in(file);
  if (!in) {
    error = "cannot read expectation file " + file;
    return false;
  }
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    const std::string where = file + ":" + std::to_string(number);
    std::istringstream words(line);
    Expectation e;
    std::string kind;
    if (!(words >> e.glob) || e.glob[0] == '#') continue;
    words >> kind;
    std::getline(words >> std::ws, e.reason);
    while (!e.reason.empty() && std::isspace(static_cast<unsigned char>(e.reason.back()))) {
      e.reason.pop_back();
    }
    if (kind == "pass") {
      e.kind = Expectation::Kind::kPass;
    } else if (kind == "unsupported") {
      e.kind = Expectation::Kind::kUnsupported;
    } else if (kind == "xfail") {
      e.kind = Expectation::Kind::kXfail;
    } else {
      error = where + ": " +
              (kind.empty() ? "'" + e.glob + "' has no kind; expected GLOB KIND [REASON]"
                            : "'" + kind + "' is not pass, unsupported or xfail");
      return false;
    }
    if (e.kind != Expectation::Kind::kPass && e.reason.empty()) {
      error = where + ": " + kind + " needs a reason";
      return false;
    }
    bool used = false;
    for (const auto& t : xc::all_tests()) {
      used = used || ::fnmatch(e.glob.c_str(), t.name.c_str(), 0) == 0;
    }
    if (!used) {
      error = where + ": '" + e.glob + "' matches no test of the suite";
      return false;
    }
    e.where = where;
    out.push_back(std::move(e));
  }
  return true;
}

// The entry that decides for `name`, or NULL (expected to pass).
const Expectation* expectation_for(const std::vector<Expectation>& expectations,
                                   const std::string& name) {
  for (const Expectation& e : expectations) {
    if (::fnmatch(e.glob.c_str(), name.c_str(), 0) == 0) return &e;
  }
  return nullptr;
}

// Applies the expectation to a result: an expected failure becomes kXfail;
// a pass of a test expected to fail or to be unsupported becomes kXpass (the
// entry is stale). Skips and other outcomes stay as they are.
void apply(const Expectation* e, Result& r) {
  if (e == nullptr || e->kind == Expectation::Kind::kPass) return;
  const bool xfail = e->kind == Expectation::Kind::kXfail;
  if (r.kind == Result::Kind::kFail && xfail) {
    r.kind = Result::Kind::kXfail;
    r.reason += " (expected failure, " + e->where + ": " + e->reason + ")";
  } else if (r.kind == Result::Kind::kPass) {
    r.kind = Result::Kind::kXpass;
    r.reason = std::string("passed, but ") + e->where + " says it " +
               (xfail ? "fails" : "is unsupported") + " (" + e->reason +
               "); update the expectation file";
  } else if (r.kind == Result::Kind::kSkip && !xfail) {
    r.reason += " (unsupported, " + e->where + ": " + e->reason + ")";
  }
}

std::string xml_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default:
        // XML 1.0 allows no control characters but tab, LF and CR.
        if (static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\n' && c != '\r') {
          out += '?';
        } else {
          out += c;
        }
    }
  }
  return out;
}

// JUnit has no expected failures or unexpected passes: an expected failure
// is a <skipped> test, an unexpected pass a <failure> (the `failures` and
// `skipped` counts include them), and the <testsuite> and <testsuites>
// elements carry their counts as `expected_failures` and `unexpected_passes`.
bool write_junit(const std::string& file, const std::string& plugin,
                 const std::vector<Result>& results) {
  int failures = 0, skipped = 0, xfailed = 0, xpassed = 0;
  double total = 0;
  for (const Result& r : results) {
    failures += r.kind == Result::Kind::kFail || r.kind == Result::Kind::kXpass;
    skipped += r.kind == Result::Kind::kSkip || r.kind == Result::Kind::kXfail;
    xfailed += r.kind == Result::Kind::kXfail;
    xpassed += r.kind == Result::Kind::kXpass;
    total += r.seconds;
  }
  const std::string counts = "\" failures=\"" + std::to_string(failures) + "\" skipped=\"" +
                             std::to_string(skipped) + "\" expected_failures=\"" +
                             std::to_string(xfailed) + "\" unexpected_passes=\"" +
                             std::to_string(xpassed);
  std::ofstream out(file);
  if (!out) return false;
  char time[32];
  std::snprintf(time, sizeof time, "%.3f", total);
  out << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out << "<testsuites name=\"xdev-conformance\" tests=\"" << results.size() << counts
      << "\" time=\"" << time << "\">\n";
  out << "  <testsuite name=\"" << xml_escape(plugin) << "\" tests=\"" << results.size()
      << "\" errors=\"0" << counts << "\" time=\"" << time << "\">\n";
  for (const Result& r : results) {
    const std::string group = r.name.substr(0, r.name.find('.'));
    std::snprintf(time, sizeof time, "%.3f", r.seconds);
    out << "    <testcase classname=\"xdev-conformance." << xml_escape(group) << "\" name=\""
        << xml_escape(r.name) << "\" time=\"" << time << "\"";
    if (r.kind == Result::Kind::kPass) {
      out << "/>\n";
      continue;
    }
    out << ">\n";
    switch (r.kind) {
      case Result::Kind::kFail:
        out << "      <failure message=\"" << xml_escape(r.reason) << "\"/>\n";
        break;
      case Result::Kind::kXpass:
        out << "      <failure type=\"unexpected pass\" message=\"" << xml_escape(r.reason)
            << "\"/>\n";
        break;
      case Result::Kind::kSkip:
        out << "      <skipped message=\"" << xml_escape(r.reason) << "\"/>\n";
        break;
      case Result::Kind::kXfail:
        out << "      <skipped type=\"expected failure\" message=\"" << xml_escape(r.reason)
            << "\"/>\n";
        break;
      case Result::Kind::kPass:
        break;
    }
    if ((r.kind == Result::Kind::kFail || r.kind == Result::Kind::kXfail) && !r.output.empty()) {
      out << "      <system-out>" << xml_escape(r.output) << "</system-out>\n";
    }
    out << "    </testcase>\n";
  }
  out << "  </testsuite>\n</testsuites>\n";
  return static_cast<bool>(out);
}

std::string self_path(const char* argv0) {
  char buffer[4096];
  ssize_t n = ::readlink("/proc/self/exe", buffer, sizeof buffer - 1);
  if (n > 0) return std::string(buffer, static_cast<size_t>(n));
  return argv0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "xdev-conformance: runs the xdev plugin conformance suite against one plugin file,\n"
      "through the plugin ABI alone. Each test runs in its own process."};
  app.set_version_flag("--version", std::string("xdev-conformance ") + XDEV_CONFORMANCE_VERSION);
  std::string plugin;
  std::vector<std::string> filters, excludes;
  bool list = false, verbose = false;
  std::string junit, run_one_name, expectations_file;
  int timeout_s = 60, result_fd = -1, jobs = 1;
  uint64_t seed = 1;
  uint32_t device = 0;
  app.add_option("plugin", plugin, "The plugin file (a shared library exporting xdev_plugin_query)");
  app.add_option("--filter", filters,
                 "Run only tests whose name matches: a glob when PATTERN has *, ? or [ "
                 "(matched against the whole name, e.g. 'kernel.*'), else a substring "
                 "(e.g. 'memory'). May be given more than once (any may match).")
      ->type_name("PATTERN")
      ->expected(1)
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  app.add_option("--exclude", excludes, "Leave out tests matching PATTERN (same rules as --filter)")
      ->type_name("PATTERN")
      ->expected(1)
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  app.add_flag("--list", list, "List the test names (after --filter/--exclude) and exit");
  app.add_option("--junit", junit, "Also write the results as JUnit XML to FILE")
      ->type_name("FILE");
  app.add_option("--expectations", expectations_file,
                 "The plugin's expectation file: per test glob, 'pass', 'unsupported REASON' or "
                 "'xfail REASON' (docs/plugin-guide.md). A listed test that passes fails the run.")
      ->type_name("FILE");
  app.add_option("--timeout", timeout_s, "Seconds each test may run before it is killed")
      ->check(CLI::Range(1, 86400))
      ->capture_default_str();
  app.add_option("--jobs,-j", jobs,
                 "Tests run at the same time, each in its own process (default 1: a test "
                 "that measures a device's free memory must not share the device)")
      ->check(CLI::Range(1, 256))
      ->capture_default_str();
  app.add_option("--seed", seed, "Seed of the random test data (each test mixes in its name)")
      ->capture_default_str();
  app.add_option("--device", device, "Device ordinal the single-device tests use")
      ->capture_default_str();
  bool reduced = false;
  app.add_flag("--reduced", reduced,
               "kernel.*: run each case of an op once and each of its dtypes once, rather "
               "than every case in every dtype (for slow builds, e.g. under sanitizers)");
  app.add_flag("-v,--verbose", verbose, "Print the output of failing tests under their line");
  bool no_validate = false;
  app.add_flag("--no-validate", no_validate,
               "Talk to the plugin directly, without the validation layer (which by default "
               "checks every call and fails a test on what it finds: outputs a kernel never "
               "wrote, writes outside outputs, leaks; docs/plugin-guide.md)");
  // Internal: run one test in this process and report on an inherited fd.
  app.add_option("--run-one", run_one_name)->group("");
  app.add_option("--result-fd", result_fd)->group("");
  CLI11_PARSE(app, argc, argv);

  // dlopen searches the library path for a name without a slash: make it a path.
  if (!plugin.empty() && plugin.find('/') == std::string::npos) plugin = "./" + plugin;
  xc::Options options;
  options.plugin_path = plugin;
  options.seed = seed;
  options.device = device;
  options.validate = !no_validate;
  options.reduced = reduced;

  if (!run_one_name.empty()) {
    if (result_fd < 0) result_fd = 1;
    return run_one(run_one_name, options, result_fd);
  }

  std::vector<Expectation> expectations;
  if (!expectations_file.empty()) {
    std::string error;
    if (!read_expectations(expectations_file, expectations, error)) {
      std::cerr << "xdev-conformance: " << error << "\n";
      return 2;
    }
  }

  std::vector<const xc::TestCase*> selected;
  for (const auto& t : xc::all_tests()) {
    bool in = filters.empty();
    for (const auto& f : filters) in = in || matches(f, t.name);
    for (const auto& e : excludes) in = in && !matches(e, t.name);
    if (in) selected.push_back(&t);
  }
  if (list) {
    for (const auto* t : selected) {
      if (verbose) std::cout << t->name << "  " << t->description << "\n";
      else std::cout << t->name << "\n";
    }
    return 0;
  }
  if (plugin.empty()) {
    std::cerr << "xdev-conformance: no plugin file given (see --help)\n";
    return 2;
  }
  if (selected.empty()) {
    std::cerr << "xdev-conformance: no test matches the filter\n";
    return 2;
  }

  const std::string self = self_path(argv[0]);
  std::cout << "xdev-conformance " << XDEV_CONFORMANCE_VERSION << ": " << plugin << " (seed "
            << seed << ", " << selected.size() << " tests)" << std::endl;

  // A plugin that does not even load fails every test the same way: find
  // out once, and do not start (and time out) dozens of processes for it.
  Result preflight = run_isolated(self, "abi.load", options, timeout_s);
  const bool loads = preflight.kind == Result::Kind::kPass;

  // The tests run in child processes, `jobs` at a time; their lines are
  // printed in the suite's order as soon as every earlier test has ended.
  std::vector<Result> done(selected.size());
  std::vector<char> finished(selected.size(), 0);
  std::mutex mutex;
  std::condition_variable ended;
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t i = next++; i < selected.size(); i = next++) {
      const xc::TestCase* t = selected[i];
      Result r;
      if (t->name == "abi.load") {
        r = preflight;
      } else if (!loads) {
        r.name = t->name;
        r.kind = Result::Kind::kFail;
        r.reason = "not run: the plugin does not load (abi.load: " + preflight.reason + ")";
      } else {
        r = run_isolated(self, t->name, options, timeout_s);
      }
      std::lock_guard<std::mutex> lock(mutex);
      done[i] = std::move(r);
      finished[i] = 1;
      ended.notify_one();
    }
  };
  std::vector<std::thread> workers;
  const size_t worker_count = std::min<size_t>(static_cast<size_t>(jobs), selected.size());
  // This thread prints, in order, while the workers run the tests.
  for (size_t w = 0; w < worker_count; ++w) workers.emplace_back(worker);

  std::vector<Result> results;
  int passed = 0, failed = 0, skipped = 0, xfailed = 0, xpassed = 0;
  for (size_t i = 0; i < selected.size(); ++i) {
    Result r;
    {
      std::unique_lock<std::mutex> lock(mutex);
      ended.wait(lock, [&] { return finished[i] != 0; });
      r = std::move(done[i]);
    }
    apply(expectation_for(expectations, r.name), r);
    switch (r.kind) {
      case Result::Kind::kPass:
        ++passed;
        std::cout << "PASS " << r.name << "\n";
        break;
      case Result::Kind::kXpass:
        ++xpassed;
        std::cout << "XPASS " << r.name << ": " << r.reason << "\n";
        break;
      case Result::Kind::kFail:
      case Result::Kind::kXfail:
        ++(r.kind == Result::Kind::kFail ? failed : xfailed);
        std::cout << (r.kind == Result::Kind::kFail ? "FAIL " : "XFAIL ") << r.name << ": "
                  << r.reason << "\n";
        if (verbose && !r.output.empty()) {
          size_t start = 0;
          while (start < r.output.size()) {
            size_t end = r.output.find('\n', start);
            if (end == std::string::npos) end = r.output.size();
            std::cout << "  | " << r.output.substr(start, end - start) << "\n";
            start = end + 1;
          }
        }
        break;
      case Result::Kind::kSkip:
        ++skipped;
        std::cout << "SKIP " << r.name << ": " << r.reason << "\n";
        break;
    }
    std::cout.flush();
    results.push_back(std::move(r));
  }
  for (std::thread& w : workers) w.join();
  // The first three counts keep the format CI parses.
  std::cout << passed << " passed, " << failed << " failed, " << skipped << " skipped, "
            << xfailed << " expected failures, " << xpassed << " unexpected passes" << std::endl;
  if (!junit.empty() && !write_junit(junit, plugin, results)) {
    std::cerr << "xdev-conformance: cannot write " << junit << "\n";
    return 2;
  }
  return failed > 0 || xpassed > 0 ? 1 : 0;
}
