// The opencl plugin through the core (ABI 1.6 handle memory): tensors and
// ops placed on its device, and copies between cpu, opencl and the
// simulated accelerator, with views at offsets inside the core's pool
// allocations. Run with PoCL as a GPU (meson.build); without an OpenCL
// device every test skips, saying why.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

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

}  // namespace
