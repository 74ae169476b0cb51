#include "devices/runtime.hpp"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <random>
#include <set>
#include <system_error>

#include <boost/dll/runtime_symbol_info.hpp>

#include <xdev/error.hpp>

#include "config.hpp"
#include "common/env.hpp"
#include "common/log.hpp"
#include "common/plugin_call.hpp"
#include "common/status.hpp"
#include "loader/plugin_filter.hpp"

namespace fs = std::filesystem;

namespace xdev::detail {
namespace {

std::string physical_description(const PluginDevice& device) {
  return device.description.empty() ? "device: " + std::to_string(device.ordinal) +
                                          ", name: " + device.name
                                    : device.description;
}

}  // namespace

// Highest priority first, then type name, then id.
bool placement_order(const PhysicalDeviceRecord& a, const PhysicalDeviceRecord& b) {
  if (a.priority != b.priority) return a.priority > b.priority;
  if (a.info.device_type != b.info.device_type) return a.info.device_type < b.info.device_type;
  return a.info.id < b.info.id;
}

std::vector<const PhysicalDeviceRecord*> Runtime::visible_devices(
    const DeviceConfig& config) const {
  std::vector<const PhysicalDeviceRecord*> visible;
  std::vector<std::string> types;
  for (const auto& d : devices_) {
    if (std::find(types.begin(), types.end(), d.info.device_type) == types.end())
      types.push_back(d.info.device_type);
  }
  for (const std::string& type : types) {
    auto it = config.visible.find(type);
    if (it == config.visible.end()) {
      for (const auto& d : devices_) {
        if (d.info.device_type == type) visible.push_back(&d);
      }
      continue;
    }
    for (int id : it->second) {
      for (const auto& d : devices_) {
        if (d.info.device_type == type && d.info.id == id) visible.push_back(&d);
      }
    }
  }
  return visible;
}

std::vector<fs::path> split_path_list(const std::string& list) {
  std::vector<fs::path> out;
  size_t start = 0;
  while (start <= list.size()) {
    size_t colon = list.find(':', start);
    if (colon == std::string::npos) colon = list.size();
    if (colon > start) out.emplace_back(list.substr(start, colon - start));
    start = colon + 1;
  }
  return out;
}

std::vector<fs::path> default_plugin_dirs() {
  std::error_code ec;
  fs::path self = boost::dll::this_line_location(ec);
  if (ec || self.empty()) return {};
  fs::path dir = fs::canonical(self, ec).parent_path();
  if (ec) return {};
  std::error_code eq_ec;
  if (fs::equivalent(dir, fs::path(XDEV_BUILD_CORE_DIR), eq_ec) && !eq_ec) {
    return split_path_list(XDEV_BUILD_PLUGIN_PATH);
  }
  return {dir / XDEV_PLUGINDIR_FROM_LIBDIR};
}

Runtime::Runtime(const RuntimeOptions& options) {
  search_path_ = options.plugin_dirs;
  if (options.use_environment) {
    if (const auto list = env::text("XDEV_PLUGIN_PATH")) {
      for (fs::path& p : split_path_list(*list)) search_path_.push_back(std::move(p));
    }
  }
  if (options.use_default_dirs) {
    for (fs::path& p : default_plugin_dirs()) search_path_.push_back(std::move(p));
  }

  // XDEV_PLUGINS (plugin_filter.hpp): only the plugins named are loaded;
  // files named by path join the candidates after the search path's.
  std::optional<PluginFilter> filter;
  if (options.use_environment) filter = PluginFilter::from_environment();
  std::vector<fs::path> candidates = find_plugin_files(search_path_);
  if (filter) {
    for (const fs::path& named : filter->paths()) {
      if (std::find(candidates.begin(), candidates.end(), named) == candidates.end()) {
        candidates.push_back(named);
      }
    }
  }

  std::map<std::string, fs::path> loaded_names;
  for (const fs::path& file : candidates) {
    if (filter && !filter->selects(file)) {
      // Not named: listed as skipped, never opened.
      auto skipped = std::make_unique<LoadedPlugin>();
      skipped->path = file;
      skipped->reason = filter->skip_reason();
      log(XDEV_LOG_DEBUG, "not loading plugin " + file.string() + ": " + skipped->reason);
      plugins_.push_back(std::move(skipped));
      continue;
    }
    std::unique_ptr<LoadedPlugin> plugin = load_plugin(file);
    if (filter && plugin->loaded()) {
      const std::string expected = filter->expected_name(file);
      if (!expected.empty() && plugin->name != expected) {
        // The file name matched an entry, the plugin inside is another one.
        plugin->shut_down();
        plugin->state = LoadedPlugin::State::kSkipped;
        plugin->reason = "the file name matches '" + expected + "' in XDEV_PLUGINS, but the "
                         "plugin is named '" + plugin->name + "'";
        plugin->types.clear();
        plugin->devices.clear();
      }
    }
    if (plugin->loaded()) {
      auto [it, fresh] = loaded_names.emplace(plugin->name, plugin->path);
      if (!fresh) {
        plugin->shut_down();
        plugin->state = LoadedPlugin::State::kSkipped;
        plugin->reason = "a plugin named '" + plugin->name + "' is already loaded from " +
                         it->second.string();
        plugin->types.clear();
        plugin->devices.clear();
      }
    }
    if (!plugin->loaded()) {
      log(XDEV_LOG_WARNING, "skipping plugin " + plugin->path.string() + ": " + plugin->reason);
    } else {
      log(XDEV_LOG_DEBUG, "loaded plugin '" + plugin->name + "' from " + plugin->path.string());
    }
    plugins_.push_back(std::move(plugin));
  }

  number_devices();
  std::stable_sort(devices_.begin(), devices_.end(), placement_order);
  if (options.use_environment) apply_visible_devices_variable();
  read_kernels();
}

// Numbers the devices per type, in plugin load order, then ordinal; except
// that the host's CPU device (type CPU on platform "host", which only the cpu
// plugin may offer: the loader skips others) comes first, so another plugin
// that offers CPU devices never takes CPU:0, whatever the order of the
// plugin files (docs/plugin-abi.md, "Device numbering").
void Runtime::number_devices() {
  std::random_device entropy;
  std::mt19937_64 random(
      (static_cast<uint64_t>(entropy()) << 32) ^ entropy() ^
      static_cast<uint64_t>(reinterpret_cast<uintptr_t>(this)));
  std::set<uint64_t> incarnations{0};
  std::map<std::string, int> next_id;
  auto is_host = [](const PluginDeviceType& type) {
    return type.type == "CPU" && type.platform == "host";
  };
  for (const bool host_pass : {true, false}) {
    for (const auto& plugin : plugins_) {
      if (!plugin->loaded()) continue;
      for (const PluginDevice& device : plugin->devices) {
        const PluginDeviceType& type = plugin->types[device.type_index];
        if (is_host(type) != host_pass) continue;
        PhysicalDeviceRecord record;
        record.plugin = plugin.get();
        record.ordinal = device.ordinal;
        record.priority = type.priority;
        record.max_allocation_bytes = device.max_allocation_bytes;
        record.memory_kind = device.memory_kind;
        PhysicalDevice& info = record.info;
        info.device_type = type.type;
        info.id = next_id[type.type]++;
        info.name = "/physical_device:" + type.type + ":" + std::to_string(info.id);
        info.platform = type.platform;
        info.plugin = plugin->name;
        info.model = device.name;
        info.memory_limit = device.memory_total;
        info.bus_id = device.bus_id;
        info.numa_node = device.numa_node;
        info.physical_device_desc = physical_description(device);
        for (const auto& [key, value] : device.properties) info.properties[key] = value;
        uint64_t incarnation = 0;
        while (!incarnations.insert(incarnation = random()).second) {
        }
        info.incarnation = incarnation;
        devices_.push_back(std::move(record));
      }
    }
  }
}

// X4: XDEV_VISIBLE_DEVICES="GPU:2,GPU:0" keeps, per type named, only the listed
// physical devices, in that order, renumbered from 0 (GPU:2 becomes GPU:0).
// A bare index is a GPU's, as in CUDA_VISIBLE_DEVICES ("1" is GPU:1).
// Types it does not name keep all their devices. Malformed entries are
// reported and ignored: a typo in a variable must not stop the program. An
// entry naming a device that does not exist is reported and hides its type
// like the others (GPU:7 on a one-GPU machine leaves no GPU visible), except
// the CPU: a program needs its host device, so the CPU stays visible.
void Runtime::apply_visible_devices_variable() {
  const std::string list = env::text("XDEV_VISIBLE_DEVICES").value_or("");
  if (list.empty()) return;
  std::map<std::string, std::vector<int>> selected;
  size_t start = 0;
  while (start <= list.size()) {
    size_t comma = list.find(',', start);
    if (comma == std::string::npos) comma = list.size();
    std::string entry = list.substr(start, comma - start);
    start = comma + 1;
    if (entry.empty()) continue;
    if (std::all_of(entry.begin(), entry.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      entry = "GPU:" + entry;
    }
    try {
      DeviceName name = DeviceName::parse(entry);
      if (!name.type || !name.id || name.job || name.replica || name.task) {
        throw Error(ErrorCode::kInvalidArgument, "expected TYPE:N");
      }
      auto& ids = selected[*name.type];
      bool exists = std::any_of(devices_.begin(), devices_.end(), [&](const auto& d) {
        return d.info.device_type == *name.type && d.info.id == *name.id;
      });
      if (!exists) {
        std::string present;
        for (const auto& d : devices_) {
          if (d.info.device_type != *name.type) continue;
          present += (present.empty() ? "" : ", ") + d.info.device_type + ":" +
                     std::to_string(d.info.id);
        }
        log(XDEV_LOG_WARNING, "XDEV_VISIBLE_DEVICES: \"" + entry +
                                  "\" names no physical device (" +
                                  (present.empty() ? "there is no " + *name.type + " device"
                                                   : "there are " + present) +
                                  ")");
      } else if (std::find(ids.begin(), ids.end(), *name.id) == ids.end()) {
        ids.push_back(*name.id);
      }
    } catch (const Error& e) {
      log(XDEV_LOG_WARNING,
          "XDEV_VISIBLE_DEVICES: ignoring \"" + entry + "\": " + std::string(e.what()));
    }
  }
  for (auto it = selected.begin(); it != selected.end();) {
    const std::string& type = it->first;
    if (!it->second.empty()) {
      ++it;
    } else if (type == "CPU") {
      log(XDEV_LOG_WARNING, "XDEV_VISIBLE_DEVICES=\"" + list +
                                "\" names no existing CPU device; every CPU stays visible (a "
                                "program needs its host device)");
      it = selected.erase(it);
    } else {
      log(XDEV_LOG_WARNING, "XDEV_VISIBLE_DEVICES=\"" + list + "\" names no existing " + type +
                                " device: no " + type + " device is visible");
      ++it;
    }
  }
  if (selected.empty()) return;
  std::vector<PhysicalDeviceRecord> kept;
  for (const PhysicalDeviceRecord& d : devices_) {
    if (!selected.count(d.info.device_type)) kept.push_back(d);
  }
  for (const auto& [type, ids] : selected) {
    int next = 0;
    for (int id : ids) {
      for (const PhysicalDeviceRecord& d : devices_) {
        if (d.info.device_type != type || d.info.id != id) continue;
        PhysicalDeviceRecord record = d;
        record.info.id = next++;
        record.info.name = "/physical_device:" + type + ":" + std::to_string(record.info.id);
        kept.push_back(std::move(record));
      }
    }
  }
  std::stable_sort(kept.begin(), kept.end(), placement_order);
  devices_ = std::move(kept);
}

namespace {

// Adds the well-formed kernels of one list (`kernels` or, ABI 1.5,
// `device_kernels` of device `ordinal`) to `add`; the malformed ones are
// logged and ignored.
// The size of a kernel descriptor of ABI 1.0, frozen: a plugin built against any
// 1.x header hands at least this much, and a descriptor that grows in a later minor
// version must not drop the kernels of older plugins (the current size would).
constexpr size_t kKernelInfoStructSize_1_0 = XDEV_STRUCT_SIZE(xdev_kernel_info_t, kernel_context);

template <typename Add>
void register_kernels(const LoadedPlugin& plugin, const char* slot,
                      std::optional<uint32_t> ordinal, const xdev_kernel_info_t* const* kernels,
                      uint32_t count, Add&& add) {
  for (uint32_t i = 0; i < count && kernels != nullptr; ++i) {
    const xdev_kernel_info_t* k = kernels[i];
    std::string where = "plugin " + plugin.name + " (" + plugin.path.string() + "): " + slot +
                        (ordinal ? "(device " + std::to_string(*ordinal) + ")" : "") +
                        " kernel " + std::to_string(i);
    if (k == nullptr || k->struct_size < kKernelInfoStructSize_1_0 || k->op == nullptr ||
        k->fn == nullptr) {
      log(XDEV_LOG_WARNING, where + " is malformed (NULL, small struct_size, no op or no "
                            "function); ignored");
      continue;
    }
    if (k->type_index >= plugin.types.size()) {
      log(XDEV_LOG_WARNING, where + " (" + k->op + ") names device type index " +
                                std::to_string(k->type_index) + "; ignored");
      continue;
    }
    if (ordinal && k->type_index != plugin.devices[*ordinal].type_index) {
      log(XDEV_LOG_WARNING,
          where + " (" + k->op + ") names device type " + plugin.types[k->type_index].type +
              ", but device " + std::to_string(*ordinal) + " is of type " +
              plugin.types[plugin.devices[*ordinal].type_index].type + "; ignored");
      continue;
    }
    std::optional<OpId> op = op_from_name(k->op);
    if (!op) {
      // Most often a misspelling ("Matmul"): said at load, not only at debug level.
      log(XDEV_LOG_WARNING, where + ": op '" + std::string(k->op) +
                                "' is not in the op table (docs/ops.md); the kernel is ignored");
      continue;
    }
    add(k->type_index, *op,
        KernelEntry{k->fn, k->kernel_context, k->input_dtypes, k->output_dtypes});
  }
}

}  // namespace

void Runtime::read_kernels() {
  for (const auto& plugin : plugins_) {
    if (!plugin->loaded()) continue;
    for (uint32_t t = 0; t < plugin->types.size(); ++t) {
      kernels_[{plugin.get(), t}] = std::make_unique<KernelTable>();
    }
    const std::string& file = plugin->path.native();
    const xdev_kernel_info_t* const* kernels = nullptr;
    uint32_t count = 0;
    if (xdev_status_t* s = call_plugin({file, "kernels", ""}, plugin->api->kernels,
                                       plugin->handle, &kernels, &count)) {
      log(XDEV_LOG_WARNING, "plugin " + plugin->name + ": kernels failed, none registered: " +
                                take_message(s));
    } else {
      register_kernels(*plugin, "kernels", std::nullopt, kernels, count,
                       [&](uint32_t type, OpId op, const KernelEntry& entry) {
                         kernels_[{plugin.get(), type}]->add(op, entry);
                       });
    }
    // ABI 1.5: each device's own kernels first, then its type's.
    const xdev_plugin_api_t* api = plugin->api;
    const bool per_device =
        XDEV_HAS_FIELD(api, xdev_plugin_api_t, device_kernels) && api->device_kernels != nullptr;
    for (const PluginDevice& device : plugin->devices) {
      auto table = std::make_unique<KernelTable>();
      if (per_device) {
        kernels = nullptr;
        count = 0;
        if (xdev_status_t* s = call_plugin({file, "device_kernels", ""}, api->device_kernels,
                                           plugin->handle, device.ordinal, &kernels, &count)) {
          log(XDEV_LOG_WARNING, "plugin " + plugin->name + ": device_kernels(" +
                                    std::to_string(device.ordinal) +
                                    ") failed, none registered for that device: " +
                                    take_message(s));
        } else {
          register_kernels(*plugin, "device_kernels", device.ordinal, kernels, count,
                           [&](uint32_t, OpId op, const KernelEntry& entry) {
                             table->add(op, entry);
                           });
        }
      }
      table->append(*kernels_[{plugin.get(), device.type_index}]);
      device_kernels_[{plugin.get(), device.ordinal}] = std::move(table);
    }
  }
}

const KernelTable& Runtime::kernel_table(const LoadedPlugin* plugin, uint32_t type_index) {
  return *kernels_.at({plugin, type_index});
}

const KernelTable& Runtime::device_kernel_table(const LoadedPlugin* plugin, uint32_t ordinal) {
  return *device_kernels_.at({plugin, ordinal});
}

const PhysicalDeviceRecord& Runtime::physical_device(const std::string& name) const {
  for (const auto& d : devices_) {
    if (d.info.name == name) return d;
  }
  throw Error(ErrorCode::kNotFound, "no physical device named \"" + name + "\"");
}

void Runtime::throw_initialized(const char* what) {
  throw Error(ErrorCode::kFailedPrecondition,
              std::string(what) + " cannot be modified after being initialized");
}

bool Runtime::same_effect(const DeviceConfig& a, const DeviceConfig& b) const {
  const std::vector<const PhysicalDeviceRecord*> va = visible_devices(a), vb = visible_devices(b);
  if (va != vb || a.logical != b.logical || a.memory_fraction != b.memory_fraction) return false;
  for (const PhysicalDeviceRecord* d : va) {
    if (memory_growth(a, *d) != memory_growth(b, *d)) return false;
  }
  return true;
}

bool memory_growth(const DeviceConfig& config, const PhysicalDeviceRecord& device) {
  if (auto g = config.memory_growth.find(device.info.name); g != config.memory_growth.end()) {
    return g->second;
  }
  // ABI 1.5: the declared memory kind decides; unknown values count as
  // undeclared.
  switch (device.memory_kind) {
    case XDEV_MEMORY_KIND_HOST:
      return true;
    case XDEV_MEMORY_KIND_DEVICE:
      return env::force_gpu_allow_growth().value_or(false);
    default:
      break;
  }
  // Undeclared (plugins before 1.5): from the type name, as before.
  if (device.info.device_type == "CPU") return true;
  return device.info.device_type == "GPU" && env::force_gpu_allow_growth().value_or(false);
}

void Runtime::initialize_devices() {
  std::lock_guard lock(init_mutex_);
  if (initialized_.load()) return;

  std::vector<std::unique_ptr<LogicalDeviceState>> logical;
  std::map<std::string, int> next_id;
  const std::vector<const PhysicalDeviceRecord*> visible = visible_devices(config_);

  for (const PhysicalDeviceRecord* phys : visible) {
    auto opened = std::make_shared<OpenedDevice>();
    opened->plugin = phys->plugin;
    opened->ordinal = phys->ordinal;
    if (xdev_status_t* s =
            call_plugin({phys->plugin->path.native(), "device_open", phys->info.name},
                        phys->plugin->api->device_open, phys->plugin->handle, phys->ordinal,
                        &opened->handle)) {
      // A device that cannot be opened is left out; the others still work.
      log(XDEV_LOG_ERROR, "cannot open " + phys->info.name + " (plugin " + phys->plugin->name +
                              "): " + take_message(s));
      continue;
    }
    uint64_t free_bytes = phys->info.memory_limit, total_bytes = phys->info.memory_limit;
    if (xdev_status_t* s =
            call_plugin({phys->plugin->path.native(), "memory_query", phys->info.name},
                        phys->plugin->api->memory_query, opened->handle, &free_bytes,
                        &total_bytes)) {
      log(XDEV_LOG_WARNING, "memory_query on " + phys->info.name + ": " + take_message(s));
    }
    const std::string& type = phys->info.device_type;
    const bool growth = memory_growth(config_, *phys);
    std::vector<LogicalDeviceConfiguration> entries{LogicalDeviceConfiguration{}};
    if (auto l = config_.logical.find(phys->info.name); l != config_.logical.end())
      entries = l->second;
    const KernelTable& kernels = device_kernel_table(phys->plugin, phys->ordinal);
    for (const LogicalDeviceConfiguration& entry : entries) {
      PoolOptions pool;
      pool.allow_growth = growth;
      pool.max_region_bytes = phys->max_allocation_bytes;  // ABI 1.5; 0: none
      // Default: the fraction of what the device has free now, in whole MiB.
      pool.limit_bytes =
          entry.memory_limit
              ? static_cast<uint64_t>(*entry.memory_limit) << 20
              : (static_cast<uint64_t>(static_cast<double>(free_bytes) * config_.memory_fraction) >>
                 20)
                    << 20;
      int id = next_id[type]++;
      Device info{canonical_device_name(type, id), type, id};
      logical.push_back(std::make_unique<LogicalDeviceState>(
          info, static_cast<int>(logical.size()), *phys, opened, kernels, pool));
    }
  }
  logical_ = std::move(logical);
  initialized_.store(true, std::memory_order_release);
}

LogicalDeviceState* Runtime::find_logical_device(const DeviceName& name) {
  for (const auto& d : logical_devices()) {
    DeviceName full;
    full.job = "localhost";
    full.replica = 0;
    full.task = 0;
    full.type = d->info().device_type;
    full.id = d->info().id;
    if (name.matches(full)) return d.get();
  }
  return nullptr;
}

Runtime::~Runtime() {
  // Logical devices first (streams, pools, device handles), then the plugins
  // in reverse load order.
  logical_.clear();
  for (auto it = plugins_.rbegin(); it != plugins_.rend(); ++it) (*it)->shut_down();
}

Runtime& Runtime::global() {
  static Runtime* runtime = new Runtime(RuntimeOptions{});
  return *runtime;
}

std::string device_list(Runtime& rt) {
  std::string out;
  for (const auto& d : rt.logical_devices()) {
    if (!out.empty()) out += ", ";
    out += d->name();
  }
  return out.empty() ? "none" : out;
}

std::string requested_name(const DeviceName& name) {
  std::string out = "/job:" + name.job.value_or("localhost");
  out += "/replica:" + std::to_string(name.replica.value_or(0));
  out += "/task:" + std::to_string(name.task.value_or(0));
  if (name.type) {
    out += "/device:" + *name.type + ":" + (name.id ? std::to_string(*name.id) : "*");
  }
  return out;
}

LogicalDeviceState* resolve_device(std::string_view text) {
  Runtime& rt = Runtime::global();
  DeviceName name = DeviceName::parse(text);
  LogicalDeviceState* device = rt.find_logical_device(name);
  if (device == nullptr) {
    throw Error(ErrorCode::kNotFound, requested_name(name) + " unknown device (devices: " +
                                          device_list(rt) + ")");
  }
  return device;
}

}  // namespace xdev::detail
