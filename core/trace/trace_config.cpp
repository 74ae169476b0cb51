#include "trace/trace_config.hpp"

#include <cstdlib>
#include <string>

#include "common/log.hpp"
#include "common/text.hpp"

namespace xdev::detail {

std::string trace_path_from_environment() {
  const char* v = std::getenv("XDEV_TRACE");
  return v != nullptr ? std::string(v) : std::string();
}

bool validation_from_environment() {
  const char* v = std::getenv("XDEV_VALIDATE");
  if (v == nullptr) return false;
  const std::string s = to_lower(v);
  if (s.empty() || s == "0" || s == "false" || s == "no" || s == "off") return false;
  if (s == "1" || s == "true" || s == "yes" || s == "on") return true;
  log(XDEV_LOG_WARNING, "XDEV_VALIDATE=" + std::string(v) +
                            " is not one of 1/0, true/false, yes/no, on/off; "
                            "validation is on");
  return true;
}

}  // namespace xdev::detail
