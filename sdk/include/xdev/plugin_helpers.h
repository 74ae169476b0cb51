/*
 * Helpers for writing an xdev device plugin in C (C99) or C++: the code every
 * plugin's boilerplate repeats, written once. Header-only (static inline
 * functions and macros), so a plugin still links nothing of xdev: it needs
 * <xdev/plugin.h>, this header and the C library (vsnprintf).
 *
 *   xdev_plugin_status(host, code, "%s: size %llu is too large", ...)
 *       a status with a printf-formatted message, made with the host table
 *   xdev_plugin_log(host, XDEV_LOG_WARNING, "...", ...)
 *       a formatted line in the core's log
 *   xdev_plugin_query_answer(args, &api)
 *       the whole body of a conformant xdev_plugin_query: struct_size and
 *       version negotiation, then args->plugin_api = &api
 *   xdev_plugin_check_init_args(host, args, out_plugin)
 *       the checks every `initialize` starts with
 *   xdev_plugin_fill_properties(out, &values)
 *       device_get_properties' copy of only the fields the core's struct has
 *   xdev_plugin_missing_slot(api)
 *       the first REQUIRED slot of a table that is NULL (for tests and loaders)
 *   xdev_plugin_dtype_name(dtype), xdev_plugin_dtype_size(dtype),
 *   xdev_plugin_valid_type_name(name)
 *   XDEV_PLUGIN_ENTRY_POINT
 *       what goes before the entry point's definition: C linkage and default
 *       visibility (XDEV_PLUGIN_EXPORT), so with -fvisibility=hidden it is the
 *       only symbol a C plugin exports
 *
 * C++ plugins include <xdev/plugin_helpers.hpp> instead, which adds an
 * exception guard, the plugin-wide host table, property and kernel tables.
 * docs/plugin-guide.md shows both in use; sdk/examples/plugin uses this one.
 */
#ifndef XDEV_PLUGIN_HELPERS_H_
#define XDEV_PLUGIN_HELPERS_H_

#include <inttypes.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <xdev/plugin.h>

/* printf-style checking of a helper's format argument where the compiler has
 * it (argument `format_index` is the format, variadic arguments from
 * `first_arg`). */
#if defined(__GNUC__) || defined(__clang__)
#define XDEV_PLUGIN_PRINTF(format_index, first_arg) \
  __attribute__((format(printf, format_index, first_arg)))
#else
#define XDEV_PLUGIN_PRINTF(format_index, first_arg)
#endif

/* Put before the definition of the entry point:
 *   XDEV_PLUGIN_ENTRY_POINT xdev_status_t* xdev_plugin_query(
 *       xdev_plugin_query_args_t* args) { ... }
 * C linkage in C++, default visibility everywhere. Build the rest of the
 * plugin with hidden visibility (-fvisibility=hidden; meson:
 * gnu_symbol_visibility: 'hidden'). A C++ plugin also needs the version
 * script of docs/plugin-guide.md: libstdc++ gives its template instances
 * default visibility whatever the flags say. */
#ifdef __cplusplus
#define XDEV_PLUGIN_ENTRY_POINT extern "C" XDEV_PLUGIN_EXPORT
#else
#define XDEV_PLUGIN_ENTRY_POINT XDEV_PLUGIN_EXPORT
#endif

/* The longest status or log message the helpers format (longer ones are cut). */
#define XDEV_PLUGIN_MESSAGE_MAX 1024

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------ */
/* Statuses and logging                                                     */
/* ------------------------------------------------------------------------ */

/* 1 when `host` is a table whose status_create may be called (covered by its
 * struct_size and set), else 0. */
static inline int xdev_plugin_can_create_status(const xdev_host_api_t* host) {
  return host != NULL && XDEV_HAS_FIELD(host, xdev_host_api_t, status_create) &&
         host->status_create != NULL;
}

/* A status with `code` and a printf-formatted message, made with `host`.
 * Allocates nothing itself. Returns NULL only when `host` cannot create a
 * status (NULL, or a table without status_create): check
 * xdev_plugin_can_create_status where NULL (success) would be wrong. */
static inline xdev_status_t* xdev_plugin_vstatus(const xdev_host_api_t* host,
                                                 xdev_status_code_t code,
                                                 const char* format, va_list args) {
  char text[XDEV_PLUGIN_MESSAGE_MAX];
  if (!xdev_plugin_can_create_status(host)) return NULL;
  if (vsnprintf(text, sizeof text, format, args) < 0) text[0] = '\0';
  return host->status_create(host->host_context, code, text);
}

