#include "loader/plugin_loader.hpp"

#include <dlfcn.h>
#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <set>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>

#include "common/text.hpp"
#include "common/log.hpp"
#include "common/plugin_call.hpp"
#include "loader/plugin_probe.hpp"
#include "common/status.hpp"
#include "validation/core_layer.hpp"

namespace fs = std::filesystem;

namespace xdev::detail {
namespace {

// Thrown inside load_plugin only; becomes the skip reason.
struct Skip {
  std::string reason;
};

std::atomic<LoaderCallObserver> g_call_observer{nullptr};

// Tells the observer (the probe helper) which call into the plugin comes next.
void note_call(const char* call) {
  if (LoaderCallObserver observer = g_call_observer.load(std::memory_order_relaxed)) {
    observer(call);
  }
}

std::string version_text(xdev_version_t v) {
  return std::to_string(v.major) + "." + std::to_string(v.minor);
}

// Boost.DLL puts dlerror()'s text in
// "... (dlerror system message: PATH: TEXT): <errno text>"; keep TEXT (the
// reason is printed beside the path already).
std::string dlopen_reason(const std::system_error& e, const fs::path& path) {
  std::string what = e.what();
  const std::string marker = "dlerror system message: ";
  size_t at = what.find(marker);
  if (at == std::string::npos) return what;
  std::string text = what.substr(at + marker.size());
  size_t close = text.rfind("): ");
  if (close != std::string::npos) text.erase(close);
  const std::string prefix = path.string() + ": ";
  if (text.compare(0, prefix.size(), prefix) == 0) text.erase(0, prefix.size());
  return text;
}

bool valid_type_name(const char* s) {
  if (s == nullptr || !std::isalpha(static_cast<unsigned char>(s[0]))) return false;
  size_t n = 0;
  for (; s[n] != '\0'; ++n) {
    if (n >= 31) return false;
    if (!std::isalnum(static_cast<unsigned char>(s[n])) && s[n] != '_') return false;
  }
  return true;
}


std::string str_or_empty(const char* s) { return s != nullptr ? std::string(s) : std::string(); }

// ABI 1.6: a plugin whose memory is handles names device memory only as
// (allocation, offset): it must have the *_at copy slots (copy_peer_at with
// XDEV_CAP_PEER_COPY), and its memory cannot be host addresses. Its old copy
// slots are never called and may be NULL.
void check_handle_memory(const xdev_plugin_api_t* api) {
  if ((api->capabilities & XDEV_CAP_HANDLE_MEMORY) == 0) return;
  if ((api->capabilities & XDEV_CAP_HOST_ADDRESSABLE) != 0) {
    throw Skip{"declares both XDEV_CAP_HANDLE_MEMORY and XDEV_CAP_HOST_ADDRESSABLE (memory "
               "that is handles cannot be host addresses)"};
  }
  const bool in_table = XDEV_HAS_FIELD(api, xdev_plugin_api_t, copy_peer_at);
  const std::pair<const char*, bool> slots[] = {
      {"copy_host_to_device_at", in_table && api->copy_host_to_device_at != nullptr},
      {"copy_device_to_host_at", in_table && api->copy_device_to_host_at != nullptr},
      {"copy_device_to_device_at", in_table && api->copy_device_to_device_at != nullptr},
      {"copy_peer_at", !in_table || (api->capabilities & XDEV_CAP_PEER_COPY) == 0 ||
                           api->copy_peer_at != nullptr},
  };
  for (const auto& [slot, present] : slots) {
    if (present) continue;
    throw Skip{std::string("declares XDEV_CAP_HANDLE_MEMORY but '") + slot + "' is " +
               (in_table ? "NULL" : "beyond its table (struct_size " +
                                        std::to_string(api->struct_size) + ")") +
               (std::string_view(slot) == "copy_peer_at" ? " (it declares XDEV_CAP_PEER_COPY)"
                                                         : "") +
               ": a plugin whose memory is handles must take copies as (allocation, offset)"};
  }
}

// Every REQUIRED slot of the v1.0 table, by name, for validation messages.
void check_required_slots(const xdev_plugin_api_t* api) {
  check_handle_memory(api);
  // With XDEV_CAP_HANDLE_MEMORY (ABI 1.6) the *_at slots replace the old
  // copy slots, which may then be NULL.
  const bool handles = (api->capabilities & XDEV_CAP_HANDLE_MEMORY) != 0;
  const std::pair<const char*, bool> slots[] = {
      {"initialize", api->initialize != nullptr},
      {"shutdown", api->shutdown != nullptr},
      {"device_types", api->device_types != nullptr},
      {"device_count", api->device_count != nullptr},
      {"device_get_properties", api->device_get_properties != nullptr},
      {"device_open", api->device_open != nullptr},
      {"device_close", api->device_close != nullptr},
      {"memory_allocate", api->memory_allocate != nullptr},
      {"memory_free", api->memory_free != nullptr},
      {"memory_query", api->memory_query != nullptr},
      {"stream_create", api->stream_create != nullptr},
      {"stream_destroy", api->stream_destroy != nullptr},
      {"stream_synchronize", api->stream_synchronize != nullptr},
      {"event_create", api->event_create != nullptr},
      {"event_destroy", api->event_destroy != nullptr},
      {"event_record", api->event_record != nullptr},
      {"stream_wait_event", api->stream_wait_event != nullptr},
      {"event_synchronize", api->event_synchronize != nullptr},
      {"event_query", api->event_query != nullptr},
      {"copy_host_to_device", handles || api->copy_host_to_device != nullptr},
      {"copy_device_to_host", handles || api->copy_device_to_host != nullptr},
      {"copy_device_to_device", handles || api->copy_device_to_device != nullptr},
      {"kernels", api->kernels != nullptr},
  };
  for (const auto& [slot, present] : slots) {
    if (!present) throw Skip{"required slot '" + std::string(slot) + "' is NULL"};
  }
  // An optional slot and its capability bit come together: a bit without its
  // slot, and (since ABI 1.5) a slot without its bit, skip the plugin.
  struct Optional {
    const char* slot;
    bool in_table;  // the table's struct_size covers the slot
    bool present;
    uint64_t cap;
    const char* cap_name;
  };
  const bool has_timing = XDEV_HAS_FIELD(api, xdev_plugin_api_t, event_elapsed_ms);
  const bool has_peer_at = XDEV_HAS_FIELD(api, xdev_plugin_api_t, copy_peer_at);
  const bool has_collectives = XDEV_HAS_FIELD(api, xdev_plugin_api_t, collective);
  const Optional optional[] = {
      {"host_memory_allocate", true, api->host_memory_allocate != nullptr, XDEV_CAP_HOST_MEMORY,
       "XDEV_CAP_HOST_MEMORY"},
      {"host_memory_free", true, api->host_memory_free != nullptr, XDEV_CAP_HOST_MEMORY,
       "XDEV_CAP_HOST_MEMORY"},
      // A handle plugin's copy_peer is never called: copy_peer_at carries the
      // bit (check_handle_memory), copy_peer may be NULL.
      {"copy_peer", true,
       api->copy_peer != nullptr || (handles && (api->capabilities & XDEV_CAP_PEER_COPY) != 0),
       XDEV_CAP_PEER_COPY, "XDEV_CAP_PEER_COPY"},
      // ABI 1.4: the timing slot, read only when the table has it.
      {"event_elapsed_ms", has_timing, has_timing && api->event_elapsed_ms != nullptr,
       XDEV_CAP_EVENT_TIMING, "XDEV_CAP_EVENT_TIMING"},
      // ABI 1.7: the device collective slots, read only when the table has them.
#define XDEV_COLLECTIVE_SLOT_(slot)                                                   \
  {#slot, has_collectives, has_collectives && api->slot != nullptr, XDEV_CAP_COLLECTIVES, \
   "XDEV_CAP_COLLECTIVES"}
      XDEV_COLLECTIVE_SLOT_(collective_id),
      XDEV_COLLECTIVE_SLOT_(communicator_create),
      XDEV_COLLECTIVE_SLOT_(communicator_destroy),
      XDEV_COLLECTIVE_SLOT_(communicator_abort),
      XDEV_COLLECTIVE_SLOT_(communicator_poll),
      XDEV_COLLECTIVE_SLOT_(collective),
#undef XDEV_COLLECTIVE_SLOT_
  };
  // ABI 1.6: copy_peer_at, like copy_peer, only with the bit (a pointer
  // plugin with the bit may leave it NULL; check_handle_memory asks it of
  // a handle plugin).
  if (has_peer_at && api->copy_peer_at != nullptr &&
      (api->capabilities & XDEV_CAP_PEER_COPY) == 0) {
    throw Skip{"slot 'copy_peer_at' is set but XDEV_CAP_PEER_COPY is not declared (an optional "
               "slot whose bit is clear must be NULL)"};
  }
  for (const Optional& o : optional) {
    const bool declared = (api->capabilities & o.cap) != 0;
    if (declared && !o.present) {
      throw Skip{std::string("declares ") + o.cap_name + " but '" + o.slot + "' is " +
                 (o.in_table ? "NULL"
                             : "beyond its table (struct_size " +
                                   std::to_string(api->struct_size) + ")")};
    }
    if (!declared && o.present) {
      throw Skip{std::string("slot '") + o.slot + "' is set but " + o.cap_name +
                 " is not declared (an optional slot whose bit is clear must be NULL)"};
    }
  }
}

// Platform names are lower case (ABI 1.5 enforces what 1.0 said).
bool has_upper_case(const char* s) {
  for (; *s != '\0'; ++s) {
    if (*s >= 'A' && *s <= 'Z') return true;
  }
  return false;
}

// The platform of the host's CPU device: only the cpu plugin may offer it,
// so that CPU:0 is always the host (docs/plugin-abi.md, "Device numbering").
constexpr const char* kHostPlatform = "host";
constexpr const char* kHostPluginName = "cpu";

// Reads the device types and devices, checking that the answers agree.
void read_devices(LoadedPlugin& plugin) {
  const xdev_plugin_api_t* api = plugin.api;
  const xdev_device_type_info_t* const* types = nullptr;
  uint32_t type_count = 0;
  const std::string& file = plugin.path.native();
  note_call("device_types");
  if (xdev_status_t* s = call_plugin({file, "device_types", ""}, api->device_types, plugin.handle,
                                     &types, &type_count)) {
    throw Skip{"device_types failed: " + take_message(s)};
  }
  if (type_count > kMaxDeviceTypesPerPlugin) {
    throw Skip{"device_types reported " + std::to_string(type_count) +
               " types; a plugin may offer at most " +
               std::to_string(kMaxDeviceTypesPerPlugin)};
  }
  if (type_count > 0 && types == nullptr) {
    throw Skip{"device_types reported " + std::to_string(type_count) +
               " types but returned no array"};
  }
  std::set<std::string> seen_types;
  for (uint32_t i = 0; i < type_count; ++i) {
    const xdev_device_type_info_t* t = types[i];
    std::string where = "device type " + std::to_string(i);
    if (t == nullptr) throw Skip{where + " is NULL"};
    if (t->struct_size < XDEV_DEVICE_TYPE_INFO_STRUCT_SIZE_1_0) {
      throw Skip{where + " has struct_size " + std::to_string(t->struct_size) +
                 ", smaller than the v1.0 size " +
                 std::to_string(XDEV_DEVICE_TYPE_INFO_STRUCT_SIZE_1_0)};
    }
    if (!valid_type_name(t->type)) {
      throw Skip{where + " has an invalid type name \"" + str_or_empty(t->type) +
                 "\" (letters, digits and '_', starting with a letter, at most 31)"};
    }
    if (t->platform == nullptr || t->platform[0] == '\0') {
      throw Skip{where + " (" + t->type + ") has no platform name"};
    }
    if (has_upper_case(t->platform)) {
      throw Skip{where + " (" + t->type + ") has platform \"" + t->platform +
                 "\": platform names are lower case"};
    }
    if (t->platform == std::string_view(kHostPlatform) && plugin.name != kHostPluginName) {
      throw Skip{where + " (" + t->type + ") has platform \"host\", which only the '" +
                 kHostPluginName + "' plugin may offer (its CPU device is always CPU:0)"};
    }
    PluginDeviceType info{to_upper(t->type), t->platform, t->priority};
    // ABI 1.3: the DLPack device type, read only when the struct has it.
    if (XDEV_HAS_FIELD(t, xdev_device_type_info_t, dlpack_device_type) &&
        t->dlpack_device_type != XDEV_DLPACK_NONE) {
      if (t->dlpack_device_type < 0) {
        throw Skip{where + " (" + info.type + ") has a negative dlpack_device_type " +
                   std::to_string(t->dlpack_device_type)};
      }
      info.dlpack_device_type = t->dlpack_device_type;
      info.dlpack_declared = true;
    } else {
      info.dlpack_device_type = (api->capabilities & XDEV_CAP_HOST_ADDRESSABLE) != 0
                                    ? XDEV_DLPACK_CPU
                                    : XDEV_DLPACK_EXT_DEV;
    }
    if (!seen_types.insert(info.type).second) {
      throw Skip{"device type " + info.type + " is offered twice"};
    }
    plugin.types.push_back(std::move(info));
  }

  uint32_t count = 0;
  note_call("device_count");
  if (xdev_status_t* s =
          call_plugin({file, "device_count", ""}, api->device_count, plugin.handle, &count)) {
    throw Skip{"device_count failed: " + take_message(s)};
  }
  if (count > kMaxDevicesPerPlugin) {
    throw Skip{"device_count reported " + std::to_string(count) +
               " devices; a plugin may report at most " + std::to_string(kMaxDevicesPerPlugin)};
  }
  if (count > 0 && type_count == 0) {
    throw Skip{"reports " + std::to_string(count) + " devices but offers no device type"};
  }
  for (uint32_t ordinal = 0; ordinal < count; ++ordinal) {
    xdev_device_properties_t props{};
    props.struct_size = XDEV_DEVICE_PROPERTIES_STRUCT_SIZE;
    std::string where = "device " + std::to_string(ordinal);
    note_call("device_get_properties");
    if (xdev_status_t* s = call_plugin({file, "device_get_properties", ""},
                                       api->device_get_properties, plugin.handle, ordinal,
                                       &props)) {
      throw Skip{where + ": device_get_properties failed: " + take_message(s)};
    }
    if (props.type_index >= type_count) {
      throw Skip{where + " reports type index " + std::to_string(props.type_index) +
                 ", but the plugin offers " + std::to_string(type_count) + " type(s)"};
    }
    if (props.name == nullptr || props.name[0] == '\0') throw Skip{where + " has no name"};
    where += " (" + std::string(props.name) + ")";
    if (props.memory_total == 0) {
      throw Skip{where + " reports memory_total 0; a device must report the memory it has"};
    }
    if (props.property_count > 0 && props.properties == nullptr) {
      throw Skip{where + " reports " + std::to_string(props.property_count) +
                 " properties but no array"};
    }
    PluginDevice device;
    device.ordinal = ordinal;
    device.type_index = props.type_index;
    device.name = props.name;
    device.memory_total = props.memory_total;
    device.bus_id = str_or_empty(props.bus_id);
    device.numa_node = props.numa_node;
    device.description = str_or_empty(props.description);
    // ABI 1.5: zero-filled above, so a plugin that does not know the fields
    // declares nothing.
    device.max_allocation_bytes = props.max_allocation_bytes;
    device.memory_kind = props.memory_kind;
    for (uint32_t k = 0; k < props.property_count; ++k) {
      if (props.properties[k].key == nullptr) {
        throw Skip{where + " property " + std::to_string(k) + " has no key"};
      }
      device.properties.emplace_back(props.properties[k].key,
                                     str_or_empty(props.properties[k].value));
    }
    plugin.devices.push_back(std::move(device));
  }
}

// Keeps the library mapped for the rest of the process (see shut_down()).
void pin_library(const fs::path& path) {
  void* pinned = ::dlopen(path.c_str(), RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);
  (void)pinned;  // one more reference, deliberately never closed
}

void adopt_table(LoadedPlugin& plugin, const xdev_plugin_api_t* api);

// The host table the plugin will call back through, named after its file.
void give_host_table(LoadedPlugin& plugin) {
  plugin.host_context =
      std::make_unique<HostContext>(HostContext{plugin.path.filename().string()});
  plugin.host = make_host_api(plugin.host_context.get());
}

void load_into(LoadedPlugin& plugin) {
  note_call("dlopen");
  try {
    plugin.library.load(plugin.path, boost::dll::load_mode::rtld_now |
                                         boost::dll::load_mode::rtld_local);
  } catch (const std::system_error& e) {
    throw Skip{"cannot be loaded: " + dlopen_reason(e, plugin.path)};
  }
  if (!plugin.library.has(XDEV_PLUGIN_ENTRY_SYMBOL)) {
    throw Skip{"missing entry symbol '" XDEV_PLUGIN_ENTRY_SYMBOL "' (export it with "
               "XDEV_PLUGIN_EXPORT)"};
  }
  auto query = plugin.library.get<xdev_status_t*(xdev_plugin_query_args_t*)>(
      XDEV_PLUGIN_ENTRY_SYMBOL);

  give_host_table(plugin);

  xdev_plugin_query_args_t args{};
  args.struct_size = XDEV_PLUGIN_QUERY_ARGS_STRUCT_SIZE;
  args.core_min_version = {XDEV_ABI_VERSION_MAJOR, 0};
  args.core_max_version = {XDEV_ABI_VERSION_MAJOR, XDEV_ABI_VERSION_MINOR};
  args.host = &plugin.host;
  note_call(XDEV_PLUGIN_ENTRY_SYMBOL);
  if (xdev_status_t* s = query(&args)) {
    throw Skip{XDEV_PLUGIN_ENTRY_SYMBOL " failed: " + take_message(s)};
  }
  adopt_table(plugin, args.plugin_api);
}

// Everything after the query: the table's checks, initialize, the devices.
// The host table is plugin.host (made before the query).
void adopt_table(LoadedPlugin& plugin, const xdev_plugin_api_t* api) {
  if (api == nullptr) throw Skip{XDEV_PLUGIN_ENTRY_SYMBOL " returned no plugin table"};
  plugin.abi_version = api->abi_version;
  if (api->abi_version.major != XDEV_ABI_VERSION_MAJOR) {
    throw Skip{"built for plugin ABI " + version_text(api->abi_version) +
               ", but this core supports ABI " + std::to_string(XDEV_ABI_VERSION_MAJOR) +
               ".x (up to " + version_text({XDEV_ABI_VERSION_MAJOR, XDEV_ABI_VERSION_MINOR}) +
               "); major versions must match"};
  }
  if (api->struct_size < kPluginApiV1Size) {
    throw Skip{"plugin table struct_size " + std::to_string(api->struct_size) +
               " is smaller than the v1.0 table (" + std::to_string(kPluginApiV1Size) +
               " bytes)"};
  }
  if (api->name == nullptr || api->name[0] == '\0') throw Skip{"plugin table has no name"};
  plugin.name = api->name;
  plugin.host_context->plugin_name = plugin.name;
  plugin.plugin_version = str_or_empty(api->plugin_version);
  check_required_slots(api);
  // XDEV_VALIDATE=1: every call goes through the validation layer.
  if (validation_enabled()) api = validate_plugin(api, &plugin.host, plugin.path);

  xdev_plugin_init_args_t init{};
  init.struct_size = XDEV_PLUGIN_INIT_ARGS_STRUCT_SIZE;
  init.host = &plugin.host;
  xdev_plugin_t* handle = nullptr;
  // From here on the plugin may have started threads: never unmap it.
  pin_library(plugin.path);
  note_call("initialize");
  if (xdev_status_t* s =
          call_plugin({plugin.path.native(), "initialize", ""}, api->initialize, &init, &handle)) {
    throw Skip{"initialize failed: " + take_message(s)};
  }
  if (handle == nullptr) throw Skip{"initialize succeeded but returned no plugin state"};
  plugin.api = api;
  plugin.handle = handle;
  try {
    read_devices(plugin);
  } catch (...) {
    plugin.shut_down();
    throw;
  }
  if (api->describe_status != nullptr) {
    note_call("describe_status");
    plugin.status_text = str_or_empty(call_plugin_or<const char*>(
        {plugin.path.native(), "describe_status", ""}, nullptr, api->describe_status, handle));
  }
  plugin.state = LoadedPlugin::State::kLoaded;
}

}  // namespace

void LoadedPlugin::shut_down() noexcept {
  if (api != nullptr && handle != nullptr) {
    note_call("shutdown");
    call_plugin_void({path.native(), "shutdown", ""}, api->shutdown, handle);
  }
  handle = nullptr;
}

LoadedPlugin::~LoadedPlugin() {
  shut_down();
  // The shared_library member unloads its reference; the pin keeps the code.
}

void set_loader_call_observer(LoaderCallObserver observer) {
  g_call_observer.store(observer, std::memory_order_relaxed);
}

void note_loader_call(const char* call) { note_call(call); }

xdev_version_t core_abi_version() { return {XDEV_ABI_VERSION_MAJOR, XDEV_ABI_VERSION_MINOR}; }

std::vector<fs::path> find_plugin_files(const std::vector<fs::path>& dirs) {
  std::vector<fs::path> files;
  std::set<std::pair<dev_t, ino_t>> seen;
  for (const fs::path& dir : dirs) {
    std::error_code ec;
    std::vector<fs::path> here;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
      const fs::path& p = it->path();
      if (p.extension() != ".so") continue;
      std::error_code type_ec;
      if (!fs::is_regular_file(p, type_ec)) continue;
      here.push_back(p);
    }
    std::sort(here.begin(), here.end());
    for (const fs::path& p : here) {
      struct stat st {};
      if (::stat(p.c_str(), &st) != 0) continue;
      if (!seen.insert({st.st_dev, st.st_ino}).second) continue;
      std::error_code canon_ec;
      fs::path canonical = fs::canonical(p, canon_ec);
      files.push_back(canon_ec ? p : canonical);
    }
  }
  return files;
}

