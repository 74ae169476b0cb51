// Shared pieces of the cpu plugin's kernels (docs/ops.md is the contract):
// dtype traits, tensor descriptor checks, attribute lookup, the size
// thresholds that pick a kernel's path, and statuses.
//
// Every kernel is an xdev_kernel_fn_t that never throws: it validates the
// call (counts, dtypes, ranks, shapes), picks a path, and turns any exception
// into a status. Tensors of the cpu device are host memory, so a kernel does
// its work before it returns (the plugin's streams are synchronous).
#pragma once

#include <xdev/half.hpp>
#include <xdev/plugin.h>
#include <xdev/plugin_helpers.hpp>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <type_traits>

namespace xdev::cpu {

// ---------------------------------------------------------------------------
// Thresholds (README.md "Kernels" says how they were chosen)

// Elementwise, Cast, Copy, Fill, RandomUniform, AddN and reductions with
// fewer elements run in the calling thread: no oneTBB task, no allocation.
inline constexpr int64_t kParallelMinElements = int64_t{1} << 15;  // 32 Ki
// The unit of work of a split elementwise loop (elements).
inline constexpr int64_t kParallelGrainElements = int64_t{1} << 14;  // 16 Ki

// ---------------------------------------------------------------------------
// Statuses (implemented in plugin.cpp, which knows the device -> host path)

// A status for `call` with a printf-formatted message, created with the host
// table of the call's device (or the plugin's global one when the device is
// NULL). Allocates nothing itself.
[[gnu::format(printf, 3, 4)]] xdev_status_t* kernel_fail(const xdev_kernel_call_t* call,
                                                         xdev_status_code_t code,
                                                         const char* format, ...) noexcept;
// Writes a printf-formatted line to the log of the call's plugin instance
// (or the plugin's global host table when the call has no device).
[[gnu::format(printf, 3, 4)]] void kernel_log(const xdev_kernel_call_t* call,
                                              xdev_log_level_t level, const char* format,
                                              ...) noexcept;
// Call inside a catch block: the exception in flight as a status
// (OUT_OF_MEMORY for std::bad_alloc, INTERNAL otherwise) naming the op.
xdev_status_t* kernel_unexpected(const xdev_kernel_call_t* call) noexcept;

// ---------------------------------------------------------------------------
// Dtypes

// The SDK's masks (<xdev/plugin_helpers.hpp>) under this plugin's names.
// float16 and bfloat16 (<xdev/half.hpp>): float ops take them through
// widened() (widen.hpp), computing in float32; Cast converts them directly.
// kEveryDtype (every dtype of the ABI): Cast, Fill and the data movement
// ops, which copy elements by their size.
using plugin_helpers::kBF16;
using plugin_helpers::kBool;
using plugin_helpers::kF16;
using plugin_helpers::kF32;
using plugin_helpers::kF64;
using plugin_helpers::kFloats;
using plugin_helpers::kHalves;
using plugin_helpers::kI32;
using plugin_helpers::kI64;
inline constexpr uint64_t kNumeric = plugin_helpers::kNumbers;
inline constexpr uint64_t kAllDtypes = plugin_helpers::kAll;
inline constexpr uint64_t kEveryDtype = plugin_helpers::kEvery;
// The 8-bit integers, and the dtypes of arithmetic, comparisons and
// reductions with them (Neg, Abs and Sign: int8, not uint8).
inline constexpr uint64_t kBytes = plugin_helpers::kU8 | plugin_helpers::kI8;
inline constexpr uint64_t kArith = kNumeric | kBytes;
inline constexpr uint64_t kSigned = kNumeric | plugin_helpers::kI8;

using plugin_helpers::dtype_name;  // "float32", ..., "an unknown dtype"
// "float32, float64, int32, int64" for a mask (static storage per mask).
const char* dtype_list(uint64_t mask) noexcept;

inline bool in_mask(xdev_dtype_t dtype, uint64_t mask) noexcept {
  return static_cast<unsigned>(dtype) < 64 && (mask & XDEV_DTYPE_BIT(dtype)) != 0;
}

inline int64_t itemsize(xdev_dtype_t dtype) noexcept {
  switch (dtype) {
    case XDEV_DTYPE_FLOAT32:
      return 4;
    case XDEV_DTYPE_FLOAT64:
      return 8;
    case XDEV_DTYPE_INT32:
      return 4;
    case XDEV_DTYPE_INT64:
      return 8;
    case XDEV_DTYPE_BOOL:
    case XDEV_DTYPE_UINT8:
    case XDEV_DTYPE_INT8:
      return 1;
    case XDEV_DTYPE_FLOAT16:
    case XDEV_DTYPE_BFLOAT16:
      return 2;
    default:
      return 0;
  }
}

// Calls f(W{}) with W the unsigned integer of `size` bytes (1, 2, 4 or 8):
// what ops that move elements without reading them (Select, Tile, Fill)
// copy them as.
template <typename F>
decltype(auto) visit_word(int64_t size, F&& f) {
  switch (size) {
    case 1:
      return f(uint8_t{});
    case 2:
      return f(uint16_t{});
    case 4:
      return f(uint32_t{});
    default:
      return f(uint64_t{});
  }
}

// `value` converted to `dtype` as Cast converts (docs/ops.md "Cast"), its
// bytes written to `out` (itemsize(dtype) of them): Fill's value, PadV2's
// constant, OneHot's on and off values.
void store_converted(double value, xdev_dtype_t dtype, void* out) noexcept;

// Bool tensors are handled as bytes (0 or 1).
using boolean = uint8_t;
// uint8 elements: char8_t, an unsigned 8-bit integer type distinct from
// uint8_t (bool's `boolean`), so that the two dtypes instantiate apart.
using byte_u8 = char8_t;

// The dtype of a C++ element type (the inverse of visit_dtype).
constexpr xdev_dtype_t dtype_of(float) noexcept { return XDEV_DTYPE_FLOAT32; }
constexpr xdev_dtype_t dtype_of(double) noexcept { return XDEV_DTYPE_FLOAT64; }
constexpr xdev_dtype_t dtype_of(int32_t) noexcept { return XDEV_DTYPE_INT32; }
constexpr xdev_dtype_t dtype_of(int64_t) noexcept { return XDEV_DTYPE_INT64; }
constexpr xdev_dtype_t dtype_of(boolean) noexcept { return XDEV_DTYPE_BOOL; }
constexpr xdev_dtype_t dtype_of(byte_u8) noexcept { return XDEV_DTYPE_UINT8; }
constexpr xdev_dtype_t dtype_of(int8_t) noexcept { return XDEV_DTYPE_INT8; }

// Calls f(T{}) with T the C++ type of `dtype` (one of the seven; float16 and
// bfloat16 reach kernels widened to float32, widen.hpp).
template <typename F>
decltype(auto) visit_dtype(xdev_dtype_t dtype, F&& f) {
  switch (dtype) {
    case XDEV_DTYPE_FLOAT64:
      return f(double{});
    case XDEV_DTYPE_INT32:
      return f(int32_t{});
    case XDEV_DTYPE_INT64:
      return f(int64_t{});
    case XDEV_DTYPE_BOOL:
      return f(boolean{});
    case XDEV_DTYPE_UINT8:
      return f(byte_u8{});
    case XDEV_DTYPE_INT8:
      return f(int8_t{});
    default:
      return f(float{});
  }
}

// Integer arithmetic wraps on overflow: it is computed in the unsigned type
// (no undefined behaviour). For floating point, the plain operation.
template <typename T>
using Unsigned = std::make_unsigned_t<T>;

template <typename T, typename Op>
inline T wrapping(T a, T b, Op op) noexcept {
  if constexpr (std::is_integral_v<T>) {
    return static_cast<T>(op(static_cast<Unsigned<T>>(a), static_cast<Unsigned<T>>(b)));
  } else {
    return op(a, b);
  }
}

// -a, wrapping for integers (-MIN = MIN); -0.0 for +0.0.
template <typename T>
inline T wrapping_neg(T a) noexcept {
  if constexpr (std::is_integral_v<T>) {
    return wrapping(T{0}, a, std::minus<>{});
  } else {
    return -a;
  }
}

// Calls f(T{}) with T the C++ type of `dtype` when `dtype` is in kMask; does
// nothing for any other dtype. Only the dtypes of the mask are instantiated
// (an op that has no int32 kernel never compiles f for int32).
template <uint64_t kMask, typename F>
void visit_dtypes(xdev_dtype_t dtype, F&& f) {
  if (!in_mask(dtype, kMask)) return;
  visit_dtype(dtype, [&f](auto zero) {
    if constexpr ((kMask & XDEV_DTYPE_BIT(dtype_of(decltype(zero){}))) != 0) f(zero);
  });
}

// ---------------------------------------------------------------------------
// Running a kernel's body

// Runs `body` and returns NULL, or the exception it threw as a status
// (kernel_unexpected): no exception leaves a kernel.
template <typename F>
xdev_status_t* guarded(const xdev_kernel_call_t* call, F&& body) noexcept {
  try {
    body();
    return nullptr;
  } catch (...) {
    return kernel_unexpected(call);
  }
}

// The body of most kernels: visit_dtypes<kMask>(dtype, f), guarded.
template <uint64_t kMask, typename F>
xdev_status_t* guarded_visit(const xdev_kernel_call_t* call, xdev_dtype_t dtype,
                             F&& f) noexcept {
  return guarded(call, [dtype, &f] { visit_dtypes<kMask>(dtype, f); });
}

// Defines the kernel function `fn` (an xdev_kernel_fn_t of kernels.hpp) as
// a call of the kernel template given after it, e.g.
// XDEV_CPU_KERNEL(kernel_sub, binary_kernel<SubOp, kNumeric>).
#define XDEV_CPU_KERNEL(fn, ...)                                       \
  xdev_status_t* fn(void*, const xdev_kernel_call_t* call) noexcept { \
    return __VA_ARGS__(call);                                         \
  }

// ---------------------------------------------------------------------------
// Tensor descriptors

// The product of the dims: the SDK's (<xdev/plugin_helpers.hpp>).
using xdev::plugin_helpers::element_count;

template <typename T>
inline T* data_of(const xdev_tensor_t& t) noexcept {
  return reinterpret_cast<T*>(static_cast<char*>(t.data) + t.byte_offset);
}

// Row-major dense: the SDK's test (<xdev/plugin_helpers.hpp>).
using xdev::plugin_helpers::is_contiguous;

// Every element is the same one (all strides 0 where the size is not 1).
inline bool is_broadcast_scalar(const xdev_tensor_t& t) noexcept {
  for (int32_t k = 0; k < t.rank; ++k) {
    if (t.shape[k] != 1 && t.strides[k] != 0) return false;
  }
  return true;
}

inline bool same_shape(const xdev_tensor_t& a, const xdev_tensor_t& b) noexcept {
  if (a.rank != b.rank) return false;
  for (int32_t k = 0; k < a.rank; ++k) {
    if (a.shape[k] != b.shape[k]) return false;
  }
  return true;
}

// ---------------------------------------------------------------------------
// Call validation. Each returns NULL when the call is well-formed, else a
// status naming the op.

// The struct covers v1.0, the counts match, every descriptor is present and
// sane (rank 0..8, shape/strides present, dims >= 0, data present when the
// tensor has elements). `inputs == -1` accepts any count >= 1; `outputs`
// outputs, each contiguous.
xdev_status_t* check_call(const xdev_kernel_call_t* call, int inputs,
                          uint32_t outputs = 1) noexcept;

// All inputs share one dtype in `mask`, and the output has `output_dtype`
// (XDEV_DTYPE_INVALID: the inputs' dtype). Writes the inputs' dtype (or the
// output's when there are no inputs) to `*dtype`.
xdev_status_t* check_dtypes(const xdev_kernel_call_t* call, uint64_t mask, xdev_dtype_t* dtype,
                            xdev_dtype_t output_dtype = XDEV_DTYPE_INVALID) noexcept;

// The output and every input have the same shape.
xdev_status_t* check_same_shapes(const xdev_kernel_call_t* call) noexcept;

// The checks most kernels start with, in this order: check_call(call,
// inputs), check_dtypes(call, mask, dtype, output_dtype),
// check_same_shapes(call) when `same_shapes`, check_attr_names(call, known).
xdev_status_t* check_signature(const xdev_kernel_call_t* call, int inputs, uint64_t mask,
                               const char* const* known, bool same_shapes, xdev_dtype_t* dtype,
                               xdev_dtype_t output_dtype = XDEV_DTYPE_INVALID) noexcept;

// The common case of an elementwise call, checked inline and cheaply: N
// inputs and one output, all present, of one dtype in `mask`, of one shape,
// all dense, no attributes. Writes the dtype and the element count. False
// means "take the general path", which validates everything and reports
// what is wrong.
template <uint32_t N>
inline bool dense_elementwise_call(const xdev_kernel_call_t* call, uint64_t mask,
                                   xdev_dtype_t* dtype, int64_t* count) noexcept {
  if (call == nullptr || call->struct_size < XDEV_KERNEL_CALL_STRUCT_SIZE_1_0 ||
      call->input_count != N || call->output_count != 1 || call->attr_count != 0 ||
      call->inputs == nullptr || call->outputs == nullptr) {
    return false;
  }
  const xdev_tensor_t* out = call->outputs[0];
  if (out == nullptr || !in_mask(out->dtype, mask)) return false;
  const xdev_tensor_t* in[N];
  for (uint32_t i = 0; i < N; ++i) {
    in[i] = call->inputs[i];
    if (in[i] == nullptr || in[i]->dtype != out->dtype || in[i]->rank != out->rank) return false;
  }
  const int32_t rank = out->rank;
  if (rank < 0 || rank > XDEV_MAX_RANK) return false;
  if (rank > 0) {
    if (out->shape == nullptr || out->strides == nullptr) return false;
    for (uint32_t i = 0; i < N; ++i) {
      if (in[i]->shape == nullptr || in[i]->strides == nullptr) return false;
    }
  }
  int64_t n = 1;
  for (int32_t k = rank - 1; k >= 0; --k) {
    const int64_t d = out->shape[k];
    if (d < 0) return false;
    for (uint32_t i = 0; i < N; ++i) {
      if (in[i]->shape[k] != d) return false;
    }
    if (d != 1) {
      if (out->strides[k] != n) return false;
      for (uint32_t i = 0; i < N; ++i) {
        if (in[i]->strides[k] != n) return false;
      }
    }
    n *= d;
  }
  if (n > 0) {
    if (out->data == nullptr) return false;
    for (uint32_t i = 0; i < N; ++i) {
      if (in[i]->data == nullptr) return false;
    }
  }
  *dtype = out->dtype;
  *count = n;
  return true;
}

// ---------------------------------------------------------------------------
// Attributes

// `name == literal`, inline: compares character by character and stops at
// the first difference, so it never reads past the end of `name`.
template <size_t N>
inline bool name_is(const char* name, const char (&literal)[N]) noexcept {
  if (name == nullptr) return false;
  for (size_t i = 0; i < N; ++i) {
    if (name[i] != literal[i]) return false;
  }
  return true;
}

// The `known` list of an op that takes no attribute.
inline constexpr const char* kNoAttrs[] = {nullptr};

// The attribute `name`, or NULL when the call has none of that name.
const xdev_attr_t* find_attr(const xdev_kernel_call_t* call, const char* name) noexcept;
// NULL when every attribute has a name, else INVALID_ARGUMENT. `known`
// (NULL-terminated) lists the names the kernel reads; an attribute of
// another name is ignored, as docs/ops.md asks of every kernel (a later minor
// version may add attributes to an op).
xdev_status_t* check_attr_names(const xdev_kernel_call_t* call, const char* const* known) noexcept;
// A number attribute (FLOAT, INT or BOOL) as double; INVALID_ARGUMENT when
// missing (and `required`) or of another kind.
xdev_status_t* attr_number(const xdev_kernel_call_t* call, const char* name, bool required,
                           double fallback, double* out) noexcept;
xdev_status_t* attr_bool(const xdev_kernel_call_t* call, const char* name, bool fallback,
                         bool* out) noexcept;

// ---------------------------------------------------------------------------
// Conversions shared by Cast, Fill, PadV2, OneHot and Range (docs/ops.md "Cast")

template <typename T>
inline constexpr bool is_half_v = std::is_same_v<T, float16> || std::is_same_v<T, bfloat16>;

// `v` as a value of To. The types are values, not storage: bool is C++
// bool (stored as `boolean`, see Element below), float16 and bfloat16 the
// types of <xdev/half.hpp>.
// - Float -> integer rounds toward zero. Out of range values are unspecified
//   by the contract; here they saturate and NaN gives 0 (what CUDA's
//   conversions do), so the result is defined in C++ too.
// - Integer -> narrower integer is modulo 2^n; -> bool is v != 0 (NaN: true).
// - -> float16 / bfloat16 rounds the exact value once, to nearest even
//   (from int64 and double too: <xdev/half.hpp>); from them it is exact
//   (through float).
template <typename To, typename From>
inline To convert(From v) noexcept {
  if constexpr (std::is_same_v<To, From>) {
    return v;
  } else if constexpr (is_half_v<From>) {
    return convert<To>(static_cast<float>(v));
  } else if constexpr (std::is_same_v<To, bool>) {
    return v != From{0};
  } else if constexpr (std::is_same_v<From, bool>) {
    return convert<To>(v ? int32_t{1} : int32_t{0});
  } else if constexpr (is_half_v<To>) {
    if constexpr (std::is_same_v<From, float> || std::is_same_v<From, double> ||
                  std::is_same_v<From, int64_t>) {
      return To(v);
    } else {
      return To(static_cast<double>(v));  // exact: int8 .. int32
    }
  } else if constexpr (std::is_floating_point_v<From> && std::is_integral_v<To>) {
    // 2^digits is exact in float and double: 2^7, 2^8, 2^31, 2^63.
    constexpr From kHigh = static_cast<From>(std::numeric_limits<To>::max()) + From{1};
    if (!(v == v)) return 0;
    if (v >= kHigh) return std::numeric_limits<To>::max();
    if constexpr (std::is_signed_v<To>) {
      if (v < -kHigh) return std::numeric_limits<To>::min();
    } else {
      if (v <= From{-1}) return 0;
    }
    return static_cast<To>(v);
  } else {
    return static_cast<To>(v);
  }
}

// The element types of the nine dtypes (Elem): `stored` is what a tensor holds,
// `value` what convert() takes and gives (bool for the bool dtype).
template <typename Stored, typename Value = Stored>
struct Elem {
  using stored = Stored;
  using value = Value;
  static value load(stored s) noexcept {
    if constexpr (std::is_same_v<Value, bool>) {
      return s != 0;
    } else {
      return s;
    }
  }
  static stored store(value v) noexcept {
    if constexpr (std::is_same_v<Value, bool>) {
      return v ? 1 : 0;
    } else {
      return v;
    }
  }
};

// Calls f(Elem<...>{}) for `dtype`, one of the nine (float32 otherwise).
template <typename F>
decltype(auto) visit_element(xdev_dtype_t dtype, F&& f) {
  switch (dtype) {
    case XDEV_DTYPE_FLOAT64:
      return f(Elem<double>{});
    case XDEV_DTYPE_INT32:
      return f(Elem<int32_t>{});
    case XDEV_DTYPE_INT64:
      return f(Elem<int64_t>{});
    case XDEV_DTYPE_BOOL:
      return f(Elem<boolean, bool>{});
    case XDEV_DTYPE_FLOAT16:
      return f(Elem<float16>{});
    case XDEV_DTYPE_BFLOAT16:
      return f(Elem<bfloat16>{});
    case XDEV_DTYPE_UINT8:
      return f(Elem<uint8_t>{});
    case XDEV_DTYPE_INT8:
      return f(Elem<int8_t>{});
    default:
      return f(Elem<float>{});
  }
}

}  // namespace xdev::cpu
