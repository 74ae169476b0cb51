// kernel.*: every kernel the plugin registers, run on its device through the
// ABI exactly as the core calls it (docs/ops.md), against the host references
// of tests/conformance/reference on random inputs: scalars, odd shapes, empty
// reductions, broadcast (stride 0) and permuted/offset inputs, large tensors.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <numeric>
#include <set>

#include "../reference/op_reference.hpp"
#include "suite.hpp"

namespace xdev_conformance {
namespace {

namespace ref = xdev_conformance::ref;

constexpr unsigned char kOutputFill = 0xCD;
constexpr uint64_t kGuardBytes = 64;

// The dtypes docs/ops.md defines each op for.
uint64_t defined_dtypes(const std::string& op) {
  auto bit = [](xdev_dtype_t d) { return XDEV_DTYPE_BIT(d); };
  const uint64_t numbers = bit(XDEV_DTYPE_FLOAT32) | bit(XDEV_DTYPE_FLOAT64) |
                           bit(XDEV_DTYPE_INT32) | bit(XDEV_DTYPE_INT64);
  const uint64_t all = numbers | bit(XDEV_DTYPE_BOOL);
  if (op == "Add" || op == "Cast" || op == "Copy" || op == "Fill") return all;
  if (op == "RandomUniform") return bit(XDEV_DTYPE_FLOAT32) | bit(XDEV_DTYPE_FLOAT64);
  return numbers;
}

// An attribute as data (the xdev_attr_t array is built for each call).
struct AttrSpec {
  std::string name;
  xdev_attr_kind_t kind = XDEV_ATTR_BOOL;
  bool b = false;
  int64_t i = 0;
  double f = 0.0;
  xdev_dtype_t dtype = XDEV_DTYPE_INVALID;
  std::vector<int64_t> ints;
};

struct Case {
  std::string label;
  std::vector<ref::Tensor> inputs;
  std::vector<AttrSpec> attrs;
  xdev_dtype_t out_dtype;
  std::vector<int64_t> out_shape;
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
      case XDEV_ATTR_STRING: a.value.s = ""; break;
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
AttrSpec int_attr(const char* name, int64_t v) { AttrSpec a = attr(name, XDEV_ATTR_INT); a.i = v; return a; }
AttrSpec float_attr(const char* name, double v) { AttrSpec a = attr(name, XDEV_ATTR_FLOAT); a.f = v; return a; }
AttrSpec dtype_attr(const char* name, xdev_dtype_t v) { AttrSpec a = attr(name, XDEV_ATTR_DTYPE); a.dtype = v; return a; }
AttrSpec ints_attr(const char* name, std::vector<int64_t> v) {
  AttrSpec a = attr(name, XDEV_ATTR_INTS);
  a.ints = std::move(v);
  return a;
}

// --- input generation ----------------------------------------------------------

enum class Values { kGeneral, kDivisor, kCast };

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
        case XDEV_DTYPE_INT32:
        case XDEV_DTYPE_INT64:
          if (values == Values::kCast) flat.set_int(at, integer(-100, 100));
          else flat.set_int(at, integer(-9, 9));
          break;
        default:
          if (values == Values::kCast) {
            // Fractions of both signs, some exact zeros and integers.
            int64_t pick = integer(0, 9);
            double v = pick == 0 ? 0.0 : pick == 1 ? std::trunc(uniform(-100, 100))
                                                   : uniform(-100, 100);
            flat.set_double(at, v);
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

// --- cases per op ------------------------------------------------------------

std::vector<Case> binary_cases(Generator& g, const std::string& op, xdev_dtype_t dt) {
  const Values yv = op == "Div" ? Values::kDivisor : Values::kGeneral;
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
      {{517, 300}, {}, {true, false}, false, "large, y broadcast along axis 0"},
      {{100003}, {}, {}, false, "large vectors"},
  };
  std::vector<Case> cases;
  for (const Shape& s : shapes) {
    Case c;
    c.label = shape_text(s.shape) + " " + s.what;
    c.inputs.push_back(g.make(dt, s.shape, s.scrambled, s.bx, Values::kGeneral));
    c.inputs.push_back(g.make(dt, s.shape, s.scrambled, s.by, yv));
    c.out_dtype = dt;
    c.out_shape = s.shape;
    cases.push_back(std::move(c));
  }
  return cases;
}

std::vector<Case> unary_cases(Generator& g, xdev_dtype_t dt, Values values = Values::kGeneral) {
  struct Shape {
    std::vector<int64_t> shape;
    std::vector<bool> b;
    bool scrambled;
    const char* what;
  };
  const Shape shapes[] = {
      {{}, {}, false, "scalar"},
      {{7}, {}, false, "vector"},
      {{3, 5}, {}, true, "scrambled"},
      {{2, 3, 4}, {}, true, "rank 3, scrambled"},
      {{4, 5}, {true, false}, false, "broadcast along axis 0 (stride 0)"},
      {{1000, 257}, {}, false, "large"},
      {{300, 301}, {}, true, "large, scrambled"},
  };
  std::vector<Case> cases;
  for (const Shape& s : shapes) {
    Case c;
    c.label = shape_text(s.shape) + " " + s.what;
    c.inputs.push_back(g.make(dt, s.shape, s.scrambled, s.b, values));
    c.out_dtype = dt;
    c.out_shape = s.shape;
    cases.push_back(std::move(c));
  }
  return cases;
}

std::vector<Case> matmul_cases(Generator& g, xdev_dtype_t dt) {
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
      c.inputs.push_back(g.contiguous(dt, a_shape, Values::kGeneral, t == 1 ? 3 : 0));
      c.inputs.push_back(g.contiguous(dt, b_shape, Values::kGeneral, t == 2 ? 5 : 0));
      c.attrs = {bool_attr("transpose_a", ta), bool_attr("transpose_b", tb)};
      c.out_dtype = dt;
      c.out_shape = {d.m, d.n};
      c.label = shape_text(a_shape) + (ta ? "T" : "") + " x " + shape_text(b_shape) +
                (tb ? "T" : "") + (d.k == 0 ? " (K = 0: zeros)" : "");
      cases.push_back(std::move(c));
    }
  }
  return cases;
}

std::vector<Case> add_n_cases(Generator& g, xdev_dtype_t dt) {
  struct Spec {
    int n;
    std::vector<int64_t> shape;
    bool scrambled;
  };
  const Spec specs[] = {{1, {7}, false},        {2, {3, 4}, true},  {3, {}, false},
                        {5, {2, 3, 4}, true},   {9, {11}, false},   {3, {300, 300}, false}};
  std::vector<Case> cases;
  for (const Spec& s : specs) {
    Case c;
    for (int i = 0; i < s.n; ++i) {
      // Inputs may have any strides (no broadcasting): scramble every other.
      c.inputs.push_back(g.make(dt, s.shape, s.scrambled && i % 2 == 1, no_broadcast(),
                                Values::kGeneral));
    }
    c.out_dtype = dt;
    c.out_shape = s.shape;
    c.label = std::to_string(s.n) + " inputs of " + shape_text(s.shape) +
              (s.scrambled ? ", some scrambled" : "");
    cases.push_back(std::move(c));
  }
  return cases;
}

std::vector<Case> cast_cases(Generator& g, xdev_dtype_t from, xdev_dtype_t to) {
  std::vector<Case> cases;
  struct Shape {
    std::vector<int64_t> shape;
    bool scrambled;
  };
  const Shape shapes[] = {{{}, false}, {{7}, false}, {{3, 5}, true}, {{100003}, false}};
  for (const Shape& s : shapes) {
    Case c;
    c.inputs.push_back(g.make(from, s.shape, s.scrambled, no_broadcast(), Values::kCast));
    c.attrs = {dtype_attr("dtype", to)};
    c.out_dtype = to;
    c.out_shape = s.shape;
    c.label = ref::dtype_name(from) + " -> " + ref::dtype_name(to) + " " + shape_text(s.shape) +
              (s.scrambled ? " scrambled" : "");
    cases.push_back(std::move(c));
  }
  return cases;
}

std::vector<Case> reduce_cases(Generator& g, xdev_dtype_t dt) {
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
    c.inputs.push_back(g.make(dt, s.shape, s.scrambled, no_broadcast(), Values::kGeneral));
    c.attrs = {ints_attr("axes", s.axes), bool_attr("keepdims", s.keepdims)};
    c.out_dtype = dt;
    for (size_t k = 0; k < s.shape.size(); ++k) {
      bool reduced = std::find(s.axes.begin(), s.axes.end(), static_cast<int64_t>(k)) != s.axes.end();
      if (!reduced) c.out_shape.push_back(s.shape[k]);
      else if (s.keepdims) c.out_shape.push_back(1);
    }
    std::string axes = "{";
    for (size_t k = 0; k < s.axes.size(); ++k) axes += (k ? "," : "") + std::to_string(s.axes[k]);
    c.label = shape_text(s.shape) + " axes " + axes + "}" + (s.keepdims ? " keepdims" : "") +
              (s.scrambled ? " scrambled" : "");
    cases.push_back(std::move(c));
  }
  return cases;
}

