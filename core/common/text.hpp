// Small text helpers shared by the core.
#pragma once

#include <cctype>
#include <string>
#include <string_view>

namespace xdev::detail {

// ASCII upper case ("gpu" -> "GPU"): device type names.
inline std::string to_upper(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

// ASCII lower case ("TRUE" -> "true"): switches read from the environment.
inline std::string to_lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace xdev::detail
