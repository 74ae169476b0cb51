// error.*: bad arguments return a status (or are a no-op, for the slots that
// return nothing); none may crash.
#include <cstring>

#include "suite.hpp"

namespace xdev_conformance {
namespace {

void error_bad_ordinal(Context& ctx) {
  const xdev_plugin_api_t& api = ctx.api();
  uint32_t count = 0;
  check(api.device_count(ctx.plugin(), &count), "device_count");
  for (uint32_t bad : {count, count + 1, UINT32_MAX}) {
    const std::string n = std::to_string(bad);
    xdev_device_properties_t props{};
    props.struct_size = XDEV_DEVICE_PROPERTIES_STRUCT_SIZE;
    expect_error(api.device_get_properties(ctx.plugin(), bad, &props),
                 "device_get_properties(" + n + ") with " + std::to_string(count) + " devices",
                 {XDEV_STATUS_NOT_FOUND, XDEV_STATUS_INVALID_ARGUMENT});
    xdev_device_t* device = nullptr;
    expect_error(api.device_open(ctx.plugin(), bad, &device),
                 "device_open(" + n + ") with " + std::to_string(count) + " devices",
                 {XDEV_STATUS_NOT_FOUND, XDEV_STATUS_INVALID_ARGUMENT});
  }
}

void error_bad_allocation(Context& ctx) {
  xdev_device_t* dev = ctx.device();
  const xdev_plugin_api_t& api = ctx.api();
  for (uint64_t alignment : {uint64_t{0}, uint64_t{3}, uint64_t{48}, uint64_t{100}}) {
    void* ptr = nullptr;
    xdev_status_t* s = api.memory_allocate(dev, 256, alignment, &ptr);
    if (s == nullptr) {
      api.memory_free(dev, ptr);
      fail("memory_allocate(256 bytes, alignment " + std::to_string(alignment) +
           ") succeeded; an alignment that is not a power of two is INVALID_ARGUMENT");
    }
    expect_error(s, "memory_allocate(alignment " + std::to_string(alignment) + ")",
                 {XDEV_STATUS_INVALID_ARGUMENT});
  }
}

void error_null_outputs(Context& ctx) {
  xdev_device_t* dev = ctx.device();
  xdev_plugin_t* plugin = ctx.plugin();
  const xdev_plugin_api_t& api = ctx.api();
  const xdev_device_type_info_t* const* types = nullptr;
  uint32_t n = 0;
  expect_error(api.device_types(plugin, nullptr, &n), "device_types(out_types NULL)");
  expect_error(api.device_types(plugin, &types, nullptr), "device_types(out_count NULL)");
  expect_error(api.device_count(plugin, nullptr), "device_count(out_count NULL)");
  expect_error(api.device_get_properties(plugin, ctx.default_device(), nullptr),
               "device_get_properties(out_props NULL)");
  expect_error(api.memory_allocate(dev, 64, 64, nullptr), "memory_allocate(out_ptr NULL)");
  uint64_t value = 0;
  expect_error(api.memory_query(dev, nullptr, &value), "memory_query(out_free NULL)");
  expect_error(api.memory_query(dev, &value, nullptr), "memory_query(out_total NULL)");
  expect_error(api.stream_create(dev, nullptr), "stream_create(out_stream NULL)");
  expect_error(api.event_create(dev, nullptr), "event_create(out_event NULL)");
  const xdev_kernel_info_t* const* kernels = nullptr;
  expect_error(api.kernels(plugin, nullptr, &n), "kernels(out_kernels NULL)");
  expect_error(api.kernels(plugin, &kernels, nullptr), "kernels(out_count NULL)");
  Event e(ctx, dev);
  expect_error(api.event_query(e.get(), nullptr), "event_query(out_done NULL)");
  if (api.host_memory_allocate != nullptr) {
    expect_error(api.host_memory_allocate(dev, 64, nullptr), "host_memory_allocate(out_ptr NULL)");
  }
  // Copies of a non-zero size with a NULL side.
  Stream s(ctx, dev);
  DeviceMemory mem(ctx, dev, 64);
  unsigned char host[16] = {0};
  expect_error(api.copy_host_to_device(s.get(), mem.get(), nullptr, 16),
               "copy_host_to_device(src NULL, 16 bytes)");
  expect_error(api.copy_host_to_device(s.get(), nullptr, host, 16),
               "copy_host_to_device(dst NULL, 16 bytes)");
  expect_error(api.copy_device_to_host(s.get(), nullptr, mem.get(), 16),
               "copy_device_to_host(dst NULL, 16 bytes)");
  expect_error(api.copy_device_to_host(s.get(), host, nullptr, 16),
               "copy_device_to_host(src NULL, 16 bytes)");
  expect_error(api.copy_device_to_device(s.get(), mem.get(), nullptr, 16),
               "copy_device_to_device(src NULL, 16 bytes)");
  expect_error(api.copy_device_to_device(s.get(), nullptr, mem.get(), 16),
               "copy_device_to_device(dst NULL, 16 bytes)");
  s.synchronize();
}

void error_null_handles(Context& ctx) {
  xdev_device_t* dev = ctx.device();
  const xdev_plugin_api_t& api = ctx.api();
  // A NULL plugin.
  const xdev_device_type_info_t* const* types = nullptr;
  uint32_t n = 0;
  expect_error(api.device_types(nullptr, &types, &n), "device_types(plugin NULL)");
  expect_error(api.device_count(nullptr, &n), "device_count(plugin NULL)");
  xdev_device_properties_t props{};
  props.struct_size = XDEV_DEVICE_PROPERTIES_STRUCT_SIZE;
  expect_error(api.device_get_properties(nullptr, 0, &props), "device_get_properties(plugin NULL)");
  xdev_device_t* other = nullptr;
  expect_error(api.device_open(nullptr, 0, &other), "device_open(plugin NULL)");
  const xdev_kernel_info_t* const* kernels = nullptr;
  expect_error(api.kernels(nullptr, &kernels, &n), "kernels(plugin NULL)");
  // A NULL device.
  void* ptr = nullptr;
  expect_error(api.memory_allocate(nullptr, 64, 64, &ptr), "memory_allocate(device NULL)");
  uint64_t free_bytes = 0, total = 0;
  expect_error(api.memory_query(nullptr, &free_bytes, &total), "memory_query(device NULL)");
  xdev_stream_t* stream = nullptr;
  expect_error(api.stream_create(nullptr, &stream), "stream_create(device NULL)");
  xdev_event_t* event = nullptr;
  expect_error(api.event_create(nullptr, &event), "event_create(device NULL)");
  if (api.host_memory_allocate != nullptr) {
    expect_error(api.host_memory_allocate(nullptr, 64, &ptr), "host_memory_allocate(device NULL)");
  }
  // A NULL stream or event.
  Stream s(ctx, dev);
  Event e(ctx, dev);
  DeviceMemory mem(ctx, dev, 64);
  unsigned char host[16] = {0};
  expect_error(api.stream_synchronize(nullptr), "stream_synchronize(stream NULL)");
  expect_error(api.copy_host_to_device(nullptr, mem.get(), host, 16),
               "copy_host_to_device(stream NULL)");
  expect_error(api.copy_device_to_host(nullptr, host, mem.get(), 16),
               "copy_device_to_host(stream NULL)");
  expect_error(api.copy_device_to_device(nullptr, mem.at(32), mem.get(), 16),
               "copy_device_to_device(stream NULL)");
  expect_error(api.event_record(nullptr, s.get()), "event_record(event NULL)");
  expect_error(api.event_record(e.get(), nullptr), "event_record(stream NULL)");
  expect_error(api.stream_wait_event(nullptr, e.get()), "stream_wait_event(stream NULL)");
  expect_error(api.stream_wait_event(s.get(), nullptr), "stream_wait_event(event NULL)");
  expect_error(api.event_synchronize(nullptr), "event_synchronize(event NULL)");
  int32_t done = 0;
  expect_error(api.event_query(nullptr, &done), "event_query(event NULL)");
  if (api.copy_peer != nullptr) {
    expect_error(api.copy_peer(nullptr, mem.get(), dev, mem.at(32), 16), "copy_peer(stream NULL)");
    expect_error(api.copy_peer(s.get(), mem.get(), nullptr, mem.at(32), 16),
                 "copy_peer(src_device NULL)");
  }
  // Slots that return nothing: NULL is a no-op.
  api.memory_free(nullptr, nullptr);
  api.stream_destroy(nullptr);
  api.event_destroy(nullptr);
  api.device_close(nullptr);
  if (api.host_memory_free != nullptr) api.host_memory_free(dev, nullptr);
  if (api.describe_status != nullptr) (void)api.describe_status(nullptr);
  s.synchronize();
}

}  // namespace

void add_error_tests(std::vector<TestCase>& t) {
  t.push_back({"error.bad_ordinal",
               "device_get_properties / device_open past the device count return a status",
               error_bad_ordinal});
  t.push_back({"error.bad_alignment", "alignments 0, 3, 48, 100 are INVALID_ARGUMENT",
               error_bad_allocation});
  t.push_back({"error.null_outputs",
               "NULL output pointers and NULL copy ranges return a status", error_null_outputs});
  t.push_back({"error.null_handles",
               "NULL plugin, device, stream and event handles return a status; destroy(NULL) "
               "is a no-op",
               error_null_handles});
}

}  // namespace xdev_conformance
