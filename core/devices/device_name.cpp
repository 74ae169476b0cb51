// Parsing and printing of device names (docs/behaviour.md B3).
#include <xdev/device.hpp>
#include <xdev/error.hpp>

#include <cctype>
#include <charconv>
#include <string>

#include "common/text.hpp"
namespace xdev {
namespace {

[[noreturn]] void fail(std::string_view text, const std::string& why) {
  std::string message = "invalid device name \"";
  message += detail::printable(text);
  message += "\": ";
  message += why;
  throw Error(ErrorCode::kInvalidArgument, message);
}

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) !=
        std::tolower(static_cast<unsigned char>(b[i])))
      return false;
  }
  return true;
}

// A non-negative decimal integer with no sign and no spaces.
std::optional<int> parse_index(std::string_view s) {
  if (s.empty() || s.size() > 9) return std::nullopt;
  int value = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc() || end != s.data() + s.size() || s[0] == '-' || s[0] == '+')
    return std::nullopt;
  return value;
}

bool is_type_name(std::string_view s) {
  if (s.empty() || s.size() > 31 || !std::isalpha(static_cast<unsigned char>(s[0])))
    return false;
  for (char c : s) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  }
  return true;
}


// Parses "TYPE", "TYPE:ID" or "TYPE:*" into name.type/name.id.
void parse_device_part(std::string_view text, std::string_view part,
                       std::string_view component, DeviceName& name) {
  size_t colon = part.find(':');
  std::string_view type = part.substr(0, colon);
  if (!is_type_name(type)) {
    fail(text, "device type \"" + std::string(type) + "\" in \"" + std::string(component) +
                   "\" is not a type name (letters, digits and '_', starting with a letter)");
  }
  name.type = detail::to_upper(type);
  if (colon == std::string_view::npos) return;
  std::string_view index = part.substr(colon + 1);
  if (index == "*") return;
  std::optional<int> id = parse_index(index);
  if (!id) {
    fail(text, "device index \"" + std::string(index) + "\" in \"" + std::string(component) +
                   "\" is not a non-negative integer");
  }
  name.id = *id;
}

}  // namespace

DeviceName DeviceName::parse(std::string_view text) {
  DeviceName name;
  if (text.empty()) fail(text, "the name is empty");
  std::string_view rest = text;
  if (rest.front() == '/') rest.remove_prefix(1);
  if (rest.empty()) fail(text, "the name has no parts after \"/\"");

  std::string_view device_component;  // the part that named the device
  while (true) {
    size_t slash = rest.find('/');
    std::string_view component = rest.substr(0, slash);
    if (component.empty()) fail(text, "empty part between \"/\" separators");

    size_t colon = component.find(':');
    std::string_view key = component.substr(0, colon);
    std::string_view value =
        colon == std::string_view::npos ? std::string_view() : component.substr(colon + 1);

    auto once = [&](bool already) {
      if (already) fail(text, "\"" + std::string(key) + "\" is given twice");
    };
    auto second_device = [&] {
      if (!device_component.empty()) {
        fail(text, "names two devices, \"" + std::string(device_component) + "\" and \"" +
                       std::string(component) + "\"");
      }
      device_component = component;
    };
    auto index_of = [&](std::string_view what) {
      std::optional<int> id = parse_index(value);
      if (!id) {
        fail(text, std::string(what) + " \"" + std::string(value) + "\" in \"" +
                       std::string(component) + "\" is not a non-negative integer");
      }
      return *id;
    };

    if (colon == std::string_view::npos &&
        (iequals(key, "job") || iequals(key, "replica") || iequals(key, "task") ||
         iequals(key, "device") || iequals(key, "physical_device"))) {
      fail(text, "\"" + std::string(component) + "\" needs a value (e.g. " +
                     std::string(component) + ":0)");
    }
    if (iequals(key, "job") && colon != std::string_view::npos) {
      once(name.job.has_value());
      if (value.empty() || !is_type_name(value))
        fail(text, "job name \"" + std::string(value) + "\" is not a name");
      name.job = std::string(value);
    } else if (iequals(key, "replica") && colon != std::string_view::npos) {
      once(name.replica.has_value());
      name.replica = index_of("replica");
    } else if (iequals(key, "task") && colon != std::string_view::npos) {
      once(name.task.has_value());
      name.task = index_of("task");
    } else if ((iequals(key, "device") || iequals(key, "physical_device")) &&
               colon != std::string_view::npos) {
      second_device();
      if (value.empty()) fail(text, "\"" + std::string(component) + "\" names no device type");
      parse_device_part(text, value, component, name);
    } else if (is_type_name(key) && slash == std::string_view::npos) {
      // Legacy "TYPE:ID" / "TYPE" spelling (/cpu:0, GPU:1, gpu), last part only
      // so that a misspelt "replcia:0" is not taken for a device type.
      second_device();
      parse_device_part(text, component, component, name);
    } else {
      fail(text, "unknown part \"" + std::string(component) +
                     "\" (expected job:NAME, replica:N, task:N, device:TYPE:N or TYPE:N)");
    }

    if (slash == std::string_view::npos) break;
    rest.remove_prefix(slash + 1);
    if (rest.empty()) fail(text, "the name ends with \"/\"");
  }
  return name;
}

std::string DeviceName::to_string() const {
  std::string out;
  if (job) out += "/job:" + *job;
  if (replica) out += "/replica:" + std::to_string(*replica);
  if (task) out += "/task:" + std::to_string(*task);
  if (type) {
    out += "/device:" + *type + ":";
    out += id ? std::to_string(*id) : std::string("*");
  }
  return out;
}

bool DeviceName::matches(const DeviceName& full) const {
  auto same = [](const auto& mine, const auto& theirs) { return !mine || mine == theirs; };
  return same(job, full.job) && same(replica, full.replica) && same(task, full.task) &&
         same(type, full.type) && same(id, full.id);
}

std::string canonical_device_name(std::string_view type, int id) {
  std::string out = "/job:localhost/replica:0/task:0/device:";
  out += type;
  out += ':';
  out += std::to_string(id);
  return out;
}

std::ostream& operator<<(std::ostream& os, const DeviceName& name) {
  return os << name.to_string();
}

}  // namespace xdev
