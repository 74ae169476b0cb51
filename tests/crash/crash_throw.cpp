// The initialize of the CRASH_THROW_INIT fixture (crash_plugin.c): a plugin
// written in C++ that lets an exception escape through the C ABI, which the
// ABI forbids. The core must survive it and skip the plugin.
#include <stdexcept>

#include <xdev/plugin.h>

extern "C" xdev_status_t* crash_throwing_initialize(const xdev_plugin_init_args_t* /*args*/,
                                                    xdev_plugin_t** /*out*/) {
  throw std::runtime_error("crash fixture: initialize throws");
}
