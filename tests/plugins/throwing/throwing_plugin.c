/*
 * The "throwing" test plugin: the example plugin
 * (sdk/examples/plugin/example_plugin.c) with pieces that break the ABI's
 * rule that no C++ exception crosses it (throwing.cpp):
 *
 *   kernel Add            throws std::runtime_error
 *   kernel Neg            throws an int (not a std::exception)
 *   copy_device_to_host   throws std::logic_error (reading a tensor back)
 *
 * Its memory is not host-addressable here, so reading back goes through
 * copy_device_to_host. Everything else works: the core must turn each escape
 * into xdev::Error(INTERNAL) naming this file, the slot or op and the device,
 * and keep working.
 */
#define xdev_plugin_query example_plugin_query
#include <xdev/op_names.h>
#include "../../../sdk/examples/plugin/example_plugin.c"
#undef xdev_plugin_query

xdev_status_t* throwing_add(void* context, const xdev_kernel_call_t* call);
xdev_status_t* throwing_neg(void* context, const xdev_kernel_call_t* call);
xdev_status_t* throwing_copy_device_to_host(xdev_stream_t* stream, void* dst, const void* src,
                                            uint64_t size);

static const xdev_kernel_info_t k_throwing_add = {
    XDEV_KERNEL_INFO_STRUCT_SIZE, NULL, XDEV_OP_Add, 0, F32, F32, throwing_add, NULL};
static const xdev_kernel_info_t k_throwing_neg = {
    XDEV_KERNEL_INFO_STRUCT_SIZE, NULL, XDEV_OP_Neg, 0, F32, F32, throwing_neg, NULL};
static const xdev_kernel_info_t* const k_throwing_kernels[] = {&k_throwing_add, &k_throwing_neg};

static xdev_status_t* throwing_kernels(xdev_plugin_t* plugin,
                                       const xdev_kernel_info_t* const** out_kernels,
                                       uint32_t* out_count) {
  (void)plugin;
  *out_kernels = k_throwing_kernels;
  *out_count = 2;
  return NULL;
}

static xdev_plugin_api_t g_table;

XDEV_PLUGIN_ENTRY_POINT xdev_status_t* xdev_plugin_query(xdev_plugin_query_args_t* args) {
  xdev_status_t* status = example_plugin_query(args);
  if (status != NULL || args->plugin_api == NULL) return status;
  g_table = *args->plugin_api;
  g_table.name = "throwing";
  g_table.capabilities = 0; /* not host-addressable: read back with copy_device_to_host */
  g_table.kernels = throwing_kernels;
  g_table.copy_device_to_host = throwing_copy_device_to_host;
  args->plugin_api = &g_table;
  return NULL;
}
