// The cpu plugin's kernels through the raw ABI: dlopen the plugin file named
// by XDEV_TEST_CPU_PLUGIN, open device 0 and call each registered kernel
// function the way the core does, against simple host references on seeded
// random inputs (docs/ops.md is the contract).
#include <dlfcn.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <oneapi/tbb/global_control.h>
#include <xdev/half.hpp>
#include <xdev/plugin.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <numeric>
#include <random>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "core_plugin_harness.hpp"

namespace {

using ::testing::HasSubstr;

// ---------------------------------------------------------------------------
// The plugin, loaded once for the whole test program.

using xdev_test::attr_bool;
using xdev_test::attr_dtype;
using xdev_test::attr_float;
using xdev_test::attr_int;
using xdev_test::attr_ints;
using xdev_test::fails_with;
using xdev_test::Outcome;
using xdev_test::take;

const xdev_host_api_t* host_api() { return xdev_test::process_core_host("cpu"); }

class Plugin {
 public:
  static Plugin& get() {
    static Plugin* plugin = new Plugin;  // stays loaded; shut down by Environment
    return *plugin;
  }

  bool ready() const { return stream_ != nullptr; }
  const std::string& error() const { return error_; }
  const xdev_plugin_api_t* api() const { return api_; }
  xdev_device_t* device() const { return device_; }
  xdev_stream_t* stream() const { return stream_; }

  // The kernel registered for (op, input dtype, output dtype), like the
  // core's lookup: the first whose masks accept the dtypes.
  const xdev_kernel_info_t* find(const std::string& op, xdev_dtype_t in, xdev_dtype_t out) const {
    return xdev_test::find_kernel(kernels_, count_, op, in, out);
  }
  // Any kernel of `op` (for calls the kernel itself must refuse).
  const xdev_kernel_info_t* any(const std::string& op) const {
    return xdev_test::any_kernel(kernels_, count_, op);
  }
  const xdev_kernel_info_t* const* kernels(uint32_t* count) const {
    *count = count_;
    return kernels_;
  }

  void shutdown() {
    if (api_ == nullptr || plugin_ == nullptr) return;
    if (stream_ != nullptr) api_->stream_destroy(stream_);
    if (device_ != nullptr) api_->device_close(device_);
    api_->shutdown(plugin_);
    stream_ = nullptr;
    device_ = nullptr;
    plugin_ = nullptr;
  }

 private:
  Plugin() {
    // Never unloaded: oneTBB's workers may outlive a test (docs/plugin-abi.md).
    xdev_test::PluginLibrary library;
    if (!library.open_env("XDEV_TEST_CPU_PLUGIN", RTLD_NODELETE)) {
      error_ = library.error();
      return;
    }
    library.release();
    xdev_plugin_query_args_t args = xdev_test::query_args(host_api());
    if (Outcome o = take(library.query()(&args)); o.code != XDEV_STATUS_OK) {
      error_ = "query: " + o.message;
      return;
    }
    api_ = args.plugin_api;
    const xdev_plugin_init_args_t init = xdev_test::init_args(host_api());
    if (Outcome o = take(api_->initialize(&init, &plugin_)); o.code != XDEV_STATUS_OK) {
      error_ = "initialize: " + o.message;
      return;
    }
    if (Outcome o = take(api_->device_open(plugin_, 0, &device_)); o.code != XDEV_STATUS_OK) {
      error_ = "device_open: " + o.message;
      return;
    }
    if (Outcome o = take(api_->kernels(plugin_, &kernels_, &count_)); o.code != XDEV_STATUS_OK) {
      error_ = "kernels: " + o.message;
      return;
    }
    if (Outcome o = take(api_->stream_create(device_, &stream_)); o.code != XDEV_STATUS_OK) {
      error_ = "stream_create: " + o.message;
      return;
    }
  }

  std::string error_;
  const xdev_plugin_api_t* api_ = nullptr;
  xdev_plugin_t* plugin_ = nullptr;
  xdev_device_t* device_ = nullptr;
  xdev_stream_t* stream_ = nullptr;
  const xdev_kernel_info_t* const* kernels_ = nullptr;
  uint32_t count_ = 0;
};

class PluginEnvironment : public ::testing::Environment {
 public:
  void TearDown() override { Plugin::get().shutdown(); }
};
const auto* const g_environment = ::testing::AddGlobalTestEnvironment(new PluginEnvironment);

// ---------------------------------------------------------------------------
// Host tensors with any layout

int64_t itemsize(xdev_dtype_t d) { return static_cast<int64_t>(xdev_plugin_dtype_size(d)); }

const char* name(xdev_dtype_t d) { return xdev_plugin_dtype_name(d); }

using Shape = std::vector<int64_t>;

int64_t numel(const Shape& s) {
  return std::accumulate(s.begin(), s.end(), int64_t{1}, std::multiplies<>());
}

// Calls f(index) for every multi-index of `shape`, row-major.
void for_each_index(const Shape& shape, const std::function<void(const Shape&)>& f) {
  if (numel(shape) == 0) return;
  Shape index(shape.size(), 0);
  for (;;) {
    f(index);
    int k = static_cast<int>(shape.size()) - 1;
    for (; k >= 0; --k) {
      if (++index[k] < shape[k]) break;
      index[k] = 0;
    }
    if (k < 0) return;
  }
}

// How a test tensor is laid out in memory.
struct Layout {
  std::vector<int> order;       // storage order of the axes, outermost first (empty: 0..r-1)
  std::vector<bool> broadcast;  // axes stored once (stride 0); empty: none
  int64_t offset = 0;           // elements before element 0 (byte_offset)
};

struct Tensor {
  xdev_dtype_t dtype = XDEV_DTYPE_FLOAT32;
  Shape shape;
  Shape strides;  // elements
  std::vector<uint64_t> storage;
  uint64_t byte_offset = 0;

  xdev_tensor_t desc() const {
    return xdev_tensor_t{const_cast<uint64_t*>(storage.data()), byte_offset,  dtype,
                         static_cast<int32_t>(shape.size()),    shape.data(), strides.data()};
  }
  char* address(const Shape& index) const {
    int64_t e = 0;
    for (size_t k = 0; k < index.size(); ++k) e += index[k] * strides[k];
    return reinterpret_cast<char*>(const_cast<uint64_t*>(storage.data())) + byte_offset +
           e * itemsize(dtype);
  }
  template <typename T>
  T get(const Shape& index) const {
    T v;
    std::memcpy(&v, address(index), sizeof(T));
    return v;
  }
  template <typename T>
  void set(const Shape& index, T v) {
    std::memcpy(address(index), &v, sizeof(T));
  }
  // Row-major flat index -> value.
  template <typename T>
  T flat(int64_t i) const {
    Shape index(shape.size());
    for (int k = static_cast<int>(shape.size()) - 1; k >= 0; --k) {
      index[k] = i % shape[k];
      i /= shape[k];
    }
    return get<T>(index);
  }
};

Tensor make(xdev_dtype_t dtype, const Shape& shape, const Layout& layout = {}) {
  Tensor t;
  t.dtype = dtype;
  t.shape = shape;
  const int rank = static_cast<int>(shape.size());
  std::vector<int> order = layout.order;
  if (order.empty()) {
    for (int k = 0; k < rank; ++k) order.push_back(k);
  }
  t.strides.assign(shape.size(), 0);
  int64_t acc = 1;
  for (int j = rank - 1; j >= 0; --j) {
    const int axis = order[j];
    const bool b = !layout.broadcast.empty() && layout.broadcast[axis];
    t.strides[axis] = b ? 0 : acc;
    if (!b) acc *= shape[axis];
  }
  const int64_t bytes = (acc + layout.offset) * itemsize(dtype);
  t.storage.assign(static_cast<size_t>(bytes / 8 + 2), 0);
  t.byte_offset = static_cast<uint64_t>(layout.offset * itemsize(dtype));
  return t;
}

// Calls f(T{}) for the C++ type of a dtype (uint8_t for bool).
template <typename F>
void visit(xdev_dtype_t d, F&& f) {
  if (d == XDEV_DTYPE_FLOAT32) f(float{});
  if (d == XDEV_DTYPE_FLOAT64) f(double{});
  if (d == XDEV_DTYPE_INT32) f(int32_t{});
  if (d == XDEV_DTYPE_INT64) f(int64_t{});
  if (d == XDEV_DTYPE_BOOL) f(uint8_t{});
}

// Random values: floats in [-8, 8), integers in [-50, 50], bools 0/1.
void randomize(Tensor& t, std::mt19937_64& rng, double lo = -8, double hi = 8) {
  std::uniform_real_distribution<double> real(lo, hi);
  std::uniform_int_distribution<int64_t> integer(static_cast<int64_t>(lo * 6.25),
                                                 static_cast<int64_t>(hi * 6.25));
  visit(t.dtype, [&](auto zero) {
    using T = decltype(zero);
    for_each_index(t.shape, [&](const Shape& i) {
      if constexpr (std::is_floating_point_v<T>) {
        t.set<T>(i, static_cast<T>(real(rng)));
      } else if constexpr (std::is_same_v<T, uint8_t>) {
        t.set<T>(i, static_cast<T>(rng() & 1));  // bool
      } else {
        t.set<T>(i, static_cast<T>(integer(rng)));
      }
    });
  });
}

Tensor random(xdev_dtype_t dtype, const Shape& shape, std::mt19937_64& rng,
              const Layout& layout = {}) {
  Tensor t = make(dtype, shape, layout);
  randomize(t, rng);
  return t;
}

// Calls the kernel for `op` that the core would pick.
Outcome run(const std::string& op, const std::vector<const Tensor*>& inputs, Tensor& out,
            const std::vector<xdev_attr_t>& attrs = {}) {
  Plugin& p = Plugin::get();
  const xdev_dtype_t in = inputs.empty() ? out.dtype : inputs[0]->dtype;
  const xdev_kernel_info_t* k = p.find(op, in, out.dtype);
  if (k == nullptr) {
    ADD_FAILURE() << "no kernel for " << op << "(" << name(in) << " -> " << name(out.dtype) << ")";
    return {XDEV_STATUS_NOT_FOUND, "no kernel"};
  }
  xdev_test::KernelCall call(k->op, p.device(), p.stream());
  for (const Tensor* t : inputs) call.input(t->desc());
  call.output(out.desc());
  for (const xdev_attr_t& a : attrs) call.attribute(a);
  Outcome o = take(k->fn(k->kernel_context, call.get()));
  if (o.code == XDEV_STATUS_OK) {
    if (Outcome s = take(p.api()->stream_synchronize(p.stream())); s.code != XDEV_STATUS_OK) {
      return s;
    }
  }
  return o;
}

template <typename T>
bool same_value(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(a) && std::isnan(b)) return true;
  }
  return a == b;
}

