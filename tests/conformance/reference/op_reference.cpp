#include "op_reference.hpp"

#include <algorithm>
#include <array>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <limits>
#include <numbers>
#include <sstream>
#include <type_traits>

#include <xdev/half.hpp>
#include <xdev/strided_slice.hpp>

namespace xdev_conformance::ref {
namespace {

constexpr std::array<xdev_dtype_t, 9> kOpDtypes = {
    XDEV_DTYPE_FLOAT32, XDEV_DTYPE_FLOAT64,  XDEV_DTYPE_INT32, XDEV_DTYPE_INT64, XDEV_DTYPE_BOOL,
    XDEV_DTYPE_FLOAT16, XDEV_DTYPE_BFLOAT16, XDEV_DTYPE_UINT8, XDEV_DTYPE_INT8};

const xdev_attr_t* find_attr(std::span<const xdev_attr_t> attrs, const char* name) {
  for (const xdev_attr_t& a : attrs) {
    if (a.name != nullptr && std::strcmp(a.name, name) == 0) return &a;
  }
  return nullptr;
}

bool attr_bool(std::span<const xdev_attr_t> attrs, const char* name, bool fallback) {
  const xdev_attr_t* a = find_attr(attrs, name);
  return a != nullptr && a->kind == XDEV_ATTR_BOOL ? a->value.b != 0 : fallback;
}

bool is_half(xdev_dtype_t dtype) {
  return dtype == XDEV_DTYPE_FLOAT16 || dtype == XDEV_DTYPE_BFLOAT16;
}

// The dtype a float op computes in: float16 and bfloat16 in float32
// (docs/ops.md "Dtypes"), the others in their own.
xdev_dtype_t compute_dtype(xdev_dtype_t dtype) {
  return is_half(dtype) ? XDEV_DTYPE_FLOAT32 : dtype;
}

// The distance from 1 to the next number: 2^-23, 2^-52, 2^-10, 2^-7.
double epsilon(xdev_dtype_t dtype) {
  switch (dtype) {
    case XDEV_DTYPE_FLOAT32: return static_cast<double>(FLT_EPSILON);
    case XDEV_DTYPE_FLOAT16: return 0x1p-10;
    case XDEV_DTYPE_BFLOAT16: return 0x1p-7;
    default: return DBL_EPSILON;
  }
}

double smallest_normal(xdev_dtype_t dtype) {
  switch (dtype) {
    case XDEV_DTYPE_FLOAT32: return static_cast<double>(FLT_MIN);
    case XDEV_DTYPE_FLOAT16: return 0x1p-14;
    case XDEV_DTYPE_BFLOAT16: return static_cast<double>(FLT_MIN);
    default: return DBL_MIN;
  }
}

// The smallest subnormal: 2^-24 for float16, 2^-133 for bfloat16.
double smallest_subnormal(xdev_dtype_t dtype) {
  return dtype == XDEV_DTYPE_FLOAT16 ? 0x1p-24 : 0x1p-133;
}

// Integer result of an op, wrapped to the element type when it is written.
int64_t int_binary(const std::string& op, int64_t x, int64_t y, xdev_dtype_t dtype) {
  if (dtype == XDEV_DTYPE_BOOL) return (x != 0 || y != 0) ? 1 : 0;  // Add only
  // Unsigned arithmetic wraps without undefined behaviour.
  auto ux = static_cast<uint64_t>(x), uy = static_cast<uint64_t>(y);
  if (op == "Add") return static_cast<int64_t>(ux + uy);
  if (op == "Sub") return static_cast<int64_t>(ux - uy);
  if (op == "Mul") return static_cast<int64_t>(ux * uy);
  if (op == "Maximum") return std::max(x, y);
  if (op == "Minimum") return std::min(x, y);
  if (op == "SquaredDifference") return static_cast<int64_t>((ux - uy) * (ux - uy));
  if (op == "FloorDiv" || op == "FloorMod") {
    // Toward -inf (Python's // and %); a zero divisor gives 0 (the suite
    // never makes one: it is an error on the cpu plugin, 0 on GPUs). Computed in
    // int64, where MIN32 / -1 does not overflow; set_int wraps it.
    if (y == 0) return 0;
    if (y == -1) return op == "FloorDiv" ? static_cast<int64_t>(0 - ux) : 0;
    int64_t q = x / y, r = x % y;
    if (r != 0 && ((r < 0) != (y < 0))) {
      q -= 1;
      r += y;
    }
    return op == "FloorDiv" ? q : r;
  }
  // Div: toward zero; a zero divisor gives 0.
  if (y == 0) return 0;
  if (dtype == XDEV_DTYPE_INT32) {
    auto a = static_cast<int32_t>(x), b = static_cast<int32_t>(y);
    if (a == std::numeric_limits<int32_t>::min() && b == -1) return a;
    return a / b;
  }
  if (x == std::numeric_limits<int64_t>::min() && y == -1) return x;
  return x / y;
}

template <typename T>
T float_binary(const std::string& op, T x, T y) {
  if (op == "Add") return x + y;
  if (op == "Sub") return x - y;
  if (op == "Mul") return x * y;
  // Maximum, Minimum: NaN if either is NaN.
  if (op == "Maximum") return std::isnan(x) ? x : std::isnan(y) ? y : (x < y ? y : x);
  if (op == "Minimum") return std::isnan(x) ? x : std::isnan(y) ? y : (y < x ? y : x);
  if (op == "SquaredDifference") return (x - y) * (x - y);
  // FloorDiv: IEEE division, then floor; FloorMod: fmod, moved to y's sign.
  if (op == "FloorDiv") return std::floor(x / y);
  if (op == "FloorMod") {
    T r = std::fmod(x, y);
    return (r != 0 && ((r < 0) != (y < 0))) ? r + y : r;
  }
  if (op == "Pow") return static_cast<T>(std::pow(static_cast<double>(x), static_cast<double>(y)));
  return x / y;
}

// Row-major index of an element of `in` -> row-major index in the reduced
// output (axes dropped, or kept as 1).
std::vector<int64_t> reduce_map(const Tensor& in, const std::vector<bool>& reduced) {
  const int64_t n = in.num_elements();
  std::vector<int64_t> map(static_cast<size_t>(n));
  // Output strides over the kept axes.
  std::vector<int64_t> out_stride(in.shape.size(), 0);
  int64_t s = 1;
  for (int k = in.rank() - 1; k >= 0; --k) {
    if (reduced[static_cast<size_t>(k)]) continue;
    out_stride[static_cast<size_t>(k)] = s;
    s *= in.shape[static_cast<size_t>(k)];
  }
  std::vector<int64_t> idx(in.shape.size(), 0);
  for (int64_t i = 0; i < n; ++i) {
    int64_t o = 0;
    for (size_t k = 0; k < idx.size(); ++k) o += idx[k] * out_stride[k];
    map[static_cast<size_t>(i)] = o;
    for (int k = in.rank() - 1; k >= 0; --k) {
      if (++idx[static_cast<size_t>(k)] < in.shape[static_cast<size_t>(k)]) break;
      idx[static_cast<size_t>(k)] = 0;
    }
  }
  return map;
}

std::optional<std::string> reduced_axes(const Tensor& x, std::span<const xdev_attr_t> attrs,
                                        std::vector<bool>& reduced) {
  const xdev_attr_t* axes = find_attr(attrs, "axes");
  if (axes == nullptr || axes->kind != XDEV_ATTR_INTS) return "attribute 'axes' (ints) missing";
  reduced.assign(x.shape.size(), false);
  for (int64_t k = 0; k < axes->value.ints.count; ++k) {
    int64_t a = axes->value.ints.values[k];
    if (a < 0 || a >= x.rank()) return "axis " + std::to_string(a) + " out of range";
    reduced[static_cast<size_t>(a)] = true;
  }
  return std::nullopt;
}

}  // namespace

size_t dtype_size(xdev_dtype_t dtype) {
  switch (dtype) {
    case XDEV_DTYPE_FLOAT32: return 4;
    case XDEV_DTYPE_FLOAT64: return 8;
    case XDEV_DTYPE_INT32: return 4;
    case XDEV_DTYPE_INT64: return 8;
    case XDEV_DTYPE_BOOL: return 1;
    case XDEV_DTYPE_FLOAT16: return 2;
    case XDEV_DTYPE_BFLOAT16: return 2;
    case XDEV_DTYPE_UINT8: return 1;
    case XDEV_DTYPE_INT8: return 1;
    default: return 0;
  }
}

std::string dtype_name(xdev_dtype_t dtype) {
  switch (dtype) {
    case XDEV_DTYPE_FLOAT32: return "float32";
    case XDEV_DTYPE_FLOAT64: return "float64";
    case XDEV_DTYPE_INT32: return "int32";
    case XDEV_DTYPE_INT64: return "int64";
    case XDEV_DTYPE_BOOL: return "bool";
    case XDEV_DTYPE_FLOAT16: return "float16";
    case XDEV_DTYPE_BFLOAT16: return "bfloat16";
    case XDEV_DTYPE_UINT8: return "uint8";
    case XDEV_DTYPE_INT8: return "int8";
    default: return "dtype " + std::to_string(static_cast<int>(dtype));
  }
}

bool is_float(xdev_dtype_t dtype) {
  return dtype == XDEV_DTYPE_FLOAT32 || dtype == XDEV_DTYPE_FLOAT64 || is_half(dtype);
}

std::span<const xdev_dtype_t> op_dtypes() { return kOpDtypes; }

int64_t Tensor::num_elements() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

size_t Tensor::span_bytes() const {
  if (num_elements() == 0) return static_cast<size_t>(offset) * dtype_size(dtype);
  int64_t last = offset;
  for (size_t k = 0; k < shape.size(); ++k) last += (shape[k] - 1) * strides[k];
  return static_cast<size_t>(last + 1) * dtype_size(dtype);
}

int64_t Tensor::storage_index(int64_t i) const {
  int64_t at = offset;
  for (int k = rank() - 1; k >= 0; --k) {
    int64_t d = shape[static_cast<size_t>(k)];
    at += (i % d) * strides[static_cast<size_t>(k)];
    i /= d;
  }
  return at;
}

double Tensor::get_double(int64_t i) const {
  const unsigned char* p = storage.data() + storage_index(i) * static_cast<int64_t>(dtype_size(dtype));
  switch (dtype) {
    case XDEV_DTYPE_FLOAT32: { float v; std::memcpy(&v, p, 4); return v; }
    case XDEV_DTYPE_FLOAT64: { double v; std::memcpy(&v, p, 8); return v; }
    case XDEV_DTYPE_INT32: { int32_t v; std::memcpy(&v, p, 4); return v; }
    case XDEV_DTYPE_INT64: { int64_t v; std::memcpy(&v, p, 8); return static_cast<double>(v); }
    case XDEV_DTYPE_BOOL: return *p != 0 ? 1.0 : 0.0;
    case XDEV_DTYPE_FLOAT16: { uint16_t h; std::memcpy(&h, p, 2); return xdev::half_to_float(h); }
    case XDEV_DTYPE_BFLOAT16: { uint16_t h; std::memcpy(&h, p, 2); return xdev::bfloat16_to_float(h); }
    case XDEV_DTYPE_UINT8: return *p;
    case XDEV_DTYPE_INT8: return static_cast<int8_t>(*p);
    default: return 0.0;
  }
}

int64_t Tensor::get_int(int64_t i) const {
  const unsigned char* p = storage.data() + storage_index(i) * static_cast<int64_t>(dtype_size(dtype));
  switch (dtype) {
    case XDEV_DTYPE_FLOAT32: { float v; std::memcpy(&v, p, 4); return static_cast<int64_t>(v); }
    case XDEV_DTYPE_FLOAT64: { double v; std::memcpy(&v, p, 8); return static_cast<int64_t>(v); }
    case XDEV_DTYPE_INT32: { int32_t v; std::memcpy(&v, p, 4); return v; }
    case XDEV_DTYPE_INT64: { int64_t v; std::memcpy(&v, p, 8); return v; }
    case XDEV_DTYPE_BOOL: return *p != 0 ? 1 : 0;
    case XDEV_DTYPE_FLOAT16:
    case XDEV_DTYPE_BFLOAT16: return static_cast<int64_t>(get_double(i));
    case XDEV_DTYPE_UINT8: return *p;
    case XDEV_DTYPE_INT8: return static_cast<int8_t>(*p);
    default: return 0;
  }
}

namespace {

// docs/ops.md "Cast": float -> int rounds toward zero, saturates at the
// target's range, NaN gives 0. (A plain cast of an out-of-range double is
// undefined behaviour; the op fuzzer's UBSan found it here with Fill 1e300.)
template <typename Int>
Int saturating_int(double v) {
  if (std::isnan(v)) return 0;
  // max + 1 is an exact double: 2^7, 2^8, 2^31, 2^63.
  const double high = static_cast<double>(std::numeric_limits<Int>::max()) + 1.0;
  if (v >= high) return std::numeric_limits<Int>::max();
  if (std::is_signed_v<Int> ? v < -high : v <= -1.0) return std::numeric_limits<Int>::min();
  return static_cast<Int>(std::trunc(v));
}

}  // namespace

void Tensor::set_double(int64_t i, double v) {
  unsigned char* p = storage.data() + storage_index(i) * static_cast<int64_t>(dtype_size(dtype));
  switch (dtype) {
    case XDEV_DTYPE_FLOAT32: { float f = static_cast<float>(v); std::memcpy(p, &f, 4); break; }
    case XDEV_DTYPE_FLOAT64: std::memcpy(p, &v, 8); break;
    case XDEV_DTYPE_INT32: { auto x = saturating_int<int32_t>(v); std::memcpy(p, &x, 4); break; }
    case XDEV_DTYPE_INT64: { auto x = saturating_int<int64_t>(v); std::memcpy(p, &x, 8); break; }
    case XDEV_DTYPE_BOOL: *p = v != 0.0 ? 1 : 0; break;
    // Rounded once, to nearest even, from the double.
    case XDEV_DTYPE_FLOAT16: { uint16_t h = xdev::double_to_half(v); std::memcpy(p, &h, 2); break; }
    case XDEV_DTYPE_BFLOAT16: { uint16_t h = xdev::double_to_bfloat16(v); std::memcpy(p, &h, 2); break; }
    case XDEV_DTYPE_UINT8: *p = saturating_int<uint8_t>(v); break;
    case XDEV_DTYPE_INT8: { auto x = saturating_int<int8_t>(v); std::memcpy(p, &x, 1); break; }
    default: break;
  }
}

void Tensor::set_int(int64_t i, int64_t v) {
  unsigned char* p = storage.data() + storage_index(i) * static_cast<int64_t>(dtype_size(dtype));
  switch (dtype) {
    case XDEV_DTYPE_FLOAT32: { float f = static_cast<float>(v); std::memcpy(p, &f, 4); break; }
    case XDEV_DTYPE_FLOAT64: { double f = static_cast<double>(v); std::memcpy(p, &f, 8); break; }
    case XDEV_DTYPE_INT32: {
      auto x = static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(v)));
      std::memcpy(p, &x, 4);
      break;
    }
    case XDEV_DTYPE_INT64: std::memcpy(p, &v, 8); break;
    case XDEV_DTYPE_BOOL: *p = v != 0 ? 1 : 0; break;
    case XDEV_DTYPE_FLOAT16: { uint16_t h = xdev::float16(v).bits; std::memcpy(p, &h, 2); break; }
    case XDEV_DTYPE_BFLOAT16: { uint16_t h = xdev::bfloat16(v).bits; std::memcpy(p, &h, 2); break; }
    // Modulo 2^8, like any integer narrowing.
    case XDEV_DTYPE_UINT8: *p = static_cast<uint8_t>(static_cast<uint64_t>(v)); break;
    case XDEV_DTYPE_INT8: *p = static_cast<uint8_t>(static_cast<uint64_t>(v)); break;
    default: break;
  }
}

