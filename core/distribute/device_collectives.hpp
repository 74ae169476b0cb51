// The core's side of device collectives (ABI 1.7) that tests reach below the
// SDK (<xdev/device_collectives.hpp> is the public one).
#pragma once

#include <string>
#include <vector>

namespace xdev::detail {

class LogicalDeviceState;

// "" when `devices` can run device collectives together (one plugin that
// declares XDEV_CAP_COLLECTIVES in a table that has the slots, each device
// its own physical device); otherwise why not, naming device and plugin.
std::string device_collectives_unavailable(const std::vector<LogicalDeviceState*>& devices);

}  // namespace xdev::detail
