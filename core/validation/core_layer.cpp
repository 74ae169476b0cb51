#include "validation/core_layer.hpp"

#include <mutex>

#include "common/log.hpp"
#include "common/status.hpp"
#include "trace/trace_config.hpp"
#include "validation/layer.hpp"

namespace xdev::detail {
namespace {

std::mutex g_mutex;
std::vector<std::string>& reports() {
  static auto* r = new std::vector<std::string>;
  return *r;
}

}  // namespace

bool validation_enabled() {
  static const bool on = validation_from_environment();
  return on;
}

const xdev_plugin_api_t* validate_plugin(const xdev_plugin_api_t* api,
                                         const xdev_host_api_t* host,
                                         const std::filesystem::path& file) {
  validation::Options options;
  options.plugin_file = file.filename().string();
  options.sink = [](const validation::Report& report) {
    std::string text = report.text();
    log(XDEV_LOG_ERROR, text);
    std::lock_guard lock(g_mutex);
    reports().push_back(std::move(text));
  };
  // A pointer that is not a status of the host's status_create is not read
  // here: INTERNAL, and the core reports it where the status arrives.
  options.status_code = [](const xdev_status_t* s) {
    return is_host_status(s) ? s->code : XDEV_STATUS_INTERNAL;
  };
  options.status_destroy = [](xdev_status_t* s) { StatusPtr owned(s); };
  log(XDEV_LOG_INFO, "plugin " + file.string() + ": validation layer on (XDEV_VALIDATE)");
  return validation::wrap(api, host, std::move(options));
}

std::vector<std::string> validation_reports() {
  std::lock_guard lock(g_mutex);
  return reports();
}

}  // namespace xdev::detail
