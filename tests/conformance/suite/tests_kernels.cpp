// kernel.*: every kernel the plugin registers, run on its device through the
// ABI exactly as the core calls it (docs/ops.md), against the host references
// of tests/conformance/reference on random inputs.
//
// The tests come from the core's op table (core/opdefs/op_table.hpp): one test
// per op, its cases made by the op's shape class (scalars, odd shapes, empty
// reductions, broadcast (stride 0) and permuted/offset inputs where the op
// takes any strides, large tensors), for every dtype the op is defined for
// that a kernel of the plugin accepts. The table's own check_call gives each
// case its output shapes and dtypes and the attributes the kernel receives,
// as the core would. A new op of a known shape class needs nothing here.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <numeric>
#include <set>
#include <utility>

#include <xdev/error.hpp>
#include <xdev/window_geometry.hpp>

#include "../reference/op_reference.hpp"
#include "opdefs/op_table.hpp"
#include "suite.hpp"

namespace xdev_conformance {
namespace {

namespace ref = xdev_conformance::ref;
namespace window = xdev::window;
using xdev::detail::AttrDef;
using xdev::detail::OpDef;
using xdev::detail::ShapeClass;

constexpr unsigned char kOutputFill = 0xCD;
constexpr uint64_t kGuardBytes = 64;

// An attribute of a call as data (the xdev_attr_t array is built for each call).
struct AttrSpec {
  std::string name;
  xdev_attr_kind_t kind = XDEV_ATTR_BOOL;
  bool b = false;
  int64_t i = 0;
  double f = 0.0;
  xdev_dtype_t dtype = XDEV_DTYPE_INVALID;
  std::vector<int64_t> ints;
  std::string s;  // XDEV_ATTR_STRING
};

// One call of an op: its inputs and the attributes the SDK would pass (the
// core-only ones included); check_call turns them into the kernel's.
struct Case {
  std::string label;
  std::vector<ref::Tensor> inputs;
  std::vector<AttrSpec> attrs;
};

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? "," : "") + std::to_string(shape[i]);
  return s + "]";
}

std::vector<xdev_attr_t> build_attrs(const std::vector<AttrSpec>& specs) {
  std::vector<xdev_attr_t> attrs;
  for (const AttrSpec& s : specs) {
    xdev_attr_t a{};
    a.name = s.name.c_str();
    a.kind = s.kind;
    switch (s.kind) {
      case XDEV_ATTR_BOOL: a.value.b = s.b ? 1 : 0; break;
      case XDEV_ATTR_INT: a.value.i = s.i; break;
      case XDEV_ATTR_FLOAT: a.value.f = s.f; break;
      case XDEV_ATTR_DTYPE: a.value.dtype = s.dtype; break;
      case XDEV_ATTR_INTS:
        a.value.ints.values = s.ints.data();
        a.value.ints.count = static_cast<int64_t>(s.ints.size());
        break;
      case XDEV_ATTR_STRING: a.value.s = s.s.c_str(); break;
    }
    attrs.push_back(a);
  }
  return attrs;
}

AttrSpec attr(const char* name, xdev_attr_kind_t kind) {
  AttrSpec a;
  a.name = name;
  a.kind = kind;
  return a;
}
AttrSpec bool_attr(const char* name, bool v) { AttrSpec a = attr(name, XDEV_ATTR_BOOL); a.b = v; return a; }
AttrSpec dtype_attr(const char* name, xdev_dtype_t v) { AttrSpec a = attr(name, XDEV_ATTR_DTYPE); a.dtype = v; return a; }
AttrSpec ints_attr(const char* name, std::vector<int64_t> v) {
  AttrSpec a = attr(name, XDEV_ATTR_INTS);
  a.ints = std::move(v);
  return a;
}
// A sample of the reference's hints as an attribute of the kind the table gives it.
AttrSpec sample_attr(const AttrDef& def, const ref::AttrSample& sample) {
  AttrSpec a = attr(def.name, def.kind);
  a.b = sample.i != 0;
  a.i = sample.i;
  a.f = sample.f;
  // Only a dtype attribute carries a dtype: an int sample (RandomUniform's
  // seed 42) is no xdev_dtype_t value, and loading it as one is undefined.
  if (a.kind == XDEV_ATTR_DTYPE) a.dtype = static_cast<xdev_dtype_t>(sample.i);
  return a;
}

// --- input generation ----------------------------------------------------------

using ref::Values;

class Generator {
 public:
  explicit Generator(std::mt19937_64& random) : random_(random) {}

  double uniform(double lo, double hi) {
    return lo + (hi - lo) * std::uniform_real_distribution<double>(0.0, 1.0)(random_);
  }
  int64_t integer(int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(random_);
  }
  uint64_t bits() { return random_(); }

  // Fills every element the view touches (and the padding) with values
  // suited to `values`.
  void fill(ref::Tensor& t, Values values) {
    const size_t item = ref::dtype_size(t.dtype);
    const size_t count = t.storage.size() / item;
    ref::Tensor flat = ref::make_contiguous(t.dtype, {static_cast<int64_t>(count)});
    for (size_t i = 0; i < count; ++i) {
      const auto at = static_cast<int64_t>(i);
      switch (t.dtype) {
        case XDEV_DTYPE_BOOL: flat.set_int(at, integer(0, 1)); break;
        case XDEV_DTYPE_UINT8:
          // Integer divisors are never 0: a zero integer divisor is an error
          // (tests_errors.cpp), not a value to compare.
          flat.set_int(at, integer(values == Values::kDivisor ? 1 : 0,
                                   values == Values::kCast ? 255 : 9));
          break;
        case XDEV_DTYPE_INT8:
        case XDEV_DTYPE_INT32:
        case XDEV_DTYPE_INT64:
          if (values == Values::kCast) flat.set_int(at, integer(-100, 100));
          else if (values == Values::kDivisor) flat.set_int(at, integer(1, 9) * (integer(0, 1) ? 1 : -1));
          else if (values == Values::kSpecial) flat.set_int(at, integer(-2, 2));
          else flat.set_int(at, integer(-9, 9));
          break;
        default:
          if (values == Values::kCast) {
            // Fractions of both signs, some exact zeros and integers.
            int64_t pick = integer(0, 9);
            double v = pick == 0 ? 0.0 : pick == 1 ? std::trunc(uniform(-100, 100))
                                                   : uniform(-100, 100);
            flat.set_double(at, v);
          } else if (values == Values::kSpecial) {
            constexpr double kInf = std::numeric_limits<double>::infinity();
            constexpr double kPick[] = {0.0, -0.0, 0.5, -0.5, 1.0, -1.0, kInf, -kInf,
                                        std::numeric_limits<double>::quiet_NaN()};
            flat.set_double(at, kPick[integer(0, 8)]);
          } else if (values == Values::kDivisor) {
            flat.set_double(at, integer(0, 19) == 0 ? 0.0 : uniform(-2, 2));
          } else {
            flat.set_double(at, uniform(-2, 2));
          }
      }
    }
    t.storage = std::move(flat.storage);
  }

  // A view of `shape`: contiguous, or with a random axis order, padding
  // between rows and an element offset; axes in `broadcast` get stride 0.
  ref::Tensor make(xdev_dtype_t dtype, const std::vector<int64_t>& shape, bool scrambled,
                   const std::vector<bool>& broadcast, Values values) {
    ref::Tensor t;
    t.dtype = dtype;
    t.shape = shape;
    const size_t rank = shape.size();
    t.strides.assign(rank, 0);
    std::vector<size_t> order(rank);
    std::iota(order.begin(), order.end(), 0);
    if (scrambled) std::shuffle(order.begin(), order.end(), random_);
    int64_t stride = 1;
    for (size_t k = rank; k-- > 0;) {
      const size_t axis = order[k];
      if (!broadcast.empty() && broadcast[axis]) continue;
      t.strides[axis] = stride;
      stride *= std::max<int64_t>(shape[axis], 1) + (scrambled ? integer(0, 2) : 0);
    }
    t.offset = scrambled ? integer(1, 5) : 0;
    int64_t elements = t.offset + 1;
    for (size_t k = 0; k < rank; ++k) elements += (std::max<int64_t>(shape[k], 1) - 1) * t.strides[k];
    if (t.num_elements() == 0) elements = t.offset;
    t.storage.assign(static_cast<size_t>(elements) * ref::dtype_size(dtype), 0);
    fill(t, values);
    return t;
  }

  ref::Tensor contiguous(xdev_dtype_t dtype, const std::vector<int64_t>& shape, Values values,
                         int64_t offset = 0) {
    ref::Tensor t = ref::make_contiguous(dtype, shape);
    t.offset = offset;
    t.storage.resize(t.storage.size() + static_cast<size_t>(offset) * ref::dtype_size(dtype));
    fill(t, values);
    return t;
  }

 private:
  std::mt19937_64& random_;
};

std::vector<bool> no_broadcast() { return {}; }

// --- cases per shape class ------------------------------------------------------------
//
// Each maker gives the inputs (input i of dtype in[i], values as the op's
// reference asks) and the attributes its class is about; the attributes it
// leaves alone are added by with_other_attrs.

ref::Values values_of(const ref::Reference& r, size_t input) {
  return r.values[std::min<size_t>(input, r.values.size() - 1)];
}

// kSame: inputs of one shape (AddN: 1 to 9 of them), any strides unless the
// op needs contiguous inputs (then contiguous at an offset).
std::vector<Case> same_shape_cases(Generator& g, const OpDef& def, const ref::Reference& r,
                                   const std::vector<xdev_dtype_t>& in) {
  struct Shape {
    std::vector<int64_t> shape;
    std::vector<bool> b;  // broadcast axes (stride 0)
    bool scrambled;
    int count;  // inputs, for a variadic op
    const char* what;
  };
  const Shape shapes[] = {
      {{}, {}, false, 3, "scalar"},
      {{7}, {}, false, 1, "vector"},
      {{4, 0}, {}, false, 2, "empty"},
      {{3, 5}, {}, true, 2, "scrambled"},
      {{2, 3, 4}, {}, true, 5, "rank 3, scrambled"},
      {{4, 5}, {true, false}, false, 2, "broadcast along axis 0 (stride 0)"},
      {{11}, {}, false, 9, "many inputs"},
      {{1000, 257}, {}, false, 1, "large"},
      {{300, 301}, {}, true, 3, "large, scrambled"},
  };
  std::vector<Case> cases;
  for (const Shape& s : shapes) {
    const size_t n = def.variadic ? static_cast<size_t>(std::max(s.count, def.min_inputs))
                                  : def.inputs.size();
    if (!def.variadic && s.count == 9) continue;  // "many inputs" is for variadic ops
    if (def.contiguous_inputs && !s.b.empty()) continue;
    Case c;
    c.label = shape_text(s.shape) + " " + s.what;
    if (def.variadic) c.label = std::to_string(n) + " inputs of " + c.label;
    for (size_t i = 0; i < n; ++i) {
      const xdev_dtype_t dt = in[std::min(i, in.size() - 1)];
      const ref::Values v = values_of(r, i);
      if (def.contiguous_inputs) {
        c.inputs.push_back(g.contiguous(dt, s.shape, v, s.scrambled ? static_cast<int64_t>(i + 1) : 0));
      } else {
        // A variadic op's inputs: every other one scrambled.
        const bool scrambled = s.scrambled && (!def.variadic || i % 2 == 1);
        c.inputs.push_back(g.make(dt, s.shape, scrambled, s.b, v));
      }
    }
    cases.push_back(std::move(c));
  }
  return cases;
}

