// Kernel scratch (plugin ABI 1.2) and the ordering of the pool's give-backs,
// with the simulated accelerator:
//  - scratch comes from the op's logical device pool, counts against its
//    limit, and is back in the pool when the op returns;
//  - the pool's out-of-memory retry gives regions back to the device only
//    after the queued work that may still use them ran (the sim reports a
//    memory_free under queued work at the next synchronize).
// Configuration is once per process: each scenario runs in a fresh child
// process (a "threadsafe" death test re-executes the binary) and sets the
// sim's environment before the first xdev call.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <xdev/xdev.hpp>

#include "fresh_process.hpp"

namespace {

using ::testing::HasSubstr;

constexpr uint64_t kMiB = uint64_t{1} << 20;

class Scratch : public xdev_test::FreshProcessTest {};

xdev::PhysicalDevice sim_gpu() { return xdev::list_physical_devices("GPU").at(0); }

std::vector<float> iota(size_t n) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<float>(i % 7);
  return v;
}

TEST_F(Scratch, ComesFromThePoolAndIsBackWhenTheOpReturns) {
  IN_FRESH_PROCESS({
    ::setenv("XDEV_SIM_SCRATCH_BYTES", std::to_string(3 * kMiB).c_str(), 1);
    ASSERT_EQ(sim_gpu().platform, "sim");
    xdev::DeviceScope gpu("/GPU:0");
    const std::vector<float> values = iota(64 * 64);
    const xdev::Tensor a = xdev::constant(values.data(), xdev::DType::kFloat32, {64, 64});
    ASSERT_EQ(a.device().device_type, "GPU");
    xdev::reset_memory_stats("GPU:0");
    const xdev::MemoryInfo before = xdev::get_memory_info("GPU:0");
    const xdev::Tensor c = xdev::matmul(a, a);
    ASSERT_EQ(c.device().name, a.device().name);
    const xdev::MemoryInfo after = xdev::get_memory_info("GPU:0");
    // The output stays; the scratch went back to the pool.
    EXPECT_EQ(after.current, before.current + 64 * 64 * 4);
    EXPECT_EQ(after.num_allocations, before.num_allocations + 1);
    EXPECT_EQ(after.total_allocations, before.total_allocations + 2);  // output + scratch
    EXPECT_GE(after.peak, before.current + 3 * kMiB + 64 * 64 * 4);
    // The product is right (the sim checked the scratch range when it ran).
    const std::vector<float> got = c.to_vector<float>();
    float want = 0;
    for (size_t k = 0; k < 64; ++k) want += values[k] * values[k * 64];
    EXPECT_EQ(got[0], want);
  });
}

TEST_F(Scratch, CountsAgainstTheLogicalDeviceLimit) {
  IN_FRESH_PROCESS({
    ::setenv("XDEV_SIM_SCRATCH_BYTES", std::to_string(8 * kMiB).c_str(), 1);
    xdev::set_logical_device_configuration(sim_gpu(), {{.memory_limit = 4}});
    xdev::DeviceScope gpu("/GPU:0");
    const std::vector<float> values = iota(16 * 16);
    const xdev::Tensor a = xdev::constant(values.data(), xdev::DType::kFloat32, {16, 16});
    try {
      (void)xdev::matmul(a, a);
      ADD_FAILURE() << "8 MiB of scratch fit under a 4 MiB limit";
    } catch (const xdev::Error& e) {
      EXPECT_EQ(e.code(), xdev::ErrorCode::kOutOfMemory) << e.what();
      EXPECT_THAT(e.what(), HasSubstr("no scratch of 8388608 bytes"));
      EXPECT_THAT(e.what(), HasSubstr("GPU:0"));
    }
    // Nothing leaked: only the input is in use.
    EXPECT_EQ(xdev::get_memory_info("GPU:0").num_allocations, 1u);
  });
}

// The out-of-memory retry gives fully free regions back to the device. The
// Add below is still queued (the sim sleeps 150 ms before each operation)
// when its input and output are freed on the host and a large allocation
// needs their regions: the pool must wait for the Add before memory_free.
TEST_F(Scratch, ThePoolGivesMemoryBackOnlyAfterTheQueuedWork) {
  IN_FRESH_PROCESS({
    ::setenv("XDEV_SIM_DELAY_US", "150000", 1);
    ::setenv("XDEV_SIM_DEVICES", "1", 1);
    xdev::set_memory_growth(sim_gpu(), true);
    xdev::set_logical_device_configuration(sim_gpu(), {{.memory_limit = 16}});
    xdev::DeviceScope gpu("/GPU:0");
    {
      const std::vector<float> four_mib(kMiB, 1.0f);
      const xdev::Tensor x = xdev::constant(four_mib.data(), xdev::DType::kFloat32,
                                            {static_cast<int64_t>(kMiB)});
      const xdev::Tensor y = xdev::add(x, x);  // queued, runs in 150 ms
      ASSERT_EQ(y.device().device_type, "GPU");
    }  // x and y freed on the host; their regions are fully free
    const xdev::MemoryInfo mid = xdev::get_memory_info("GPU:0");
    EXPECT_EQ(mid.current, 0u);
    EXPECT_GE(mid.bytes_reserved, 12 * kMiB);  // a 4 MiB and an 8 MiB region
    // 12 MiB fit under the 16 MiB limit only after both regions go back.
    const std::vector<float> twelve_mib(3 * kMiB, 2.0f);
    const xdev::Tensor z = xdev::constant(twelve_mib.data(), xdev::DType::kFloat32,
                                          {static_cast<int64_t>(3 * kMiB)});
    EXPECT_EQ(z.to_vector<float>()[3 * kMiB - 1], 2.0f);  // synchronizes: no error
  });
}

}  // namespace