std::vector<int64_t> contiguous_strides(const std::vector<int64_t>& shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  int64_t s = 1;
  for (size_t k = shape.size(); k-- > 0;) {
    strides[k] = s;
    s *= std::max<int64_t>(shape[k], 1);
  }
  return strides;
}

Tensor make_contiguous(xdev_dtype_t dtype, const std::vector<int64_t>& shape) {
  Tensor t;
  t.dtype = dtype;
  t.shape = shape;
  t.strides = contiguous_strides(shape);
  t.storage.assign(static_cast<size_t>(t.num_elements()) * dtype_size(dtype), 0);
  return t;
}

Tensor to_contiguous(const Tensor& t) {
  Tensor out = make_contiguous(t.dtype, t.shape);
  const size_t size = dtype_size(t.dtype);
  for (int64_t i = 0; i < t.num_elements(); ++i) {
    std::memcpy(out.storage.data() + i * static_cast<int64_t>(size),
                t.storage.data() + t.storage_index(i) * static_cast<int64_t>(size), size);
  }
  return out;
}

namespace {

using OpId = xdev::detail::OpId;

std::string op_text(OpId op) { return std::string(xdev::detail::op_name(op)); }

std::optional<std::string> need_inputs(const Call& c, size_t count) {
  if (c.inputs.size() != count) {
    return op_text(c.op) + " takes " + std::to_string(count) + " input(s), got " +
           std::to_string(c.inputs.size());
  }
  if (c.outputs.size() != 1) return op_text(c.op) + " has one output";
  return std::nullopt;
}

// The elementwise references: need_inputs(c, inputs), then f(i, out) for
// each element i of the output. An f that returns an error stops there.
template <typename F>
std::optional<std::string> each_element(const Call& c, size_t inputs, F f) {
  if (auto e = need_inputs(c, inputs)) return e;
  Tensor& out = c.outputs[0];
  for (int64_t i = 0; i < out.num_elements(); ++i) {
    if constexpr (std::is_void_v<std::invoke_result_t<F&, int64_t, Tensor&>>) {
      f(i, out);
    } else if (auto e = f(i, out)) {
      return e;
    }
  }
  return std::nullopt;
}

// --- the references ---------------------------------------------------------------

// MatMul's and BatchMatMulV2's index arithmetic, the transposes (MatMul's
// transpose_a / transpose_b, BatchMatMulV2's adj_x / adj_y) honoured: element
// (i, j) of output matrix `batch` (m x cols) sums a[a_at(batch, i, p)] *
// b[b_at(batch, p, j)] over p < k. The batch axes (all but the last two)
// broadcast: an input's axis of size 1, or one it lacks, stays at 0.
struct MatMulShape {
  explicit MatMulShape(const Call& c)
      : a(*c.inputs[0]),
        b(*c.inputs[1]),
        ta(attr_bool(c.attrs, c.op == OpId::kMatMul ? "transpose_a" : "adj_x", false)),
        tb(attr_bool(c.attrs, c.op == OpId::kMatMul ? "transpose_b" : "adj_y", false)),
        out(c.outputs[0].shape),
        m(out[out.size() - 2]),
        cols(out[out.size() - 1]),
        k(ta ? dim(a, 2) : dim(a, 1)) {
    for (size_t i = 0; i + 2 < out.size(); ++i) batches *= out[i];
  }
  static int64_t dim(const Tensor& t, size_t from_end) { return t.shape[t.shape.size() - from_end]; }
  // The row-major index of matrix `batch`'s first element in t.
  int64_t base(const Tensor& t, int64_t batch) const {
    int64_t index = 0, stride = dim(t, 2) * dim(t, 1);
    for (size_t from_end = 3; from_end <= out.size(); ++from_end) {
      const int64_t d = out[out.size() - from_end];
      const int64_t at = batch % d;
      batch /= d;
      if (from_end <= t.shape.size()) {
        const int64_t td = t.shape[t.shape.size() - from_end];
        if (td != 1) index += at * stride;
        stride *= td;
      }
    }
    return index;
  }
  int64_t a_at(int64_t batch, int64_t i, int64_t p) const {
    return base(a, batch) + (ta ? p * dim(a, 1) + i : i * dim(a, 1) + p);
  }
  int64_t b_at(int64_t batch, int64_t p, int64_t j) const {
    return base(b, batch) + (tb ? j * dim(b, 1) + p : p * dim(b, 1) + j);
  }

  const Tensor& a;
  const Tensor& b;
  bool ta, tb;
  const std::vector<int64_t>& out;
  int64_t m, cols, k;
  int64_t batches = 1;
};

std::optional<std::string> matmul(const Call& c) {
  if (auto e = need_inputs(c, 2)) return e;
  const MatMulShape s(c);
  Tensor& out = c.outputs[0];
  for (int64_t batch = 0; batch < s.batches; ++batch) {
    for (int64_t i = 0; i < s.m; ++i) {
      for (int64_t j = 0; j < s.cols; ++j) {
        double facc = 0.0;
        uint64_t iacc = 0;
        for (int64_t p = 0; p < s.k; ++p) {
          const int64_t ai = s.a_at(batch, i, p), bi = s.b_at(batch, p, j);
          if (is_float(out.dtype)) {
            facc += s.a.get_double(ai) * s.b.get_double(bi);
          } else {
            iacc += static_cast<uint64_t>(s.a.get_int(ai)) * static_cast<uint64_t>(s.b.get_int(bi));
          }
        }
        const int64_t at = (batch * s.m + i) * s.cols + j;
        if (is_float(out.dtype)) out.set_double(at, facc);
        else out.set_int(at, static_cast<int64_t>(iacc));
      }
    }
  }
  return std::nullopt;
}

// Add, Sub, Mul, Div, Pow, Maximum, Minimum, FloorDiv, FloorMod,
// SquaredDifference on inputs already broadcast to the output's shape.
std::optional<std::string> binary(const Call& c) {
  const std::string op = op_text(c.op);
  return each_element(c, 2, [&](int64_t i, Tensor& out) {
    const Tensor& x = *c.inputs[0];
    const Tensor& y = *c.inputs[1];
    if (out.dtype == XDEV_DTYPE_FLOAT32) {
      out.set_double(i, float_binary<float>(op, static_cast<float>(x.get_double(i)),
                                            static_cast<float>(y.get_double(i))));
    } else if (is_float(out.dtype)) {  // float16, bfloat16: exact, then rounded once
      out.set_double(i, float_binary<double>(op, x.get_double(i), y.get_double(i)));
    } else {
      out.set_int(i, int_binary(op, x.get_int(i), y.get_int(i), out.dtype));
    }
  });
}

// Neg, Relu, Copy, Identity.
std::optional<std::string> unary(const Call& c) {
  return each_element(c, 1, [&](int64_t i, Tensor& out) {
    if (is_float(out.dtype)) {
      double v = c.inputs[0]->get_double(i);
      if (c.op == OpId::kNeg) v = -v;
      if (c.op == OpId::kRelu) v = v > 0.0 ? v : 0.0;
      out.set_double(i, v);
    } else {
      int64_t v = c.inputs[0]->get_int(i);
      if (c.op == OpId::kNeg) v = static_cast<int64_t>(0 - static_cast<uint64_t>(v));
      if (c.op == OpId::kRelu) v = v > 0 ? v : 0;
      out.set_int(i, v);
    }
  });
}

// Elementwise math (Abs ... Gelu), in double (int64 for integers), rounded
// once to the output dtype. docs/ops.md "Semantics" defines the edge cases.
double math_double(OpId op, double v, std::span<const xdev_attr_t> attrs) {
  switch (op) {
    case OpId::kAbs: return std::fabs(v);
    case OpId::kSign: return v > 0 ? 1.0 : v < 0 ? -1.0 : v;
    case OpId::kSquare: return v * v;
    case OpId::kExp: return std::exp(v);
    case OpId::kExpm1: return std::expm1(v);
    case OpId::kLog: return std::log(v);
    case OpId::kLog1p: return std::log1p(v);
    case OpId::kSqrt: return std::sqrt(v);
    case OpId::kRsqrt: return 1.0 / std::sqrt(v);
    case OpId::kReciprocal: return 1.0 / v;
    case OpId::kSin: return std::sin(v);
    case OpId::kCos: return std::cos(v);
    case OpId::kTanh: return std::tanh(v);
    case OpId::kSigmoid: return 1.0 / (1.0 + std::exp(-v));
    case OpId::kErf: return std::erf(v);
    case OpId::kSoftplus: return std::max(v, 0.0) + std::log1p(std::exp(-std::fabs(v)));
    case OpId::kFloor: return std::floor(v);
    case OpId::kCeil: return std::ceil(v);
    case OpId::kRound: return std::nearbyint(v);  // halves to even
    case OpId::kLeakyRelu: {
      const xdev_attr_t* a = find_attr(attrs, "alpha");
      const double alpha = a != nullptr && a->kind == XDEV_ATTR_FLOAT ? a->value.f : 0.2;
      return v > 0 ? v : alpha * v;
    }
    case OpId::kGelu:
      if (attr_bool(attrs, "approximate", false)) {
        const double k = std::sqrt(2.0 / std::numbers::pi);
        return 0.5 * v * (1.0 + std::tanh(k * (v + 0.044715 * v * v * v)));
      }
      return 0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0)));
    default: return std::numeric_limits<double>::quiet_NaN();
  }
}

