// error.*: bad arguments return a status (or are a no-op, for the slots that
// return nothing); none may crash.
#include <cstring>

#include "plugin_harness.hpp"
#include "suite.hpp"

namespace xdev_conformance {
namespace {

XDEV_CONFORMANCE_TEST(error_bad_ordinal, "error.bad_ordinal",
                      "device_get_properties / device_open past the device count return a status") {
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

XDEV_CONFORMANCE_TEST(error_bad_allocation, "error.bad_alignment",
                      "alignments 0, 3, 48, 100 are INVALID_ARGUMENT") {
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

// Every call of xdev_test::NullArgumentCalls of `kind` returns an error
// status.
void expect_errors_for_null(Context& ctx, xdev_test::NullArgumentCalls::Kind kind) {
  xdev_device_t* dev = ctx.device();
  Stream stream(ctx, dev);
  Event event(ctx, dev);
  DeviceMemory memory(ctx, dev, 64);
  const xdev_test::NullArgumentCalls calls(ctx.api(), ctx.plugin(), ctx.default_device(), dev,
                                           stream.get(), event.get(), memory.get(), &ctx.host());
  for (const auto& call : calls.calls()) {
    if (call.kind == kind) {
      expect_error(call.run(), std::string(call.slot) + "(" + call.argument + " NULL)");
    }
  }
  stream.synchronize();
}

XDEV_CONFORMANCE_TEST(error_null_outputs, "error.null_outputs",
                      "NULL output pointers and NULL copy ranges return a status") {
  expect_errors_for_null(ctx, xdev_test::NullArgumentCalls::Kind::kOutput);
}

XDEV_CONFORMANCE_TEST(
    error_null_handles, "error.null_handles",
    "NULL plugin, device, stream and event handles return a status; destroy(NULL) is a no-op") {
  expect_errors_for_null(ctx, xdev_test::NullArgumentCalls::Kind::kHandle);
  // Slots that return nothing: NULL is a no-op.
  const xdev_plugin_api_t& api = ctx.api();
  api.memory_free(nullptr, nullptr);
  api.stream_destroy(nullptr);
  api.event_destroy(nullptr);
  api.device_close(nullptr);
  if (api.host_memory_free != nullptr) api.host_memory_free(ctx.device(), nullptr);
  if (api.describe_status != nullptr) (void)api.describe_status(nullptr);
}

}  // namespace

}  // namespace xdev_conformance
