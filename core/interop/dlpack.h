/*
 * The parts of DLPack (https://github.com/dmlc/dlpack, include/dlpack/dlpack.h)
 * that xdev uses, copied from DLPack version 1.1 (layouts unchanged since
 * 1.0; DLManagedTensor and DLTensor are the 0.x structs, unchanged too).
 * DLPack is Apache-2.0 licensed. Debian 12's libdlpack-dev is 0.6, which
 * lacks DLManagedTensorVersioned, so xdev carries this copy (private to the
 * core and the Python bindings; the public <xdev/interop.hpp> only
 * forward-declares the two managed structs, so it mixes with any dlpack.h,
 * libtorch's included).
 */
#ifndef XDEV_CORE_INTEROP_DLPACK_H_
#define XDEV_CORE_INTEROP_DLPACK_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The DLPack version this copy follows (what xdev's exports report). */
#define XDEV_DLPACK_MAJOR_VERSION 1
#define XDEV_DLPACK_MINOR_VERSION 1

typedef struct {
  uint32_t major;
  uint32_t minor;
} DLPackVersion;

typedef enum {
  kDLCPU = 1,
  kDLCUDA = 2,
  kDLCUDAHost = 3,
  kDLOpenCL = 4,
  kDLVulkan = 7,
  kDLMetal = 8,
  kDLVPI = 9,
  kDLROCM = 10,
  kDLROCMHost = 11,
  kDLExtDev = 12,
  kDLCUDAManaged = 13,
  kDLOneAPI = 14,
  kDLWebGPU = 15,
  kDLHexagon = 16,
  kDLMAIA = 17,
} DLDeviceType;

typedef struct {
  DLDeviceType device_type;
  int32_t device_id;
} DLDevice;

typedef enum {
  kDLInt = 0U,
  kDLUInt = 1U,
  kDLFloat = 2U,
  kDLOpaqueHandle = 3U,
  kDLBfloat = 4U,
  kDLComplex = 5U,
  kDLBool = 6U,
} DLDataTypeCode;

typedef struct {
  uint8_t code;
  uint8_t bits;
  uint16_t lanes;
} DLDataType;

typedef struct {
  void* data;
  DLDevice device;
  int32_t ndim;
  DLDataType dtype;
  int64_t* shape;
  int64_t* strides; /* in elements; NULL means compact row-major */
  uint64_t byte_offset;
} DLTensor;

/* DLPack 0.x: no version, no flags. */
typedef struct DLManagedTensor {
  DLTensor dl_tensor;
  void* manager_ctx;
  void (*deleter)(struct DLManagedTensor* self);
} DLManagedTensor;

#define DLPACK_FLAG_BITMASK_READ_ONLY (1UL << 0UL)
#define DLPACK_FLAG_BITMASK_IS_COPIED (1UL << 1UL)
#define DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED (1UL << 2UL)

/* DLPack 1.x. */
typedef struct DLManagedTensorVersioned {
  DLPackVersion version;
  void* manager_ctx;
  void (*deleter)(struct DLManagedTensorVersioned* self);
  uint64_t flags;
  DLTensor dl_tensor;
} DLManagedTensorVersioned;

#ifdef __cplusplus
}  /* extern "C" */
#endif

#endif /* XDEV_CORE_INTEROP_DLPACK_H_ */