std::optional<std::string> math(const Call& c) {
  return each_element(c, 1, [&](int64_t i, Tensor& out) -> std::optional<std::string> {
    const Tensor& x = *c.inputs[0];
    if (is_float(out.dtype)) {
      out.set_double(i, math_double(c.op, x.get_double(i), c.attrs));
      return std::nullopt;
    }
    // Abs, Sign, Square of integers: wrapping, written back in the element type.
    const int64_t v = x.get_int(i);
    const auto u = static_cast<uint64_t>(v);
    switch (c.op) {
      case OpId::kAbs: out.set_int(i, static_cast<int64_t>(v < 0 ? 0 - u : u)); break;
      case OpId::kSign: out.set_int(i, v > 0 ? 1 : v < 0 ? -1 : 0); break;
      case OpId::kSquare: out.set_int(i, static_cast<int64_t>(u * u)); break;
      default: return op_text(c.op) + " is defined for float32 and float64 only";
    }
    return std::nullopt;
  });
}

// Comparisons, logic, IsNan, IsFinite: bool results, from the inputs'
// values (floats in double, where NaN compares unequal to everything).
bool compare_values(OpId op, double x, double y) {
  switch (op) {
    case OpId::kEqual: return x == y;
    case OpId::kNotEqual: return x != y;
    case OpId::kLess: return x < y;
    case OpId::kLessEqual: return x <= y;
    case OpId::kGreater: return x > y;
    case OpId::kGreaterEqual: return x >= y;
    case OpId::kLogicalAnd: return x != 0 && y != 0;
    case OpId::kLogicalOr: return x != 0 || y != 0;
    default: return false;
  }
}

std::optional<std::string> comparison(const Call& c) {
  return each_element(c, 2, [&](int64_t i, Tensor& out) {
    const Tensor& x = *c.inputs[0];
    const Tensor& y = *c.inputs[1];
    bool v;
    if (is_float(x.dtype)) {
      v = compare_values(c.op, x.get_double(i), y.get_double(i));
    } else {
      // Integers exactly (int64 does not fit a double).
      const int64_t a = x.get_int(i), b = y.get_int(i);
      v = compare_values(c.op, a < b ? -1.0 : a > b ? 1.0 : 0.0, 0.0);
      if (c.op == OpId::kLogicalAnd || c.op == OpId::kLogicalOr) {
        v = compare_values(c.op, static_cast<double>(a != 0), static_cast<double>(b != 0));
      }
    }
    out.set_int(i, v ? 1 : 0);
  });
}

// LogicalNot, IsNan, IsFinite.
std::optional<std::string> predicate(const Call& c) {
  return each_element(c, 1, [&](int64_t i, Tensor& out) {
    const double v = c.inputs[0]->get_double(i);
    bool r = false;
    if (c.op == OpId::kLogicalNot) r = v == 0.0;
    if (c.op == OpId::kIsNan) r = std::isnan(v);
    if (c.op == OpId::kIsFinite) r = std::isfinite(v);
    out.set_int(i, r ? 1 : 0);
  });
}

// Select: condition ? x : y, copied exactly (bits of floats included).
std::optional<std::string> select_value(const Call& c) {
  return each_element(c, 3, [&](int64_t i, Tensor& out) {
    const Tensor& from = c.inputs[0]->get_int(i) != 0 ? *c.inputs[1] : *c.inputs[2];
    if (is_float(out.dtype)) out.set_double(i, from.get_double(i));
    else out.set_int(i, from.get_int(i));
  });
}

// ClipByValue: min(max(x, lo), hi); NaN x stays NaN; hi wins where lo > hi.
std::optional<std::string> clip(const Call& c) {
  return each_element(c, 3, [&](int64_t i, Tensor& out) {
    const Tensor& x = *c.inputs[0];
    const Tensor& lo = *c.inputs[1];
    const Tensor& hi = *c.inputs[2];
    if (is_float(out.dtype)) {
      const double v = x.get_double(i);
      out.set_double(i, std::isnan(v) ? v : std::min(std::max(v, lo.get_double(i)), hi.get_double(i)));
    } else {
      out.set_int(i, std::min(std::max(x.get_int(i), lo.get_int(i)), hi.get_int(i)));
    }
  });
}

std::optional<std::string> add_n(const Call& c) {
  if (c.inputs.empty()) return std::string("AddN takes at least one input");
  if (c.outputs.size() != 1) return std::string("AddN has one output");
  Tensor& out = c.outputs[0];
  for (int64_t i = 0; i < out.num_elements(); ++i) {
    double facc = 0.0;
    uint64_t iacc = 0;
    for (const Tensor* x : c.inputs) {
      if (is_float(out.dtype)) facc += x->get_double(i);
      else iacc += static_cast<uint64_t>(x->get_int(i));
    }
    if (is_float(out.dtype)) out.set_double(i, facc);
    else out.set_int(i, static_cast<int64_t>(iacc));
  }
  return std::nullopt;
}

std::optional<std::string> cast(const Call& c) {
  if (auto e = need_inputs(c, 1)) return e;
  const Tensor& x = *c.inputs[0];
  Tensor& out = c.outputs[0];
  for (int64_t i = 0; i < out.num_elements(); ++i) {
    if (out.dtype == XDEV_DTYPE_BOOL) {
      out.set_int(i, x.get_double(i) != 0.0 ? 1 : 0);
    } else if (is_float(x.dtype)) {
      out.set_double(i, x.get_double(i));  // float -> int truncates (set_double)
    } else {
      out.set_int(i, x.get_int(i));
    }
  }
  return std::nullopt;
}

// Max, Min, Prod, Any, All, LogSumExp: each output from the list of its
// reduced elements (floats in double, integers in int64 / wrapping uint64).
std::optional<std::string> reduce_other(const Call& c) {
  if (auto e = need_inputs(c, 1)) return e;
  const Tensor& x = *c.inputs[0];
  Tensor& out = c.outputs[0];
  std::vector<bool> reduced;
  if (auto e = reduced_axes(x, c.attrs, reduced)) return e;
  std::vector<std::vector<int64_t>> members(static_cast<size_t>(out.num_elements()));
  const std::vector<int64_t> map = reduce_map(x, reduced);
  for (int64_t i = 0; i < x.num_elements(); ++i) {
    members[static_cast<size_t>(map[static_cast<size_t>(i)])].push_back(i);
  }
  constexpr double kInf = std::numeric_limits<double>::infinity();
  const bool floats = is_float(x.dtype);
  for (int64_t o = 0; o < out.num_elements(); ++o) {
    const std::vector<int64_t>& m = members[static_cast<size_t>(o)];
    switch (c.op) {
      case OpId::kMax:
      case OpId::kMin: {
        const bool max = c.op == OpId::kMax;
        if (floats) {
          double v = max ? -kInf : kInf;
          for (int64_t i : m) {
            const double e = x.get_double(i);
            if (std::isnan(e) || std::isnan(v)) v = std::numeric_limits<double>::quiet_NaN();
            else v = max ? std::max(v, e) : std::min(v, e);
          }
          out.set_double(o, v);
        } else {
          // Over no elements: the dtype's lowest (Max) or highest (Min) value.
          int64_t lowest = INT64_MIN, highest = INT64_MAX;
          switch (x.dtype) {
            case XDEV_DTYPE_INT32: lowest = INT32_MIN, highest = INT32_MAX; break;
            case XDEV_DTYPE_INT8: lowest = INT8_MIN, highest = INT8_MAX; break;
            case XDEV_DTYPE_UINT8: lowest = 0, highest = UINT8_MAX; break;
            default: break;
          }
          int64_t v = max ? lowest : highest;
          for (int64_t i : m) v = max ? std::max(v, x.get_int(i)) : std::min(v, x.get_int(i));
          out.set_int(o, v);
        }
        break;
      }
      case OpId::kProd:
        if (floats) {
          double v = 1.0;
          for (int64_t i : m) v *= x.get_double(i);
          out.set_double(o, v);
        } else {
          uint64_t v = 1;
          for (int64_t i : m) v *= static_cast<uint64_t>(x.get_int(i));
          out.set_int(o, static_cast<int64_t>(v));
        }
        break;
      case OpId::kAny:
      case OpId::kAll: {
        const bool any = c.op == OpId::kAny;
        bool v = !any;
        for (int64_t i : m) v = any ? (v || x.get_int(i) != 0) : (v && x.get_int(i) != 0);
        out.set_int(o, v ? 1 : 0);
        break;
      }
      default: {  // LogSumExp: max + ln Σ e^(x - max), two passes
        double top = -kInf;
        bool nan = false;
        for (int64_t i : m) {
          const double e = x.get_double(i);
          nan = nan || std::isnan(e);
          top = std::max(top, e);
        }
        if (nan) {
          out.set_double(o, std::numeric_limits<double>::quiet_NaN());
        } else if (std::isinf(top)) {
          out.set_double(o, top);
        } else {
          double s = 0.0;
          for (int64_t i : m) s += std::exp(x.get_double(i) - top);
          out.set_double(o, top + std::log(s));
        }
      }
    }
  }
  return std::nullopt;
}

// ArgMax, ArgMin, CumSum, Softmax, LogSoftmax along `axis`: line by line
// (outer · inner lines of n elements), in row-major order; CumSum in double /
// wrapping uint64; Softmax and LogSoftmax in double after subtracting the
// line's maximum (a NaN anywhere makes the line NaN).
std::optional<std::string> along_axis(const Call& c) {
  if (auto e = need_inputs(c, 1)) return e;
  const Tensor& x = *c.inputs[0];
  Tensor& out = c.outputs[0];
  const xdev_attr_t* a = find_attr(c.attrs, "axis");
  if (a == nullptr || a->kind != XDEV_ATTR_INT || a->value.i < 0 || a->value.i >= x.rank()) {
    return std::string("attribute 'axis' (int < rank) missing");
  }
  const auto axis = static_cast<size_t>(a->value.i);
  int64_t outer = 1, inner = 1;
  for (size_t k = 0; k < x.shape.size(); ++k) {
    if (k < axis) outer *= x.shape[k];
    if (k > axis) inner *= x.shape[k];
  }
  const int64_t n = x.shape[axis];
  const bool exclusive = attr_bool(c.attrs, "exclusive", false);
  const bool reverse = attr_bool(c.attrs, "reverse", false);
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      auto at = [&](int64_t k) { return (o * n + k) * inner + i; };  // row-major index in x
      if (c.op == OpId::kCumSum) {
        double facc = 0.0;
        uint64_t iacc = 0;
        for (int64_t j = 0; j < n; ++j) {
          const int64_t k = reverse ? n - 1 - j : j;
          const double fv = x.get_double(at(k));
          const auto iv = static_cast<uint64_t>(x.get_int(at(k)));
          if (!exclusive) { facc += fv; iacc += iv; }
          if (is_float(out.dtype)) out.set_double(at(k), facc);
          else out.set_int(at(k), static_cast<int64_t>(iacc));
          if (exclusive) { facc += fv; iacc += iv; }
        }
        continue;
      }
      if (c.op == OpId::kSoftmax || c.op == OpId::kLogSoftmax) {
        double top = -std::numeric_limits<double>::infinity();
        bool nan = false;
        for (int64_t k = 0; k < n; ++k) {
          const double v = x.get_double(at(k));
          nan = nan || std::isnan(v);
          top = std::max(top, v);
        }
        double sum = 0.0;
        for (int64_t k = 0; k < n; ++k) sum += std::exp(x.get_double(at(k)) - top);
        for (int64_t k = 0; k < n; ++k) {
          const double d = x.get_double(at(k)) - top;
          const double v = c.op == OpId::kSoftmax ? std::exp(d) / sum : d - std::log(sum);
          out.set_double(at(k), nan ? std::numeric_limits<double>::quiet_NaN() : v);
        }
        continue;
      }
      // ArgMax / ArgMin: the first extreme; the first NaN wins.
      const bool max = c.op == OpId::kArgMax;
      int64_t best = 0;
      for (int64_t k = 1; k < n; ++k) {
        if (is_float(x.dtype)) {
          const double v = x.get_double(at(best)), e = x.get_double(at(k));
          if (std::isnan(v)) break;
          if (std::isnan(e) || (max ? e > v : e < v)) best = k;
        } else {
          const int64_t v = x.get_int(at(best)), e = x.get_int(at(k));
          if (max ? e > v : e < v) best = k;
        }
      }
      out.set_int(o * inner + i, best);
    }
  }
  return std::nullopt;
}

// Element `i` (row-major) of `from` into element `j` of `to`, bit for bit.
void move_element(const Tensor& from, int64_t i, Tensor& to, int64_t j) {
  const auto size = static_cast<int64_t>(dtype_size(from.dtype));
  std::memcpy(to.storage.data() + to.storage_index(j) * size,
              from.storage.data() + from.storage_index(i) * size, static_cast<size_t>(size));
}

