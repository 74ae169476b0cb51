// The one device type the cuda plugin offers. Defined once for the shim
// (shim.cpp answers device_types before the implementation is loaded) and
// for the implementation (plugin.cpp), so both describe the same type.
#pragma once

#include <xdev/plugin.h>

namespace xdev::cuda_common {

inline constexpr xdev_device_type_info_t kGpuType = {
    .struct_size = XDEV_DEVICE_TYPE_INFO_STRUCT_SIZE,
    .ext = nullptr,
    .type = "GPU",
    .platform = "cuda",
    .priority = XDEV_PRIORITY_GPU,
    // ABI 1.3: the memory is CUDA device memory, so DLPack capsules of
    // torch/cupy/jax CUDA tensors are taken in place (same device id).
    .dlpack_device_type = XDEV_DLPACK_CUDA,
};
inline constexpr const xdev_device_type_info_t* kDeviceTypes[] = {&kGpuType};

}  // namespace xdev::cuda_common
