// Fuzz target: random op calls through the SDK's op path, on the cpu plugin.
// Each input is a sequence of calls: an op picked from the op table
// (core/opdefs/op_table.hpp), inputs of random dtypes and shapes (some of them
// transposed views), attributes of random values, kinds and names (valid
// ones most of the time, so that calls get past the checks). A call must
// either throw xdev::Error or return the result the op table predicts
// (dtype, shape) with the values the host reference computes
// (tests/conformance/reference, within docs/ops.md's tolerances). Anything
// else (another exception, a crash, a sanitizer report, a wrong value) is a
// finding.
#include <cmath>
#include <cstring>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include <xdev/half.hpp>
#include <xdev/xdev.hpp>

#include "common/log.hpp"
#include "fuzz_input.hpp"
#include "opdefs/op_table.hpp"
#include "ops/run_op.hpp"
#include "reference/op_reference.hpp"

namespace {

namespace ref = xdev_conformance::ref;
using xdev::DType;
using xdev::Shape;
using xdev::Tensor;
using xdev::detail::OpDef;
using xdev_fuzz::fail;

constexpr DType kDTypes[] = {DType::kFloat32, DType::kFloat64, DType::kInt32, DType::kInt64,
                             DType::kBool};

DType pick_dtype(xdev_fuzz::Input& in, uint64_t accepted) {
  if (in.below(8) != 0) {
    std::vector<DType> ok;
    for (DType d : kDTypes) {
      if (accepted & xdev::detail::dtype_bit(d)) ok.push_back(d);
    }
    if (!ok.empty()) return ok[in.below(static_cast<uint32_t>(ok.size()))];
  }
  return kDTypes[in.below(5)];
}

Shape pick_shape(xdev_fuzz::Input& in, const Shape& base) {
  switch (in.below(6)) {
    case 0: {  // a random small shape
      Shape s;
      const int rank = static_cast<int>(in.below(4));
      for (int i = 0; i < rank; ++i) s.push_back(in.below(4));
      return s;
    }
    case 1: {  // base with some dimensions 1 (broadcasts)
      Shape s = base;
      for (size_t i = 0; i < s.size(); ++i) {
        if (in.flag()) s[i] = 1;
      }
      return s;
    }
    case 2: {  // base without its leading dimension
      std::vector<int64_t> dims = base.to_vector();
      if (!dims.empty()) dims.erase(dims.begin());
      return Shape(dims);
    }
    default: return base;
  }
}

// Element values: small, exact, of both signs, with zeros (division).
void fill_values(xdev_fuzz::Input& in, DType dtype, std::vector<unsigned char>& bytes,
                 int64_t count) {
  static constexpr double kFloats[] = {0.0, 1.0, -1.0, 0.5, -2.0, 3.25, 1e-3, 100.0,
                                       -0.75, 7.0, 2.0, -100.0, 1e6, 0.125, -3.0, 9.5};
  static constexpr int64_t kInts[] = {0, 1, -1, 2, -3, 7, -9, 4, 5, -2, 3, 8, -7, 6, -5, 9};
  const size_t itemsize = ref::dtype_size(static_cast<xdev_dtype_t>(dtype));
  bytes.assign(static_cast<size_t>(count) * itemsize, 0);
  for (int64_t i = 0; i < count; ++i) {
    const uint8_t b = in.byte();
    unsigned char* at = bytes.data() + static_cast<size_t>(i) * itemsize;
    switch (dtype) {
      case DType::kFloat32: {
        const float v = static_cast<float>(kFloats[b % 16]);
        std::memcpy(at, &v, sizeof v);
        break;
      }
      case DType::kFloat64: std::memcpy(at, &kFloats[b % 16], sizeof(double)); break;
      case DType::kInt32: {
        const int32_t v = static_cast<int32_t>(kInts[b % 16]);
        std::memcpy(at, &v, sizeof v);
        break;
      }
      case DType::kInt64: std::memcpy(at, &kInts[b % 16], sizeof(int64_t)); break;
      case DType::kBool: *at = b & 1; break;
      case DType::kFloat16:
      case DType::kBFloat16: {  // the same values, each exact in 16 bits but 1e6 (rounded once)
        const double d = kFloats[b % 16];
        const uint16_t v =
            dtype == DType::kFloat16 ? xdev::double_to_half(d) : xdev::double_to_bfloat16(d);
        std::memcpy(at, &v, sizeof v);
        break;
      }
      case DType::kUInt8: *at = static_cast<unsigned char>(kInts[b % 16] & 0xff); break;
      case DType::kInt8: {
        const int8_t v = static_cast<int8_t>(kInts[b % 16]);
        std::memcpy(at, &v, sizeof v);
        break;
      }
    }
  }
}

// An input tensor: a constant, sometimes a transposed view of one.
Tensor make_input(xdev_fuzz::Input& in, DType dtype, const Shape& shape) {
  const bool transposed = shape.rank() >= 2 && in.below(4) == 0;
  Shape stored = shape;
  if (transposed) std::swap(stored[0], stored[1]);
  std::vector<unsigned char> bytes;
  fill_values(in, dtype, bytes, stored.num_elements());
  Tensor t = xdev::constant(bytes.data(), dtype, stored);
  if (!transposed) return t;
  std::vector<int> perm(static_cast<size_t>(shape.rank()));
  for (int i = 0; i < shape.rank(); ++i) perm[static_cast<size_t>(i)] = i;
  std::swap(perm[0], perm[1]);
  return xdev::transpose(t, perm);
}

// Attribute values live here until the call returns (add_ints keeps a pointer).
struct AttrStore {
  std::vector<std::vector<int64_t>> lists;
};

int64_t pick_int(xdev_fuzz::Input& in, const xdev::detail::AttrDef& def) {
  switch (in.below(8)) {
    case 0: return std::numeric_limits<int64_t>::min();
    case 1: return std::numeric_limits<int64_t>::max();
    case 2: return static_cast<int64_t>(in.u64());
    case 3: return int64_t{1} << (in.below(63));
    default: {
      const int64_t lo = std::max<int64_t>(def.min, -4);
      const int64_t hi = std::min<int64_t>(def.max, 4);
      return lo <= hi ? lo + static_cast<int64_t>(in.below(static_cast<uint32_t>(hi - lo + 1)))
                      : static_cast<int64_t>(in.below(9)) - 4;
    }
  }
}

double pick_float(xdev_fuzz::Input& in) {
  static constexpr double kValues[] = {0.0, 1.0, -1.0, 0.25, -5.0, 10.0, 1e300, -1e-300};
  switch (in.below(12)) {
    case 0: return std::numeric_limits<double>::quiet_NaN();
    case 1: return std::numeric_limits<double>::infinity();
    case 2: return -std::numeric_limits<double>::infinity();
    default: return kValues[in.below(8)];
  }
}

void add_attr(xdev_fuzz::Input& in, const char* name, xdev_attr_kind_t kind,
              const xdev::detail::AttrDef& def, xdev::detail::Attrs& attrs, AttrStore& store) {
  switch (kind) {
    case XDEV_ATTR_BOOL: attrs.add_bool(name, in.flag()); break;
    case XDEV_ATTR_INT: attrs.add_int(name, pick_int(in, def)); break;
    case XDEV_ATTR_FLOAT: attrs.add_float(name, pick_float(in)); break;
    case XDEV_ATTR_DTYPE:
      attrs.add_dtype(name, in.below(8) == 0 ? static_cast<DType>(in.below(12))
                                             : pick_dtype(in, def.dtypes));
      break;
    default: {
      std::vector<int64_t>& list = store.lists.emplace_back();
      const uint32_t n = in.below(5);
      for (uint32_t k = 0; k < n; ++k) {
        list.push_back(in.below(8) == 0 ? pick_int(in, def)
                                        : static_cast<int64_t>(in.below(7)) - 3);
      }
      attrs.add_ints(name, list.data(), static_cast<int64_t>(list.size()));
      break;
    }
  }
}

ref::Tensor to_reference(const Tensor& t) {
  const xdev::HostTensor host = t.to_host();
  ref::Tensor r = ref::make_contiguous(static_cast<xdev_dtype_t>(host.dtype()),
                                       host.shape().to_vector());
  if (r.storage.size() < host.byte_size()) fail("host copy larger than its shape");
  if (host.byte_size() > 0) std::memcpy(r.storage.data(), host.bytes(), host.byte_size());
  return r;
}

// `t` as the kernel of a broadcasting op receives it: a view of `shape` with
// stride 0 along the dimensions it broadcasts over (NumPy's rule).
ref::Tensor broadcast_to(ref::Tensor t, const std::vector<int64_t>& shape) {
  const std::vector<int64_t> own = ref::contiguous_strides(t.shape);
  std::vector<int64_t> strides(shape.size(), 0);
  const size_t offset = shape.size() - t.shape.size();
  for (size_t i = 0; i < t.shape.size(); ++i) {
    strides[offset + i] = t.shape[i] == 1 ? 0 : own[i];
  }
  t.shape = shape;
  t.strides = std::move(strides);
  return t;
}

// Checks a result against the table's prediction and the host reference.
void check_result(const OpDef& def, std::span<const Tensor* const> inputs,
                  const xdev::detail::Attrs& attrs, const Tensor& got) {
  std::vector<xdev::detail::InputInfo> infos;
  for (const Tensor* t : inputs) infos.push_back({t->dtype(), &t->shape()});
  xdev::detail::CheckedCall checked;
  xdev::detail::check_call(def, infos, attrs, checked);
  const std::string where = std::string(def.name);
  if (got.dtype() != checked.output_dtypes[0]) fail(where + ": result dtype differs from the table's");
  if (!(got.shape() == checked.output_shapes[0])) fail(where + ": result shape differs from the table's");

  std::vector<ref::Tensor> ref_inputs;
  for (const Tensor* t : inputs) {
    ref_inputs.push_back(def.broadcast_inputs
                             ? broadcast_to(to_reference(*t), got.shape().to_vector())
                             : to_reference(*t));
  }
  std::vector<const ref::Tensor*> ref_pointers;
  for (const ref::Tensor& r : ref_inputs) ref_pointers.push_back(&r);
  ref::Tensor want = ref::make_contiguous(static_cast<xdev_dtype_t>(got.dtype()),
                                          got.shape().to_vector());
  const std::span<const xdev_attr_t> kernel_attrs(checked.kernel_attrs.data(),
                                                  checked.kernel_attr_count);
  if (auto undefined = ref::run(def.name, ref_pointers, kernel_attrs, want)) return;
  const std::vector<ref::Tolerance> tolerance =
      ref::tolerances(def.name, ref_pointers, kernel_attrs, want);
  if (auto mismatch = ref::compare(to_reference(got), want, tolerance)) {
    std::string detail;
    for (const Tensor* t : inputs) {
      std::ostringstream one;
      one << "\n  input " << t->shape() << " strides " << t->strides() << ": " << t->to_host();
      detail += one.str();
    }
    std::ostringstream result;
    result << "\n  result " << got.shape() << ": " << got.to_host();
    fail(where + ": result differs from the host reference: " + *mismatch + detail + result.str());
  }
}

void one_call(xdev_fuzz::Input& in) {
  const auto defs = xdev::detail::op_defs();
  const OpDef& def = defs[in.below(static_cast<uint32_t>(defs.size()))];

  // Inputs.
  size_t count = def.inputs.size();
  if (def.variadic) count = std::max<size_t>(static_cast<size_t>(def.min_inputs), 1) + in.below(3);
  if (in.below(32) == 0) count = in.below(4);  // a wrong number, now and then
  Shape base;
  const int rank = static_cast<int>(in.below(4));
  for (int i = 0; i < rank; ++i) base.push_back(1 + in.below(3));
  std::vector<Tensor> inputs;
  DType first = DType::kFloat32;
  for (size_t i = 0; i < count; ++i) {
    // An op without inputs (Fill) given some anyway: any dtype.
    static const xdev::detail::InputDef kAnyInput{"x", xdev::detail::kAllDTypes};
    const auto& input = def.inputs.empty() ? kAnyInput : def.input(i);
    DType dtype = pick_dtype(in, input.dtypes);
    if (input.same_dtype_as >= 0 && in.below(8) != 0) dtype = first;
    if (i == 0) first = dtype;
    inputs.push_back(make_input(in, dtype, pick_shape(in, base)));
  }
  std::vector<const Tensor*> pointers;
  for (const Tensor& t : inputs) pointers.push_back(&t);

  // Attributes: the op's own, most of the time; unknown names and wrong
  // kinds now and then.
  xdev::detail::Attrs attrs;
  AttrStore store;
  for (const auto& a : def.attrs) {
    if (in.below(4) == 0) continue;
    const xdev_attr_kind_t kind =
        in.below(16) == 0 ? static_cast<xdev_attr_kind_t>(in.below(5)) : a.kind;
    add_attr(in, a.name, kind, a, attrs, store);
  }
  if (in.below(32) == 0) {
    static const xdev::detail::AttrDef kAny{"bogus", XDEV_ATTR_INT, ""};
    add_attr(in, "bogus", static_cast<xdev_attr_kind_t>(in.below(5)), kAny, attrs, store);
  }

  Tensor got;
  try {
    got = xdev::detail::run_defined_op(def.id, pointers, attrs);
  } catch (const xdev::Error&) {
    return;  // refused: fine, as long as it is an xdev::Error
  }
  check_result(def, pointers, attrs, got);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  ::setenv("XDEV_PLUGINS", "cpu", 1);
  // The cpu plugin of this build, unless XDEV_PLUGIN_PATH names another
  // (e.g. a plain build's, when this build has none).
  ::setenv("XDEV_PLUGIN_PATH", XDEV_FUZZ_CPU_PLUGIN_DIR, 0);
  ::setenv("XDEV_PROBE_PLUGINS", "0", 1);
  xdev::detail::set_log_sink([](xdev_log_level_t, std::string_view) {});
  const auto cpus = xdev::list_physical_devices("CPU");
  if (cpus.empty()) fail("no CPU device: is the cpu plugin built?");
  // A pool limit well under libFuzzer's memory limit: a valid but huge
  // shape must end as an out-of-memory xdev::Error, not as a 16 GiB malloc.
  // 1 MiB (256 Ki float32 elements, beyond the cpu plugin's parallel
  // thresholds): with 16 MiB, outputs of 4 Mi elements sized by attributes
  // (OneHot's depth, Fill's shape) took up to 55 s each in the reference and
  // the element-by-element check, and the average fell to ~670 executions a
  // second (perf, 2026-11-27).
  xdev::set_logical_device_configuration(cpus[0], {{.memory_limit = 1}});
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  xdev_fuzz::Input in(data, size);
  for (int call = 0; call < 4 && !in.empty(); ++call) {
    try {
      one_call(in);
    } catch (const xdev::Error&) {
      // Making an input can be refused too (a shape the table would refuse).
    }
  }
  return 0;
}