// ConcatV2 and Pack: every element of input i goes to the output at its own
// index, moved `offset` along `axis` (ConcatV2) or with i inserted at `axis`
// (Pack).
std::optional<std::string> joined(const Call& c) {
  if (c.inputs.empty() || c.outputs.size() != 1) return op_text(c.op) + ": no inputs";
  Tensor& out = c.outputs[0];
  const xdev_attr_t* a = find_attr(c.attrs, "axis");
  if (a == nullptr || a->kind != XDEV_ATTR_INT || a->value.i < 0 || a->value.i >= out.rank()) {
    return std::string("attribute 'axis' (int < the output's rank) missing");
  }
  const auto axis = static_cast<size_t>(a->value.i);
  const std::vector<int64_t> out_strides = contiguous_strides(out.shape);
  int64_t offset = 0;
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    const Tensor& x = *c.inputs[i];
    if (x.dtype != out.dtype) return op_text(c.op) + ": inputs of different dtypes";
    const std::vector<int64_t> x_strides = contiguous_strides(x.shape);
    for (int64_t e = 0; e < x.num_elements(); ++e) {
      int64_t at = 0;
      for (size_t k = 0; k < x.shape.size(); ++k) {
        int64_t index = e / x_strides[k] % x.shape[k];
        if (c.op == OpId::kConcatV2 && k == axis) index += offset;
        at += index * out_strides[c.op == OpId::kPack && k >= axis ? k + 1 : k];
      }
      if (c.op == OpId::kPack) at += static_cast<int64_t>(i) * out_strides[axis];
      move_element(x, e, out, at);
    }
    if (c.op == OpId::kConcatV2) offset += x.shape[axis];
  }
  return std::nullopt;
}

// Tile and PadV2, output element by element: Tile reads the input at each
// index modulo the input's dimension; PadV2 reads it at the index minus the
// padding before, or writes `constant_values` (converted like Cast) outside.
std::optional<std::string> tile_or_pad(const Call& c) {
  if (auto e = need_inputs(c, 1)) return e;
  const Tensor& x = *c.inputs[0];
  Tensor& out = c.outputs[0];
  const bool tile = c.op == OpId::kTile;
  const xdev_attr_t* a = find_attr(c.attrs, tile ? "multiples" : "paddings");
  const size_t per_axis = tile ? 1 : 2;
  if (a == nullptr || a->kind != XDEV_ATTR_INTS ||
      a->value.ints.count != static_cast<int64_t>(per_axis * x.shape.size())) {
    return std::string(tile ? "multiples" : "paddings") + ": missing, or not one per axis";
  }
  const xdev_attr_t* value = find_attr(c.attrs, "constant_values");
  if (!tile && (value == nullptr || value->kind != XDEV_ATTR_FLOAT)) {
    return std::string("attribute 'constant_values' (float) missing");
  }
  const std::vector<int64_t> out_strides = contiguous_strides(out.shape);
  const std::vector<int64_t> x_strides = contiguous_strides(x.shape);
  for (int64_t j = 0; j < out.num_elements(); ++j) {
    int64_t at = 0;
    bool inside = true;
    for (size_t k = 0; k < out.shape.size(); ++k) {
      const int64_t index = j / out_strides[k] % out.shape[k];
      const int64_t from = tile ? index % x.shape[k] : index - a->value.ints.values[2 * k];
      inside = inside && from >= 0 && from < x.shape[k];
      at += from * x_strides[k];
    }
    if (inside) move_element(x, at, out, j);
    else out.set_double(j, value->value.f);
  }
  return std::nullopt;
}

// GatherV2: output [o, j, i] (o over params' axes before `axis`, j over the
// indices, i over the axes after) is params [o, indices[j], i]; an index out
// of range is an error.
std::optional<std::string> gather(const Call& c) {
  if (auto e = need_inputs(c, 2)) return e;
  const Tensor& params = *c.inputs[0];
  const Tensor& indices = *c.inputs[1];
  Tensor& out = c.outputs[0];
  const xdev_attr_t* a = find_attr(c.attrs, "axis");
  if (a == nullptr || a->kind != XDEV_ATTR_INT || a->value.i < 0 || a->value.i >= params.rank()) {
    return std::string("attribute 'axis' (int < the params' rank) missing");
  }
  const auto axis = static_cast<size_t>(a->value.i);
  int64_t inner = 1;
  for (size_t k = axis + 1; k < params.shape.size(); ++k) inner *= params.shape[k];
  const int64_t n = params.shape[axis], count = indices.num_elements();
  for (int64_t e = 0; e < out.num_elements(); ++e) {
    const int64_t i = e % inner, j = e / inner % count, o = e / inner / count;
    const int64_t v = indices.get_int(j);
    if (v < 0 || v >= n) return "GatherV2: index " + std::to_string(v) + " out of range";
    move_element(params, (o * n + v) * inner + i, out, e);
  }
  return std::nullopt;
}

// TensorScatterAdd: tensor, then each row j of updates (indices[:-1] rows of
// `inner` elements) added at the output row indices[j] (D values, row-major
// over tensor's first D axes); an index out of range is an error. Floats
// sum in double, integers in wrapping int64 arithmetic, then converted.
struct ScatterRows {
  explicit ScatterRows(const Call& c)
      : tensor(*c.inputs[0]), indices(*c.inputs[1]), updates(*c.inputs[2]) {
    depth = indices.shape.back();
    for (size_t k = 0; k + 1 < indices.shape.size(); ++k) rows *= indices.shape[k];
    for (size_t k = static_cast<size_t>(depth); k < tensor.shape.size(); ++k) inner *= tensor.shape[k];
  }
  // The output row of update row j, or an error naming the bad index.
  std::optional<std::string> target(int64_t j, int64_t& row) const {
    row = 0;
    for (int64_t d = 0; d < depth; ++d) {
      const int64_t v = indices.get_int(j * depth + d);
      const int64_t n = tensor.shape[static_cast<size_t>(d)];
      if (v < 0 || v >= n) {
        return "TensorScatterAdd: index " + std::to_string(v) + " at indices element " +
               std::to_string(j * depth + d) + " out of range [0, " + std::to_string(n) + ")";
      }
      row = row * n + v;
    }
    return std::nullopt;
  }
  const Tensor& tensor;
  const Tensor& indices;
  const Tensor& updates;
  int64_t depth = 0, rows = 1, inner = 1;
};

std::optional<std::string> scatter_add(const Call& c) {
  if (auto e = need_inputs(c, 3)) return e;
  const ScatterRows s(c);
  Tensor& out = c.outputs[0];
  const bool fl = is_float(out.dtype);
  std::vector<double> fsum(static_cast<size_t>(out.num_elements()));
  std::vector<uint64_t> isum(fsum.size());
  for (int64_t e = 0; e < out.num_elements(); ++e) {
    if (fl) fsum[static_cast<size_t>(e)] = s.tensor.get_double(e);
    else isum[static_cast<size_t>(e)] = static_cast<uint64_t>(s.tensor.get_int(e));
  }
  for (int64_t j = 0; j < s.rows; ++j) {
    int64_t row = 0;
    if (auto e = s.target(j, row)) return e;
    for (int64_t i = 0; i < s.inner; ++i) {
      const auto at = static_cast<size_t>(row * s.inner + i);
      if (fl) fsum[at] += s.updates.get_double(j * s.inner + i);
      else isum[at] += static_cast<uint64_t>(s.updates.get_int(j * s.inner + i));
    }
  }
  for (int64_t e = 0; e < out.num_elements(); ++e) {
    if (fl) out.set_double(e, fsum[static_cast<size_t>(e)]);
    else out.set_int(e, static_cast<int64_t>(isum[static_cast<size_t>(e)]));
  }
  return std::nullopt;
}

// --- NN ops ---------------------------------------------------------------------------

// BiasAdd: value + bias[channel], the channel axis the last (NHWC) or 1
// (NCHW); one addition in the element type (float32: in float).
std::optional<std::string> bias_add(const Call& c) {
  if (auto e = need_inputs(c, 2)) return e;
  const Tensor& value = *c.inputs[0];
  const Tensor& bias = *c.inputs[1];
  Tensor& out = c.outputs[0];
  const xdev_attr_t* f = find_attr(c.attrs, "data_format");
  if (f == nullptr || f->kind != XDEV_ATTR_STRING || f->value.s == nullptr) {
    return std::string("attribute 'data_format' (string) missing");
  }
  const bool nchw = std::strcmp(f->value.s, "NCHW") == 0;
  if (value.rank() < 2) return std::string("BiasAdd: value of rank < 2");
  const size_t channel = nchw ? 1 : value.shape.size() - 1;
  int64_t inner = 1;
  for (size_t k = channel + 1; k < value.shape.size(); ++k) inner *= value.shape[k];
  const int64_t channels = value.shape[channel];
  for (int64_t i = 0; i < out.num_elements(); ++i) {
    const double x = value.get_double(i), b = bias.get_double(i / inner % channels);
    out.set_double(i, value.dtype == XDEV_DTYPE_FLOAT32
                          ? static_cast<double>(static_cast<float>(x) + static_cast<float>(b))
                          : x + b);
  }
  return std::nullopt;
}

// --- Conv2D and pooling: direct loops over every window tap -------------------------

// A 4-d tensor's dimensions and its row-major index of (n, y, x, c), NHWC or NCHW.
struct Image4 {
  bool nchw = false;
  int64_t n = 0, h = 0, w = 0, c = 0;
  Image4(const std::vector<int64_t>& s, bool channels_first) : nchw(channels_first) {
    n = s[0];
    h = nchw ? s[2] : s[1];
    w = nchw ? s[3] : s[2];
    c = nchw ? s[1] : s[3];
  }
  int64_t at(int64_t b, int64_t y, int64_t x, int64_t ch) const {
    return nchw ? ((b * c + ch) * h + y) * w + x : ((b * h + y) * w + x) * c + ch;
  }
};

// For every output element: its value, Σ |terms| and the number of terms
// (the tolerance of float32's sums).
struct WindowSums {
  std::vector<double> value, magnitude;
  std::vector<int64_t> terms;
  explicit WindowSums(int64_t n)
      : value(static_cast<size_t>(n)), magnitude(static_cast<size_t>(n)),
        terms(static_cast<size_t>(n)) {}
  void add(int64_t at, double term) {
    const auto i = static_cast<size_t>(at);
    value[i] += term;
    magnitude[i] += std::fabs(term);
    terms[i] += 1;
  }
};

// The windows of a call: taps, steps, dilations and the padding before, the
// latter from TensorFlow's definition (docs/ops.md).
struct Windows {
  int64_t kh = 1, kw = 1, sh = 1, sw = 1, dh = 1, dw = 1, ph = 0, pw = 0;
};

bool image_pair(std::span<const xdev_attr_t> attrs, const char* name, bool nchw, int64_t& h,
                int64_t& w) {
  const xdev_attr_t* a = find_attr(attrs, name);
  if (a == nullptr || a->kind != XDEV_ATTR_INTS) return false;
  const int64_t* v = a->value.ints.values;
  switch (a->value.ints.count) {
    case 0: h = w = 1; return true;
    case 2: h = v[0]; w = v[1]; return true;
    case 4: h = v[nchw ? 2 : 1]; w = v[nchw ? 3 : 2]; return true;
    default: return false;
  }
}

int64_t same_pad_before(int64_t in, int64_t out, int64_t taps, int64_t stride, int64_t dilation) {
  const int64_t total = (out - 1) * stride + (taps - 1) * dilation + 1 - in;
  return total > 0 ? total / 2 : 0;
}

std::optional<std::string> windows_of(const Call& c, const Image4& in, const Image4& out,
                                      int64_t kh, int64_t kw, Windows& win) {
  const bool nchw = in.nchw;
  win.kh = kh;
  win.kw = kw;
  if (!image_pair(c.attrs, "strides", nchw, win.sh, win.sw)) return std::string("bad strides");
  if (find_attr(c.attrs, "dilations") != nullptr &&
      !image_pair(c.attrs, "dilations", nchw, win.dh, win.dw)) {
    return std::string("bad dilations");
  }
  const xdev_attr_t* p = find_attr(c.attrs, "padding");
  if (p == nullptr || p->kind != XDEV_ATTR_STRING || p->value.s == nullptr) {
    return std::string("attribute 'padding' (string) missing");
  }
  if (std::strcmp(p->value.s, "SAME") == 0) {
    win.ph = same_pad_before(in.h, out.h, kh, win.sh, win.dh);
    win.pw = same_pad_before(in.w, out.w, kw, win.sw, win.dw);
  }
  return std::nullopt;
}

bool nchw_of(const Call& c) {
  const xdev_attr_t* f = find_attr(c.attrs, "data_format");
  return f != nullptr && f->kind == XDEV_ATTR_STRING && f->value.s != nullptr &&
         std::strcmp(f->value.s, "NCHW") == 0;
}