// Expects out == ref elementwise (exact; NaN equals NaN).
template <typename T>
::testing::AssertionResult equal(const Tensor& out, const std::function<T(const Shape&)>& ref) {
  int64_t bad = 0;
  std::string first;
  for_each_index(out.shape, [&](const Shape& i) {
    const T got = out.get<T>(i);
    const T want = ref(i);
    if (!same_value(got, want)) {
      if (bad++ == 0) {
        first = "at [";
        for (int64_t v : i) first += std::to_string(v) + ",";
        first += "] got " + std::to_string(+got) + " want " + std::to_string(+want);
      }
    }
  });
  if (bad == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << bad << " wrong elements, first " << first;
}

constexpr xdev_dtype_t kNumeric[] = {XDEV_DTYPE_FLOAT32, XDEV_DTYPE_FLOAT64, XDEV_DTYPE_INT32,
                                     XDEV_DTYPE_INT64};
constexpr xdev_dtype_t kAll[] = {XDEV_DTYPE_FLOAT32, XDEV_DTYPE_FLOAT64, XDEV_DTYPE_INT32,
                                 XDEV_DTYPE_INT64, XDEV_DTYPE_BOOL};

class CpuKernels : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(Plugin::get().ready()) << Plugin::get().error(); }
  std::mt19937_64 rng_{20240611};
};

// ---------------------------------------------------------------------------
// Registration

TEST_F(CpuKernels, RegistersEveryOpOfTheContractForDeviceTypeZero) {
  uint32_t count = 0;
  const xdev_kernel_info_t* const* kernels = Plugin::get().kernels(&count);
  const uint64_t f = XDEV_DTYPE_BIT(XDEV_DTYPE_FLOAT32) | XDEV_DTYPE_BIT(XDEV_DTYPE_FLOAT64);
  const uint64_t num = f | XDEV_DTYPE_BIT(XDEV_DTYPE_INT32) | XDEV_DTYPE_BIT(XDEV_DTYPE_INT64);
  const uint64_t b = XDEV_DTYPE_BIT(XDEV_DTYPE_BOOL);
  const uint64_t all = num | b;
  // float16 and bfloat16: every float op (computed in float32); Cast, Fill,
  // Select and data movement take every dtype of the ABI.
  const uint64_t h = XDEV_DTYPE_BIT(XDEV_DTYPE_FLOAT16) | XDEV_DTYPE_BIT(XDEV_DTYPE_BFLOAT16);
  const uint64_t every =
      all | h | XDEV_DTYPE_BIT(XDEV_DTYPE_UINT8) | XDEV_DTYPE_BIT(XDEV_DTYPE_INT8);
  // Arithmetic, comparisons and reductions: the 8-bit integers too (Neg,
  // Abs, Sign: int8 only), as TensorFlow's CPU kernels.
  const uint64_t bytes = XDEV_DTYPE_BIT(XDEV_DTYPE_UINT8) | XDEV_DTYPE_BIT(XDEV_DTYPE_INT8);
  const uint64_t ar = num | h | bytes, sg = num | h | XDEV_DTYPE_BIT(XDEV_DTYPE_INT8);
  const std::vector<std::pair<std::string, uint64_t>> expected = {
      {"MatMul", num | h}, {"Add", all | h | bytes}, {"Sub", ar}, {"Mul", ar}, {"Div", ar},
      {"Neg", sg}, {"Relu", ar}, {"AddN", ar}, {"Cast", every}, {"Sum", ar},
      {"Mean", ar}, {"Copy", every}, {"Fill", every}, {"RandomUniform", f},
      // Elementwise math.
      {"Abs", sg}, {"Sign", sg}, {"Square", ar}, {"Exp", f | h}, {"Expm1", f | h},
      {"Log", f | h}, {"Log1p", f | h}, {"Sqrt", f | h}, {"Rsqrt", f | h}, {"Reciprocal", f | h},
      {"Sin", f | h}, {"Cos", f | h}, {"Tanh", f | h}, {"Sigmoid", f | h}, {"Erf", f | h},
      {"Softplus", f | h}, {"Floor", f | h}, {"Ceil", f | h}, {"Round", f | h},
      {"LeakyRelu", f | h}, {"Gelu", f | h}, {"Pow", f | h}, {"Maximum", ar},
      {"Minimum", ar}, {"FloorDiv", ar}, {"FloorMod", ar},
      {"SquaredDifference", num | h},
      // Comparisons and logic; Select is looked up by its bool condition.
      {"Equal", every}, {"NotEqual", every}, {"Less", ar}, {"LessEqual", ar},
      {"Greater", ar}, {"GreaterEqual", ar}, {"LogicalAnd", b}, {"LogicalOr", b},
      {"LogicalNot", b}, {"IsNan", f | h}, {"IsFinite", f | h}, {"Select", b},
      {"ClipByValue", ar},
      // Reductions.
      {"Max", ar}, {"Min", ar}, {"Prod", ar}, {"Any", b}, {"All", b},
      {"LogSumExp", f | h}, {"ArgMax", ar | b}, {"ArgMin", ar | b}, {"CumSum", ar},
      // Normalisations along an axis (NN).
      {"Softmax", f | h}, {"LogSoftmax", f | h},
      // Data movement.
      {"ConcatV2", every}, {"Pack", every}, {"Identity", every}, {"Tile", every}, {"PadV2", every},
      {"GatherV2", every},
      // NN ops.
      {"BiasAdd", f | h}, {"SoftmaxCrossEntropyWithLogits", f | h}, {"LayerNorm", f | h},
      // Indexing.
      {"Slice", every}, {"StridedSlice", every}, {"Range", num}, {"OneHot", num & ~f},
      {"BroadcastTo", every},
      // Convolution and pooling.
      {"Conv2D", f | h}, {"Conv2DBackpropInput", f | h}, {"Conv2DBackpropFilter", f | h},
      {"MaxPool", f | h}, {"AvgPool", f | h}, {"MaxPoolGrad", f | h}, {"AvgPoolGrad", f | h},
      // Batched products and scatters.
      {"BatchMatMulV2", num | h}, {"TensorScatterAdd", ar}};
  ASSERT_EQ(count, expected.size());
  for (const auto& [op, mask] : expected) {
    const xdev_kernel_info_t* k = Plugin::get().any(op);
    ASSERT_NE(k, nullptr) << op;
    EXPECT_EQ(k->struct_size, XDEV_KERNEL_INFO_STRUCT_SIZE) << op;
    EXPECT_EQ(k->type_index, 0U) << op;
    EXPECT_EQ(k->input_dtypes, mask) << op;
    EXPECT_NE(k->fn, nullptr) << op;
    if (op == "Cast" || op == "Select") {
      EXPECT_EQ(k->output_dtypes, every) << op;
    }
    if (op == "Equal" || op == "Less" || op == "IsNan") {
      EXPECT_EQ(k->output_dtypes, b) << op;
    }
  }
  (void)kernels;
}

// ---------------------------------------------------------------------------
// Elementwise binary ops

template <typename T>
T ref_binary(const std::string& op, T a, T b) {
  if constexpr (std::is_same_v<T, uint8_t>) {
    return (a != 0 || b != 0) ? 1 : 0;  // bool Add: logical or
  } else if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    if (op == "Add") return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
    if (op == "Sub") return static_cast<T>(static_cast<U>(a) - static_cast<U>(b));
    if (op == "Mul") return static_cast<T>(static_cast<U>(a) * static_cast<U>(b));
    if (b == 0) return 0;
    if (b == -1) return static_cast<T>(U{0} - static_cast<U>(a));
    const int64_t q = static_cast<int64_t>(a) / static_cast<int64_t>(b);
    return static_cast<T>(q);
  } else {
    if (op == "Add") return a + b;
    if (op == "Sub") return a - b;
    if (op == "Mul") return a * b;
    return a / b;
  }
}

struct BinaryCase {
  const char* what;
  Shape shape;
  Layout x, y;
};

std::vector<BinaryCase> binary_cases() {
  return {
      {"scalar rank 0", {}, {}, {}},
      {"one element", {1}, {}, {}},
      {"odd dense", {7}, {}, {}},
      {"odd dense 2d", {13, 17}, {}, {}},
      {"empty", {0, 5}, {}, {}},
      {"dense parallel", {40001}, {}, {}},
      {"offsets", {3, 11}, {{}, {}, 3}, {{}, {}, 5}},
      {"y row broadcast", {9, 31}, {}, {{}, {true, false}, 0}},
      {"x column broadcast", {9, 31}, {{}, {false, true}, 0}, {}},
      {"y scalar broadcast", {5, 7}, {}, {{}, {true, true}, 1}},
      {"x scalar broadcast parallel", {300, 200}, {{}, {true, true}, 0}, {}},
      {"both broadcast (outer)", {6, 10}, {{}, {false, true}, 0}, {{}, {true, false}, 0}},
      {"x transposed", {19, 23}, {{1, 0}, {}, 0}, {}},
      {"both transposed 3d", {4, 5, 6}, {{2, 0, 1}, {}, 0}, {{1, 2, 0}, {}, 2}},
      {"transposed parallel", {257, 255}, {{1, 0}, {}, 0}, {{}, {false, true}, 0}},
      {"broadcast middle axis", {3, 4, 37}, {}, {{}, {false, true, false}, 0}},
  };
}

TEST_F(CpuKernels, BinaryOpsMatchTheReferenceForEveryDtypeAndLayout) {
  for (const std::string op : {"Add", "Sub", "Mul", "Div"}) {
    for (xdev_dtype_t dtype : kAll) {
      if (dtype == XDEV_DTYPE_BOOL && op != "Add") continue;
      for (const BinaryCase& c : binary_cases()) {
        SCOPED_TRACE(op + " " + name(dtype) + " " + c.what);
        Tensor x = random(dtype, c.shape, rng_, c.x);
        Tensor y = random(dtype, c.shape, rng_, c.y);
        if (op == "Div") {  // a zero integer divisor is an error (tested below)
          visit(dtype, [&](auto zero) {
            using T = decltype(zero);
            if constexpr (std::is_integral_v<T>) {
              for_each_index(y.shape, [&](const Shape& i) {
                if (y.get<T>(i) == 0) y.set<T>(i, T{3});
              });
            }
          });
        }
        Tensor out = make(dtype, c.shape);
        ASSERT_EQ(run(op, {&x, &y}, out).message, "");
        visit(dtype, [&](auto zero) {
          using T = decltype(zero);
          EXPECT_TRUE(equal<T>(
              out, [&](const Shape& i) { return ref_binary<T>(op, x.get<T>(i), y.get<T>(i)); }));
        });
      }
    }
  }
}

TEST_F(CpuKernels, IntegerDivRoundsTowardZero) {
  const std::vector<int32_t> a = {7, -7, 7, -7, 5, 0, -3, INT32_MIN, INT32_MIN, 1};
  const std::vector<int32_t> b = {2, 2, -2, -2, 3, 4, 5, -1, 1, INT32_MIN};
  const std::vector<int32_t> want = {3, -3, -3, 3, 1, 0, 0, INT32_MIN, INT32_MIN, 0};
  for (xdev_dtype_t dtype : {XDEV_DTYPE_INT32, XDEV_DTYPE_INT64}) {
    SCOPED_TRACE(name(dtype));
    const int64_t n = static_cast<int64_t>(a.size());
    Tensor x = make(dtype, {n}), y = make(dtype, {n}), out = make(dtype, {n});
    for (int64_t i = 0; i < n; ++i) {
      // For int64 the int32 minimum is just a number: use int64's own.
      const int64_t av = dtype == XDEV_DTYPE_INT64 && a[i] == INT32_MIN ? INT64_MIN : a[i];
      const int64_t bv = dtype == XDEV_DTYPE_INT64 && b[i] == INT32_MIN ? INT64_MIN : b[i];
      if (dtype == XDEV_DTYPE_INT32) {
        x.set<int32_t>({i}, a[i]);
        y.set<int32_t>({i}, b[i]);
      } else {
        x.set<int64_t>({i}, av);
        y.set<int64_t>({i}, bv);
      }
    }
    ASSERT_EQ(run("Div", {&x, &y}, out).message, "");
    for (int64_t i = 0; i < n; ++i) {
      const int64_t w = dtype == XDEV_DTYPE_INT64 && want[i] == INT32_MIN ? INT64_MIN : want[i];
      const int64_t got = dtype == XDEV_DTYPE_INT32 ? out.get<int32_t>({i}) : out.get<int64_t>({i});
      EXPECT_EQ(got, w) << a[i] << " / " << b[i];
    }
  }
}