static inline xdev_status_t* xdev_plugin_status(const xdev_host_api_t* host,
                                                xdev_status_code_t code, const char* format,
                                                ...) XDEV_PLUGIN_PRINTF(3, 4);
static inline xdev_status_t* xdev_plugin_status(const xdev_host_api_t* host,
                                                xdev_status_code_t code, const char* format,
                                                ...) {
  xdev_status_t* status;
  va_list args;
  va_start(args, format);
  status = xdev_plugin_vstatus(host, code, format, args);
  va_end(args);
  return status;
}

/* A printf-formatted line in the core's log (the core tags it with the
 * plugin's name). Does nothing when `host` has no log function. */
static inline void xdev_plugin_vlog(const xdev_host_api_t* host, xdev_log_level_t level,
                                    const char* format, va_list args) {
  char text[XDEV_PLUGIN_MESSAGE_MAX];
  if (host == NULL || !XDEV_HAS_FIELD(host, xdev_host_api_t, log) || host->log == NULL) return;
  if (vsnprintf(text, sizeof text, format, args) < 0) text[0] = '\0';
  host->log(host->host_context, level, text);
}

static inline void xdev_plugin_log(const xdev_host_api_t* host, xdev_log_level_t level,
                                   const char* format, ...) XDEV_PLUGIN_PRINTF(3, 4);
static inline void xdev_plugin_log(const xdev_host_api_t* host, xdev_log_level_t level,
                                   const char* format, ...) {
  va_list args;
  va_start(args, format);
  xdev_plugin_vlog(host, level, format, args);
  va_end(args);
}

/* ------------------------------------------------------------------------ */
/* The entry point and initialize                                           */
/* ------------------------------------------------------------------------ */

/* 1 when version `a` is not newer than `b`. */
static inline int xdev_plugin_version_at_most(xdev_version_t a, xdev_version_t b) {
  return a.major < b.major || (a.major == b.major && a.minor <= b.minor);
}

/* The host table in the query arguments when the core's struct has one that
 * can create statuses, else NULL. A plugin keeps it for calls whose handle is
 * NULL (they have no other table to report with). */
static inline const xdev_host_api_t* xdev_plugin_query_host(
    const xdev_plugin_query_args_t* args) {
  if (args == NULL || !XDEV_HAS_FIELD(args, xdev_plugin_query_args_t, host)) return NULL;
  return xdev_plugin_can_create_status(args->host) ? args->host : NULL;
}

/* The body of a conformant xdev_plugin_query, for a plugin whose table is
 * `api` (api->name and api->abi_version are used):
 *  - arguments too small to hold plugin_api: XDEV_STATUS_ABI_MISMATCH, and
 *    nothing is written;
 *  - a core whose accepted range [core_min_version, core_max_version] does
 *    not include api->abi_version's major, or that needs a newer minor than
 *    the plugin's: XDEV_STATUS_ABI_MISMATCH naming both, plugin_api = NULL.
 *    A newer minor of the same major is accepted (minors only append);
 *  - else args->plugin_api = api and NULL.
 * With no arguments or no usable host table a failure cannot be reported:
 * it returns NULL and leaves plugin_api NULL (the core then refuses the
 * plugin for giving no table). */
static inline xdev_status_t* xdev_plugin_query_answer(xdev_plugin_query_args_t* args,
                                                      const xdev_plugin_api_t* api) {
  const xdev_host_api_t* host = xdev_plugin_query_host(args);
  xdev_version_t mine;
  xdev_version_t lowest;
  xdev_version_t highest;
  if (args == NULL) return NULL;
  if (!XDEV_HAS_FIELD(args, xdev_plugin_query_args_t, plugin_api)) {
    return xdev_plugin_status(host, XDEV_STATUS_ABI_MISMATCH,
                              "xdev_plugin_query: args->struct_size is %zu bytes; ABI v1.0 "
                              "query arguments need %zu",
                              args->struct_size, (size_t)XDEV_PLUGIN_QUERY_ARGS_STRUCT_SIZE);
  }
  args->plugin_api = NULL;
  mine = api->abi_version;
  lowest = args->core_min_version;
  highest = args->core_max_version;
  if (!xdev_plugin_version_at_most(lowest, mine) || highest.major < mine.major) {
    return xdev_plugin_status(host, XDEV_STATUS_ABI_MISMATCH,
                              "xdev_plugin_query: the %s plugin implements ABI %" PRIu32
                              ".%" PRIu32 "; the core accepts %" PRIu32 ".%" PRIu32
                              " to %" PRIu32 ".%" PRIu32,
                              api->name != NULL ? api->name : "(unnamed)", mine.major,
                              mine.minor, lowest.major, lowest.minor, highest.major,
                              highest.minor);
  }
  args->plugin_api = api;
  return NULL;
}

