// Linked into the SDK op tests (tests/core/test_ops_*.cpp, and gradcheck and
// autodiff) and turned on by XDEV_TEST_EVERY_OP_ON_SIM=1 for their runs on
// the simulated accelerator (tests/core/meson.build, `<name>_on_sim`): the
// GPU comes first, so every op those tests call is placed on the sim and
// runs there on the cpu plugin's host kernels, with the values the tests
// expect of the cpu. This environment proves it: at the end no op fell back
// to another device, and some ran on the GPU.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include <xdev/xdev.hpp>

namespace {

class EveryOpRanOnTheSim : public ::testing::Environment {
 public:
  void SetUp() override {
    const std::vector<xdev::PhysicalDevice> gpus = xdev::list_physical_devices("GPU");
    ASSERT_EQ(gpus.size(), 1u) << "run with XDEV_PLUGINS=cpu,sim and XDEV_SIM_DEVICES=1";
    ASSERT_EQ(gpus[0].platform, "sim");
  }

  void TearDown() override {
    const xdev::PlacementCounters counters = xdev::placement_counters();
    EXPECT_EQ(counters.fallbacks, 0u) << "an op had no kernel on the sim and ran elsewhere";
    bool on_gpu = false;
    for (const xdev::PlacementRecord& record : xdev::recent_placements()) {
      on_gpu = on_gpu || record.device.find("/device:GPU:0") != std::string::npos;
      EXPECT_EQ(record.device.find("/device:CPU:"), std::string::npos)
          << record.op << " ran on " << record.device;
    }
    EXPECT_TRUE(on_gpu) << "no op was placed on the sim";
  }
};

// The same executable runs on the cpu plugin alone, without the check.
bool check_requested() {
  const char* value = std::getenv("XDEV_TEST_EVERY_OP_ON_SIM");
  return value != nullptr && std::string(value) == "1";
}

const auto* const kEnvironment =
    check_requested() ? ::testing::AddGlobalTestEnvironment(new EveryOpRanOnTheSim) : nullptr;

}  // namespace
