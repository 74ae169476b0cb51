/*
 * The C part of the plugin helpers (<xdev/plugin_helpers.h>) as a C99 plugin
 * uses it: built with -std=c99 -pedantic -Werror, run against a fake host
 * table that records the statuses and log lines the helpers make. Prints
 * each failed check and exits 1 when any failed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xdev/plugin_helpers.h>

/* The fake host: one status object and one log line at a time. */
struct xdev_status_t {
  xdev_status_code_t code;
  char message[XDEV_PLUGIN_MESSAGE_MAX];
};

static struct xdev_status_t g_status;
static char g_log[XDEV_PLUGIN_MESSAGE_MAX];
static xdev_log_level_t g_log_level;
static int g_failures;

static xdev_status_t* fake_status_create(void* context, xdev_status_code_t code,
                                         const char* message) {
  (void)context;
  g_status.code = code;
  strncpy(g_status.message, message != NULL ? message : "", sizeof g_status.message - 1);
  return &g_status;
}

static void fake_log(void* context, xdev_log_level_t level, const char* message) {
  (void)context;
  g_log_level = level;
  strncpy(g_log, message, sizeof g_log - 1);
}

static const xdev_host_api_t g_host = {XDEV_HOST_API_STRUCT_SIZE, NULL, {1, 1}, NULL,
                                       fake_status_create, fake_log};

#define CHECK(condition)                                                   \
  do {                                                                     \
    if (!(condition)) {                                                    \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #condition); \
      ++g_failures;                                                        \
    }                                                                      \
  } while (0)

/* The status returned is the fake one with `code` and `message` in it. */
static int is_status(const xdev_status_t* status, xdev_status_code_t code, const char* part) {
  if (status != &g_status || status->code != code) return 0;
  if (strstr(status->message, part) == NULL) {
    fprintf(stderr, "message \"%s\" does not contain \"%s\"\n", status->message, part);
    return 0;
  }
  return 1;
}

static void test_status_and_log(void) {
  xdev_host_api_t small = g_host;
  CHECK(is_status(xdev_plugin_status(&g_host, XDEV_STATUS_NOT_FOUND, "no device %d of %s", 7,
                                     "sim"),
                  XDEV_STATUS_NOT_FOUND, "no device 7 of sim"));
  /* A table without status_create (too small) or none at all: no status. */
  small.struct_size = offsetof(xdev_host_api_t, status_create);
  CHECK(!xdev_plugin_can_create_status(&small));
  CHECK(xdev_plugin_status(&small, XDEV_STATUS_INTERNAL, "x") == NULL);
  CHECK(xdev_plugin_status(NULL, XDEV_STATUS_INTERNAL, "x") == NULL);

  xdev_plugin_log(&g_host, XDEV_LOG_WARNING, "%u streams left", 3u);
  CHECK(g_log_level == XDEV_LOG_WARNING && strcmp(g_log, "3 streams left") == 0);
  small.struct_size = offsetof(xdev_host_api_t, log);
  g_log[0] = '\0';
  xdev_plugin_log(&small, XDEV_LOG_ERROR, "not written");
  CHECK(g_log[0] == '\0');
}

static xdev_status_t* dummy_status(void) { return NULL; }

/* A table with no slots set, of this header's version. */
static xdev_plugin_api_t make_api(void) {
  const xdev_plugin_api_t api = {.struct_size = XDEV_PLUGIN_API_STRUCT_SIZE,
                                 .abi_version = {XDEV_ABI_VERSION_MAJOR, XDEV_ABI_VERSION_MINOR},
                                 .name = "helpers"};
  return api;
}

/* What a core of this header's version passes (it accepts 1.0 to 1.minor). */
static xdev_plugin_query_args_t make_query(void) {
  const xdev_plugin_query_args_t args = {
      .struct_size = XDEV_PLUGIN_QUERY_ARGS_STRUCT_SIZE,
      .core_min_version = {XDEV_ABI_VERSION_MAJOR, 0},
      .core_max_version = {XDEV_ABI_VERSION_MAJOR, XDEV_ABI_VERSION_MINOR},
      .host = &g_host};
  return args;
}

