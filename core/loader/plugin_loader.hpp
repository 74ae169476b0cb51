// Finding plugin files and loading one plugin safely.
//
// load_plugin() never throws: every way a plugin can be wrong (not loadable,
// no entry symbol, another ABI major, a bad table, a failing init, answers
// that contradict each other) ends as a record in state kSkipped with a reason
// that names the file and what is wrong.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <boost/dll/shared_library.hpp>

#include <xdev/plugin.h>

#include "loader/host_api.hpp"

namespace xdev::detail {

// The v1.0 size of the plugin table: the least a plugin of major 1 provides.
inline constexpr size_t kPluginApiV1Size = 264;
static_assert(kPluginApiV1Size <= XDEV_PLUGIN_API_STRUCT_SIZE);

struct PluginDeviceType {
  std::string type;      // upper case
  std::string platform;
  int32_t priority = 0;
  // ABI 1.3: the DLPack device type of this type's memory. When the plugin
  // declared none, derived: XDEV_DLPACK_CPU for host-addressable memory,
  // else XDEV_DLPACK_EXT_DEV; `dlpack_declared` says which.
  int32_t dlpack_device_type = 0;  // XDEV_DLPACK_NONE
  bool dlpack_declared = false;
};

struct PluginDevice {
  uint32_t ordinal = 0;
  uint32_t type_index = 0;
  std::string name;
  uint64_t memory_total = 0;
  std::string bus_id;
  int32_t numa_node = -1;
  std::string description;
  std::vector<std::pair<std::string, std::string>> properties;
  // ABI 1.5 (0 from older plugins): the largest single memory_allocate, 0 =
  // no limit; the declared XDEV_MEMORY_KIND_*, 0 = undeclared.
  uint64_t max_allocation_bytes = 0;
  int32_t memory_kind = 0;
};

struct LoadedPlugin {
  enum class State { kLoaded, kSkipped };

  std::filesystem::path path;
  State state = State::kSkipped;
  std::string reason;  // why it was skipped (kSkipped only)

  // Known once the table was read.
  std::string name;
  xdev_version_t abi_version{0, 0};
  std::string plugin_version;
  std::string status_text;  // describe_status(), "" when not provided

  // What the plugin reported, copied (kLoaded only).
  std::vector<PluginDeviceType> types;
  std::vector<PluginDevice> devices;

  // Live handles (kLoaded only).
  boost::dll::shared_library library;
  const xdev_plugin_api_t* api = nullptr;
  xdev_plugin_t* handle = nullptr;
  std::unique_ptr<HostContext> host_context;
  xdev_host_api_t host{};

  bool loaded() const { return state == State::kLoaded; }

  // Calls the plugin's shutdown once (kLoaded only). The library itself stays
  // mapped: plugins are pinned (RTLD_NODELETE), because unloading a library
  // whose threads (oneTBB, drivers) may still run crashes the process.
  void shut_down() noexcept;
  ~LoadedPlugin();
};

// Candidate plugin files: every regular file named *.so in `dirs`, in the
// order of `dirs`, sorted by name within a directory. A file reached twice
// (same path, or a link to the same file) is listed once. Missing or
// unreadable directories are skipped.
// The plugin ABI version this core was built with (its highest accepted
// minor). Tests compiled against an older header ask for it here.
xdev_version_t core_abi_version();

std::vector<std::filesystem::path> find_plugin_files(
    const std::vector<std::filesystem::path>& dirs);

// Loads, validates and initializes one plugin. Never throws. A file not seen
// before is first tried in a child process (plugin_probe.hpp), so a plugin
// that crashes or hangs while it loads is skipped instead of taking the
// process down; XDEV_PROBE_PLUGINS=0 turns that off.
std::unique_ptr<LoadedPlugin> load_plugin(const std::filesystem::path& file);

// load_plugin without the probe: everything happens in this process. The
// probe helper itself uses it.
std::unique_ptr<LoadedPlugin> load_plugin_in_process(const std::filesystem::path& file);

// The checks load_plugin_in_process makes once a library handed over its
// table, on a table that comes from no library (`label` stands for the
// file): the table's fields and slots, initialize, the device types and
// devices. Never throws. For the tests and the plugin-answers fuzzer
// (tests/fuzz), which feed it tables made in memory.
std::unique_ptr<LoadedPlugin> adopt_plugin_table(const std::filesystem::path& label,
                                                 const xdev_plugin_api_t* api);

// Called with the name of each call into a plugin the loader is about to
// make ("dlopen", "xdev_plugin_query", "initialize", "device_types", ...,
// "shutdown"), so that the probe helper (plugin_probe.hpp) can say where a
// plugin crashed. nullptr (the default): no one is told.
using LoaderCallObserver = void (*)(const char* call);
void set_loader_call_observer(LoaderCallObserver observer);
// What the observer is told, for the calls made outside the loader (the
// probe's kernel reads).
void note_loader_call(const char* call);

// Answers beyond these are treated as lies (a corrupt or hostile plugin), not
// enumerated.
inline constexpr uint32_t kMaxDeviceTypesPerPlugin = 256;
inline constexpr uint32_t kMaxDevicesPerPlugin = 65536;

}  // namespace xdev::detail