// kBroadcast: shapes that broadcast along some axes (stride 0 views of the
// output's shape, as the core passes them).
std::vector<Case> broadcast_cases(Generator& g, const OpDef& def, const ref::Reference& r,
                                  const std::vector<xdev_dtype_t>& in) {
  struct Shape {
    std::vector<int64_t> shape;
    std::vector<bool> bx, by;  // broadcast axes of x and y
    bool scrambled;
    const char* what;
  };
  const Shape shapes[] = {
      {{}, {}, {}, false, "scalars"},
      {{7}, {}, {}, false, "vectors"},
      {{3, 5}, {}, {true, false}, false, "y broadcast along axis 0"},
      {{4, 6}, {false, true}, {}, true, "x broadcast along axis 1, scrambled"},
      {{2, 3, 4}, {}, {false, true, true}, true, "y broadcast along axes 1 and 2, scrambled"},
      {{3, 1, 5}, {true, false, false}, {false, false, true}, true, "both broadcast"},
      {{2, 3, 2, 5}, {}, {}, true, "rank 4, scrambled"},
      {{6, 1}, {}, {}, false, "unit axis"},
      {{0, 3}, {}, {true, false}, false, "empty, y broadcast along axis 0"},
      {{517, 300}, {}, {true, false}, false, "large, y broadcast along axis 0"},
      {{100003}, {}, {}, false, "large vectors"},
  };
  std::vector<Case> cases;
  for (const Shape& s : shapes) {
    Case c;
    c.label = shape_text(s.shape) + " " + s.what;
    for (size_t i = 0; i < def.inputs.size(); ++i) {
      const bool contiguous = def.contiguous_inputs;
      const std::vector<bool>& b = contiguous ? no_broadcast() : (i == 0 ? s.bx : s.by);
      c.inputs.push_back(g.make(in[i], s.shape, s.scrambled && !contiguous, b, values_of(r, i)));
    }
    cases.push_back(std::move(c));
  }
  return cases;
}

// kReduce: axes subsets, keepdims, reductions over empty axes, large.
std::vector<Case> reduce_cases(Generator& g, const OpDef& def, const ref::Reference& r,
                               const std::vector<xdev_dtype_t>& in) {
  struct Spec {
    std::vector<int64_t> shape;
    std::vector<int64_t> axes;
    bool keepdims;
    bool scrambled;
  };
  const Spec specs[] = {
      {{5}, {0}, false, false},         {{3, 4}, {1}, false, false},
      {{3, 4}, {1}, true, false},       {{3, 4}, {0, 1}, false, true},
      {{2, 3, 4}, {0, 2}, false, true}, {{2, 3, 4}, {1}, true, true},
      {{4, 5}, {}, false, false},       {{}, {}, false, false},
      {{3, 0}, {1}, false, false},      {{0}, {0}, false, false},
      {{2, 0, 3}, {1}, true, false},    {{1000, 300}, {0}, false, false},
      {{1000, 300}, {1}, false, true},  {{100003}, {0}, false, false},
  };
  std::vector<Case> cases;
  for (const Spec& s : specs) {
    Case c;
    const bool scrambled = s.scrambled && !def.contiguous_inputs;
    c.inputs.push_back(g.make(in[0], s.shape, scrambled, no_broadcast(), values_of(r, 0)));
    c.attrs = {ints_attr("axes", s.axes), bool_attr("keepdims", s.keepdims)};
    std::string axes = "{";
    for (size_t k = 0; k < s.axes.size(); ++k) axes += (k ? "," : "") + std::to_string(s.axes[k]);
    c.label = shape_text(s.shape) + " axes " + axes + "}" + (s.keepdims ? " keepdims" : "") +
              (scrambled ? " scrambled" : "");
    cases.push_back(std::move(c));
  }
  return cases;
}

// kAxis: each axis of ranks 1 to 3, scrambled strides, an empty dimension
// beside the axis (ArgMax's axis itself may not be empty: the table refuses
// it), large along and across the axis.
std::vector<Case> axis_cases(Generator& g, const OpDef& def, const ref::Reference& r,
                             const std::vector<xdev_dtype_t>& in) {
  struct Spec {
    std::vector<int64_t> shape;
    int64_t axis;
    bool scrambled;
  };
  const Spec specs[] = {
      {{1}, 0, false},          {{7}, 0, false},          {{3, 4}, 0, false},
      {{3, 4}, 1, true},        {{2, 3, 4}, 1, true},     {{2, 3, 4}, 2, false},
      {{0, 3}, 1, false},       {{3, 0, 2}, 0, false},    {{1000, 257}, 1, false},
      {{300, 301}, 0, true},    {{100003}, 0, false},
  };
  std::vector<Case> cases;
  for (const Spec& s : specs) {
    Case c;
    const bool scrambled = s.scrambled && !def.contiguous_inputs;
    c.inputs.push_back(g.make(in[0], s.shape, scrambled, no_broadcast(), values_of(r, 0)));
    AttrSpec axis = attr("axis", XDEV_ATTR_INT);
    axis.i = s.axis;
    c.attrs = {axis};
    c.label = shape_text(s.shape) + " axis " + std::to_string(s.axis) +
              (scrambled ? " scrambled" : "");
    cases.push_back(std::move(c));
  }
  return cases;
}

// kConcat and kStack: one case of `shapes.size()` inputs along `axis`,
// every other input scrambled (when `scrambled`), the first contiguous.
Case joined_case(Generator& g, const OpDef& def, const ref::Reference& r,
                 const std::vector<xdev_dtype_t>& in,
                 const std::vector<std::vector<int64_t>>& shapes, int64_t axis, bool scrambled) {
  Case c;
  for (size_t i = 0; i < shapes.size(); ++i) {
    const bool s = scrambled && i % 2 == 1 && !def.contiguous_inputs;
    c.inputs.push_back(g.make(in[std::min(i, in.size() - 1)], shapes[i], s, no_broadcast(),
                              values_of(r, i)));
    c.label += (i ? " + " : "") + shape_text(shapes[i]);
  }
  AttrSpec a = attr("axis", XDEV_ATTR_INT);
  a.i = axis;
  c.attrs = {a};
  c.label += " axis " + std::to_string(axis) + (scrambled ? " scrambled" : "");
  return c;
}

// kConcat: each axis of ranks 1 to 3, inputs of different sizes along it
// (some empty), one input, many inputs, large along and across the axis.
std::vector<Case> concat_cases(Generator& g, const OpDef& def, const ref::Reference& r,
                               const std::vector<xdev_dtype_t>& in) {
  struct Spec {
    std::vector<std::vector<int64_t>> shapes;
    int64_t axis;
    bool scrambled;
  };
  const Spec specs[] = {
      {{{5}}, 0, false},
      {{{3}, {4}}, 0, false},
      {{{2, 3}, {4, 3}}, 0, true},
      {{{3, 2}, {3, 0}, {3, 5}}, 1, true},
      {{{2, 1, 4}, {2, 3, 4}, {2, 2, 4}, {2, 1, 4}}, 1, true},
      {{{2, 3, 1}, {2, 3, 4}}, 2, true},
      {{{0, 3}, {0, 3}}, 0, false},
      {{{0, 3}, {0, 2}}, 1, false},
      {{{1}, {1}, {1}, {1}, {1}, {1}, {1}, {1}, {1}, {1}, {1}}, 0, false},
      {{{1000, 257}, {1000, 3}}, 1, false},
      {{{300, 301}, {200, 301}}, 0, true},
      {{{100003}, {7}}, 0, false},
  };
  std::vector<Case> cases;
  for (const Spec& s : specs) cases.push_back(joined_case(g, def, r, in, s.shapes, s.axis, s.scrambled));
  return cases;
}

// kStack: every new axis of ranks 0 to 2, one input, empty inputs, large.
std::vector<Case> stack_cases(Generator& g, const OpDef& def, const ref::Reference& r,
                              const std::vector<xdev_dtype_t>& in) {
  struct Spec {
    std::vector<int64_t> shape;
    size_t count;
    int64_t axis;
    bool scrambled;
  };
  const Spec specs[] = {
      {{}, 1, 0, false},         {{}, 3, 0, false},         {{5}, 2, 0, false},
      {{5}, 3, 1, false},        {{2, 3}, 2, 0, true},      {{2, 3}, 3, 1, true},
      {{2, 3}, 4, 2, true},      {{0, 3}, 2, 1, false},     {{4}, 9, 1, false},
      {{1000, 257}, 2, 1, false}, {{300, 301}, 3, 2, true}, {{100003}, 2, 0, false},
  };
  std::vector<Case> cases;
  for (const Spec& s : specs) {
    const std::vector<std::vector<int64_t>> shapes(s.count, s.shape);
    cases.push_back(joined_case(g, def, r, in, shapes, s.axis, s.scrambled));
  }
  return cases;
}

