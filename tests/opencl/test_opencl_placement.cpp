// The opencl plugin through the core (ABI 1.6 handle memory): tensors and
// ops placed on its device, and copies between cpu, opencl and the
// simulated accelerator, with views at offsets inside the core's pool
// allocations. Run with PoCL as a GPU (meson.build); without an OpenCL
// device every test skips, saying why.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <type_traits>
#include <string>
#include <vector>

#include <xdev/half.hpp>
#include <xdev/placement.hpp>
#include <xdev/xdev.hpp>

namespace {

// The logical device name of the first physical device of `platform`, or
// "" when there is none.
std::string device_of(const std::string& platform) {
  for (const xdev::PhysicalDevice& d : xdev::list_physical_devices()) {
    if (d.platform == platform) return "/device:" + d.device_type + ":" + std::to_string(d.id);
  }
  return "";
}

template <typename T>
std::vector<T> values_of(const xdev::Tensor& t) {
  const xdev::HostTensor h = t.to_host();
  const auto v = h.values<T>();
  return {v.begin(), v.end()};
}

class OpenclThroughTheCore : public ::testing::Test {
 protected:
  void SetUp() override {
    ocl_ = device_of("opencl");
    if (ocl_.empty()) GTEST_SKIP() << "no OpenCL device (the opencl plugin found none)";
    sim_ = device_of("sim");
    ASSERT_FALSE(sim_.empty()) << "the sim plugin is not loaded";
  }
  std::string ocl_, sim_;
};

TEST_F(OpenclThroughTheCore, TensorsRoundTripAndOpsRunThere) {
  const std::vector<float> a = {1, 2, 3, 4, 5, 6};
  xdev::DeviceScope scope(ocl_);
  const xdev::Tensor x = xdev::constant(a, xdev::Shape{2, 3});
  EXPECT_NE(x.device().name.find(ocl_.substr(8)), std::string::npos) << x.device().name;
  EXPECT_EQ(values_of<float>(x), a);
  const xdev::Tensor y = xdev::add(x, x);
  EXPECT_EQ(values_of<float>(y), (std::vector<float>{2, 4, 6, 8, 10, 12}));
  EXPECT_EQ(values_of<float>(xdev::sum(x, {1})), (std::vector<float>{6, 15}));
  const xdev::Tensor m = xdev::matmul(x, x, false, true);  // [2, 2]
  EXPECT_EQ(values_of<float>(m), (std::vector<float>{14, 32, 32, 77}));
  EXPECT_EQ(y.device(), x.device());
}

TEST_F(OpenclThroughTheCore, CopiesBetweenCpuOpenclAndSim) {
  std::vector<int32_t> v(1000);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<int32_t>(i * 7 - 300);
  xdev::Tensor on_cpu;
  {
    xdev::DeviceScope scope("/CPU:0");
    on_cpu = xdev::constant(v, xdev::Shape{1000});
  }
  const xdev::Tensor on_ocl = on_cpu.copy_to(ocl_);
  const xdev::Tensor on_sim = on_ocl.copy_to(sim_);
  const xdev::Tensor back_on_ocl = on_sim.copy_to(ocl_);
  const xdev::Tensor back_on_cpu = back_on_ocl.copy_to("/CPU:0");
  EXPECT_EQ(values_of<int32_t>(on_ocl), v);
  EXPECT_EQ(values_of<int32_t>(on_sim), v);
  EXPECT_EQ(values_of<int32_t>(back_on_ocl), v);
  EXPECT_EQ(values_of<int32_t>(back_on_cpu), v);
}

TEST_F(OpenclThroughTheCore, ViewsAtOffsetsAndInputsFromOtherDevices) {
  std::vector<float> v(64);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i);
  xdev::Tensor on_sim;
  {
    xdev::DeviceScope scope(sim_);
    on_sim = xdev::constant(v, xdev::Shape{8, 8});
  }
  xdev::DeviceScope scope(ocl_);
  const xdev::Tensor x = on_sim.copy_to(ocl_);
  // Rows 2..4, columns 3..6: a view at an offset, strided.
  const xdev::Tensor window = xdev::slice(x, {2, 3}, {3, 4});
  std::vector<float> expected;
  for (int r = 2; r < 5; ++r) {
    for (int c = 3; c < 7; ++c) expected.push_back(static_cast<float>(r * 8 + c));
  }
  EXPECT_EQ(values_of<float>(window), expected);
  // An op on the opencl device with an input still on the sim: copied over.
  const xdev::Tensor doubled = xdev::add(window, xdev::slice(on_sim, {2, 3}, {3, 4}));
  for (float& e : expected) e *= 2;
  EXPECT_EQ(values_of<float>(doubled), expected);
  EXPECT_EQ(doubled.device(), x.device());
}