std::vector<Case> fill_cases(xdev_dtype_t dt) {
  std::vector<double> values;
  if (dt == XDEV_DTYPE_BOOL) values = {1.0, 0.0};
  else if (ref::is_float(dt)) values = {0.3, -2.5};
  else values = {3.0, -7.0};
  std::vector<Case> cases;
  for (const std::vector<int64_t>& shape :
       {std::vector<int64_t>{}, std::vector<int64_t>{7}, std::vector<int64_t>{3, 4, 5},
        std::vector<int64_t>{100003}}) {
    for (double v : values) {
      Case c;
      c.attrs = {float_attr("value", v)};
      c.out_dtype = dt;
      c.out_shape = shape;
      c.label = shape_text(shape) + " value " + std::to_string(v);
      cases.push_back(std::move(c));
    }
  }
  return cases;
}

std::vector<Case> random_uniform_cases(xdev_dtype_t dt) {
  struct Spec {
    std::vector<int64_t> shape;
    int64_t seed;
    double lo, hi;
  };
  const Spec specs[] = {{{7}, 0, 0.0, 1.0},
                        {{3, 4}, 42, -3.0, 5.0},
                        {{}, 7, 0.0, 1.0},
                        {{100003}, 0x7fffffffffffffffll, -1.0, 1.0},
                        {{33}, -1, 10.0, 10.5}};
  std::vector<Case> cases;
  for (const Spec& s : specs) {
    Case c;
    c.attrs = {int_attr("seed", s.seed), float_attr("minval", s.lo), float_attr("maxval", s.hi)};
    c.out_dtype = dt;
    c.out_shape = s.shape;
    c.label = shape_text(s.shape) + " seed " + std::to_string(s.seed);
    cases.push_back(std::move(c));
  }
  return cases;
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

struct Kernel {
  const xdev_kernel_info_t* info;
  uint32_t device;  // an ordinal of the kernel's device type
};

// Runs one case through `kernel` and compares with the reference. Fails the
// test with `what` and the case's label in the reason.
void run_case(Context& ctx, const std::string& op, const Kernel& kernel, Case& c,
              const std::string& what) {
  xdev_device_t* dev = ctx.device(kernel.device);
  Stream stream(ctx, dev);
  const std::string where = what + " " + c.label;

  std::vector<DeviceTensor> inputs(c.inputs.size());
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    const ref::Tensor& t = c.inputs[i];
    const uint64_t bytes = std::max<uint64_t>(t.storage.size(), 1);
    inputs[i].memory = DeviceMemory(ctx, dev, bytes);
    if (!t.storage.empty()) stream.upload(inputs[i].memory.get(), t.storage.data(), t.storage.size());
    inputs[i].desc = describe(inputs[i].memory.get(), t);
  }
  ref::Tensor want = ref::make_contiguous(c.out_dtype, c.out_shape);
  const uint64_t out_bytes = want.storage.size();
  DeviceMemory out_memory(ctx, dev, out_bytes + kGuardBytes);
  std::vector<unsigned char> prefill(out_bytes + kGuardBytes, kOutputFill);
  stream.upload(out_memory.get(), prefill.data(), prefill.size());
  xdev_tensor_t out_desc = describe(out_memory.get(), want);

  std::vector<const xdev_tensor_t*> in_ptrs;
  for (const DeviceTensor& t : inputs) in_ptrs.push_back(&t.desc);
  const xdev_tensor_t* out_ptr = &out_desc;
  std::vector<xdev_attr_t> attrs = build_attrs(c.attrs);

  xdev_kernel_call_t call{};
  call.struct_size = XDEV_KERNEL_CALL_STRUCT_SIZE;
  call.op = op.c_str();
  call.device = dev;
  call.stream = stream.get();
  call.inputs = in_ptrs.empty() ? nullptr : in_ptrs.data();
  call.input_count = static_cast<uint32_t>(in_ptrs.size());
  call.outputs = &out_ptr;
  call.output_count = 1;
  call.attrs = attrs.empty() ? nullptr : attrs.data();
  call.attr_count = static_cast<uint32_t>(attrs.size());
  check(kernel.info->fn(kernel.info->kernel_context, &call), where);
  stream.synchronize();

  ref::Tensor got = ref::make_contiguous(c.out_dtype, c.out_shape);
  std::vector<unsigned char> whole(out_bytes + kGuardBytes);
  stream.download(whole.data(), out_memory.get(), whole.size());
  std::vector<std::vector<unsigned char>> inputs_after(c.inputs.size());
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    inputs_after[i].resize(c.inputs[i].storage.size());
    if (!inputs_after[i].empty()) {
      stream.download(inputs_after[i].data(), inputs[i].memory.get(), inputs_after[i].size());
    }
  }
  stream.synchronize();
  for (uint64_t b = out_bytes; b < whole.size(); ++b) {
    require(whole[b] == kOutputFill, where + ": wrote past the end of its output (byte " +
                                         std::to_string(b) + " of a " +
                                         std::to_string(out_bytes) + "-byte output)");
  }
  std::memcpy(got.storage.data(), whole.data(), out_bytes);
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    std::string diff = first_difference(inputs_after[i].data(), c.inputs[i].storage.data(),
                                        inputs_after[i].size());
    require(diff.empty(), where + ": modified input " + std::to_string(i) + ": " + diff);
  }

  std::vector<const ref::Tensor*> ref_inputs;
  for (const ref::Tensor& t : c.inputs) ref_inputs.push_back(&t);
  if (auto error = ref::run(op, ref_inputs, attrs, want)) fail(where + ": reference: " + *error);
  if (c.out_dtype == XDEV_DTYPE_BOOL) {
    for (int64_t i = 0; i < got.num_elements(); ++i) {
      const unsigned char v = got.storage[static_cast<size_t>(i)];
      require(v == 0 || v == 1, where + ": bool element " + std::to_string(i) + " is " +
                                    std::to_string(v) + ", not 0 or 1");
    }
  }
  auto tolerance = ref::tolerances(op, ref_inputs, attrs, want);
  if (auto mismatch = ref::compare(got, want, tolerance)) {
    const bool untouched = std::all_of(whole.begin(), whole.begin() + static_cast<std::ptrdiff_t>(out_bytes),
                                       [](unsigned char b) { return b == kOutputFill; });
    fail(where + ": " + *mismatch + (untouched ? " (the output was never written)" : ""));
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
}

