// abi.* and device.*: loading, version negotiation, the table, struct sizes,
// extensions, device types and devices.
#include <dirent.h>
#include <dlfcn.h>

#include <cctype>
#include <cstring>
#include <set>

#include "plugin_harness.hpp"
#include "suite.hpp"

namespace xdev_conformance {
namespace {

constexpr size_t kPluginApiV1Size = 264;
// An extension type id no version allocates (docs/ABI-CHANGELOG.md), so every
// reader must skip it.
constexpr uint32_t kUnknownExtension = 0x7fff0001u;
constexpr uint64_t kKnownCapabilities =
    XDEV_CAP_HOST_MEMORY | XDEV_CAP_PEER_COPY | XDEV_CAP_EVENTS | XDEV_CAP_HOST_ADDRESSABLE |
    XDEV_CAP_CONCURRENT_STREAMS | XDEV_CAP_EVENT_TIMING | XDEV_CAP_HANDLE_MEMORY |
    XDEV_CAP_COLLECTIVES;

int thread_count() {
  int n = 0;
  if (DIR* dir = ::opendir("/proc/self/task")) {
    while (dirent* e = ::readdir(dir)) {
      if (e->d_name[0] != '.') ++n;
    }
    ::closedir(dir);
  }
  return n;
}

xdev_plugin_query_fn_t entry(Context& ctx) {
  ctx.api();
  return reinterpret_cast<xdev_plugin_query_fn_t>(::dlsym(ctx.library(), XDEV_PLUGIN_ENTRY_SYMBOL));
}

// --- abi ---------------------------------------------------------------------

XDEV_CONFORMANCE_TEST(abi_load, "abi.load",
                      "dlopen, xdev_plugin_query, table checks, initialize, shutdown") {
  ctx.api();
  ctx.plugin();
}

XDEV_CONFORMANCE_TEST(abi_version, "abi.version",
                      "major 1; the table covers its minor; loads into a 1.0 core") {
  const xdev_plugin_api_t& api = ctx.api();
  const xdev_version_t v = api.abi_version;
  const uint32_t ours = XDEV_ABI_VERSION_MINOR;
  if (v.minor >= ours && api.struct_size < XDEV_PLUGIN_API_STRUCT_SIZE) {
    fail("reports ABI " + std::to_string(v.major) + "." + std::to_string(v.minor) +
         " but its table struct_size " + std::to_string(api.struct_size) +
         " is smaller than the " + std::to_string(XDEV_ABI_VERSION_MAJOR) + "." +
         std::to_string(XDEV_ABI_VERSION_MINOR) + " table (" +
         std::to_string(XDEV_PLUGIN_API_STRUCT_SIZE) + " bytes)");
  }
  // An older core of the same major (it accepts only 1.0) must still get a
  // table: a plugin of any minor loads into any core of its major.
  xdev_plugin_query_args_t args = xdev_test::query_args(&ctx.host());
  args.core_max_version = {XDEV_ABI_VERSION_MAJOR, 0};
  check(entry(ctx)(&args), XDEV_PLUGIN_ENTRY_SYMBOL " for a core of ABI 1.0 failed");
  require(args.plugin_api != nullptr,
          XDEV_PLUGIN_ENTRY_SYMBOL " for a core of ABI 1.0 returned no table");
  require(args.plugin_api->abi_version.major == XDEV_ABI_VERSION_MAJOR,
          "the table's major version changed between two queries");
  ctx.plugin();
}

XDEV_CONFORMANCE_TEST(abi_query_repeatable, "abi.query_repeatable",
                      "xdev_plugin_query again gives the same table and starts no thread") {
  const xdev_plugin_api_t& first = ctx.api();
  const int threads_before = thread_count();
  xdev_plugin_query_args_t args = xdev_test::query_args(&ctx.host());
  check(entry(ctx)(&args), "second " XDEV_PLUGIN_ENTRY_SYMBOL);
  const int threads_after = thread_count();
  const xdev_plugin_api_t* second = args.plugin_api;
  require(second != nullptr, "second " XDEV_PLUGIN_ENTRY_SYMBOL " returned no table");
  require(second->struct_size == first.struct_size &&
              second->abi_version.major == first.abi_version.major &&
              second->abi_version.minor == first.abi_version.minor &&
              second->capabilities == first.capabilities &&
              std::strcmp(second->name, first.name) == 0,
          "a second " XDEV_PLUGIN_ENTRY_SYMBOL " returned a different table");
  if (threads_after > threads_before) {
    fail(XDEV_PLUGIN_ENTRY_SYMBOL " started " + std::to_string(threads_after - threads_before) +
         " thread(s); it must be cheap and start none (do that in initialize)");
  }
}

XDEV_CONFORMANCE_TEST(abi_query_struct_size, "abi.query_struct_size",
                      "xdev_plugin_query writes only what struct_size covers") {
  ctx.api();
  // The args as a v1.0 core writes them, followed by bytes the plugin must
  // not touch (a plugin built with a newer header must honour struct_size).
  struct {
    xdev_plugin_query_args_t args;
    unsigned char canary[64];
  } block;
  std::memset(&block, 0xA5, sizeof block);
  block.args = xdev_test::query_args(&ctx.host());
  check(entry(ctx)(&block.args), XDEV_PLUGIN_ENTRY_SYMBOL);
  require(block.args.plugin_api != nullptr, XDEV_PLUGIN_ENTRY_SYMBOL " returned no table");
  const auto* bytes = reinterpret_cast<const unsigned char*>(&block);
  for (size_t i = offsetof(decltype(block), canary); i < sizeof block; ++i) {
    if (bytes[i] != 0xA5) {
      fail(XDEV_PLUGIN_ENTRY_SYMBOL " wrote byte " + std::to_string(i) +
           " past the args' struct_size (" + std::to_string(XDEV_PLUGIN_QUERY_ARGS_STRUCT_SIZE) +
           ")");
    }
  }
}

XDEV_CONFORMANCE_TEST(abi_table, "abi.table",
                      "capability bits match the optional slots; name and version set") {
  const xdev_plugin_api_t& api = ctx.api();
  const uint64_t caps = api.capabilities;
  const bool handles = (caps & XDEV_CAP_HANDLE_MEMORY) != 0;
  const bool peer_at =
      XDEV_HAS_FIELD(&api, xdev_plugin_api_t, copy_peer_at) && api.copy_peer_at != nullptr;
  struct Optional {
    const char* slot;
    bool present;
    uint64_t cap;
    const char* cap_name;
  };
  const Optional optional[] = {
      {"host_memory_allocate", api.host_memory_allocate != nullptr, XDEV_CAP_HOST_MEMORY,
       "XDEV_CAP_HOST_MEMORY"},
      {"host_memory_free", api.host_memory_free != nullptr, XDEV_CAP_HOST_MEMORY,
       "XDEV_CAP_HOST_MEMORY"},
      // 1.6: a handle plugin's peer copies are copy_peer_at (copy_peer may
      // then be NULL), a pointer plugin's copy_peer (copy_peer_at optional);
      // either set without the bit is an error.
      {"copy_peer", api.copy_peer != nullptr || (handles && (caps & XDEV_CAP_PEER_COPY) != 0),
       XDEV_CAP_PEER_COPY, "XDEV_CAP_PEER_COPY"},
      {"copy_peer_at", peer_at || (!handles && (caps & XDEV_CAP_PEER_COPY) != 0),
       XDEV_CAP_PEER_COPY, "XDEV_CAP_PEER_COPY"},
      // 1.4: read only when the table has it.
      {"event_elapsed_ms",
       XDEV_HAS_FIELD(&api, xdev_plugin_api_t, event_elapsed_ms) &&
           api.event_elapsed_ms != nullptr,
       XDEV_CAP_EVENT_TIMING, "XDEV_CAP_EVENT_TIMING"},
      // 1.7: the device collective slots, read only when the table has them.
#define XDEV_CONFORMANCE_COLLECTIVE_SLOT_(slot)                                                \
  {#slot, XDEV_HAS_FIELD(&api, xdev_plugin_api_t, collective) && api.slot != nullptr,         \
   XDEV_CAP_COLLECTIVES, "XDEV_CAP_COLLECTIVES"}
      XDEV_CONFORMANCE_COLLECTIVE_SLOT_(collective_id),
      XDEV_CONFORMANCE_COLLECTIVE_SLOT_(communicator_create),
      XDEV_CONFORMANCE_COLLECTIVE_SLOT_(communicator_destroy),
      XDEV_CONFORMANCE_COLLECTIVE_SLOT_(communicator_abort),
      XDEV_CONFORMANCE_COLLECTIVE_SLOT_(communicator_poll),
      XDEV_CONFORMANCE_COLLECTIVE_SLOT_(collective),
#undef XDEV_CONFORMANCE_COLLECTIVE_SLOT_
  };
  for (const Optional& o : optional) {
    const bool declared = (caps & o.cap) != 0;
    if (declared && !o.present) {
      fail(std::string("declares ") + o.cap_name + " but '" + o.slot + "' is NULL");
    }
    if (!declared && o.present) {
      fail(std::string("'") + o.slot + "' is set but " + o.cap_name +
           " is not declared (an optional slot whose bit is clear must be NULL)");
    }
  }
  const uint32_t ours = XDEV_ABI_VERSION_MINOR;
  if (api.abi_version.minor <= ours && (caps & ~kKnownCapabilities) != 0) {
    char text[128];
    std::snprintf(text, sizeof text, "declares capability bits 0x%llx that ABI 1.%u does not define",
                  static_cast<unsigned long long>(caps & ~kKnownCapabilities),
                  api.abi_version.minor);
    fail(text);
  }
  require(api.plugin_version != nullptr, "plugin table has no plugin_version string");
  for (const char* c = api.name; *c != '\0'; ++c) {
    if (std::isspace(static_cast<unsigned char>(*c))) {
      fail(std::string("plugin name \"") + api.name + "\" contains white space");
    }
  }
}

XDEV_CONFORMANCE_TEST(abi_unknown_extensions, "abi.unknown_extensions",
                      "unknown extensions on the host table, query and init args are skipped") {
  // A newer core may hang extensions this plugin has never heard of on the
  // host table, the query args and the init args: the plugin must skip them.
  static const xdev_extension_t second{sizeof(xdev_extension_t), kUnknownExtension + 1, nullptr};
  static const xdev_extension_t first{sizeof(xdev_extension_t), kUnknownExtension, &second};
  ctx.api();
  xdev_host_api_t host = ctx.host();
  host.ext = &first;
  xdev_plugin_query_args_t args = xdev_test::query_args(&host);
  args.ext = &first;
  check(entry(ctx)(&args), XDEV_PLUGIN_ENTRY_SYMBOL " with unknown extensions");
  const xdev_plugin_api_t* api = args.plugin_api;
  require(api != nullptr, XDEV_PLUGIN_ENTRY_SYMBOL " with unknown extensions returned no table");
  xdev_plugin_init_args_t init = xdev_test::init_args(&host);
  init.ext = &first;
  xdev_plugin_t* plugin = nullptr;
  check(api->initialize(&init, &plugin), "initialize with unknown extensions");
  require(plugin != nullptr, "initialize succeeded but returned no plugin state");
  uint32_t count = 0;
  xdev_status_t* s = api->device_count(plugin, &count);
  if (s == nullptr) {
    // At most the core's limit: more is a lie that device.properties reports.
    for (uint32_t i = 0; i < count && i < 65536 && s == nullptr; ++i) {
      xdev_device_properties_t props{};
      props.struct_size = XDEV_DEVICE_PROPERTIES_STRUCT_SIZE;
      props.ext = &first;
      s = api->device_get_properties(plugin, i, &props);
    }
  }
  api->shutdown(plugin);
  check(s, "enumerating devices with unknown extensions");
}

XDEV_CONFORMANCE_TEST(abi_describe_status, "abi.describe_status",
                      "describe_status gives one line") {
  const xdev_plugin_api_t& api = ctx.api();
  if (api.describe_status == nullptr) skip("the plugin has no describe_status slot (optional)");
  const char* text = api.describe_status(ctx.plugin());
  require(text != nullptr, "describe_status returned NULL");
  require(std::strchr(text, '\n') == nullptr,
          std::string("describe_status is not one line: \"") + text + "\"");
  const char* again = api.describe_status(ctx.plugin());
  require(again != nullptr, "describe_status returned NULL the second time");
}

// --- device ------------------------------------------------------------------

std::vector<const xdev_device_type_info_t*> read_types(Context& ctx) {
  return read_list(ctx, ctx.api().device_types, "device_types");
}

XDEV_CONFORMANCE_TEST(device_types, "device.types", "type names valid and unique, platforms set") {
  auto types = read_types(ctx);
  uint32_t devices = 0;
  check(ctx.api().device_count(ctx.plugin(), &devices), "device_count");
  require(devices == 0 || !types.empty(),
          "reports " + std::to_string(devices) + " devices but offers no device type");
  std::set<std::string> seen;
  for (size_t i = 0; i < types.size(); ++i) {
    const xdev_device_type_info_t* t = types[i];
    const std::string where = "device type " + std::to_string(i);
    require_entry(t, XDEV_DEVICE_TYPE_INFO_STRUCT_SIZE_1_0, where);
    // ABI 1.3: a declared DLPack device type is a DLDeviceType code (>= 1).
    require(!XDEV_HAS_FIELD(t, xdev_device_type_info_t, dlpack_device_type) ||
                t->dlpack_device_type >= 0,
            where + " has a negative dlpack_device_type " +
                std::to_string(XDEV_HAS_FIELD(t, xdev_device_type_info_t, dlpack_device_type)
                                   ? t->dlpack_device_type
                                   : 0));
    require(xdev_plugin_valid_type_name(t->type),
            where + " has an invalid type name \"" + (t->type ? t->type : "(null)") +
                "\" (letters, digits and '_', starting with a letter, at most 31)");
    require(t->platform != nullptr && t->platform[0] != '\0',
            where + " (" + t->type + ") has no platform name");
    for (const char* c = t->platform; *c != '\0'; ++c) {
      require(!std::isupper(static_cast<unsigned char>(*c)),
              where + " has platform \"" + t->platform + "\"; platforms are lower case");
    }
    std::string upper = t->type;
    for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    require(seen.insert(upper).second, "device type " + upper + " is offered twice");
  }
  auto again = read_types(ctx);
  require(again.size() == types.size(), "device_types answered differently the second time");
}

XDEV_CONFORMANCE_TEST(device_properties, "device.properties",
                      "every device: type index in range, name, memory_total > 0, strings set") {
  const uint32_t count = ctx.devices();
  const auto types = read_types(ctx);
  for (uint32_t i = 0; i < count; ++i) {
    const std::string where = "device " + std::to_string(i);
    xdev_device_properties_t p = ctx.properties(i);
    require(p.type_index < types.size(),
            where + " reports type index " + std::to_string(p.type_index) +
                ", but the plugin offers " + std::to_string(types.size()) + " type(s)");
    require(p.name != nullptr && p.name[0] != '\0', where + " has no name");
    require(p.memory_total > 0, where + " reports memory_total 0");
    require(p.bus_id != nullptr, where + " has a NULL bus_id (use \"\" when it has none)");
    require(p.description != nullptr, where + " has a NULL description");
    require(p.numa_node >= -1, where + " reports numa_node " + std::to_string(p.numa_node) +
                                   " (-1 means unknown)");
    require(p.property_count == 0 || p.properties != nullptr,
            where + " reports " + std::to_string(p.property_count) + " properties but no array");
    for (uint32_t k = 0; k < p.property_count; ++k) {
      require(p.properties[k].key != nullptr,
              where + " property " + std::to_string(k) + " has no key");
    }
    // ABI 1.5: one allocation cannot be larger than the device.
    require(p.max_allocation_bytes <= p.memory_total,
            where + " reports max_allocation_bytes " + std::to_string(p.max_allocation_bytes) +
                ", more than its memory_total " + std::to_string(p.memory_total));
  }
}

XDEV_CONFORMANCE_TEST(device_properties_struct_size, "device.properties_struct_size",
                      "device_get_properties writes only what the core's struct_size covers") {
  const uint32_t count = ctx.devices();
  for (uint32_t i = 0; i < count; ++i) {
    // The core's struct (v1.0 size), then bytes the plugin must not touch.
    struct {
      xdev_device_properties_t props;
      unsigned char canary[64];
    } block;
    std::memset(&block, 0xA5, sizeof block);
    block.props.struct_size = XDEV_DEVICE_PROPERTIES_STRUCT_SIZE;
    block.props.ext = nullptr;
    check(ctx.api().device_get_properties(ctx.plugin(), i, &block.props),
          "device_get_properties(" + std::to_string(i) + ")");
    const auto* bytes = reinterpret_cast<const unsigned char*>(&block);
    for (size_t b = offsetof(decltype(block), canary); b < sizeof block; ++b) {
      if (bytes[b] != 0xA5) {
        fail("device_get_properties(" + std::to_string(i) + ") wrote past the struct_size the "
             "core gave (" + std::to_string(XDEV_DEVICE_PROPERTIES_STRUCT_SIZE) + " bytes)");
      }
    }
  }
}

XDEV_CONFORMANCE_TEST(device_open_close, "device.open_close",
                      "every device opens (distinct handles) and closes") {
  const uint32_t count = ctx.devices();
  const xdev_plugin_api_t& api = ctx.api();
  std::vector<xdev_device_t*> opened;
  for (uint32_t i = 0; i < count; ++i) opened.push_back(ctx.device(i));
  std::set<xdev_device_t*> distinct(opened.begin(), opened.end());
  require(distinct.size() == opened.size(), "two devices returned the same handle");
  for (uint32_t i = 0; i < count; ++i) {
    uint64_t free_bytes = 0, total = 0;
    check(api.memory_query(opened[i], &free_bytes, &total),
          "memory_query on device " + std::to_string(i));
  }
  // Context::finish closes them (in reverse order).
}

}  // namespace

}  // namespace xdev_conformance
