// Exchanging tensors with other libraries: DLPack (zero-copy hand-over to and
// from libtorch, NumPy, CuPy, ...) and safetensors files.
//
//   DLManagedTensor* m = xdev::to_dlpack_legacy(t);   // at::fromDLPack(m): no copy
//   xdev::Tensor u = xdev::from_dlpack(at::toDLPack(torch_tensor));
//   xdev::save_file({{"w", w}}, "model.safetensors");
//   xdev::Tensor w2 = xdev::load_file("model.safetensors").tensors.at("w");
//
// This header only declares DLPack's two managed structs; include dlpack.h
// (DLPack 1.x, or libtorch's ATen/dlpack.h for the 0.x struct) to use their
// fields.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include <xdev/device.hpp>
#include <xdev/export.hpp>
#include <xdev/tensor.hpp>

struct DLManagedTensor;            // DLPack 0.x (no version, no flags)
struct DLManagedTensorVersioned;   // DLPack 1.x

namespace xdev {

// --- DLPack ---

// A DLPack device: a DLDeviceType code (kDLCPU = 1, kDLCUDA = 2, kDLOpenCL = 4,
// kDLExtDev = 12, ...) and an id. Plugins declare theirs (docs/plugin-abi.md).
struct DLPackDevice {
  int32_t device_type = 0;
  int32_t device_id = 0;
  bool operator==(const DLPackDevice&) const = default;
};

// The DLPack device of a tensor's memory (Python's __dlpack_device__).
XDEV_API DLPackDevice dlpack_device(const Tensor& tensor);

// The logical device from_dlpack would use in place for memory on `device`:
// a logical device of the physical device whose plugin declared that DLPack
// type with that ordinal (the current DeviceScope's device when it is one of
// them, else the first); empty when from_dlpack would have to copy.
XDEV_API std::optional<Device> dlpack_zero_copy_device(DLPackDevice device);

// The native handle of `device`'s stream as DLPack's Python protocol passes
// it (__dlpack__(stream=...); CUDA: the cudaStream_t), from the plugin's ABI
// 1.3 slot stream_native_handle; empty when the plugin offers none. A
// consumer importing memory in place hands it to the producer, so that the
// producer's pending work is ordered before the device's.
XDEV_API std::optional<int64_t> dlpack_stream(std::string_view device);

// What the consumer asks for (the arguments of Python's __dlpack__).
struct ToDLPackOptions {
  // Export to this device. Only the tensor's own DLPack device or the host
  // ({kDLCPU, 0}: a copy read back from the device) are possible; another one
  // throws Error(kUnimplemented).
  std::optional<DLPackDevice> device;
  // true: always a copy; false: never (throws Error(kInvalidArgument) when one
  // is needed); empty: a copy only when `device` needs one.
  std::optional<bool> copy;
};

// A DLPack 1.x view of `tensor`'s memory, no copy unless `options` need one
// (then DLPACK_FLAG_BITMASK_IS_COPIED is set). Flagged read-only unless it is
// such a copy: xdev tensors are immutable, and so is a view of one; a copy
// made for the consumer is the consumer's to write. Waits for the work pending
// on the tensor's device first, so the memory holds its values. The caller
// owns the result: call its deleter once (from any thread); the memory stays
// valid until then, also after the tensor is gone.
XDEV_API DLManagedTensorVersioned* to_dlpack(const Tensor& tensor,
                                             const ToDLPackOptions& options = {});
// The same as DLPack 0.x's struct, for consumers that predate 1.0 (libtorch
// 1.x's at::fromDLPack). That struct has no read-only flag: the consumer must
// not write to the memory.
XDEV_API DLManagedTensor* to_dlpack_legacy(const Tensor& tensor);

// A tensor over the memory `managed` describes. No copy when an xdev device
// can address that memory (dlpack_zero_copy_device, or memory xdev exported
// itself); the producer's deleter then runs when the last tensor using the
// memory is gone. Otherwise host memory (kDLCPU, kDLCUDAHost, kDLROCMHost) is
// copied onto the device placement picks for a new tensor, and the deleter
// runs before from_dlpack returns; other memory throws Error(kNotFound)
// naming the DLPack device. Dtypes: the nine of DType (bool, int8, uint8, int32,
// int64, float16, bfloat16, float32, float64; lanes 1); others throw
// Error(kInvalidArgument) naming them. On success xdev owns
// `managed`; when from_dlpack throws, the caller still does. The C structs
// carry no stream: for device memory the caller makes sure the producer's
// work on it has finished (as with at::toDLPack), or uses dlpack_stream()
// with Python's protocol.
XDEV_API Tensor from_dlpack(DLManagedTensorVersioned* managed);
XDEV_API Tensor from_dlpack(DLManagedTensor* managed);

// --- safetensors (https://github.com/huggingface/safetensors) ---

// A loaded file. Each tensor has its file dtype where xdev has it (F32, F64,
// I32, I64, BOOL, F16 as float16, BF16 as bfloat16, U8 as uint8, I8 as int8);
// the file dtypes xdev has no dtype for are widened exactly (U16 and I16 to
// int32; U32 and U64 to int64, U64 only up to int64's maximum), and `dtypes`
// remembers their file dtype ("U16") so save_file writes them back bit for
// bit.
struct SafetensorsFile {
  std::map<std::string, Tensor> tensors;
  // Tensor name -> file dtype, for the widened tensors only.
  std::map<std::string, std::string> dtypes;
  // The file's "__metadata__" (string to string).
  std::map<std::string, std::string> metadata;
};

// Reads a safetensors file. Tensors go to `device` (any spelling; "" places
// them like constant()). Throws Error(kNotFound) when the file cannot be
// opened and Error(kInvalidArgument) naming the file and the entry for a
// malformed one (sizes are checked against the file before anything is
// allocated).
XDEV_API SafetensorsFile load_file(const std::string& path, std::string_view device = "");

// Writes `tensors` (read back from their devices) to `path` in the
// safetensors format, with `metadata` as "__metadata__". `dtypes` names a
// narrower file dtype for some tensors ("F16", "BF16", "U8", "I8", "U16",
// "I16", "U32"): float32 values are rounded to nearest even (exact for values
// that came from that dtype); integers outside the dtype's range throw
// Error(kInvalidArgument) naming the tensor and the value. The file is
// written to a temporary name and renamed, so `path` is never half written.
XDEV_API void save_file(const std::map<std::string, Tensor>& tensors, const std::string& path,
                        const std::map<std::string, std::string>& metadata = {},
                        const std::map<std::string, std::string>& dtypes = {});
// Writes what load_file read (its dtypes and metadata included).
XDEV_API void save_file(const SafetensorsFile& file, const std::string& path);

}  // namespace xdev