// Long lines reduce in work-group trees, a line split over several groups
// whose states a second kernel merges (plugins/opencl README.md): the
// merges keep each op's rules (the first extreme, a NaN winning, wrapping
// integer sums) wherever the parts split the line.
TEST_F(OpenclThroughTheCore, LongReductionsSplitAcrossWorkGroups) {
  xdev::DeviceScope scope(ocl_);
  constexpr int64_t n = 1 << 18;
  std::vector<float> v(n);
  for (int64_t i = 0; i < n; ++i) v[i] = static_cast<float>((i * 37) % 101) * 0.01f - 0.3f;
  // Ties: the largest value at 1000 and later, the smallest at 2000 and later.
  v[1000] = v[200000] = 7;
  v[2000] = v[150000] = -7;
  const xdev::Tensor x = xdev::constant(v, xdev::Shape{n});
  double exact = 0;
  for (float e : v) exact += e;
  EXPECT_NEAR(values_of<float>(xdev::sum(x))[0], exact, 1e-5 * n);
  EXPECT_EQ(values_of<float>(xdev::max(x))[0], 7.0f);
  EXPECT_EQ(values_of<int64_t>(xdev::argmax(x, 0))[0], 1000);
  EXPECT_EQ(values_of<int64_t>(xdev::argmin(x, 0))[0], 2000);
  double lse7 = 0;
  for (float e : v) lse7 += std::exp(static_cast<double>(e) - 7);
  EXPECT_NEAR(values_of<float>(xdev::logsumexp(x))[0], 7 + std::log(lse7), 1e-4);
  // A NaN wins ArgMax, ArgMin (the first one) and Max.
  v[90000] = v[70000] = std::nanf("");
  const xdev::Tensor with_nan = xdev::constant(v, xdev::Shape{n});
  EXPECT_EQ(values_of<int64_t>(xdev::argmax(with_nan, 0))[0], 70000);
  EXPECT_EQ(values_of<int64_t>(xdev::argmin(with_nan, 0))[0], 70000);
  EXPECT_TRUE(std::isnan(values_of<float>(xdev::max(with_nan))[0]));
  EXPECT_TRUE(std::isnan(values_of<float>(xdev::logsumexp(with_nan))[0]));
  // int32 sums wrap: 2^17 times 40000 is 5242880000, 947912704 modulo 2^32.
  const xdev::Tensor ints =
      xdev::constant(std::vector<int32_t>(1 << 17, 40000), xdev::Shape{1 << 17});
  EXPECT_EQ(values_of<int32_t>(xdev::sum(ints))[0], 947912704);
  // Any: one true at the very end.
  std::vector<bool> flags(1 << 17, false);
  flags.back() = true;
  std::vector<uint8_t> bytes(flags.begin(), flags.end());
  const xdev::Tensor b = xdev::cast(xdev::constant(bytes, xdev::Shape{1 << 17}),
                                    xdev::DType::kBool);
  EXPECT_EQ(values_of<bool>(xdev::any(b)), (std::vector<bool>{true}));
}

