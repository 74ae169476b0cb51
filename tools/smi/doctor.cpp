// The doctor reads what the SDK reports (search path, plugin files and their
// load results, physical and logical devices) and what the environment says,
// checks the libraries each plugin needs, and turns what it found into a
// likely fix for a missing device type.
#include "doctor.hpp"

#include <cstdlib>
#include <filesystem>
#include <map>
#include <ostream>
#include <set>
#include <vector>

#include <xdev/config.hpp>
#include <xdev/xdev.hpp>

#include "libraries.hpp"

namespace xdev_smi {
namespace {

namespace fs = std::filesystem;

std::string env(const char* name, bool* set) {
  const char* v = std::getenv(name);
  *set = v != nullptr;
  return v != nullptr ? v : "";
}

// What a plugin loads at run time on top of its DT_NEEDED libraries: the
// cuda plugin maps nothing of CUDA until the driver shows a device
// (plugins/cuda/shim.cpp), then its implementation beside it.
struct LazyNeed {
  std::string what;  // the library or file
  std::string role;
};
std::vector<LazyNeed> lazy_needs(const xdev::PluginInfo& p) {
  const std::string file = fs::path(p.file).filename().string();
  if (p.name != "cuda" && file != "xdev_plugin_cuda.so") return {};
  return {{"libcuda.so.1", "the NVIDIA driver (dlopen'ed at initialize)"},
          {(fs::path(p.file).parent_path() / "cuda_impl" / "xdev_cuda_impl.so").string(),
           "the CUDA implementation (loaded once a GPU is found)"}};
}

struct PluginFindings {
  std::vector<std::string> missing;  // libraries not found
};

PluginFindings check_libraries(const xdev::PluginInfo& p, std::ostream& out) {
  PluginFindings f;
  // `trusted`: the file may be loaded here to see where its own search finds
  // its libraries (a plugin the core loaded, or the cuda implementation, ours);
  // a skipped plugin may be one that crashes when loaded (the probe's job), so
  // its libraries are looked up from here.
  auto check_file = [&](const std::string& file, const std::string& indent, bool trusted) {
    std::string error;
    auto needed = needed_libraries(file, &error);
    if (!error.empty()) {
      out << indent << "(cannot read its libraries: " << error << ")\n";
      return;
    }
    std::string load_error;
    std::vector<std::pair<std::string, Lookup>> resolved;
    if (trusted) {
      resolved = resolve_needed(file, needed, &load_error);
    } else {
      for (const auto& lib : needed) resolved.emplace_back(lib, find_library(lib));
    }
    if (!load_error.empty()) out << indent << "(cannot be loaded: " << load_error << ")\n";
    for (const auto& [lib, l] : resolved) {
      out << indent << lib << ": " << (l.found ? "found" : "NOT FOUND");
      if (!l.where.empty()) out << " (" << l.where << ")";
      out << "\n";
      if (!l.found) f.missing.push_back(lib);
    }
  };
  out << "    needs:\n";
  check_file(p.file, "      ", p.loaded);
  for (const LazyNeed& n : lazy_needs(p)) {
    const bool is_file = n.what.find('/') != std::string::npos;
    Lookup l = is_file && !fs::exists(n.what) ? Lookup{false, "no such file"} : find_library(n.what);
    out << "      " << n.what << " - " << n.role << ": " << (l.found ? "found" : "NOT FOUND");
    if (!l.where.empty() && !is_file) out << " (" << l.where << ")";
    if (!l.found && is_file) out << " (" << l.where << ")";
    out << "\n";
    if (!l.found) f.missing.push_back(n.what);
    if (is_file && fs::exists(n.what)) {
      out << "      its libraries:\n";
      check_file(n.what, "        ", true);
    }
  }
  return f;
}

// Plugins that could offer `type` (by what they are; the SDK lists types only
// for devices that exist).
bool may_offer(const xdev::PluginInfo& p, const std::string& type) {
  if (type == "GPU") return p.name == "cuda" || p.name == "sim" || p.file.find("cuda") != std::string::npos;
  if (type == "CPU") return p.name == "cpu";
  return false;
}

}  // namespace

int doctor(const std::string& expect_in, std::ostream& out) {
  std::string expect;
  for (char c : expect_in) expect += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  std::vector<std::string> fixes;

  out << "xdev " << xdev::version() << " doctor\n\n";

  out << "Plugin search path (XDEV_PLUGIN_PATH first, then the build's or install's own):\n";
  for (const auto& dir : xdev::plugin_search_path()) {
    std::error_code ec;
    out << "  " << dir << (fs::is_directory(dir, ec) ? "" : "  (missing)") << "\n";
  }

  out << "\nEnvironment:\n";
  struct Var {
    const char* name;
    const char* meaning;
  };
  const Var vars[] = {
      {"XDEV_PLUGIN_PATH", "directories searched before the default ones"},
      {"XDEV_PLUGINS", "only the plugins named are loaded"},
      {"XDEV_VISIBLE_DEVICES", "hides the physical devices it does not list"},
      {"CUDA_VISIBLE_DEVICES", "hides NVIDIA GPUs from the CUDA driver (\"\" or -1: all)"},
      {"XDEV_PROBE_PLUGINS", "0: plugins are loaded without the crash-proof probe"},
      {"XDEV_VALIDATE", "1: every plugin runs under the validation layer"},
      {"XDEV_TRACE", "a trace file is written"},
  };
  bool any = false;
  std::map<std::string, std::pair<bool, std::string>> values;
  for (const Var& v : vars) {
    bool set = false;
    std::string value = env(v.name, &set);
    values[v.name] = {set, value};
    if (!set) continue;
    any = true;
    out << "  " << v.name << "=\"" << value << "\"  (" << v.meaning << ")\n";
  }
  if (!any) out << "  (none of the variables that change which devices appear is set)\n";

  const auto plugins = xdev::list_plugins();
  const auto devices = xdev::list_physical_devices();

  out << "\nPlugin files:\n";
  if (plugins.empty()) out << "  (none found in the search path)\n";
  std::map<std::string, PluginFindings> findings;
  for (const auto& p : plugins) {
    out << "  " << p.file << "\n";
    if (p.loaded) {
      out << "    loaded: plugin \"" << p.name << "\", ABI " << p.abi_version << ", "
          << p.device_count << " device(s)";
      if (!p.status.empty()) out << ": " << p.status;
      out << "\n";
    } else {
      out << "    skipped: " << p.reason << "\n";
    }
    findings[p.file] = check_libraries(p, out);
  }

  out << "\nDevice types:\n";
  std::map<std::string, std::set<std::string>> platforms;  // type -> "plugin (platform)"
  std::map<std::string, std::vector<std::string>> names;
  for (const auto& d : devices) {
    platforms[d.device_type].insert(d.plugin + " (platform " + d.platform + ")");
    names[d.device_type].push_back(d.name + " = " + d.model + " [" + d.plugin + "]");
  }
  if (platforms.empty()) out << "  (no device at all)\n";
  for (const auto& [type, from] : platforms) {
    out << "  " << type << ": " << names[type].size() << " device(s) from";
    for (const auto& f : from) out << " " << f;
    out << "\n";
    if (from.size() > 1) {
      out << "    note: several plugins offer type " << type
          << "; their devices are numbered in one sequence:\n";
      for (const auto& n : names[type]) out << "      " << n << "\n";
    }
  }

  if (expect.empty()) return 0;
  out << "\nExpected " << expect << ": ";
  bool logical = false;
  int physical = 0;
  for (const auto& d : devices) physical += d.device_type == expect;
  try {
    for (const auto& d : xdev::list_logical_devices()) logical = logical || d.device_type == expect;
  } catch (const std::exception& e) {
    out << "(devices could not be initialized: " << e.what() << ") ";
  }
  if (logical) {
    out << "present (" << physical << " physical device(s))\n";
    return 0;
  }
  out << "MISSING\n";

  if (physical > 0) {
    fixes.push_back("the " + std::to_string(physical) + " physical " + expect +
                    " device(s) are hidden by XDEV_VISIBLE_DEVICES=\"" +
                    values["XDEV_VISIBLE_DEVICES"].second + "\": unset it or list them");
  }
  const auto& [cuda_set, cuda_value] = values["CUDA_VISIBLE_DEVICES"];
  if (expect == "GPU" && cuda_set && (cuda_value.empty() || cuda_value == "-1")) {
    fixes.push_back("CUDA_VISIBLE_DEVICES=\"" + cuda_value +
                    "\" hides every NVIDIA GPU: unset it (or list the GPUs to use)");
  }
  bool candidate = false;
  for (const auto& p : plugins) {
    if (!may_offer(p, expect)) continue;
    candidate = true;
    const std::string file = fs::path(p.file).filename().string();
    if (!p.loaded && p.reason.find("XDEV_PLUGINS") != std::string::npos) {
      fixes.push_back(file + " is not loaded because XDEV_PLUGINS=\"" +
                      values["XDEV_PLUGINS"].second + "\" does not name it: add \"" +
                      (p.name.empty() ? file : p.name) + "\" or unset XDEV_PLUGINS");
    } else if (!p.loaded) {
      fixes.push_back(file + " was skipped: " + p.reason);
    } else if (p.device_count == 0) {
      std::string why = "plugin \"" + p.name + "\" loaded but reports no device";
      if (!p.status.empty()) why += " (" + p.status + ")";
      for (const auto& m : findings[p.file].missing) {
        if (m == "libcuda.so.1") {
          why += "; libcuda.so.1 was not found: install the NVIDIA driver (Debian: "
                 "nvidia-driver) or, in a container, run it with the GPU passed through "
                 "(--gpus all)";
        } else {
          why += "; " + m + " was not found: install it or put its directory on "
                 "LD_LIBRARY_PATH";
        }
      }
      if (findings[p.file].missing.empty() && expect == "GPU") {
        why += "; the driver and libraries are there, so the machine has no usable GPU "
               "(nvidia-smi -L lists what the driver sees)";
      }
      fixes.push_back(why);
    }
  }
  if (!candidate) {
    if (expect == "GPU") {
      fixes.push_back("no plugin file that offers GPU (xdev_plugin_cuda.so) is in the search "
                      "path: build xdev with the CUDA Toolkit installed (meson finds nvcc) or "
                      "add the directory holding the plugin to XDEV_PLUGIN_PATH");
    } else {
      fixes.push_back("no plugin in the search path offers " + expect +
                      ": add its directory to XDEV_PLUGIN_PATH");
    }
  }
  out << "Likely fix:\n";
  for (const auto& f : fixes) out << "  - " << f << "\n";
  return 1;
}

}  // namespace xdev_smi