// Conv2D and its two gradients: every (output, tap, input channel) term of
// the convolution, added where the op wants it.
std::optional<std::string> conv_sums(const Call& c, std::optional<WindowSums>& sums) {
  if (auto e = need_inputs(c, 2)) return e;
  const bool nchw = nchw_of(c);
  const OpId op = c.op;
  const std::vector<int64_t>& input_shape =
      op == OpId::kConv2DBackpropInput ? c.outputs[0].shape : c.inputs[0]->shape;
  const std::vector<int64_t>& filter_shape =
      op == OpId::kConv2DBackpropInput   ? c.inputs[0]->shape
      : op == OpId::kConv2DBackpropFilter ? c.outputs[0].shape
                                          : c.inputs[1]->shape;
  const std::vector<int64_t>& out_shape = op == OpId::kConv2D ? c.outputs[0].shape : c.inputs[1]->shape;
  if (input_shape.size() != 4 || filter_shape.size() != 4 || out_shape.size() != 4) {
    return op_text(op) + ": input, filter and output of rank 4";
  }
  const Image4 in(input_shape, nchw), out(out_shape, nchw);
  const int64_t cin = filter_shape[2], cout = filter_shape[3];
  Windows win;
  if (auto e = windows_of(c, in, out, filter_shape[0], filter_shape[1], win)) return e;
  sums.emplace(c.outputs[0].num_elements());
  for (int64_t b = 0; b < out.n; ++b) {
    for (int64_t oy = 0; oy < out.h; ++oy) {
      for (int64_t ox = 0; ox < out.w; ++ox) {
        for (int64_t ky = 0; ky < win.kh; ++ky) {
          const int64_t iy = oy * win.sh - win.ph + ky * win.dh;
          if (iy < 0 || iy >= in.h) continue;
          for (int64_t kx = 0; kx < win.kw; ++kx) {
            const int64_t ix = ox * win.sw - win.pw + kx * win.dw;
            if (ix < 0 || ix >= in.w) continue;
            for (int64_t ci = 0; ci < cin; ++ci) {
              for (int64_t co = 0; co < cout; ++co) {
                const int64_t ii = in.at(b, iy, ix, ci), oi = out.at(b, oy, ox, co);
                const int64_t fi = ((ky * win.kw + kx) * cin + ci) * cout + co;
                if (op == OpId::kConv2D) {
                  sums->add(oi, c.inputs[0]->get_double(ii) * c.inputs[1]->get_double(fi));
                } else if (op == OpId::kConv2DBackpropInput) {
                  sums->add(ii, c.inputs[0]->get_double(fi) * c.inputs[1]->get_double(oi));
                } else {
                  sums->add(fi, c.inputs[0]->get_double(ii) * c.inputs[1]->get_double(oi));
                }
              }
            }
          }
        }
      }
    }
  }
  return std::nullopt;
}

// The pooling ops: for every window, its elements inside the input in
// window order (row-major over the taps).
std::optional<std::string> pool_sums(const Call& c, std::optional<WindowSums>& sums) {
  const OpId op = c.op;
  if (auto e = need_inputs(c, op == OpId::kMaxPoolGrad ? 3 : 1)) return e;
  const bool nchw = nchw_of(c);
  const bool grad = op == OpId::kMaxPoolGrad || op == OpId::kAvgPoolGrad;
  const std::vector<int64_t>& input_shape =
      op == OpId::kAvgPoolGrad ? c.outputs[0].shape : c.inputs[0]->shape;
  const Tensor& pooled_values = op == OpId::kMaxPoolGrad ? *c.inputs[2] : *c.inputs[0];
  const std::vector<int64_t>& out_shape = grad ? pooled_values.shape : c.outputs[0].shape;
  if (input_shape.size() != 4 || out_shape.size() != 4) return op_text(op) + ": tensors of rank 4";
  const Image4 in(input_shape, nchw), out(out_shape, nchw);
  int64_t kh = 1, kw = 1;
  if (!image_pair(c.attrs, "ksize", nchw, kh, kw)) return std::string("bad ksize");
  Windows win;
  if (auto e = windows_of(c, in, out, kh, kw, win)) return e;
  sums.emplace(c.outputs[0].num_elements());
  std::vector<int64_t> window;
  for (int64_t b = 0; b < out.n; ++b) {
    for (int64_t oy = 0; oy < out.h; ++oy) {
      for (int64_t ox = 0; ox < out.w; ++ox) {
        for (int64_t ch = 0; ch < out.c; ++ch) {
          window.clear();
          for (int64_t ky = 0; ky < kh; ++ky) {
            for (int64_t kx = 0; kx < kw; ++kx) {
              const int64_t iy = oy * win.sh - win.ph + ky, ix = ox * win.sw - win.pw + kx;
              if (iy >= 0 && iy < in.h && ix >= 0 && ix < in.w) window.push_back(in.at(b, iy, ix, ch));
            }
          }
          const int64_t oi = out.at(b, oy, ox, ch);
          if (window.empty()) return op_text(op) + ": a window without input elements";
          const auto count = static_cast<double>(window.size());
          if (op == OpId::kMaxPool || op == OpId::kMaxPoolGrad) {
            // The first NaN, else the first maximum.
            int64_t best = window[0];
            for (int64_t i : window) {
              const double v = c.inputs[0]->get_double(i), top = c.inputs[0]->get_double(best);
              if (!std::isnan(top) && (std::isnan(v) || v > top)) best = i;
            }
            if (op == OpId::kMaxPool) {
              sums->value[static_cast<size_t>(oi)] = c.inputs[0]->get_double(best);
            } else {
              sums->add(best, pooled_values.get_double(oi));
            }
          } else if (op == OpId::kAvgPool) {
            for (int64_t i : window) sums->add(oi, c.inputs[0]->get_double(i) / count);
          } else {
            for (int64_t i : window) sums->add(i, pooled_values.get_double(oi) / count);
          }
        }
      }
    }
  }
  return std::nullopt;
}

std::optional<std::string> window_sums(const Call& c, std::optional<WindowSums>& sums) {
  const bool conv = c.op == OpId::kConv2D || c.op == OpId::kConv2DBackpropInput ||
                    c.op == OpId::kConv2DBackpropFilter;
  return conv ? conv_sums(c, sums) : pool_sums(c, sums);
}

// Conv2D, the pooling ops and their gradients: sums in double, rounded once.
std::optional<std::string> windowed(const Call& c) {
  std::optional<WindowSums> sums;
  if (auto e = window_sums(c, sums)) return e;
  for (int64_t i = 0; i < c.outputs[0].num_elements(); ++i) {
    c.outputs[0].set_double(i, sums->value[static_cast<size_t>(i)]);
  }
  return std::nullopt;
}

// Element (b, k) of a [rows, cols] input broadcast to the outputs' [B, C]:
// a dimension of 1 repeats.
double broadcast_at(const Tensor& t, int64_t b, int64_t k) {
  return t.get_double((t.shape[0] == 1 ? 0 : b) * t.shape[1] + (t.shape[1] == 1 ? 0 : k));
}

// SoftmaxCrossEntropyWithLogits, in double: per row the maximum m (NaN if
// any is NaN), s = Σ e^(f − m); loss = Σ labels · (ln s − (f − m)),
// backprop = e^(f − m) / s − labels.
std::optional<std::string> softmax_cross_entropy(const Call& c) {
  if (c.inputs.size() != 2 || c.outputs.size() != 2) {
    return op_text(c.op) + " takes 2 inputs and has 2 outputs";
  }
  const Tensor& features = *c.inputs[0];
  const Tensor& labels = *c.inputs[1];
  Tensor& loss = c.outputs[0];
  Tensor& backprop = c.outputs[1];
  if (features.rank() != 2 || labels.rank() != 2 || backprop.rank() != 2) {
    return op_text(c.op) + ": inputs and backprop of rank 2";
  }
  const int64_t rows = backprop.shape[0], cols = backprop.shape[1];
  for (int64_t b = 0; b < rows; ++b) {
    double top = -std::numeric_limits<double>::infinity();
    bool nan = false;
    for (int64_t k = 0; k < cols; ++k) {
      const double v = broadcast_at(features, b, k);
      nan = nan || std::isnan(v);
      top = std::max(top, v);
    }
    if (nan) top = std::numeric_limits<double>::quiet_NaN();
    double sum = 0.0;
    for (int64_t k = 0; k < cols; ++k) sum += std::exp(broadcast_at(features, b, k) - top);
    double row = 0.0;
    for (int64_t k = 0; k < cols; ++k) {
      const double shifted = broadcast_at(features, b, k) - top;
      const double label = broadcast_at(labels, b, k);
      row += label * (std::log(sum) - shifted);
      backprop.set_double(b * cols + k, std::exp(shifted) / sum - label);
    }
    loss.set_double(b, row);
  }
  return std::nullopt;
}

// LayerNorm's statistics of each group (the row-major elements from
// begin_norm_axis on): mean and 1 / √(variance + epsilon), two passes in
// double.
struct LayerNormStats {
  int64_t n = 1;
  std::vector<double> mean, rstd;
};

std::optional<std::string> layer_norm_stats(const Call& c, LayerNormStats& st) {
  const Tensor& x = *c.inputs[0];
  const xdev_attr_t* a = find_attr(c.attrs, "begin_norm_axis");
  const xdev_attr_t* e = find_attr(c.attrs, "epsilon");
  if (a == nullptr || a->kind != XDEV_ATTR_INT || a->value.i < 0 || a->value.i >= x.rank() ||
      e == nullptr || e->kind != XDEV_ATTR_FLOAT) {
    return std::string("attributes 'begin_norm_axis' (int < rank) and 'epsilon' (float) missing");
  }
  for (size_t k = static_cast<size_t>(a->value.i); k < x.shape.size(); ++k) st.n *= x.shape[k];
  const int64_t groups = st.n == 0 ? 0 : x.num_elements() / st.n;
  for (int64_t g = 0; g < groups; ++g) {
    double sum = 0.0;
    for (int64_t i = 0; i < st.n; ++i) sum += x.get_double(g * st.n + i);
    const double mean = sum / static_cast<double>(st.n);
    double squares = 0.0;
    for (int64_t i = 0; i < st.n; ++i) {
      const double d = x.get_double(g * st.n + i) - mean;
      squares += d * d;
    }
    st.mean.push_back(mean);
    st.rstd.push_back(1.0 / std::sqrt(squares / static_cast<double>(st.n) + e->value.f));
  }
  return std::nullopt;
}

std::optional<std::string> layer_norm(const Call& c) {
  if (auto e = need_inputs(c, 3)) return e;
  LayerNormStats st;
  if (auto e = layer_norm_stats(c, st)) return e;
  const Tensor& x = *c.inputs[0];
  for (int64_t i = 0; i < c.outputs[0].num_elements(); ++i) {
    const auto g = static_cast<size_t>(i / st.n);
    const int64_t j = i % st.n;
    c.outputs[0].set_double(i, (x.get_double(i) - st.mean[g]) * st.rstd[g] *
                                       c.inputs[1]->get_double(j) +
                                   c.inputs[2]->get_double(j));
  }
  return std::nullopt;
}

// Slice and StridedSlice: along each input axis k, size[k] elements from
// begin[k], step[k] apart; output element j (row-major over those sizes) is
// that element of x. StridedSlice's attributes in dense form come from
// <xdev/strided_slice.hpp> (TF's rules, one definition); Slice's -1 size is
// the rest of the axis.
std::optional<std::string> slicing(const Call& c) {
  if (auto e = need_inputs(c, 1)) return e;
  const Tensor& x = *c.inputs[0];
  Tensor& out = c.outputs[0];
  const size_t rank = x.shape.size();
  auto ints = [&](const char* name) -> std::span<const int64_t> {
    const xdev_attr_t* a = find_attr(c.attrs, name);
    if (a == nullptr || a->kind != XDEV_ATTR_INTS) return {};
    return {a->value.ints.values, static_cast<size_t>(a->value.ints.count)};
  };
  std::vector<int64_t> begin(rank), step(rank, 1), size(rank);
  if (c.op == OpId::kSlice) {
    const std::span<const int64_t> b = ints("begin"), n = ints("size");
    if (b.size() != rank || n.size() != rank) return std::string("begin, size: one per axis");
    for (size_t k = 0; k < rank; ++k) {
      begin[k] = b[k];
      size[k] = n[k] < 0 ? x.shape[k] - b[k] : n[k];
    }
  } else {
    const std::span<const int64_t> b = ints("begin"), e = ints("end"), s = ints("strides");
    int64_t masks[5] = {};
    const char* names[5] = {"begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask",
                            "shrink_axis_mask"};
    for (int m = 0; m < 5; ++m) {
      const xdev_attr_t* a = find_attr(c.attrs, names[m]);
      masks[m] = a != nullptr && a->kind == XDEV_ATTR_INT ? a->value.i : 0;
    }
    if (e.size() != b.size() || s.size() != b.size()) return std::string("begin, end, strides");
    xdev::strided_slice_spec::Dense dense;
    xdev::strided_slice_spec::make_dense(static_cast<int32_t>(rank), x.shape.data(), b.data(),
                                    e.data(), s.data(), static_cast<int64_t>(b.size()), masks[0],
                                    masks[1], masks[2], masks[3], masks[4], dense);
    if (dense.error[0] != '\0') return std::string("StridedSlice: ") + dense.error;
    for (size_t k = 0; k < rank; ++k) {
      begin[k] = dense.axes[k].begin;
      step[k] = dense.axes[k].stride;
      size[k] = dense.axes[k].size;
    }
  }
  const std::vector<int64_t> x_strides = contiguous_strides(x.shape);
  const std::vector<int64_t> window = contiguous_strides(size);
  for (int64_t j = 0; j < out.num_elements(); ++j) {
    int64_t at = 0;
    for (size_t k = 0; k < rank; ++k) {
      const int64_t index = begin[k] + j / window[k] % size[k] * step[k];
      if (index < 0 || index >= x.shape[k]) return op_text(c.op) + ": index out of the input";
      at += index * x_strides[k];
    }
    move_element(x, at, out, j);
  }
  return std::nullopt;
}

