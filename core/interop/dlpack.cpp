// DLPack export and import (<xdev/interop.hpp>). An export is a view of the
// tensor's storage that keeps it alive; an import wraps the producer's memory
// in a Storage that the pool never frees: the producer's deleter runs when
// the last tensor using it is gone. The DLPack device of a device comes from
// its plugin (ABI 1.3, core/loader).
#include <xdev/interop.hpp>
#include <xdev/ops.hpp>

#include <algorithm>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common/status.hpp"
#include "devices/runtime.hpp"
#include "interop/dlpack.h"
#include "placement/decide.hpp"
#include "placement/placement_state.hpp"
#include "tensors/tensor_impl.hpp"
#include "transfer/copy.hpp"

namespace xdev {
namespace {

using detail::LogicalDeviceState;
using detail::PhysicalDeviceRecord;
using detail::PluginDeviceType;
using detail::TensorImpl;

const char* device_type_name(int32_t type) {
  switch (type) {
    case kDLCPU: return "cpu";
    case kDLCUDA: return "cuda";
    case kDLCUDAHost: return "cuda_host";
    case kDLOpenCL: return "opencl";
    case kDLVulkan: return "vulkan";
    case kDLMetal: return "metal";
    case kDLVPI: return "vpi";
    case kDLROCM: return "rocm";
    case kDLROCMHost: return "rocm_host";
    case kDLExtDev: return "ext_dev";
    case kDLCUDAManaged: return "cuda_managed";
    case kDLOneAPI: return "oneapi";
    case kDLWebGPU: return "webgpu";
    case kDLHexagon: return "hexagon";
    case kDLMAIA: return "maia";
  }
  return "unknown";
}

// "cuda:0 (DLPack device type 2)"
std::string describe(DLPackDevice d) {
  return std::string(device_type_name(d.device_type)) + ":" + std::to_string(d.device_id) +
         " (DLPack device type " + std::to_string(d.device_type) + ")";
}

// Memory the host can read directly.
bool host_readable(int32_t type) {
  return type == kDLCPU || type == kDLCUDAHost || type == kDLROCMHost;
}

const PluginDeviceType& device_type_of(const PhysicalDeviceRecord& record) {
  for (const detail::PluginDevice& d : record.plugin->devices) {
    if (d.ordinal == record.ordinal) return record.plugin->types.at(d.type_index);
  }
  throw Error(ErrorCode::kInternal, "no device type for " + record.info.name);
}

DLPackDevice dlpack_device_of(const LogicalDeviceState* device) {
  const PhysicalDeviceRecord& record = device->physical();
  const PluginDeviceType& type = device_type_of(record);
  // Host memory has one DLPack id, 0, however many plugins offer it.
  const int32_t id = type.dlpack_device_type == kDLCPU ? 0 : static_cast<int32_t>(record.ordinal);
  return {type.dlpack_device_type, id};
}

bool addresses_in_place(const LogicalDeviceState* device, DLPackDevice memory) {
  const PhysicalDeviceRecord& record = device->physical();
  const PluginDeviceType& type = device_type_of(record);
  // EXT_DEV names no memory anyone else has: never taken in place. Nor is
  // anything taken in place by a device whose memory is handles (ABI 1.6):
  // the core would have to name another library's memory as one of them.
  if (!type.dlpack_declared || type.dlpack_device_type == kDLExtDev) return false;
  if (device->handle_memory()) return false;
  if (host_readable(memory.device_type)) return type.dlpack_device_type == kDLCPU;
  return type.dlpack_device_type == memory.device_type &&
         static_cast<int64_t>(record.ordinal) == memory.device_id;
}

LogicalDeviceState* zero_copy_device(DLPackDevice memory) {
  auto& runtime = detail::Runtime::global();
  const auto& logical = runtime.logical_devices();
  // The current scope's device when it can hold the memory.
  if (const detail::ScopeEntry* scope = detail::current_scope()) {
    try {
      LogicalDeviceState* d = detail::resolve_device(scope->text);
      if (addresses_in_place(d, memory)) return d;
    } catch (const Error&) {
      // An unknown scope device: fall through to the first one that fits.
    }
  }
  for (const auto& d : logical) {
    if (addresses_in_place(d.get(), memory)) return d.get();
  }
  return nullptr;
}

// --- dtypes ---

DLDataType to_dl(DType dtype) {
  switch (dtype) {
    case DType::kFloat32: return {kDLFloat, 32, 1};
    case DType::kFloat64: return {kDLFloat, 64, 1};
    case DType::kInt32: return {kDLInt, 32, 1};
    case DType::kInt64: return {kDLInt, 64, 1};
    case DType::kBool: return {kDLBool, 8, 1};
  }
  throw Error(ErrorCode::kInternal, "to_dlpack: unknown dtype");
}

std::string dl_dtype_text(DLDataType t) {
  const char* code = t.code == kDLInt      ? "int"
                     : t.code == kDLUInt   ? "uint"
                     : t.code == kDLFloat  ? "float"
                     : t.code == kDLBfloat ? "bfloat"
                     : t.code == kDLBool   ? "bool"
                     : t.code == kDLComplex ? "complex"
                                           : "code ";
  std::string s = code;
  if (std::string_view(code) == "code ") s += std::to_string(t.code) + "/";
  s += std::to_string(t.bits);
  if (t.lanes != 1) s += "x" + std::to_string(t.lanes);
  return s;
}

DType from_dl(DLDataType t) {
  if (t.lanes == 1) {
    if (t.code == kDLFloat && t.bits == 32) return DType::kFloat32;
    if (t.code == kDLFloat && t.bits == 64) return DType::kFloat64;
    if (t.code == kDLInt && t.bits == 32) return DType::kInt32;
    if (t.code == kDLInt && t.bits == 64) return DType::kInt64;
    if (t.code == kDLBool && t.bits == 8) return DType::kBool;
  }
  throw Error(ErrorCode::kInvalidArgument,
              "from_dlpack: dtype " + dl_dtype_text(t) +
                  " has no xdev dtype (xdev has bool, int32, int64, float32, float64); "
                  "convert it before handing it over");
}

// --- export ---

// What an exported struct's manager_ctx points to.
template <typename Managed>
struct ExportBlock {
  Managed managed{};
  std::shared_ptr<TensorImpl> tensor;  // the view exported (memory on a device)
  std::unique_ptr<HostTensor> host;    // or a copy in host memory
  int64_t shape[kMaxRank] = {};
  int64_t strides[kMaxRank] = {};

