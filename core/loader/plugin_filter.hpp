// XDEV_PLUGINS: load only the plugins a program (or a test) names.
//
// Without the variable (or with it empty) the core loads every plugin file it
// finds. With `XDEV_PLUGINS=cpu,sim` it loads only those; every other file it
// finds is listed as skipped with the reason "not named in XDEV_PLUGINS
// (cpu,sim)" and never dlopen'ed, so a plugin the user did not ask for costs
// nothing and cannot change the device list (tests count "the two simulated
// GPUs" and must not see a real one).
//
// An entry is a plugin name or a file path:
//  - a name (no '/') selects the files named `xdev_plugin_NAME.so`,
//    `xdev_test_NAME.so` or `NAME.so` in the search path, and the plugin a
//    selected file loads must then really be named NAME (its table's `name`);
//    otherwise it is skipped, naming both.
//  - a path (contains '/') selects that file, also when it is not in the
//    search path (it is then loaded after the search path's files).
// Entries are separated by ',' (or ':'); spaces around them are ignored.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace xdev::detail {

class PluginFilter {
 public:
  // The filter XDEV_PLUGINS asks for; nullopt when it is unset or empty.
  static std::optional<PluginFilter> from_environment();
  // Parses a list as XDEV_PLUGINS spells it; nullopt when it has no entry.
  static std::optional<PluginFilter> parse(const std::string& list);

  // Whether `file` is named (by its file name or as a path).
  bool selects(const std::filesystem::path& file) const;
  // The plugin name `file` was selected by, "" when it was selected by path
  // (then any plugin name is fine).
  std::string expected_name(const std::filesystem::path& file) const;
  // The files named by path, canonical where they exist, in list order.
  const std::vector<std::filesystem::path>& paths() const { return paths_; }
  // "not named in XDEV_PLUGINS (cpu,sim)".
  std::string skip_reason() const;

 private:
  bool selected_by_path(const std::filesystem::path& file) const;

  std::vector<std::string> names_;
  std::vector<std::filesystem::path> paths_;
  std::string text_;  // the entries as given, for messages
};

}  // namespace xdev::detail