std::unique_ptr<LoadedPlugin> load_plugin(const fs::path& file) {
  const ProbeSettings settings = probe_settings_from_environment();
  if (settings.mode != ProbeMode::kOff) {
    ProbeResult probe = probe_plugin(file, settings);
    if (probe.kind == ProbeResult::Kind::kSkipped || probe.kind == ProbeResult::Kind::kCrashed) {
      // The child already found out: never load it here.
      auto plugin = std::make_unique<LoadedPlugin>();
      plugin->path = file;
      plugin->state = LoadedPlugin::State::kSkipped;
      plugin->reason = std::move(probe.reason);
      plugin->name = std::move(probe.name);
      plugin->plugin_version = std::move(probe.plugin_version);
      plugin->abi_version = probe.abi_version;
      return plugin;
    }
    if (probe.kind == ProbeResult::Kind::kUnavailable) {
      log(XDEV_LOG_DEBUG, "plugin " + file.string() + ": loading without a probe: " + probe.reason);
    }
  }
  return load_plugin_in_process(file);
}

namespace {

// Runs `load` on a fresh record for `file`; whatever it throws skips the plugin.
template <typename Load>
std::unique_ptr<LoadedPlugin> load_guarded(const fs::path& file, Load&& load) {
  auto plugin = std::make_unique<LoadedPlugin>();
  plugin->path = file;
  try {
    load(*plugin);
  } catch (const Skip& skip) {
    plugin->state = LoadedPlugin::State::kSkipped;
    plugin->reason = skip.reason;
  } catch (const std::exception& e) {
    plugin->state = LoadedPlugin::State::kSkipped;
    plugin->reason = std::string("threw a C++ exception while loading: ") + e.what();
  } catch (...) {
    plugin->state = LoadedPlugin::State::kSkipped;
    plugin->reason = "threw a C++ exception while loading";
  }
  if (!plugin->loaded()) {
    // A skipped plugin keeps no live state; its library reference is dropped
    // (a plugin that got as far as initialize stays pinned in memory).
    plugin->api = nullptr;
    plugin->handle = nullptr;
    plugin->types.clear();
    plugin->devices.clear();
  }
  return plugin;
}

}  // namespace

std::unique_ptr<LoadedPlugin> load_plugin_in_process(const fs::path& file) {
  return load_guarded(file, [](LoadedPlugin& plugin) { load_into(plugin); });
}

std::unique_ptr<LoadedPlugin> adopt_plugin_table(const fs::path& label,
                                                 const xdev_plugin_api_t* api) {
  return load_guarded(label, [&](LoadedPlugin& plugin) {
    give_host_table(plugin);
    adopt_table(plugin, api);
  });
}

}  // namespace xdev::detail
