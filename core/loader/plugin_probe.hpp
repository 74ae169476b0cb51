// Crash-proof loading (X3): before the core loads a plugin file it has not
// seen before into its own process, it loads it in a child process first.
//
// The child is a small helper executable, `xdev-plugin-probe`, started with
// posix_spawn (not a bare fork: the host may be multi-threaded, and a forked
// child that dlopens and initializes a plugin can deadlock on a lock another
// thread held at fork time, or find oneTBB/OpenBLAS state whose threads did
// not survive the fork). The helper runs the ordinary loader (load, query,
// validate, initialize, read devices and kernels, shutdown) and reports on a
// pipe. A helper that dies or hangs means the plugin would have taken the
// host down: the plugin is skipped with "crashed during load or initialize,
// in 'initialize': SIGSEGV" or "timed out during load or initialize, in
// 'initialize' (killed after N ms)" (the helper names each call into the
// plugin on the pipe before it makes it), and the host never loads it. A
// plugin the helper skips (wrong ABI, failing init) is skipped with the
// helper's reason, exactly the in-process one.
//
// Successful probes are cached by file identity (path, device, inode, size,
// mtime) in $XDG_CACHE_HOME/xdev/plugin-probe.cache (or ~/.cache/xdev/...;
// no cache when neither is set), so a known plugin costs a stat and a lookup.
// The cache is an optimization only: any error reading or writing it is
// ignored. XDEV_PROBE_PLUGINS=0 turns probing off (plugins load in process
// directly), =always probes every time and leaves the cache alone.
// XDEV_PROBE_TIMEOUT_MS sets the time a probe may take (default 20000).
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <string>

#include <xdev/plugin.h>

namespace xdev::detail {

enum class ProbeMode { kOff, kCached, kAlways };

struct ProbeSettings {
  ProbeMode mode = ProbeMode::kCached;
  std::chrono::milliseconds timeout{20000};
  std::filesystem::path cache_file;  // empty: no cache
  std::filesystem::path helper;      // empty: no helper found, no probing
};

// The settings the environment asks for: XDEV_PROBE_PLUGINS,
// XDEV_PROBE_TIMEOUT_MS, XDG_CACHE_HOME / HOME, and the helper found next to
// this libxdev (<libdir>/xdev/xdev-plugin-probe) or in the build tree.
ProbeSettings probe_settings_from_environment();

struct ProbeResult {
  enum class Kind {
    kLoads,        // the plugin loaded and initialized in the child (or the cache says so)
    kSkipped,      // the loader skips it; `reason` is the loader's reason
    kCrashed,      // the child died or hung; `reason` says how
    kUnavailable,  // no probe could run (no helper, spawn failed): load in process
  };
  Kind kind = Kind::kUnavailable;
  std::string reason;
  bool from_cache = false;
  // What the child learnt before it stopped (kSkipped), as far as it got.
  std::string name;
  std::string plugin_version;
  xdev_version_t abi_version{0, 0};
};

// Probes `file` (unless the cache knows it). Never throws.
ProbeResult probe_plugin(const std::filesystem::path& file, const ProbeSettings& settings);

// The helper's main: `xdev-plugin-probe --report-fd N FILE`.
int plugin_probe_main(int argc, char** argv);

// Probe processes this process started (for tests of the cache).
uint64_t probe_processes_started();
// Forgets which files this process has probed (for tests: the next probe
// consults the cache file again).
void forget_probed_plugins();

}  // namespace xdev::detail