// The int or float attribute `name` into `value`; false when it is missing
// or of another kind.
bool number_attr(std::span<const xdev_attr_t> attrs, const char* name, xdev_attr_kind_t kind,
                 double& value) {
  const xdev_attr_t* a = find_attr(attrs, name);
  if (a == nullptr || a->kind != kind) return false;
  value = kind == XDEV_ATTR_INT ? static_cast<double>(a->value.i) : a->value.f;
  return true;
}

// Range: element i is start + i·delta, in double, converted as Cast converts
// (the core computed the length).
std::optional<std::string> range(const Call& c) {
  if (auto e = need_inputs(c, 0)) return e;
  double start = 0, delta = 0;
  if (!number_attr(c.attrs, "start", XDEV_ATTR_FLOAT, start) ||
      !number_attr(c.attrs, "delta", XDEV_ATTR_FLOAT, delta)) {
    return std::string("attributes 'start' and 'delta' (float) missing");
  }
  Tensor& out = c.outputs[0];
  for (int64_t i = 0; i < out.num_elements(); ++i) {
    out.set_double(i, start + static_cast<double>(i) * delta);
  }
  return std::nullopt;
}

// OneHot: output [o, d, i] (d at `axis`) is on_value when indices[o, i] == d,
// else off_value; an index outside [0, depth) matches no d.
std::optional<std::string> one_hot(const Call& c) {
  if (auto e = need_inputs(c, 1)) return e;
  // depth and axis read as the int64 they are: through a double, a depth
  // of 2^63 - 1 (valid when there are no indices) became 2^63, whose
  // conversion back is undefined (the op fuzzer's UBSan).
  const xdev_attr_t* depth = find_attr(c.attrs, "depth");
  const xdev_attr_t* axis = find_attr(c.attrs, "axis");
  double on = 0, off = 0;
  if (depth == nullptr || depth->kind != XDEV_ATTR_INT || axis == nullptr ||
      axis->kind != XDEV_ATTR_INT || !number_attr(c.attrs, "on_value", XDEV_ATTR_FLOAT, on) ||
      !number_attr(c.attrs, "off_value", XDEV_ATTR_FLOAT, off)) {
    return std::string("attributes 'depth', 'axis' (int), 'on_value', 'off_value' (float) missing");
  }
  const Tensor& indices = *c.inputs[0];
  Tensor& out = c.outputs[0];
  int64_t inner = 1;
  for (size_t k = static_cast<size_t>(axis->value.i); k < indices.shape.size(); ++k) {
    inner *= indices.shape[k];
  }
  const int64_t n = depth->value.i;
  for (int64_t j = 0; j < out.num_elements(); ++j) {
    const int64_t i = j % inner, d = j / inner % n, o = j / inner / n;
    out.set_double(j, indices.get_int(o * inner + i) == d ? on : off);
  }
  return std::nullopt;
}

// BroadcastTo: output element j reads x at its index, each of x's axes
// aligned with the output's last ones and read at 0 where x's size is 1.
std::optional<std::string> broadcast(const Call& c) {
  if (auto e = need_inputs(c, 1)) return e;
  const Tensor& x = *c.inputs[0];
  Tensor& out = c.outputs[0];
  const size_t extra = out.shape.size() - x.shape.size();
  const std::vector<int64_t> out_strides = contiguous_strides(out.shape);
  const std::vector<int64_t> x_strides = contiguous_strides(x.shape);
  for (int64_t j = 0; j < out.num_elements(); ++j) {
    int64_t at = 0;
    for (size_t k = 0; k < x.shape.size(); ++k) {
      const int64_t index = j / out_strides[k + extra] % out.shape[k + extra];
      at += (x.shape[k] == 1 ? 0 : index) * x_strides[k];
    }
    move_element(x, at, out, j);
  }
  return std::nullopt;
}

// Sum, Mean.
std::optional<std::string> reduce(const Call& c) {
  if (auto e = need_inputs(c, 1)) return e;
  const Tensor& x = *c.inputs[0];
  Tensor& out = c.outputs[0];
  const int64_t n = out.num_elements();
  std::vector<bool> reduced;
  if (auto e = reduced_axes(x, c.attrs, reduced)) return e;
  int64_t count = 1;
  for (size_t k = 0; k < reduced.size(); ++k) {
    if (reduced[k]) count *= x.shape[k];
  }
  std::vector<double> facc(static_cast<size_t>(n), 0.0);
  std::vector<uint64_t> iacc(static_cast<size_t>(n), 0);
  std::vector<int64_t> map = reduce_map(x, reduced);
  for (int64_t i = 0; i < x.num_elements(); ++i) {
    auto o = static_cast<size_t>(map[static_cast<size_t>(i)]);
    if (is_float(x.dtype)) facc[o] += x.get_double(i);
    else iacc[o] += static_cast<uint64_t>(x.get_int(i));
  }
  const bool mean = c.op == OpId::kMean;
  for (int64_t o = 0; o < n; ++o) {
    auto u = static_cast<size_t>(o);
    if (is_float(out.dtype)) {
      double v = facc[u];
      if (mean) v = count == 0 ? std::numeric_limits<double>::quiet_NaN()
                               : v / static_cast<double>(count);
      out.set_double(o, v);
    } else {
      // Wrap the sum to the element type first, then divide toward zero.
      Tensor tmp = make_contiguous(out.dtype, {1});
      tmp.set_int(0, static_cast<int64_t>(iacc[u]));
      int64_t v = tmp.get_int(0);
      if (mean) v = count == 0 ? 0 : v / count;
      out.set_int(o, v);
    }
  }
  return std::nullopt;
}

std::optional<std::string> fill(const Call& c) {
  if (auto e = need_inputs(c, 0)) return e;
  const xdev_attr_t* value = find_attr(c.attrs, "value");
  if (value == nullptr || value->kind != XDEV_ATTR_FLOAT) {
    return std::string("attribute 'value' (float) missing");
  }
  Tensor& out = c.outputs[0];
  for (int64_t i = 0; i < out.num_elements(); ++i) out.set_double(i, value->value.f);
  return std::nullopt;
}

std::optional<std::string> random_uniform(const Call& c) {
  if (auto e = need_inputs(c, 0)) return e;
  const xdev_attr_t* seed = find_attr(c.attrs, "seed");
  const xdev_attr_t* lo = find_attr(c.attrs, "minval");
  const xdev_attr_t* hi = find_attr(c.attrs, "maxval");
  if (seed == nullptr || seed->kind != XDEV_ATTR_INT || lo == nullptr ||
      lo->kind != XDEV_ATTR_FLOAT || hi == nullptr || hi->kind != XDEV_ATTR_FLOAT) {
    return std::string("attributes 'seed' (int), 'minval', 'maxval' (float) missing");
  }
  Tensor& out = c.outputs[0];
  for (int64_t i = 0; i < out.num_elements(); ++i) {
    auto s = static_cast<uint64_t>(seed->value.i);
    auto u = static_cast<uint64_t>(i);
    if (out.dtype == XDEV_DTYPE_FLOAT32) {
      out.set_double(i, random_uniform_f32(s, u, lo->value.f, hi->value.f));
    } else if (out.dtype == XDEV_DTYPE_FLOAT64) {
      out.set_double(i, random_uniform_f64(s, u, lo->value.f, hi->value.f));
    } else {
      return "RandomUniform is defined for float32 and float64 only, not " +
             dtype_name(out.dtype);
    }
  }
  return std::nullopt;
}

// --- tolerances -------------------------------------------------------------------

// float16 and bfloat16 results are computed in float32 and rounded once
// (docs/ops.md "Dtypes"); the reference rounds the exact value once. Two
// roundings to nearest of values within the float32 tolerance of each other
// differ by at most that tolerance plus one unit in the last place of the
// 16-bit format: rel eps (2^-10, 2^-7) and, below the smallest normal, the
// smallest subnormal.
void add_half_rounding(xdev_dtype_t dtype, std::vector<Tolerance>& tol) {
  if (!is_half(dtype)) return;
  for (Tolerance& t : tol) {
    t.rel += epsilon(dtype);
    t.abs += smallest_subnormal(dtype);
  }
}

// Floats: the smallest normal number of the dtype computed in (flush-to-zero
// of subnormals); float16, bfloat16: one rounding more.
std::vector<Tolerance> base_tolerance(const Tensor& out) {
  std::vector<Tolerance> tol(static_cast<size_t>(out.num_elements()));
  if (!is_float(out.dtype)) return tol;  // integers and bool: exact
  for (Tolerance& t : tol) t.abs = smallest_normal(compute_dtype(out.dtype));
  add_half_rounding(out.dtype, tol);
  return tol;
}

// The tolerance of an op's output: base_tolerance, and for float outputs
// of a call with kInputs inputs (0: any count) what `widen` adds, given the
// output and the epsilon of the dtype it is computed in (float32 for
// float16 and bfloat16, whose one rounding is added after). Integer and bool
// outputs are exact.
template <auto widen, size_t kInputs = 0>
std::vector<Tolerance> float_tolerance(const Call& c, size_t output) {
  const Tensor& out = c.outputs[output];
  std::vector<Tolerance> tol(static_cast<size_t>(out.num_elements()));
  if (!is_float(out.dtype)) return tol;
  const xdev_dtype_t compute = compute_dtype(out.dtype);
  for (Tolerance& t : tol) t.abs = smallest_normal(compute);
  if (kInputs == 0 || c.inputs.size() == kInputs) widen(c, out, epsilon(compute), tol);
  add_half_rounding(out.dtype, tol);
  return tol;
}

// Floats: kUlps units of epsilon relative to the result (Div: 2, approximate
// division on accelerators; Pow: 4, the exact power rounded once and devices
// 4 ulp off, as powf).
template <int kUlps>
void widen_ulp(const Call&, const Tensor&, double eps, std::vector<Tolerance>& tol) {
  for (Tolerance& t : tol) t.rel = kUlps * eps;
}

void widen_random_uniform(const Call& c, const Tensor&, double eps, std::vector<Tolerance>& tol) {
  const xdev_attr_t* lo = find_attr(c.attrs, "minval");
  const xdev_attr_t* hi = find_attr(c.attrs, "maxval");
  double scale = std::max(lo ? std::fabs(lo->value.f) : 1.0, hi ? std::fabs(hi->value.f) : 1.0);
  for (Tolerance& t : tol) t.abs += eps * scale;  // one rounding (FMA or not)
}

// Elementwise float math computed in the element type (float math in float
// for float32): docs/ops.md allows 4 ulp of the result, or 4 eps · |x| where
// the function is flat and a rounding of x moves the result more (Sin, Cos
// near their zeros, Gelu where 1 + erf cancels).
void widen_math(const Call& c, const Tensor&, double eps, std::vector<Tolerance>& tol) {
  for (size_t i = 0; i < tol.size(); ++i) {
    tol[i].rel = 4 * eps;
    tol[i].abs += 4 * eps * std::fabs(c.inputs[0]->get_double(static_cast<int64_t>(i)));
  }
}

