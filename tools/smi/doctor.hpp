// `xdev-smi doctor [--expect TYPE]`: why a device is or is not there.
#pragma once

#include <iosfwd>
#include <string>

namespace xdev_smi {

// Prints the diagnosis to `out`. Returns the exit status: 0, or 1 when
// `expect` (a device type, "" for none) has no usable device, after the
// likely fix.
int doctor(const std::string& expect, std::ostream& out);

}  // namespace xdev_smi
