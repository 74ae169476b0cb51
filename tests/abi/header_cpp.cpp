// Compile test: the public headers together, as C++20 (-Werror). The plugin
// header and the C part of the plugin helpers must be usable from C++
// exactly as from C.
#include <xdev/plugin.h>
#include <xdev/plugin_helpers.h>
#include <xdev/plugin_helpers.hpp>
#include <xdev/device.hpp>
#include <xdev/error.hpp>
#include <xdev/export.hpp>
#include <xdev/xdev.hpp>

static_assert(XDEV_PLUGIN_API_STRUCT_SIZE_1_0 == 264);
static_assert(XDEV_PLUGIN_API_STRUCT_SIZE_1_3 == 272);  // 1.3
static_assert(XDEV_PLUGIN_API_STRUCT_SIZE_1_4 == 280);  // 1.4
static_assert(XDEV_PLUGIN_API_STRUCT_SIZE_1_5 == 288);  // 1.5
static_assert(XDEV_PLUGIN_API_STRUCT_SIZE_1_6 == 320);  // 1.6
static_assert(XDEV_KERNEL_CALL_STRUCT_SIZE_1_2 == 104);
static_assert(XDEV_KERNEL_CALL_STRUCT_SIZE == 112);  // 1.6
static_assert(XDEV_PLUGIN_API_STRUCT_SIZE == 368);  // 1.7
static_assert(XDEV_COLLECTIVE_INIT_STRUCT_SIZE == 48);  // 1.7
static_assert(XDEV_COLLECTIVE_CALL_STRUCT_SIZE == 72);  // 1.7
static_assert(XDEV_DEVICE_PROPERTIES_STRUCT_SIZE_1_0 == 76);
static_assert(XDEV_DEVICE_PROPERTIES_STRUCT_SIZE == 92);  // 1.5

int main() {
  xdev_plugin_api_t api{};
  api.struct_size = XDEV_PLUGIN_API_STRUCT_SIZE;
  return XDEV_HAS_FIELD(&api, xdev_plugin_api_t, kernels) ? 0 : 1;
}