/* 1 when `initialize` may go on with these arguments: out_plugin and args
 * non-NULL, args large enough for v1.0, args->host a v1.0 table (it can
 * create statuses and log). */
static inline int xdev_plugin_init_args_usable(const xdev_plugin_init_args_t* args,
                                               xdev_plugin_t* const* out_plugin) {
  return out_plugin != NULL && args != NULL &&
         XDEV_HAS_FIELD(args, xdev_plugin_init_args_t, host) &&
         xdev_plugin_can_create_status(args->host) &&
         XDEV_HAS_FIELD(args->host, xdev_host_api_t, log);
}

/* The checks `initialize` starts with (*out_plugin is set to NULL first):
 * a status naming what makes the arguments unusable
 * (xdev_plugin_init_args_usable), reported with `host` (the table from the
 * query: args->host may be the thing that is wrong), else with args->host
 * where it can. NULL when initialize may go on with args->host, and also when
 * no table can report the failure: check xdev_plugin_init_args_usable then. */
static inline xdev_status_t* xdev_plugin_check_init_args(const xdev_host_api_t* host,
                                                         const xdev_plugin_init_args_t* args,
                                                         xdev_plugin_t** out_plugin) {
  if (!xdev_plugin_can_create_status(host) && args != NULL &&
      XDEV_HAS_FIELD(args, xdev_plugin_init_args_t, host)) {
    host = args->host;
  }
  if (out_plugin == NULL) {
    return xdev_plugin_status(host, XDEV_STATUS_INVALID_ARGUMENT,
                              "initialize: out_plugin is NULL");
  }
  *out_plugin = NULL;
  if (args == NULL) {
    return xdev_plugin_status(host, XDEV_STATUS_INVALID_ARGUMENT, "initialize: args is NULL");
  }
  if (!XDEV_HAS_FIELD(args, xdev_plugin_init_args_t, host)) {
    return xdev_plugin_status(host, XDEV_STATUS_ABI_MISMATCH,
                              "initialize: args->struct_size is %zu bytes; ABI v1.0 init "
                              "arguments need %zu",
                              args->struct_size, (size_t)XDEV_PLUGIN_INIT_ARGS_STRUCT_SIZE);
  }
  if (!xdev_plugin_can_create_status(args->host)) {
    return xdev_plugin_status(host, XDEV_STATUS_INVALID_ARGUMENT,
                              "initialize: args->host is NULL or has no status_create");
  }
  if (!XDEV_HAS_FIELD(args->host, xdev_host_api_t, log)) {
    return xdev_plugin_status(args->host, XDEV_STATUS_ABI_MISMATCH,
                              "initialize: the host table is %zu bytes; ABI v1.0 needs %zu",
                              args->host->struct_size, (size_t)XDEV_HOST_API_STRUCT_SIZE);
  }
  return NULL;
}

/* ------------------------------------------------------------------------ */
/* Devices, tables, dtypes                                                  */
/* ------------------------------------------------------------------------ */

/* device_get_properties: copies the fields of `values` (its struct_size and
 * ext are ignored) into `out`, only those out->struct_size covers; `out`'s
 * struct_size and ext are the core's and stay as they are. */
static inline void xdev_plugin_fill_properties(xdev_device_properties_t* out,
                                               const xdev_device_properties_t* values) {
#define XDEV_PLUGIN_FILL_(field) \
  if (XDEV_HAS_FIELD(out, xdev_device_properties_t, field)) out->field = values->field
  XDEV_PLUGIN_FILL_(type_index);
  XDEV_PLUGIN_FILL_(name);
  XDEV_PLUGIN_FILL_(memory_total);
  XDEV_PLUGIN_FILL_(bus_id);
  XDEV_PLUGIN_FILL_(numa_node);
  XDEV_PLUGIN_FILL_(description);
  XDEV_PLUGIN_FILL_(properties);
  XDEV_PLUGIN_FILL_(property_count);
  XDEV_PLUGIN_FILL_(max_allocation_bytes); /* 1.5 */
  XDEV_PLUGIN_FILL_(memory_kind);          /* 1.5 */
#undef XDEV_PLUGIN_FILL_
}

/* Calls X(slot, required) for every slot of the v1 xdev_plugin_api_t, in
 * table order; `required` is 1 for the REQUIRED slots, 0 for the optional
 * ones. */
