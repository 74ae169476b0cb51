// A program that exits while a host kernel is still queued on a sim stream:
// the core's global runtime is never destroyed, so the stream's worker runs
// on through the exit handlers. It must exit cleanly (status 0). Before the
// sim closed its kernel gate when its static objects were destroyed
// (kernels.cpp, HostKernelGate), the worker entered oneTBB after oneTBB's
// static objects were gone and the process aborted ("pure virtual method
// called"; seen in 1 run of 60 of ops_fallback).
//
// Deterministic: the kernel waits XDEV_SIM_DELAY_US (the test sets 20 ms)
// before it runs, and an exit handler registered before the plugin was
// loaded (so it runs after the plugin's and oneTBB's static destructors)
// keeps the process alive 200 ms, as a program with much to tear down does.
#include <xdev/op_names.h>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include "core_plugin_harness.hpp"

#ifndef XDEV_SIM_PLUGIN_FILE
#error "XDEV_SIM_PLUGIN_FILE must name the built plugin"
#endif

namespace {

// What the program never releases, like the core's runtime; held here so
// that it stays reachable (LeakSanitizer counts only unreachable memory).
xdev_test::CoreHost* g_host = nullptr;
xdev_test::PluginLibrary* g_library = nullptr;
xdev_plugin_t* g_plugin = nullptr;
xdev_device_t* g_device = nullptr;
xdev_stream_t* g_stream = nullptr;

int fail(const char* what) {
  std::fprintf(stderr, "exit_while_running: %s\n", what);
  return 2;
}

}  // namespace

int main() {
  std::atexit([] { std::this_thread::sleep_for(std::chrono::milliseconds(200)); });
  // Nothing is shut down.
  g_host = new xdev_test::CoreHost("sim");
  g_library = new xdev_test::PluginLibrary;
  if (!g_library->open(XDEV_SIM_PLUGIN_FILE)) return fail("cannot load the plugin");
  auto* query = reinterpret_cast<xdev_status_t* (*)(xdev_plugin_query_args_t*)>(
      g_library->symbol("xdev_plugin_query"));
  xdev_plugin_query_args_t query_args = xdev_test::query_args(g_host->get());
  if (query == nullptr || query(&query_args) != nullptr) return fail("query failed");
  const xdev_plugin_api_t* api = query_args.plugin_api;
  const xdev_plugin_init_args_t init_args = xdev_test::init_args(g_host->get());
  if (api->initialize(&init_args, &g_plugin) != nullptr) return fail("initialize failed");
  if (api->device_open(g_plugin, 0, &g_device) != nullptr) return fail("device_open failed");
  if (api->stream_create(g_device, &g_stream) != nullptr) return fail("stream_create failed");
  xdev_device_t* device = g_device;
  xdev_stream_t* stream = g_stream;
  void* x = nullptr;
  void* out = nullptr;
  if (api->memory_allocate(device, 64, 64, &x) != nullptr ||
      api->memory_allocate(device, 64, 64, &out) != nullptr) {
    return fail("memory_allocate failed");
  }
  const xdev_kernel_info_t* const* kernels = nullptr;
  uint32_t count = 0;
  if (api->kernels(g_plugin, &kernels, &count) != nullptr) return fail("kernels failed");
  const xdev_kernel_info_t* exp =
      xdev_test::find_kernel(kernels, count, XDEV_OP_Exp, XDEV_DTYPE_FLOAT32, XDEV_DTYPE_FLOAT32);
  if (exp == nullptr) return fail("no Exp kernel");
  xdev_test::KernelCall call(XDEV_OP_Exp, device, stream);
  call.input(x, XDEV_DTYPE_FLOAT32, {4}).output(out, XDEV_DTYPE_FLOAT32, {4});
  if (exp->fn(exp->kernel_context, call.get()) != nullptr) return fail("Exp refused");
  return 0;  // the kernel is still queued
}