  static void deleter(Managed* self) noexcept {
    if (self != nullptr) delete static_cast<ExportBlock*>(self->manager_ctx);
  }
};
using VersionedBlock = ExportBlock<DLManagedTensorVersioned>;
using LegacyBlock = ExportBlock<DLManagedTensor>;

template <typename Block>
std::unique_ptr<Block> export_block(const Tensor& tensor, const ToDLPackOptions& options,
                                    uint64_t& flags) {
  if (!tensor.defined()) {
    throw Error(ErrorCode::kInvalidArgument, "to_dlpack: the tensor is empty (default-constructed)");
  }
  const TensorImpl& impl = *tensor.impl();
  const DLPackDevice own = dlpack_device_of(impl.device());
  const DLPackDevice target = options.device.value_or(own);
  auto block = std::make_unique<Block>();
  block->managed.manager_ctx = block.get();
  block->managed.deleter = &Block::deleter;
  DLTensor& dl = block->managed.dl_tensor;
  dl.ndim = impl.shape.rank();
  dl.dtype = to_dl(impl.dtype);
  dl.shape = block->shape;
  dl.strides = block->strides;
  dl.byte_offset = 0;  // folded into `data`: older consumers ignore byte_offset

  const bool to_host = !(target == own);
  if (to_host && !(target == DLPackDevice{kDLCPU, 0})) {
    throw Error(ErrorCode::kUnimplemented,
                "to_dlpack: a tensor on " + impl.device()->name() + " (DLPack " + describe(own) +
                    ") can be exported to its own device or to the host, not to " +
                    describe(target));
  }
  if (to_host || options.copy.value_or(false)) {
    if (options.copy.has_value() && !*options.copy) {
      throw Error(ErrorCode::kInvalidArgument,
                  "to_dlpack: exporting a tensor on " + impl.device()->name() + " to " +
                      describe(target) + " needs a copy, and copy=false was asked");
    }
    flags |= DLPACK_FLAG_BITMASK_IS_COPIED;
  }
  if (to_host) {
    block->host = std::make_unique<HostTensor>(tensor.to_host());
    dl.data = block->host->bytes();
    dl.device = {kDLCPU, 0};
    const Shape strides = detail::contiguous_strides(impl.shape);
    for (int i = 0; i < dl.ndim; ++i) {
      block->shape[i] = impl.shape[static_cast<size_t>(i)];
      block->strides[i] = strides[static_cast<size_t>(i)];
    }
    return block;
  }
  if (impl.device()->handle_memory()) {
    throw Error(ErrorCode::kUnimplemented,
                "to_dlpack: " + impl.device()->name() + " (plugin " +
                    impl.device()->plugin()->name +
                    ") keeps its memory as handles (XDEV_CAP_HANDLE_MEMORY), which DLPack "
                    "consumers cannot address; export it to the host instead "
                    "(device=(kDLCPU, 0), a copy)");
  }
  std::shared_ptr<TensorImpl> exported = tensor.impl_ptr();
  if (options.copy.value_or(false)) {
    exported = detail::copy_tensor(impl, impl.device());
    detail::count_explicit_copy(exported->span_bytes());
  }
  // The memory must hold its values before someone else reads it.
  exported->device()->synchronize();
  block->tensor = exported;
  dl.data = exported->memory().address();
  dl.device = {static_cast<DLDeviceType>(own.device_type), own.device_id};
  for (int i = 0; i < dl.ndim; ++i) {
    block->shape[i] = exported->shape[static_cast<size_t>(i)];
    block->strides[i] = exported->strides[static_cast<size_t>(i)];
  }
  return block;
}

// --- import ---

// Keeps the producer's memory alive for the tensors that use it. The Storage
// never returns it to a pool: `release` hands it back to the producer.
struct ImportBlock {
  detail::Storage storage;
  TensorImpl tensor;
  std::function<void()> release;
  ~ImportBlock() {
    storage.data = nullptr;  // not the pool's
    if (release) release();
  }
};

// True when every element of the view lies at a non-negative stride.
bool non_negative_strides(const DLTensor& t) {
  if (t.strides == nullptr) return true;
  for (int i = 0; i < t.ndim; ++i) {
    if (t.strides[i] < 0 && t.shape[i] > 1) return false;
  }
  return true;
}

Tensor import_tensor(const DLTensor& t, std::function<void()> release) {
  const DType dtype = from_dl(t.dtype);
  if (t.ndim < 0 || t.ndim > kMaxRank) {
    throw Error(ErrorCode::kInvalidArgument,
                "from_dlpack: rank " + std::to_string(t.ndim) + " is outside 0.." +
                    std::to_string(kMaxRank));
  }
  if (t.ndim > 0 && t.shape == nullptr) {
    throw Error(ErrorCode::kInvalidArgument, "from_dlpack: the DLTensor has no shape");
  }
  Shape shape, strides;
  int64_t elements = 1;
  for (int i = 0; i < t.ndim; ++i) {
    if (t.shape[i] < 0) {
      throw Error(ErrorCode::kInvalidArgument,
                  "from_dlpack: negative dimension " + std::to_string(t.shape[i]));
    }
    if (__builtin_mul_overflow(elements, t.shape[i], &elements)) {
      throw Error(ErrorCode::kInvalidArgument, "from_dlpack: the element count overflows");
    }
    shape.push_back(t.shape[i]);
  }
  const Shape compact = detail::contiguous_strides(shape);
  for (int i = 0; i < t.ndim; ++i) {
    strides.push_back(t.strides != nullptr ? t.strides[i] : compact[static_cast<size_t>(i)]);
  }
  const DLPackDevice memory{static_cast<int32_t>(t.device.device_type), t.device.device_id};
  const uint64_t item = itemsize(dtype);
  const uintptr_t address = reinterpret_cast<uintptr_t>(t.data) + t.byte_offset;

  // Bytes from element 0 to one past the furthest element (non-negative
  // strides), overflow-checked.
  uint64_t span = 0;
  if (elements > 0 && non_negative_strides(t)) {
    int64_t last = 0;
    for (int i = 0; i < t.ndim; ++i) {
      int64_t step = 0;
      const int64_t stride = t.shape[i] > 1 ? strides[static_cast<size_t>(i)] : 0;
      if (__builtin_mul_overflow(t.shape[i] - 1, stride, &step) ||
          __builtin_add_overflow(last, step, &last)) {
        throw Error(ErrorCode::kInvalidArgument, "from_dlpack: the strides overflow");
      }
    }
    if (__builtin_add_overflow(static_cast<uint64_t>(last), uint64_t{1}, &span) ||
        __builtin_mul_overflow(span, item, &span)) {
      throw Error(ErrorCode::kInvalidArgument, "from_dlpack: the strides overflow");
    }
  }

  // In place: a device that addresses this memory, strides xdev can use
  // (not negative), elements aligned to their size.
  if (LogicalDeviceState* device = zero_copy_device(memory);
      device != nullptr && non_negative_strides(t) && address % item == 0) {
    for (int i = 0; i < t.ndim; ++i) {
      if (t.shape[i] <= 1) strides[static_cast<size_t>(i)] = compact[static_cast<size_t>(i)];
    }
    auto block = std::make_shared<ImportBlock>();
    block->storage.device = device;
    block->storage.data = reinterpret_cast<void*>(address);
    block->storage.memory = {block->storage.data, 0};  // foreign: its own allocation
    block->storage.bytes = span;
    TensorImpl& impl = block->tensor;
    impl.storage = &block->storage;
    impl.dtype = dtype;
    impl.shape = shape;
    impl.strides = strides;
    block->release = std::move(release);  // nothing below throws
    return Tensor(std::shared_ptr<TensorImpl>(std::move(block), &impl));
  }

  if (!host_readable(memory.device_type)) {
    std::string able;
    for (const auto& d : detail::Runtime::global().logical_devices()) {
      const DLPackDevice own = dlpack_device_of(d.get());
      const PluginDeviceType& type = device_type_of(d->physical());
      if (type.dlpack_declared && type.dlpack_device_type != kDLExtDev) {
        able += (able.empty() ? "" : ", ") + d->name() + " (" + describe(own) + ")";
      }
    }
    throw Error(ErrorCode::kNotFound,
                "from_dlpack: no xdev device can address memory on " + describe(memory) +
                    "; devices that take DLPack memory in place: " +
                    (able.empty() ? std::string("none") : able));
  }
  // A copy of host memory: gathered row-major (any strides), then uploaded
  // like constant() would.
  std::vector<std::byte> host(static_cast<size_t>(elements) * item);
  const std::byte* base = reinterpret_cast<const std::byte*>(address);
  if (elements > 0) {
    std::array<int64_t, kMaxRank> index{};
    for (int64_t n = 0; n < elements; ++n) {
      int64_t offset = 0;
      for (int k = 0; k < t.ndim; ++k) offset += index[static_cast<size_t>(k)] * strides[static_cast<size_t>(k)];
      std::memcpy(host.data() + static_cast<size_t>(n) * item,
                  base + offset * static_cast<int64_t>(item), item);
      for (int k = t.ndim - 1; k >= 0; --k) {
        if (++index[static_cast<size_t>(k)] < t.shape[k]) break;
        index[static_cast<size_t>(k)] = 0;
      }
    }
  }
  Tensor out = constant(host.data(), dtype, shape);
  if (release) release();
  return out;
}

}  // namespace

DLPackDevice dlpack_device(const Tensor& tensor) {
  if (!tensor.defined()) {
    throw Error(ErrorCode::kInvalidArgument,
                "dlpack_device: the tensor is empty (default-constructed)");
  }
  return dlpack_device_of(tensor.impl()->device());
}

std::optional<int64_t> dlpack_stream(std::string_view device) {
  LogicalDeviceState* d = detail::resolve_device(device);
  const xdev_plugin_api_t* api = d->api();
  if (!XDEV_HAS_FIELD(api, xdev_plugin_api_t, stream_native_handle) ||
      api->stream_native_handle == nullptr) {
    return std::nullopt;
  }
  int64_t handle = 0;
  if (xdev_status_t* s = detail::call_plugin(d->call_site("stream_native_handle"),
                                             api->stream_native_handle, d->stream(), &handle)) {
    throw Error(ErrorCode::kInternal, "dlpack_stream: " + d->name() + ": " +
                                          detail::take_message(s));
  }
  return handle;
}

std::optional<Device> dlpack_zero_copy_device(DLPackDevice device) {
  if (LogicalDeviceState* d = zero_copy_device(device)) return d->info();
  return std::nullopt;
}

DLManagedTensorVersioned* to_dlpack(const Tensor& tensor, const ToDLPackOptions& options) {
  uint64_t flags = 0;
  auto block = export_block<VersionedBlock>(tensor, options, flags);
  // Shared memory is read-only (tensors are immutable); a copy made for the
  // consumer is its own to write.
  if ((flags & DLPACK_FLAG_BITMASK_IS_COPIED) == 0) flags |= DLPACK_FLAG_BITMASK_READ_ONLY;
  block->managed.version = {XDEV_DLPACK_MAJOR_VERSION, XDEV_DLPACK_MINOR_VERSION};
  block->managed.flags = flags;
  return &block.release()->managed;
}

DLManagedTensor* to_dlpack_legacy(const Tensor& tensor) {
  uint64_t flags = 0;
  auto block = export_block<LegacyBlock>(tensor, {}, flags);
  return &block.release()->managed;
}

namespace {

// Takes `managed` over (either struct): our own export gives the same tensor
// again, no new wrapper around the memory; any other is imported, and its
// deleter runs when the last view of the memory goes.
template <typename Managed>
Tensor take_managed(Managed* managed) {
  if (managed->deleter == &ExportBlock<Managed>::deleter) {
    auto* block = static_cast<ExportBlock<Managed>*>(managed->manager_ctx);
    if (block->tensor) {
      Tensor same(block->tensor);
      managed->deleter(managed);
      return same;
    }
  }
  return import_tensor(managed->dl_tensor, [managed] {
    if (managed->deleter != nullptr) managed->deleter(managed);
  });
}

}  // namespace

Tensor from_dlpack(DLManagedTensorVersioned* managed) {
  if (managed == nullptr) throw Error(ErrorCode::kInvalidArgument, "from_dlpack: NULL tensor");
  if (managed->version.major != XDEV_DLPACK_MAJOR_VERSION) {
    throw Error(ErrorCode::kInvalidArgument,
                "from_dlpack: DLPack version " + std::to_string(managed->version.major) + "." +
                    std::to_string(managed->version.minor) + " is not supported (major " +
                    std::to_string(XDEV_DLPACK_MAJOR_VERSION) + " is)");
  }
  return take_managed(managed);
}

Tensor from_dlpack(DLManagedTensor* managed) {
  if (managed == nullptr) throw Error(ErrorCode::kInvalidArgument, "from_dlpack: NULL tensor");
  return take_managed(managed);
}

}  // namespace xdev
