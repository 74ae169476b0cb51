// Tensors: typed, shaped, strided views of a reference-counted buffer that
// lives on one device.
//
//   auto a = xdev::constant({{1.f, 2.f, 3.f}, {4.f, 5.f, 6.f}});
//   a.device();            // where it lives
//   a.to("/GPU:0");        // the same tensor if already there, else a copy
//   a.copy_to("/CPU:0");   // always a new buffer
//   a.to_host();           // explicit read-back to host memory (counted)
//   std::cout << a;        // tf.Tensor([[1. 2. 3.] [4. 5. 6.]], shape=(2, 3), dtype=float32)
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <memory>
#include <ostream>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include <xdev/device.hpp>
#include <xdev/dtype.hpp>
#include <xdev/error.hpp>
#include <xdev/export.hpp>

namespace xdev {

// Largest rank a tensor may have (the plugin ABI's XDEV_MAX_RANK).
inline constexpr int kMaxRank = 8;

// A list of at most kMaxRank dimensions (or strides), stored inline.
class XDEV_API Shape {
 public:
  Shape() = default;
  Shape(std::initializer_list<int64_t> dims) { assign(dims.begin(), dims.end()); }
  explicit Shape(std::span<const int64_t> dims) { assign(dims.begin(), dims.end()); }
  Shape(const std::vector<int64_t>& dims) { assign(dims.begin(), dims.end()); }

  int rank() const { return rank_; }
  std::size_t size() const { return static_cast<std::size_t>(rank_); }
  bool empty() const { return rank_ == 0; }
  int64_t operator[](std::size_t i) const { return dims_[i]; }
  int64_t& operator[](std::size_t i) { return dims_[i]; }
  const int64_t* data() const { return dims_.data(); }
  int64_t* data() { return dims_.data(); }
  const int64_t* begin() const { return dims_.data(); }
  const int64_t* end() const { return dims_.data() + rank_; }
  void push_back(int64_t d);
  void resize(int rank, int64_t fill = 0);
  // Product of the dimensions (1 for rank 0); throws xdev::Error
  // (kInvalidArgument) when it overflows int64.
  int64_t num_elements() const;
  std::vector<int64_t> to_vector() const { return {begin(), end()}; }

  bool operator==(const Shape& other) const {
    if (rank_ != other.rank_) return false;
    for (int i = 0; i < rank_; ++i) {  // ranks are tiny: no memcmp call
      if (dims_[static_cast<size_t>(i)] != other.dims_[static_cast<size_t>(i)]) return false;
    }
    return true;
  }

 private:
  template <typename It>
  void assign(It first, It last) {
    rank_ = 0;
    for (; first != last; ++first) push_back(*first);
  }
  std::array<int64_t, kMaxRank> dims_{};
  int rank_ = 0;
};

// "(2, 3)", "()" for a scalar, "(5,)" for rank 1 (NumPy's spelling).
XDEV_API std::ostream& operator<<(std::ostream& os, const Shape& shape);

class HostTensor;
namespace detail {
struct TensorImpl;
HostTensor read_to_host(const TensorImpl& tensor);
}

// Host memory holding a tensor's values, row-major (what to_host() returns).
// Buffers of 2 MiB and more are 2 MiB-aligned and advised for transparent
// huge pages: a fresh buffer is first written with 512 times fewer page faults.
class XDEV_API HostTensor {
 public:
  // Zero-filled.
  HostTensor(DType dtype, Shape shape);
  HostTensor(const HostTensor& other);
  HostTensor& operator=(const HostTensor& other);
  HostTensor(HostTensor&& other) noexcept;
  HostTensor& operator=(HostTensor&& other) noexcept;
  ~HostTensor();

  DType dtype() const { return dtype_; }
  const Shape& shape() const { return shape_; }
  int64_t num_elements() const { return shape_.num_elements(); }
  const std::byte* bytes() const { return data_; }
  std::byte* bytes() { return data_; }
  std::size_t byte_size() const { return size_; }

