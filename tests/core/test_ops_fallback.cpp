// Ops on tensors of a device without their kernels (the simulated GPU
// registers MatMul and Add only): each runs on the CPU by the core's
// fallback rule, with the values the cpu kernels give, and the placement
// counters say so.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <xdev/xdev.hpp>

#include "device_names.hpp"
#include "op_values.hpp"

namespace {

using namespace xdev_test::devices;  // kCpu0, kGpu0
using xdev::Tensor;
using xdev_test::bools;

TEST(OpsFallback, ComparisonsSelectAndReductionsOfGpuTensorsRunOnTheCpu) {
  xdev::set_soft_device_placement(true);
  xdev::reset_placement_counters();
  const Tensor x = xdev::constant({{1.0f, 5.0f, -2.0f}, {4.0f, 0.0f, 3.0f}});
  const Tensor y = xdev::constant({{1.0f, 0.0f, 0.0f}, {9.0f, 0.0f, 3.0f}});
  ASSERT_EQ(x.device().name, kGpu0);  // the GPU comes first

  const Tensor eq = xdev::equal(x, y);
  EXPECT_EQ(eq.device().name, kCpu0);
  EXPECT_EQ(bools(eq), (std::vector<bool>{true, false, false, false, true, true}));
  const Tensor picked = xdev::select(xdev::greater(x, y), x, y);
  EXPECT_EQ(picked.device().name, kCpu0);
  EXPECT_EQ(picked.to_vector<float>(), (std::vector<float>{1, 5, 0, 9, 0, 3}));
  EXPECT_EQ(xdev::clip_by_value(x, xdev::constant(0.0f), xdev::constant(4.0f)).to_vector<float>(),
            (std::vector<float>{1, 4, 0, 4, 0, 3}));
  const Tensor mx = xdev::max(x, {1});
  EXPECT_EQ(mx.device().name, kCpu0);
  EXPECT_EQ(mx.to_vector<float>(), (std::vector<float>{5, 4}));
  EXPECT_EQ(bools(xdev::any(xdev::is_nan(x))), (std::vector<bool>{false}));

  // Add has a kernel on the simulated GPU: it stays there.
  EXPECT_EQ(xdev::add(x, y).device().name, kGpu0);
  EXPECT_GE(xdev::placement_counters().fallbacks, 6u);
  const std::vector<xdev::PlacementRecord> records = xdev::recent_placements();
  bool saw_equal = false;
  for (const xdev::PlacementRecord& r : records) {
    if (r.op != "Equal") continue;
    saw_equal = true;
    EXPECT_EQ(r.rule, "fallback");
    EXPECT_EQ(r.device, kCpu0);
  }
  EXPECT_TRUE(saw_equal);
}

}  // namespace
