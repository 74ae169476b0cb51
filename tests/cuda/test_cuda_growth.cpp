// Visible devices and memory growth on the GPU (docs/user-guide.md;
// walkthrough step 4). Configuration happens once per process, before the
// devices are initialized, so this is its own test program.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <iostream>
#include <vector>

#include <xdev/xdev.hpp>

#include "cuda_test_util.hpp"

namespace {

using xdev::DType;
using xdev::Tensor;

TEST(CudaGrowth, FirstGpuOnlyWithMemoryGrowth) {
  XDEV_REQUIRE_GPU();
  const std::vector<xdev::PhysicalDevice> gpus = xdev::list_physical_devices("GPU");
  ASSERT_FALSE(xdev::devices_initialized());
  xdev::set_visible_devices({gpus[0]}, "GPU");
  xdev::set_memory_growth(gpus[0], true);
  EXPECT_TRUE(xdev::get_memory_growth(gpus[0]));
  const std::vector<xdev::Device> logical = xdev::list_logical_devices("GPU");
  std::cout << gpus.size() << " Physical GPUs, " << logical.size() << " Logical GPU\n";
  ASSERT_EQ(logical.size(), 1U);

  xdev::MemoryInfo info = xdev::get_memory_info("GPU:0");
  EXPECT_TRUE(info.growth);
  const uint64_t reserved_at_start = info.bytes_reserved;
  // Growth: nothing like the whole device is reserved up front.
  EXPECT_LT(reserved_at_start, gpus[0].memory_limit / 2);
  {
    xdev::DeviceScope scope("/GPU:0");
    const Tensor big = xdev::ones({int64_t{256} << 18}, DType::kFloat32);  // 256 MiB
    EXPECT_EQ(xdev::cast(xdev::sum(big), DType::kInt64).item<int64_t>(), int64_t{256} << 18);
    info = xdev::get_memory_info("GPU:0");
    EXPECT_GE(info.bytes_reserved, uint64_t{256} << 20);
    EXPECT_GE(info.current, uint64_t{256} << 20);
  }
  // Memory is never returned to the device.
  EXPECT_GE(xdev::get_memory_info("GPU:0").bytes_reserved, uint64_t{256} << 20);
}

}  // namespace