  // The values as T; T must match dtype() (throws xdev::Error otherwise).
  template <Element T>
  std::span<const T> values() const {
    check_type(dtype_of<T>);
    return {reinterpret_cast<const T*>(data_), static_cast<std::size_t>(num_elements())};
  }
  template <Element T>
  std::vector<T> to_vector() const {
    auto v = values<T>();
    return {v.begin(), v.end()};
  }
  // One value converted to double (index in row-major order).
  double value_as_double(int64_t index) const;
  // One value (index in row-major order) converted to T without a detour:
  // an integer or bool element converts to an integer T exactly (int64
  // values past 2^53 included; a narrower T wraps like static_cast), to a
  // floating T with one rounding. A float element converts to an integer T
  // like the Cast op (docs/ops.md): toward zero, saturating, NaN gives 0.
  template <typename T>
    requires std::is_arithmetic_v<T>
  T value_as(int64_t index) const {
    if (index < 0 || index >= num_elements()) throw_bad_index(index);
    const std::byte* p = data_ + static_cast<std::size_t>(index) * itemsize(dtype_);
    switch (dtype_) {
      case DType::kFloat32: {
        float v;
        std::memcpy(&v, p, sizeof v);
        return from_float<T>(v);
      }
      case DType::kFloat64: {
        double v;
        std::memcpy(&v, p, sizeof v);
        return from_float<T>(v);
      }
      case DType::kInt32: {
        int32_t v;
        std::memcpy(&v, p, sizeof v);
        return static_cast<T>(v);
      }
      case DType::kInt64: {
        int64_t v;
        std::memcpy(&v, p, sizeof v);
        return static_cast<T>(v);
      }
      case DType::kBool: return static_cast<T>(static_cast<uint8_t>(*p) != 0);
      case DType::kFloat16:
      case DType::kBFloat16: {
        uint16_t bits;
        std::memcpy(&bits, p, sizeof bits);
        return from_float<T>(dtype_ == DType::kFloat16 ? half_to_float(bits)
                                                       : bfloat16_to_float(bits));
      }
      case DType::kUInt8: return static_cast<T>(static_cast<uint8_t>(*p));
      case DType::kInt8: return static_cast<T>(static_cast<int8_t>(*p));
    }
    return T{};
  }

 private:
  template <typename T, typename F>
  static T from_float(F v) {
    if constexpr (std::is_floating_point_v<T>) {
      return static_cast<T>(v);
    } else if constexpr (std::is_same_v<T, bool>) {
      return v != 0;
    } else {
      if (v != v) return 0;  // NaN
      if (v <= static_cast<F>(std::numeric_limits<T>::min())) return std::numeric_limits<T>::min();
      if (v >= static_cast<F>(std::numeric_limits<T>::max())) return std::numeric_limits<T>::max();
      return static_cast<T>(v);
    }
  }
  [[noreturn]] void throw_bad_index(int64_t index) const {
    throw Error(ErrorCode::kInvalidArgument,
                "index " + std::to_string(index) + " is out of range for " +
                    std::to_string(num_elements()) + " elements");
  }
  void check_type(DType requested) const;
  // to_host() writes every byte: it skips the zero fill.
  struct Unfilled {};
  HostTensor(DType dtype, Shape shape, Unfilled);
  friend HostTensor detail::read_to_host(const detail::TensorImpl& tensor);

  DType dtype_;
  Shape shape_;
  std::byte* data_ = nullptr;  // owned: allocated and freed by the core (tensor.cpp)
  std::size_t size_ = 0;
};

// Prints the values like NumPy: [[22. 28.] [49. 64.]]
XDEV_API std::ostream& operator<<(std::ostream& os, const HostTensor& host);

class XDEV_API Tensor {
 public:
  Tensor() = default;
  explicit Tensor(std::shared_ptr<detail::TensorImpl> impl) : impl_(std::move(impl)) {}

  // False for a default-constructed Tensor.
  bool defined() const { return impl_ != nullptr; }
  DType dtype() const;
  const Shape& shape() const;
  // Strides in elements.
  const Shape& strides() const;
  int rank() const { return shape().rank(); }
  int64_t num_elements() const { return shape().num_elements(); }
  bool is_contiguous() const;
  // The logical device the tensor lives on.
  Device device() const;

  // This tensor if it already lives on `device` (no copy, no allocation),
  // else a copy there.
  Tensor to(const Device& device) const;
  Tensor to(std::string_view device) const;
  // Always a new buffer on `device`, even when it is this tensor's device.
  Tensor copy_to(const Device& device) const;
  Tensor copy_to(std::string_view device) const;

  // Explicit read-back: waits for the values and copies them to host memory.
  // Counted in placement_counters().read_backs.
  HostTensor to_host() const;
  template <Element T>
  std::vector<T> to_vector() const {
    return to_host().to_vector<T>();
  }
  // The value of a one-element tensor, converted to T as
  // HostTensor::value_as does (integers exactly).
  template <typename T>
    requires std::is_arithmetic_v<T>
  T item() const {
    HostTensor host = to_host();
    if (host.num_elements() != 1) throw_not_scalar();
    return host.value_as<T>(0);
  }

  // Views and shape changes (see also the free functions in ops.hpp).
  Tensor reshape(const Shape& shape) const;
  Tensor transpose(const std::vector<int>& perm = {}) const;

  detail::TensorImpl* impl() const { return impl_.get(); }
  const std::shared_ptr<detail::TensorImpl>& impl_ptr() const { return impl_; }

 private:
  [[noreturn]] void throw_not_scalar() const;
  std::shared_ptr<detail::TensorImpl> impl_;
};

// tf.Tensor([[22. 28.] [49. 64.]], shape=(2, 2), dtype=float32); reads the
// values back to the host (counted like to_host()).
XDEV_API std::ostream& operator<<(std::ostream& os, const Tensor& tensor);

}  // namespace xdev
