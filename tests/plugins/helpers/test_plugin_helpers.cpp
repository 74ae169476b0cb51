// The C++ plugin helpers (<xdev/plugin_helpers.hpp>) as a plugin uses them,
// against a fake host table that records statuses and log lines: the
// fallback table, the exception guard, the query entry, and the tables a
// plugin hands out.
#include <gtest/gtest.h>

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>
#include <xdev/plugin_helpers.hpp>

#include "plugin_harness.hpp"

namespace {

namespace ph = xdev::plugin_helpers;

// What a fake host made; the status objects are owned by the test.
struct FakeHost {
  std::vector<std::pair<xdev_log_level_t, std::string>> log;
  xdev_host_api_t table{};

  FakeHost() {
    table.struct_size = XDEV_HOST_API_STRUCT_SIZE;
    table.abi_version = {XDEV_ABI_VERSION_MAJOR, XDEV_ABI_VERSION_MINOR};
    table.host_context = this;
    table.status_create = [](void*, xdev_status_code_t code, const char* message) {
      return reinterpret_cast<xdev_status_t*>(new std::pair<xdev_status_code_t, std::string>(
          code, message != nullptr ? message : ""));
    };
    table.log = [](void* context, xdev_log_level_t level, const char* message) {
      static_cast<FakeHost*>(context)->log.emplace_back(level, message);
    };
  }
};

struct Outcome {
  xdev_status_code_t code = XDEV_STATUS_OK;
  std::string message;
};

Outcome take(xdev_status_t* status) {
  if (status == nullptr) return {};
  std::unique_ptr<std::pair<xdev_status_code_t, std::string>> owned(
      reinterpret_cast<std::pair<xdev_status_code_t, std::string>*>(status));
  return {owned->first, owned->second};
}

using xdev_test::query_args;

TEST(PluginHost, HasNoFallbackBeforeAQueryAndCannotReport) {
  const ph::PluginHost hosts{"test"};
  EXPECT_EQ(hosts.fallback(), nullptr);
  EXPECT_EQ(hosts.fail(nullptr, XDEV_STATUS_INTERNAL, "lost"), nullptr);
  EXPECT_STREQ(hosts.name(), "test");
}

TEST(PluginHost, FallsBackToTheQueryTableThenToTheNewestLiveInstance) {
  FakeHost query_host, first, second;
  ph::PluginHost hosts{"test"};
  xdev_plugin_api_t api{};
  api.abi_version = {XDEV_ABI_VERSION_MAJOR, XDEV_ABI_VERSION_MINOR};
  api.name = "test";
  xdev_plugin_query_args_t args = query_args(&query_host.table);
  ASSERT_EQ(take(hosts.answer_query(&args, api)).code, XDEV_STATUS_OK);
  EXPECT_EQ(args.plugin_api, &api);
  EXPECT_EQ(hosts.fallback(), &query_host.table);
  {
    ph::InstanceRegistration one(hosts, &first.table);
    EXPECT_EQ(hosts.fallback(), &first.table);
    {
      ph::InstanceRegistration two(hosts, &second.table);
      EXPECT_EQ(hosts.fallback(), &second.table);
      // A later query does not replace a live instance's table.
      args = query_args(&query_host.table);
      ASSERT_EQ(take(hosts.answer_query(&args, api)).code, XDEV_STATUS_OK);
      EXPECT_EQ(hosts.fallback(), &second.table);
    }
    EXPECT_EQ(hosts.fallback(), &first.table);
  }
  EXPECT_EQ(hosts.fallback(), nullptr);

  // fail() uses the given table when it can make statuses, else the fallback.
  ph::InstanceRegistration one(hosts, &first.table);
  const Outcome own = take(hosts.null_argument(&second.table, "event_query", "out_done"));
  EXPECT_EQ(own.code, XDEV_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(own.message, "event_query: out_done is NULL");
  EXPECT_EQ(hosts.pick(nullptr), &first.table);
  EXPECT_EQ(take(hosts.fail(nullptr, XDEV_STATUS_NOT_FOUND, "ordinal %d", 3)).message,
            "ordinal 3");
}

TEST(PluginHost, AnswerQueryNegotiatesTheVersion) {
  FakeHost host;
  ph::PluginHost hosts{"test"};
  xdev_plugin_api_t api{};
  api.abi_version = {XDEV_ABI_VERSION_MAJOR, XDEV_ABI_VERSION_MINOR};
  api.name = "test";
  xdev_plugin_query_args_t args = query_args(&host.table);
  args.core_min_version = {2, 0};
  args.core_max_version = {2, 1};
  const Outcome refused = take(hosts.answer_query(&args, api));
  EXPECT_EQ(refused.code, XDEV_STATUS_ABI_MISMATCH);
  EXPECT_NE(refused.message.find("the test plugin implements ABI 1."), std::string::npos)
      << refused.message;
  EXPECT_NE(refused.message.find("2.0 to 2.1"), std::string::npos) << refused.message;
  EXPECT_EQ(args.plugin_api, nullptr);
}

TEST(PluginHost, CheckInitArgsReportsWithTheFallbackTable) {
  FakeHost host;
  ph::PluginHost hosts{"test"};
  ph::InstanceRegistration live(hosts, &host.table);
  xdev_plugin_t* plugin = reinterpret_cast<xdev_plugin_t*>(&host);
  xdev_plugin_init_args_t args{};
  args.struct_size = XDEV_PLUGIN_INIT_ARGS_STRUCT_SIZE;
  args.host = nullptr;
  const Outcome outcome = take(hosts.check_init_args(&args, &plugin));
  EXPECT_EQ(outcome.code, XDEV_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(outcome.message.find("args->host"), std::string::npos);
  EXPECT_EQ(plugin, nullptr);
  args.host = &host.table;
  EXPECT_EQ(take(hosts.check_init_args(&args, &plugin)).code, XDEV_STATUS_OK);
}

}  // namespace

// The instance state a plugin defines (opaque in the ABI).
struct xdev_plugin_t {
  const xdev_host_api_t* host = nullptr;
  std::vector<int> data;
};

namespace {

TEST(PluginHost, InitializeChecksGuardsAndHandsOutTheInstance) {
  FakeHost host;
  ph::PluginHost hosts{"demo"};
  ph::InstanceRegistration earlier(hosts, &host.table);  // reports bad arguments
  xdev_plugin_init_args_t args = xdev_test::init_args(&host.table);
  xdev_plugin_t* plugin = nullptr;
  ASSERT_EQ(take(hosts.initialize(&args, &plugin,
                                  [](xdev_plugin_t& state, const xdev_host_api_t* h) {
                                    state.host = h;
                                    state.data.assign(3, 7);
                                    return static_cast<xdev_status_t*>(nullptr);
                                  }))
                .code,
            XDEV_STATUS_OK);
  ASSERT_NE(plugin, nullptr);
  EXPECT_EQ(plugin->host, &host.table);
  EXPECT_EQ(plugin->data.size(), 3U);
  delete plugin;

  // A status from the setup is returned and no instance handed out; so is an
  // exception, as a status; bad arguments never reach the setup.
  plugin = reinterpret_cast<xdev_plugin_t*>(&host);
  const Outcome refused = take(hosts.initialize(&args, &plugin, [&](xdev_plugin_t&, auto h) {
    return hosts.fail(h, XDEV_STATUS_UNAVAILABLE, "no device driver");
  }));
  EXPECT_EQ(refused.code, XDEV_STATUS_UNAVAILABLE);
  EXPECT_EQ(plugin, nullptr);
  const Outcome thrown =
      take(hosts.initialize(&args, &plugin, [](xdev_plugin_t& state, auto) -> xdev_status_t* {
        state.data.resize(1);
        throw std::runtime_error("bad config");
      }));
  EXPECT_EQ(thrown.message, "demo plugin: initialize: unexpected exception: bad config");
  EXPECT_EQ(plugin, nullptr);
  args.struct_size = 8;
  bool ran = false;
  EXPECT_EQ(take(hosts.initialize(&args, &plugin,
                                  [&](xdev_plugin_t&, auto) -> xdev_status_t* {
                                    ran = true;
                                    return nullptr;
                                  }))
                .code,
            XDEV_STATUS_ABI_MISMATCH);
  EXPECT_FALSE(ran);
}

TEST(PluginHost, GuardTurnsEveryExceptionIntoAStatusNamingPluginAndSlot) {
  FakeHost host;
  const ph::PluginHost hosts{"demo"};
  const Outcome error = take(hosts.guard(&host.table, "stream_create", []() -> xdev_status_t* {
    throw std::runtime_error("queue is broken");
  }));
  EXPECT_EQ(error.code, XDEV_STATUS_INTERNAL);
  EXPECT_EQ(error.message, "demo plugin: stream_create: unexpected exception: queue is broken");

  const Outcome odd = take(hosts.guard(&host.table, "kernels", []() -> xdev_status_t* {
    throw 42;
  }));
  EXPECT_EQ(odd.code, XDEV_STATUS_INTERNAL);
  EXPECT_EQ(odd.message, "demo plugin: kernels: unexpected exception of unknown type");

  const Outcome memory = take(hosts.guard(&host.table, "device_open", []() -> xdev_status_t* {
    throw std::bad_alloc();
  }));
  EXPECT_EQ(memory.code, XDEV_STATUS_OUT_OF_MEMORY);
  EXPECT_EQ(memory.message, "demo plugin: device_open: out of host memory");

  // What the body returns passes through.
  EXPECT_EQ(hosts.guard(&host.table, "x", [] { return static_cast<xdev_status_t*>(nullptr); }),
            nullptr);
  const Outcome own = take(hosts.guard(&host.table, "x", [&] {
    return hosts.fail(&host.table, XDEV_STATUS_NOT_FOUND, "mine");
  }));
  EXPECT_EQ(own.code, XDEV_STATUS_NOT_FOUND);
  EXPECT_EQ(own.message, "mine");
}

TEST(PluginHost, RequireNamesTheFirstNullArgument) {
  FakeHost host;
  const ph::PluginHost hosts{"demo"};
  int plugin = 0;
  uint32_t count = 0;
  EXPECT_EQ(hosts.require(&host.table, "device_count", {{"plugin", &plugin}, {"out_count", &count}}),
            nullptr);
  const Outcome out = take(
      hosts.require(&host.table, "device_count", {{"plugin", &plugin}, {"out_count", nullptr}}));
  EXPECT_EQ(out.code, XDEV_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(out.message, "device_count: out_count is NULL");
  const Outcome first =
      take(hosts.require(&host.table, "kernels", {{"plugin", nullptr}, {"out_count", nullptr}}));
  EXPECT_EQ(first.message, "kernels: plugin is NULL");
}

TEST(PluginHost, CheckAllocationRefusesSizeZeroAndOddAlignments) {
  FakeHost host;
  const ph::PluginHost hosts{"demo"};
  EXPECT_EQ(hosts.check_allocation(&host.table, "memory_allocate", 64, 16), nullptr);
  const Outcome zero = take(hosts.check_allocation(&host.table, "memory_allocate", 0, 16));
  EXPECT_EQ(zero.code, XDEV_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(zero.message, "memory_allocate: size is 0 bytes; it must be > 0");
  const Outcome odd = take(hosts.check_allocation(&host.table, "memory_allocate", 64, 24));
  EXPECT_EQ(odd.code, XDEV_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(odd.message,
            "memory_allocate: alignment 24 is not a power of two (size 64 bytes)");
  EXPECT_EQ(take(hosts.check_allocation(&host.table, "memory_allocate", 64, 0)).code,
            XDEV_STATUS_INVALID_ARGUMENT);
}

TEST(PluginHost, GuardVoidLogsTheException) {
  FakeHost host;
  const ph::PluginHost hosts{"demo"};
  hosts.guard_void(&host.table, "shutdown", [] { throw std::logic_error("double free"); });
  ASSERT_EQ(host.log.size(), 1U);
  EXPECT_EQ(host.log[0].first, XDEV_LOG_ERROR);
  EXPECT_EQ(host.log[0].second, "demo plugin: shutdown: unexpected exception: double free");
  hosts.guard_void(&host.table, "device_close", [] {});
  EXPECT_EQ(host.log.size(), 1U);
  hosts.log(&host.table, XDEV_LOG_INFO, "%d devices", 2);
  ASSERT_EQ(host.log.size(), 2U);
  EXPECT_EQ(host.log[1].second, "2 devices");
}

TEST(PropertyList, KeepsItsAddressesWhenItGrowsAndMoves) {
  ph::PropertyList list;
  list.add("short", "s");  // small strings live inside std::string itself
  const xdev_property_t* first = list.data();
  const char* key = first[0].key;
  for (int i = 0; i < 100; ++i) list.add("key" + std::to_string(i), std::to_string(i));
  EXPECT_EQ(list.data()[0].key, key);
  ph::PropertyList moved = std::move(list);
  ASSERT_EQ(moved.size(), 101U);
  EXPECT_EQ(moved.data()[0].key, key);
  EXPECT_STREQ(moved.data()[0].key, "short");
  EXPECT_STREQ(moved.data()[0].value, "s");
  EXPECT_STREQ(moved.data()[100].key, "key99");
  EXPECT_STREQ(moved.data()[100].value, "99");
  moved.clear();
  EXPECT_EQ(moved.size(), 0U);
  EXPECT_EQ(moved.data(), nullptr);
}

xdev_status_t* no_op_kernel(void*, const xdev_kernel_call_t*) noexcept { return nullptr; }

constexpr xdev_kernel_info_t kKernels[] = {
    ph::kernel_info("Add", XDEV_DTYPE_BIT(XDEV_DTYPE_FLOAT32), 0, &no_op_kernel),
    ph::kernel_info("Neg", XDEV_DTYPE_BIT(XDEV_DTYPE_INT32), 0, &no_op_kernel, nullptr, 1),
};
constexpr auto kKernelPointers = ph::pointers_to(kKernels);

TEST(KernelTables, ConstantTablesPointAtTheirDescriptors) {
  static_assert(kKernelPointers.size() == 2);
  EXPECT_EQ(kKernelPointers[1], &kKernels[1]);
  EXPECT_EQ(kKernels[0].struct_size, size_t{XDEV_KERNEL_INFO_STRUCT_SIZE});
  EXPECT_EQ(kKernels[0].ext, nullptr);
  EXPECT_STREQ(kKernels[1].op, "Neg");
  EXPECT_EQ(kKernels[1].type_index, 1U);
}

TEST(KernelTables, KernelListKeepsDescriptorsInPlace) {
  ph::KernelList list;
  int context = 0;
  list.add(ph::kernel_info("MatMul", 1, 1, &no_op_kernel, &context));
  const xdev_kernel_info_t* first = list.data()[0];
  for (int i = 0; i < 50; ++i) list.add(ph::kernel_info("Add", 1, 1, &no_op_kernel));
  ASSERT_EQ(list.size(), 51U);
  EXPECT_EQ(list.data()[0], first);
  EXPECT_EQ(first->kernel_context, &context);
  EXPECT_STREQ(list.data()[50]->op, "Add");
}

TEST(Format, WritesTheWholeText) {
  const std::string long_text(5000, 'x');
  EXPECT_EQ(ph::format("%s-%d", long_text.c_str(), 7), long_text + "-7");
  EXPECT_EQ(ph::format("%s", ""), "");
}

TEST(Tensors, ContiguityFollowsTheCoresStrides) {
  auto view = [](const std::vector<int64_t>& shape, const std::vector<int64_t>& strides) {
    return xdev_tensor_t{nullptr, 0, XDEV_DTYPE_FLOAT32, static_cast<int32_t>(shape.size()),
                         shape.data(), strides.data()};
  };
  const std::vector<int64_t> s23{2, 3}, d23{3, 1}, t23{1, 2}, s13{1, 3}, o13{7, 1};
  EXPECT_TRUE(ph::is_contiguous(view(s23, d23)));
  EXPECT_FALSE(ph::is_contiguous(view(s23, t23)));  // transposed
  EXPECT_TRUE(ph::is_contiguous(view(s13, o13)));   // an axis of size 1 has any stride
  EXPECT_EQ(ph::element_count(view(s23, d23)), 6);
  // Without elements: the core's strides read a 0 as 1 ([2, 0] -> [1, 1];
  // [2, 0, 5, 5] -> [25, 25, 5, 1]). The cuda plugin refused both (Conv2D
  // with no input channels, TensorScatterAdd with indices [2, 0]) on an H200.
  const std::vector<int64_t> s20{2, 0}, c20{1, 1}, s2055{2, 0, 5, 5}, c2055{25, 25, 5, 1};
  EXPECT_TRUE(ph::is_contiguous(view(s20, c20)));
  EXPECT_TRUE(ph::is_contiguous(view(s2055, c2055)));
  EXPECT_EQ(ph::element_count(view(s2055, c2055)), 0);
  const xdev_tensor_t scalar{nullptr, 0, XDEV_DTYPE_FLOAT32, 0, nullptr, nullptr};
  EXPECT_TRUE(ph::is_contiguous(scalar));
  EXPECT_EQ(ph::element_count(scalar), 1);
}

}  // namespace