// kTile and kPad: one input (scrambled or not) and the ints attribute that
// shapes the output: `multiples` (one per axis) or `paddings` (two per axis).
std::vector<Case> reshaping_cases(Generator& g, const OpDef& def, const ref::Reference& r,
                                  const std::vector<xdev_dtype_t>& in, const char* name,
                                  size_t per_axis) {
  struct Spec {
    std::vector<int64_t> shape;
    std::vector<int64_t> multiples;  // per axis; PadV2: before k, after k + 1
    bool scrambled;
  };
  const Spec specs[] = {
      {{}, {}, false},
      {{5}, {3}, false},
      {{5}, {0}, false},
      {{3, 4}, {2, 1}, true},
      {{3, 4}, {1, 3}, false},
      {{2, 3, 4}, {2, 0, 3}, true},
      {{2, 1, 3}, {1, 4, 2}, true},
      {{0, 3}, {2, 2}, false},
      {{1000, 257}, {1, 2}, false},
      {{300, 301}, {2, 1}, true},
      {{100003}, {2}, false},
  };
  std::vector<Case> cases;
  for (const Spec& s : specs) {
    Case c;
    const bool scrambled = s.scrambled && !def.contiguous_inputs;
    c.inputs.push_back(g.make(in[0], s.shape, scrambled, no_broadcast(), values_of(r, 0)));
    std::vector<int64_t> values;
    for (int64_t m : s.multiples) {
      values.push_back(m);
      if (per_axis == 2) values.push_back((m + 1) % 3);
    }
    c.attrs = {ints_attr(name, values)};
    std::string list;
    for (size_t k = 0; k < values.size(); ++k) list += (k ? "," : "") + std::to_string(values[k]);
    c.label = shape_text(s.shape) + " " + name + " {" + list + "}" + (scrambled ? " scrambled" : "");
    cases.push_back(std::move(c));
  }
  return cases;
}

std::vector<Case> tile_cases(Generator& g, const OpDef& def, const ref::Reference& r,
                             const std::vector<xdev_dtype_t>& in) {
  return reshaping_cases(g, def, r, in, "multiples", 1);
}

std::vector<Case> pad_cases(Generator& g, const OpDef& def, const ref::Reference& r,
                            const std::vector<xdev_dtype_t>& in) {
  return reshaping_cases(g, def, r, in, "paddings", 2);
}

// kGather: each axis of params of ranks 1 to 3, indices of ranks 0 to 2
// (repeats, every position), empty indices and empty params' other axes,
// large. Inputs are contiguous (the op table says so), params at an offset.
std::vector<Case> gather_cases(Generator& g, const OpDef&, const ref::Reference& r,
                               const std::vector<xdev_dtype_t>& in) {
  struct Spec {
    std::vector<int64_t> params;
    int64_t axis;
    std::vector<int64_t> indices;
  };
  const Spec specs[] = {
      {{5}, 0, {}},           {{5}, 0, {7}},          {{3, 4}, 0, {2, 3}},
      {{3, 4}, 1, {5}},       {{2, 3, 4}, 1, {2, 2}}, {{2, 3, 4}, 2, {1}},
      {{4, 0}, 0, {3}},       {{4, 3}, 1, {0}},       {{1000, 257}, 0, {600}},
      {{300, 301}, 1, {400}}, {{100003}, 0, {50000}},
  };
  std::vector<Case> cases;
  for (const Spec& s : specs) {
    Case c;
    c.inputs.push_back(g.contiguous(in[0], s.params, values_of(r, 0), 3));
    ref::Tensor indices = ref::make_contiguous(in[1], s.indices);
    const int64_t n = s.params[static_cast<size_t>(s.axis)];
    for (int64_t j = 0; j < indices.num_elements(); ++j) indices.set_int(j, g.integer(0, n - 1));
    c.inputs.push_back(std::move(indices));
    AttrSpec a = attr("axis", XDEV_ATTR_INT);
    a.i = s.axis;
    c.attrs = {a};
    c.label = shape_text(s.params) + " axis " + std::to_string(s.axis) + " indices " +
              shape_text(s.indices);
    cases.push_back(std::move(c));
  }
  return cases;
}

// kSlice and kStridedSlice: one input (scrambled or not) and the window's
// ints attributes, from scalars and empty windows to large ones.
struct SliceSpec {
  std::vector<int64_t> shape;
  std::vector<std::vector<int64_t>> lists;  // Slice: begin, size; StridedSlice: begin, end, strides
  std::vector<int64_t> masks;               // StridedSlice: begin, end, ellipsis, new axis, shrink
  bool scrambled;
};

std::vector<Case> window_cases(Generator& g, const OpDef& def, const ref::Reference& r,
                               const std::vector<xdev_dtype_t>& in,
                               std::span<const SliceSpec> specs) {
  static constexpr const char* kMasks[] = {"begin_mask", "end_mask", "ellipsis_mask",
                                           "new_axis_mask", "shrink_axis_mask"};
  std::vector<Case> cases;
  for (const SliceSpec& s : specs) {
    Case c;
    const bool scrambled = s.scrambled && !def.contiguous_inputs;
    c.inputs.push_back(g.make(in[0], s.shape, scrambled, no_broadcast(), values_of(r, 0)));
    c.label = shape_text(s.shape);
    for (size_t k = 0; k < s.lists.size(); ++k) {
      c.attrs.push_back(ints_attr(def.attrs[k].name, s.lists[k]));
      c.label += std::string(" ") + def.attrs[k].name + " " + shape_text(s.lists[k]);
    }
    for (size_t m = 0; m < s.masks.size(); ++m) {
      AttrSpec a = attr(kMasks[m], XDEV_ATTR_INT);
      a.i = s.masks[m];
      c.attrs.push_back(a);
      if (s.masks[m] != 0) c.label += std::string(" ") + kMasks[m] + " " + std::to_string(a.i);
    }
    if (scrambled) c.label += " scrambled";
    cases.push_back(std::move(c));
  }
  return cases;
}

std::vector<Case> slice_cases(Generator& g, const OpDef& def, const ref::Reference& r,
                              const std::vector<xdev_dtype_t>& in) {
  const SliceSpec specs[] = {
      {{}, {{}, {}}, {}, false},
      {{5}, {{1}, {3}}, {}, false},
      {{5}, {{0}, {-1}}, {}, false},
      {{5}, {{5}, {0}}, {}, false},
      {{3, 4}, {{1, 1}, {2, -1}}, {}, true},
      {{2, 3, 4}, {{0, 1, 2}, {2, 1, 2}}, {}, true},
      {{0, 3}, {{0, 1}, {0, 2}}, {}, false},
      {{1000, 257}, {{10, 3}, {900, 250}}, {}, false},
      {{300, 301}, {{1, 0}, {-1, 300}}, {}, true},
      {{100003}, {{2}, {100000}}, {}, false},
  };
  return window_cases(g, def, r, in, specs);
}

std::vector<Case> strided_slice_cases(Generator& g, const OpDef& def, const ref::Reference& r,
                                      const std::vector<xdev_dtype_t>& in) {
  const SliceSpec specs[] = {
      {{}, {{}, {}, {}}, {0, 0, 0, 0, 0}, false},
      {{5}, {{1}, {4}, {1}}, {0, 0, 0, 0, 0}, false},
      {{5}, {{-1}, {-6}, {-1}}, {0, 0, 0, 0, 0}, false},
      {{6}, {{0}, {6}, {2}}, {0, 0, 0, 0, 0}, false},
      {{3}, {{2}, {1}, {1}}, {0, 0, 0, 0, 0}, false},
      {{3, 4}, {{0, 3}, {3, 0}, {1, -2}}, {0, 0, 0, 0, 0}, true},
      {{2, 3, 4}, {{0, 1}, {0, 3}, {1, 1}}, {0, 0, 1, 0, 0}, true},
      {{2, 3, 4}, {{1, 0, -1}, {2, 0, 0}, {1, 1, 1}}, {2, 2, 0, 0, 5}, true},
      {{3, 4}, {{0, 0, 0}, {0, 0, 0}, {1, 1, 1}}, {6, 6, 0, 1, 0}, false},
      {{4, 5}, {{0, 0}, {0, 0}, {-1, -2}}, {3, 3, 0, 0, 0}, true},
      {{2, 3, 4}, {{0, 0, 0}, {0, 0, -1}, {1, 1, -1}}, {1, 1, 2, 4, 0}, true},
      {{0, 3}, {{0, 0}, {0, 3}, {1, 1}}, {1, 0, 0, 0, 0}, false},
      {{1000, 257}, {{999, 0}, {0, 257}, {-3, 2}}, {0, 0, 0, 0, 0}, false},
      {{300, 301}, {{0, -1}, {300, 0}, {1, -1}}, {0, 2, 0, 0, 0}, true},
      {{100003}, {{1}, {100003}, {1}}, {0, 0, 0, 0, 0}, false},
  };
  return window_cases(g, def, r, in, specs);
}

// kRange: integral bounds (every dtype takes them), both directions, a step
// that does not divide the span, empty, large.
std::vector<Case> range_cases(Generator&, const OpDef&, const ref::Reference&,
                              const std::vector<xdev_dtype_t>&) {
  struct Spec {
    double start, limit, delta;
  };
  const Spec specs[] = {{0, 10, 1},   {3, 3, 1},      {10, 0, -3},      {-5, 6, 4},
                        {7, 8, 100},  {-1, -20, -2},  {-7, 100003, 1},  {0, 3000000, 29}};
  std::vector<Case> cases;
  for (const Spec& s : specs) {
    Case c;
    for (const auto& [name, v] : {std::pair{"start", s.start}, std::pair{"limit", s.limit},
                                  std::pair{"delta", s.delta}}) {
      AttrSpec a = attr(name, XDEV_ATTR_FLOAT);
      a.f = v;
      c.attrs.push_back(a);
    }
    c.label = std::to_string(static_cast<int64_t>(s.start)) + ":" +
              std::to_string(static_cast<int64_t>(s.limit)) + ":" +
              std::to_string(static_cast<int64_t>(s.delta));
    cases.push_back(std::move(c));
  }
  return cases;
}

// kOneHot: every axis of indices of ranks 0 to 2, indices out of [0, depth)
// (negative ones too), depth 0 and 1, empty indices, large; the indices
// are contiguous (the op table says so).
std::vector<Case> one_hot_cases(Generator& g, const OpDef&, const ref::Reference&,
                                const std::vector<xdev_dtype_t>& in) {
  struct Spec {
    std::vector<int64_t> indices;
    int64_t depth;
  };
  const Spec specs[] = {{{}, 4},  {{5}, 3},  {{3, 4}, 5},  {{2, 3}, 1},
                        {{4}, 0}, {{0, 3}, 2}, {{1000}, 7}, {{20000}, 6}};
  std::vector<Case> cases;
  for (const Spec& s : specs) {
    for (int64_t axis = 0; axis <= static_cast<int64_t>(s.indices.size()); ++axis) {
      if (s.indices.size() == 1 && s.indices[0] >= 1000 && axis > 0) continue;
      Case c;
      ref::Tensor indices = ref::make_contiguous(in[0], s.indices);
      for (int64_t j = 0; j < indices.num_elements(); ++j) {
        indices.set_int(j, g.integer(-2, s.depth + 1));
      }
      c.inputs.push_back(std::move(indices));
      AttrSpec depth = attr("depth", XDEV_ATTR_INT), a = attr("axis", XDEV_ATTR_INT);
      depth.i = s.depth;
      a.i = axis;
      c.attrs = {depth, a};
      c.label = shape_text(s.indices) + " depth " + std::to_string(s.depth) + " axis " +
                std::to_string(axis);
      cases.push_back(std::move(c));
    }
  }
  return cases;
}

