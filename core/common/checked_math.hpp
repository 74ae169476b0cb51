// Overflow-checked size arithmetic. Element counts and byte sizes are
// products of numbers a user chose (a shape's dimensions, a limit in MiB);
// every such product in the core goes through these helpers instead of a
// plain `*` or `<<`, so a wrapped size can never reach an allocator or a
// kernel. docs/ops.md ("How sizes are validated") states the rules.
#pragma once

#include <cstdint>
#include <optional>
#include <span>

namespace xdev::detail {

// The largest tensor (or host buffer) xdev accepts, in bytes: 2^48 (256 TiB),
// the whole virtual address space of the devices xdev runs on (48-bit on
// x86-64 and on CUDA GPUs). A larger size can never be allocated anywhere, so
// it is an invalid argument; a smaller one that does not fit the device is
// an out-of-memory error from its pool.
inline constexpr uint64_t kMaxTensorBytes = uint64_t{1} << 48;

// a * b, or nothing when the product does not fit in 64 bits.
constexpr std::optional<uint64_t> checked_mul(uint64_t a, uint64_t b) noexcept {
  uint64_t product = 0;
  if (__builtin_mul_overflow(a, b, &product)) return std::nullopt;
  return product;
}

// a + b, or nothing when the sum does not fit in 64 bits.
constexpr std::optional<uint64_t> checked_add(uint64_t a, uint64_t b) noexcept {
  uint64_t sum = 0;
  if (__builtin_add_overflow(a, b, &sum)) return std::nullopt;
  return sum;
}

// The number of elements of a shape, or nothing when a dimension is negative
// or the shape is too large: the product of the dimensions, each counted as at
// least 1 (so the row-major strides of a shape with a 0 in it fit as well),
// must not exceed INT64_MAX.
constexpr std::optional<uint64_t> checked_elements(std::span<const int64_t> dims) noexcept {
  uint64_t extent = 1;   // product with every 0 counted as 1
  bool empty = false;
  for (int64_t d : dims) {
    if (d < 0) return std::nullopt;
    if (d == 0) empty = true;
    auto next = checked_mul(extent, d == 0 ? 1 : static_cast<uint64_t>(d));
    if (!next || *next > static_cast<uint64_t>(INT64_MAX)) return std::nullopt;
    extent = *next;
  }
  return empty ? 0 : extent;
}

// Bytes of `elements` items of `item_size` bytes, or nothing past
// kMaxTensorBytes.
constexpr std::optional<uint64_t> checked_bytes(uint64_t elements, uint64_t item_size) noexcept {
  auto bytes = checked_mul(elements, item_size);
  if (!bytes || *bytes > kMaxTensorBytes) return std::nullopt;
  return bytes;
}

// `mib` MiB in bytes, or nothing when negative or not representable.
constexpr std::optional<uint64_t> checked_mib_to_bytes(int64_t mib) noexcept {
  if (mib < 0) return std::nullopt;
  return checked_mul(static_cast<uint64_t>(mib), uint64_t{1} << 20);
}

}  // namespace xdev::detail