// float16 and bfloat16 (docs/ops.md): every float op of the op table has a
// kernel on the OpenCL device, with or without cl_khr_fp16 (PoCL has none):
// the values are stored in 16 bits and computed in float32.
TEST_F(OpenclThroughTheCore, EveryFloatOpTakesFloat16AndBfloat16) {
  int ops = 0;
  for (const xdev::OpKernels& op : xdev::list_kernels(ocl_)) {
    for (const xdev::KernelDTypes& d : op.defined) {
      const bool half = d.input == xdev::DType::kFloat16 || d.input == xdev::DType::kBFloat16 ||
                        d.output == xdev::DType::kFloat16 || d.output == xdev::DType::kBFloat16;
      if (!half) continue;
      ++ops;
      EXPECT_NE(std::find(op.available.begin(), op.available.end(), d), op.available.end())
          << "no " << op.op << " " << d.input << " -> "
          << d.output << " kernel on " << ocl_;
    }
  }
  EXPECT_GT(ops, 100);
}

// The values, against references computed in double and rounded once; the
// fallback policy turns a missing kernel into an error, so each op ran on
// the OpenCL device. Each case fails if the device accumulated or rounded
// in 16 bits.
template <typename H>
class OpenclHalves : public OpenclThroughTheCore {
 protected:
  void SetUp() override {
    OpenclThroughTheCore::SetUp();
    previous_ = xdev::fallback_policy();
    xdev::set_fallback_policy(xdev::FallbackPolicy::kError);
  }
  void TearDown() override { xdev::set_fallback_policy(previous_); }
  static constexpr xdev::DType kDType =
      std::is_same_v<H, xdev::float16> ? xdev::DType::kFloat16 : xdev::DType::kBFloat16;
  // The 16-bit value nearest v (ties to even).
  static float rounded(double v) { return static_cast<float>(H(v)); }
  static std::vector<float> floats(const xdev::Tensor& t) {
    std::vector<float> out;
    for (H h : values_of<H>(t)) out.push_back(static_cast<float>(h));
    return out;
  }
  xdev::Tensor make(const std::vector<double>& v, const xdev::Shape& shape) const {
    std::vector<H> h;
    for (double x : v) h.push_back(H(x));
    return xdev::constant(h, shape);
  }
  xdev::FallbackPolicy previous_ = xdev::FallbackPolicy::kWarn;
};
using HalfTypes = ::testing::Types<xdev::float16, xdev::bfloat16>;
TYPED_TEST_SUITE(OpenclHalves, HalfTypes);

TYPED_TEST(OpenclHalves, ElementwiseRoundsTheFloat32ResultOnce) {
  xdev::DeviceScope scope(this->ocl_);
  const xdev::Tensor x = this->make({1.0, -0.5, 3.0, 0.0}, xdev::Shape{4});
  EXPECT_EQ(x.dtype(), this->kDType);
  const xdev::Tensor e = xdev::exp(x);
  EXPECT_EQ(e.device(), x.device());
  std::vector<float> want;
  for (double v : {1.0, -0.5, 3.0, 0.0}) want.push_back(this->rounded(std::exp(v)));
  EXPECT_EQ(this->floats(e), want);
  // Comparisons give bool; Select moves the 16-bit values as they are.
  const xdev::Tensor positive = xdev::greater(x, this->make(std::vector<double>(4, 0.0), xdev::Shape{4}));
  EXPECT_EQ(values_of<bool>(positive), (std::vector<bool>{true, false, true, false}));
  EXPECT_EQ(this->floats(xdev::select(positive, x, e)),
            (std::vector<float>{1.0f, want[1], 3.0f, 1.0f}));
}