// kBroadcastTo: scalars and size-1 axes repeated, new leading axes, the
// shape itself, empty targets, scrambled inputs, large.
std::vector<Case> broadcast_to_cases(Generator& g, const OpDef& def, const ref::Reference& r,
                                     const std::vector<xdev_dtype_t>& in) {
  struct Spec {
    std::vector<int64_t> shape, target;
    bool scrambled;
  };
  const Spec specs[] = {
      {{}, {3}, false},           {{1}, {4}, false},           {{3}, {2, 3}, false},
      {{2, 1}, {2, 4}, true},     {{1, 3, 1}, {2, 1, 3, 4}, true}, {{0, 1}, {0, 5}, false},
      {{2, 3}, {2, 3}, true},     {{}, {}, false},             {{1, 257}, {1000, 257}, false},
      {{300, 1}, {300, 301}, true}, {{1}, {100003}, false},
  };
  std::vector<Case> cases;
  for (const Spec& s : specs) {
    Case c;
    const bool scrambled = s.scrambled && !def.contiguous_inputs;
    c.inputs.push_back(g.make(in[0], s.shape, scrambled, no_broadcast(), values_of(r, 0)));
    c.attrs = {ints_attr("shape", s.target)};
    c.label = shape_text(s.shape) + " to " + shape_text(s.target) + (scrambled ? " scrambled" : "");
    cases.push_back(std::move(c));
  }
  return cases;
}

// kMatMul: every transpose, K = 0, contiguous inputs at an offset, large.
std::vector<Case> matmul_cases(Generator& g, const OpDef&, const ref::Reference& r,
                               const std::vector<xdev_dtype_t>& in) {
  struct Dims {
    int64_t m, k, n;
  };
  const Dims dims[] = {{1, 1, 1},  {2, 3, 2},   {5, 7, 3},    {3, 0, 4},
                       {1, 9, 1},  {64, 65, 66}, {130, 70, 90}, {257, 129, 131}};
  std::vector<Case> cases;
  for (const Dims& d : dims) {
    const bool big = d.m * d.n > 10000;
    for (int t = 0; t < 4; ++t) {
      const bool ta = (t & 1) != 0, tb = (t & 2) != 0;
      if (big && t != 0 && t != 3) continue;
      Case c;
      std::vector<int64_t> a_shape = ta ? std::vector<int64_t>{d.k, d.m} : std::vector<int64_t>{d.m, d.k};
      std::vector<int64_t> b_shape = tb ? std::vector<int64_t>{d.n, d.k} : std::vector<int64_t>{d.k, d.n};
      // Inputs are contiguous (docs/ops.md), one of them a view at an offset.
      c.inputs.push_back(g.contiguous(in[0], a_shape, values_of(r, 0), t == 1 ? 3 : 0));
      c.inputs.push_back(g.contiguous(in[1], b_shape, values_of(r, 1), t == 2 ? 5 : 0));
      c.attrs = {bool_attr("transpose_a", ta), bool_attr("transpose_b", tb)};
      c.label = shape_text(a_shape) + (ta ? "T" : "") + " x " + shape_text(b_shape) +
                (tb ? "T" : "") + (d.k == 0 ? " (K = 0: zeros)" : "");
      cases.push_back(std::move(c));
    }
  }
  return cases;
}

// kBatchMatMul: rank 2 (MatMul), equal and broadcast batch axes on either
// side, inputs of different ranks, every adjoint, an empty batch, M = 0 and
// K = 0, inputs at an offset, many small matrices and large ones.
std::vector<Case> batch_matmul_cases(Generator& g, const OpDef&, const ref::Reference& r,
                                     const std::vector<xdev_dtype_t>& in) {
  struct Spec {
    std::vector<int64_t> x_batch, y_batch;
    int64_t m, k, n;
  };
  const Spec specs[] = {
      {{}, {}, 2, 3, 4},          {{3}, {3}, 2, 3, 4},       {{3}, {1}, 4, 2, 3},
      {{1}, {3}, 1, 5, 2},        {{2, 3}, {3}, 3, 2, 3},    {{}, {2, 1, 3}, 2, 4, 2},
      {{2, 1}, {1, 3}, 3, 3, 3},  {{0}, {1}, 2, 3, 4},       {{2}, {2}, 0, 3, 4},
      {{3}, {3}, 2, 0, 4},        {{500}, {}, 4, 5, 3},      {{6}, {6}, 70, 65, 66},
      {{2}, {1}, 130, 129, 131},
  };
  std::vector<Case> cases;
  for (const Spec& s : specs) {
    const bool big = s.m * s.n > 4000;
    for (int t = 0; t < 4; ++t) {
      const bool ax = (t & 1) != 0, ay = (t & 2) != 0;
      if (big && t != 0 && t != 3) continue;
      std::vector<int64_t> x = s.x_batch, y = s.y_batch;
      x.insert(x.end(), {ax ? s.k : s.m, ax ? s.m : s.k});
      y.insert(y.end(), {ay ? s.n : s.k, ay ? s.k : s.n});
      Case c;
      c.inputs.push_back(g.contiguous(in[0], x, values_of(r, 0), t == 1 ? 3 : 0));
      c.inputs.push_back(g.contiguous(in[1], y, values_of(r, 1), t == 2 ? 5 : 0));
      c.attrs = {bool_attr("adj_x", ax), bool_attr("adj_y", ay)};
      c.label = shape_text(x) + (ax ? " adj" : "") + " x " + shape_text(y) + (ay ? " adj" : "");
      cases.push_back(std::move(c));
    }
  }
  return cases;
}

// kScatter: indices of every depth from 0 to the tensor's rank, repeated
// indices (their updates accumulate), no indices, an empty tensor or
// slices, large ones (wide slices, and many narrow ones). Inputs are
// contiguous (the op table says so), the tensor at an offset.
std::vector<Case> scatter_cases(Generator& g, const OpDef&, const ref::Reference& r,
                                const std::vector<xdev_dtype_t>& in) {
  struct Spec {
    std::vector<int64_t> tensor;
    std::vector<int64_t> indices;  // the last: the depth D
  };
  const Spec specs[] = {
      {{5}, {7, 1}},          {{5}, {1}},           {{4, 3}, {2, 1}},       {{4, 3}, {5, 2}},
      {{2, 3, 4}, {2, 2, 2}}, {{3}, {2, 0}},        {{4, 3}, {0, 1}},       {{0, 3}, {0, 1}},
      {{4, 0}, {3, 1}},       {{4, 20000}, {6, 1}}, {{1000, 257}, {600, 1}}, {{100003}, {50000, 1}},
  };
  std::vector<Case> cases;
  for (const Spec& s : specs) {
    const int64_t depth = s.indices.back();
    std::vector<int64_t> updates(s.indices.begin(), s.indices.end() - 1);
    updates.insert(updates.end(), s.tensor.begin() + depth, s.tensor.end());
    Case c;
    c.inputs.push_back(g.contiguous(in[0], s.tensor, values_of(r, 0), 3));
    ref::Tensor indices = ref::make_contiguous(in[1], s.indices);
    for (int64_t e = 0; e < indices.num_elements(); ++e) {
      indices.set_int(e, g.integer(0, s.tensor[static_cast<size_t>(e % depth)] - 1));
    }
    c.inputs.push_back(std::move(indices));
    c.inputs.push_back(g.contiguous(in[2], updates, values_of(r, 2)));
    c.label = "tensor " + shape_text(s.tensor) + " indices " + shape_text(s.indices);
    cases.push_back(std::move(c));
  }
  return cases;
}

// kFromAttr: no inputs; the output shape from scalar to large.
std::vector<Case> from_attr_cases(Generator&, const OpDef&, const ref::Reference&,
                                  const std::vector<xdev_dtype_t>&) {
  std::vector<Case> cases;
  for (const std::vector<int64_t>& shape :
       {std::vector<int64_t>{}, std::vector<int64_t>{7}, std::vector<int64_t>{3, 4, 5},
        std::vector<int64_t>{100003}}) {
    Case c;
    c.attrs = {ints_attr("shape", shape)};
    c.label = shape_text(shape);
    cases.push_back(std::move(c));
  }
  return cases;
}

// --- NN ops -----------------------------------------------------------------------

// kBiasAdd: both data formats, ranks 2 to 4, an empty batch, large; inputs
// contiguous (the op table says so), value at an offset.
std::vector<Case> bias_add_cases(Generator& g, const OpDef&, const ref::Reference& r,
                                 const std::vector<xdev_dtype_t>& in) {
  const std::vector<std::vector<int64_t>> shapes = {
      {1, 1}, {4, 3}, {2, 3, 5}, {2, 4, 3, 5}, {0, 3}, {3, 0, 2}, {1000, 257}, {8, 64, 30, 30}};
  std::vector<Case> cases;
  for (const char* format : {"NHWC", "NCHW"}) {
    for (const std::vector<int64_t>& shape : shapes) {
      const size_t channel = std::string_view(format) == "NCHW" ? 1 : shape.size() - 1;
      Case c;
      c.inputs.push_back(g.contiguous(in[0], shape, values_of(r, 0), 3));
      c.inputs.push_back(g.contiguous(in[1], {shape[channel]}, values_of(r, 1)));
      AttrSpec a = attr("data_format", XDEV_ATTR_STRING);
      a.s = format;
      c.attrs = {a};
      c.label = shape_text(shape) + " " + format;
      cases.push_back(std::move(c));
    }
  }
  return cases;
}

// kXent: [batch, classes] features and labels, rows and columns of 1
// broadcast either way, no classes (loss 0), large; labels a distribution
// or arbitrary values.
std::vector<Case> xent_cases(Generator& g, const OpDef&, const ref::Reference& r,
                             const std::vector<xdev_dtype_t>& in) {
  struct Spec {
    std::vector<int64_t> features, labels;
  };
  const Spec specs[] = {{{1, 1}, {1, 1}},   {{4, 5}, {4, 5}},   {{4, 5}, {1, 5}},
                        {{1, 5}, {4, 5}},   {{4, 1}, {4, 5}},   {{4, 5}, {4, 1}},
                        {{3, 0}, {3, 0}},   {{0, 4}, {0, 4}},   {{1000, 257}, {1000, 257}},
                        {{300, 1001}, {1, 1001}}};
  std::vector<Case> cases;
  for (const Spec& s : specs) {
    Case c;
    c.inputs.push_back(g.contiguous(in[0], s.features, values_of(r, 0), 2));
    c.inputs.push_back(g.contiguous(in[1], s.labels, values_of(r, 1)));
    c.label = "features " + shape_text(s.features) + " labels " + shape_text(s.labels);
    cases.push_back(std::move(c));
  }
  return cases;
}