// A zero integer divisor fails the call with INVALID_ARGUMENT naming the op,
// as TensorFlow's CPU kernels do (it used to give 0: a silent wrong value),
// on the dense and the strided (broadcast) paths, for every integer dtype.
TEST_F(CpuKernels, IntegerZeroDivisorIsAnError) {
  for (const std::string op : {"Div", "FloorDiv", "FloorMod"}) {
    for (xdev_dtype_t dtype :
         {XDEV_DTYPE_INT32, XDEV_DTYPE_INT64, XDEV_DTYPE_UINT8, XDEV_DTYPE_INT8}) {
      SCOPED_TRACE(op + " " + name(dtype));
      for (const BinaryCase& c : {BinaryCase{"dense", {5}, {}, {}},
                                  BinaryCase{"y scalar broadcast", {4, 3}, {}, {{}, {true, true}, 0}}}) {
        SCOPED_TRACE(c.what);
        Tensor x = random(dtype, c.shape, rng_, c.x);
        Tensor y = random(dtype, c.shape, rng_, c.y);
        visit(dtype, [&](auto zero) {
          using T = decltype(zero);
          for_each_index(y.shape, [&](const Shape& i) { y.set<T>(i, T{2}); });
          y.set<T>(Shape(c.shape.size(), 0), T{0});
        });
        Tensor out = make(dtype, c.shape);
        const Outcome o = run(op, {&x, &y}, out);
        EXPECT_EQ(o.code, XDEV_STATUS_INVALID_ARGUMENT);
        EXPECT_NE(o.message.find(op + ": integer division by zero"), std::string::npos)
            << o.message;
      }
    }
  }
}

TEST_F(CpuKernels, FloatDivFollowsIeee) {
  Tensor x = make(XDEV_DTYPE_FLOAT32, {3}), y = make(XDEV_DTYPE_FLOAT32, {3});
  Tensor out = make(XDEV_DTYPE_FLOAT32, {3});
  x.set<float>({0}, 1.f);
  x.set<float>({1}, -1.f);
  x.set<float>({2}, 0.f);
  for (int64_t i = 0; i < 3; ++i) y.set<float>({i}, 0.f);
  ASSERT_EQ(run("Div", {&x, &y}, out).message, "");
  EXPECT_EQ(out.get<float>({0}), std::numeric_limits<float>::infinity());
  EXPECT_EQ(out.get<float>({1}), -std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::isnan(out.get<float>({2})));
}

TEST_F(CpuKernels, IntegerOverflowWraps) {
  Tensor x = make(XDEV_DTYPE_INT32, {2}), y = make(XDEV_DTYPE_INT32, {2});
  Tensor out = make(XDEV_DTYPE_INT32, {2});
  x.set<int32_t>({0}, INT32_MAX);
  y.set<int32_t>({0}, 1);
  x.set<int32_t>({1}, INT32_MIN);
  y.set<int32_t>({1}, 1);
  ASSERT_EQ(run("Add", {&x, &y}, out).message, "");
  EXPECT_EQ(out.get<int32_t>({0}), INT32_MIN);
  ASSERT_EQ(run("Sub", {&x, &y}, out).message, "");
  EXPECT_EQ(out.get<int32_t>({1}), INT32_MAX);
  ASSERT_EQ(run("Mul", {&x, &x}, out).message, "");
  EXPECT_EQ(out.get<int32_t>({0}), 1);
}

// ---------------------------------------------------------------------------
// Unary ops

TEST_F(CpuKernels, NegAndReluMatchTheReference) {
  const std::vector<std::pair<Shape, Layout>> cases = {
      {{}, {}},
      {{1}, {}},
      {{33}, {{}, {}, 1}},
      {{50000}, {}},
      {{0}, {}},
      {{7, 9}, {{1, 0}, {}, 0}},
      {{3, 5, 4}, {{}, {false, true, false}, 0}},
      {{300, 301}, {{1, 0}, {}, 0}},
  };
  for (const std::string op : {"Neg", "Relu"}) {
    for (xdev_dtype_t dtype : kNumeric) {
      for (const auto& [shape, layout] : cases) {
        SCOPED_TRACE(op + " " + name(dtype) + " rank " + std::to_string(shape.size()));
        Tensor x = random(dtype, shape, rng_, layout);
        Tensor out = make(dtype, shape);
        ASSERT_EQ(run(op, {&x}, out).message, "");
        visit(dtype, [&](auto zero) {
          using T = decltype(zero);
          EXPECT_TRUE(equal<T>(out, [&](const Shape& i) -> T {
            const T v = x.get<T>(i);
            if (op == "Relu") return v > T{0} ? v : T{0};
            if constexpr (std::is_integral_v<T>) {
              using U = std::make_unsigned_t<T>;
              return static_cast<T>(U{0} - static_cast<U>(v));
            } else {
              return -v;
            }
          }));
        });
      }
    }
  }
}

TEST_F(CpuKernels, NegWrapsTheIntegerMinimumAndReluMapsNaNToZero) {
  Tensor x = make(XDEV_DTYPE_INT64, {1}), out = make(XDEV_DTYPE_INT64, {1});
  x.set<int64_t>({0}, INT64_MIN);
  ASSERT_EQ(run("Neg", {&x}, out).message, "");
  EXPECT_EQ(out.get<int64_t>({0}), INT64_MIN);
  // x > 0 ? x : 0, like the cuda plugin and the conformance reference.
  Tensor f = make(XDEV_DTYPE_FLOAT64, {4}), g = make(XDEV_DTYPE_FLOAT64, {4});
  f.set<double>({0}, std::nan(""));
  f.set<double>({1}, -std::numeric_limits<double>::infinity());
  f.set<double>({2}, 2.5);
  f.set<double>({3}, -0.0);
  ASSERT_EQ(run("Relu", {&f}, g).message, "");
  EXPECT_EQ(std::bit_cast<uint64_t>(g.get<double>({0})), 0U);
  EXPECT_EQ(g.get<double>({1}), 0.0);
  EXPECT_EQ(g.get<double>({2}), 2.5);
  EXPECT_EQ(std::bit_cast<uint64_t>(g.get<double>({3})), 0U);
}

// ---------------------------------------------------------------------------
// AddN

TEST_F(CpuKernels, AddNSumsInputsInOrderForDenseAndStridedInputs) {
  const std::vector<std::pair<Shape, std::vector<Layout>>> cases = {
      {{}, {{}, {}, {}}},          {{5}, {{}}},
      {{17, 3}, {{}, {}}},         {{9, 8}, {{}, {{1, 0}, {}, 0}, {}, {{}, {}, 3}, {}}},
      {{40000}, {{}, {}, {}, {}}}, {{200, 201}, {{}, {{1, 0}, {}, 0}, {}}},
      {{0, 3}, {{}, {}}},
  };
  for (xdev_dtype_t dtype : kNumeric) {
    for (const auto& [shape, layouts] : cases) {
      SCOPED_TRACE(std::string(name(dtype)) + " with " + std::to_string(layouts.size()) +
                   " inputs");
      std::vector<Tensor> xs;
      for (const Layout& l : layouts) xs.push_back(random(dtype, shape, rng_, l));
      std::vector<const Tensor*> ptrs;
      for (const Tensor& t : xs) ptrs.push_back(&t);
      Tensor out = make(dtype, shape);
      ASSERT_EQ(run("AddN", ptrs, out).message, "");
      visit(dtype, [&](auto zero) {
        using T = decltype(zero);
        EXPECT_TRUE(equal<T>(out, [&](const Shape& i) {
          T s = xs[0].get<T>(i);
          for (size_t k = 1; k < xs.size(); ++k) s = ref_binary<T>("Add", s, xs[k].get<T>(i));
          return s;
        }));
      });
    }
  }
}

// ---------------------------------------------------------------------------
// Cast

template <typename To, typename From>
To ref_cast(From v) {
  if constexpr (std::is_same_v<To, uint8_t>) {
    return v != From{0} ? 1 : 0;
  } else if constexpr (std::is_same_v<From, uint8_t>) {
    return v != 0 ? To{1} : To{0};
  } else {
    return static_cast<To>(v);  // in range here: rounds toward zero for float -> int
  }
}

TEST_F(CpuKernels, CastConvertsBetweenAllFiveDtypes) {
  const std::vector<std::pair<Shape, Layout>> cases = {{{}, {}},
                                                       {{11}, {}},
                                                       {{6, 7}, {{1, 0}, {}, 2}},
                                                       {{3, 1, 5}, {{}, {true, false, false}, 0}},
                                                       {{40000}, {}}};
  for (xdev_dtype_t from : kAll) {
    for (xdev_dtype_t to : kAll) {
      for (const auto& [shape, layout] : cases) {
        SCOPED_TRACE(std::string(name(from)) + " -> " + name(to));
        Tensor x = random(from, shape, rng_, layout);
        Tensor out = make(to, shape);
        ASSERT_EQ(run("Cast", {&x}, out, {attr_dtype("dtype", to)}).message, "");
        visit(from, [&](auto f) {
          using F = decltype(f);
          visit(to, [&](auto t) {
            using T = decltype(t);
            EXPECT_TRUE(equal<T>(out, [&](const Shape& i) { return ref_cast<T>(x.get<F>(i)); }));
          });
        });
      }
    }
  }
}

