#include "loader/plugin_filter.hpp"

#include "common/env.hpp"

#include <algorithm>
#include <cstdlib>
#include <system_error>

namespace fs = std::filesystem;

namespace xdev::detail {
namespace {

std::string trim(const std::string& s) {
  const size_t begin = s.find_first_not_of(" \t");
  if (begin == std::string::npos) return "";
  const size_t end = s.find_last_not_of(" \t");
  return s.substr(begin, end - begin + 1);
}

fs::path canonical_or_same(const fs::path& p) {
  std::error_code ec;
  fs::path c = fs::canonical(p, ec);
  return ec ? p : c;
}

// The plugin name a file name stands for under the naming rule above, for
// each of the accepted spellings ("xdev_plugin_cpu.so" -> "cpu").
bool file_matches_name(const fs::path& file, const std::string& name) {
  const std::string base = file.filename().string();
  for (const char* prefix : {"xdev_plugin_", "xdev_test_", ""}) {
    if (base == std::string(prefix) + name + ".so") return true;
  }
  return false;
}

}  // namespace

std::optional<PluginFilter> PluginFilter::from_environment() {
  const auto list = env::text("XDEV_PLUGINS");
  if (!list) return std::nullopt;
  return parse(*list);
}

std::optional<PluginFilter> PluginFilter::parse(const std::string& list) {
  PluginFilter filter;
  size_t start = 0;
  while (start <= list.size()) {
    size_t end = list.find_first_of(",:", start);
    if (end == std::string::npos) end = list.size();
    const std::string entry = trim(list.substr(start, end - start));
    start = end + 1;
    if (entry.empty()) continue;
    if (!filter.text_.empty()) filter.text_ += ",";
    filter.text_ += entry;
    if (entry.find('/') != std::string::npos) {
      filter.paths_.push_back(canonical_or_same(entry));
    } else {
      filter.names_.push_back(entry);
    }
  }
  if (filter.names_.empty() && filter.paths_.empty()) return std::nullopt;
  return filter;
}

bool PluginFilter::selected_by_path(const fs::path& file) const {
  const fs::path canonical = canonical_or_same(file);
  return std::find(paths_.begin(), paths_.end(), canonical) != paths_.end();
}

bool PluginFilter::selects(const fs::path& file) const {
  return selected_by_path(file) || !expected_name(file).empty();
}

std::string PluginFilter::expected_name(const fs::path& file) const {
  if (selected_by_path(file)) return "";
  for (const std::string& name : names_) {
    if (file_matches_name(file, name)) return name;
  }
  return "";
}

std::string PluginFilter::skip_reason() const {
  return "not named in XDEV_PLUGINS (" + text_ + ")";
}

}  // namespace xdev::detail