// kLayerNorm: each begin_norm_axis of ranks 1 to 3, one element per group,
// an empty batch, large; inputs contiguous, x at an offset.
std::vector<Case> layer_norm_cases(Generator& g, const OpDef&, const ref::Reference& r,
                                   const std::vector<xdev_dtype_t>& in) {
  struct Spec {
    std::vector<int64_t> shape;
    int64_t axis;
  };
  const Spec specs[] = {{{7}, 0},       {{3, 4}, 1},       {{3, 4}, 0},      {{2, 3, 4}, 1},
                        {{2, 3, 4}, 2}, {{5, 1}, 1},       {{0, 6}, 1},      {{1000, 257}, 1},
                        {{64, 40, 40}, 1}};
  std::vector<Case> cases;
  for (const Spec& s : specs) {
    const std::vector<int64_t> params(s.shape.begin() + s.axis, s.shape.end());
    Case c;
    c.inputs.push_back(g.contiguous(in[0], s.shape, values_of(r, 0), 1));
    c.inputs.push_back(g.contiguous(in[1], params, values_of(r, 1)));
    c.inputs.push_back(g.contiguous(in[2], params, values_of(r, 1)));
    AttrSpec a = attr("begin_norm_axis", XDEV_ATTR_INT);
    a.i = s.axis;
    c.attrs = {a};
    c.label = shape_text(s.shape) + " begin_norm_axis " + std::to_string(s.axis);
    cases.push_back(std::move(c));
  }
  return cases;
}

// --- Conv2D and pooling -------------------------------------------------------------

// One image and its windows: input [n, h, w, c] (in NHWC terms), kh x kw taps
// (cout output channels for Conv2D), steps and dilations, SAME or VALID,
// NHWC or NCHW, strides given as 2 values or TensorFlow's 4.
struct WindowSpec {
  int64_t n, h, w, c, kh, kw, cout, sh, sw, dh, dw;
  bool same, nchw, four_strides;
};

// Every kind of window: a 3x3 image under 2x2 taps, an empty batch, stride
// > taps, dilation, SAME with an odd padding (the extra element after),
// SAME with padding only after, non-square windows, NCHW, a large one.
constexpr WindowSpec kWindowSpecs[] = {
    {1, 3, 3, 1, 2, 2, 1, 1, 1, 1, 1, false, false, false},
    {2, 5, 5, 3, 3, 3, 4, 1, 1, 1, 1, true, false, true},
    {0, 4, 4, 2, 3, 3, 2, 1, 1, 1, 1, true, false, false},
    {1, 7, 7, 2, 2, 2, 3, 3, 3, 1, 1, false, false, false},
    {1, 7, 6, 2, 3, 3, 2, 1, 1, 2, 2, true, false, false},
    {2, 6, 6, 3, 4, 4, 2, 1, 1, 1, 1, true, false, false},
    {1, 6, 6, 2, 3, 3, 2, 2, 2, 1, 1, true, false, false},
    {2, 6, 5, 3, 2, 3, 2, 1, 2, 1, 1, true, false, false},
    {2, 5, 5, 3, 3, 3, 4, 1, 1, 1, 1, true, true, true},
    {1, 7, 6, 2, 3, 3, 2, 2, 1, 2, 1, false, true, false},
    {2, 6, 6, 3, 4, 4, 2, 1, 1, 1, 1, true, true, false},
    {2, 20, 20, 8, 3, 3, 16, 1, 1, 1, 1, true, false, false},
    {1, 33, 31, 6, 3, 3, 5, 2, 2, 1, 1, true, true, false},
};

std::vector<int64_t> image_dims(const WindowSpec& s, int64_t h, int64_t w, int64_t c) {
  return s.nchw ? std::vector<int64_t>{s.n, c, h, w} : std::vector<int64_t>{s.n, h, w, c};
}

// The attributes of a spec, the output's (height, width) and a label.
struct WindowCall {
  std::vector<AttrSpec> attrs;
  int64_t oh = 0, ow = 0;
  std::string label;
};

WindowCall window_call(const WindowSpec& s, bool conv) {
  window::Axis y{s.h, s.kh, s.sh, conv ? s.dh : 1}, x{s.w, s.kw, s.sw, conv ? s.dw : 1};
  window::resolve(y, s.same);
  window::resolve(x, s.same);
  WindowCall call;
  call.oh = y.out;
  call.ow = x.out;
  auto pair = [&](int64_t h, int64_t w) {
    if (!s.four_strides) return std::vector<int64_t>{h, w};
    return s.nchw ? std::vector<int64_t>{1, 1, h, w} : std::vector<int64_t>{1, h, w, 1};
  };
  AttrSpec padding = attr("padding", XDEV_ATTR_STRING);
  padding.s = s.same ? "SAME" : "VALID";
  AttrSpec format = attr("data_format", XDEV_ATTR_STRING);
  format.s = s.nchw ? "NCHW" : "NHWC";
  call.attrs = {ints_attr("strides", pair(s.sh, s.sw)), padding, format};
  if (conv) {
    call.attrs.push_back(ints_attr("dilations", pair(s.dh, s.dw)));
  } else {
    call.attrs.push_back(ints_attr("ksize", pair(s.kh, s.kw)));
  }
  call.label = shape_text(image_dims(s, s.h, s.w, s.c)) + " " + format.s + " window " +
               std::to_string(s.kh) + "x" + std::to_string(s.kw) + " stride " +
               std::to_string(s.sh) + "x" + std::to_string(s.sw) +
               (conv ? " dilation " + std::to_string(s.dh) + "x" + std::to_string(s.dw) : "") +
               " " + padding.s;
  return call;
}

// kConv2D and its gradients: the specs, inputs contiguous (the op table
// says so), the first at an offset.
std::vector<Case> conv_cases(Generator& g, const OpDef& def, const ref::Reference& r,
                             const std::vector<xdev_dtype_t>& in) {
  std::vector<Case> cases;
  for (const WindowSpec& s : kWindowSpecs) {
    WindowCall call = window_call(s, true);
    const std::vector<int64_t> input = image_dims(s, s.h, s.w, s.c);
    const std::vector<int64_t> filter = {s.kh, s.kw, s.c, s.cout};
    const std::vector<int64_t> out = image_dims(s, call.oh, call.ow, s.cout);
    // Conv2D: input, filter; the input's gradient: filter, out_backprop, and
    // input_sizes; the filter's: input, out_backprop, and filter_sizes.
    const ShapeClass k = def.shape_class;
    const std::vector<int64_t>& first = k == ShapeClass::kConv2DBackpropInput ? filter : input;
    const std::vector<int64_t>& second = k == ShapeClass::kConv2D ? filter : out;
    Case c;
    c.attrs = call.attrs;
    c.label = call.label + " filter " + shape_text(filter);
    c.inputs.push_back(g.contiguous(in[0], first, values_of(r, 0), 3));
    c.inputs.push_back(g.contiguous(in[1], second, values_of(r, 1)));
    if (k == ShapeClass::kConv2DBackpropInput) c.attrs.push_back(ints_attr("input_sizes", input));
    if (k == ShapeClass::kConv2DBackpropFilter) {
      c.attrs.push_back(ints_attr("filter_sizes", filter));
    }
    cases.push_back(std::move(c));
  }
  return cases;
}

// kPool, kMaxPoolGrad, kAvgPoolGrad: the specs' windows as ksize.
std::vector<Case> pool_cases(Generator& g, const OpDef& def, const ref::Reference& r,
                             const std::vector<xdev_dtype_t>& in) {
  std::vector<Case> cases;
  for (const WindowSpec& s : kWindowSpecs) {
    if (s.dh != 1 || s.dw != 1) continue;  // pools have no dilations
    WindowCall call = window_call(s, false);
    const std::vector<int64_t> input = image_dims(s, s.h, s.w, s.c);
    const std::vector<int64_t> out = image_dims(s, call.oh, call.ow, s.c);
    // The pools: input; MaxPoolGrad: orig_input, orig_output, grad;
    // AvgPoolGrad: grad, and orig_input_shape.
    const ShapeClass k = def.shape_class;
    Case c;
    c.attrs = call.attrs;
    c.label = call.label;
    c.inputs.push_back(
        g.contiguous(in[0], k == ShapeClass::kAvgPoolGrad ? out : input, values_of(r, 0), 3));
    for (size_t i = 1; k == ShapeClass::kMaxPoolGrad && i < 3; ++i) {
      c.inputs.push_back(g.contiguous(in[i], out, values_of(r, 1)));
    }
    if (k == ShapeClass::kAvgPoolGrad) c.attrs.push_back(ints_attr("orig_input_shape", input));
    cases.push_back(std::move(c));
  }
  return cases;
}

using CaseMaker = std::vector<Case> (*)(Generator&, const OpDef&, const ref::Reference&,
                                        const std::vector<xdev_dtype_t>&);

struct ClassInfo {
  CaseMaker make;
  const char* cases;  // for the test's description
};