TEST_F(CpuKernels, CastEdgeCases) {
  const std::vector<double> values = {2.7, -2.7, 0.5, -0.5, 0.0, -0.0, 1e30, -1e30, std::nan("")};
  const int64_t n = static_cast<int64_t>(values.size());
  Tensor x = make(XDEV_DTYPE_FLOAT64, {n});
  for (int64_t i = 0; i < n; ++i) x.set<double>({i}, values[i]);

  Tensor i32 = make(XDEV_DTYPE_INT32, {n});
  ASSERT_EQ(run("Cast", {&x}, i32, {attr_dtype("dtype", XDEV_DTYPE_INT32)}).message, "");
  EXPECT_EQ(i32.get<int32_t>({0}), 2);   // toward zero
  EXPECT_EQ(i32.get<int32_t>({1}), -2);  // toward zero
  EXPECT_EQ(i32.get<int32_t>({2}), 0);
  EXPECT_EQ(i32.get<int32_t>({3}), 0);
  // Out of range is unspecified by the contract; the cpu plugin saturates,
  // NaN -> 0, and never traps.
  EXPECT_EQ(i32.get<int32_t>({6}), INT32_MAX);
  EXPECT_EQ(i32.get<int32_t>({7}), INT32_MIN);
  EXPECT_EQ(i32.get<int32_t>({8}), 0);

  Tensor b = make(XDEV_DTYPE_BOOL, {n});
  ASSERT_EQ(run("Cast", {&x}, b, {attr_dtype("dtype", XDEV_DTYPE_BOOL)}).message, "");
  const std::vector<uint8_t> want_bool = {1, 1, 1, 1, 0, 0, 1, 1, 1};  // x != 0 (NaN != 0)
  for (int64_t i = 0; i < n; ++i) EXPECT_EQ(b.get<uint8_t>({i}), want_bool[i]) << values[i];

  Tensor back = make(XDEV_DTYPE_FLOAT32, {n});
  ASSERT_EQ(run("Cast", {&b}, back, {attr_dtype("dtype", XDEV_DTYPE_FLOAT32)}).message, "");
  for (int64_t i = 0; i < n; ++i) EXPECT_EQ(back.get<float>({i}), want_bool[i] ? 1.f : 0.f);

  Tensor big = make(XDEV_DTYPE_INT64, {1});
  big.set<int64_t>({0}, (int64_t{1} << 40) + 3);
  Tensor narrow = make(XDEV_DTYPE_INT32, {1});
  ASSERT_EQ(run("Cast", {&big}, narrow, {attr_dtype("dtype", XDEV_DTYPE_INT32)}).message, "");
  EXPECT_EQ(narrow.get<int32_t>({0}), 3);  // modulo 2^32, as C++ converts
}

// ---------------------------------------------------------------------------
// Copy and Fill

TEST_F(CpuKernels, CopyMakesAnyViewDense) {
  const std::vector<std::pair<Shape, Layout>> cases = {
      {{}, {}},
      {{13}, {{}, {}, 3}},
      {{5, 6, 7}, {{2, 0, 1}, {}, 0}},
      {{5, 6, 7}, {{1, 2, 0}, {false, true, false}, 1}},
      {{4, 1, 3}, {{2, 1, 0}, {}, 0}},
      {{512, 600}, {{1, 0}, {}, 0}},
      {{1 << 20}, {}},
      {{0, 4}, {}},
  };
  for (xdev_dtype_t dtype : kAll) {
    for (const auto& [shape, layout] : cases) {
      SCOPED_TRACE(std::string(name(dtype)) + " rank " + std::to_string(shape.size()));
      Tensor x = random(dtype, shape, rng_, layout);
      Tensor out = make(dtype, shape);
      ASSERT_EQ(run("Copy", {&x}, out).message, "");
      visit(dtype, [&](auto zero) {
        using T = decltype(zero);
        EXPECT_TRUE(equal<T>(out, [&](const Shape& i) { return x.get<T>(i); }));
      });
    }
  }
}

TEST_F(CpuKernels, FillWritesTheValueConvertedToTheDtype) {
  for (double value : {0.0, 1.0, 2.5, -2.5, -7.0}) {
    for (xdev_dtype_t dtype : kAll) {
      for (const Shape& shape : {Shape{}, Shape{3}, Shape{100, 401}}) {
        SCOPED_TRACE(std::string(name(dtype)) + " " + std::to_string(value));
        Tensor out = make(dtype, shape);
        ASSERT_EQ(run("Fill", {}, out, {attr_float("value", value)}).message, "");
        visit(dtype, [&](auto zero) {
          using T = decltype(zero);
          T want;
          if constexpr (std::is_same_v<T, uint8_t>) {
            want = value != 0 ? 1 : 0;
          } else {
            want = static_cast<T>(value);
          }
          EXPECT_TRUE(equal<T>(out, [&](const Shape&) { return want; }));
        });
      }
    }
  }
}

// ---------------------------------------------------------------------------
// RandomUniform: bit for bit the generator of docs/ops.md

uint64_t splitmix(uint64_t seed, uint64_t i) {
  uint64_t x = seed + (i + 1) * 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

TEST_F(CpuKernels, RandomUniformIsBitExactToTheContractsGenerator) {
  const std::vector<uint64_t> seeds = {0, 1, 42, 0x5eed, uint64_t{1} << 63, ~uint64_t{0}};
  const std::vector<std::pair<double, double>> ranges = {{0, 1}, {-3.5, 7.25}, {1e-3, 2e-3}};
  for (uint64_t seed : seeds) {
    for (const auto& [lo, hi] : ranges) {
      for (const Shape& shape : {Shape{}, Shape{7, 3}, Shape{70000}}) {
        SCOPED_TRACE("seed " + std::to_string(seed) + " n " + std::to_string(numel(shape)));
        const std::vector<xdev_attr_t> attrs = {attr_int("seed", static_cast<int64_t>(seed)),
                                                attr_float("minval", lo), attr_float("maxval", hi)};
        Tensor f = make(XDEV_DTYPE_FLOAT32, shape);
        ASSERT_EQ(run("RandomUniform", {}, f, attrs).message, "");
        Tensor d = make(XDEV_DTYPE_FLOAT64, shape);
        ASSERT_EQ(run("RandomUniform", {}, d, attrs).message, "");
        int64_t bad = 0;
        for (int64_t i = 0; i < numel(shape); ++i) {
          const uint64_t x = splitmix(seed, static_cast<uint64_t>(i));
          volatile float uf = static_cast<float>(x >> 40) * 0x1.0p-24f;
          volatile float lf = static_cast<float>(lo), hf = static_cast<float>(hi);
          volatile float rf = hf - lf;
          volatile float pf = rf * uf;
          const float want_f = lf + pf;
          volatile double ud = static_cast<double>(x >> 11) * 0x1.0p-53;
          volatile double pd = (hi - lo) * ud;
          const double want_d = lo + pd;
          const float got_f = f.flat<float>(i);
          const double got_d = d.flat<double>(i);
          if (std::bit_cast<uint32_t>(got_f) != std::bit_cast<uint32_t>(want_f) ||
              std::bit_cast<uint64_t>(got_d) != std::bit_cast<uint64_t>(want_d)) {
            if (bad++ == 0) {
              ADD_FAILURE() << "element " << i << ": float32 " << got_f << " want " << want_f
                            << ", float64 " << got_d << " want " << want_d;
            }
          }
          if (!(got_d >= lo && got_d < hi)) ++bad;
        }
        EXPECT_EQ(bad, 0);
      }
    }
  }
}

TEST_F(CpuKernels, RandomUniformKnownValues) {
  // Seed 0, element 0: x = splitmix64's first output for state 0.
  EXPECT_EQ(splitmix(0, 0), 0xE220A8397B1DCDAFull);
  Tensor d = make(XDEV_DTYPE_FLOAT64, {1});
  ASSERT_EQ(run("RandomUniform", {}, d,
                {attr_int("seed", 0), attr_float("minval", 0), attr_float("maxval", 1)})
                .message,
            "");
  EXPECT_EQ(d.get<double>({0}), static_cast<double>(0xE220A8397B1DCDAFull >> 11) * 0x1.0p-53);
}

// ---------------------------------------------------------------------------
// Sum and Mean

struct ReduceCase {
  Shape shape;
  std::vector<int64_t> axes;
  Layout layout;
};

std::vector<ReduceCase> reduce_cases() {
  return {
      {{}, {}, {}},
      {{1}, {0}, {}},
      {{7}, {0}, {}},
      {{7}, {}, {}},
      {{33, 47}, {0}, {}},
      {{33, 47}, {1}, {}},
      {{33, 47}, {0, 1}, {}},
      {{33, 47}, {}, {}},
      {{33, 47}, {0}, {{1, 0}, {}, 0}},
      {{33, 47}, {1}, {{1, 0}, {}, 3}},
      {{5, 6, 7}, {1}, {{2, 0, 1}, {}, 0}},
      {{5, 6, 7}, {0, 2}, {{}, {false, true, false}, 0}},
      {{3, 4, 5, 6}, {1, 3}, {}},
      {{3, 4, 5, 6}, {0, 2}, {}},
      {{3, 4, 5, 6}, {2}, {}},
      {{3, 4, 5, 6}, {0, 1, 2, 3}, {{3, 1, 0, 2}, {}, 0}},
      {{3, 1, 5}, {1}, {}},
      {{5, 0, 3}, {1}, {}},   // empty reduction: Sum 0, Mean NaN / 0
      {{0}, {0}, {}},         // empty reduction to a scalar
      {{300, 200}, {0}, {}},  // path B in parallel
      {{200, 300}, {1}, {}},  // path A, outputs in parallel
      {{2, 50001}, {1}, {}},  // path A, blocks in parallel
      {{100003}, {0}, {}},    // a full reduction in parallel
      {{64, 64, 20}, {0, 2}, {{}, {}, 1}},
  };
}

template <typename T>
void check_reduction(const Tensor& x, const Tensor& out, const std::vector<int64_t>& axes,
                     bool keepdims, bool mean) {
  const int rank = static_cast<int>(x.shape.size());
  std::vector<bool> reduced(static_cast<size_t>(rank), false);
  for (int64_t a : axes) reduced[static_cast<size_t>(a)] = true;
  int64_t count = 1;
  for (int k = 0; k < rank; ++k) {
    if (reduced[k]) count *= x.shape[k];
  }
  // Sums per output (row-major over the kept dims), in long double / int64.
  const int64_t outputs = numel(out.shape);
  std::vector<long double> sums(static_cast<size_t>(outputs), 0), scale(sums);
  std::vector<uint64_t> isums(static_cast<size_t>(outputs), 0);
  for_each_index(x.shape, [&](const Shape& i) {
    int64_t o = 0;
    for (int k = 0; k < rank; ++k) {
      if (!reduced[k]) o = o * x.shape[k] + i[k];
    }
    const T v = x.get<T>(i);
    sums[o] += static_cast<long double>(v);
    scale[o] += std::fabs(static_cast<long double>(v));
    isums[o] += static_cast<uint64_t>(static_cast<int64_t>(v));
  });
  (void)keepdims;
  const double eps = std::is_same_v<T, float> ? 1e-5 : 1e-13;
  const double log_n = std::max(1.0, std::log2(static_cast<double>(std::max<int64_t>(count, 1))));
  int64_t bad = 0;
  for (int64_t o = 0; o < outputs; ++o) {
    const T got = out.flat<T>(o);
    if constexpr (std::is_floating_point_v<T>) {
      if (count == 0) {
        if (mean ? !std::isnan(got) : got != 0) ++bad;
        continue;
      }
      const long double want = mean ? sums[o] / count : sums[o];
      const long double tol =
          eps * log_n * (mean ? scale[o] / count : scale[o]) + std::numeric_limits<T>::min();
      if (!(std::fabs(static_cast<long double>(got) - want) <= tol)) {
        if (bad++ == 0) {
          ADD_FAILURE() << "output " << o << ": got " << got << " want " << (double)want;
        }
      }
    } else {
      // The sum wraps to T, then divides toward zero.
      const T s = static_cast<T>(static_cast<int64_t>(isums[o]));
      const T want = count == 0 ? T{0} : static_cast<T>(mean ? int64_t{s} / count : s);
      if (got != want && bad++ == 0) {
        ADD_FAILURE() << "output " << o << ": got " << got << " want " << want;
      }
    }
  }
  EXPECT_EQ(bad, 0);
}

TEST_F(CpuKernels, SumAndMeanOverAxesWithKeepdims) {
  for (const std::string op : {"Sum", "Mean"}) {
    for (xdev_dtype_t dtype : kNumeric) {
      for (const ReduceCase& c : reduce_cases()) {
        for (bool keepdims : {false, true}) {
          std::string what = op + " " + name(dtype) + " shape";
          for (int64_t d : c.shape) what += " " + std::to_string(d);
          what += " axes";
          for (int64_t a : c.axes) what += " " + std::to_string(a);
          what += keepdims ? " keepdims" : "";
          SCOPED_TRACE(what);
          Tensor x = random(dtype, c.shape, rng_, c.layout);
          Shape out_shape;
          for (size_t k = 0; k < c.shape.size(); ++k) {
            const bool r = std::find(c.axes.begin(), c.axes.end(), int64_t(k)) != c.axes.end();
            if (!r)
              out_shape.push_back(c.shape[k]);
            else if (keepdims)
              out_shape.push_back(1);
          }
          Tensor out = make(dtype, out_shape);
          ASSERT_EQ(run(op, {&x}, out, {attr_ints("axes", c.axes), attr_bool("keepdims", keepdims)})
                        .message,
                    "");
          visit(dtype, [&](auto zero) {
            using T = decltype(zero);
            check_reduction<T>(x, out, c.axes, keepdims, op == "Mean");
          });
        }
      }
    }
  }
}

TEST_F(CpuKernels, IntegerMeanDividesTowardZero) {
  Tensor x = make(XDEV_DTYPE_INT32, {2, 3});
  const int32_t v[] = {-1, -1, -2, 5, 0, 0};  // sums -4 and 5; means -1 and 1
  for (int64_t i = 0; i < 6; ++i) x.set<int32_t>({i / 3, i % 3}, v[i]);
  Tensor out = make(XDEV_DTYPE_INT32, {2});
  ASSERT_EQ(run("Mean", {&x}, out, {attr_ints("axes", {1}), attr_bool("keepdims", false)}).message,
            "");
  EXPECT_EQ(out.get<int32_t>({0}), -1);
  EXPECT_EQ(out.get<int32_t>({1}), 1);
}

TEST_F(CpuKernels, IntegerMeanWrapsTheSumToTheDtypeFirst) {
  // 3 * 2^30 wraps to -2^30 in int32; the mean of 3 such values is -2^30 / 3.
  Tensor x = make(XDEV_DTYPE_INT32, {3});
  for (int64_t i = 0; i < 3; ++i) x.set<int32_t>({i}, 1 << 30);
  Tensor out = make(XDEV_DTYPE_INT32, {});
  ASSERT_EQ(run("Mean", {&x}, out, {attr_ints("axes", {0}), attr_bool("keepdims", false)}).message,
            "");
  EXPECT_EQ(out.get<int32_t>({}), -(1 << 30) / 3);
  ASSERT_EQ(run("Sum", {&x}, out, {attr_ints("axes", {0}), attr_bool("keepdims", false)}).message,
            "");
  EXPECT_EQ(out.get<int32_t>({}), -(1 << 30));
}

TEST_F(CpuKernels, FloatSumDoesNotDependOnTheThreadCount) {
  Tensor x = random(XDEV_DTYPE_FLOAT32, {1 << 20}, rng_);
  Tensor many = make(XDEV_DTYPE_FLOAT32, {}), one = make(XDEV_DTYPE_FLOAT32, {});
  Tensor rows_many = make(XDEV_DTYPE_FLOAT32, {2}), rows_one = make(XDEV_DTYPE_FLOAT32, {2});
  Tensor x2 = random(XDEV_DTYPE_FLOAT32, {2, 1 << 19}, rng_);
  static const std::vector<int64_t> axis0 = {0};
  static const std::vector<int64_t> axis1 = {1};
  const std::vector<xdev_attr_t> all = {attr_ints("axes", axis0), attr_bool("keepdims", false)};
  const std::vector<xdev_attr_t> rows = {attr_ints("axes", axis1), attr_bool("keepdims", false)};
  ASSERT_EQ(run("Sum", {&x}, many, all).message, "");
  ASSERT_EQ(run("Sum", {&x2}, rows_many, rows).message, "");
  {
    // The plugin uses the process's one oneTBB: this limits its threads too.
    tbb::global_control serial(tbb::global_control::max_allowed_parallelism, 1);
    ASSERT_EQ(run("Sum", {&x}, one, all).message, "");
    ASSERT_EQ(run("Sum", {&x2}, rows_one, rows).message, "");
  }
  EXPECT_EQ(std::bit_cast<uint32_t>(many.get<float>({})),
            std::bit_cast<uint32_t>(one.get<float>({})));
  EXPECT_EQ(rows_many.get<float>({0}), rows_one.get<float>({0}));
  EXPECT_EQ(rows_many.get<float>({1}), rows_one.get<float>({1}));
}

// ---------------------------------------------------------------------------
// MatMul

template <typename T>
void check_matmul(const Tensor& a, const Tensor& b, const Tensor& c, bool ta, bool tb) {
  const int64_t m = c.shape[0], n = c.shape[1];
  const int64_t k = a.shape[ta ? 0 : 1];
  // op(a) and op(b) read once into dense row-major arrays.
  std::vector<T> opa(static_cast<size_t>(m * k)), opb(static_cast<size_t>(k * n));
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t p = 0; p < k; ++p) opa[i * k + p] = ta ? a.get<T>({p, i}) : a.get<T>({i, p});
  }
  for (int64_t p = 0; p < k; ++p) {
    for (int64_t j = 0; j < n; ++j) opb[p * n + j] = tb ? b.get<T>({j, p}) : b.get<T>({p, j});
  }
  int64_t bad = 0;
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      long double sum = 0, scale = 0;
      uint64_t isum = 0;
      for (int64_t p = 0; p < k; ++p) {
        const T av = opa[i * k + p];
        const T bv = opb[p * n + j];
        if constexpr (std::is_floating_point_v<T>) {
          const long double prod = static_cast<long double>(av) * bv;
          sum += prod;
          scale += std::fabs(prod);
        } else {
          isum += static_cast<uint64_t>(static_cast<int64_t>(av)) *
                  static_cast<uint64_t>(static_cast<int64_t>(bv));
        }
      }
      const T got = c.get<T>({i, j});
      bool ok;
      if constexpr (std::is_floating_point_v<T>) {
        const long double eps = std::is_same_v<T, float> ? 0x1p-23 : 0x1p-52;
        ok = std::fabs(static_cast<long double>(got) - sum) <= eps * (k + 2) * scale + 1e-30L;
      } else {
        ok = got == static_cast<T>(static_cast<int64_t>(isum));
      }
      if (!ok && bad++ == 0) {
        ADD_FAILURE() << "c[" << i << "," << j << "] = " << +got << ", want " << (double)sum;
      }
    }
  }
  EXPECT_EQ(bad, 0);
}

