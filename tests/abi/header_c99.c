/* Compile test: the plugin ABI header and the op names, as strict C99
 * (-pedantic -Werror). Also checks at run time that the frozen v1.0 sizes hold
 * on this target. */
#include <xdev/op_names.h>
#include <xdev/plugin.h>

int main(void) {
  int bad = 0;
  bad |= sizeof XDEV_OP_MatMul != sizeof "MatMul";
  bad |= sizeof XDEV_ATTR_NAME_transpose_a != sizeof "transpose_a";
  bad |= XDEV_PLUGIN_API_STRUCT_SIZE_1_0 != 264;
  bad |= XDEV_PLUGIN_API_STRUCT_SIZE_1_3 != 272; /* 1.3 */
  bad |= XDEV_PLUGIN_API_STRUCT_SIZE_1_4 != 280; /* 1.4 */
  bad |= XDEV_PLUGIN_API_STRUCT_SIZE_1_5 != 288; /* 1.5 */
  bad |= XDEV_PLUGIN_API_STRUCT_SIZE_1_6 != 320; /* 1.6 */
  bad |= XDEV_KERNEL_CALL_STRUCT_SIZE_1_2 != 104;
  bad |= XDEV_KERNEL_CALL_STRUCT_SIZE != 112; /* 1.6 */
  bad |= XDEV_PLUGIN_API_STRUCT_SIZE != 368; /* 1.7 */
  bad |= XDEV_COLLECTIVE_INIT_STRUCT_SIZE != 48;
  bad |= XDEV_COLLECTIVE_CALL_STRUCT_SIZE != 72;
  bad |= XDEV_DEVICE_PROPERTIES_STRUCT_SIZE_1_0 != 76;
  bad |= XDEV_DEVICE_PROPERTIES_STRUCT_SIZE != 92; /* 1.5 */
  bad |= XDEV_HOST_API_STRUCT_SIZE != 48;
  bad |= XDEV_PLUGIN_QUERY_ARGS_STRUCT_SIZE != 48;
  bad |= sizeof(xdev_tensor_t) != 40;
  return bad;
}