static void test_query_answer(void) {
  const xdev_plugin_api_t api = make_api();
  xdev_plugin_query_args_t args = make_query();
  char expected[64];

  CHECK(xdev_plugin_query_host(&args) == &g_host);
  CHECK(xdev_plugin_query_answer(&args, &api) == NULL && args.plugin_api == &api);

  /* A newer minor of the same major is fine; minors only append. */
  args = make_query();
  args.core_max_version.minor = XDEV_ABI_VERSION_MINOR + 4;
  CHECK(xdev_plugin_query_answer(&args, &api) == NULL && args.plugin_api == &api);

  /* Another major, or a core that needs a newer minor: refused, no table. */
  args = make_query();
  args.core_min_version.major = args.core_max_version.major = 2;
  args.plugin_api = &api;
  sprintf(expected, "helpers plugin implements ABI 1.%d", XDEV_ABI_VERSION_MINOR);
  CHECK(is_status(xdev_plugin_query_answer(&args, &api), XDEV_STATUS_ABI_MISMATCH, expected));
  CHECK(args.plugin_api == NULL);
  args = make_query();
  args.core_min_version.minor = XDEV_ABI_VERSION_MINOR + 1;
  args.core_max_version.minor = XDEV_ABI_VERSION_MINOR + 1;
  CHECK(is_status(xdev_plugin_query_answer(&args, &api), XDEV_STATUS_ABI_MISMATCH,
                  "the core accepts 1."));
  CHECK(args.plugin_api == NULL);

  /* Arguments too small for plugin_api: refused, nothing written. */
  args = make_query();
  args.struct_size = offsetof(xdev_plugin_query_args_t, plugin_api);
  args.plugin_api = &api;
  sprintf(expected, "args->struct_size is %u bytes", (unsigned)args.struct_size);
  CHECK(is_status(xdev_plugin_query_answer(&args, &api), XDEV_STATUS_ABI_MISMATCH, expected));
  CHECK(args.plugin_api == &api);

  /* Nothing to report with: no crash, no table. */
  CHECK(xdev_plugin_query_answer(NULL, &api) == NULL);
  args = make_query();
  args.host = NULL;
  args.core_min_version.major = args.core_max_version.major = 2;
  CHECK(xdev_plugin_query_answer(&args, &api) == NULL && args.plugin_api == NULL);
}

static void test_init_args(void) {
  xdev_plugin_init_args_t args;
  xdev_host_api_t small = g_host;
  xdev_plugin_t* plugin = (xdev_plugin_t*)&args; /* any non-NULL value */
  memset(&args, 0, sizeof args);
  args.struct_size = XDEV_PLUGIN_INIT_ARGS_STRUCT_SIZE;
  args.host = &g_host;
  CHECK(xdev_plugin_check_init_args(&g_host, &args, &plugin) == NULL && plugin == NULL);
  CHECK(xdev_plugin_init_args_usable(&args, &plugin));
  CHECK(is_status(xdev_plugin_check_init_args(&g_host, &args, NULL),
                  XDEV_STATUS_INVALID_ARGUMENT, "out_plugin is NULL"));
  /* No table from the query yet: args->host reports what it can. */
  CHECK(is_status(xdev_plugin_check_init_args(NULL, &args, NULL), XDEV_STATUS_INVALID_ARGUMENT,
                  "out_plugin is NULL"));
  CHECK(!xdev_plugin_init_args_usable(&args, NULL));
  CHECK(is_status(xdev_plugin_check_init_args(&g_host, NULL, &plugin),
                  XDEV_STATUS_INVALID_ARGUMENT, "args is NULL"));
  args.struct_size = offsetof(xdev_plugin_init_args_t, host);
  CHECK(is_status(xdev_plugin_check_init_args(&g_host, &args, &plugin), XDEV_STATUS_ABI_MISMATCH,
                  "init arguments need"));
  args.struct_size = XDEV_PLUGIN_INIT_ARGS_STRUCT_SIZE;
  args.host = NULL;
  CHECK(is_status(xdev_plugin_check_init_args(&g_host, &args, &plugin),
                  XDEV_STATUS_INVALID_ARGUMENT, "args->host"));
  small.struct_size = offsetof(xdev_host_api_t, log);
  args.host = &small;
  CHECK(is_status(xdev_plugin_check_init_args(&g_host, &args, &plugin), XDEV_STATUS_ABI_MISMATCH,
                  "host table is"));
  CHECK(!xdev_plugin_init_args_usable(&args, &plugin));
}