// |error| <= K * eps * sum_k |a_ik * b_kj| (any summation order).
void widen_matmul(const Call& c, const Tensor&, double eps, std::vector<Tolerance>& tol) {
  const MatMulShape s(c);
  for (int64_t batch = 0; batch < s.batches; ++batch) {
    for (int64_t i = 0; i < s.m; ++i) {
      for (int64_t j = 0; j < s.cols; ++j) {
        double sum = 0.0;
        for (int64_t p = 0; p < s.k; ++p) {
          sum += std::fabs(s.a.get_double(s.a_at(batch, i, p)) * s.b.get_double(s.b_at(batch, p, j)));
        }
        tol[static_cast<size_t>((batch * s.m + i) * s.cols + j)].abs +=
            static_cast<double>(s.k + 2) * eps * sum;
      }
    }
  }
}

// TensorScatterAdd: each element sums the tensor's and its updates in any
// order (devices add them atomically): (terms + 1) eps times the sum of
// their magnitudes.
void widen_scatter(const Call& c, const Tensor&, double eps, std::vector<Tolerance>& tol) {
  const ScatterRows s(c);
  std::vector<double> magnitude(tol.size()), terms(tol.size(), 1.0);
  for (size_t e = 0; e < tol.size(); ++e) magnitude[e] = std::fabs(s.tensor.get_double(static_cast<int64_t>(e)));
  for (int64_t j = 0; j < s.rows; ++j) {
    int64_t row = 0;
    if (s.target(j, row)) continue;
    for (int64_t i = 0; i < s.inner; ++i) {
      const auto at = static_cast<size_t>(row * s.inner + i);
      magnitude[at] += std::fabs(s.updates.get_double(j * s.inner + i));
      terms[at] += 1.0;
    }
  }
  for (size_t e = 0; e < tol.size(); ++e) tol[e].abs += (terms[e] + 1.0) * eps * magnitude[e];
}

void widen_add_n(const Call& c, const Tensor&, double eps, std::vector<Tolerance>& tol) {
  for (size_t i = 0; i < tol.size(); ++i) {
    double s = 0.0;
    for (const Tensor* x : c.inputs) s += std::fabs(x->get_double(static_cast<int64_t>(i)));
    tol[i].abs += static_cast<double>(c.inputs.size() + 1) * eps * s;
  }
}

// docs/ops.md: relative 1e-5 * log2(n) for float32 (float64: 1e-12), taken
// relative to sum |x| so cancellation does not make it unreachable.
// Prod and LogSumExp: computed in double on both sides (in another order),
// then rounded once: a few ulp of the result, and for LogSumExp a few ulp of
// its terms (max + ln Σ may cancel).
void widen_reduce_other(const Call& c, const Tensor& out, double eps, std::vector<Tolerance>& tol) {
  // Rounding in double grows with the count of elements (summation order).
  double count = 1.0;
  std::vector<bool> reduced;
  if (c.inputs.size() == 1 && !reduced_axes(*c.inputs[0], c.attrs, reduced)) {
    for (size_t k = 0; k < reduced.size(); ++k) {
      if (reduced[k]) count *= static_cast<double>(c.inputs[0]->shape[k]);
    }
  }
  const double drift = 2 * count * DBL_EPSILON;
  for (size_t o = 0; o < tol.size(); ++o) {
    const double w = std::fabs(out.get_double(static_cast<int64_t>(o)));
    tol[o].rel = 4 * eps + drift;
    if (c.op == OpId::kLogSumExp) tol[o].abs += (4 * eps + drift) * (1.0 + w);
  }
}

// Softmax, LogSoftmax: e^(x - max) and the division are a few ulp off, and a
// pairwise (or wider) sum of the line's n terms log2(n) + 1 ulp; each output
// may be off by (8 + log2(n + 1)) ulp relative (Softmax) or by that much of
// (1 + |want|) (LogSoftmax, whose values near 0 come from a difference).
void widen_softmax(const Call& c, const Tensor& out, double eps, std::vector<Tolerance>& tol) {
  const xdev_attr_t* a = find_attr(c.attrs, "axis");
  if (a == nullptr || a->value.i < 0 || a->value.i >= c.inputs[0]->rank()) return;
  const auto n = static_cast<double>(c.inputs[0]->shape[static_cast<size_t>(a->value.i)]);
  const double ulps = (8.0 + std::ceil(std::log2(n + 1.0))) * eps;
  for (size_t i = 0; i < tol.size(); ++i) {
    tol[i].rel = ulps;
    if (c.op == OpId::kLogSoftmax) {
      tol[i].abs += ulps * (1.0 + std::fabs(out.get_double(static_cast<int64_t>(i))));
    }
  }
}

// SoftmaxCrossEntropyWithLogits: computed in double on both sides, rounded
// once; a device working in the element type may be a few ulp off in each
// term: loss within (8 + log2(C + 1)) eps of Σ |label| · (|ln s| + |f − m|),
// backprop within that much of softmax + |label|.
void widen_xent(const Call& c, const Tensor& out, double eps, std::vector<Tolerance>& tol) {
  const Tensor& features = *c.inputs[0];
  const Tensor& labels = *c.inputs[1];
  const Tensor& backprop = c.outputs[1];
  const int64_t rows = backprop.shape[0], cols = backprop.shape[1];
  const double ulps = (8.0 + std::ceil(std::log2(static_cast<double>(cols) + 1.0))) * eps;
  const bool loss = out.rank() == 1;
  for (int64_t b = 0; b < rows; ++b) {
    double top = -std::numeric_limits<double>::infinity();
    for (int64_t k = 0; k < cols; ++k) top = std::max(top, broadcast_at(features, b, k));
    double sum = 0.0;
    for (int64_t k = 0; k < cols; ++k) sum += std::exp(broadcast_at(features, b, k) - top);
    double scale = 0.0;
    for (int64_t k = 0; k < cols; ++k) {
      const double shifted = broadcast_at(features, b, k) - top;
      const double label = std::fabs(broadcast_at(labels, b, k));
      if (loss) {
        scale += label * (std::fabs(std::log(sum)) + std::fabs(shifted) + 1.0);
      } else {
        tol[static_cast<size_t>(b * cols + k)].abs += ulps * (std::exp(shifted) / sum + label);
      }
    }
    if (loss) tol[static_cast<size_t>(b)].abs += ulps * scale;
  }
}

// LayerNorm: computed in double on both sides; a device may be a few ulp off
// in x − mean (relative to |x| + |mean|, where they cancel), in the scale
// and in the sum with beta.
void widen_layer_norm(const Call& c, const Tensor&, double eps, std::vector<Tolerance>& tol) {
  LayerNormStats st;
  if (layer_norm_stats(c, st)) return;
  const Tensor& x = *c.inputs[0];
  const double ulps = (8.0 + std::ceil(std::log2(static_cast<double>(st.n) + 1.0))) * eps;
  for (size_t i = 0; i < tol.size(); ++i) {
    const auto at = static_cast<int64_t>(i);
    const size_t g = i / static_cast<size_t>(st.n);
    const int64_t j = at % st.n;
    const double spread = (std::fabs(x.get_double(at)) + std::fabs(st.mean[g])) * st.rstd[g];
    tol[i].abs += ulps * (spread * std::fabs(c.inputs[1]->get_double(j)) +
                          std::fabs(c.inputs[2]->get_double(j)));
  }
}

void widen_reduce(const Call& c, const Tensor& out, double, std::vector<Tolerance>& tol) {
  const Tensor& x = *c.inputs[0];
  std::vector<bool> reduced;
  if (reduced_axes(x, c.attrs, reduced)) return;
  int64_t count = 1;
  for (size_t k = 0; k < reduced.size(); ++k) {
    if (reduced[k]) count *= x.shape[k];
  }
  std::vector<double> abs_sum(tol.size(), 0.0);
  std::vector<int64_t> map = reduce_map(x, reduced);
  for (int64_t i = 0; i < x.num_elements(); ++i) {
    abs_sum[static_cast<size_t>(map[static_cast<size_t>(i)])] += std::fabs(x.get_double(i));
  }
  const double base = compute_dtype(out.dtype) == XDEV_DTYPE_FLOAT32 ? 1e-5 : 1e-12;
  const double factor =
      base * std::max(1.0, std::log2(static_cast<double>(std::max<int64_t>(count, 1))));
  for (size_t o = 0; o < tol.size(); ++o) {
    double s = abs_sum[o];
    if (c.op == OpId::kMean && count > 0) s /= static_cast<double>(count);
    tol[o].abs += factor * s;
    tol[o].rel = factor;
  }
}

// Conv2D, AvgPool and the gradients: sums of n terms in another order (GEMM
// blocks, float32 accumulators): (n + 2) eps · Σ |terms|. MaxPool is exact.
void widen_windowed(const Call& c, const Tensor&, double eps, std::vector<Tolerance>& tol) {
  std::optional<WindowSums> sums;
  if (window_sums(c, sums)) return;
  for (size_t i = 0; i < tol.size(); ++i) {
    tol[i].abs += static_cast<double>(sums->terms[i] + 2) * eps * sums->magnitude[i];
  }
}

constexpr ToleranceFn random_uniform_tolerance = &float_tolerance<widen_random_uniform>;
constexpr ToleranceFn math_tolerance = &float_tolerance<widen_math, 1>;
constexpr ToleranceFn matmul_tolerance = &float_tolerance<widen_matmul, 2>;
constexpr ToleranceFn add_n_tolerance = &float_tolerance<widen_add_n>;
constexpr ToleranceFn scatter_tolerance = &float_tolerance<widen_scatter, 3>;
constexpr ToleranceFn reduce_other_tolerance = &float_tolerance<widen_reduce_other>;
constexpr ToleranceFn reduce_tolerance = &float_tolerance<widen_reduce, 1>;
constexpr ToleranceFn softmax_tolerance = &float_tolerance<widen_softmax, 1>;
constexpr ToleranceFn xent_tolerance = &float_tolerance<widen_xent, 2>;
constexpr ToleranceFn layer_norm_tolerance = &float_tolerance<widen_layer_norm, 3>;
constexpr ToleranceFn windowed_tolerance = &float_tolerance<widen_windowed>;

// --- test data hints ----------------------------------------------------------------

std::vector<AttrSet> fill_values(xdev_dtype_t dtype) {
  std::vector<double> values;
  if (dtype == XDEV_DTYPE_BOOL) values = {1.0, 0.0};
  else if (is_float(dtype)) values = {0.3, -2.5};
  else values = {3.0, -7.0};
  std::vector<AttrSet> sets;
  for (double v : values) sets.push_back({{.name = "value", .f = v}});
  return sets;
}

std::vector<AttrSet> random_uniform_values(xdev_dtype_t) {
  struct Spec {
    int64_t seed;
    double lo, hi;
  };
  const Spec specs[] = {{0, 0.0, 1.0},
                        {42, -3.0, 5.0},
                        {7, 0.0, 1.0},
                        {0x7fffffffffffffffll, -1.0, 1.0},
                        {-1, 10.0, 10.5}};
  std::vector<AttrSet> sets;
  for (const Spec& s : specs) {
    sets.push_back({{.name = "seed", .i = s.seed},
                    {.name = "minval", .f = s.lo},
                    {.name = "maxval", .f = s.hi}});
  }
  return sets;
}

std::vector<AttrSet> leaky_relu_values(xdev_dtype_t) {
  return {{{.name = "alpha", .f = 0.2}}, {{.name = "alpha", .f = 0.01}},
          {{.name = "alpha", .f = -1.5}}};
}

std::vector<AttrSet> gelu_values(xdev_dtype_t) {
  return {{{.name = "approximate", .i = 0}}, {{.name = "approximate", .i = 1}}};
}

// PadV2's value: the default, a fraction (bool: true; integers: toward
// zero), a negative one, NaN (integers: 0).
std::vector<AttrSet> pad_values(xdev_dtype_t) {
  return {{{.name = "constant_values", .f = 0.0}},
          {{.name = "constant_values", .f = 2.5}},
          {{.name = "constant_values", .f = -7.0}},
          {{.name = "constant_values", .f = std::numeric_limits<double>::quiet_NaN()}}};
}

// LayerNorm's epsilon: its default, 0 (a constant group then gives NaN, 0/0
// in every implementation), a large one.
std::vector<AttrSet> layer_norm_values(xdev_dtype_t) {
  return {{{.name = "epsilon", .f = 1e-3}}, {{.name = "epsilon", .f = 0.0}},
          {{.name = "epsilon", .f = 0.5}}};
}

// OneHot's values: the defaults, others (integers: toward zero; bool: != 0).
std::vector<AttrSet> one_hot_values(xdev_dtype_t) {
  return {{{.name = "on_value", .f = 1.0}, {.name = "off_value", .f = 0.0}},
          {{.name = "on_value", .f = 5.0}, {.name = "off_value", .f = -2.0}},
          {{.name = "on_value", .f = -1.5}, {.name = "off_value", .f = 0.25}}};
}

