/*
 * Version negotiation fixtures (docs/behaviour.md P2, X7): the frozen v1.0 plugin
 * (v1_0_plugin.c) with its table adjusted by one NEGOTIATION_* define:
 *
 *   NEGOTIATION_UNKNOWN_EXTENSIONS  extensions of unknown type hang off the
 *                                   table, the device type and every kernel
 *                                   entry: readers must skip them (loads)
 *   NEGOTIATION_FUTURE_MINOR        reports ABI 1.99 with a table 32 slots
 *                                   longer than v1.0: the slots later minors
 *                                   defined (1.3, 1.4, 1.5, ...) left NULL, as a
 *                                   plugin that uses none of them leaves them,
 *                                   and the last two, far beyond any table this
 *                                   core knows, set: a newer minor loads
 *   NEGOTIATION_MAJOR_0             reports ABI 0.9: refused, naming both
 *                                   versions
 */
#define xdev_plugin_query v1_0_plugin_query
#include "v1_0_plugin.c"
#undef xdev_plugin_query

#ifndef NEGOTIATION_NAME
#error "define NEGOTIATION_NAME"
#endif

/* Type ids no ABI version allocates (docs/ABI-CHANGELOG.md). */
__attribute__((unused)) static const xdev_extension_t k_unknown_b = {sizeof(xdev_extension_t), 0x7fff0102u, NULL};
__attribute__((unused)) static const xdev_extension_t k_unknown_a = {sizeof(xdev_extension_t), 0x7fff0101u, &k_unknown_b};

#define NEGOTIATION_LATER_SLOTS 30
static struct {
  xdev_plugin_api_t api;
  /* What later minors append: the slots minors up to this core's defined
   * (NULL here: optional, and set only with their capability bits), then
   * two slots of a minor this core does not know. */
  void (*later_slots[NEGOTIATION_LATER_SLOTS])(void);
  void (*future_slot_a)(void);
  void (*future_slot_b)(void);
} g_table;

static void future_slot(void) {}

#ifdef NEGOTIATION_UNKNOWN_EXTENSIONS
static xdev_device_type_info_t g_type;
static const xdev_device_type_info_t* g_types[1];
static xdev_status_t* extended_device_types(xdev_plugin_t* plugin,
                                            const xdev_device_type_info_t* const** out_types,
                                            uint32_t* out_count) {
  xdev_status_t* status = example_device_types(plugin, out_types, out_count);
  if (status != NULL) return status;
  g_type = *(*out_types)[0];
  g_type.ext = &k_unknown_a;
  g_types[0] = &g_type;
  *out_types = g_types;
  return NULL;
}

static xdev_kernel_info_t g_kernels[2];
static const xdev_kernel_info_t* g_kernel_ptrs[2];
static xdev_status_t* extended_kernels(xdev_plugin_t* plugin,
                                       const xdev_kernel_info_t* const** out_kernels,
                                       uint32_t* out_count) {
  uint32_t i;
  xdev_status_t* status = example_kernels(plugin, out_kernels, out_count);
  if (status != NULL) return status;
  for (i = 0; i < *out_count && i < 2; ++i) {
    g_kernels[i] = *(*out_kernels)[i];
    g_kernels[i].ext = &k_unknown_a;
    g_kernel_ptrs[i] = &g_kernels[i];
  }
  *out_kernels = g_kernel_ptrs;
  return NULL;
}
#endif

XDEV_PLUGIN_EXPORT xdev_status_t* xdev_plugin_query(xdev_plugin_query_args_t* args) {
  xdev_status_t* status = v1_0_plugin_query(args);
  if (status != NULL || args->plugin_api == NULL) return status;
  g_table.api = *args->plugin_api;
  g_table.api.name = NEGOTIATION_NAME;
  g_table.future_slot_a = future_slot;
  g_table.future_slot_b = future_slot;
#ifdef NEGOTIATION_UNKNOWN_EXTENSIONS
  g_table.api.ext = &k_unknown_a;
  g_table.api.device_types = extended_device_types;
  g_table.api.kernels = extended_kernels;
#endif
#ifdef NEGOTIATION_FUTURE_MINOR
  g_table.api.abi_version.minor = 99;
  g_table.api.struct_size =
      XDEV_PLUGIN_API_STRUCT_SIZE + (NEGOTIATION_LATER_SLOTS + 2) * sizeof(void (*)(void));
#endif
#ifdef NEGOTIATION_MAJOR_0
  g_table.api.abi_version.major = 0;
  g_table.api.abi_version.minor = 9;
#endif
  args->plugin_api = &g_table.api;
  return NULL;
}