TEST_F(CpuKernels, MatMulMatchesTheReferenceOnEveryPathAndTransposeFlag) {
  struct Size {
    int64_t m, n, k;
    const char* path;
  };
  const std::vector<Size> sizes = {
      {2, 2, 3, "tiny (the walkthrough)"},
      {1, 1, 1, "tiny"},
      {5, 7, 1, "tiny, k=1"},
      {3, 4, 0, "k=0"},
      {1, 300, 9, "one row"},
      {17, 33, 29, "one BLAS call"},
      {129, 131, 127, "tiled"},
      {260, 70, 130, "tiled, tall"},
  };
  for (xdev_dtype_t dtype : kNumeric) {
    for (const Size& s : sizes) {
      for (bool ta : {false, true}) {
        for (bool tb : {false, true}) {
          SCOPED_TRACE(std::string(name(dtype)) + " " + std::to_string(s.m) + "x" +
                       std::to_string(s.k) + "x" + std::to_string(s.n) + " " + s.path +
                       (ta ? " aT" : "") + (tb ? " bT" : ""));
          Tensor a = random(dtype, ta ? Shape{s.k, s.m} : Shape{s.m, s.k}, rng_);
          Tensor b = random(dtype, tb ? Shape{s.n, s.k} : Shape{s.k, s.n}, rng_);
          Tensor c = make(dtype, {s.m, s.n});
          ASSERT_EQ(run("MatMul", {&a, &b}, c,
                        {attr_bool("transpose_a", ta), attr_bool("transpose_b", tb)})
                        .message,
                    "");
          visit(dtype, [&](auto zero) {
            using T = decltype(zero);
            check_matmul<T>(a, b, c, ta, tb);
          });
        }
      }
    }
  }
}

TEST_F(CpuKernels, LargeTiledMatMulMatchesOnSampledEntries) {
  // Above 2^31 flops: one tile per thread. Sizes that do not divide evenly;
  // entries at the tile borders and at random places are checked.
  for (bool tb : {false, true}) {
    SCOPED_TRACE(tb ? "bT" : "");
    const int64_t m = 1031, n = 1025, k = 1030;
    Tensor a = random(XDEV_DTYPE_FLOAT32, {m, k}, rng_);
    Tensor b = random(XDEV_DTYPE_FLOAT32, tb ? Shape{n, k} : Shape{k, n}, rng_);
    Tensor c = make(XDEV_DTYPE_FLOAT32, {m, n});
    ASSERT_EQ(run("MatMul", {&a, &b}, c, {attr_bool("transpose_b", tb)}).message, "");
    std::vector<std::pair<int64_t, int64_t>> at;
    for (int64_t i : {int64_t{0}, m / 2 - 1, m / 2, m - 1}) {
      for (int64_t j : {int64_t{0}, n / 2 - 1, n / 2, n - 1}) at.emplace_back(i, j);
    }
    std::uniform_int_distribution<int64_t> ri(0, m - 1), rj(0, n - 1);
    for (int s = 0; s < 200; ++s) at.emplace_back(ri(rng_), rj(rng_));
    int64_t bad = 0;
    for (const auto& [i, j] : at) {
      long double sum = 0, scale = 0;
      for (int64_t p = 0; p < k; ++p) {
        const long double prod = static_cast<long double>(a.get<float>({i, p})) *
                                 (tb ? b.get<float>({j, p}) : b.get<float>({p, j}));
        sum += prod;
        scale += std::fabs(prod);
      }
      const float got = c.get<float>({i, j});
      if (!(std::fabs(got - sum) <= 0x1p-23L * (k + 2) * scale) && bad++ == 0) {
        ADD_FAILURE() << "c[" << i << "," << j << "] = " << got << ", want " << (double)sum;
      }
    }
    EXPECT_EQ(bad, 0);
  }
}

TEST_F(CpuKernels, MatMulAcceptsAColumnMajorView) {
  // a is a transposed view (strides (1, m)): the kernel flips the flag.
  Tensor a = random(XDEV_DTYPE_FLOAT32, {40, 50}, rng_, {{1, 0}, {}, 0});
  Tensor b = random(XDEV_DTYPE_FLOAT32, {50, 30}, rng_);
  Tensor c = make(XDEV_DTYPE_FLOAT32, {40, 30});
  ASSERT_EQ(run("MatMul", {&a, &b}, c).message, "");
  check_matmul<float>(a, b, c, false, false);
}

TEST_F(CpuKernels, LargeIntegerMatMulRunsInParallel) {
  Tensor a = random(XDEV_DTYPE_INT64, {150, 90}, rng_);
  Tensor b = random(XDEV_DTYPE_INT64, {90, 120}, rng_);
  Tensor c = make(XDEV_DTYPE_INT64, {150, 120});
  ASSERT_EQ(run("MatMul", {&a, &b}, c).message, "");
  check_matmul<int64_t>(a, b, c, false, false);
}