ClassInfo class_info(ShapeClass shape_class) {
  switch (shape_class) {
    case ShapeClass::kSame:
      return {same_shape_cases, "scalar, scrambled, broadcast (stride 0) and large inputs"};
    case ShapeClass::kBroadcast:
      return {broadcast_cases, "scalars, broadcast (stride 0), scrambled strides, large"};
    case ShapeClass::kReduce:
      return {reduce_cases, "axes subsets, keepdims, empty axes, large"};
    case ShapeClass::kMatMul:
      return {matmul_cases, "transposes, K = 0, offsets, large"};
    case ShapeClass::kBatchMatMul:
      return {batch_matmul_cases, "broadcast batch axes, ranks 2 to 4, adjoints, empty batch, "
                                  "M = 0, K = 0, offsets, many small and large matrices"};
    case ShapeClass::kScatter:
      return {scatter_cases, "index depths 0 to rank, repeated indices, none, empty, large"};
    case ShapeClass::kFromAttr:
      return {from_attr_cases, "scalar to large"};
    case ShapeClass::kAxis:
      return {axis_cases, "each axis, scrambled, empty dimensions, large"};
    case ShapeClass::kConcat:
      return {concat_cases, "each axis, inputs of different sizes, empty, scrambled, large"};
    case ShapeClass::kStack:
      return {stack_cases, "each new axis, scalars, empty, scrambled, large"};
    case ShapeClass::kTile:
      return {tile_cases, "scalar, zero and several multiples, empty, scrambled, large"};
    case ShapeClass::kGather:
      return {gather_cases, "each axis, indices of ranks 0 to 2, empty, offsets, large"};
    case ShapeClass::kPad:
      return {pad_cases, "scalar, paddings before and after, empty, scrambled, large"};
    case ShapeClass::kBiasAdd:
      return {bias_add_cases, "NHWC and NCHW, ranks 2 to 4, empty, offsets, large"};
    case ShapeClass::kXent:
      return {xent_cases, "rows and columns broadcast either way, no classes, empty, large"};
    case ShapeClass::kLayerNorm:
      return {layer_norm_cases, "each begin_norm_axis, groups of one, empty, epsilons, large"};
    case ShapeClass::kSlice:
      return {slice_cases, "scalar, windows to the end, empty, scrambled, large"};
    case ShapeClass::kStridedSlice:
      return {strided_slice_cases,
              "scalar, negative and large strides, every mask, empty, scrambled, large"};
    case ShapeClass::kRange:
      return {range_cases, "both directions, uneven steps, empty, large"};
    case ShapeClass::kBroadcastTo:
      return {broadcast_to_cases, "scalars, repeated and new axes, empty, scrambled, large"};
    case ShapeClass::kOneHot:
      return {one_hot_cases, "each axis, indices out of range, depth 0 and 1, empty, large"};
    case ShapeClass::kConv2D:
    case ShapeClass::kConv2DBackpropInput:
    case ShapeClass::kConv2DBackpropFilter:
      return {conv_cases, "SAME (odd padding) and VALID, strides > taps, dilations, NCHW, "
                          "an empty batch, large"};
    case ShapeClass::kPool:
    case ShapeClass::kMaxPoolGrad:
    case ShapeClass::kAvgPoolGrad:
      return {pool_cases, "SAME (odd padding) and VALID, strides > ksize, NCHW, an empty "
                          "batch, large"};
  }
  return {nullptr, ""};
}

// The attributes the shape class did not set: a dtype attribute that
// chooses an output's dtype gets that dtype; bool ones take both values;
// the reference's sets give the others; the rest keep their defaults. A
// required attribute nothing gives a value fails the test: the reference
// must give samples for it. One case per combination.
std::vector<Case> with_other_attrs(std::vector<Case> cases, const OpDef& def,
                                   const ref::Reference& r, xdev_dtype_t out_dtype) {
  std::vector<ref::AttrSet> sets;
  if (r.attr_sets != nullptr) sets = r.attr_sets(out_dtype);
  if (sets.empty()) sets.emplace_back();
  std::vector<Case> out;
  for (Case& base : cases) {
    for (const ref::AttrSet& set : sets) {
      std::vector<Case> expanded{base};
      std::string set_label;
      for (const AttrDef& a : def.attrs) {
        const bool given = std::any_of(base.attrs.begin(), base.attrs.end(),
                                       [&](const AttrSpec& s) { return s.name == a.name; });
        if (given) continue;
        auto sample = std::find_if(set.begin(), set.end(),
                                   [&](const ref::AttrSample& s) { return s.name == a.name; });
        bool chooses_output = false;
        for (const auto& o : def.outputs) {
          chooses_output = chooses_output || (o.dtype_rule == xdev::detail::DTypeRule::kAttr &&
                                              std::string_view(o.attr) == a.name);
        }
        if (chooses_output) {
          for (Case& c : expanded) c.attrs.push_back(dtype_attr(a.name, out_dtype));
        } else if (sample != set.end()) {
          for (Case& c : expanded) c.attrs.push_back(sample_attr(a, *sample));
          set_label += std::string(" ") + a.name + " " +
                       (a.kind == XDEV_ATTR_FLOAT ? std::to_string(sample->f)
                                                  : std::to_string(sample->i));
        } else if (a.kind == XDEV_ATTR_BOOL) {
          std::vector<Case> both;
          for (const Case& c : expanded) {
            for (bool v : {false, true}) {
              Case next = c;
              next.attrs.push_back(bool_attr(a.name, v));
              next.label += std::string(" ") + a.name + (v ? "" : "=false");
              both.push_back(std::move(next));
            }
          }
          expanded = std::move(both);
        } else if (a.required) {
          fail(std::string(def.name) + ": nothing gives a value for its required attribute '" +
               a.name + "': add samples to its reference's attr_sets "
               "(tests/conformance/reference/op_reference.cpp)");
        }
      }
      for (Case& c : expanded) {
        c.label += set_label;
        out.push_back(std::move(c));
      }
    }
  }
  return out;
}

// --- running a case on the device ------------------------------------------------

struct DeviceTensor {
  DeviceMemory memory;
  xdev_tensor_t desc{};
};

const int64_t kNoDims[1] = {0};

xdev_tensor_t describe(void* data, const ref::Tensor& t) {
  xdev_tensor_t d{};
  d.data = data;
  d.byte_offset = static_cast<uint64_t>(t.offset) * ref::dtype_size(t.dtype);
  d.dtype = t.dtype;
  d.rank = t.rank();
  d.shape = t.rank() > 0 ? t.shape.data() : kNoDims;
  d.strides = t.rank() > 0 ? t.strides.data() : kNoDims;
  return d;
}

// The scratch the suite offers a handle plugin's kernels (ABI 1.6
// scratch_allocate_at; scratch_allocate stays NULL for them, as the core
// passes it): a fresh allocation per request, the scratch at a non-zero
// offset in it so that a kernel ignoring the offset is caught. Kept until the
// object goes (after the stream is synchronized). Pointer plugins get no
// scratch, as from a harness that offers none (their kernels must work
// without it). Never throws into the plugin: a failed allocation is NULL.
class Scratch {
 public:
  static constexpr uint64_t kOffset = 256;  // the pool's scratch alignment
  Scratch(Context& ctx, xdev_device_t* device) : ctx_(ctx), device_(device) {}

  static void* allocate_at(void* context, uint64_t size, uint64_t* out_offset) {
    auto* self = static_cast<Scratch*>(context);
    if (size == 0 || out_offset == nullptr || size > UINT64_MAX - kOffset) return nullptr;
    try {
      self->blocks_.emplace_back(self->ctx_, self->device_, size + kOffset, 256);
    } catch (...) {  // TestFailed from a refused allocation: the pool is out
      return nullptr;
    }
    *out_offset = kOffset;
    return self->blocks_.back().get();
  }

 private:
  Context& ctx_;
  xdev_device_t* device_;
  std::vector<DeviceMemory> blocks_;
};

struct Kernel {
  const xdev_kernel_info_t* info;
  uint32_t device;  // an ordinal of the kernel's device type
};

