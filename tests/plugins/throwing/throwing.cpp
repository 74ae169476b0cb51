// The misbehaving pieces of the throwing test plugin (throwing_plugin.c):
// C++ exceptions escaping through the C ABI, which the ABI forbids.
#include <stdexcept>

#include <xdev/plugin.h>

extern "C" xdev_status_t* throwing_add(void* /*context*/, const xdev_kernel_call_t* /*call*/) {
  throw std::runtime_error("throwing plugin: the Add kernel throws");
}

extern "C" xdev_status_t* throwing_neg(void* /*context*/, const xdev_kernel_call_t* /*call*/) {
  throw 42;
}

extern "C" xdev_status_t* throwing_copy_device_to_host(xdev_stream_t* /*stream*/, void* /*dst*/,
                                                       const void* /*src*/, uint64_t /*size*/) {
  throw std::logic_error("throwing plugin: copy_device_to_host throws");
}