// ---------------------------------------------------------------------------
// XDEV_CAP_CONCURRENT_STREAMS: kernels on one stream from several threads

TEST_F(CpuKernels, KernelsRunConcurrentlyOnOneStream) {
  constexpr int kThreads = 4;
  std::vector<std::string> errors(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([t, &errors] {
      std::mt19937_64 rng(100 + t);
      for (int round = 0; round < 20; ++round) {
        // Small (calling thread) and large (oneTBB) sizes, all on the one stream.
        const int64_t n = round % 2 == 0 ? 33 : 40000;
        Tensor x = random(XDEV_DTYPE_FLOAT32, {n}, rng), y = random(XDEV_DTYPE_FLOAT32, {n}, rng);
        Tensor z = make(XDEV_DTYPE_FLOAT32, {n});
        if (Outcome o = run("Add", {&x, &y}, z); o.code != XDEV_STATUS_OK) {
          errors[t] = o.message;
          return;
        }
        for (int64_t i = 0; i < n; ++i) {
          if (z.flat<float>(i) != x.flat<float>(i) + y.flat<float>(i)) {
            errors[t] = "wrong sum at " + std::to_string(i);
            return;
          }
        }
        Tensor a = random(XDEV_DTYPE_FLOAT64, {40, 50}, rng),
               b = random(XDEV_DTYPE_FLOAT64, {50, 30}, rng);
        Tensor c = make(XDEV_DTYPE_FLOAT64, {40, 30});
        if (Outcome o = run("MatMul", {&a, &b}, c); o.code != XDEV_STATUS_OK) {
          errors[t] = o.message;
          return;
        }
        double want = 0;
        for (int64_t p = 0; p < 50; ++p) want += a.get<double>({7, p}) * b.get<double>({p, 11});
        if (std::fabs(c.get<double>({7, 11}) - want) > 1e-9) {
          errors[t] = "wrong product";
          return;
        }
      }
    });
  }
  for (std::thread& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(errors[t], "") << "thread " << t;
}

// ---------------------------------------------------------------------------
// float16 and bfloat16: computed in float32, rounded once (docs/ops.md "Dtypes")

// A 1-D tensor of a 16-bit float dtype holding `values` (rounded once).
Tensor halves(xdev_dtype_t dtype, const std::vector<double>& values, const Layout& layout = {}) {
  Tensor t = make(dtype, {static_cast<int64_t>(values.size())}, layout);
  for (size_t i = 0; i < values.size(); ++i) {
    const uint16_t bits = dtype == XDEV_DTYPE_FLOAT16 ? xdev::double_to_half(values[i])
                                                      : xdev::double_to_bfloat16(values[i]);
    t.set<uint16_t>({static_cast<int64_t>(i)}, bits);
  }
  return t;
}

double half_value(const Tensor& t, const Shape& index) {
  const uint16_t bits = t.get<uint16_t>(index);
  return t.dtype == XDEV_DTYPE_FLOAT16 ? xdev::half_to_float(bits) : xdev::bfloat16_to_float(bits);
}

TEST_F(CpuKernels, HalfFloatOpsRoundTheFloat32ResultOnce) {
  // 2048 + 1 is a float16 tie: to even, 2048; 2048 + 3 -> 2052; 0.1 + 0.2
  // is rounded once from the float32 sum.
  Tensor x = halves(XDEV_DTYPE_FLOAT16, {2048, 2048, 0.1});
  Tensor y = halves(XDEV_DTYPE_FLOAT16, {1, 3, 0.2});
  Tensor sum = make(XDEV_DTYPE_FLOAT16, {3});
  ASSERT_EQ(run("Add", {&x, &y}, sum).message, "");
  EXPECT_EQ(half_value(sum, {0}), 2048.0);
  EXPECT_EQ(half_value(sum, {1}), 2052.0);
  EXPECT_EQ(sum.get<uint16_t>({2}),
            xdev::float_to_half(xdev::half_to_float(xdev::double_to_half(0.1)) +
                                xdev::half_to_float(xdev::double_to_half(0.2))));
  // Exp(1) in bfloat16: e = 2.71828... rounds to 2.71875 (0x402E).
  Tensor one = halves(XDEV_DTYPE_BFLOAT16, {1.0, 0.0});
  Tensor e = make(XDEV_DTYPE_BFLOAT16, {2});
  ASSERT_EQ(run("Exp", {&one}, e).message, "");
  EXPECT_EQ(e.get<uint16_t>({0}), 0x402E);
  EXPECT_EQ(e.get<uint16_t>({1}), 0x3F80);
  // Comparisons give bool, exactly.
  Tensor less = make(XDEV_DTYPE_BOOL, {3});
  ASSERT_EQ(run("Less", {&y, &x}, less).message, "");
  EXPECT_EQ(less.get<uint8_t>({0}), 1);
  EXPECT_EQ(less.get<uint8_t>({2}), 0);
}

TEST_F(CpuKernels, HalfFloatReductionsAccumulateInFloat32) {
  // 3000 ones: a float16 accumulator stops at 2048 (2048 + 1 rounds back to
  // 2048), a bfloat16 one at 256; in float32 the sum is 3000, which both
  // formats hold exactly (3000 = 1.46484375 · 2^11 needs 8 bits: bfloat16
  // rounds it to 3008, so bfloat16 sums 1000 ones, exact in both).
  for (auto [dtype, n] : {std::pair{XDEV_DTYPE_FLOAT16, int64_t{3000}},
                          std::pair{XDEV_DTYPE_BFLOAT16, int64_t{1000}}}) {
    SCOPED_TRACE(name(dtype));
    Tensor x = halves(dtype, std::vector<double>(static_cast<size_t>(n), 1.0));
    Tensor total = make(dtype, {});
    const std::vector<int64_t> axes = {0};
    ASSERT_EQ(run("Sum", {&x}, total, {attr_ints("axes", axes)}).message, "");
    EXPECT_EQ(half_value(total, {}), static_cast<double>(n));
    // MatMul [1, n] x [n, 1]: sgemm on the widened operands.
    Tensor a = x, b = x;
    a.shape = {1, n};
    a.strides = {n, 1};
    b.shape = {n, 1};
    b.strides = {1, 1};
    Tensor c = make(dtype, {1, 1});
    ASSERT_EQ(run("MatMul", {&a, &b}, c, {attr_bool("transpose_a", false),
                                           attr_bool("transpose_b", false)})
                  .message,
              "");
    EXPECT_EQ(half_value(c, {0, 0}), static_cast<double>(n));
    // CumSum's last element likewise.
    Tensor cum = make(dtype, {n});
    ASSERT_EQ(run("CumSum", {&x}, cum, {attr_int("axis", 0), attr_bool("exclusive", false),
                                        attr_bool("reverse", false)})
                  .message,
              "");
    EXPECT_EQ(half_value(cum, {n - 1}), static_cast<double>(n));
  }
}

TEST_F(CpuKernels, HalfFloatInputsMayBeStridedOrBroadcast) {
  // x read backwards (a negative-free view: storage order reversed by the
  // layout), y a broadcast scalar.
  Tensor x = make(XDEV_DTYPE_BFLOAT16, {2, 3}, {{1, 0}, {}, 1});
  for (int64_t i = 0; i < 2; ++i) {
    for (int64_t j = 0; j < 3; ++j) {
      x.set<uint16_t>({i, j}, xdev::double_to_bfloat16(static_cast<double>(i * 3 + j)));
    }
  }
  Tensor y = make(XDEV_DTYPE_BFLOAT16, {2, 3}, {{}, {true, true}, 0});
  y.set<uint16_t>({0, 0}, xdev::double_to_bfloat16(0.5));
  Tensor out = make(XDEV_DTYPE_BFLOAT16, {2, 3});
  ASSERT_EQ(run("Mul", {&x, &y}, out).message, "");
  for (int64_t i = 0; i < 2; ++i) {
    for (int64_t j = 0; j < 3; ++j) {
      EXPECT_EQ(half_value(out, {i, j}), 0.5 * static_cast<double>(i * 3 + j));
    }
  }
}

TEST_F(CpuKernels, CastConvertsBetweenAllNineDtypes) {
  struct Case {
    xdev_dtype_t from;
    double value;  // the input (exact in `from`)
    xdev_dtype_t to;
    uint64_t bits;  // the output's bits
  };
  constexpr auto F16 = XDEV_DTYPE_FLOAT16, BF16 = XDEV_DTYPE_BFLOAT16, U8 = XDEV_DTYPE_UINT8,
                 I8 = XDEV_DTYPE_INT8, F32 = XDEV_DTYPE_FLOAT32, F64 = XDEV_DTYPE_FLOAT64,
                 I32 = XDEV_DTYPE_INT32, I64 = XDEV_DTYPE_INT64, BOOL = XDEV_DTYPE_BOOL;
  const double above_tie = 1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40);
  const std::vector<Case> cases = {
      {F32, 300.7, U8, 255},     // saturates
      {F32, -3.5, U8, 0},        // saturates at 0
      {F32, 300.7, I8, 127},     {F32, -300.0, I8, 0x80},
      {I32, 300, U8, 44},        // modulo 2^8
      {I32, -1, U8, 255},        {U8, 200, I8, static_cast<uint8_t>(-56)},
      {I8, -1, I64, ~uint64_t{0}},
      {F64, above_tie, F16, 0x3C01},  // one rounding from double, not through float32
      {F32, 70000, F16, 0x7C00},      // past 65520: inf
      {F16, 65504, I8, 127},          {F16, 65504, I32, 65504},
      {BF16, -2.5, I32, static_cast<uint32_t>(-2)},
      {F16, 0.1, BF16, 0x3DCD},       // float16 0.0999755859375 rounded once
      {BOOL, 1, F16, 0x3C00},         {BOOL, 1, BF16, 0x3F80},
      {F16, 0.5, BOOL, 1},            {U8, 255, F16, 0x5BF8},
      {I64, static_cast<double>((int64_t{1} << 24) + (int64_t{1} << 16)), BF16, 0x4B80},
      {F16, -0.0, F32, 0x80000000},   {I8, -128, BF16, 0xC300},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(name(c.from)) + " " + std::to_string(c.value) + " -> " +
                 name(c.to));
    Tensor x = make(c.from, {1});
    switch (c.from) {
      case F16: x.set<uint16_t>({0}, xdev::double_to_half(c.value)); break;
      case BF16: x.set<uint16_t>({0}, xdev::double_to_bfloat16(c.value)); break;
      case F32: x.set<float>({0}, static_cast<float>(c.value)); break;
      case F64: x.set<double>({0}, c.value); break;
      case I32: x.set<int32_t>({0}, static_cast<int32_t>(c.value)); break;
      case I64: x.set<int64_t>({0}, static_cast<int64_t>(c.value)); break;
      case U8: x.set<uint8_t>({0}, static_cast<uint8_t>(c.value)); break;
      case I8: x.set<int8_t>({0}, static_cast<int8_t>(c.value)); break;
      default: x.set<uint8_t>({0}, c.value != 0 ? 1 : 0); break;
    }
    Tensor out = make(c.to, {1});
    ASSERT_EQ(run("Cast", {&x}, out, {attr_dtype("dtype", c.to)}).message, "");
    uint64_t got = 0;
    std::memcpy(&got, out.address({0}), static_cast<size_t>(itemsize(c.to)));
    EXPECT_EQ(got, c.bits) << std::hex << got << " vs " << c.bits;
  }
  // int64 2^24 + 2^16 + 1 to bfloat16: above the tie, up (0x4B81); through
  // float32 first it would be the tie and round to even (0x4B80).
  Tensor big = make(I64, {1});
  big.set<int64_t>({0}, (int64_t{1} << 24) + (int64_t{1} << 16) + 1);
  Tensor b = make(BF16, {1});
  ASSERT_EQ(run("Cast", {&big}, b, {attr_dtype("dtype", BF16)}).message, "");
  EXPECT_EQ(b.get<uint16_t>({0}), 0x4B81);
}