// Runs one case through `kernel` and compares with the reference. Fails the
// test with `what` and the case's label in the reason.
void run_case(Context& ctx, const OpDef& def, const Kernel& kernel, Case& c,
              const std::string& what) {
  const std::string where = what + " " + c.label;

  // What the core would pass: the table's checks, output shapes and dtypes,
  // and the kernel's attributes (defaults filled in, core-only ones out).
  std::vector<xdev::Shape> shapes;
  shapes.reserve(c.inputs.size());
  for (const ref::Tensor& t : c.inputs) shapes.emplace_back(t.shape);
  std::vector<xdev::detail::InputInfo> info;
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    info.push_back({static_cast<xdev::DType>(c.inputs[i].dtype), &shapes[i]});
  }
  const std::vector<xdev_attr_t> given = build_attrs(c.attrs);
  xdev::detail::CheckedCall checked;
  try {
    xdev::detail::check_call(def, info, given, checked);
  } catch (const xdev::Error& e) {
    fail(where + ": the op table refuses this case (a bug of the suite): " + e.what());
  }
  const std::span<const xdev_attr_t> attrs(checked.kernel_attrs.data(), checked.kernel_attr_count);
  std::vector<ref::Tensor> want;
  bool all_empty = true;
  for (size_t o = 0; o < checked.output_count; ++o) {
    const xdev::Shape& s = checked.output_shapes[o];
    want.push_back(ref::make_contiguous(static_cast<xdev_dtype_t>(checked.output_dtypes[o]),
                                        std::vector<int64_t>(s.begin(), s.end())));
    all_empty = all_empty && want.back().num_elements() == 0;
  }
  // docs/ops.md: the core never calls a kernel when every output is empty.
  if (all_empty) return;

  xdev_device_t* dev = ctx.device(kernel.device);
  Scratch scratch(ctx, dev);  // outlives the stream, which synchronizes when it goes
  Stream stream(ctx, dev);
  std::vector<DeviceTensor> inputs(c.inputs.size());
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    const ref::Tensor& t = c.inputs[i];
    const uint64_t bytes = std::max<uint64_t>(t.storage.size(), 1);
    inputs[i].memory = DeviceMemory(ctx, dev, bytes);
    if (!t.storage.empty()) stream.upload(inputs[i].memory.at(), t.storage.data(), t.storage.size());
    inputs[i].desc = describe(inputs[i].memory.get(), t);
  }
  std::vector<DeviceTensor> outputs(want.size());
  std::vector<const xdev_tensor_t*> out_ptrs;
  // Uploads may complete after they return: the host bytes live until the end.
  std::vector<std::vector<unsigned char>> prefill(want.size());
  for (size_t o = 0; o < want.size(); ++o) {
    const uint64_t out_bytes = want[o].storage.size();
    outputs[o].memory = DeviceMemory(ctx, dev, out_bytes + kGuardBytes);
    prefill[o].assign(out_bytes + kGuardBytes, kOutputFill);
    stream.upload(outputs[o].memory.at(), prefill[o].data(), prefill[o].size());
    outputs[o].desc = describe(outputs[o].memory.get(), want[o]);
    out_ptrs.push_back(&outputs[o].desc);
  }

  std::vector<const xdev_tensor_t*> in_ptrs;
  for (const DeviceTensor& t : inputs) in_ptrs.push_back(&t.desc);

  xdev_kernel_call_t call{};
  call.struct_size = XDEV_KERNEL_CALL_STRUCT_SIZE;
  call.op = def.name;
  call.device = dev;
  call.stream = stream.get();
  call.inputs = in_ptrs.empty() ? nullptr : in_ptrs.data();
  call.input_count = static_cast<uint32_t>(in_ptrs.size());
  call.outputs = out_ptrs.data();
  call.output_count = static_cast<uint32_t>(out_ptrs.size());
  call.attrs = attrs.empty() ? nullptr : attrs.data();
  call.attr_count = static_cast<uint32_t>(attrs.size());
  if (ctx.handle_memory()) {
    call.scratch_allocate_at = &Scratch::allocate_at;
    call.scratch_context = &scratch;
  }
  check(kernel.info->fn(kernel.info->kernel_context, &call), where);
  stream.synchronize();

  std::vector<std::vector<unsigned char>> whole(want.size());
  for (size_t o = 0; o < want.size(); ++o) {
    whole[o].resize(want[o].storage.size() + kGuardBytes);
    stream.download(whole[o].data(), outputs[o].memory.at(), whole[o].size());
  }
  std::vector<std::vector<unsigned char>> inputs_after(c.inputs.size());
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    inputs_after[i].resize(c.inputs[i].storage.size());
    if (!inputs_after[i].empty()) {
      stream.download(inputs_after[i].data(), inputs[i].memory.at(), inputs_after[i].size());
    }
  }
  stream.synchronize();
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    std::string diff = first_difference(inputs_after[i].data(), c.inputs[i].storage.data(),
                                        inputs_after[i].size());
    require(diff.empty(), where + ": modified input " + std::to_string(i) + ": " + diff);
  }

  std::vector<const ref::Tensor*> ref_inputs;
  for (const ref::Tensor& t : c.inputs) ref_inputs.push_back(&t);
  const ref::Reference& reference = ref::reference(def.id);
  const ref::Call ref_call{def.id, ref_inputs, attrs, want};
  if (auto error = reference.run(ref_call)) fail(where + ": reference: " + *error);
  for (size_t o = 0; o < want.size(); ++o) {
    const std::string out_where =
        want.size() == 1 ? where : where + " (output " + def.outputs[o].name + ")";
    const uint64_t out_bytes = want[o].storage.size();
    for (uint64_t b = out_bytes; b < whole[o].size(); ++b) {
      require(whole[o][b] == kOutputFill,
              out_where + ": wrote past the end of its output (byte " + std::to_string(b) +
                  " of a " + std::to_string(out_bytes) + "-byte output)");
    }
    ref::Tensor got = ref::make_contiguous(want[o].dtype, want[o].shape);
    // An empty output (SoftmaxCrossEntropyWithLogits' backprop with no classes)
    // has no storage: memcpy of nothing from NULL is undefined (UBSan).
    if (out_bytes != 0) std::memcpy(got.storage.data(), whole[o].data(), out_bytes);
    if (want[o].dtype == XDEV_DTYPE_BOOL) {
      for (int64_t i = 0; i < got.num_elements(); ++i) {
        const unsigned char v = got.storage[static_cast<size_t>(i)];
        require(v == 0 || v == 1, out_where + ": bool element " + std::to_string(i) + " is " +
                                      std::to_string(v) + ", not 0 or 1");
      }
    }
    std::vector<ref::Tolerance> tolerance;
    if (reference.tolerance != nullptr) {
      tolerance = reference.tolerance(ref_call, o);
    } else {
      // The default: exact up to subnormals flushed to zero (float16,
      // bfloat16: and their one rounding after float32).
      tolerance = ref::default_tolerance(want[o]);
    }
    if (auto mismatch = ref::compare(got, want[o], tolerance)) {
      const bool untouched =
          std::all_of(whole[o].begin(), whole[o].begin() + static_cast<std::ptrdiff_t>(out_bytes),
                      [](unsigned char b) { return b == kOutputFill; });
      fail(out_where + ": " + *mismatch + (untouched ? " (the output was never written)" : ""));
    }
  }
}

// --- the kernel list ---------------------------------------------------------------

std::vector<const xdev_kernel_info_t*> read_kernels(Context& ctx) {
  const xdev_kernel_info_t* const* kernels = nullptr;
  uint32_t count = 0;
  check(ctx.api().kernels(ctx.plugin(), &kernels, &count), "kernels");
  require(count == 0 || kernels != nullptr,
          "kernels reported " + std::to_string(count) + " kernels but returned no array");
  return std::vector<const xdev_kernel_info_t*>(kernels, kernels + count);
}

uint32_t type_count(Context& ctx) {
  const xdev_device_type_info_t* const* types = nullptr;
  uint32_t count = 0;
  check(ctx.api().device_types(ctx.plugin(), &types, &count), "device_types");
  return count;
}

std::string type_name(Context& ctx, uint32_t index) {
  const xdev_device_type_info_t* const* types = nullptr;
  uint32_t count = 0;
  check(ctx.api().device_types(ctx.plugin(), &types, &count), "device_types");
  return index < count && types[index] && types[index]->type ? types[index]->type : "?";
}

// First device ordinal of `type_index`, or -1.
int64_t device_of_type(Context& ctx, uint32_t type_index) {
  uint32_t count = 0;
  check(ctx.api().device_count(ctx.plugin(), &count), "device_count");
  for (uint32_t i = 0; i < count; ++i) {
    if (ctx.properties(i).type_index == type_index) return i;
  }
  return -1;
}

void kernel_registry(Context& ctx) {
  auto kernels = read_kernels(ctx);
  const uint32_t types = type_count(ctx);
  for (size_t i = 0; i < kernels.size(); ++i) {
    const xdev_kernel_info_t* k = kernels[i];
    const std::string where = "kernel " + std::to_string(i);
    require(k != nullptr, where + " is NULL");
    require(k->struct_size >= XDEV_KERNEL_INFO_STRUCT_SIZE,
            where + " has struct_size " + std::to_string(k->struct_size) +
                ", smaller than the v1.0 size " + std::to_string(XDEV_KERNEL_INFO_STRUCT_SIZE));
    require(k->op != nullptr && k->op[0] != '\0', where + " has no op name");
    const std::string name = where + " (" + k->op + ")";
    require(k->fn != nullptr, name + " has no function");
    require(xdev::detail::op_from_name(k->op).has_value(),
            name + ": '" + k->op + "' is not an op of the op table (docs/ops.md; a "
                   "misspelling?): the core ignores this kernel");
    require(k->type_index < types, name + " names device type index " +
                                       std::to_string(k->type_index) + " of " +
                                       std::to_string(types));
    require(k->input_dtypes != 0, name + " accepts no dtype (input_dtypes is 0)");
    const uint64_t known = XDEV_DTYPE_BIT(XDEV_DTYPE_INT8 + 1) - 2;  // bits 1..9
    require((k->input_dtypes & ~known) == 0 && (k->output_dtypes & ~known) == 0,
            name + " has dtype bits no dtype of ABI 1.0 uses");
  }
  auto again = read_kernels(ctx);
  require(again.size() == kernels.size(), "kernels answered differently the second time");
  // ABI 1.5: each device's own kernels are of the device's type.
  const xdev_plugin_api_t& api = ctx.api();
  if (!XDEV_HAS_FIELD(&api, xdev_plugin_api_t, device_kernels) || api.device_kernels == nullptr) {
    return;
  }
  uint32_t devices = 0;  // not ctx.devices(): no device is no reason to skip the test
  check(api.device_count(ctx.plugin(), &devices), "device_count");
  for (uint32_t d = 0; d < devices; ++d) {
    const xdev_kernel_info_t* const* own = nullptr;
    uint32_t count = 0;
    check(api.device_kernels(ctx.plugin(), d, &own, &count),
          "device_kernels(" + std::to_string(d) + ")");
    require(count == 0 || own != nullptr, "device_kernels(" + std::to_string(d) + ") reported " +
                                              std::to_string(count) + " kernels but no array");
    const uint32_t type = ctx.properties(d).type_index;
    for (uint32_t i = 0; i < count; ++i) {
      const std::string where = "device_kernels(" + std::to_string(d) + ") kernel " +
                                std::to_string(i);
      require(own[i] != nullptr && own[i]->op != nullptr && own[i]->fn != nullptr,
              where + " is NULL or has no op or function");
      require(xdev::detail::op_from_name(own[i]->op).has_value(),
              where + ": '" + own[i]->op + "' is not an op of the op table (docs/ops.md; a "
                      "misspelling?): the core ignores this kernel");
      require(own[i]->type_index == type, where + " (" + own[i]->op + ") names device type " +
                                              std::to_string(own[i]->type_index) +
                                              ", but the device is of type " +
                                              std::to_string(type));
    }
  }
}

// The input after input 0 whose dtype output 0 takes (Select's x), or 0.
size_t output_source(const OpDef& def) {
  const xdev::detail::OutputDef& o = def.outputs[0];
  return o.dtype_rule == xdev::detail::DTypeRule::kInput ? static_cast<size_t>(o.input) : 0;
}

// The dtype of each input when input 0 has `dtype` and output 0 `out`: the
// input output 0 takes its dtype from has `out`, an input tied to an earlier
// one has its dtype, another takes the first dtype it accepts.
std::vector<xdev_dtype_t> input_dtypes(const OpDef& def, xdev_dtype_t dtype, xdev_dtype_t out) {
  std::vector<xdev_dtype_t> in;
  const size_t source = output_source(def);
  for (size_t i = 0; i < def.inputs.size(); ++i) {
    const xdev::detail::InputDef& d = def.inputs[i];
    if (i == 0) in.push_back(dtype);
    else if (d.same_dtype_as >= 0) in.push_back(in[static_cast<size_t>(d.same_dtype_as)]);
    else if (i == source) in.push_back(out);
    else {
      xdev_dtype_t first = XDEV_DTYPE_INVALID;
      for (xdev_dtype_t dt : ref::op_dtypes()) {
        if (first == XDEV_DTYPE_INVALID && (d.dtypes & XDEV_DTYPE_BIT(dt)) != 0) first = dt;
      }
      in.push_back(first);
    }
  }
  return in;
}

// The dtypes of output 0 the table allows when input 0 is `in` (no inputs:
// any output dtype the op allows; an output of a later input's dtype: every
// dtype that input takes).
std::vector<xdev_dtype_t> output_dtypes(const OpDef& def, xdev_dtype_t in) {
  const xdev::detail::OutputDef& o = def.outputs[0];
  std::vector<xdev_dtype_t> out;
  switch (o.dtype_rule) {
    case xdev::detail::DTypeRule::kInput:
      if (output_source(def) == 0) {
        out.push_back(in);
        break;
      }
      for (xdev_dtype_t dt : ref::op_dtypes()) {
        if ((def.inputs[output_source(def)].dtypes & XDEV_DTYPE_BIT(dt)) != 0) out.push_back(dt);
      }
      break;
    case xdev::detail::DTypeRule::kFixed: out.push_back(static_cast<xdev_dtype_t>(o.fixed)); break;
    case xdev::detail::DTypeRule::kAttr:
      for (xdev_dtype_t dt : ref::op_dtypes()) {
        if ((def.attr(o.attr)->dtypes & XDEV_DTYPE_BIT(dt)) != 0) out.push_back(dt);
      }
      break;
  }
  return out;
}