// The test of one op: every dtype (or dtype pair, for Cast) some kernel of
// the op accepts, on a device of the kernel's type.
void kernel_op(Context& ctx, const std::string& op) {
  auto all = read_kernels(ctx);
  std::vector<const xdev_kernel_info_t*> mine;
  for (const xdev_kernel_info_t* k : all) {
    if (k != nullptr && k->op != nullptr && op == k->op && k->fn != nullptr) mine.push_back(k);
  }
  if (mine.empty()) skip("the plugin registers no kernel for op " + op);
  ctx.devices();

  const uint64_t defined = defined_dtypes(op);
  Generator g(ctx.random());
  int runs = 0;
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
    for (xdev_dtype_t in : ref::op_dtypes()) {
      if ((defined & XDEV_DTYPE_BIT(in)) == 0) continue;
      for (xdev_dtype_t out : ref::op_dtypes()) {
        if (op == "Cast" ? false : out != in) continue;
        const xdev_kernel_info_t* chosen = nullptr;
        for (const xdev_kernel_info_t* k : kernels) {
          if ((k->input_dtypes & XDEV_DTYPE_BIT(in)) == 0) continue;
          if (k->output_dtypes != 0 && (k->output_dtypes & XDEV_DTYPE_BIT(out)) == 0) continue;
          chosen = k;
          break;
        }
        if (chosen == nullptr) continue;
        Kernel kernel{chosen, static_cast<uint32_t>(ordinal)};
        std::vector<Case> cases;
        if (op == "MatMul") cases = matmul_cases(g, in);
        else if (op == "Add" || op == "Sub" || op == "Mul" || op == "Div") cases = binary_cases(g, op, in);
        else if (op == "Neg" || op == "Relu" || op == "Copy") cases = unary_cases(g, in);
        else if (op == "AddN") cases = add_n_cases(g, in);
        else if (op == "Cast") cases = cast_cases(g, in, out);
        else if (op == "Sum" || op == "Mean") cases = reduce_cases(g, in);
        else if (op == "Fill") cases = fill_cases(in);
        else if (op == "RandomUniform") cases = random_uniform_cases(in);
        const std::string what = op + " " + ref::dtype_name(in) +
                                 (op == "Cast" ? "->" + ref::dtype_name(out) : "") + " on " +
                                 type + " device " + std::to_string(ordinal);
        for (Case& c : cases) run_case(ctx, op, kernel, c, what);
        ++runs;
      }
    }
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
// cannot do"), never a crash or a silent success with garbage.
void kernel_unregistered_dtype(Context& ctx) {
  auto all = read_kernels(ctx);
  ctx.devices();
  std::map<std::pair<std::string, uint32_t>, std::vector<const xdev_kernel_info_t*>> groups;
  for (const xdev_kernel_info_t* k : all) {
    if (k == nullptr || k->op == nullptr || k->fn == nullptr) continue;
    groups[{k->op, k->type_index}].push_back(k);
  }
  const std::set<std::string> simple = {"Add", "Sub", "Mul", "Div", "Neg", "Relu", "Copy", "AddN"};
  bool any_simple = false;
  for (const auto& [key, kernels] : groups) {
    const std::string& op = key.first;
    if (simple.count(op) == 0) continue;  // elementwise shapes only
    any_simple = true;
    uint64_t accepted = 0;
    for (const xdev_kernel_info_t* k : kernels) accepted |= k->input_dtypes;
    for (xdev_dtype_t dt : ref::op_dtypes()) {
      if ((defined_dtypes(op) & XDEV_DTYPE_BIT(dt)) == 0 || (accepted & XDEV_DTYPE_BIT(dt)) != 0) {
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
      stream.upload(x.get(), zeros.data(), 64);
      stream.upload(y.get(), zeros.data(), 64);
      xdev_tensor_t xd{x.get(), 0, dt, 1, shape, strides};
      xdev_tensor_t yd{y.get(), 0, dt, 1, shape, strides};
      xdev_tensor_t od{out.get(), 0, dt, 1, shape, strides};
      const bool unary = op == "Neg" || op == "Relu" || op == "Copy" || op == "AddN";
      const xdev_tensor_t* ins[2] = {&xd, &yd};
      const xdev_tensor_t* outs[1] = {&od};
      xdev_kernel_call_t call{};
      call.struct_size = XDEV_KERNEL_CALL_STRUCT_SIZE;
      call.op = k->op;
      call.device = dev;
      call.stream = stream.get();
      call.inputs = ins;
      call.input_count = unary ? 1 : 2;
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
    skip("the plugin registers none of Add, Sub, Mul, Div, Neg, Relu, Copy, AddN (the ops "
         "this test calls)");
  }
  skip("every op the plugin registers accepts every dtype docs/ops.md defines for it "
       "(nothing to refuse)");
}

}  // namespace

void add_kernel_tests(std::vector<TestCase>& t) {
  t.push_back({"kernel.registry",
               "every kernel entry: struct_size, op, function, type index, dtype masks",
               kernel_registry});
#define XDEV_OP_TEST(op, text) \
  t.push_back({"kernel." #op, text, [](Context& ctx) { kernel_op(ctx, #op); }});
  XDEV_OP_TEST(MatMul, "MatMul against the host reference: transposes, K = 0, offsets, large")
  XDEV_OP_TEST(Add, "Add: scalars, broadcast (stride 0), scrambled strides, large")
  XDEV_OP_TEST(Sub, "Sub: scalars, broadcast (stride 0), scrambled strides, large")
  XDEV_OP_TEST(Mul, "Mul: scalars, broadcast (stride 0), scrambled strides, large")
  XDEV_OP_TEST(Div, "Div: zero divisors (IEEE for floats, 0 for integers), broadcast, large")
  XDEV_OP_TEST(Neg, "Neg: scalar, scrambled and broadcast inputs, large")
  XDEV_OP_TEST(Relu, "Relu: scalar, scrambled and broadcast inputs, large")
  XDEV_OP_TEST(AddN, "AddN: 1 to 9 inputs, mixed strides")
  XDEV_OP_TEST(Cast, "Cast: every dtype pair the kernel accepts; truncation, != 0 for bool")
  XDEV_OP_TEST(Sum, "Sum: axes subsets, keepdims, empty axes (0), large")
  XDEV_OP_TEST(Mean, "Mean: axes subsets, keepdims, empty axes (NaN / 0), integer division")
  XDEV_OP_TEST(Copy, "Copy: strided and broadcast inputs to contiguous")
  XDEV_OP_TEST(Fill, "Fill: every dtype, scalar to large")
  XDEV_OP_TEST(RandomUniform, "RandomUniform: the bit-exact generator of docs/ops.md")
#undef XDEV_OP_TEST
  t.push_back({"kernel.unregistered_dtype",
               "a kernel called with a dtype its entry does not list returns a status",
               kernel_unregistered_dtype});
}

}  // namespace xdev_conformance