static void test_tables(void) {
  xdev_device_properties_t values;
  xdev_device_properties_t out;
  xdev_plugin_api_t api = make_api();
  xdev_status_t* (*any)(void) = dummy_status;
  memset(&values, 0, sizeof values);
  values.name = "Device";
  values.memory_total = 42;
  values.description = "device: 0";
  /* A core whose struct ends at `name`: later fields stay untouched. */
  memset(&out, 0, sizeof out);
  out.struct_size = XDEV_STRUCT_SIZE(xdev_device_properties_t, name);
  out.memory_total = 7;
  xdev_plugin_fill_properties(&out, &values);
  CHECK(out.struct_size == XDEV_STRUCT_SIZE(xdev_device_properties_t, name));
  CHECK(out.name == values.name && out.memory_total == 7 && out.description == NULL);
  /* A core before 1.5: the 1.5 fields stay untouched. */
  values.max_allocation_bytes = 1024;
  values.memory_kind = XDEV_MEMORY_KIND_HOST;
  out.struct_size = XDEV_DEVICE_PROPERTIES_STRUCT_SIZE_1_0;
  xdev_plugin_fill_properties(&out, &values);
  CHECK(out.memory_total == 42 && out.description == values.description);
  CHECK(out.max_allocation_bytes == 0 && out.memory_kind == XDEV_MEMORY_KIND_UNDECLARED);
  out.struct_size = XDEV_DEVICE_PROPERTIES_STRUCT_SIZE;
  xdev_plugin_fill_properties(&out, &values);
  CHECK(out.max_allocation_bytes == 1024 && out.memory_kind == XDEV_MEMORY_KIND_HOST);

  /* Required slots: the first NULL one is named, in table order. Any non-NULL
   * function pointer will do (they are compared, never called). */
  CHECK(strcmp(xdev_plugin_missing_slot(&api), "initialize") == 0);
#define SET_REQUIRED_SLOT(slot, required) \
  if (required) memcpy(&api.slot, &any, sizeof any);
  XDEV_PLUGIN_SLOTS(SET_REQUIRED_SLOT)
#undef SET_REQUIRED_SLOT
  CHECK(xdev_plugin_missing_slot(&api) == NULL);
  api.event_query = NULL;
  api.copy_device_to_device = NULL;
  CHECK(strcmp(xdev_plugin_missing_slot(&api), "event_query") == 0);
  /* ABI 1.6: a handle plugin needs the *_at copy slots, not the old ones. */
  memcpy(&api.event_query, &any, sizeof any);
  api.copy_host_to_device = NULL;
  api.copy_device_to_host = NULL;
  api.capabilities = XDEV_CAP_HANDLE_MEMORY;
  api.struct_size = XDEV_PLUGIN_API_STRUCT_SIZE;
  CHECK(strcmp(xdev_plugin_missing_slot(&api), "copy_host_to_device_at") == 0);
  memcpy(&api.copy_host_to_device_at, &any, sizeof any);
  memcpy(&api.copy_device_to_host_at, &any, sizeof any);
  CHECK(strcmp(xdev_plugin_missing_slot(&api), "copy_device_to_device_at") == 0);
  memcpy(&api.copy_device_to_device_at, &any, sizeof any);
  CHECK(xdev_plugin_missing_slot(&api) == NULL);
  api.struct_size = XDEV_PLUGIN_API_STRUCT_SIZE_1_5; /* the *_at slots beyond it */
  CHECK(strcmp(xdev_plugin_missing_slot(&api), "copy_host_to_device_at") == 0);
  api.capabilities = 0;
  CHECK(strcmp(xdev_plugin_missing_slot(&api), "copy_host_to_device") == 0);
  CHECK(xdev_plugin_dtype_size(XDEV_DTYPE_BFLOAT16) == 2);
  CHECK(xdev_plugin_dtype_size(XDEV_DTYPE_INVALID) == 0);
  CHECK(strcmp(xdev_plugin_dtype_name(XDEV_DTYPE_UINT8), "uint8") == 0);
  CHECK(xdev_plugin_dtype_name((xdev_dtype_t)42) == NULL);
  CHECK(xdev_plugin_dtype_name(XDEV_DTYPE_INVALID) == NULL);
  CHECK(xdev_plugin_dtype_size(XDEV_DTYPE_INT64) == 8 &&
        xdev_plugin_dtype_size(XDEV_DTYPE_INT8) == 1);

  /* Device type names: a letter, then letters, digits, '_'; 31 at most. */
  CHECK(xdev_plugin_valid_type_name("GPU") && xdev_plugin_valid_type_name("npu_2"));
  CHECK(xdev_plugin_valid_type_name("A234567890123456789012345678901"));   /* 31 */
  CHECK(!xdev_plugin_valid_type_name("A2345678901234567890123456789012")); /* 32 */
  CHECK(!xdev_plugin_valid_type_name("") && !xdev_plugin_valid_type_name(NULL));
  CHECK(!xdev_plugin_valid_type_name("2GPU") && !xdev_plugin_valid_type_name("_GPU"));
  CHECK(!xdev_plugin_valid_type_name("GP U") && !xdev_plugin_valid_type_name("GPU\xc3\xa9"));
}

int main(void) {
  test_status_and_log();
  test_query_answer();
  test_init_args();
  test_tables();
  if (g_failures != 0) {
    fprintf(stderr, "%d check(s) failed\n", g_failures);
    return 1;
  }
  printf("plugin_helpers.h: all checks passed\n");
  return 0;
}
