// Found by a new user: calls a TensorFlow user writes first must compile and
// do the obvious thing: tensor-scalar operators both ways round,
// constant(values, shape), set_visible_devices with one device (no braces),
// MirroredStrategy({}) (it was ambiguous). Runs on the cpu plugin and two
// simulated GPUs, of which the first test hides one.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include <xdev/xdev.hpp>

namespace {

using ::testing::HasSubstr;

const std::string kGpu0 = "/job:localhost/replica:0/task:0/device:GPU:0";

// Runs first (configuration must come before the devices start).
class OneVisibleGpu : public ::testing::Environment {
 public:
  void SetUp() override {
    std::vector<xdev::PhysicalDevice> gpus = xdev::list_physical_devices("GPU");
    ASSERT_EQ(gpus.size(), 2u);
    xdev::set_visible_devices(gpus[1], "GPU");  // one device, no braces
  }
};
const auto* const kEnvironment = ::testing::AddGlobalTestEnvironment(new OneVisibleGpu);

TEST(Papercuts, SetVisibleDevicesWithOneDevice) {
  auto visible = xdev::get_visible_devices("GPU");
  ASSERT_EQ(visible.size(), 1u);
  EXPECT_EQ(visible[0].name, "/physical_device:GPU:1");
  EXPECT_EQ(xdev::list_logical_devices("GPU").size(), 1u);
}

TEST(Papercuts, MirroredStrategyWithEmptyBracesIsTheDefault) {
  xdev::MirroredStrategy defaults({});
  EXPECT_EQ(defaults.num_replicas_in_sync(), 1);
  EXPECT_EQ(defaults.devices()[0].name, kGpu0);
  xdev::MirroredStrategy named({"/CPU:0"});
  EXPECT_EQ(named.devices()[0].device_type, "CPU");
  xdev::MirroredStrategy from_devices(xdev::list_logical_devices("CPU"));
  EXPECT_EQ(from_devices.num_replicas_in_sync(), 1);
}

TEST(Papercuts, ConstantWithAShape) {
  xdev::DeviceScope scope("/CPU:0");
  xdev::Tensor m = xdev::constant({1.f, 2.f, 3.f, 4.f}, {2, 2});
  EXPECT_EQ(m.shape(), (xdev::Shape{2, 2}));
  EXPECT_EQ(m.dtype(), xdev::DType::kFloat32);
  EXPECT_EQ(m.to_vector<float>(), (std::vector<float>{1, 2, 3, 4}));
  xdev::Tensor z = xdev::constant(0.f, {2, 3});  // one number fills the shape
  EXPECT_EQ(z.to_vector<float>(), std::vector<float>(6, 0.f));
  xdev::Tensor big = xdev::constant(int64_t{1} << 60, {3}, xdev::DType::kInt64);
  EXPECT_EQ(big.to_vector<int64_t>(), std::vector<int64_t>(3, int64_t{1} << 60));
  xdev::Tensor nested = xdev::constant({{1, 2}, {3, 4}}, {4});
  EXPECT_EQ(nested.to_vector<int32_t>(), (std::vector<int32_t>{1, 2, 3, 4}));
  try {
    xdev::constant({1.f, 2.f, 3.f}, {2, 2});
    FAIL() << "3 values filled a 2x2 shape";
  } catch (const xdev::Error& e) {
    EXPECT_EQ(e.code(), xdev::ErrorCode::kInvalidArgument);
    EXPECT_THAT(e.what(), HasSubstr("constant: 3 values do not fill a shape of (2, 2)"));
  }
  EXPECT_THROW(xdev::constant(1.f, {int64_t{1} << 62, 4}), xdev::Error);
}

TEST(Papercuts, TensorScalarOperatorsBothWaysRound) {
  xdev::DeviceScope scope("/CPU:0");
  xdev::Tensor x = xdev::constant({1.f, 2.f});
  auto values = [](const xdev::Tensor& t) { return t.to_vector<float>(); };
  EXPECT_EQ(values(x * 2.0f), (std::vector<float>{2, 4}));
  EXPECT_EQ(values(2 * x), (std::vector<float>{2, 4}));
  EXPECT_EQ(values(x + 1), (std::vector<float>{2, 3}));
  EXPECT_EQ(values(1.0 + x), (std::vector<float>{2, 3}));
  EXPECT_EQ(values(x - 1.0f), (std::vector<float>{0, 1}));
  EXPECT_EQ(values(1 - x), (std::vector<float>{0, -1}));
  EXPECT_EQ(values(x / 2), (std::vector<float>{0.5f, 1}));
  EXPECT_EQ(values(4.0 / x), (std::vector<float>{4, 2}));
  // The number takes the tensor's dtype (a double does not promote float32).
  EXPECT_EQ((x * 2.0).dtype(), xdev::DType::kFloat32);
  xdev::Tensor i = xdev::constant({1, 2});
  EXPECT_EQ((i * 3).dtype(), xdev::DType::kInt32);
  EXPECT_EQ((i * 3).to_vector<int32_t>(), (std::vector<int32_t>{3, 6}));
  // int64 scalars stay exact.
  xdev::Tensor l = xdev::constant(std::vector<int64_t>{(int64_t{1} << 53)}, {1});
  EXPECT_EQ((l + 1).item<int64_t>(), (int64_t{1} << 53) + 1);
}

TEST(Papercuts, TheScalarLivesOnTheTensorsDevice) {
  xdev::Tensor x = xdev::constant({1.f, 2.f});  // GPU:0 (the sim has Add)
  ASSERT_EQ(x.device().name, kGpu0);
  xdev::reset_placement_counters();
  xdev::Tensor y = x + 1.0f;
  EXPECT_EQ(y.device().name, kGpu0);
  EXPECT_EQ(xdev::placement_counters().implicit_copies, 0u);
  EXPECT_EQ(y.to_vector<float>(), (std::vector<float>{2, 3}));
}

}  // namespace
