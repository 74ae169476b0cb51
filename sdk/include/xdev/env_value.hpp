// Parsing environment-variable values with range checks (C++17 or later),
// header-only: the one definition the core (core/common/env.hpp) and the
// plugins use for every variable they read, so that a value means the same
// thing wherever it is read and a bad one is reported the same way.
//
// Each parse_* function takes the variable's name and its text (NULL when
// unset) and returns an EnvValue: the value to use and, when the text was
// not acceptable, `warning`: one sentence that names the variable, the value
// given and the value used instead. The rules:
//  - unset or empty: the default, no warning;
//  - a whole number is decimal digits only (no sign, space, or exponent):
//    anything else gets the default; a number outside [lowest, highest]
//    (including one too large for 64 bits) gets the nearest bound;
//  - a boolean is true/1/yes/on or false/0/no/off, any case: anything else
//    gets the default;
//  - a choice is one of the listed words, any case: anything else gets the
//    default.
// Nothing here reads the environment or logs: the caller does (getenv is
// the caller's business, and so is where the warning goes).
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>

namespace xdev {

// Hidden, as plugin_helpers: a plugin's copy of this inline code is its own.
namespace [[gnu::visibility("hidden")]] env_value {

template <typename T>
struct EnvValue {
  T value{};
  std::string warning;  // empty: the text was acceptable (or unset)
  bool ok() const noexcept { return warning.empty(); }
};

inline std::string quoted_setting(std::string_view name, std::string_view text) {
  std::string out(name);
  out += "='";
  out += text;
  out += "'";
  return out;
}

inline char ascii_lower(char c) noexcept {
  return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
}

inline bool equals_ignoring_case(std::string_view a, std::string_view b) noexcept {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (ascii_lower(a[i]) != ascii_lower(b[i])) return false;
  }
  return true;
}

inline EnvValue<uint64_t> parse_uint(std::string_view name, const char* text, uint64_t fallback,
                                     uint64_t lowest, uint64_t highest) {
  EnvValue<uint64_t> out{fallback, {}};
  if (text == nullptr || *text == '\0') return out;
  const std::string_view s(text);
  const std::string range =
      "[" + std::to_string(lowest) + ", " + std::to_string(highest) + "]";
  bool digits = true;
  bool too_big = false;
  uint64_t value = 0;
  for (char c : s) {
    if (c < '0' || c > '9') {
      digits = false;
      break;
    }
    const uint64_t d = static_cast<uint64_t>(c - '0');
    if (value > (UINT64_MAX - d) / 10) too_big = true;
    if (!too_big) value = value * 10 + d;
  }
  if (!digits) {
    out.warning = quoted_setting(name, s) + " is not a whole number in " + range + "; using " +
                  std::to_string(fallback) + " (the default)";
    return out;
  }
  if (too_big || value > highest) {
    out.value = highest;
    out.warning = quoted_setting(name, s) + " is above the largest value allowed " + range +
                  "; using " + std::to_string(highest);
    return out;
  }
  if (value < lowest) {
    out.value = lowest;
    out.warning = quoted_setting(name, s) + " is below the smallest value allowed " + range +
                  "; using " + std::to_string(lowest);
    return out;
  }
  out.value = value;
  return out;
}

inline EnvValue<bool> parse_bool(std::string_view name, const char* text, bool fallback) {
  EnvValue<bool> out{fallback, {}};
  if (text == nullptr || *text == '\0') return out;
  const std::string_view s(text);
  for (std::string_view word : {"true", "1", "yes", "on"}) {
    if (equals_ignoring_case(s, word)) {
      out.value = true;
      return out;
    }
  }
  for (std::string_view word : {"false", "0", "no", "off"}) {
    if (equals_ignoring_case(s, word)) {
      out.value = false;
      return out;
    }
  }
  out.warning = quoted_setting(name, s) +
                " is not a boolean (true/1/yes/on or false/0/no/off); using " +
                (fallback ? "true" : "false") + " (the default)";
  return out;
}

// The index of `text` in `choices`; `fallback` (an index) when unset or
// not one of them.
inline EnvValue<size_t> parse_choice(std::string_view name, const char* text, size_t fallback,
                                     std::initializer_list<std::string_view> choices) {
  EnvValue<size_t> out{fallback, {}};
  if (text == nullptr || *text == '\0') return out;
  const std::string_view s(text);
  std::string listed;
  size_t i = 0;
  for (std::string_view choice : choices) {
    if (equals_ignoring_case(s, choice)) {
      out.value = i;
      return out;
    }
    if (!listed.empty()) listed += ", ";
    listed += choice;
    ++i;
  }
  std::string used = "the default";
  if (fallback < choices.size()) used = std::string(choices.begin()[fallback]) + " (the default)";
  out.warning = quoted_setting(name, s) + " is not one of " + listed + "; using " + used;
  return out;
}

}  // namespace env_value
}  // namespace xdev