#define XDEV_PLUGIN_SLOTS(X)                                                                       \
  X(initialize, 1)                                                                                 \
  X(shutdown, 1)                                                                                   \
  X(describe_status, 0)                                                                            \
  X(device_types, 1) X(device_count, 1) X(device_get_properties, 1) X(device_open, 1)              \
      X(device_close, 1) X(memory_allocate, 1) X(memory_free, 1) X(memory_query, 1)                \
          X(host_memory_allocate, 0) X(host_memory_free, 0) X(stream_create, 1)                    \
              X(stream_destroy, 1) X(stream_synchronize, 1) X(event_create, 1) X(event_destroy, 1) \
                  X(event_record, 1) X(stream_wait_event, 1) X(event_synchronize, 1)               \
                      X(event_query, 1) X(copy_host_to_device, 1) X(copy_device_to_host, 1)        \
                          X(copy_device_to_device, 1) X(copy_peer, 0) X(kernels, 1)

/* The name of the first REQUIRED slot of `api` that is NULL, or NULL when
 * all are set. `api` must be at least a v1.0 table. Since 1.6, a table with
 * XDEV_CAP_HANDLE_MEMORY needs copy_host_to_device_at,
 * copy_device_to_host_at and copy_device_to_device_at instead of the three
 * old copy slots (copy_peer_at with XDEV_CAP_PEER_COPY is the loader's
 * capability check). */
static inline int xdev_plugin_is_pointer_copy_slot_(const char* slot) {
  return strcmp(slot, "copy_host_to_device") == 0 || strcmp(slot, "copy_device_to_host") == 0 ||
         strcmp(slot, "copy_device_to_device") == 0;
}
static inline const char* xdev_plugin_missing_slot(const xdev_plugin_api_t* api) {
  const int handles = (api->capabilities & XDEV_CAP_HANDLE_MEMORY) != 0;
#define XDEV_PLUGIN_CHECK_SLOT_(slot, required)                                      \
  if ((required) && api->slot == NULL &&                                             \
      !(handles && xdev_plugin_is_pointer_copy_slot_(#slot)))                         \
    return #slot;
  XDEV_PLUGIN_SLOTS(XDEV_PLUGIN_CHECK_SLOT_)
#undef XDEV_PLUGIN_CHECK_SLOT_
  if (handles) {
    if (!XDEV_HAS_FIELD(api, xdev_plugin_api_t, copy_host_to_device_at) ||
        api->copy_host_to_device_at == NULL) {
      return "copy_host_to_device_at";
    }
    if (!XDEV_HAS_FIELD(api, xdev_plugin_api_t, copy_device_to_host_at) ||
        api->copy_device_to_host_at == NULL) {
      return "copy_device_to_host_at";
    }
    if (!XDEV_HAS_FIELD(api, xdev_plugin_api_t, copy_device_to_device_at) ||
        api->copy_device_to_device_at == NULL) {
      return "copy_device_to_device_at";
    }
  }
  return NULL;
}

/* "float32", "int64", ... as docs/ops.md names them; NULL for a value that
 * is no dtype. */
static inline const char* xdev_plugin_dtype_name(xdev_dtype_t dtype) {
  static const char* const names[] = {NULL,   "float32", "float64",  "int32", "int64",
                                      "bool", "float16", "bfloat16", "uint8", "int8"};
  return (unsigned)dtype < sizeof names / sizeof names[0] ? names[dtype] : NULL;
}

/* Bytes per element; 0 for a value that is no dtype. */
static inline size_t xdev_plugin_dtype_size(xdev_dtype_t dtype) {
  static const unsigned char sizes[] = {0, 4, 8, 4, 8, 1, 2, 2, 1, 1};
  return (unsigned)dtype < sizeof sizes ? sizes[dtype] : 0;
}

/* Longest device type name (xdev_device_type_info_t::type). */
#define XDEV_PLUGIN_MAX_TYPE_NAME 31

/* 1 when `name` is a valid device type name: ASCII letters, digits and '_',
 * starting with a letter, at most XDEV_PLUGIN_MAX_TYPE_NAME characters (the
 * rule of xdev_device_type_info_t::type; independent of the C locale). */
static inline int xdev_plugin_valid_type_name(const char* name) {
  size_t n;
  if (name == NULL) return 0;
  for (n = 0; name[n] != '\0'; ++n) {
    const char c = name[n];
    const int letter = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z');
    if (n >= XDEV_PLUGIN_MAX_TYPE_NAME) return 0;
    if (!letter && (n == 0 || !((c >= '0' && c <= '9') || c == '_'))) return 0;
  }
  return n > 0;
}

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* XDEV_PLUGIN_HELPERS_H_ */
