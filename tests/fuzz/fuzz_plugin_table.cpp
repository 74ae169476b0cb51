// Fuzz target: the loader's validation of what a plugin answers
// (core/loader: adopt_plugin_table, the checks load_plugin makes after a
// library handed over its table). The bytes make up a plugin in memory: its
// table's header (ABI version, size, name, capabilities, missing slots) and
// its answers (device types with their names, platforms and struct sizes,
// the device count, each device's properties). Whatever they say, the
// loader never crashes: the plugin loads, or is skipped with a reason; a
// loaded plugin's records agree with the answers.
#include <array>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include <xdev/plugin.h>
#include <xdev/plugin_helpers.h>

#include "common/log.hpp"
#include "fuzz_input.hpp"
#include "loader/plugin_loader.hpp"

namespace {

using xdev_fuzz::fail;

// Every slot answers "OK" and does nothing, unless replaced below.
template <typename F>
struct Stub;
template <typename R, typename... A>
struct Stub<R (*)(A...)> {
  static R call(A...) {
    if constexpr (!std::is_void_v<R>) return R{};
  }
};
template <typename R, typename... A>
struct Stub<R (*)(A...) noexcept> {
  static R call(A...) noexcept {
    if constexpr (!std::is_void_v<R>) return R{};
  }
};

// Claimed struct sizes are backed by this many bytes, so that a plugin's lie
// about a size stays inside memory it owns (the core reads what the size
// covers: the lie is about contents, not about memory).
constexpr size_t kBacking = 512;

struct TypeAnswer {
  alignas(xdev_device_type_info_t) std::array<unsigned char, kBacking> bytes{};
  std::string type, platform;
  xdev_device_type_info_t* info() { return reinterpret_cast<xdev_device_type_info_t*>(bytes.data()); }
};

struct DeviceAnswer {
  uint32_t type_index = 0;
  std::string name, bus_id, description;
  bool null_name = false;
  uint64_t memory_total = 0;
  std::vector<std::string> keys, values;
  std::vector<xdev_property_t> properties;
  uint32_t claimed_properties = 0;
  bool null_properties = false;
  bool fail = false;
};

// The plugin the current input describes.
struct FakePlugin {
  std::vector<TypeAnswer> types;
  std::vector<xdev_device_type_info_t*> type_pointers;
  uint32_t claimed_types = 0;
  bool null_type_array = false;
  bool null_type_entry = false;
  uint32_t device_count = 0;
  std::vector<DeviceAnswer> devices;
  bool init_no_handle = false;
} g_plugin;

int g_handle_storage;

xdev_status_t* fake_initialize(const xdev_plugin_init_args_t*, xdev_plugin_t** out) noexcept {
  *out = g_plugin.init_no_handle ? nullptr : reinterpret_cast<xdev_plugin_t*>(&g_handle_storage);
  return nullptr;
}

xdev_status_t* fake_device_types(xdev_plugin_t*, const xdev_device_type_info_t* const** out,
                                 uint32_t* count) noexcept {
  *count = g_plugin.claimed_types;
  *out = g_plugin.null_type_array ? nullptr : g_plugin.type_pointers.data();
  return nullptr;
}

xdev_status_t* fake_device_count(xdev_plugin_t*, uint32_t* count) noexcept {
  *count = g_plugin.device_count;
  return nullptr;
}

xdev_status_t* fake_device_get_properties(xdev_plugin_t*, uint32_t ordinal,
                                          xdev_device_properties_t* props) noexcept {
  if (ordinal >= g_plugin.devices.size()) fail("the loader asked for a device past the count");
  DeviceAnswer& d = g_plugin.devices[ordinal];
  props->type_index = d.type_index;
  props->name = d.null_name ? nullptr : d.name.c_str();
  props->memory_total = d.memory_total;
  props->bus_id = d.bus_id.c_str();
  props->numa_node = -1;
  props->description = d.description.c_str();
  props->properties = d.null_properties ? nullptr : d.properties.data();
  props->property_count = d.claimed_properties;
  return nullptr;
}

void describe(xdev_fuzz::Input& in, xdev_plugin_api_t& api, std::string& name) {
  FakePlugin& p = g_plugin;
  p = FakePlugin{};
  // The table.
  api.abi_version.major = in.below(8) == 0 ? in.byte() : XDEV_ABI_VERSION_MAJOR;
  api.abi_version.minor = in.byte() % (XDEV_ABI_VERSION_MINOR + 2);
  api.struct_size = in.below(4) == 0 ? in.u16() % kBacking : XDEV_PLUGIN_API_STRUCT_SIZE;
  name = in.below(8) == 0 ? in.text(8) : "fuzz";
  api.capabilities = in.byte();
  const uint32_t missing_slot = in.below(64);  // < 27: that slot is NULL
  uint32_t slot_index = 0;
#define XDEV_FUZZ_SET_SLOT(slot, required)                                            \
  api.slot = slot_index++ == missing_slot ? nullptr : &Stub<decltype(api.slot)>::call;
  XDEV_PLUGIN_SLOTS(XDEV_FUZZ_SET_SLOT)
#undef XDEV_FUZZ_SET_SLOT
  if (api.initialize) api.initialize = &fake_initialize;
  if (api.device_types) api.device_types = &fake_device_types;
  if (api.device_count) api.device_count = &fake_device_count;
  if (api.device_get_properties) api.device_get_properties = &fake_device_get_properties;
  p.init_no_handle = in.below(16) == 0;

  // The device types.
  const uint32_t types = in.below(5);
  p.claimed_types = in.below(16) == 0 ? in.u16() : types;
  p.null_type_array = in.below(16) == 0;
  p.types.resize(types);
  for (TypeAnswer& t : p.types) {
    t.type = in.below(4) == 0 ? in.text(40) : (in.flag() ? "GPU" : "npu");
    t.platform = in.below(8) == 0 ? "" : in.text(12);
    xdev_device_type_info_t* info = t.info();
    info->struct_size = in.below(4) == 0 ? in.u16() % kBacking : XDEV_DEVICE_TYPE_INFO_STRUCT_SIZE;
    info->type = in.below(32) == 0 ? nullptr : t.type.c_str();
    info->platform = in.below(32) == 0 ? nullptr : t.platform.c_str();
    info->priority = static_cast<int32_t>(in.u16()) - 1000;
    if (XDEV_HAS_FIELD(info, xdev_device_type_info_t, dlpack_device_type)) {
      info->dlpack_device_type = static_cast<int32_t>(static_cast<int8_t>(in.byte()));
    }
  }
  for (TypeAnswer& t : p.types) {
    p.type_pointers.push_back(in.below(32) == 0 ? nullptr : t.info());
  }
  // Claimed counts past the array are backed by NULL entries (what a plugin
  // would hand over is its business; the core must not trust the count).
  if (p.claimed_types > p.type_pointers.size() && p.claimed_types <= 4096) {
    p.type_pointers.resize(p.claimed_types, nullptr);
  } else if (p.claimed_types > p.type_pointers.size()) {
    p.claimed_types = static_cast<uint32_t>(p.type_pointers.size());
  }

  // The devices.
  const uint32_t devices = in.below(5);
  p.device_count = in.below(16) == 0 ? static_cast<uint32_t>(in.u64()) : devices;
  if (p.device_count > devices && p.device_count <= xdev::detail::kMaxDevicesPerPlugin) {
    p.device_count = devices;  // a count the loader accepts is answered for
  }
  p.devices.resize(devices);
  for (DeviceAnswer& d : p.devices) {
    d.type_index = in.below(8) == 0 ? in.byte() : 0;
    d.name = in.text(16);
    d.null_name = in.below(32) == 0;
    d.bus_id = in.text(8);
    d.description = in.text(16);
    d.memory_total = in.u64();
    const uint32_t props = in.below(4);
    for (uint32_t k = 0; k < props; ++k) {
      d.keys.push_back(in.text(8));
      d.values.push_back(in.text(8));
    }
    for (uint32_t k = 0; k < props; ++k) {
      d.properties.push_back({in.below(16) == 0 ? nullptr : d.keys[k].c_str(),
                              in.below(16) == 0 ? nullptr : d.values[k].c_str()});
    }
    d.claimed_properties = props;
    d.null_properties = props > 0 && in.below(16) == 0;
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  xdev::detail::set_log_sink([](xdev_log_level_t, std::string_view) {});
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  xdev_fuzz::Input in(data, size);
  alignas(xdev_plugin_api_t) static std::array<unsigned char, kBacking> table_bytes;
  table_bytes.fill(0);
  auto& api = *reinterpret_cast<xdev_plugin_api_t*>(table_bytes.data());
  std::string name;
  describe(in, api, name);
  api.name = name.c_str();
  auto plugin = xdev::detail::adopt_plugin_table("/fuzz/xdev_plugin_fuzz.so", &api);
  if (plugin->loaded()) {
    if (plugin->devices.size() != g_plugin.device_count) fail("loaded with another device count");
    for (const auto& d : plugin->devices) {
      if (d.type_index >= plugin->types.size()) fail("loaded a device of no type");
    }
  } else if (plugin->reason.empty()) {
    fail("skipped without a reason");
  }
  return 0;
}