// --- the entries, one per op of the table -------------------------------------------

constexpr size_t index(OpId op) { return static_cast<size_t>(op); }

constexpr std::array<Reference, xdev::detail::kOpCount> kReferences = [] {
  std::array<Reference, xdev::detail::kOpCount> r{};
  r[index(OpId::kMatMul)] = {.run = matmul, .tolerance = matmul_tolerance};
  r[index(OpId::kAdd)] = {.run = binary};
  r[index(OpId::kSub)] = {.run = binary};
  r[index(OpId::kMul)] = {.run = binary};
  r[index(OpId::kDiv)] = {.run = binary,
                          .tolerance = &float_tolerance<widen_ulp<2>>,
                          .values = {Values::kGeneral, Values::kDivisor}};
  r[index(OpId::kNeg)] = {.run = unary};
  r[index(OpId::kRelu)] = {.run = unary};
  r[index(OpId::kAddN)] = {.run = add_n, .tolerance = add_n_tolerance};
  r[index(OpId::kCast)] = {.run = cast, .values = {Values::kCast, Values::kCast}};
  r[index(OpId::kSum)] = {.run = reduce, .tolerance = reduce_tolerance};
  r[index(OpId::kMean)] = {.run = reduce, .tolerance = reduce_tolerance};
  r[index(OpId::kCopy)] = {.run = unary};
  r[index(OpId::kFill)] = {.run = fill, .attr_sets = fill_values};
  r[index(OpId::kRandomUniform)] = {.run = random_uniform,
                                    .tolerance = random_uniform_tolerance,
                                    .attr_sets = random_uniform_values};
  r[index(OpId::kPow)] = {.run = binary, .tolerance = &float_tolerance<widen_ulp<4>>};
  r[index(OpId::kMaximum)] = {.run = binary};
  r[index(OpId::kMinimum)] = {.run = binary};
  r[index(OpId::kFloorDiv)] = {.run = binary, .values = {Values::kGeneral, Values::kDivisor}};
  r[index(OpId::kFloorMod)] = {.run = binary, .values = {Values::kGeneral, Values::kDivisor}};
  r[index(OpId::kSquaredDifference)] = {.run = binary};
  r[index(OpId::kAbs)] = {.run = math};
  r[index(OpId::kSign)] = {.run = math};
  r[index(OpId::kSquare)] = {.run = math};
  r[index(OpId::kExp)] = {.run = math, .tolerance = math_tolerance};
  r[index(OpId::kExpm1)] = {.run = math, .tolerance = math_tolerance};
  r[index(OpId::kLog)] = {.run = math, .tolerance = math_tolerance,
                          .values = {Values::kDivisor, Values::kDivisor}};
  r[index(OpId::kLog1p)] = {.run = math, .tolerance = math_tolerance};
  r[index(OpId::kSqrt)] = {.run = math, .tolerance = math_tolerance,
                           .values = {Values::kDivisor, Values::kDivisor}};
  r[index(OpId::kRsqrt)] = {.run = math, .tolerance = math_tolerance,
                            .values = {Values::kDivisor, Values::kDivisor}};
  r[index(OpId::kReciprocal)] = {.run = math, .tolerance = math_tolerance,
                                 .values = {Values::kDivisor, Values::kDivisor}};
  r[index(OpId::kSin)] = {.run = math, .tolerance = math_tolerance};
  r[index(OpId::kCos)] = {.run = math, .tolerance = math_tolerance};
  r[index(OpId::kTanh)] = {.run = math, .tolerance = math_tolerance};
  r[index(OpId::kSigmoid)] = {.run = math, .tolerance = math_tolerance};
  r[index(OpId::kErf)] = {.run = math, .tolerance = math_tolerance};
  r[index(OpId::kSoftplus)] = {.run = math, .tolerance = math_tolerance};
  r[index(OpId::kFloor)] = {.run = math};
  r[index(OpId::kCeil)] = {.run = math};
  r[index(OpId::kRound)] = {.run = math, .values = {Values::kCast, Values::kCast}};
  r[index(OpId::kLeakyRelu)] = {.run = math, .tolerance = math_tolerance,
                                .attr_sets = leaky_relu_values};
  r[index(OpId::kGelu)] = {.run = math, .tolerance = math_tolerance, .attr_sets = gelu_values};
  for (OpId op : {OpId::kEqual, OpId::kNotEqual, OpId::kLess, OpId::kLessEqual, OpId::kGreater,
                  OpId::kGreaterEqual}) {
    r[index(op)] = {.run = comparison, .values = {Values::kSpecial, Values::kSpecial}};
  }
  r[index(OpId::kLogicalAnd)] = {.run = comparison};
  r[index(OpId::kLogicalOr)] = {.run = comparison};
  r[index(OpId::kLogicalNot)] = {.run = predicate};
  r[index(OpId::kIsNan)] = {.run = predicate, .values = {Values::kSpecial, Values::kSpecial}};
  r[index(OpId::kIsFinite)] = {.run = predicate, .values = {Values::kSpecial, Values::kSpecial}};
  r[index(OpId::kSelect)] = {.run = select_value, .values = {Values::kGeneral, Values::kSpecial}};
  r[index(OpId::kClipByValue)] = {.run = clip};
  for (OpId op : {OpId::kMax, OpId::kMin, OpId::kAny, OpId::kAll}) r[index(op)] = {.run = reduce_other};
  r[index(OpId::kProd)] = {.run = reduce_other, .tolerance = reduce_other_tolerance};
  r[index(OpId::kLogSumExp)] = {.run = reduce_other, .tolerance = reduce_other_tolerance};
  // ArgMax/ArgMin on few distinct values: ties and NaN occur.
  r[index(OpId::kArgMax)] = {.run = along_axis, .values = {Values::kSpecial, Values::kSpecial}};
  r[index(OpId::kArgMin)] = {.run = along_axis, .values = {Values::kSpecial, Values::kSpecial}};
  r[index(OpId::kCumSum)] = {.run = along_axis};
  r[index(OpId::kSoftmax)] = {.run = along_axis, .tolerance = softmax_tolerance};
  r[index(OpId::kLogSoftmax)] = {.run = along_axis, .tolerance = softmax_tolerance};
  r[index(OpId::kConcatV2)] = {.run = joined, .values = {Values::kSpecial, Values::kSpecial}};
  r[index(OpId::kPack)] = {.run = joined, .values = {Values::kSpecial, Values::kSpecial}};
  r[index(OpId::kIdentity)] = {.run = unary, .values = {Values::kSpecial, Values::kSpecial}};
  r[index(OpId::kGatherV2)] = {.run = gather, .values = {Values::kSpecial, Values::kSpecial}};
  r[index(OpId::kBatchMatMulV2)] = {.run = matmul, .tolerance = matmul_tolerance};
  r[index(OpId::kTensorScatterAdd)] = {.run = scatter_add, .tolerance = scatter_tolerance};
  r[index(OpId::kTile)] = {.run = tile_or_pad, .values = {Values::kSpecial, Values::kSpecial}};
  r[index(OpId::kPadV2)] = {.run = tile_or_pad, .values = {Values::kSpecial, Values::kSpecial},
                            .attr_sets = pad_values};
  r[index(OpId::kBiasAdd)] = {.run = bias_add};
  r[index(OpId::kSoftmaxCrossEntropyWithLogits)] = {.run = softmax_cross_entropy,
                                                     .tolerance = xent_tolerance};
  r[index(OpId::kLayerNorm)] = {.run = layer_norm, .tolerance = layer_norm_tolerance,
                                .attr_sets = layer_norm_values};
  r[index(OpId::kSlice)] = {.run = slicing, .values = {Values::kSpecial, Values::kSpecial}};
  r[index(OpId::kStridedSlice)] = {.run = slicing,
                                   .values = {Values::kSpecial, Values::kSpecial}};
  r[index(OpId::kRange)] = {.run = range};
  r[index(OpId::kOneHot)] = {.run = one_hot, .values = {Values::kSpecial, Values::kSpecial},
                             .attr_sets = one_hot_values};
  r[index(OpId::kBroadcastTo)] = {.run = broadcast, .values = {Values::kSpecial, Values::kSpecial}};
  for (OpId op : {OpId::kConv2D, OpId::kConv2DBackpropInput, OpId::kConv2DBackpropFilter,
                  OpId::kAvgPool, OpId::kAvgPoolGrad}) {
    r[index(op)] = {.run = windowed, .tolerance = windowed_tolerance};
  }
  // Few distinct values: ties (the first maximum wins), infinities and NaN.
  r[index(OpId::kMaxPool)] = {.run = windowed, .values = {Values::kSpecial, Values::kSpecial}};
  r[index(OpId::kMaxPoolGrad)] = {.run = windowed, .tolerance = windowed_tolerance,
                                  .values = {Values::kSpecial, Values::kGeneral}};
  return r;
}();

constexpr bool every_op_has_a_reference() {
  for (const Reference& r : kReferences) {
    if (r.run == nullptr) return false;
  }
  return true;
}
static_assert(every_op_has_a_reference(),
              "an op of the op table (core/opdefs/op_table.hpp) has no host reference: add its "
              "entry to kReferences (docs/adding-an-op.md)");

}  // namespace

const Reference& reference(OpId op) { return kReferences[index(op)]; }

std::optional<std::string> run(const std::string& op, std::span<const Tensor* const> inputs,
                               std::span<const xdev_attr_t> attrs, Tensor& out) {
  const std::optional<OpId> id = xdev::detail::op_from_name(op);
  if (!id) return "no reference for op '" + op + "'";
  return reference(*id).run(Call{*id, inputs, attrs, std::span<Tensor>(&out, 1)});
}

std::vector<Tolerance> default_tolerance(const Tensor& out) { return base_tolerance(out); }

std::vector<Tolerance> tolerances(const std::string& op, std::span<const Tensor* const> inputs,
                                  std::span<const xdev_attr_t> attrs, const Tensor& out) {
  const std::optional<OpId> id = xdev::detail::op_from_name(op);
  if (!id) return base_tolerance(out);
  // The tolerance functions only read the outputs.
  Tensor& target = const_cast<Tensor&>(out);
  const Call call{*id, inputs, attrs, std::span<Tensor>(&target, 1)};
  const Reference& r = reference(*id);
  return r.tolerance != nullptr ? r.tolerance(call, 0) : base_tolerance(out);
}

std::optional<std::string> compare(const Tensor& got, const Tensor& want,
                                   std::span<const Tolerance> tolerance) {
  if (got.shape != want.shape || got.dtype != want.dtype) {
    return std::string("shape or dtype differs from the reference");
  }
  const int64_t n = want.num_elements();
  for (int64_t i = 0; i < n; ++i) {
    std::ostringstream msg;
    msg.precision(17);
    if (!is_float(want.dtype)) {
      int64_t g = got.get_int(i), w = want.get_int(i);
      if (g != w) {
        msg << "element " << i << " is " << g << ", expected " << w;
        return msg.str();
      }
      continue;
    }
    double g = got.get_double(i), w = want.get_double(i);
    if (std::isnan(w) && std::isnan(g)) continue;
    bool ok;
    if (std::isnan(w) || std::isnan(g) || std::isinf(w) || std::isinf(g)) {
      ok = g == w;
    } else {
      const Tolerance t = static_cast<size_t>(i) < tolerance.size()
                              ? tolerance[static_cast<size_t>(i)]
                              : Tolerance{};
      ok = std::fabs(g - w) <= t.abs + t.rel * std::fabs(w);
    }
    if (!ok) {
      msg << "element " << i << " is " << g << ", expected " << w;
      if (static_cast<size_t>(i) < tolerance.size() &&
          (tolerance[static_cast<size_t>(i)].abs > 1e-30 || tolerance[static_cast<size_t>(i)].rel > 0)) {
        msg << " (allowed error " << tolerance[static_cast<size_t>(i)].abs << " + "
            << tolerance[static_cast<size_t>(i)].rel << "*|expected|)";
      }
      return msg.str();
    }
  }
  return std::nullopt;
}

namespace {
uint64_t splitmix(uint64_t seed, uint64_t i) {
  uint64_t x = seed + (i + 1) * 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}
}  // namespace

float random_uniform_f32(uint64_t seed, uint64_t i, double minval, double maxval) {
  float u = static_cast<float>(splitmix(seed, i) >> 40) * 0x1.0p-24f;
  const auto lo = static_cast<float>(minval);
  const auto hi = static_cast<float>(maxval);
  return lo + (hi - lo) * u;
}

double random_uniform_f64(uint64_t seed, uint64_t i, double minval, double maxval) {
  double u = static_cast<double>(splitmix(seed, i) >> 11) * 0x1.0p-53;
  return minval + (maxval - minval) * u;
}

}  // namespace xdev_conformance::ref