// The test of one op: every dtype (or dtype pair, when an attribute chooses
// the output's) that the table defines and some kernel of the op accepts, on
// a device of the kernel's type.
void kernel_op(Context& ctx, const OpDef& def) {
  const std::string op = def.name;
  auto all = read_kernels(ctx);
  std::vector<const xdev_kernel_info_t*> mine;
  for (const xdev_kernel_info_t* k : all) {
    if (k != nullptr && k->op != nullptr && op == k->op && k->fn != nullptr) mine.push_back(k);
  }
  if (mine.empty()) skip("the plugin registers no kernel for op " + op);
  ctx.devices();

  const ref::Reference& reference = ref::reference(def.id);
  const ClassInfo cls = class_info(def.shape_class);
  // Input 0's dtypes; an op without inputs is looked up by its output dtype.
  const bool has_inputs = !def.inputs.empty();
  const uint64_t defined = has_inputs ? def.inputs[0].dtypes : xdev::detail::kAllDTypes;
  Generator g(ctx.random());
  int runs = 0;
  // Cases that skipped (an allocation over the device's max_allocation_bytes).
  size_t case_count = 0, cases_skipped = 0;
  std::string too_large;
  std::set<uint32_t> types_without_device;
  // For each device type the op has kernels for: the first kernel accepting
  // a dtype (pair) serves it, as in the core's kernel table.
  std::map<uint32_t, std::vector<const xdev_kernel_info_t*>> by_type;
  for (const xdev_kernel_info_t* k : mine) by_type[k->type_index].push_back(k);
  for (const auto& [type_index, kernels] : by_type) {
    const int64_t ordinal = device_of_type(ctx, type_index);
    if (ordinal < 0) {
      types_without_device.insert(type_index);
      continue;
    }
    const std::string type = type_name(ctx, type_index);
    // The dtype (pair) runs of this device type: each dtype (pair) the table
    // defines, with the first kernel that accepts it.
    struct DtypeRun {
      xdev_dtype_t in, out;
      const xdev_kernel_info_t* kernel;
    };
    std::vector<DtypeRun> dtype_runs;
    for (xdev_dtype_t first : ref::op_dtypes()) {
      if ((defined & XDEV_DTYPE_BIT(first)) == 0) continue;
      for (xdev_dtype_t out : output_dtypes(def, first)) {
        if (!has_inputs && out != first) continue;
        const xdev_dtype_t in = has_inputs ? first : out;
        for (const xdev_kernel_info_t* k : kernels) {
          if ((k->input_dtypes & XDEV_DTYPE_BIT(in)) == 0) continue;
          if (k->output_dtypes != 0 && (k->output_dtypes & XDEV_DTYPE_BIT(out)) == 0) continue;
          dtype_runs.push_back({in, out, k});
          break;
        }
      }
    }
    for (size_t pair = 0; pair < dtype_runs.size(); ++pair) {
      const xdev_dtype_t in = dtype_runs[pair].in, out = dtype_runs[pair].out;
      Kernel kernel{dtype_runs[pair].kernel, static_cast<uint32_t>(ordinal)};
      std::vector<Case> cases = with_other_attrs(
          cls.make(g, def, reference, input_dtypes(def, in, out)), def, reference, out);
      const std::string dtypes = has_inputs && out != in
                                     ? ref::dtype_name(in) + "->" + ref::dtype_name(out)
                                     : ref::dtype_name(out);
      const std::string what =
          op + " " + dtypes + " on " + type + " device " + std::to_string(ordinal);
      // --reduced: every case and every dtype (pair) once (reduced_cases).
      if (ctx.options().reduced) {
        std::vector<Case> chosen_cases;
        for (size_t j : reduced_cases(cases.size(), pair, dtype_runs.size())) {
          chosen_cases.push_back(std::move(cases[j]));
        }
        cases = std::move(chosen_cases);
      }
      for (Case& c : cases) {
        ++case_count;
        try {
          run_case(ctx, def, kernel, c, what);
        } catch (const TestSkipped& s) {  // a case over the device's allocation limit
          if (too_large.empty()) too_large = what + " " + c.label + ": " + s.reason;
          ++cases_skipped;
        }
      }
      ++runs;
    }
  }
  if (cases_skipped != 0) {
    // The others ran (and passed: a failure has ended the test); say which
    // did not instead of passing silently.
    skip(std::to_string(case_count - cases_skipped) + " of " + std::to_string(case_count) +
         " cases ran and passed; the others could not run, the first: " + too_large);
  }
  if (runs == 0) {
    if (!types_without_device.empty()) {
      skip("the kernels for " + op + " are for device type " +
           type_name(ctx, *types_without_device.begin()) + ", of which there is no device");
    }
    skip("the kernels for " + op + " accept none of the dtypes docs/ops.md defines for it");
  }
}

// Calling a kernel with a dtype that no entry of its op and device type
// lists returns a status (docs/ops.md: "a kernel returns a status for what it
// cannot do"), never a crash or a silent success with garbage. Tried on the
// ops of one shape without attributes (elementwise ones, Copy, AddN).
void kernel_unregistered_dtype(Context& ctx) {
  auto all = read_kernels(ctx);
  ctx.devices();
  std::map<std::pair<std::string, uint32_t>, std::vector<const xdev_kernel_info_t*>> groups;
  for (const xdev_kernel_info_t* k : all) {
    if (k == nullptr || k->op == nullptr || k->fn == nullptr) continue;
    groups[{k->op, k->type_index}].push_back(k);
  }
  std::string simple_names;
  auto simple = [](const OpDef& d) {
    return (d.shape_class == ShapeClass::kSame || d.shape_class == ShapeClass::kBroadcast) &&
           d.attrs.empty() && d.outputs.size() == 1 && !d.inputs.empty();
  };
  for (const OpDef& d : xdev::detail::op_defs()) {
    if (simple(d)) simple_names += (simple_names.empty() ? "" : ", ") + std::string(d.name);
  }
  bool any_simple = false;
  for (const auto& [key, kernels] : groups) {
    const std::string& op = key.first;
    const std::optional<xdev::detail::OpId> id = xdev::detail::op_from_name(op);
    if (!id) continue;
    const OpDef& def = xdev::detail::op_def(*id);
    if (!simple(def)) continue;
    any_simple = true;
    uint64_t accepted = 0;
    for (const xdev_kernel_info_t* k : kernels) accepted |= k->input_dtypes;
    for (xdev_dtype_t dt : ref::op_dtypes()) {
      if ((def.inputs[0].dtypes & XDEV_DTYPE_BIT(dt)) == 0 || (accepted & XDEV_DTYPE_BIT(dt)) != 0) {
        continue;
      }
      const int64_t ordinal = device_of_type(ctx, key.second);
      if (ordinal < 0) continue;
      const xdev_kernel_info_t* k = kernels.front();
      xdev_device_t* dev = ctx.device(static_cast<uint32_t>(ordinal));
      Stream stream(ctx, dev);
      const int64_t shape[1] = {4};
      const int64_t strides[1] = {1};
      DeviceMemory x(ctx, dev, 64), y(ctx, dev, 64), out(ctx, dev, 64);
      std::vector<unsigned char> zeros(64, 0);
      stream.upload(x.at(), zeros.data(), 64);
      stream.upload(y.at(), zeros.data(), 64);
      xdev_tensor_t xd{x.get(), 0, dt, 1, shape, strides};
      xdev_tensor_t yd{y.get(), 0, dt, 1, shape, strides};
      xdev_tensor_t od{out.get(), 0, dt, 1, shape, strides};
      const uint32_t input_count =
          def.variadic ? static_cast<uint32_t>(def.min_inputs) : static_cast<uint32_t>(def.inputs.size());
      if (input_count > 2) continue;
      const xdev_tensor_t* ins[2] = {&xd, &yd};
      const xdev_tensor_t* outs[1] = {&od};
      xdev_kernel_call_t call{};
      call.struct_size = XDEV_KERNEL_CALL_STRUCT_SIZE;
      call.op = k->op;
      call.device = dev;
      call.stream = stream.get();
      call.inputs = ins;
      call.input_count = input_count;
      call.outputs = outs;
      call.output_count = 1;
      call.attrs = nullptr;
      call.attr_count = 0;
      expect_error(k->fn(k->kernel_context, &call),
                   op + " kernel called with " + ref::dtype_name(dt) +
                       ", which no " + op + " entry of its device type lists");
      stream.synchronize();
      return;  // one is enough
    }
  }
  if (groups.empty()) skip("the plugin registers no kernels");
  if (!any_simple) {
    skip("the plugin registers none of " + simple_names + " (the ops this test calls)");
  }
  skip("every op the plugin registers accepts every dtype docs/ops.md defines for it "
       "(nothing to refuse)");
}

// One test function per entry of the op table (TestFn is a plain function).
template <size_t I>
void kernel_test(Context& ctx) {
  kernel_op(ctx, xdev::detail::op_defs()[I]);
}

template <size_t... I>
constexpr std::array<TestFn, sizeof...(I)> kernel_tests(std::index_sequence<I...>) {
  return {&kernel_test<I>...};
}

}  // namespace

void add_kernel_tests(std::vector<TestCase>& t) {
  t.push_back({"kernel.registry",
               "every kernel entry: struct_size, op, function, type index, dtype masks; "
               "each device's own kernels (ABI 1.5) of its type",
               kernel_registry});
  static constexpr auto kTests =
      kernel_tests(std::make_index_sequence<static_cast<size_t>(xdev::detail::kOpCount)>());
  for (const OpDef& def : xdev::detail::op_defs()) {
    t.push_back({std::string("kernel.") + def.name,
                 std::string(def.name) + " (" + def.summary + ") against the host reference: " +
                     class_info(def.shape_class).cases,
                 kTests[static_cast<size_t>(def.id)]});
  }
  t.push_back({"kernel.unregistered_dtype",
               "a kernel called with a dtype its entry does not list returns a status",
               kernel_unregistered_dtype});
}

}  // namespace xdev_conformance
