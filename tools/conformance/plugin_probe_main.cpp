// xdev-plugin-probe: the helper the core starts (posix_spawn) to load a
// plugin it has not seen before in a separate process. See
// core/plugin_probe.hpp; not meant to be run by hand.
#include "loader/plugin_probe.hpp"

int main(int argc, char** argv) { return xdev::detail::plugin_probe_main(argc, argv); }
