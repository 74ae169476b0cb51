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

// `s` as it can be printed in a message: control characters, a NUL among
// them, as \xNN, and \ and " escaped, so nothing of a user's text is cut or
// hidden ("GPU\0:1" reads GPU\x00:1, not GPU).
inline std::string printable(std::string_view s) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(s.size());
  for (char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == '\\' || c == '"') {
      out += '\\';
      out += ch;
    } else if (c < 0x20 || c == 0x7f) {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 0xf];
    } else {
      out += ch;
    }
  }
  return out;
}

}  // namespace xdev::detail
