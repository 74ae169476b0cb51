/* Compile test: the C part of the plugin helpers alone, as strict C99
 * (-pedantic -Werror): what a C plugin such as sdk/examples/plugin includes. */
#include <xdev/plugin_helpers.h>

/* One use of each kind of helper, so the compiler checks them as used. */
XDEV_PLUGIN_ENTRY_POINT xdev_status_t* abi_helpers_entry(xdev_plugin_query_args_t* args);
xdev_status_t* abi_helpers_entry(xdev_plugin_query_args_t* args) {
  static const xdev_plugin_api_t api = {.struct_size = XDEV_PLUGIN_API_STRUCT_SIZE,
                                        .abi_version = {1, 1},
                                        .name = "abi"};
  const xdev_host_api_t* host = xdev_plugin_query_host(args);
  xdev_plugin_log(host, XDEV_LOG_DEBUG, "%s", xdev_plugin_dtype_name(XDEV_DTYPE_INT8));
  if (xdev_plugin_missing_slot(&api) == NULL) {
    return xdev_plugin_status(host, XDEV_STATUS_INTERNAL, "%d", 1);
  }
  return xdev_plugin_query_answer(args, &api);
}
