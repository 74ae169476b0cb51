// Fuzz target: the device-name parser (DeviceName::parse). Any text either
// parses or throws xdev::Error; what parses prints back to text that parses
// to the same name.
#include <sstream>
#include <string>

#include <xdev/device.hpp>
#include <xdev/error.hpp>

#include "fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  xdev::DeviceName name;
  try {
    name = xdev::DeviceName::parse(text);
  } catch (const xdev::Error&) {
    return 0;
  }
  std::ostringstream printed;
  printed << name;
  xdev::DeviceName again;
  try {
    again = xdev::DeviceName::parse(printed.str());
  } catch (const xdev::Error& e) {
    xdev_fuzz::fail("\"" + text + "\" parsed, but its printed form \"" + printed.str() +
                    "\" does not: " + e.what());
  }
  if (!(again == name)) {
    xdev_fuzz::fail("\"" + text + "\" printed as \"" + printed.str() +
                    "\", which parses to another name");
  }
  if (!name.matches(name)) xdev_fuzz::fail("\"" + text + "\" does not match itself");
  return 0;
}
