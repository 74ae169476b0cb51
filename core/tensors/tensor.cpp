// Tensors: shapes, views, moving between devices, reading back, printing.
#include <xdev/ops.hpp>
#include <xdev/tensor.hpp>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <utility>
#include <numeric>
#include <ostream>
#include <sstream>

#include <sys/mman.h>

#include "tensors/op_record.hpp"
#include "placement/decide.hpp"
#include "transfer/copy.hpp"
#include "placement/placement_state.hpp"
#include "devices/runtime.hpp"
#include "common/checked_math.hpp"
#include "opdefs/shape.hpp"
#include "tensors/tensor_impl.hpp"

namespace xdev {

// --- HostTensor ---

namespace {

constexpr std::size_t kHugePage = std::size_t{2} << 20;

// Host bytes for HostTensor, not initialised. From 2 MiB on they are
// aligned to (and padded to a multiple of) 2 MiB and advised for transparent
// huge pages: reading a 256 MiB tensor back then takes 128 page faults
// instead of 65536, which on a virtual machine was most of the time of
// to_host() (1.4 GB/s against 11 GB/s for a copy into warm memory).
std::byte* allocate_host_bytes(std::size_t bytes) {
  if (bytes == 0) return nullptr;
  void* p = nullptr;
  if (bytes >= kHugePage) {
    const std::size_t padded = (bytes + kHugePage - 1) / kHugePage * kHugePage;
    p = padded >= bytes ? std::aligned_alloc(kHugePage, padded) : nullptr;
    if (p != nullptr) (void)madvise(p, padded, MADV_HUGEPAGE);  // advice only
  } else {
    p = std::malloc(bytes);
  }
  if (p == nullptr) {
    throw Error(ErrorCode::kOutOfMemory,
                "cannot allocate " + std::to_string(bytes) + " bytes of host memory for a HostTensor");
  }
  return static_cast<std::byte*>(p);
}

}  // namespace

HostTensor::HostTensor(DType dtype, Shape shape, Unfilled)
    : dtype_(dtype),
      shape_(shape),
      size_(detail::checked_byte_size("HostTensor", dtype, shape)) {
  data_ = allocate_host_bytes(size_);
}

HostTensor::HostTensor(DType dtype, Shape shape) : HostTensor(dtype, shape, Unfilled{}) {
  if (size_ != 0) std::memset(data_, 0, size_);
}

HostTensor::HostTensor(const HostTensor& other)
    : dtype_(other.dtype_), shape_(other.shape_), size_(other.size_) {
  data_ = allocate_host_bytes(size_);
  if (size_ != 0) std::memcpy(data_, other.data_, size_);
}

HostTensor& HostTensor::operator=(const HostTensor& other) {
  if (this != &other) *this = HostTensor(other);
  return *this;
}

HostTensor::HostTensor(HostTensor&& other) noexcept
    : dtype_(other.dtype_),
      shape_(other.shape_),
      data_(std::exchange(other.data_, nullptr)),
      size_(std::exchange(other.size_, 0)) {}

HostTensor& HostTensor::operator=(HostTensor&& other) noexcept {
  if (this != &other) {
    std::free(data_);
    dtype_ = other.dtype_;
    shape_ = other.shape_;
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

HostTensor::~HostTensor() { std::free(data_); }

void HostTensor::check_type(DType requested) const {
  if (requested != dtype_) {
    throw Error(ErrorCode::kInvalidArgument, "the tensor holds " + std::string(to_string(dtype_)) +
                                                 ", not " + std::string(to_string(requested)));
  }
}

double HostTensor::value_as_double(int64_t index) const {
  const std::byte* p = data_ + static_cast<size_t>(index) * itemsize(dtype_);
  switch (dtype_) {
    case DType::kFloat32: { float v; std::memcpy(&v, p, 4); return v; }
    case DType::kFloat64: { double v; std::memcpy(&v, p, 8); return v; }
    case DType::kInt32: { int32_t v; std::memcpy(&v, p, 4); return v; }
    case DType::kInt64: { int64_t v; std::memcpy(&v, p, 8); return static_cast<double>(v); }
    case DType::kBool: return static_cast<double>(static_cast<uint8_t>(*p));
    case DType::kFloat16:
    case DType::kBFloat16:
    case DType::kUInt8:
    case DType::kInt8: return value_as<double>(index);
  }
  return 0;
}

namespace {

// NumPy-like: 22. for an integral float, else up to 8 significant digits.
std::string format_value(const HostTensor& host, int64_t index) {
  const std::byte* p = host.bytes() + static_cast<size_t>(index) * itemsize(host.dtype());
  char buffer[64];
  switch (host.dtype()) {
    case DType::kFloat32:
    case DType::kFloat64:
    case DType::kFloat16:
    case DType::kBFloat16: {
      double v = host.value_as_double(index);
      if (std::isnan(v)) return "nan";
      if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
      if (v == std::floor(v) && std::fabs(v) < 1e16) {
        std::snprintf(buffer, sizeof buffer, "%.0f.", v);
      } else {
        std::snprintf(buffer, sizeof buffer, "%.8g", v);
      }
      return buffer;
    }
    case DType::kInt32: {
      int32_t v;
      std::memcpy(&v, p, 4);
      return std::to_string(v);
    }
    case DType::kInt64: {
      int64_t v;  // not through double: int64 values past 2^53 must print exactly
      std::memcpy(&v, p, 8);
      return std::to_string(v);
    }
    case DType::kBool: return static_cast<uint8_t>(*p) ? "True" : "False";
    case DType::kUInt8: return std::to_string(static_cast<uint8_t>(*p));
    case DType::kInt8: return std::to_string(static_cast<int8_t>(*p));
  }
  return "?";
}

// Prints dimension `axis` starting at row-major `offset`; long dimensions
// (when the tensor has over 1000 elements) show their first and last 3.
void print_values(std::ostream& os, const HostTensor& host, int axis, int64_t offset,
                  bool summarize) {
  const Shape& shape = host.shape();
  if (axis == shape.rank()) {
    os << format_value(host, offset);
    return;
  }
  int64_t n = shape[static_cast<size_t>(axis)];
  int64_t inner = 1;
  for (int k = axis + 1; k < shape.rank(); ++k) inner *= shape[static_cast<size_t>(k)];
  os << '[';
  for (int64_t i = 0; i < n; ++i) {
    if (summarize && n > 6 && i == 3) {
      os << " ...";
      i = n - 3;
    }
    if (i > 0) os << ' ';
    print_values(os, host, axis + 1, offset + i * inner, summarize);
  }
  os << ']';
}

}  // namespace

std::ostream& operator<<(std::ostream& os, const HostTensor& host) {
  print_values(os, host, 0, 0, host.num_elements() > 1000);
  return os;
}

namespace detail {

bool TensorImpl::contiguous() const { return strides == contiguous_strides(shape); }

uint64_t TensorImpl::span_bytes() const {
  if (num_elements() == 0) return 0;
  int64_t last = 0;
  for (int i = 0; i < shape.rank(); ++i) {
    last += (shape[static_cast<size_t>(i)] - 1) * strides[static_cast<size_t>(i)];
  }
  return static_cast<uint64_t>(last + 1) * itemsize(dtype);
}

Shape contiguous_strides(const Shape& shape) {
  Shape strides;
  strides.resize(shape.rank());
  int64_t stride = 1;
  for (int i = shape.rank() - 1; i >= 0; --i) {
    strides[static_cast<size_t>(i)] = stride;
    stride *= std::max<int64_t>(shape[static_cast<size_t>(i)], 1);
  }
  return strides;
}

namespace {
struct Fresh {
  Storage storage;
  TensorImpl tensor;
};
}  // namespace

std::shared_ptr<TensorImpl> make_tensor(LogicalDeviceState* device, DType dtype,
                                        const Shape& shape, std::string_view what) {
  const uint64_t bytes = checked_byte_size(what, dtype, shape);
  auto block = std::make_shared<Fresh>();
  block->storage.device = device;
  block->storage.bytes = bytes;
  block->storage.data = device->allocate(std::max<uint64_t>(bytes, 1), &block->storage.memory);
  TensorImpl& t = block->tensor;
  t.storage = &block->storage;
  t.dtype = dtype;
  t.shape = shape;
  t.strides = contiguous_strides(shape);
  // Aliasing constructor from an rvalue: no reference count is touched.
  return std::shared_ptr<TensorImpl>(std::move(block), &t);
}

std::shared_ptr<TensorImpl> make_view(const std::shared_ptr<TensorImpl>& base, const Shape& shape,
                                      const Shape& strides, uint64_t byte_offset) {
  // The view must lie inside the storage: a kernel reads every byte from
  // byte_offset to the last element the strides reach.
  checked_byte_size("view", base->dtype, shape);
  auto out_of_storage = [&](const std::string& why) {
    throw Error(ErrorCode::kInvalidArgument,
                "view " + shape_text(shape) + " with strides " + shape_text(strides) +
                    " at byte offset " + std::to_string(byte_offset) + " of a " +
                    std::to_string(base->storage->bytes) + "-byte buffer: " + why);
  };
  if (strides.rank() != shape.rank()) out_of_storage("shape and strides differ in rank");
  uint64_t end = 0;  // one past the last byte the view touches
  if (shape.num_elements() > 0) {
    uint64_t last = 0;  // element offset of the last element
    for (int i = 0; i < shape.rank(); ++i) {
      const int64_t stride = strides[static_cast<size_t>(i)];
      if (stride < 0) out_of_storage("negative stride");
      auto step = checked_mul(static_cast<uint64_t>(shape[static_cast<size_t>(i)] - 1),
                              static_cast<uint64_t>(stride));
      auto sum = step ? checked_add(last, *step) : std::nullopt;
      if (!sum) out_of_storage("the strides overflow");
      last = *sum;
    }
    auto bytes = checked_mul(last + 1, itemsize(base->dtype));
    auto total = bytes ? checked_add(byte_offset, *bytes) : std::nullopt;
    if (!total) out_of_storage("the extent overflows");
    end = *total;
  }
  if (end > base->storage->bytes) out_of_storage("it reaches byte " + std::to_string(end));
  // A view of nothing touches no byte: wherever the caller's offset points
  // (rows 5.. of a [10, 0, 8] tensor start at byte 160 of a 0-byte buffer),
  // it starts at 0, so no kernel is handed an address past the buffer.
  if (shape.num_elements() == 0) byte_offset = 0;
  auto view = std::make_shared<TensorImpl>();
  view->storage = base->storage;
  view->owner = base->owner ? base->owner : std::shared_ptr<void>(base);
  view->dtype = base->dtype;
  view->shape = shape;
  view->strides = strides;
  view->byte_offset = byte_offset;
  return view;
}

HostTensor read_to_host(const TensorImpl& t) {
  HostTensor host(t.dtype, t.shape, HostTensor::Unfilled{});
  const uint64_t item = itemsize(t.dtype);
  if (t.num_elements() == 0) return host;
  if (t.contiguous()) {
    download(t.device(), t.memory(), host.bytes(), host.byte_size());
    return host;
  }
  std::vector<std::byte> span(t.span_bytes());
  download(t.device(), t.memory(), span.data(), span.size());
  // Gather the strided view into row-major order.
  const int rank = t.shape.rank();
  std::array<int64_t, kMaxRank> index{};
  for (int64_t n = 0; n < t.num_elements(); ++n) {
    int64_t offset = 0;
    for (int k = 0; k < rank; ++k) offset += index[static_cast<size_t>(k)] * t.strides[static_cast<size_t>(k)];
    std::memcpy(host.bytes() + static_cast<size_t>(n) * item,
                span.data() + static_cast<size_t>(offset) * item, item);
    for (int k = rank - 1; k >= 0; --k) {
      if (++index[static_cast<size_t>(k)] < t.shape[static_cast<size_t>(k)]) break;
      index[static_cast<size_t>(k)] = 0;
    }
  }
  return host;
}

}  // namespace detail

// --- Tensor ---

namespace {
const detail::TensorImpl& checked(const Tensor& t) {
  if (!t.defined()) throw Error(ErrorCode::kInvalidArgument, "the tensor is empty (default-constructed)");
  return *t.impl();
}
}  // namespace

DType Tensor::dtype() const { return checked(*this).dtype; }
const Shape& Tensor::shape() const { return checked(*this).shape; }
const Shape& Tensor::strides() const { return checked(*this).strides; }
bool Tensor::is_contiguous() const { return checked(*this).contiguous(); }
Device Tensor::device() const { return checked(*this).device()->info(); }

Tensor Tensor::to(const Device& device) const { return to(std::string_view(device.name)); }

Tensor Tensor::to(std::string_view device) const {
  detail::LogicalDeviceState* target = detail::resolve_device(device);
  if (checked(*this).device() == target) return *this;
  return copy_to(device);
}

Tensor Tensor::copy_to(const Device& device) const { return copy_to(std::string_view(device.name)); }

Tensor Tensor::copy_to(std::string_view device) const {
  checked(*this);
  detail::LogicalDeviceState* target = detail::resolve_device(device);
  auto copy = detail::copy_tensor(*impl(), target);
  detail::count_explicit_copy(copy->span_bytes());
  Tensor result(std::move(copy));
  if (detail::OpRecorder* recorder = detail::op_recorder()) recorder->record_copy(*this, result);
  return result;
}

HostTensor Tensor::to_host() const {
  HostTensor host = detail::read_to_host(checked(*this));
  detail::count_read_back(host.byte_size());
  return host;
}

void Tensor::throw_not_scalar() const {
  std::ostringstream s;
  s << "item() needs a tensor of one element, not shape " << shape();
  throw Error(ErrorCode::kInvalidArgument, s.str());
}

Tensor Tensor::reshape(const Shape& shape) const { return xdev::reshape(*this, shape); }
Tensor Tensor::transpose(const std::vector<int>& perm) const { return xdev::transpose(*this, perm); }

std::ostream& operator<<(std::ostream& os, const Tensor& tensor) {
  if (!tensor.defined()) return os << "tf.Tensor(<empty>)";
  HostTensor host = tensor.to_host();
  os << "tf.Tensor(" << host << ", shape=" << host.shape() << ", dtype=" << host.dtype() << ')';
  return os;
}

}  // namespace xdev
