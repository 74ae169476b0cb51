// What a Tensor points to: a typed, shaped, strided view of a Storage (a pool
// allocation on one logical device). A fresh tensor and its storage are one
// heap block; views keep that block alive through `owner`.
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>

#include <xdev/tensor.hpp>

#include "devices/logical_device.hpp"

namespace xdev::detail {

struct Storage {
  LogicalDeviceState* device = nullptr;
  void* data = nullptr;  // the pool's key for the block (nullptr: not the pool's)
  DeviceMemory memory;   // the block as the plugin names it (ABI 1.6): never
                         // dereferenced by the core (unless the device is
                         // host-addressable), never an address on a device
                         // with XDEV_CAP_HANDLE_MEMORY
  uint64_t bytes = 0;

  Storage() = default;
  // (`memory` is written by the allocation, after its own initializer ran.)
  Storage(LogicalDeviceState* d, uint64_t n) : device(d), bytes(n) { data = d->allocate(n, &memory); }
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;
  ~Storage() {
    if (data != nullptr) device->deallocate(data);
  }
};

struct TensorImpl {
  Storage* storage = nullptr;
  std::shared_ptr<void> owner;  // keeps `storage` alive; empty when embedded
  uint64_t byte_offset = 0;
  DType dtype = DType::kFloat32;
  Shape shape;
  Shape strides;  // in elements

  LogicalDeviceState* device() const { return storage->device; }
  // Where element 0 of this view lies: the storage's block, byte_offset in.
  DeviceMemory memory() const { return storage->memory.at(byte_offset); }
  bool contiguous() const;
  int64_t num_elements() const { return shape.num_elements(); }
  // Bytes from the first to one past the last element this view can touch
  // (0 for an empty view): what a copy of the view must move.
  uint64_t span_bytes() const;
};

// Row-major strides for `shape`.
Shape contiguous_strides(const Shape& shape);

// A new contiguous tensor on `device` (one allocation for header + storage
// bookkeeping, one from the device pool for the data). The byte size is
// checked first (opdefs/shape.hpp: dtype, negative dimensions, overflow);
// a bad one throws xdev::Error(kInvalidArgument) starting with `what` (the
// op) before anything is allocated.
std::shared_ptr<TensorImpl> make_tensor(LogicalDeviceState* device, DType dtype,
                                        const Shape& shape, std::string_view what = "tensor");

// A view of `base`'s storage with other shape/strides/offset. Throws
// xdev::Error(kInvalidArgument) unless the view's dimensions are valid and
// every byte it can reach lies inside the storage.
std::shared_ptr<TensorImpl> make_view(const std::shared_ptr<TensorImpl>& base,
                                      const Shape& shape, const Shape& strides,
                                      uint64_t byte_offset);

// A copy of `src` on `dst`: a contiguous tensor's elements, or the bytes a
// strided view spans with its strides kept (tensors/copy_tensor.cpp).
// Synchronous with respect to both devices.
std::shared_ptr<TensorImpl> copy_tensor(const TensorImpl& src, LogicalDeviceState* dst);

// Waits for the values and copies them into host memory, row-major. Not
// counted as a read-back (the core's own use).
HostTensor read_to_host(const TensorImpl& tensor);

}  // namespace xdev::detail
