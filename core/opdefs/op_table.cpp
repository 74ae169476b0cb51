// The op table (op_table.hpp): one OpDef per op of XDEV_OPS, the shape
// functions they share, and check_call, which holds a call to its entry.
#include "opdefs/op_table.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <sstream>
#include <utility>
#include <vector>

#include <xdev/error.hpp>
#include <xdev/window_geometry.hpp>

#include <xdev/strided_slice.hpp>

#include "common/checked_math.hpp"
#include "opdefs/shape.hpp"

namespace xdev::detail {

// DType and xdev_dtype_t share their values: the core passes one as the
// other at the ABI. Checked here, where both headers meet.
static_assert(static_cast<int>(DType::kFloat32) == XDEV_DTYPE_FLOAT32);
static_assert(static_cast<int>(DType::kFloat64) == XDEV_DTYPE_FLOAT64);
static_assert(static_cast<int>(DType::kInt32) == XDEV_DTYPE_INT32);
static_assert(static_cast<int>(DType::kInt64) == XDEV_DTYPE_INT64);
static_assert(static_cast<int>(DType::kBool) == XDEV_DTYPE_BOOL);
static_assert(static_cast<int>(DType::kFloat16) == XDEV_DTYPE_FLOAT16);
static_assert(static_cast<int>(DType::kBFloat16) == XDEV_DTYPE_BFLOAT16);
static_assert(static_cast<int>(DType::kUInt8) == XDEV_DTYPE_UINT8);
static_assert(static_cast<int>(DType::kInt8) == XDEV_DTYPE_INT8);
static_assert(!is_valid(static_cast<DType>(XDEV_DTYPE_INVALID)));
static_assert(kMaxRank == XDEV_MAX_RANK);

namespace {

// A dtype attribute's value as the caller wrote it, read as the integer it
// is: a value outside the C enum's range (99) may not be loaded as an
// xdev_dtype_t (undefined behaviour, found by the ASan+UBSan lane); DType has
// a fixed underlying type, so any value is a DType that is_valid can refuse.
DType given_dtype(const xdev_attr_t& v) {
  int32_t raw = 0;
  static_assert(sizeof raw == sizeof v.value.dtype);
  std::memcpy(&raw, &v.value.dtype, sizeof raw);
  return static_cast<DType>(raw);
}

// --- shape functions, shared by every op of a ShapeClass ------------------------

// kSame: every output has the shape of input 0; all inputs share it.
void same_shape(const OpDef& def, std::span<const Shape* const> in, const AttrValues&,
                std::span<Shape> out) {
  for (size_t i = 1; i < in.size(); ++i) {
    if (!(*in[i] == *in[0])) {
      throw_invalid(def, "input " + std::to_string(i) + " has shape " + shape_text(*in[i]) +
                             ", input 0 has " + shape_text(*in[0]) +
                             " (all inputs need the same shape)");
    }
  }
  for (Shape& s : out) s = *in[0];
}

// kBroadcast: NumPy broadcasting of all inputs.
void broadcast_shape(const OpDef& def, std::span<const Shape* const> in, const AttrValues&,
                     std::span<Shape> out) {
  bool same = true;  // the usual case: nothing to broadcast
  for (size_t k = 1; k < in.size(); ++k) same = same && *in[k] == *in[0];
  if (same) {
    for (Shape& s : out) s = *in[0];
    return;
  }
  Shape result = *in[0];
  for (size_t k = 1; k < in.size(); ++k) {
    const Shape& a = result;
    const Shape& b = *in[k];
    const int rank = std::max(a.rank(), b.rank());
    Shape next;
    next.resize(rank);
    for (int i = 0; i < rank; ++i) {
      const int ia = i - (rank - a.rank()), ib = i - (rank - b.rank());
      const int64_t da = ia >= 0 ? a[static_cast<size_t>(ia)] : 1;
      const int64_t db = ib >= 0 ? b[static_cast<size_t>(ib)] : 1;
      if (da != db && da != 1 && db != 1) {
        throw_invalid(def, "shapes " + shape_text(a) + " and " + shape_text(b) +
                               " cannot be broadcast together (dimension " + std::to_string(i) +
                               ": " + std::to_string(da) + " vs " + std::to_string(db) + ")");
      }
      next[static_cast<size_t>(i)] = da == 1 ? db : da;
    }
    result = next;
  }
  for (Shape& s : out) s = result;
}

// kReduce: input 0 without `axes` (sorted, unique, in [0, rank)), or with 1
// there under `keepdims`.
void reduce_shape(const OpDef& def, std::span<const Shape* const> in, const AttrValues& attrs,
                  std::span<Shape> out) {
  const Shape& x = *in[0];
  const std::span<const int64_t> axes = attrs.get_ints(attr::kAxes);
  const bool keepdims = attrs.get_bool(attr::kKeepdims);
  for (size_t k = 0; k < axes.size(); ++k) {
    if (axes[k] >= x.rank() || (k > 0 && axes[k] <= axes[k - 1])) {
      std::string list;
      for (size_t j = 0; j < axes.size(); ++j) list += (j ? ", " : "") + std::to_string(axes[j]);
      throw_invalid(def, "axes {" + list + "} must be sorted, unique and in [0, " +
                             std::to_string(x.rank()) + ") for input shape " + shape_text(x));
    }
  }
  Shape result;
  size_t next = 0;
  for (int i = 0; i < x.rank(); ++i) {
    const bool reduced = next < axes.size() && axes[next] == i;
    if (reduced) ++next;
    if (!reduced) result.push_back(x[static_cast<size_t>(i)]);
    else if (keepdims) result.push_back(1);
  }
  for (Shape& s : out) s = result;
}

// `axis` (an int attribute, already >= 0) must be < the rank of `x`, named
// `what` in the message ("input shape", "params of shape").
void check_axis_below_rank(const OpDef& def, int64_t axis, const Shape& x, const char* what) {
  if (axis >= x.rank()) {
    throw_invalid(def, "axis " + std::to_string(axis) + " is out of range for " + what + " " +
                           shape_text(x) + " (rank " + std::to_string(x.rank()) + ")");
  }
}

// kAxis: `axis` < rank of input 0 (rank >= 1). ArgMax and ArgMin drop the
// axis and need it non-empty (the index of the extreme of nothing is
// undefined); CumSum keeps the shape.
void axis_shape(const OpDef& def, std::span<const Shape* const> in, const AttrValues& attrs,
                std::span<Shape> out) {
  const Shape& x = *in[0];
  const int64_t axis = attrs.get_int(attr::kAxis);
  check_axis_below_rank(def, axis, x, "input shape");
  const bool drops = def.outputs[0].dtype_rule == DTypeRule::kFixed;
  Shape result;
  for (int i = 0; i < x.rank(); ++i) {
    if (i == axis && drops) continue;
    result.push_back(x[static_cast<size_t>(i)]);
  }
  if (drops && x[static_cast<size_t>(axis)] == 0) {
    throw_invalid(def, "axis " + std::to_string(axis) + " of input shape " + shape_text(x) +
                           " is empty: no element to pick");
  }
  for (Shape& s : out) s = result;
}

// kConcat: inputs of one rank >= 1, equal but along `axis` (< rank); the
// output's `axis` is the sum of theirs (checked: many large inputs could
// overflow it before check_call sees the size).
void concat_shape(const OpDef& def, std::span<const Shape* const> in, const AttrValues& attrs,
                  std::span<Shape> out) {
  const Shape& first = *in[0];
  const int64_t axis = attrs.get_int(attr::kAxis);
  check_axis_below_rank(def, axis, first, "input 0 of shape");
  const auto a = static_cast<size_t>(axis);
  uint64_t total = 0;
  for (size_t i = 0; i < in.size(); ++i) {
    const Shape& x = *in[i];
    if (x.rank() != first.rank()) {
      throw_invalid(def, "input " + std::to_string(i) + " has rank " + std::to_string(x.rank()) +
                             " (shape " + shape_text(x) + "), input 0 rank " +
                             std::to_string(first.rank()) + " (shape " + shape_text(first) + ")");
    }
    for (size_t k = 0; k < static_cast<size_t>(x.rank()); ++k) {
      if (k != a && x[k] != first[k]) {
        throw_invalid(def, "input " + std::to_string(i) + " has shape " + shape_text(x) +
                               ", input 0 " + shape_text(first) + ": dimension " +
                               std::to_string(k) + " differs (" + std::to_string(x[k]) + " vs " +
                               std::to_string(first[k]) + ") and only axis " +
                               std::to_string(axis) + " may");
      }
    }
    const std::optional<uint64_t> sum = checked_add(total, static_cast<uint64_t>(x[a]));
    if (!sum || *sum > static_cast<uint64_t>(INT64_MAX)) {
      throw_invalid(def, "the inputs' sizes along axis " + std::to_string(axis) +
                             " overflow int64 at input " + std::to_string(i));
    }
    total = *sum;
  }
  Shape result = first;
  result[a] = static_cast<int64_t>(total);
  for (Shape& s : out) s = result;
}

// kStack: inputs of one shape, stacked along a new `axis` (<= their rank;
// the output has rank + 1 <= kMaxRank).
// `x` with a new axis of `size` at `axis`, which must be <= x's rank (and
// the result's rank at most kMaxRank); `what` names x ("inputs", "indices").
Shape with_new_axis(const OpDef& def, const Shape& x, int64_t axis, int64_t size,
                    const char* what) {
  if (x.rank() >= kMaxRank) {
    throw_invalid(def, std::string(what) + " of shape " + shape_text(x) + " have rank " +
                           std::to_string(x.rank()) + ": the output's rank would exceed " +
                           std::to_string(kMaxRank));
  }
  if (axis > x.rank()) {
    throw_invalid(def, "axis " + std::to_string(axis) + " is out of range for " + what +
                           " of shape " + shape_text(x) + " (the new axis must be <= their rank " +
                           std::to_string(x.rank()) + ")");
  }
  Shape result;
  for (int k = 0; k <= x.rank(); ++k) {
    if (k == axis) result.push_back(size);
    if (k < x.rank()) result.push_back(x[static_cast<size_t>(k)]);
  }
  return result;
}

void stack_shape(const OpDef& def, std::span<const Shape* const> in, const AttrValues& attrs,
                 std::span<Shape> out) {
  const Shape& first = *in[0];
  const Shape result = with_new_axis(def, first, attrs.get_int(attr::kAxis),
                                     static_cast<int64_t>(in.size()), "inputs");
  for (size_t i = 1; i < in.size(); ++i) {
    if (!(*in[i] == first)) {
      throw_invalid(def, "input " + std::to_string(i) + " has shape " + shape_text(*in[i]) +
                             ", input 0 has " + shape_text(first) +
                             " (all inputs need the same shape)");
    }
  }
  for (Shape& s : out) s = result;
}

// The ints attribute `name` as text: "{1, 2, 3}".
std::string ints_text(std::span<const int64_t> values) {
  std::string text = "{";
  for (size_t j = 0; j < values.size(); ++j) text += (j ? ", " : "") + std::to_string(values[j]);
  return text + "}";
}

// Dimension `k` of an output, `size` (uint64, checked), as int64; throws
// naming `what` when it does not fit.
int64_t checked_dim(const OpDef& def, std::optional<uint64_t> size, size_t k,
                    const std::string& what) {
  if (!size || *size > static_cast<uint64_t>(INT64_MAX)) {
    throw_invalid(def, "dimension " + std::to_string(k) + " of the output (" + what +
                           ") overflows int64");
  }
  return static_cast<int64_t>(*size);
}

// kTile: `multiples` has one value (>= 0) per axis of input 0; output
// dimension k is x[k] · multiples[k].
void tile_shape(const OpDef& def, std::span<const Shape* const> in, const AttrValues& attrs,
                std::span<Shape> out) {
  const Shape& x = *in[0];
  const std::span<const int64_t> m = attrs.get_ints(attr::kMultiples);
  if (m.size() != x.size()) {
    throw_invalid(def, "multiples " + ints_text(m) + " has " + std::to_string(m.size()) +
                           " values for input shape " + shape_text(x) + ": it needs one per axis (" +
                           std::to_string(x.rank()) + ")");
  }
  Shape result;
  for (size_t k = 0; k < x.size(); ++k) {
    result.push_back(checked_dim(def, checked_mul(static_cast<uint64_t>(x[k]),
                                                  static_cast<uint64_t>(m[k])),
                                 k, std::to_string(x[k]) + " · " + std::to_string(m[k])));
  }
  for (Shape& s : out) s = result;
}

// kPad: `paddings` has two values (>= 0) per axis of input 0, before and
// after it (TF's [rank, 2] tensor, row-major); output dimension k is
// before + x[k] + after.
void pad_shape(const OpDef& def, std::span<const Shape* const> in, const AttrValues& attrs,
               std::span<Shape> out) {
  const Shape& x = *in[0];
  const std::span<const int64_t> p = attrs.get_ints(attr::kPaddings);
  if (p.size() != 2 * x.size()) {
    throw_invalid(def, "paddings " + ints_text(p) + " has " + std::to_string(p.size()) +
                           " values for input shape " + shape_text(x) +
                           ": it needs two per axis (before, after), " +
                           std::to_string(2 * x.size()));
  }
  Shape result;
  for (size_t k = 0; k < x.size(); ++k) {
    const auto before = static_cast<uint64_t>(p[2 * k]), after = static_cast<uint64_t>(p[2 * k + 1]);
    const std::optional<uint64_t> part = checked_add(before, static_cast<uint64_t>(x[k]));
    result.push_back(checked_dim(def, part ? checked_add(*part, after) : std::nullopt, k,
                                 std::to_string(p[2 * k]) + " + " + std::to_string(x[k]) +
                                     " + " + std::to_string(p[2 * k + 1])));
  }
  for (Shape& s : out) s = result;
}

// kGather: params of rank >= 1 and `axis` < its rank; the output is
// params' shape with `axis` replaced by the indices' shape (rank <= kMaxRank).
// The indices' values are the kernel's to check.
void gather_shape(const OpDef& def, std::span<const Shape* const> in, const AttrValues& attrs,
                  std::span<Shape> out) {
  const Shape& params = *in[0];
  const Shape& indices = *in[1];
  const int64_t axis = attrs.get_int(attr::kAxis);
  check_axis_below_rank(def, axis, params, "params of shape");
  if (params.rank() - 1 + indices.rank() > kMaxRank) {
    throw_invalid(def, "params of shape " + shape_text(params) + " and indices of shape " +
                           shape_text(indices) + " give an output of rank " +
                           std::to_string(params.rank() - 1 + indices.rank()) + ", more than " +
                           std::to_string(kMaxRank));
  }
  Shape result;
  for (int k = 0; k < params.rank(); ++k) {
    if (k != axis) {
      result.push_back(params[static_cast<size_t>(k)]);
      continue;
    }
    for (int64_t d : indices) result.push_back(d);
  }
  for (Shape& s : out) s = result;
}

// kSlice: `begin` (>= 0) and `size` (>= -1; -1: to the end of the axis) have
// one value per axis of input 0; begin[k] + size[k] <= x[k] (compared
// without adding: no overflow).
void slice_shape(const OpDef& def, std::span<const Shape* const> in, const AttrValues& attrs,
                 std::span<Shape> out) {
  const Shape& x = *in[0];
  const std::span<const int64_t> begin = attrs.get_ints(attr::kBegin);
  const std::span<const int64_t> size = attrs.get_ints(attr::kSize);
  if (begin.size() != x.size() || size.size() != x.size()) {
    throw_invalid(def, "begin " + ints_text(begin) + " and size " + ints_text(size) +
                           " need one value per axis of input shape " + shape_text(x) + " (" +
                           std::to_string(x.rank()) + ")");
  }
  Shape result;
  for (size_t k = 0; k < x.size(); ++k) {
    if (begin[k] > x[k] || (size[k] >= 0 && size[k] > x[k] - begin[k])) {
      throw_invalid(def, "axis " + std::to_string(k) + ": begin " + std::to_string(begin[k]) +
                             " and size " + std::to_string(size[k]) +
                             " reach past its dimension " + std::to_string(x[k]) +
                             " (input shape " + shape_text(x) + ")");
    }
    result.push_back(size[k] < 0 ? x[k] - begin[k] : size[k]);
  }
  for (Shape& s : out) s = result;
}

// kStridedSlice: TensorFlow's rules (<xdev/strided_slice.hpp>, shared with
// the kernels and the reference).
void strided_slice_shape(const OpDef& def, std::span<const Shape* const> in,
                         const AttrValues& attrs, std::span<Shape> out) {
  const Shape& x = *in[0];
  const std::span<const int64_t> begin = attrs.get_ints(attr::kBegin);
  const std::span<const int64_t> end = attrs.get_ints(attr::kEnd);
  const std::span<const int64_t> strides = attrs.get_ints(attr::kStrides);
  if (end.size() != begin.size() || strides.size() != begin.size()) {
    throw_invalid(def, "begin " + ints_text(begin) + ", end " + ints_text(end) + " and strides " +
                           ints_text(strides) + " need the same number of values");
  }
  strided_slice_spec::Dense dense;
  strided_slice_spec::make_dense(static_cast<int32_t>(x.rank()), x.data(), begin.data(), end.data(),
                            strides.data(), static_cast<int64_t>(begin.size()),
                            attrs.get_int(attr::kBeginMask), attrs.get_int(attr::kEndMask),
                            attrs.get_int(attr::kEllipsisMask), attrs.get_int(attr::kNewAxisMask),
                            attrs.get_int(attr::kShrinkAxisMask), dense);
  if (dense.error[0] != '\0') {
    throw_invalid(def, std::string(dense.error) + " (input shape " + shape_text(x) + ", begin " +
                           ints_text(begin) + ", end " + ints_text(end) + ", strides " +
                           ints_text(strides) + ")");
  }
  const Shape result(std::span<const int64_t>(dense.output_shape,
                                              static_cast<size_t>(dense.output_rank)));
  for (Shape& s : out) s = result;
}

// A double as the shortest text that reads back the same ("0.5", "1e+300").
std::string number_text(double v) {
  std::ostringstream text;
  text.precision(17);
  text << v;
  return text.str();
}

// kRange: [start, limit) in steps of delta (TF's Range). delta is not 0 and
// points from start toward limit (start == limit: empty). Integer dtypes
// take integers of magnitude <= 2^53 (exact as the float attributes that
// carry them), int32 ones within int32; the length is then exact int64
// arithmetic. Floats: ⌈|limit - start| / |delta|⌉ in double, which must be
// finite and at most 2^62 (the byte size is checked after).
void range_shape(const OpDef& def, std::span<const Shape* const>, const AttrValues& attrs,
                 std::span<Shape> out) {
  const double start = attrs.get_float(attr::kStart), limit = attrs.get_float(attr::kLimit);
  const double delta = attrs.get_float(attr::kDelta);
  const DType dtype = attrs.get_dtype(attr::kDtype);
  const std::string values = "start " + number_text(start) + ", limit " + number_text(limit) +
                             ", delta " + number_text(delta);
  if (delta == 0) throw_invalid(def, "delta is 0 (" + values + ")");
  if (delta > 0 ? start > limit : start < limit) {
    throw_invalid(def, std::string(delta > 0 ? "start > limit with a positive delta"
                                             : "start < limit with a negative delta") +
                           " (" + values + "): the range runs away from its limit");
  }
  int64_t size = 0;
  if (dtype == DType::kInt32 || dtype == DType::kInt64) {
    constexpr double kExact = 9007199254740992.0;  // 2^53
    const double bound = dtype == DType::kInt32 ? 2147483647.0 : kExact;
    for (const auto& [name, v] : {std::pair{"start", start}, std::pair{"limit", limit},
                                  std::pair{"delta", delta}}) {
      const double low = dtype == DType::kInt32 && name != std::string("delta") ? -2147483648.0
                                                                                : -bound;
      if (std::trunc(v) != v || v < low || v > bound) {
        throw_invalid(def, std::string(name) + " " + number_text(v) + " is not an integer in [" +
                               number_text(low) + ", " + number_text(bound) + "] (" + values +
                               ", dtype " + std::string(to_string(dtype)) + ")");
      }
    }
    const auto s = static_cast<int64_t>(start), l = static_cast<int64_t>(limit);
    const auto d = static_cast<int64_t>(delta);
    const int64_t span = l > s ? l - s : s - l, step = d > 0 ? d : -d;  // each <= 2^54
    size = span / step + (span % step != 0 ? 1 : 0);
  } else {
    const double n = std::ceil(std::fabs((limit - start) / delta));
    if (!(n <= 4611686018427387904.0)) {  // 2^62; false for NaN and infinity
      throw_invalid(def, "the range has " + number_text(n) + " elements (" + values +
                             "), more than 2^62");
    }
    size = static_cast<int64_t>(n);
  }
  for (Shape& s : out) s = Shape{size};
}

// kOneHot: indices of rank < kMaxRank; the output is their shape with
// `depth` inserted at `axis` (<= their rank; the SDK maps -1 to the end).
void one_hot_shape(const OpDef& def, std::span<const Shape* const> in, const AttrValues& attrs,
                   std::span<Shape> out) {
  const Shape result = with_new_axis(def, *in[0], attrs.get_int(attr::kAxis),
                                     attrs.get_int(attr::kDepth), "indices");
  for (Shape& s : out) s = result;
}

// kMatMul: op(a) [M, K] times op(b) [K, N], op = transpose or not.
void matmul_shape(const OpDef& def, std::span<const Shape* const> in, const AttrValues& attrs,
                  std::span<Shape> out) {
  const Shape& a = *in[0];
  const Shape& b = *in[1];
  if (a.rank() != 2 || b.rank() != 2) {
    throw_invalid(def, "inputs must have rank 2, not shapes " + shape_text(a) + " and " +
                           shape_text(b));
  }
  const bool ta = attrs.get_bool(attr::kTransposeA), tb = attrs.get_bool(attr::kTransposeB);
  const int64_t m = a[ta ? 1 : 0], k = a[ta ? 0 : 1];
  const int64_t kb = b[tb ? 1 : 0], n = b[tb ? 0 : 1];
  if (k != kb) {
    throw_invalid(def, "inner dimensions differ: " + shape_text(a) + (ta ? "ᵀ" : "") + " · " +
                           shape_text(b) + (tb ? "ᵀ" : "") + " (" + std::to_string(k) + " vs " +
                           std::to_string(kb) + ")");
  }
  for (Shape& s : out) {
    s.resize(2);
    s[0] = m;
    s[1] = n;
  }
}

// kBatchMatMul: x [..., M, K] times y [..., K, N] (adj_x / adj_y: the last
// two axes swapped), each of rank >= 2; the batch axes (all but the last two)
// broadcast NumPy-style. The output is [batch..., M, N].
void batch_matmul_shape(const OpDef& def, std::span<const Shape* const> in,
                        const AttrValues& attrs, std::span<Shape> out) {
  const Shape& x = *in[0];
  const Shape& y = *in[1];
  if (x.rank() < 2 || y.rank() < 2) {
    throw_invalid(def, "x and y need rank >= 2, not shapes " + shape_text(x) + " and " +
                           shape_text(y));
  }
  const bool ax = attrs.get_bool(attr::kAdjX), ay = attrs.get_bool(attr::kAdjY);
  const size_t xr = x.size(), yr = y.size();
  const int64_t m = x[ax ? xr - 1 : xr - 2], k = x[ax ? xr - 2 : xr - 1];
  const int64_t ky = y[ay ? yr - 1 : yr - 2], n = y[ay ? yr - 2 : yr - 1];
  if (k != ky) {
    throw_invalid(def, "inner dimensions differ: x " + shape_text(x) + (ax ? " (adj_x)" : "") +
                           " · y " + shape_text(y) + (ay ? " (adj_y)" : "") + " (" +
                           std::to_string(k) + " vs " + std::to_string(ky) + ")");
  }
  const size_t batch_rank = std::max(xr, yr) - 2;
  Shape result;
  for (size_t i = 0; i < batch_rank; ++i) {
    // Axis i of the output's batch, counted from the left; the inputs' batch
    // axes align on the right.
    const size_t from_end = batch_rank - i;  // >= 1
    const int64_t dx = from_end <= xr - 2 ? x[xr - 2 - from_end] : 1;
    const int64_t dy = from_end <= yr - 2 ? y[yr - 2 - from_end] : 1;
    if (dx != dy && dx != 1 && dy != 1) {
      throw_invalid(def, "the batch dimensions of x " + shape_text(x) + " and y " +
                             shape_text(y) + " cannot be broadcast together (batch axis " +
                             std::to_string(i) + ": " + std::to_string(dx) + " vs " +
                             std::to_string(dy) + ")");
    }
    result.push_back(dx == 1 ? dy : dx);
  }
  result.push_back(m);
  result.push_back(n);
  for (Shape& s : out) s = result;
}

// kScatter: tensor of any rank, indices [..., D] (rank >= 1, D = the last
// dimension <= tensor's rank), updates of shape indices[:-1] + tensor[D:].
// The output has tensor's shape. The indices' values are the kernel's to
// check.
void scatter_shape(const OpDef& def, std::span<const Shape* const> in, const AttrValues&,
                   std::span<Shape> out) {
  const Shape& tensor = *in[0];
  const Shape& indices = *in[1];
  const Shape& updates = *in[2];
  if (indices.rank() < 1) {
    throw_invalid(def, "indices of shape " + shape_text(indices) +
                           " need rank >= 1 (the last axis holds each index)");
  }
  const int64_t depth = indices[indices.size() - 1];
  if (depth > tensor.rank()) {
    throw_invalid(def, "indices of shape " + shape_text(indices) + " index " +
                           std::to_string(depth) + " axes, tensor of shape " +
                           shape_text(tensor) + " has only " + std::to_string(tensor.rank()));
  }
  Shape want;
  for (size_t k = 0; k + 1 < indices.size(); ++k) want.push_back(indices[k]);
  for (size_t k = static_cast<size_t>(depth); k < tensor.size(); ++k) want.push_back(tensor[k]);
  if (want.rank() > kMaxRank || !(updates == want)) {
    throw_invalid(def, "updates of shape " + shape_text(updates) + " must be " +
                           shape_text(want) + ": indices " + shape_text(indices) +
                           " without its last axis, then tensor " + shape_text(tensor) +
                           " from axis " + std::to_string(depth) + " on");
  }
  // An index into an empty axis is out of range whatever its value; the
  // output is then empty too and no kernel would run to say so.
  int64_t rows = 1;
  for (size_t k = 0; k + 1 < indices.size(); ++k) rows *= indices[k];
  for (size_t k = 0; rows > 0 && k < static_cast<size_t>(depth); ++k) {
    if (tensor[k] == 0) {
      throw_invalid(def, "indices of shape " + shape_text(indices) + " index axis " +
                             std::to_string(k) + " of tensor of shape " + shape_text(tensor) +
                             ", which is empty: every index is out of range [0, 0)");
    }
  }
  for (Shape& s : out) s = tensor;
}

// --- NN ops ----------------------------------------------------------------------------

// kBiasAdd: value of rank >= 2, bias of rank 1 as long as value's channel
// axis (the last for NHWC, 1 for NCHW); the output has value's shape.
void bias_add_shape(const OpDef& def, std::span<const Shape* const> in, const AttrValues& attrs,
                    std::span<Shape> out) {
  const Shape& value = *in[0];
  const Shape& bias = *in[1];
  const std::string_view format = attrs.get_string(attr::kDataFormat);
  if (value.rank() < 2) {
    throw_invalid(def, "value of shape " + shape_text(value) + " has rank " +
                           std::to_string(value.rank()) + "; it needs rank >= 2");
  }
  const size_t channel = format == "NCHW" ? 1 : static_cast<size_t>(value.rank() - 1);
  if (bias.rank() != 1 || bias[0] != value[channel]) {
    throw_invalid(def, "bias of shape " + shape_text(bias) + " must be (" +
                           std::to_string(value[channel]) + ",), the channel dimension " +
                           std::to_string(channel) + " of value " + shape_text(value) +
                           " (data_format " + std::string(format) + ")");
  }
  for (Shape& s : out) s = value;
}

// kXent: features and labels of rank 2, [batch, classes], each dimension
// equal or 1 in one of them (broadcast); loss [batch], backprop [batch, classes].
void xent_shape(const OpDef& def, std::span<const Shape* const> in, const AttrValues&,
                std::span<Shape> out) {
  const Shape& f = *in[0];
  const Shape& l = *in[1];
  if (f.rank() != 2 || l.rank() != 2) {
    throw_invalid(def, "features " + shape_text(f) + " and labels " + shape_text(l) +
                           " must both have rank 2 (batch, classes)");
  }
  Shape both;
  for (size_t k = 0; k < 2; ++k) {
    if (f[k] != l[k] && f[k] != 1 && l[k] != 1) {
      throw_invalid(def, "features " + shape_text(f) + " and labels " + shape_text(l) +
                             " cannot be broadcast together (dimension " + std::to_string(k) +
                             ": " + std::to_string(f[k]) + " vs " + std::to_string(l[k]) + ")");
    }
    both.push_back(f[k] == 1 ? l[k] : f[k]);
  }
  out[0] = Shape{both[0]};
  out[1] = both;
}

// kLayerNorm: x of rank >= 1, `begin_norm_axis` < its rank, gamma and beta
// of x's shape from that axis on; `epsilon` >= 0. The output has x's shape.
void layer_norm_shape(const OpDef& def, std::span<const Shape* const> in, const AttrValues& attrs,
                      std::span<Shape> out) {
  const Shape& x = *in[0];
  const int64_t axis = attrs.get_int(attr::kBeginNormAxis);
  if (axis >= x.rank()) {
    throw_invalid(def, "begin_norm_axis " + std::to_string(axis) + " is out of range for x of shape " +
                           shape_text(x) + " (rank " + std::to_string(x.rank()) + ")");
  }
  Shape params;
  for (int k = static_cast<int>(axis); k < x.rank(); ++k) params.push_back(x[static_cast<size_t>(k)]);
  for (size_t i = 1; i < 3; ++i) {
    if (!(*in[i] == params)) {
      throw_invalid(def, std::string(def.input(i).name) + " has shape " + shape_text(*in[i]) +
                             "; it must be " + shape_text(params) + ", x " + shape_text(x) +
                             " from begin_norm_axis " + std::to_string(axis) + " on");
    }
  }
  const double epsilon = attrs.get_float(attr::kEpsilon);
  if (!(epsilon >= 0.0)) {
    std::ostringstream text;
    text << epsilon;
    throw_invalid(def, "epsilon " + text.str() + " must be >= 0");
  }
  for (Shape& s : out) s = x;
}

// --- Conv2D and pooling: windows of xdev/window_geometry.hpp ----------------------------

// A 4-d image's dimensions, whatever its data_format.
struct Image {
  int64_t n, h, w, c;
};

bool is_nchw(const AttrValues& attrs) { return attrs.get_string(attr::kDataFormat) == "NCHW"; }

Image image_of(const OpDef& def, const char* what, const Shape& s, bool nchw) {
  if (s.rank() != 4) {
    throw_invalid(def, std::string(what) + " of shape " + shape_text(s) + " has rank " +
                           std::to_string(s.rank()) + "; it needs rank 4 (" +
                           (nchw ? "NCHW" : "NHWC") + ")");
  }
  return nchw ? Image{s[0], s[2], s[3], s[1]} : Image{s[0], s[1], s[2], s[3]};
}

Shape image_shape(const Image& i, bool nchw) {
  return nchw ? Shape{i.n, i.c, i.h, i.w} : Shape{i.n, i.h, i.w, i.c};
}

// The (height, width) of an ints attribute (strides, dilations, ksize).
std::pair<int64_t, int64_t> spatial_attr(const OpDef& def, const AttrValues& attrs,
                                         const char* name, bool nchw) {
  const std::span<const int64_t> v = attrs.get_ints(name);
  int64_t h = 1, w = 1;
  if (!window::spatial_pair(v.data(), static_cast<int64_t>(v.size()), nchw, h, w)) {
    throw_invalid(def, std::string(name) + " " + ints_text(v) +
                           " must have 2 values (height, width) or 4 in data_format order " +
                           (nchw ? "NCHW" : "NHWC") + " with 1 for batch and channels");
  }
  return {h, w};
}

// The output of windows of kh x kw taps over `input` (strides, dilations
// when the op has them, padding, data_format), with `channels` channels.
Shape windowed_shape(const OpDef& def, const Shape& input, int64_t kh, int64_t kw,
                     int64_t channels, const AttrValues& attrs) {
  const bool nchw = is_nchw(attrs);
  const Image in = image_of(def, "input", input, nchw);
  const auto [sh, sw] = spatial_attr(def, attrs, attr::kStrides, nchw);
  std::pair<int64_t, int64_t> dil{1, 1};
  if (def.attr(attr::kDilations) != nullptr) dil = spatial_attr(def, attrs, attr::kDilations, nchw);
  const std::string_view padding = attrs.get_string(attr::kPadding);
  window::Axis y{in.h, kh, sh, dil.first}, x{in.w, kw, sw, dil.second};
  for (window::Axis* a : {&y, &x}) {
    if (!window::resolve(*a, padding == "SAME")) {
      const bool is_y = a == &y;
      throw_invalid(def, std::string("a window of ") + std::to_string(a->size) + " taps (stride " +
                             std::to_string(a->stride) + ", dilation " +
                             std::to_string(a->dilation) + ") does not fit the input " +
                             (is_y ? "height " : "width ") + std::to_string(a->in) + " of " +
                             shape_text(input) + " with padding " + std::string(padding));
    }
  }
  return image_shape(Image{in.n, y.out, x.out, channels}, nchw);
}

// kConv2D: input [N, H, W, C] (or NCHW), filter [KH, KW, C, Cout].
Shape conv_output(const OpDef& def, const Shape& input, const Shape& filter,
                  const AttrValues& attrs) {
  const bool nchw = is_nchw(attrs);
  const Image in = image_of(def, "input", input, nchw);
  if (filter.rank() != 4) {
    throw_invalid(def, "filter of shape " + shape_text(filter) + " has rank " +
                           std::to_string(filter.rank()) +
                           "; it needs rank 4 [height, width, in_channels, out_channels]");
  }
  if (filter[2] != in.c) {
    throw_invalid(def, "filter in_channels " + std::to_string(filter[2]) +
                           " does not match input channels " + std::to_string(in.c) +
                           " (filter " + shape_text(filter) + ", input " + shape_text(input) +
                           ", data_format " + (nchw ? "NCHW" : "NHWC") + ")");
  }
  return windowed_shape(def, input, filter[0], filter[1], filter[3], attrs);
}

void conv2d_shape(const OpDef& def, std::span<const Shape* const> in, const AttrValues& attrs,
                  std::span<Shape> out) {
  out[0] = conv_output(def, *in[0], *in[1], attrs);
}

// The gradient ops: `given` must be the shape the forward op gives.
void check_forward_shape(const OpDef& def, const char* what, const Shape& given,
                         const Shape& expected) {
  if (!(given == expected)) {
    throw_invalid(def, std::string(what) + " has shape " + shape_text(given) +
                           "; the forward op gives " + shape_text(expected));
  }
}

Shape sizes_attr(const AttrValues& attrs, const char* name) {
  const std::span<const int64_t> v = attrs.get_ints(name);
  return Shape(v);
}

// kConv2DBackpropInput: filter, out_backprop -> input of `input_sizes`.
void conv2d_backprop_input_shape(const OpDef& def, std::span<const Shape* const> in,
                                 const AttrValues& attrs, std::span<Shape> out) {
  const Shape input = sizes_attr(attrs, attr::kInputSizes);
  check_forward_shape(def, "out_backprop", *in[1], conv_output(def, input, *in[0], attrs));
  out[0] = input;
}

// kConv2DBackpropFilter: input, out_backprop -> filter of `filter_sizes`.
void conv2d_backprop_filter_shape(const OpDef& def, std::span<const Shape* const> in,
                                  const AttrValues& attrs, std::span<Shape> out) {
  const Shape filter = sizes_attr(attrs, attr::kFilterSizes);
  check_forward_shape(def, "out_backprop", *in[1], conv_output(def, *in[0], filter, attrs));
  out[0] = filter;
}

// kPool: windows of `ksize` over a 4-d input, channels kept.
Shape pool_output(const OpDef& def, const Shape& input, const AttrValues& attrs) {
  const bool nchw = is_nchw(attrs);
  const Image in = image_of(def, "input", input, nchw);
  const auto [kh, kw] = spatial_attr(def, attrs, attr::kKsize, nchw);
  return windowed_shape(def, input, kh, kw, in.c, attrs);
}

void pool_shape(const OpDef& def, std::span<const Shape* const> in, const AttrValues& attrs,
                std::span<Shape> out) {
  out[0] = pool_output(def, *in[0], attrs);
}

// kMaxPoolGrad: orig_input, orig_output, grad -> orig_input's shape.
void max_pool_grad_shape(const OpDef& def, std::span<const Shape* const> in,
                         const AttrValues& attrs, std::span<Shape> out) {
  const Shape pooled = pool_output(def, *in[0], attrs);
  check_forward_shape(def, "orig_output", *in[1], pooled);
  check_forward_shape(def, "grad", *in[2], pooled);
  out[0] = *in[0];
}

// kAvgPoolGrad: grad -> the input of `orig_input_shape`.
void avg_pool_grad_shape(const OpDef& def, std::span<const Shape* const> in,
                         const AttrValues& attrs, std::span<Shape> out) {
  const Shape input = sizes_attr(attrs, attr::kOrigInputShape);
  check_forward_shape(def, "grad", *in[0], pool_output(def, input, attrs));
  out[0] = input;
}

// kFromAttr: the `shape` attribute (its dimensions are >= 0 by its range).
void attr_shape(const OpDef& def, std::span<const Shape* const>, const AttrValues& attrs,
                std::span<Shape> out) {
  const std::span<const int64_t> dims = attrs.get_ints(attr::kShape);
  if (dims.size() > static_cast<size_t>(kMaxRank)) {
    throw_invalid(def, "the shape has " + std::to_string(dims.size()) +
                           " dimensions; a shape has at most " + std::to_string(kMaxRank));
  }
  for (Shape& s : out) s = Shape(dims);
}

// kBroadcastTo: the `shape` attribute (rank <= kMaxRank), which x's shape
// broadcasts to by NumPy's rules: x's axes align with the last ones, each of
// x's dimensions is the target's or 1. The SDK's broadcast_to view checks
// its calls here too.
void broadcast_to_shape(const OpDef& def, std::span<const Shape* const> in,
                        const AttrValues& attrs, std::span<Shape> out) {
  const Shape& x = *in[0];
  attr_shape(def, in, attrs, out);
  const Shape& target = out[0];
  auto refuse = [&](const std::string& why) {
    throw_invalid(def, "cannot broadcast shape " + shape_text(x) + " to " + shape_text(target) +
                           ": " + why);
  };
  if (target.rank() < x.rank()) refuse("the target has fewer axes");
  for (int k = 0; k < x.rank(); ++k) {
    const int64_t size = x[static_cast<size_t>(k)];
    const size_t t = static_cast<size_t>(k + target.rank() - x.rank());
    if (size != target[t] && size != 1) {
      refuse("dimension " + std::to_string(t) + " is " + std::to_string(size) + ", not 1 or " +
             std::to_string(target[t]));
    }
  }
}

// RandomUniform: the shape attribute, and an interval whose values are
// finite in the output dtype: minval < maxval, both (rounded to the dtype)
// finite, and maxval - minval finite there too (docs/ops.md computes
// minval + (maxval - minval) * u in the output dtype; an infinite width gives
// infinities and NaN).
void random_uniform_shape(const OpDef& def, std::span<const Shape* const> in,
                          const AttrValues& attrs, std::span<Shape> out) {
  const double lo = attrs.get_float(attr::kMinval), hi = attrs.get_float(attr::kMaxval);
  auto number = [](double v) {
    std::ostringstream text;
    text << v;
    return text.str();
  };
  if (!(lo < hi)) {
    throw_invalid(def, "minval " + number(lo) + " must be less than maxval " + number(hi));
  }
  const DType dtype = attrs.get_dtype(attr::kDtype);
  bool finite_width = std::isfinite(hi - lo);
  if (dtype == DType::kFloat32) {
    constexpr double kMax = std::numeric_limits<float>::max();
    if (std::fabs(lo) > kMax || std::fabs(hi) > kMax) {
      throw_invalid(def, "minval " + number(lo) + " and maxval " + number(hi) +
                             " must lie within float32's finite range (±" + number(kMax) + ")");
    }
    const auto flo = static_cast<float>(lo), fhi = static_cast<float>(hi);
    if (!(flo < fhi)) {
      throw_invalid(def, "minval " + number(lo) + " and maxval " + number(hi) +
                             " are the same float32 number: the interval is empty in float32");
    }
    finite_width = std::isfinite(fhi - flo);
  }
  if (!finite_width) {
    throw_invalid(def, "maxval - minval (" + number(hi) + " - " + number(lo) + ") overflows " +
                           std::string(to_string(dtype)) +
                           ": the values would be infinite or NaN");
  }
  attr_shape(def, in, attrs, out);
}

// --- the parts entries share ---------------------------------------------------------

constexpr InputDef kNumberX[] = {{"x", kNumberDTypes}};
constexpr InputDef kAnyX[] = {{"x", kAllDTypes}};
constexpr InputDef kFloatX[] = {{"x", kFloatDTypes}};
constexpr InputDef kFloatXY[] = {{"x", kFloatDTypes}, {"y", kFloatDTypes, 0}};
constexpr InputDef kNumberXY[] = {{"x", kNumberDTypes}, {"y", kNumberDTypes, 0}};
// Numbers and the 8-bit integers (kArithmeticDTypes); int8 but not uint8 (kSignedDTypes).
constexpr InputDef kArithX[] = {{"x", kArithmeticDTypes}};
constexpr InputDef kArithXY[] = {{"x", kArithmeticDTypes}, {"y", kArithmeticDTypes, 0}};
constexpr InputDef kVariadicArithX[] = {{"x", kArithmeticDTypes, 0}};
constexpr InputDef kSignedX[] = {{"x", kSignedDTypes}};
// Add: bool too (logical or).
constexpr InputDef kAddXY[] = {{"x", kArithmeticDTypes | kBoolDTypes},
                               {"y", kArithmeticDTypes | kBoolDTypes, 0}};
constexpr InputDef kAnyXY[] = {{"x", kAllDTypes}, {"y", kAllDTypes, 0}};
// ArgMax, ArgMin: bool too.
constexpr InputDef kArgX[] = {{"x", kArithmeticDTypes | kBoolDTypes}};
constexpr InputDef kValueXY[] = {{"x", kValueDTypes}, {"y", kValueDTypes, 0}};
constexpr InputDef kMatMulInputs[] = {{"a", kNumberDTypes}, {"b", kNumberDTypes, 0}};
constexpr InputDef kVariadicNumberX[] = {{"x", kNumberDTypes, 0}};
constexpr InputDef kVariadicAnyX[] = {{"x", kAllDTypes, 0}};
constexpr InputDef kGatherInputs[] = {{"params", kAllDTypes}, {"indices", kIntDTypes}};
constexpr InputDef kBoolX[] = {{"x", kBoolDTypes}};
constexpr InputDef kBoolXY[] = {{"x", kBoolDTypes}, {"y", kBoolDTypes, 0}};
// Select: the condition, then the two inputs it chooses between (TF's SelectV2).
constexpr InputDef kSelectInputs[] = {
    {"condition", kBoolDTypes}, {"x", kAllDTypes}, {"y", kAllDTypes, 1}};
constexpr InputDef kClipInputs[] = {{"x", kArithmeticDTypes},
                                    {"clip_value_min", kArithmeticDTypes, 0},
                                    {"clip_value_max", kArithmeticDTypes, 0}};

constexpr OutputDef kOutputLikeInput[] = {{"out"}};
constexpr OutputDef kBoolOutput[] = {{"out", DTypeRule::kFixed, 0, nullptr, DType::kBool}};
constexpr OutputDef kOutputLikeInput1[] = {{"out", DTypeRule::kInput, 1}};
constexpr OutputDef kInt64Output[] = {{"out", DTypeRule::kFixed, 0, nullptr, DType::kInt64}};
constexpr OutputDef kOutputOfDtypeAttr[] = {{"out", DTypeRule::kAttr, 0, attr::kDtype}};

constexpr AttrDef kMatMulAttrs[] = {
    {.name = attr::kTransposeA, .kind = XDEV_ATTR_BOOL, .doc = "use aᵀ", .required = false},
    {.name = attr::kTransposeB, .kind = XDEV_ATTR_BOOL, .doc = "use bᵀ", .required = false},
};
constexpr AttrDef kReduceAttrs[] = {
    {.name = attr::kAxes,
     .kind = XDEV_ATTR_INTS,
     .doc = "the axes to reduce: sorted, unique, < rank (the SDK maps negative axes, and none "
            "given to all)",
     .min = 0,
     .max = kMaxRank - 1},
    {.name = attr::kKeepdims, .kind = XDEV_ATTR_BOOL, .doc = "keep reduced axes as 1",
     .required = false},
};
constexpr AttrDef kCastAttrs[] = {
    {.name = attr::kDtype, .kind = XDEV_ATTR_DTYPE, .doc = "the output dtype"},
};
// A creation op's shape and dtype reach the kernel as its output tensor.
constexpr AttrDef kShapeAttr = {.name = attr::kShape,
                                .kind = XDEV_ATTR_INTS,
                                .doc = "the output shape",
                                .min = 0,
                                .to_kernel = false};
constexpr AttrDef kFillAttrs[] = {
    {.name = attr::kValue, .kind = XDEV_ATTR_FLOAT,
     .doc = "converted to the output dtype as `Cast` converts"},
    kShapeAttr,
    {.name = attr::kDtype, .kind = XDEV_ATTR_DTYPE, .doc = "the output dtype",
     .required = false, .default_dtype = DType::kFloat32, .to_kernel = false},
};
constexpr AttrDef kRandomUniformAttrs[] = {
    {.name = attr::kSeed, .kind = XDEV_ATTR_INT, .doc = "the generator's seed (any int64)"},
    {.name = attr::kMinval, .kind = XDEV_ATTR_FLOAT, .doc = "the interval's start, < maxval", .required = false,
     .default_float = 0.0, .finite = true},
    {.name = attr::kMaxval, .kind = XDEV_ATTR_FLOAT, .doc = "the interval's end", .required = false,
     .default_float = 1.0, .finite = true},
    kShapeAttr,
    {.name = attr::kDtype, .kind = XDEV_ATTR_DTYPE, .doc = "the output dtype",
     .required = false, .default_dtype = DType::kFloat32,
     .dtypes = kFloatDTypes & ~kHalfDTypes, .to_kernel = false},
};

constexpr AttrDef kLeakyReluAttrs[] = {
    {.name = attr::kAlpha, .kind = XDEV_ATTR_FLOAT, .doc = "the slope for x <= 0",
     .required = false, .default_float = 0.2, .finite = true},
};
constexpr AttrDef kGeluAttrs[] = {
    {.name = attr::kApproximate, .kind = XDEV_ATTR_BOOL,
     .doc = "false: the exact erf form; true: the tanh approximation", .required = false},
};

constexpr AttrDef kAxisAttr = {.name = attr::kAxis, .kind = XDEV_ATTR_INT,
                               .doc = "the axis, < rank (the SDK maps a negative axis)",
                               .min = 0, .max = kMaxRank - 1};
constexpr AttrDef kArgAttrs[] = {kAxisAttr};
constexpr AttrDef kCumSumAttrs[] = {
    kAxisAttr,
    {.name = attr::kExclusive, .kind = XDEV_ATTR_BOOL,
     .doc = "leave each element out of its own sum (the first is 0)", .required = false},
    {.name = attr::kReverse, .kind = XDEV_ATTR_BOOL, .doc = "sum from the end of the axis",
     .required = false},
};

constexpr AttrDef kConcatAttrs[] = {kAxisAttr};
constexpr AttrDef kGatherAttrs[] = {kAxisAttr};
constexpr AttrDef kPackAttrs[] = {
    {.name = attr::kAxis, .kind = XDEV_ATTR_INT,
     .doc = "the new axis, <= the inputs' rank (the SDK maps a negative axis)", .required = false,
     .min = 0, .max = kMaxRank - 1},
};

constexpr AttrDef kTileAttrs[] = {
    {.name = attr::kMultiples, .kind = XDEV_ATTR_INTS,
     .doc = "how many times to repeat each axis, one value >= 0 per axis", .min = 0},
};
constexpr AttrDef kPadAttrs[] = {
    {.name = attr::kPaddings, .kind = XDEV_ATTR_INTS,
     .doc = "before and after each axis, [rank, 2] row-major: before₀, after₀, before₁, …",
     .min = 0},
    {.name = attr::kConstantValues, .kind = XDEV_ATTR_FLOAT,
     .doc = "the value of the padding, converted to the dtype as `Cast` converts",
     .required = false, .default_float = 0.0},
};

constexpr AttrDef kSliceAttrs[] = {
    {.name = attr::kBegin, .kind = XDEV_ATTR_INTS,
     .doc = "where the window starts, one value >= 0 per axis", .min = 0},
    {.name = attr::kSize, .kind = XDEV_ATTR_INTS,
     .doc = "its size along each axis; -1: to the end of the axis", .min = -1},
};
// TensorFlow passes the masks as int32.
constexpr AttrDef mask_attr(const char* name, const char* doc) {
  return {.name = name, .kind = XDEV_ATTR_INT, .doc = doc, .required = false, .min = 0,
          .max = INT32_MAX};
}
constexpr AttrDef kStridedSliceAttrs[] = {
    {.name = attr::kBegin, .kind = XDEV_ATTR_INTS,
     .doc = "start of each entry (negative: from the end; clamped)"},
    {.name = attr::kEnd, .kind = XDEV_ATTR_INTS,
     .doc = "end of each entry, exclusive (negative: from the end; clamped)"},
    {.name = attr::kStrides, .kind = XDEV_ATTR_INTS,
     .doc = "step of each entry, not 0 (negative: backwards)"},
    mask_attr(attr::kBeginMask, "bit i: ignore begin[i] (from the start in the step's direction)"),
    mask_attr(attr::kEndMask, "bit i: ignore end[i] (to the end in the step's direction)"),
    mask_attr(attr::kEllipsisMask, "bit i: entry i is `...` (one bit at most)"),
    mask_attr(attr::kNewAxisMask, "bit i: entry i inserts an axis of size 1"),
    mask_attr(attr::kShrinkAxisMask, "bit i: entry i takes element begin[i] and drops the axis"),
};

constexpr AttrDef kRangeAttrs[] = {
    {.name = attr::kStart, .kind = XDEV_ATTR_FLOAT, .doc = "the first value", .finite = true},
    {.name = attr::kLimit, .kind = XDEV_ATTR_FLOAT, .doc = "the bound, not included",
     .finite = true},
    {.name = attr::kDelta, .kind = XDEV_ATTR_FLOAT,
     .doc = "the step, not 0, from start toward limit", .required = false, .default_float = 1.0,
     .finite = true},
    {.name = attr::kDtype, .kind = XDEV_ATTR_DTYPE,
     .doc = "the output dtype (integers: start, limit, delta integral, |v| <= 2^53)",
     .required = false, .default_dtype = DType::kFloat32,
     .dtypes = kNumberDTypes & ~kHalfDTypes, .to_kernel = false},
};
constexpr InputDef kOneHotInputs[] = {{"indices", kIntDTypes}};
constexpr AttrDef kOneHotAttrs[] = {
    {.name = attr::kDepth, .kind = XDEV_ATTR_INT, .doc = "the new axis' size", .min = 0},
    {.name = attr::kOnValue, .kind = XDEV_ATTR_FLOAT,
     .doc = "where the index is the position, converted as `Cast` converts", .required = false,
     .default_float = 1.0},
    {.name = attr::kOffValue, .kind = XDEV_ATTR_FLOAT, .doc = "everywhere else, converted too",
     .required = false, .default_float = 0.0},
    {.name = attr::kAxis, .kind = XDEV_ATTR_INT,
     .doc = "the new axis, <= the indices' rank (the SDK maps -1 to the end)", .min = 0,
     .max = kMaxRank},
    {.name = attr::kDtype, .kind = XDEV_ATTR_DTYPE, .doc = "the output dtype", .required = false,
     .default_dtype = DType::kFloat32, .to_kernel = false},
};

constexpr AttrDef kBroadcastToAttrs[] = {
    {.name = attr::kShape, .kind = XDEV_ATTR_INTS,
     .doc = "the output shape, which x's broadcasts to (NumPy rules)", .min = 0,
     .to_kernel = false},
};

// A data-movement op of any one dtype: one input, or (`variadic`) inputs
// that it joins.
constexpr OpDef data_op(OpId id, const char* name, const char* summary,
                        std::span<const AttrDef> attrs, ShapeClass shape_class, ShapeFn shape,
                        const char* output_doc, bool variadic = false) {
  return {.id = id,
          .name = name,
          .summary = summary,
          .inputs = variadic ? std::span<const InputDef>(kVariadicAnyX) : kAnyX,
          .variadic = variadic,
          .min_inputs = variadic ? 1 : 0,
          .attrs = attrs,
          .outputs = kOutputLikeInput,
          .shape_class = shape_class,
          .shape = shape,
          .output_doc = output_doc};
}

// An op along one axis of its input.
constexpr OpDef along_axis(OpId id, const char* name, const char* summary,
                           std::span<const AttrDef> attrs, std::span<const OutputDef> outputs,
                           const char* output_doc, std::span<const InputDef> inputs = kNumberX) {
  return {.id = id,
          .name = name,
          .summary = summary,
          .inputs = inputs,
          .attrs = attrs,
          .outputs = outputs,
          .shape_class = ShapeClass::kAxis,
          .shape = axis_shape,
          .output_doc = output_doc};
}

// An elementwise op of one input (LeakyRelu and Gelu take attributes).
constexpr OpDef unary(OpId id, const char* name, const char* summary,
                      std::span<const InputDef> inputs = kNumberX,
                      std::span<const AttrDef> attrs = {}) {
  return {.id = id,
          .name = name,
          .summary = summary,
          .inputs = inputs,
          .attrs = attrs,
          .outputs = kOutputLikeInput,
          .shape_class = ShapeClass::kSame,
          .shape = same_shape,
          .output_doc = "shape of `x`"};
}

// An elementwise op of two inputs, broadcast (NumPy rules).
constexpr OpDef binary(OpId id, const char* name, const char* summary,
                       std::span<const InputDef> inputs = kNumberXY) {
  return {.id = id,
          .name = name,
          .summary = summary,
          .inputs = inputs,
          .outputs = kOutputLikeInput,
          .shape_class = ShapeClass::kBroadcast,
          .shape = broadcast_shape,
          .output_doc = "the broadcast shape (NumPy rules)",
          .broadcast_inputs = true};
}

// An elementwise comparison of two inputs, broadcast: a bool output.
constexpr OpDef comparison(OpId id, const char* name, const char* summary,
                           std::span<const InputDef> inputs = kNumberXY) {
  OpDef def = binary(id, name, summary, inputs);
  def.outputs = kBoolOutput;
  return def;
}

// An elementwise test of one input: a bool output of its shape.
constexpr OpDef predicate(OpId id, const char* name, const char* summary,
                          std::span<const InputDef> inputs) {
  OpDef def = unary(id, name, summary, inputs);
  def.outputs = kBoolOutput;
  return def;
}

// A reduction over `axes`.
constexpr OpDef reduction(OpId id, const char* name, const char* summary,
                          std::span<const InputDef> inputs = kNumberX) {
  return {.id = id,
          .name = name,
          .summary = summary,
          .inputs = inputs,
          .attrs = kReduceAttrs,
          .outputs = kOutputLikeInput,
          .shape_class = ShapeClass::kReduce,
          .shape = reduce_shape,
          .output_doc = "`x`'s shape without `axes` (1 there when `keepdims`)"};
}

// --- the entries: one per op of XDEV_OPS, named k<Op>Def ------------------------------

constexpr OpDef kMatMulDef = {.id = OpId::kMatMul,
                              .name = "MatMul",
                              .summary = "matrix product op(a) · op(b), op(x) = x or xᵀ",
                              .inputs = kMatMulInputs,
                              .attrs = kMatMulAttrs,
                              .outputs = kOutputLikeInput,
                              .shape_class = ShapeClass::kMatMul,
                              .shape = matmul_shape,
                              .output_doc = "`[M, N]` where `op(a)` is `[M, K]`, `op(b)` is `[K, N]`",
                              .contiguous_inputs = true};
constexpr OpDef kAddDef = binary(OpId::kAdd, "Add", "x + y (bool: logical or)", kAddXY);
constexpr OpDef kSubDef = binary(OpId::kSub, "Sub", "x - y", kArithXY);
constexpr OpDef kMulDef = binary(OpId::kMul, "Mul", "x · y", kArithXY);
constexpr OpDef kDivDef =
    binary(OpId::kDiv, "Div", "x / y (integers: toward zero; a zero divisor is an error)",
           kArithXY);
constexpr OpDef kNegDef = unary(OpId::kNeg, "Neg", "-x", kSignedX);
constexpr OpDef kReluDef = unary(OpId::kRelu, "Relu", "x > 0 ? x : 0", kArithX);
constexpr OpDef kAddNDef = {.id = OpId::kAddN,
                            .name = "AddN",
                            .summary = "x0 + x1 + …",
                            .inputs = kVariadicArithX,
                            .variadic = true,
                            .min_inputs = 1,
                            .outputs = kOutputLikeInput,
                            .shape_class = ShapeClass::kSame,
                            .shape = same_shape,
                            .output_doc = "the inputs' shape"};
constexpr OpDef kCastDef = {.id = OpId::kCast,
                            .name = "Cast",
                            .summary = "x converted to `dtype` (see below)",
                            .inputs = kAnyX,
                            .attrs = kCastAttrs,
                            .outputs = kOutputOfDtypeAttr,
                            .shape_class = ShapeClass::kSame,
                            .shape = same_shape,
                            .output_doc = "shape of `x`, dtype `dtype`"};
constexpr OpDef kSumDef = reduction(OpId::kSum, "Sum", "sum over `axes`", kArithX);
constexpr OpDef kMeanDef = reduction(OpId::kMean, "Mean", "mean over `axes`", kArithX);
constexpr OpDef kCopyDef = unary(OpId::kCopy, "Copy", "a contiguous copy of x (any strides)", kAnyX);
constexpr OpDef kFillDef = {.id = OpId::kFill,
                            .name = "Fill",
                            .summary = "every element `value`",
                            .attrs = kFillAttrs,
                            .outputs = kOutputOfDtypeAttr,
                            .shape_class = ShapeClass::kFromAttr,
                            .shape = attr_shape,
                            .output_doc = "`shape`, dtype `dtype`"};
constexpr OpDef kRandomUniformDef = {.id = OpId::kRandomUniform,
                                     .name = "RandomUniform",
                                     .summary = "uniform in [minval, maxval), bit-exact (see "
                                                "below)",
                                     .attrs = kRandomUniformAttrs,
                                     .outputs = kOutputOfDtypeAttr,
                                     .shape_class = ShapeClass::kFromAttr,
                                     .shape = random_uniform_shape,
                                     .output_doc = "`shape`, dtype `dtype`"};

// Elementwise math: docs/ops.md "Semantics" defines the edge cases.
constexpr OpDef kAbsDef = unary(OpId::kAbs, "Abs", "|x| (integers: MIN stays MIN)", kSignedX);
constexpr OpDef kSignDef = unary(OpId::kSign, "Sign", "-1, 0 or 1 by the sign of x (floats: ±0 and NaN stay)",
                                kSignedX);
constexpr OpDef kSquareDef = unary(OpId::kSquare, "Square", "x · x (integers wrap)", kArithX);
constexpr OpDef kExpDef = unary(OpId::kExp, "Exp", "eˣ", kFloatX);
constexpr OpDef kExpm1Def = unary(OpId::kExpm1, "Expm1", "eˣ - 1, accurate near 0", kFloatX);
constexpr OpDef kLogDef = unary(OpId::kLog, "Log", "ln x (x < 0: NaN, 0: -inf)", kFloatX);
constexpr OpDef kLog1pDef = unary(OpId::kLog1p, "Log1p", "ln(1 + x), accurate near 0", kFloatX);
constexpr OpDef kSqrtDef = unary(OpId::kSqrt, "Sqrt", "√x (x < 0: NaN)", kFloatX);
constexpr OpDef kRsqrtDef = unary(OpId::kRsqrt, "Rsqrt", "1 / √x", kFloatX);
constexpr OpDef kReciprocalDef = unary(OpId::kReciprocal, "Reciprocal", "1 / x", kFloatX);
constexpr OpDef kSinDef = unary(OpId::kSin, "Sin", "sin x", kFloatX);
constexpr OpDef kCosDef = unary(OpId::kCos, "Cos", "cos x", kFloatX);
constexpr OpDef kTanhDef = unary(OpId::kTanh, "Tanh", "tanh x", kFloatX);
constexpr OpDef kSigmoidDef = unary(OpId::kSigmoid, "Sigmoid", "1 / (1 + e⁻ˣ)", kFloatX);
constexpr OpDef kErfDef = unary(OpId::kErf, "Erf", "the error function erf x", kFloatX);
constexpr OpDef kSoftplusDef =
    unary(OpId::kSoftplus, "Softplus", "ln(1 + eˣ), without overflow for large x", kFloatX);
constexpr OpDef kFloorDef = unary(OpId::kFloor, "Floor", "the largest integer ≤ x", kFloatX);
constexpr OpDef kCeilDef = unary(OpId::kCeil, "Ceil", "the smallest integer ≥ x", kFloatX);
constexpr OpDef kRoundDef =
    unary(OpId::kRound, "Round", "x rounded to the nearest integer, halves to even", kFloatX);
constexpr OpDef kLeakyReluDef = unary(OpId::kLeakyRelu, "LeakyRelu", "x > 0 ? x : alpha · x",
                                      kFloatX, kLeakyReluAttrs);
constexpr OpDef kGeluDef =
    unary(OpId::kGelu, "Gelu", "x · Φ(x) (erf form, or its tanh approximation)", kFloatX,
          kGeluAttrs);
constexpr OpDef kPowDef = binary(OpId::kPow, "Pow", "xʸ (C pow: a negative x to a non-integer y is NaN)", kFloatXY);
constexpr OpDef kMaximumDef = binary(OpId::kMaximum, "Maximum", "max(x, y), NaN if either is NaN",
                                      kArithXY);
constexpr OpDef kMinimumDef = binary(OpId::kMinimum, "Minimum", "min(x, y), NaN if either is NaN",
                                      kArithXY);
constexpr OpDef kFloorDivDef = binary(OpId::kFloorDiv, "FloorDiv",
                                      "⌊x / y⌋ (integers: a zero divisor is an error)", kArithXY);
constexpr OpDef kFloorModDef =
    binary(OpId::kFloorMod, "FloorMod",
           "x - ⌊x / y⌋ · y, the sign of y (integers: a zero divisor is an error)", kArithXY);
constexpr OpDef kSquaredDifferenceDef =
    binary(OpId::kSquaredDifference, "SquaredDifference", "(x - y)²");

// Comparisons and logic: bool results; docs/ops.md "Semantics"
// says what NaN compares to.
constexpr OpDef kEqualDef = comparison(OpId::kEqual, "Equal", "x == y (NaN: false)", kAnyXY);
constexpr OpDef kNotEqualDef =
    comparison(OpId::kNotEqual, "NotEqual", "x != y (NaN: true)", kAnyXY);
constexpr OpDef kLessDef = comparison(OpId::kLess, "Less", "x < y (NaN: false)", kArithXY);
constexpr OpDef kLessEqualDef = comparison(OpId::kLessEqual, "LessEqual", "x <= y (NaN: false)",
                                          kArithXY);
constexpr OpDef kGreaterDef = comparison(OpId::kGreater, "Greater", "x > y (NaN: false)", kArithXY);
constexpr OpDef kGreaterEqualDef =
    comparison(OpId::kGreaterEqual, "GreaterEqual", "x >= y (NaN: false)", kArithXY);
constexpr OpDef kLogicalAndDef = binary(OpId::kLogicalAnd, "LogicalAnd", "x and y", kBoolXY);
constexpr OpDef kLogicalOrDef = binary(OpId::kLogicalOr, "LogicalOr", "x or y", kBoolXY);
constexpr OpDef kLogicalNotDef = unary(OpId::kLogicalNot, "LogicalNot", "not x", kBoolX);
constexpr OpDef kIsNanDef = predicate(OpId::kIsNan, "IsNan", "x is NaN", kFloatX);
constexpr OpDef kIsFiniteDef =
    predicate(OpId::kIsFinite, "IsFinite", "x is neither infinite nor NaN", kFloatX);
constexpr OpDef kSelectDef = [] {
  OpDef def = binary(OpId::kSelect, "Select",
                     "condition ? x : y, element by element (TF SelectV2)", kSelectInputs);
  def.outputs = kOutputLikeInput1;
  def.output_doc = "the broadcast shape of the three inputs (NumPy rules), dtype of `x`";
  return def;
}();
constexpr OpDef kClipByValueDef = [] {
  OpDef def = binary(OpId::kClipByValue, "ClipByValue",
                     "min(max(x, clip_value_min), clip_value_max) (NaN x stays NaN)", kClipInputs);
  def.output_doc = "the broadcast shape of the three inputs (NumPy rules)";
  return def;
}();

// Reductions: docs/ops.md "Semantics" gives each one's value over
// zero elements.
constexpr OpDef kMaxDef = reduction(OpId::kMax, "Max", "maximum over `axes` (NaN if any is NaN)",
                                    kArithX);
constexpr OpDef kMinDef = reduction(OpId::kMin, "Min", "minimum over `axes` (NaN if any is NaN)",
                                    kArithX);
constexpr OpDef kProdDef = reduction(OpId::kProd, "Prod", "product over `axes`", kArithX);
constexpr OpDef kAnyDef = reduction(OpId::kAny, "Any", "logical or over `axes`", kBoolX);
constexpr OpDef kAllDef = reduction(OpId::kAll, "All", "logical and over `axes`", kBoolX);
constexpr OpDef kLogSumExpDef =
    reduction(OpId::kLogSumExp, "LogSumExp", "ln Σ eˣ over `axes`, computed stably", kFloatX);
constexpr OpDef kArgMaxDef =
    along_axis(OpId::kArgMax, "ArgMax", "index of the largest element along `axis` (the first; NaN wins)",
               kArgAttrs, kInt64Output, "`x`'s shape without `axis`, int64", kArgX);
constexpr OpDef kArgMinDef =
    along_axis(OpId::kArgMin, "ArgMin", "index of the smallest element along `axis` (the first; NaN wins)",
               kArgAttrs, kInt64Output, "`x`'s shape without `axis`, int64", kArgX);
constexpr OpDef kCumSumDef =
    along_axis(OpId::kCumSum, "CumSum", "running sum along `axis` (TF: `exclusive`, `reverse`)",
               kCumSumAttrs, kOutputLikeInput, "shape of `x`", kArithX);

// Normalisations along one axis (NN). Both subtract the line's
// maximum first, so large logits do not overflow.
constexpr OpDef kSoftmaxDef =
    along_axis(OpId::kSoftmax, "Softmax", "eˣ / Σ eˣ along `axis`, computed stably", kArgAttrs,
               kOutputLikeInput, "shape of `x`", kFloatX);
constexpr OpDef kLogSoftmaxDef =
    along_axis(OpId::kLogSoftmax, "LogSoftmax", "x − ln Σ eˣ along `axis`, computed stably",
               kArgAttrs, kOutputLikeInput, "shape of `x`", kFloatX);
// Data movement: TensorFlow's raw ops; any dtype, values copied
// bit for bit.
constexpr OpDef kConcatV2Def =
    data_op(OpId::kConcatV2, "ConcatV2", "x0, x1, … joined along `axis` (tf.concat)", kConcatAttrs,
            ShapeClass::kConcat, concat_shape, "the inputs' shape, `axis` the sum of theirs", true);
constexpr OpDef kPackDef =
    data_op(OpId::kPack, "Pack", "x0, x1, … stacked along a new `axis` (tf.stack)", kPackAttrs,
            ShapeClass::kStack, stack_shape,
            "the inputs' shape with the number of inputs inserted at `axis`", true);
constexpr OpDef kIdentityDef =
    unary(OpId::kIdentity, "Identity", "x, copied (any strides; a new tensor)", kAnyX);

constexpr OpDef kTileDef =
    data_op(OpId::kTile, "Tile", "x repeated `multiples[k]` times along each axis k", kTileAttrs,
            ShapeClass::kTile, tile_shape, "`x`'s shape, axis k times `multiples[k]`");
constexpr OpDef kPadV2Def =
    data_op(OpId::kPadV2, "PadV2",
            "x with `constant_values` added before and after each axis (tf.pad, mode CONSTANT)",
            kPadAttrs, ShapeClass::kPad, pad_shape, "`x`'s shape, axis k plus its two paddings");

constexpr OpDef kGatherV2Def = [] {
  OpDef def = data_op(OpId::kGatherV2, "GatherV2",
                      "slices of params along `axis` picked by indices (tf.gather; an index out "
                      "of range is an error)",
                      kGatherAttrs, ShapeClass::kGather, gather_shape,
                      "params' shape, `axis` replaced by the indices' shape");
  def.inputs = kGatherInputs;
  def.contiguous_inputs = true;
  return def;
}();

// NN ops: TensorFlow's raw ops. Float math accumulates in double
// (docs/ops.md "Semantics").
constexpr const char* kDataFormats[] = {"NHWC", "NCHW"};
constexpr InputDef kBiasAddInputs[] = {{"value", kFloatDTypes}, {"bias", kFloatDTypes, 0}};
constexpr AttrDef kBiasAddAttrs[] = {
    {.name = attr::kDataFormat, .kind = XDEV_ATTR_STRING,
     .doc = "NHWC: bias along the last axis; NCHW: along axis 1", .required = false,
     .choices = kDataFormats},
};
constexpr OpDef kBiasAddDef = {.id = OpId::kBiasAdd,
                               .name = "BiasAdd",
                               .summary = "value + bias along the channel axis (tf.nn.bias_add)",
                               .inputs = kBiasAddInputs,
                               .attrs = kBiasAddAttrs,
                               .outputs = kOutputLikeInput,
                               .shape_class = ShapeClass::kBiasAdd,
                               .shape = bias_add_shape,
                               .output_doc = "shape of `value`",
                               .contiguous_inputs = true};

constexpr InputDef kXentInputs[] = {{"features", kFloatDTypes}, {"labels", kFloatDTypes, 0}};
constexpr OutputDef kXentOutputs[] = {{"loss"}, {"backprop"}};
constexpr OpDef kSoftmaxCrossEntropyWithLogitsDef = {
    .id = OpId::kSoftmaxCrossEntropyWithLogits,
    .name = "SoftmaxCrossEntropyWithLogits",
    .summary = "loss = −Σ labels · log softmax(features) per row; backprop = softmax(features) "
               "− labels",
    .inputs = kXentInputs,
    .outputs = kXentOutputs,
    .shape_class = ShapeClass::kXent,
    .shape = xent_shape,
    .output_doc = "loss `[batch]`, backprop `[batch, classes]` (the broadcast shape)",
    .contiguous_inputs = true};

constexpr InputDef kLayerNormInputs[] = {
    {"x", kFloatDTypes}, {"gamma", kFloatDTypes, 0}, {"beta", kFloatDTypes, 0}};
constexpr AttrDef kLayerNormAttrs[] = {
    {.name = attr::kBeginNormAxis, .kind = XDEV_ATTR_INT,
     .doc = "the first normalised axis, < rank (the SDK maps a negative one)", .min = 0,
     .max = kMaxRank - 1},
    {.name = attr::kEpsilon, .kind = XDEV_ATTR_FLOAT, .doc = "added to the variance, >= 0",
     .required = false, .default_float = 1e-3, .finite = true},
};
constexpr OpDef kLayerNormDef = {
    .id = OpId::kLayerNorm,
    .name = "LayerNorm",
    .summary = "(x − mean) / √(variance + epsilon) · gamma + beta over the axes from "
               "`begin_norm_axis`",
    .inputs = kLayerNormInputs,
    .attrs = kLayerNormAttrs,
    .outputs = kOutputLikeInput,
    .shape_class = ShapeClass::kLayerNorm,
    .shape = layer_norm_shape,
    .output_doc = "shape of `x`",
    .contiguous_inputs = true};
// Slicing: TensorFlow's raw ops. The SDK returns views for
// them where the strides allow (ops.hpp); the kernels copy.
constexpr OpDef kSliceDef =
    data_op(OpId::kSlice, "Slice", "the window of x at `begin` of `size` (tf.slice)", kSliceAttrs,
            ShapeClass::kSlice, slice_shape, "`size` (-1: `x`'s dimension minus `begin`)");
// TensorFlow's masks and bounds as <xdev/strided_slice.hpp> reads them.
constexpr OpDef kStridedSliceDef =
    data_op(OpId::kStridedSlice, "StridedSlice",
            "x[begin:end:strides] with TF's masks (tf.strided_slice; negative strides reverse)",
            kStridedSliceAttrs, ShapeClass::kStridedSlice, strided_slice_shape,
            "one axis per entry that is not shrunk (new axes: 1), then the axes the entries "
            "did not reach");

// Creation from attributes and indices: TensorFlow's raw ops.
constexpr OpDef kRangeDef = [] {
  OpDef def = data_op(OpId::kRange, "Range",
                      "start, start + delta, … up to limit, not included (tf.range)", kRangeAttrs,
                      ShapeClass::kRange, range_shape,
                      "`[⌈(limit - start) / delta⌉]`, dtype `dtype`");
  def.inputs = {};
  def.outputs = kOutputOfDtypeAttr;
  return def;
}();
constexpr OpDef kOneHotDef = [] {
  OpDef def = data_op(OpId::kOneHot, "OneHot",
                      "on_value where the index equals the position along `axis`, else "
                      "off_value (tf.one_hot; an index out of [0, depth) gives a row of "
                      "off_value)",
                      kOneHotAttrs, ShapeClass::kOneHot, one_hot_shape,
                      "the indices' shape with `depth` inserted at `axis`, dtype `dtype`");
  def.inputs = kOneHotInputs;
  def.outputs = kOutputOfDtypeAttr;
  def.contiguous_inputs = true;
  return def;
}();

// The broadcast as a new dense tensor (the SDK's broadcast_to is a view).
constexpr OpDef kBroadcastToDef =
    data_op(OpId::kBroadcastTo, "BroadcastTo",
            "x broadcast to `shape`, copied into a dense tensor (tf.broadcast_to)",
            kBroadcastToAttrs, ShapeClass::kBroadcastTo, broadcast_to_shape, "`shape`");

// Conv2D and pooling: TensorFlow's raw ops, windows as
// xdev/window_geometry.hpp computes them.
constexpr const char* kPaddings[] = {"SAME", "VALID"};
constexpr AttrDef kStridesAttr = {
    .name = attr::kStrides, .kind = XDEV_ATTR_INTS,
    .doc = "window steps: (height, width), or 4 in data_format order with 1 for batch, channels",
    .min = 1};
constexpr AttrDef kPaddingAttr = {
    .name = attr::kPadding, .kind = XDEV_ATTR_STRING,
    .doc = "VALID: no padding; SAME: out = ceil(in / stride), padding split with the odd one after",
    .choices = kPaddings};
constexpr AttrDef kImageFormatAttr = {
    .name = attr::kDataFormat, .kind = XDEV_ATTR_STRING,
    .doc = "NHWC: [batch, height, width, channels]; NCHW: [batch, channels, height, width]",
    .required = false, .choices = kDataFormats};
constexpr AttrDef kDilationsAttr = {
    .name = attr::kDilations, .kind = XDEV_ATTR_INTS,
    .doc = "steps between filter taps, like strides; none: (1, 1)", .required = false, .min = 1};
constexpr AttrDef kKsizeAttr = {
    .name = attr::kKsize, .kind = XDEV_ATTR_INTS,
    .doc = "window size, like strides", .min = 1};
constexpr AttrDef kConvAttrs[] = {kStridesAttr, kPaddingAttr, kDilationsAttr, kImageFormatAttr};
constexpr AttrDef kConvInputAttrs[] = {
    {.name = attr::kInputSizes, .kind = XDEV_ATTR_INTS,
     .doc = "the shape of Conv2D's input (4 values in data_format order)", .min = 0},
    kStridesAttr, kPaddingAttr, kDilationsAttr, kImageFormatAttr};
constexpr AttrDef kConvFilterAttrs[] = {
    {.name = attr::kFilterSizes, .kind = XDEV_ATTR_INTS,
     .doc = "the shape of Conv2D's filter [height, width, in_channels, out_channels]", .min = 0},
    kStridesAttr, kPaddingAttr, kDilationsAttr, kImageFormatAttr};
constexpr AttrDef kPoolAttrs[] = {kKsizeAttr, kStridesAttr, kPaddingAttr, kImageFormatAttr};
constexpr AttrDef kAvgPoolGradAttrs[] = {
    {.name = attr::kOrigInputShape, .kind = XDEV_ATTR_INTS,
     .doc = "the shape of AvgPool's input (4 values in data_format order)", .min = 0},
    kKsizeAttr, kStridesAttr, kPaddingAttr, kImageFormatAttr};

constexpr InputDef kConvInputs[] = {{"input", kFloatDTypes}, {"filter", kFloatDTypes, 0}};
constexpr InputDef kConvInputGradInputs[] = {{"filter", kFloatDTypes},
                                             {"out_backprop", kFloatDTypes, 0}};
constexpr InputDef kConvFilterGradInputs[] = {{"input", kFloatDTypes},
                                              {"out_backprop", kFloatDTypes, 0}};
constexpr InputDef kPoolInputs[] = {{"input", kFloatDTypes}};
constexpr InputDef kMaxPoolGradInputs[] = {
    {"orig_input", kFloatDTypes}, {"orig_output", kFloatDTypes, 0}, {"grad", kFloatDTypes, 0}};
constexpr InputDef kAvgPoolGradInputs[] = {{"grad", kFloatDTypes}};

constexpr OpDef image_op(OpId id, const char* name, const char* summary,
                         std::span<const InputDef> inputs, std::span<const AttrDef> attrs,
                         ShapeClass shape_class, ShapeFn shape, const char* output_doc) {
  return {.id = id,
          .name = name,
          .summary = summary,
          .inputs = inputs,
          .attrs = attrs,
          .outputs = kOutputLikeInput,
          .shape_class = shape_class,
          .shape = shape,
          .output_doc = output_doc,
          .contiguous_inputs = true};
}

constexpr OpDef kConv2DDef = image_op(
    OpId::kConv2D, "Conv2D",
    "2-d convolution (cross-correlation) of input with filter [KH, KW, Cin, Cout] (tf.nn.conv2d)",
    kConvInputs, kConvAttrs, ShapeClass::kConv2D, conv2d_shape,
    "[N, OH, OW, Cout] (NCHW: [N, Cout, OH, OW])");
constexpr OpDef kConv2DBackpropInputDef = image_op(
    OpId::kConv2DBackpropInput, "Conv2DBackpropInput",
    "the gradient of Conv2D with respect to its input", kConvInputGradInputs, kConvInputAttrs,
    ShapeClass::kConv2DBackpropInput, conv2d_backprop_input_shape, "`input_sizes`");
constexpr OpDef kConv2DBackpropFilterDef = image_op(
    OpId::kConv2DBackpropFilter, "Conv2DBackpropFilter",
    "the gradient of Conv2D with respect to its filter", kConvFilterGradInputs, kConvFilterAttrs,
    ShapeClass::kConv2DBackpropFilter, conv2d_backprop_filter_shape, "`filter_sizes`");
constexpr OpDef kMaxPoolDef = image_op(
    OpId::kMaxPool, "MaxPool", "the maximum of each window (NaN if the window has one)",
    kPoolInputs, kPoolAttrs, ShapeClass::kPool, pool_shape, "[N, OH, OW, C] (NCHW: [N, C, OH, OW])");
constexpr OpDef kAvgPoolDef = image_op(
    OpId::kAvgPool, "AvgPool",
    "the mean of each window's elements inside the input (padding not counted)", kPoolInputs,
    kPoolAttrs, ShapeClass::kPool, pool_shape, "[N, OH, OW, C] (NCHW: [N, C, OH, OW])");
constexpr OpDef kMaxPoolGradDef = image_op(
    OpId::kMaxPoolGrad, "MaxPoolGrad",
    "grad routed to the first maximum of orig_input in each window (row-major window order)",
    kMaxPoolGradInputs, kPoolAttrs, ShapeClass::kMaxPoolGrad, max_pool_grad_shape,
    "shape of `orig_input`");
constexpr OpDef kAvgPoolGradDef = image_op(
    OpId::kAvgPoolGrad, "AvgPoolGrad",
    "grad spread evenly over each window's elements inside the input", kAvgPoolGradInputs,
    kAvgPoolGradAttrs, ShapeClass::kAvgPoolGrad, avg_pool_grad_shape, "`orig_input_shape`");

// Batched products and scatters: TensorFlow's raw ops.
constexpr AttrDef kBatchMatMulAttrs[] = {
    {.name = attr::kAdjX, .kind = XDEV_ATTR_BOOL, .doc = "swap x's last two axes",
     .required = false},
    {.name = attr::kAdjY, .kind = XDEV_ATTR_BOOL, .doc = "swap y's last two axes",
     .required = false},
};
constexpr InputDef kBatchMatMulInputs[] = {{"x", kNumberDTypes}, {"y", kNumberDTypes, 0}};
constexpr OpDef kBatchMatMulV2Def = {
    .id = OpId::kBatchMatMulV2,
    .name = "BatchMatMulV2",
    .summary = "matrix product of the last two axes, batch axes broadcast (tf.linalg.matmul)",
    .inputs = kBatchMatMulInputs,
    .attrs = kBatchMatMulAttrs,
    .outputs = kOutputLikeInput,
    .shape_class = ShapeClass::kBatchMatMul,
    .shape = batch_matmul_shape,
    .output_doc = "`[batch..., M, N]`: the broadcast batch axes, then `[M, N]` where "
                  "`op(x)` is `[..., M, K]`, `op(y)` `[..., K, N]`",
    .contiguous_inputs = true};
constexpr InputDef kScatterInputs[] = {
    {"tensor", kArithmeticDTypes}, {"indices", kIntDTypes}, {"updates", kArithmeticDTypes, 0}};
constexpr OpDef kTensorScatterAddDef = {
    .id = OpId::kTensorScatterAdd,
    .name = "TensorScatterAdd",
    .summary = "tensor with each slice of updates added at its index (tf.tensor_scatter_nd_add; "
               "duplicates accumulate, an index out of range is an error)",
    .inputs = kScatterInputs,
    .outputs = kOutputLikeInput,
    .shape_class = ShapeClass::kScatter,
    .shape = scatter_shape,
    .output_doc = "shape of `tensor`",
    .contiguous_inputs = true};

#define XDEV_OP_DEF(name) k##name##Def,
constexpr OpDef kDefs[] = {XDEV_OPS(XDEV_OP_DEF)};
#undef XDEV_OP_DEF

#define XDEV_OP_NAME(name) #name,
constexpr const char* kNames[] = {XDEV_OPS(XDEV_OP_NAME)};
#undef XDEV_OP_NAME

// Every entry is where its OpId says, under the name XDEV_OPS gives it, and
// fits the capacities of one call.
constexpr bool table_is_consistent() {
  if (std::size(kDefs) != static_cast<size_t>(kOpCount)) return false;
  for (size_t i = 0; i < std::size(kDefs); ++i) {
    const OpDef& d = kDefs[i];
    if (static_cast<size_t>(d.id) != i) return false;
    if (std::string_view(d.name) != kNames[i]) return false;
    if (d.attrs.size() > kMaxOpAttrs) return false;
    if (d.outputs.empty() || d.outputs.size() > kMaxOpOutputs) return false;
    if (d.shape == nullptr || d.summary == nullptr || d.output_doc == nullptr) return false;
    if (d.variadic && d.inputs.empty()) return false;
    for (const AttrDef& a : d.attrs) {
      if (a.kind == XDEV_ATTR_STRING && a.choices.empty()) return false;
    }
    for (const InputDef& in : d.inputs) {
      if (in.dtypes == 0 || (in.dtypes & ~kAllDTypes) != 0) return false;
    }
    for (const OutputDef& out : d.outputs) {
      if (out.dtype_rule == DTypeRule::kInput && static_cast<size_t>(out.input) >= d.inputs.size())
        return false;
      if (out.dtype_rule == DTypeRule::kAttr) {
        bool found = false;
        for (const AttrDef& a : d.attrs) {
          found = found || (std::string_view(a.name) == out.attr && a.kind == XDEV_ATTR_DTYPE);
        }
        if (!found) return false;
      }
    }
  }
  return true;
}
static_assert(table_is_consistent(),
              "the op table is inconsistent: an entry out of XDEV_OPS order, a name that is not "
              "its XDEV_OPS name, too many attributes or outputs, or a dtype rule naming an "
              "input or attribute the op lacks");

std::string input_name(const OpDef& def, size_t i) {
  if (def.variadic && i + 1 >= def.inputs.size()) return "input " + std::to_string(i);
  return def.input(i).name;
}

std::string range_text(const AttrDef& a) {
  if (a.max == INT64_MAX) return ">= " + std::to_string(a.min);
  return "in [" + std::to_string(a.min) + ", " + std::to_string(a.max) + "]";
}

// The position of `value` among a string attribute's choices, or -1 (NULL
// included). An attribute without choices takes any string.
int choice_index(const AttrDef& a, const char* value) {
  if (value == nullptr) return -1;
  if (a.choices.empty()) return 0;
  for (size_t k = 0; k < a.choices.size(); ++k) {
    if (std::strcmp(a.choices[k], value) == 0) return static_cast<int>(k);
  }
  return -1;
}

std::string choices_text(const AttrDef& a) {
  std::string text;
  for (size_t k = 0; k < a.choices.size(); ++k) text += (k ? ", " : "") + std::string(a.choices[k]);
  return text;
}

// One given attribute against its definition, quickly: true when it is fine
// (check_attr then says what is wrong).
inline bool attr_fits(const AttrDef& a, const xdev_attr_t& v) {
  if (v.kind != a.kind) return false;
  switch (a.kind) {
    case XDEV_ATTR_BOOL: return v.value.b == 0 || v.value.b == 1;
    case XDEV_ATTR_INT: return v.value.i >= a.min && v.value.i <= a.max;
    case XDEV_ATTR_FLOAT: return !a.finite || std::isfinite(v.value.f);
    case XDEV_ATTR_DTYPE: {
      const DType dtype = given_dtype(v);
      return is_valid(dtype) && (a.dtypes & dtype_bit(dtype)) != 0;
    }
    case XDEV_ATTR_INTS: {
      if (v.value.ints.count < 0 || (v.value.ints.count > 0 && v.value.ints.values == nullptr)) {
        return false;
      }
      for (int64_t k = 0; k < v.value.ints.count; ++k) {
        if (v.value.ints.values[k] < a.min || v.value.ints.values[k] > a.max) return false;
      }
      return true;
    }
    case XDEV_ATTR_STRING: return choice_index(a, v.value.s) >= 0;
  }
  return false;
}

// One given attribute against its definition; throws naming what is wrong.
void check_attr(const OpDef& def, const AttrDef& a, const xdev_attr_t& v) {
  auto what = [&] { return std::string("attribute '") + a.name + "'"; };  // only on errors
  if (v.kind != a.kind) {
    throw_invalid(def, what() + " is given as " + attr_kind_name(v.kind) + "; it is " +
                           attr_kind_name(a.kind));
  }
  switch (a.kind) {
    case XDEV_ATTR_BOOL:
      if (v.value.b != 0 && v.value.b != 1) {
        throw_invalid(def, what() + " is " + std::to_string(v.value.b) + ", not 0 or 1");
      }
      break;
    case XDEV_ATTR_INT:
      if (v.value.i < a.min || v.value.i > a.max) {
        throw_invalid(def, what() + " is " + std::to_string(v.value.i) + "; it must be " +
                               range_text(a));
      }
      break;
    case XDEV_ATTR_FLOAT:
      if (a.finite && !std::isfinite(v.value.f)) {
        std::ostringstream text;
        text << v.value.f;
        throw_invalid(def, what() + " is " + text.str() + "; it must be finite");
      }
      break;
    case XDEV_ATTR_DTYPE: {
      const DType dtype = given_dtype(v);
      if (!is_valid(dtype) || (a.dtypes & dtype_bit(dtype)) == 0) {
        throw_invalid(def, what() + " is " +
                               (is_valid(dtype) ? std::string(to_string(dtype))
                                                : "dtype code " + std::to_string(static_cast<int32_t>(dtype))) +
                               "; it must be one of " + dtype_set_text(a.dtypes));
      }
      break;
    }
    case XDEV_ATTR_INTS: {
      if (v.value.ints.count < 0 || (v.value.ints.count > 0 && v.value.ints.values == nullptr)) {
        throw_invalid(def, what() + " has " + std::to_string(v.value.ints.count) +
                               " values at NULL");
      }
      for (int64_t k = 0; k < v.value.ints.count; ++k) {
        const int64_t x = v.value.ints.values[k];
        if (x < a.min || x > a.max) {
          std::string list;
          for (int64_t j = 0; j < v.value.ints.count; ++j) {
            list += (j ? ", " : "") + std::to_string(v.value.ints.values[j]);
          }
          throw_invalid(def, what() + " is {" + list + "}: value " + std::to_string(k) + " (" +
                                 std::to_string(x) + ") must be " + range_text(a));
        }
      }
      break;
    }
    case XDEV_ATTR_STRING:
      if (v.value.s == nullptr) throw_invalid(def, what() + " is a NULL string");
      throw_invalid(def, what() + " is \"" + v.value.s + "\"; it must be one of " +
                             choices_text(a));
  }
}

// The attribute `a` as the kernel gets it: given, else the default.
xdev_attr_t kernel_attr(const AttrDef& a, const xdev_attr_t* given) {
  if (given != nullptr) return *given;
  xdev_attr_t v{};
  v.name = a.name;
  v.kind = a.kind;
  switch (a.kind) {
    case XDEV_ATTR_BOOL: v.value.b = a.default_bool ? 1 : 0; break;
    case XDEV_ATTR_INT: v.value.i = a.default_int; break;
    case XDEV_ATTR_FLOAT: v.value.f = a.default_float; break;
    case XDEV_ATTR_DTYPE: v.value.dtype = static_cast<xdev_dtype_t>(a.default_dtype); break;
    case XDEV_ATTR_INTS: v.value.ints = {nullptr, 0}; break;
    case XDEV_ATTR_STRING: v.value.s = a.choices.empty() ? "" : a.choices[0]; break;
  }
  return v;
}

}  // namespace

std::string attr_kind_name(xdev_attr_kind_t kind) {
  switch (kind) {
    case XDEV_ATTR_BOOL: return "bool";
    case XDEV_ATTR_INT: return "int";
    case XDEV_ATTR_FLOAT: return "float";
    case XDEV_ATTR_DTYPE: return "dtype";
    case XDEV_ATTR_INTS: return "ints";
    case XDEV_ATTR_STRING: return "string";
  }
  return "kind " + std::to_string(static_cast<int>(kind));
}

std::string dtype_set_text(uint64_t dtypes) {
  std::string text;
  for (DType d : {DType::kFloat32, DType::kFloat64, DType::kInt32, DType::kInt64, DType::kBool,
                 DType::kFloat16, DType::kBFloat16, DType::kUInt8, DType::kInt8}) {
    if ((dtypes & dtype_bit(d)) == 0) continue;
    text += (text.empty() ? "" : ", ") + std::string(to_string(d));
  }
  return text;
}

// Names are compared by address first: the table's literals and the shape
// functions' are the same objects, so the usual lookup costs no strcmp.
static bool same_name(const char* a, const char* b) {
  return a == b || (a != nullptr && b != nullptr && std::strcmp(a, b) == 0);
}

int OpDef::index_of(const char* attr_name) const {
  for (size_t j = 0; j < attrs.size(); ++j) {
    if (attrs[j].name == attr_name) return static_cast<int>(j);
  }
  for (size_t j = 0; j < attrs.size(); ++j) {
    if (same_name(attrs[j].name, attr_name)) return static_cast<int>(j);
  }
  return -1;
}

const AttrDef* OpDef::attr(const char* attr_name) const {
  const int j = index_of(attr_name);
  return j < 0 ? nullptr : &attrs[static_cast<size_t>(j)];
}

std::span<const OpDef> op_defs() noexcept { return kDefs; }

const OpDef& op_def(OpId op) noexcept { return kDefs[static_cast<size_t>(op)]; }

// The names as views, their lengths counted at compile time.
#define XDEV_OP_VIEW(name) std::string_view(#name),
constexpr std::string_view kNameViews[] = {XDEV_OPS(XDEV_OP_VIEW)};
#undef XDEV_OP_VIEW

std::string_view op_name(OpId op) noexcept { return kNameViews[static_cast<size_t>(op)]; }

std::optional<OpId> op_from_name(std::string_view name) noexcept {
  for (size_t i = 0; i < std::size(kNameViews); ++i) {
    if (kNameViews[i] == name) return static_cast<OpId>(i);
  }
  return std::nullopt;
}

std::vector<KernelDTypes> kernel_dtypes(const OpDef& def) {
  static constexpr DType kEach[] = {DType::kFloat32, DType::kFloat64, DType::kInt32,
                                    DType::kInt64,   DType::kBool,    DType::kFloat16,
                                    DType::kBFloat16, DType::kUInt8,  DType::kInt8};
  const OutputDef& o = def.outputs[0];
  // The input output 0 takes its dtype from, followed to the input it is tied to.
  int source = o.dtype_rule == DTypeRule::kInput ? o.input : -1;
  while (source > 0 && def.inputs[static_cast<size_t>(source)].same_dtype_as >= 0) {
    source = def.inputs[static_cast<size_t>(source)].same_dtype_as;
  }
  uint64_t outputs = 0;  // when they do not follow input 0
  if (o.dtype_rule == DTypeRule::kAttr) outputs = def.attr(o.attr)->dtypes;
  if (o.dtype_rule == DTypeRule::kFixed) outputs = dtype_bit(o.fixed);
  if (source > 0) outputs = def.inputs[static_cast<size_t>(source)].dtypes;
  std::vector<KernelDTypes> pairs;
  if (def.inputs.empty()) {  // looked up by the output dtype
    for (DType d : kEach) {
      if ((outputs & dtype_bit(d)) != 0) pairs.push_back({d, d});
    }
    return pairs;
  }
  for (DType in : kEach) {
    if ((def.inputs[0].dtypes & dtype_bit(in)) == 0) continue;
    for (DType out : kEach) {
      const bool defined = source == 0 ? out == in : (outputs & dtype_bit(out)) != 0;
      if (defined) pairs.push_back({in, out});
    }
  }
  return pairs;
}

void throw_invalid(const OpDef& def, const std::string& why) {
  throw Error(ErrorCode::kInvalidArgument, std::string(def.name) + ": " + why);
}

// --- AttrValues ---------------------------------------------------------------------

const AttrDef& AttrValues::find(const char* name, xdev_attr_kind_t kind,
                                const xdev_attr_t*& given) const {
  const int j = def_.index_of(name);
  if (j < 0 || def_.attrs[static_cast<size_t>(j)].kind != kind) {
    // Asking for an attribute the op does not define is a bug in a shape function.
    throw Error(ErrorCode::kInternal, std::string(def_.name) + ": the shape function reads "
                                          "attribute '" + name + "', which the op does not "
                                          "define as " + attr_kind_name(kind));
  }
  given = given_[j];
  return def_.attrs[static_cast<size_t>(j)];
}

bool AttrValues::get_bool(const char* name) const {
  const xdev_attr_t* v;
  const AttrDef& a = find(name, XDEV_ATTR_BOOL, v);
  return v != nullptr ? v->value.b != 0 : a.default_bool;
}
int64_t AttrValues::get_int(const char* name) const {
  const xdev_attr_t* v;
  const AttrDef& a = find(name, XDEV_ATTR_INT, v);
  return v != nullptr ? v->value.i : a.default_int;
}
double AttrValues::get_float(const char* name) const {
  const xdev_attr_t* v;
  const AttrDef& a = find(name, XDEV_ATTR_FLOAT, v);
  return v != nullptr ? v->value.f : a.default_float;
}
DType AttrValues::get_dtype(const char* name) const {
  const xdev_attr_t* v;
  const AttrDef& a = find(name, XDEV_ATTR_DTYPE, v);
  return v != nullptr ? static_cast<DType>(v->value.dtype) : a.default_dtype;
}
std::span<const int64_t> AttrValues::get_ints(const char* name) const {
  const xdev_attr_t* v;
  find(name, XDEV_ATTR_INTS, v);
  if (v == nullptr) return {};
  return {v->value.ints.values, static_cast<size_t>(v->value.ints.count)};
}

std::string_view AttrValues::get_string(const char* name) const {
  const xdev_attr_t* v;
  const AttrDef& a = find(name, XDEV_ATTR_STRING, v);
  if (v != nullptr && v->value.s != nullptr) return v->value.s;
  return a.choices.empty() ? "" : a.choices[0];
}

// --- check_call ---------------------------------------------------------------------

void check_call(const OpDef& def, std::span<const InputInfo> inputs,
                std::span<const xdev_attr_t> attrs, CheckedCall& out) {
  // How many inputs.
  const size_t fixed = def.inputs.size();
  if (def.variadic ? inputs.size() < static_cast<size_t>(def.min_inputs)
                   : inputs.size() != fixed) {
    const size_t wanted = def.variadic ? static_cast<size_t>(def.min_inputs) : fixed;
    throw_invalid(def, std::string(def.variadic ? "needs at least " : "takes ") +
                           std::to_string(wanted) + " input" + (wanted == 1 ? "" : "s") +
                           ", got " + std::to_string(inputs.size()));
  }

  // Each input's dtype.
  for (size_t i = 0; i < inputs.size(); ++i) {
    const InputDef& d = def.input(i);
    const DType dtype = inputs[i].dtype;
    if (!is_valid(dtype)) {
      throw_invalid(def, input_name(def, i) + " has dtype code " +
                             std::to_string(static_cast<int32_t>(dtype)) + ", not a dtype");
    }
    if (d.same_dtype_as >= 0 && static_cast<size_t>(d.same_dtype_as) < i &&
        dtype != inputs[static_cast<size_t>(d.same_dtype_as)].dtype) {
      const auto j = static_cast<size_t>(d.same_dtype_as);
      throw_invalid(def, "inputs have different dtypes, " + input_name(def, j) + " is " +
                             std::string(to_string(inputs[j].dtype)) + " and " +
                             input_name(def, i) + " is " + std::string(to_string(dtype)) +
                             " (cast one of them)");
    }
    if ((d.dtypes & dtype_bit(dtype)) == 0) {
      throw_invalid(def, input_name(def, i) + " is " + std::string(to_string(dtype)) + "; " +
                             def.name + " is defined for " + dtype_set_text(d.dtypes) +
                             " (cast it first)");
    }
  }

  // Attributes: each given one known, once, of its kind and in range; the
  // kernel's list in the def's order with defaults filled in. Callers give
  // them in the def's order, so each is first looked for where it should be.
  std::array<const xdev_attr_t*, kMaxOpAttrs> by_def{};
  size_t next = 0;
  for (const xdev_attr_t& v : attrs) {
    int j = next < def.attrs.size() && same_name(def.attrs[next].name, v.name)
                ? static_cast<int>(next)
                : (v.name != nullptr ? def.index_of(v.name) : -1);
    if (j < 0) {
      throw_invalid(def, std::string("unknown attribute '") + (v.name ? v.name : "(NULL)") + "'");
    }
    const auto at = static_cast<size_t>(j);
    if (by_def[at] != nullptr) {
      throw_invalid(def, std::string("attribute '") + v.name + "' is given twice");
    }
    if (!attr_fits(def.attrs[at], v)) check_attr(def, def.attrs[at], v);
    by_def[at] = &v;
    next = at + 1;
  }
  out.kernel_attr_count = 0;
  for (size_t j = 0; j < def.attrs.size(); ++j) {
    const AttrDef& a = def.attrs[j];
    if (by_def[j] == nullptr && a.required) {
      throw_invalid(def, std::string("attribute '") + a.name + "' (" + attr_kind_name(a.kind) +
                             ") is missing");
    }
    if (a.to_kernel) out.kernel_attrs[out.kernel_attr_count++] = kernel_attr(a, by_def[j]);
  }
  const AttrValues values(def, by_def.data());

  // Output dtypes.
  out.output_count = def.outputs.size();
  for (size_t o = 0; o < def.outputs.size(); ++o) {
    const OutputDef& d = def.outputs[o];
    switch (d.dtype_rule) {
      case DTypeRule::kInput: out.output_dtypes[o] = inputs[static_cast<size_t>(d.input)].dtype; break;
      case DTypeRule::kAttr: out.output_dtypes[o] = values.get_dtype(d.attr); break;
      case DTypeRule::kFixed: out.output_dtypes[o] = d.fixed; break;
    }
  }
  out.kernel_input_dtype = inputs.empty() ? out.output_dtypes[0] : inputs[0].dtype;

  // Output shapes from the shape function, and their sizes.
  constexpr size_t kInline = 8;
  std::array<const Shape*, kInline> inline_shapes;
  std::unique_ptr<const Shape*[]> heap_shapes;  // AddN of many inputs
  const Shape** shapes = inline_shapes.data();
  if (inputs.size() > kInline) {
    heap_shapes.reset(new const Shape*[inputs.size()]);
    shapes = heap_shapes.get();
  }
  for (size_t i = 0; i < inputs.size(); ++i) shapes[i] = inputs[i].shape;
  def.shape(def, std::span<const Shape* const>(shapes, inputs.size()), values,
            std::span<Shape>(out.output_shapes.data(), out.output_count));
  for (size_t o = 0; o < out.output_count; ++o) {
    out.output_bytes[o] =
        checked_byte_size(op_name(def.id), out.output_dtypes[o], out.output_shapes[o]);
  }
}

}  // namespace xdev::detail