TEST_F(CpuKernels, FillSelectAndDataMovementTakeEveryDtype) {
  const std::vector<int64_t> shape = {2, 3};
  Tensor f = make(XDEV_DTYPE_FLOAT16, {2, 3});
  ASSERT_EQ(run("Fill", {}, f, {attr_float("value", 0.1)}).message, "");
  EXPECT_EQ(f.get<uint16_t>({1, 2}), xdev::double_to_half(0.1));
  Tensor u = make(XDEV_DTYPE_UINT8, {2, 3});
  ASSERT_EQ(run("Fill", {}, u, {attr_float("value", 300.0)}).message, "");
  EXPECT_EQ(u.get<uint8_t>({0, 1}), 255);  // as Cast converts: saturated
  // Select copies 2-byte elements.
  Tensor cond = make(XDEV_DTYPE_BOOL, {2, 3});
  cond.set<uint8_t>({0, 1}, 1);
  Tensor g = make(XDEV_DTYPE_FLOAT16, {2, 3});
  ASSERT_EQ(run("Fill", {}, g, {attr_float("value", -7.0)}).message, "");
  Tensor sel = make(XDEV_DTYPE_FLOAT16, {2, 3});
  ASSERT_EQ(run("Select", {&cond, &f, &g}, sel).message, "");
  EXPECT_EQ(sel.get<uint16_t>({0, 1}), xdev::double_to_half(0.1));
  EXPECT_EQ(sel.get<uint16_t>({0, 0}), xdev::double_to_half(-7.0));
  // Tile and a transposed Copy of 2-byte elements.
  Tensor tiled = make(XDEV_DTYPE_BFLOAT16, {2, 6});
  Tensor src = halves(XDEV_DTYPE_BFLOAT16, {1, 2, 3, 4, 5, 6});
  src.shape = {2, 3};
  src.strides = {3, 1};
  const std::vector<int64_t> multiples = {1, 2};
  ASSERT_EQ(run("Tile", {&src}, tiled, {attr_ints("multiples", multiples)}).message, "");
  EXPECT_EQ(half_value(tiled, {1, 5}), 6.0);
  EXPECT_EQ(half_value(tiled, {1, 0}), 4.0);
  Tensor t = src;
  t.shape = {3, 2};
  t.strides = {1, 3};
  Tensor dense = make(XDEV_DTYPE_BFLOAT16, {3, 2});
  ASSERT_EQ(run("Copy", {&t}, dense).message, "");
  EXPECT_EQ(half_value(dense, {2, 1}), 6.0);
  EXPECT_EQ(half_value(dense, {0, 1}), 4.0);
}

// ---------------------------------------------------------------------------
// Bad calls: statuses, never a crash

// Calls any kernel of `op` (the one the core would pick may not exist for a
// bad call) with `inputs` (NULL entries allowed), one output and `attrs`.
Outcome call_any(const char* op, std::vector<const xdev_tensor_t*> inputs,
                 const xdev_tensor_t& output, const std::vector<xdev_attr_t>& attrs = {},
                 size_t struct_size = XDEV_KERNEL_CALL_STRUCT_SIZE) {
  const xdev_kernel_info_t* k = Plugin::get().any(op);
  if (k == nullptr) return {XDEV_STATUS_NOT_FOUND, "no kernel"};
  const xdev_tensor_t* outputs[] = {&output};
  xdev_kernel_call_t call{};
  call.struct_size = struct_size;
  call.op = op;
  call.device = Plugin::get().device();
  call.stream = Plugin::get().stream();
  call.inputs = inputs.empty() ? nullptr : inputs.data();
  call.input_count = static_cast<uint32_t>(inputs.size());
  call.outputs = outputs;
  call.output_count = 1;
  call.attrs = attrs.empty() ? nullptr : attrs.data();
  call.attr_count = static_cast<uint32_t>(attrs.size());
  return take(k->fn(k->kernel_context, &call));
}

TEST_F(CpuKernels, BadCallsReturnStatusesNamingTheOp) {
  constexpr auto kInvalid = XDEV_STATUS_INVALID_ARGUMENT;
  constexpr auto kUnimplemented = XDEV_STATUS_UNIMPLEMENTED;
  Tensor f = make(XDEV_DTYPE_FLOAT32, {3});
  Tensor f2 = make(XDEV_DTYPE_FLOAT32, {3});
  Tensor i = make(XDEV_DTYPE_INT32, {3});
  Tensor bo = make(XDEV_DTYPE_BOOL, {3});
  Tensor wrong = make(XDEV_DTYPE_FLOAT32, {4});
  const xdev_tensor_t fd = f.desc(), f2d = f2.desc(), id = i.desc(), bd = bo.desc(),
                      wd = wrong.desc();
  xdev_tensor_t half = fd;
  half.dtype = XDEV_DTYPE_FLOAT16;
  xdev_tensor_t i8 = f2d;
  i8.dtype = XDEV_DTYPE_INT8;
  xdev_tensor_t bad_dtype = f2d;
  // 13: no dtype, yet inside the enum's value range (0..15 for enumerators
  // 0..9), so that reading it back is defined (UBSan flags 42).
  bad_dtype.dtype = static_cast<xdev_dtype_t>(13);

  EXPECT_TRUE(fails_with(call_any("Add", {&fd}, f2d), kInvalid, {"Add: takes 2 inputs, got 1"}));
  // Sub has no bool kernel.
  EXPECT_TRUE(fails_with(call_any("Sub", {&bd, &bd}, bd), kUnimplemented, {"Sub", "bool"}));
  // float16 beside float32: not taken for one dtype.
  EXPECT_TRUE(fails_with(call_any("Mul", {&half, &fd}, half), kInvalid,
                         {"Mul", "input 1 is float32", "float16"}));
  EXPECT_TRUE(fails_with(call_any("Exp", {&i8}, i8), kUnimplemented, {"Exp", "int8"}));
  EXPECT_EQ(call_any("Add", {&fd, &id}, f2d).code, kInvalid);  // mixed input dtypes
  EXPECT_THAT(call_any("Add", {&fd, &fd}, id).message,
              HasSubstr("the output is int32, expected float32"));
  EXPECT_TRUE(fails_with(call_any("Div", {&fd, &wd}, f2d), kInvalid, {"input 1 has shape (4,)"}));
  // An attribute the kernel does not know is ignored (docs/ops.md); one without a
  // name is malformed.
  EXPECT_EQ(call_any("Neg", {&fd}, f2d, {attr_bool("fast", true)}).message, "");
  xdev_attr_t nameless = attr_bool("fast", true);
  nameless.name = nullptr;
  EXPECT_TRUE(fails_with(call_any("Neg", {&fd}, f2d, {nameless}), kInvalid, {"has no name"}));
  EXPECT_TRUE(fails_with(call_any("Fill", {}, f2d), kInvalid, {"'value' is missing"}));
  const std::vector<xdev_attr_t> uniform = {attr_int("seed", 1), attr_float("minval", 0),
                                            attr_float("maxval", 1)};
  EXPECT_EQ(call_any("RandomUniform", {}, id, uniform).code, kUnimplemented);
  EXPECT_TRUE(fails_with(call_any("Cast", {&fd}, bad_dtype, {attr_dtype("dtype", bad_dtype.dtype)}),
                         kUnimplemented, {"Cast", "dtype"}));

  {  // Sum with unsorted axes and a wrong output shape
    Tensor x = make(XDEV_DTYPE_FLOAT32, {2, 3});
    const xdev_tensor_t xd = x.desc();
    const std::vector<int64_t> axes = {1, 0};
    EXPECT_THAT(call_any("Sum", {&xd}, f2d, {attr_ints("axes", axes)}).message,
                HasSubstr("sorted"));
    const std::vector<int64_t> one = {1};
    EXPECT_THAT(call_any("Mean", {&xd}, f2d, {attr_ints("axes", one)}).message,
                HasSubstr("shape does not match"));
  }
  {  // MatMul of a strided (non-matrix) view, and of mismatched sizes
    Tensor a = make(XDEV_DTYPE_FLOAT32, {4, 4});
    a.strides = {8, 2};
    Tensor c = make(XDEV_DTYPE_FLOAT32, {4, 4});
    const xdev_tensor_t ad = a.desc(), cd = c.desc();
    EXPECT_THAT(call_any("MatMul", {&ad, &ad}, cd).message, HasSubstr("contiguous"));
    Tensor b = make(XDEV_DTYPE_FLOAT32, {5, 4});
    Tensor a2 = make(XDEV_DTYPE_FLOAT32, {4, 4});
    const xdev_tensor_t bd2 = b.desc(), a2d = a2.desc();
    EXPECT_THAT(call_any("MatMul", {&a2d, &bd2}, cd).message, HasSubstr("op(b) 5x4"));
    // An attribute a kernel does not know is ignored (docs/ops.md: a later minor
    // version may add one, and older plugins keep working).
    const std::vector<xdev_attr_t> attrs = {attr_bool("transpose_a", false),
                                            attr_bool("adjoint", true)};
    Tensor c4 = make(XDEV_DTYPE_FLOAT32, {4, 4});
    const xdev_tensor_t c4d = c4.desc();
    EXPECT_EQ(call_any("MatMul", {&a2d, &a2d}, c4d, attrs).message, "");
    EXPECT_EQ(call_any("Relu", {&a2d}, c4d, {attr_int("a_later_attribute", 1)}).message, "");
  }
  {  // rank beyond XDEV_MAX_RANK, NULL input, small struct
    xdev_tensor_t deep = fd;
    deep.rank = 9;
    EXPECT_THAT(call_any("Relu", {&deep}, f2d).message, HasSubstr("rank 9"));
    EXPECT_THAT(call_any("Relu", {nullptr}, f2d).message, HasSubstr("input 0 is NULL"));
    EXPECT_EQ(call_any("Relu", {&deep}, f2d, {}, 16).code, XDEV_STATUS_ABI_MISMATCH);
    const xdev_kernel_info_t* k = Plugin::get().any("Relu");
    EXPECT_EQ(take(k->fn(nullptr, nullptr)).code, XDEV_STATUS_INVALID_ARGUMENT);
  }
}