// A computed NaN is stored as the quiet NaN of its sign: PoCL's NaNs have
// every payload bit set, which stored as 0xffff, the pattern the validation
// layer fills outputs with, so Sqrt of a negative number was reported as
// never written (xdev-conformance in address mode).
TYPED_TEST(OpenclHalves, ComputedNanIsTheQuietNan) {
  xdev::DeviceScope scope(this->ocl_);
  const xdev::Tensor x = this->make({-1.0, -4.0}, xdev::Shape{2});
  const uint16_t quiet = this->kDType == xdev::DType::kFloat16 ? 0x7e00 : 0x7fc0;
  for (TypeParam h : values_of<TypeParam>(xdev::sqrt(x))) {
    EXPECT_EQ(h.bits & 0x7fff, quiet) << std::hex << h.bits;
  }
}

TYPED_TEST(OpenclHalves, SumsAccumulateInFloat32) {
  xdev::DeviceScope scope(this->ocl_);
  // 4096 ones: a 16-bit accumulator stops at 2048 (float16) or 256 (bfloat16).
  const xdev::Tensor ones = this->make(std::vector<double>(4096, 1.0), xdev::Shape{4096});
  EXPECT_EQ(this->floats(xdev::sum(ones)), (std::vector<float>{4096.0f}));
  EXPECT_EQ(this->floats(xdev::mean(ones)), (std::vector<float>{1.0f}));
  const xdev::Tensor row = xdev::reshape(ones, xdev::Shape{1, 4096});
  const xdev::Tensor column = xdev::reshape(ones, xdev::Shape{4096, 1});
  EXPECT_EQ(this->floats(xdev::matmul(row, column)), (std::vector<float>{4096.0f}));
  // AddN: big + small + small, where each pairwise 16-bit sum rounds back
  // to big (a tie to even) but the float32 sum does not: float16's ulp at
  // 1024 is 1, bfloat16's at 256 is 2.
  const double big = this->kDType == xdev::DType::kFloat16 ? 1024 : 256;
  const double small = this->kDType == xdev::DType::kFloat16 ? 0.5 : 1;
  const xdev::Tensor total = xdev::add_n({this->make({big}, xdev::Shape{1}),
                                          this->make({small}, xdev::Shape{1}),
                                          this->make({small}, xdev::Shape{1})});
  EXPECT_EQ(this->floats(total), (std::vector<float>{static_cast<float>(big + 2 * small)}));
}

TYPED_TEST(OpenclHalves, CastRoundsTheExactValueOnce) {
  xdev::DeviceScope scope(this->ocl_);
  // 1 + half an ulp + a little: through float32 first it would be a tie
  // (rounded to 1); rounded once it is 1 + ulp.
  const double ulp = this->kDType == xdev::DType::kFloat16 ? 0x1p-10 : 0x1p-7;
  const xdev::Tensor wide = xdev::constant(std::vector<double>{1 + ulp / 2 + 0x1p-40, -2.5,
                                                               std::nan("")},
                                           xdev::Shape{3});
  const std::vector<float> got = this->floats(xdev::cast(wide, this->kDType));
  EXPECT_EQ(got[0], static_cast<float>(1 + ulp));
  EXPECT_EQ(got[1], -2.5f);
  EXPECT_TRUE(std::isnan(got[2]));
  const xdev::Tensor ints = xdev::constant(std::vector<int64_t>{(int64_t{1} << 40) + 1, -7},
                                           xdev::Shape{2});
  EXPECT_EQ(this->floats(xdev::cast(ints, this->kDType)),
            (std::vector<float>{this->rounded(0x1p40 + 1), -7.0f}));
  // And back: exact; to an integer toward zero.
  const xdev::Tensor h = this->make({-2.5, 3.75}, xdev::Shape{2});
  EXPECT_EQ(values_of<double>(xdev::cast(h, xdev::DType::kFloat64)),
            (std::vector<double>{-2.5, 3.75}));
  EXPECT_EQ(values_of<int32_t>(xdev::cast(h, xdev::DType::kInt32)),
            (std::vector<int32_t>{-2, 3}));
}

}  // namespace
