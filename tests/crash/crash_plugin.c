/*
 * Misbehaving plugins for the crash-proof loading tests (X3) and the
 * conformance runner's bad-plugin matrix. Each is the example plugin
 * (sdk/examples/plugin/example_plugin.c, a conformant plugin) with one slot
 * replaced by a misbehaving one, chosen with one CRASH_* define:
 *
 *   CRASH_SEGV_INIT      initialize dereferences NULL (SIGSEGV)
 *   CRASH_ABORT_INIT     initialize calls abort() (SIGABRT)
 *   CRASH_THROW_INIT     initialize throws a C++ exception (crash_throw.cpp)
 *   CRASH_SEGV_QUERY     xdev_plugin_query itself dereferences NULL
 *   CRASH_SEGV_LOAD      a library constructor crashes inside dlopen
 *   CRASH_HANG_INIT      initialize never returns
 *   CRASH_EXIT_INIT      initialize calls exit(3)
 *   CRASH_LIE_TYPE_SIZE  a device type reports struct_size 16 (v1.0 is 36)
 *   CRASH_LIE_COUNT      device_count reports 4000000000 devices
 *   CRASH_DUP_TYPE       offers device type "GPU" twice ("GPU" and "gpu")
 *   CRASH_SEGV_COPY      loads fine, but copy_device_to_host crashes
 *
 * CRASH_NAME is the plugin name (each fixture has its own, so several load
 * side by side).
 */
#define xdev_plugin_query example_plugin_query
#include "../../sdk/examples/plugin/example_plugin.c"
#undef xdev_plugin_query

#include <signal.h>
#include <unistd.h>

#ifndef CRASH_NAME
#error "define CRASH_NAME"
#endif

static xdev_plugin_api_t g_table;

/* A real invalid access (not raise()): the compiler cannot know it is NULL. */
static int* volatile g_nowhere = NULL;
__attribute__((unused)) static void crash_now(void) { *g_nowhere = 42; }

#if defined(CRASH_SEGV_INIT) || defined(CRASH_ABORT_INIT) || defined(CRASH_HANG_INIT) || \
    defined(CRASH_EXIT_INIT)
static xdev_status_t* bad_initialize(const xdev_plugin_init_args_t* args, xdev_plugin_t** out) {
  (void)args;
  (void)out;
#if defined(CRASH_SEGV_INIT)
  crash_now();
#elif defined(CRASH_ABORT_INIT)
  abort();
#elif defined(CRASH_HANG_INIT)
  for (;;) pause();
#elif defined(CRASH_EXIT_INIT)
  exit(3);
#endif
  return NULL;
}
#endif

#ifdef CRASH_THROW_INIT
/* crash_throw.cpp: throws std::runtime_error("crash fixture: initialize throws"). */
xdev_status_t* crash_throwing_initialize(const xdev_plugin_init_args_t* args, xdev_plugin_t** out);
#endif

#ifdef CRASH_SEGV_LOAD
__attribute__((constructor)) static void crash_on_load(void) { crash_now(); }
#endif

#if defined(CRASH_LIE_TYPE_SIZE) || defined(CRASH_DUP_TYPE)
#ifdef CRASH_LIE_TYPE_SIZE
static const xdev_device_type_info_t k_short_type = {16, NULL, "SHORT", "crash", 0, XDEV_DLPACK_NONE};
static const xdev_device_type_info_t* const k_bad_types[] = {&k_short_type};
#else
static const xdev_device_type_info_t k_gpu_upper = {XDEV_DEVICE_TYPE_INFO_STRUCT_SIZE, NULL, "GPU",
                                                    "crash", XDEV_PRIORITY_GPU, XDEV_DLPACK_NONE};
static const xdev_device_type_info_t k_gpu_lower = {XDEV_DEVICE_TYPE_INFO_STRUCT_SIZE, NULL, "gpu",
                                                    "crash", XDEV_PRIORITY_GPU, XDEV_DLPACK_NONE};
static const xdev_device_type_info_t* const k_bad_types[] = {&k_gpu_upper, &k_gpu_lower};
#endif
/* Offers k_bad_types: a type too short for v1.0, or "GPU" twice. */
static xdev_status_t* bad_device_types(xdev_plugin_t* plugin,
                                       const xdev_device_type_info_t* const** out_types,
                                       uint32_t* out_count) {
  (void)plugin;
  *out_count = (uint32_t)(sizeof k_bad_types / sizeof k_bad_types[0]);
  *out_types = k_bad_types;
  return NULL;
}
#endif

#ifdef CRASH_LIE_COUNT
static xdev_status_t* lying_device_count(xdev_plugin_t* plugin, uint32_t* out_count) {
  (void)plugin;
  *out_count = 4000000000u;
  return NULL;
}
/* Answers for every ordinal, so only a limit stops an enumeration. */
static xdev_status_t* lying_get_properties(xdev_plugin_t* plugin, uint32_t ordinal,
                                           xdev_device_properties_t* out) {
  (void)ordinal;
  return example_device_get_properties(plugin, 0, out);
}
#endif

#ifdef CRASH_SEGV_COPY
static xdev_status_t* crashing_copy(xdev_stream_t* stream, void* dst, const void* src,
                                    uint64_t size) {
  (void)stream;
  (void)dst;
  (void)src;
  (void)size;
  crash_now();
  return NULL;
}
#endif

XDEV_PLUGIN_ENTRY_POINT xdev_status_t* xdev_plugin_query(xdev_plugin_query_args_t* args) {
  xdev_status_t* status;
#ifdef CRASH_SEGV_QUERY
  crash_now();
#endif
  status = example_plugin_query(args);
  if (status != NULL || args->plugin_api == NULL) return status;
  g_table = *args->plugin_api;
  g_table.name = CRASH_NAME;
#if defined(CRASH_SEGV_INIT) || defined(CRASH_ABORT_INIT) || defined(CRASH_HANG_INIT) || \
    defined(CRASH_EXIT_INIT)
  g_table.initialize = bad_initialize;
#endif
#ifdef CRASH_THROW_INIT
  g_table.initialize = crash_throwing_initialize;
#endif
#if defined(CRASH_LIE_TYPE_SIZE) || defined(CRASH_DUP_TYPE)
  g_table.device_types = bad_device_types;
#endif
#ifdef CRASH_LIE_COUNT
  g_table.device_count = lying_device_count;
  g_table.device_get_properties = lying_get_properties;
#endif
#ifdef CRASH_SEGV_COPY
  g_table.copy_device_to_host = crashing_copy;
#endif
  args->plugin_api = &g_table;
  return NULL;
}