// The NN kernels (nn.cpp) check what the core would have refused: a
// data_format outside NHWC/NCHW, a bias of the wrong length, one output for
// SoftmaxCrossEntropyWithLogits' two, gamma of the wrong shape.
TEST_F(CpuKernels, NnKernelsRefuseMalformedCalls) {
  constexpr auto kInvalid = XDEV_STATUS_INVALID_ARGUMENT;
  Tensor x = make(XDEV_DTYPE_FLOAT32, {2, 3});
  Tensor y = make(XDEV_DTYPE_FLOAT32, {2, 3});
  Tensor b3 = make(XDEV_DTYPE_FLOAT32, {3});
  Tensor b4 = make(XDEV_DTYPE_FLOAT32, {4});
  const xdev_tensor_t xd = x.desc(), yd = y.desc(), b3d = b3.desc(), b4d = b4.desc();
  xdev_attr_t format{};
  format.name = "data_format";
  format.kind = XDEV_ATTR_STRING;
  format.value.s = "NCWH";
  EXPECT_TRUE(fails_with(call_any("BiasAdd", {&xd, &b3d}, yd, {format}), kInvalid,
                         {"BiasAdd", "'data_format'", "NHWC or NCHW"}));
  EXPECT_TRUE(fails_with(call_any("BiasAdd", {&xd, &b4d}, yd), kInvalid,
                         {"BiasAdd: bias has 4 elements, value's channel axis 1 has 3"}));
  EXPECT_TRUE(fails_with(call_any("SoftmaxCrossEntropyWithLogits", {&xd, &xd}, yd), kInvalid,
                         {"SoftmaxCrossEntropyWithLogits: has 2 outputs, got 1"}));
  EXPECT_TRUE(fails_with(call_any("LayerNorm", {&xd, &b4d, &b4d}, yd,
                                  {attr_int("begin_norm_axis", 1), attr_float("epsilon", 1e-3)}),
                         kInvalid, {"LayerNorm", "gamma and beta"}));
  EXPECT_TRUE(fails_with(call_any("LayerNorm", {&xd, &b3d, &b3d}, yd,
                                  {attr_int("begin_norm_axis", 1), attr_float("epsilon", -1.0)}),
                         kInvalid, {"LayerNorm", "'epsilon'"}));
}

constexpr int64_t kWindowOnes[] = {1, 1, 1}, kWindowTwos[] = {2, 2};

// The window kernels (conv.cpp, pool.cpp) check what the core would have
// refused: a padding outside SAME/VALID, strides of 3 values, an output
// whose shape the windows do not give, a filter of other channels.
TEST_F(CpuKernels, WindowKernelsRefuseMalformedCalls) {
  constexpr auto kInvalid = XDEV_STATUS_INVALID_ARGUMENT;
  Tensor x = make(XDEV_DTYPE_FLOAT32, {1, 3, 3, 2});
  Tensor w = make(XDEV_DTYPE_FLOAT32, {2, 2, 2, 1});
  Tensor y = make(XDEV_DTYPE_FLOAT32, {1, 2, 2, 1});
  Tensor y3 = make(XDEV_DTYPE_FLOAT32, {1, 3, 3, 1});
  Tensor p = make(XDEV_DTYPE_FLOAT32, {1, 2, 2, 2});
  const xdev_tensor_t xd = x.desc(), wd = w.desc(), yd = y.desc(), y3d = y3.desc(),
                      pd = p.desc();
  auto text = [](const char* name, const char* value) {
    xdev_attr_t a{};
    a.name = name;
    a.kind = XDEV_ATTR_STRING;
    a.value.s = value;
    return a;
  };
  auto ints = [](const char* name, int64_t count, const int64_t* values = kWindowOnes) {
    xdev_attr_t a{};
    a.name = name;
    a.kind = XDEV_ATTR_INTS;
    a.value.ints.values = values;
    a.value.ints.count = count;
    return a;
  };
  EXPECT_TRUE(fails_with(call_any("Conv2D", {&xd, &wd}, yd,
                                  {ints("strides", 2), text("padding", "FULL")}),
                         kInvalid, {"Conv2D", "'padding'", "SAME or VALID"}));
  EXPECT_TRUE(fails_with(call_any("Conv2D", {&xd, &wd}, yd,
                                  {ints("strides", 3), text("padding", "VALID")}),
                         kInvalid, {"Conv2D", "'strides'"}));
  // VALID gives 2x2, not the 3x3 of SAME.
  EXPECT_TRUE(fails_with(call_any("Conv2D", {&xd, &wd}, y3d,
                                  {ints("strides", 2), text("padding", "VALID")}),
                         kInvalid, {"Conv2D", "do not give the output's 3x3"}));
  EXPECT_TRUE(fails_with(call_any("Conv2D", {&xd, &wd}, pd,
                                  {ints("strides", 2), text("padding", "VALID")}),
                         kInvalid, {"Conv2D", "does not match 2 input and 2 output channels"}));
  EXPECT_TRUE(fails_with(call_any("MaxPool", {&xd}, yd,
                                  {ints("ksize", 2, kWindowTwos), ints("strides", 2),
                                   text("padding", "VALID")}),
                         kInvalid, {"MaxPool", "1 channels, the input 2"}));
  EXPECT_TRUE(fails_with(call_any("AvgPool", {&xd}, pd,
                                  {ints("strides", 2), text("padding", "VALID")}),
                         kInvalid, {"AvgPool", "'ksize'"}));
}

// ---------------------------------------------------------------------------
// BatchMatMulV2, TensorScatterAdd

// Matrix `b` of a rank-3 tensor as a rank-2 view of the same storage.
Tensor matrix(const Tensor& t, int64_t b) {
  Tensor m = t;
  m.shape = {t.shape[1], t.shape[2]};
  m.strides = {t.strides[1], t.strides[2]};
  m.byte_offset = t.byte_offset + static_cast<uint64_t>(b * t.strides[0] * itemsize(t.dtype));
  return m;
}

// The kernel takes any batch strides, a broadcast one (stride 0) included,
// and computes each matrix as MatMul does; many matrices run in parallel.
TEST_F(CpuKernels, BatchMatMulTakesBroadcastBatchStridesOnEveryPath) {
  const std::vector<xdev_attr_t> plain = {attr_bool("adj_x", false), attr_bool("adj_y", false)};
  for (xdev_dtype_t dtype : {XDEV_DTYPE_FLOAT32, XDEV_DTYPE_INT64}) {
    for (const Shape& dims : {Shape{6, 5, 7, 4}, Shape{64, 33, 40, 20}}) {
      const int64_t batches = dims[0], m = dims[1], k = dims[2], n = dims[3];
      Tensor x = random(dtype, {batches, m, k}, rng_);
      Tensor y = random(dtype, {batches, k, n}, rng_, Layout{{}, {true, false, false}});
      Tensor out = make(dtype, {batches, m, n});
      ASSERT_EQ(run("BatchMatMulV2", {&x, &y}, out, plain).message, "");
      for (int64_t b = 0; b < batches; ++b) {
        SCOPED_TRACE("matrix " + std::to_string(b));
        if (dtype == XDEV_DTYPE_FLOAT32) {
          check_matmul<float>(matrix(x, b), matrix(y, b), matrix(out, b), false, false);
        } else {
          check_matmul<int64_t>(matrix(x, b), matrix(y, b), matrix(out, b), false, false);
        }
      }
    }
  }
}

// Repeated indices add in the order of the updates, whatever the threads:
// the float results are the same bit for bit with one thread.
TEST_F(CpuKernels, ScatterAndBatchMatMulDoNotDependOnTheThreadCount) {
  const int64_t rows = 1000, updates = 200000;
  Tensor tensor = random(XDEV_DTYPE_FLOAT32, {rows, 3}, rng_);
  Tensor indices = make(XDEV_DTYPE_INT32, {updates, 1});
  std::uniform_int_distribution<int32_t> pick(0, static_cast<int32_t>(rows - 1));
  for (int64_t j = 0; j < updates; ++j) indices.set<int32_t>({j, 0}, pick(rng_));
  Tensor values = random(XDEV_DTYPE_FLOAT32, {updates, 3}, rng_);
  Tensor x = random(XDEV_DTYPE_FLOAT32, {300, 16, 24}, rng_);
  Tensor y = random(XDEV_DTYPE_FLOAT32, {300, 24, 8}, rng_);
  Tensor many = make(XDEV_DTYPE_FLOAT32, {rows, 3}), one = make(XDEV_DTYPE_FLOAT32, {rows, 3});
  Tensor prod_many = make(XDEV_DTYPE_FLOAT32, {300, 16, 8});
  Tensor prod_one = make(XDEV_DTYPE_FLOAT32, {300, 16, 8});
  ASSERT_EQ(run("TensorScatterAdd", {&tensor, &indices, &values}, many).message, "");
  ASSERT_EQ(run("BatchMatMulV2", {&x, &y}, prod_many).message, "");
  {
    tbb::global_control serial(tbb::global_control::max_allowed_parallelism, 1);
    ASSERT_EQ(run("TensorScatterAdd", {&tensor, &indices, &values}, one).message, "");
    ASSERT_EQ(run("BatchMatMulV2", {&x, &y}, prod_one).message, "");
  }
  EXPECT_EQ(many.storage, one.storage);
  EXPECT_EQ(prod_many.storage, prod_one.storage);
}

// docs/ops.md: every index is checked before anything is written, and the
// first bad one is named (position, value, range); shapes the core would
// refuse are refused too.
TEST_F(CpuKernels, ScatterAndBatchMatMulRefuseMalformedCalls) {
  constexpr auto kInvalid = XDEV_STATUS_INVALID_ARGUMENT;
  Tensor tensor = random(XDEV_DTYPE_FLOAT64, {4, 2}, rng_);
  Tensor indices = make(XDEV_DTYPE_INT64, {3, 2});
  const int64_t at[] = {0, 1, 3, 0, 1, 9};
  for (int64_t e = 0; e < 6; ++e) indices.set<int64_t>({e / 2, e % 2}, at[e]);
  Tensor values = random(XDEV_DTYPE_FLOAT64, {3}, rng_);
  Tensor out = make(XDEV_DTYPE_FLOAT64, {4, 2});
  for (int64_t e = 0; e < 8; ++e) out.set<double>({e / 2, e % 2}, 7.0);
  EXPECT_TRUE(fails_with(run("TensorScatterAdd", {&tensor, &indices, &values}, out), kInvalid,
                         {"TensorScatterAdd: index 9 (indices element 5", "[0, 2)", "axis 1"}));
  for (int64_t e = 0; e < 8; ++e) EXPECT_EQ(out.get<double>({e / 2, e % 2}), 7.0) << e;
  Tensor wrong = random(XDEV_DTYPE_FLOAT64, {3, 2}, rng_);
  const xdev_tensor_t td = tensor.desc(), id = indices.desc(), wd = wrong.desc(), od = out.desc();
  EXPECT_TRUE(fails_with(call_any("TensorScatterAdd", {&td, &id, &wd}, od), kInvalid,
                         {"TensorScatterAdd", "do not fit"}));
  Tensor x = make(XDEV_DTYPE_FLOAT32, {2, 3, 4});
  Tensor y = make(XDEV_DTYPE_FLOAT32, {3, 4, 5});
  Tensor c = make(XDEV_DTYPE_FLOAT32, {3, 3, 5});
  const xdev_tensor_t xd = x.desc(), yd = y.desc(), cd = c.desc();
  EXPECT_TRUE(fails_with(call_any("BatchMatMulV2", {&xd, &yd}, cd), kInvalid,
                         {"BatchMatMulV2", "batch axes do not broadcast"}));
}

}  // namespace
