// Device configuration and memory policy (docs/behaviour.md B13-B21, X2, X4), on CPU
// logical devices and the simulated accelerator (2 devices of 256 MiB).
// Configuration is once per process, so every scenario runs in a fresh child
// process (a GoogleTest death test in "threadsafe" style re-executes the
// binary) and must exit 0.
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
using xdev_test::ContainsTimes;

constexpr uint64_t kMiB = uint64_t{1} << 20;

xdev::PhysicalDevice cpu() { return xdev::list_physical_devices("CPU").at(0); }

std::string counts(const std::string& type) {
  auto p = xdev::list_physical_devices(type).size();
  auto l = xdev::list_logical_devices(type).size();
  return std::to_string(p) + " Physical " + type + (p == 1 ? "" : "s") + ", " +
         std::to_string(l) + " Logical " + type + (l == 1 ? "" : "s");
}

class Config : public xdev_test::FreshProcessTest {};

// B16 on the CPU: two logical CPUs with their own pools and limits.
TEST_F(Config, TwoLogicalCpusWithTheirOwnLimits) {
  IN_FRESH_PROCESS({
    xdev::set_logical_device_configuration(cpu(), {{.memory_limit = 1024}, {.memory_limit = 1024}});
    EXPECT_EQ(xdev::get_logical_device_configuration(cpu()).size(), 2u);
    EXPECT_FALSE(xdev::devices_initialized());
    EXPECT_EQ(counts("CPU"), "1 Physical CPU, 2 Logical CPUs");
    EXPECT_TRUE(xdev::devices_initialized());
    auto logical = xdev::list_logical_devices("CPU");
    EXPECT_EQ(logical[0].name, "/job:localhost/replica:0/task:0/device:CPU:0");
    EXPECT_EQ(logical[1].name, "/job:localhost/replica:0/task:0/device:CPU:1");
    EXPECT_EQ(xdev::get_memory_info("CPU:0").limit, 1024 * kMiB);
    EXPECT_EQ(xdev::get_memory_info("/device:CPU:1").limit, 1024 * kMiB);
    xdev::Tensor on1;
    {
      xdev::DeviceScope scope("/CPU:1");
      on1 = xdev::zeros({1024, 1024});  // 4 MiB
    }
    EXPECT_EQ(on1.device().name, logical[1].name);
    EXPECT_GE(xdev::get_memory_info("CPU:1").current, 4 * kMiB);
    EXPECT_EQ(xdev::get_memory_info("CPU:0").current, 0u);
  });
}

// B19: past the limit is a clear error, and nothing is lost.
// Logical CPUs without limits share the host's memory (TensorFlow's way to
// test multi-device code on a CPU); each pool gets the default limit.
TEST_F(Config, LogicalCpusWithoutLimitsShareTheHostMemory) {
  IN_FRESH_PROCESS({
    xdev::set_logical_device_configuration(cpu(), {{}, {}});
    EXPECT_EQ(counts("CPU"), "1 Physical CPU, 2 Logical CPUs");
    EXPECT_GT(xdev::get_memory_info("CPU:1").limit, 0u);
    EXPECT_EQ(xdev::get_memory_info("CPU:0").limit, xdev::get_memory_info("CPU:1").limit);
    xdev::DeviceScope scope("/CPU:1");
    EXPECT_EQ(xdev::constant({1.0f}).device().name, "/job:localhost/replica:0/task:0/device:CPU:1");
  });
  // A limit on some entries and none on others: each as given.
  IN_FRESH_PROCESS({
    xdev::set_logical_device_configuration(cpu(), {{.memory_limit = 64}, {}});
    EXPECT_EQ(xdev::get_memory_info("CPU:0").limit, 64 * kMiB);
    EXPECT_GT(xdev::get_memory_info("CPU:1").limit, 64 * kMiB);
  });
}

TEST_F(Config, OutOfMemoryNamesDeviceRequestUseAndLimit) {
  IN_FRESH_PROCESS({
    xdev::set_logical_device_configuration(cpu(), {{.memory_limit = 64}});
    xdev::Tensor kept = xdev::ones({1024, 1024});  // 4 MiB
    try {
      xdev::zeros({100, 1024, 1024});  // 400 MiB
      ADD_FAILURE() << "allocated past the limit";
    } catch (const xdev::Error& e) {
      EXPECT_EQ(e.code(), xdev::ErrorCode::kOutOfMemory);
      std::string m = e.what();
      EXPECT_THAT(m, HasSubstr("/job:localhost/replica:0/task:0/device:CPU:0"));
      EXPECT_THAT(m, HasSubstr("419430400"));  // the request
      EXPECT_THAT(m, HasSubstr("67108864"));   // the limit
    }
    EXPECT_EQ(xdev::sum(kept).item<float>(), 1024.f * 1024.f);
    EXPECT_LE(xdev::get_memory_info("CPU:0").bytes_reserved, 64 * kMiB);
  });
}

// B13/B14: growth starts small; without growth the limit is reserved up front.
TEST_F(Config, GrowthReservesOnDemandAndNoGrowthReservesUpFront) {
  IN_FRESH_PROCESS({
    auto gpus = xdev::list_physical_devices("GPU");
    ASSERT_EQ(gpus.size(), 2u);
    xdev::set_memory_growth(gpus[0], true);
    EXPECT_TRUE(xdev::get_memory_growth(gpus[0]));
    EXPECT_FALSE(xdev::get_memory_growth(gpus[1]));
    xdev::Tensor g0, g1;
    {
      xdev::DeviceScope scope("/GPU:0");
      g0 = xdev::constant({1.f, 2.f});
    }
    {
      xdev::DeviceScope scope("/GPU:1");
      g1 = xdev::constant({1.f, 2.f});
    }
    xdev::MemoryInfo grow = xdev::get_memory_info("GPU:0");
    xdev::MemoryInfo fixed = xdev::get_memory_info("GPU:1");
    EXPECT_TRUE(grow.growth);
    EXPECT_FALSE(fixed.growth);
    EXPECT_LT(grow.bytes_reserved, 8 * kMiB);
    EXPECT_EQ(fixed.bytes_reserved, fixed.limit);
    // Default limit: 0.95 of the 256 MiB the device reports free, in whole MiB.
    EXPECT_EQ(fixed.limit, 243 * kMiB);
  });
}

// B15: the per-process fraction caps every pool without an explicit limit.
TEST_F(Config, MemoryFractionCapsThePools) {
  IN_FRESH_PROCESS({
    xdev::set_per_process_memory_fraction(0.5);
    EXPECT_EQ(xdev::get_memory_info("GPU:0").limit, 128 * kMiB);
    // After initialization: the same fraction again changes nothing; another does.
    EXPECT_NO_THROW(xdev::set_per_process_memory_fraction(0.5));
    EXPECT_THROW(xdev::set_per_process_memory_fraction(0.25), xdev::Error);
  });
  EXPECT_THROW(xdev::set_per_process_memory_fraction(1.5), xdev::Error);
  EXPECT_THROW(xdev::set_per_process_memory_fraction(0.0), xdev::Error);
}

// B18: current, peak, reset.
TEST_F(Config, MemoryStatsTrackCurrentAndPeak) {
  IN_FRESH_PROCESS({
    xdev::MemoryInfo start = xdev::get_memory_info("GPU:0");
    {
      xdev::Tensor big = xdev::zeros({256, 1024});  // 1 MiB... on GPU? no Fill kernel there
      xdev::Tensor on_gpu = big.to("/GPU:0");
      xdev::MemoryInfo during = xdev::get_memory_info("GPU:0");
      EXPECT_GE(during.current, start.current + kMiB);
      EXPECT_EQ(during.num_allocations, start.num_allocations + 1);
    }
    xdev::MemoryInfo after = xdev::get_memory_info("GPU:0");
    EXPECT_EQ(after.current, start.current);
    EXPECT_GE(after.peak, start.current + kMiB);
    xdev::reset_memory_stats("GPU:0");
    EXPECT_EQ(xdev::get_memory_info("GPU:0").peak, after.current);
    EXPECT_THROW(xdev::get_memory_info("GPU:7"), xdev::Error);
  });
}

// B20: only the chosen GPU becomes a logical device.
TEST_F(Config, SetVisibleDevices) {
  IN_FRESH_PROCESS({
    auto gpus = xdev::list_physical_devices("GPU");
    xdev::set_visible_devices({gpus[1]}, "GPU");
    EXPECT_EQ(xdev::get_visible_devices("GPU").size(), 1u);
    EXPECT_EQ(xdev::get_visible_devices("GPU")[0].name, "/physical_device:GPU:1");
    EXPECT_EQ(counts("GPU"), "2 Physical GPUs, 1 Logical GPU");
    EXPECT_EQ(xdev::list_logical_devices("CPU").size(), 1u);  // other types untouched
    EXPECT_EQ(xdev::matmul(xdev::constant({{2.f}}), xdev::constant({{3.f}})).device().name,
              "/job:localhost/replica:0/task:0/device:GPU:0");
  });
  IN_FRESH_PROCESS({
    xdev::set_visible_devices({}, "GPU");
    EXPECT_EQ(counts("GPU"), "2 Physical GPUs, 0 Logical GPUs");
  });
  IN_FRESH_PROCESS({
    EXPECT_THROW(xdev::set_visible_devices({cpu()}, "GPU"), xdev::Error);
  });
}

// B17: after initialization nothing changes, and the error says why.
TEST_F(Config, ConfigurationAfterInitializationFailsAndChangesNothing) {
  IN_FRESH_PROCESS({
    auto gpus = xdev::list_physical_devices("GPU");
    xdev::set_memory_growth(gpus[0], true);
    xdev::list_logical_devices();
    auto expect_message = [](auto&& call, const std::string& message) {
      try {
        call();
        ADD_FAILURE() << "no error for: " << message;
      } catch (const xdev::Error& e) {
        EXPECT_EQ(e.code(), xdev::ErrorCode::kFailedPrecondition);
        EXPECT_EQ(std::string(e.what()), message);
      }
    };
    expect_message([&] { xdev::set_visible_devices({gpus[0]}, "GPU"); },
                   "Visible devices cannot be modified after being initialized");
    expect_message([&] { xdev::set_memory_growth(gpus[0], false); },
                   "Memory growth cannot be modified after being initialized");
    expect_message([&] { xdev::set_logical_device_configuration(gpus[0], {{.memory_limit = 8}}); },
                   "Virtual devices cannot be modified after being initialized");
    EXPECT_TRUE(xdev::get_memory_growth(gpus[0]));
    EXPECT_TRUE(xdev::get_memory_info("GPU:0").growth);
    EXPECT_EQ(xdev::list_logical_devices("GPU").size(), 2u);
    // What is already in effect may be set again (TensorFlow returns early).
    xdev::set_visible_devices(gpus, "GPU");
    xdev::set_memory_growth(gpus[0], true);
    xdev::set_logical_device_configuration(gpus[1], {});
    xdev::set_visible_devices(xdev::list_physical_devices("CPU"), "CPU");
    EXPECT_EQ(xdev::list_logical_devices("GPU").size(), 2u);
  });
}

// B16 on the accelerator: one physical GPU, two logical GPUs, a matmul on each.
TEST_F(Config, SplitTheAcceleratorIntoTwoLogicalGpus) {
  IN_FRESH_PROCESS({
    auto gpus = xdev::list_physical_devices("GPU");
    xdev::set_visible_devices({gpus[0]}, "GPU");
    xdev::set_logical_device_configuration(gpus[0], {{.memory_limit = 64}, {.memory_limit = 64}});
    EXPECT_EQ(counts("GPU"), "2 Physical GPUs, 2 Logical GPUs");
    std::vector<xdev::Tensor> towers;
    for (const auto& d : xdev::list_logical_devices("GPU")) {
      xdev::DeviceScope scope(d);
      towers.push_back(xdev::matmul(xdev::constant({{1.f, 2.f, 3.f}, {4.f, 5.f, 6.f}}),
                                    xdev::constant({{1.f, 2.f}, {3.f, 4.f}, {5.f, 6.f}})));
      EXPECT_EQ(towers.back().device().name, d.name);
      EXPECT_EQ(xdev::get_memory_info(d.name).limit, 64 * kMiB);
    }
    EXPECT_EQ(xdev::add_n(towers).to_vector<float>(), (std::vector<float>{44, 56, 98, 128}));
  });
  // Splitting needs a limit per entry; limits cannot exceed the device.
  IN_FRESH_PROCESS({
    auto gpu = xdev::list_physical_devices("GPU")[0];
    EXPECT_THROW(xdev::set_logical_device_configuration(gpu, {{.memory_limit = 64}, {}}),
                 xdev::Error);
    EXPECT_THROW(xdev::set_logical_device_configuration(gpu, {{.memory_limit = 4096}}),
                 xdev::Error);
    EXPECT_THROW(xdev::set_logical_device_configuration(gpu, {{.memory_limit = -1}}),
                 xdev::Error);
  });
}

// X4/B21: XDEV_VISIBLE_DEVICES selects and orders physical devices.
// The models of the GPUs a fresh process sees with it set to `visible`.
std::vector<std::string> visible_gpu_models(const char* visible) {
  setenv("XDEV_VISIBLE_DEVICES", visible, 1);
  std::vector<std::string> models;
  for (const auto& gpu : xdev::list_physical_devices("GPU")) models.push_back(gpu.model);
  return models;
}

TEST_F(Config, VisibleDevicesVariableSelectsAndRenumbers) {
  using Models = std::vector<std::string>;
  IN_FRESH_PROCESS({
    EXPECT_EQ(visible_gpu_models("GPU:1"), Models{"Sim Accelerator 1"});
    EXPECT_EQ(xdev::list_physical_devices("GPU").at(0).name, "/physical_device:GPU:0");
    EXPECT_EQ(xdev::list_physical_devices("CPU").size(), 1u);
  });
  IN_FRESH_PROCESS({
    EXPECT_EQ(visible_gpu_models("GPU:1,GPU:0"),
              (Models{"Sim Accelerator 1", "Sim Accelerator 0"}));
  });
  IN_FRESH_PROCESS({
    EXPECT_EQ(visible_gpu_models("GPU:7,bogus:x,GPU:0"), Models{"Sim Accelerator 0"});
  });
}

// B14: the environment turns growth on for every GPU.
TEST_F(Config, ForceGpuAllowGrowthVariables) {
  for (const char* variable : {"XDEV_FORCE_GPU_ALLOW_GROWTH", "TF_FORCE_GPU_ALLOW_GROWTH"}) {
    IN_FRESH_PROCESS({
      setenv(variable, "true", 1);
      EXPECT_TRUE(xdev::get_memory_info("GPU:0").growth);
      EXPECT_TRUE(xdev::get_memory_info("GPU:1").growth);
    });
  }
  IN_FRESH_PROCESS({ EXPECT_FALSE(xdev::get_memory_info("GPU:0").growth); });
}

// The configuration agrees with itself.
// num_gpus() counts what try_gpu() can return, after devices are hidden.
TEST_F(Config, NumGpusAndTryGpuAgreeAfterHiding) {
  IN_FRESH_PROCESS({
    auto gpus = xdev::list_physical_devices("GPU");
    xdev::set_visible_devices({gpus[1]}, "GPU");
    EXPECT_EQ(xdev::num_gpus(), 1);
    EXPECT_EQ(xdev::try_gpu(0).device_type, "GPU");
    EXPECT_EQ(xdev::try_gpu(1).device_type, "CPU");
  });
  IN_FRESH_PROCESS({
    xdev::set_visible_devices({}, "GPU");
    EXPECT_EQ(xdev::num_gpus(), 0);
    EXPECT_EQ(xdev::try_gpu(0).device_type, "CPU");
    EXPECT_EQ(xdev::try_all_gpus().at(0).device_type, "CPU");
  });
  IN_FRESH_PROCESS({
    setenv("XDEV_VISIBLE_DEVICES", "GPU:1", 1);
    EXPECT_EQ(xdev::num_gpus(), 1);
    EXPECT_EQ(xdev::try_gpu(0).device_type, "GPU");
    EXPECT_EQ(xdev::try_gpu(1).device_type, "CPU");
  });
  // Two logical GPUs on one visible physical GPU: num_gpus() counts physical
  // GPUs, and try_gpu agrees with it.
  IN_FRESH_PROCESS({
    auto gpus = xdev::list_physical_devices("GPU");
    xdev::set_visible_devices({gpus[0]}, "GPU");
    xdev::set_logical_device_configuration(gpus[0], {{.memory_limit = 64}, {.memory_limit = 64}});
    EXPECT_EQ(xdev::num_gpus(), 1);
    EXPECT_EQ(xdev::try_gpu(0).device_type, "GPU");
    EXPECT_EQ(xdev::try_gpu(1).device_type, "CPU");
  });
}

// The growth variable is what get_memory_growth reports, and what the pools do.
TEST_F(Config, GetMemoryGrowthReportsTheGrowthVariable) {
  for (const char* variable : {"XDEV_FORCE_GPU_ALLOW_GROWTH", "TF_FORCE_GPU_ALLOW_GROWTH"}) {
    IN_FRESH_PROCESS({
      setenv(variable, "true", 1);
      auto gpus = xdev::list_physical_devices("GPU");
      EXPECT_TRUE(xdev::get_memory_growth(gpus[0]));
      EXPECT_TRUE(xdev::get_memory_growth(gpus[1]));
      EXPECT_TRUE(xdev::get_memory_info("GPU:0").growth);
    });
  }
  IN_FRESH_PROCESS({
    setenv("TF_FORCE_GPU_ALLOW_GROWTH", "true", 1);
    auto gpus = xdev::list_physical_devices("GPU");
    xdev::set_memory_growth(gpus[1], false);
    EXPECT_TRUE(xdev::get_memory_growth(gpus[0]));
    EXPECT_FALSE(xdev::get_memory_growth(gpus[1]));
    EXPECT_TRUE(xdev::get_memory_info("GPU:0").growth);
    EXPECT_FALSE(xdev::get_memory_info("GPU:1").growth);
  });
  // The CPU grows by default: reported so.
  IN_FRESH_PROCESS({
    EXPECT_TRUE(xdev::get_memory_growth(cpu()));
    EXPECT_TRUE(xdev::get_memory_info("CPU:0").growth);
    EXPECT_FALSE(xdev::get_memory_growth(xdev::list_physical_devices("GPU")[0]));
  });
}

// A bad value: one warning naming the variable, the value and what is used.
TEST_F(Config, BadGrowthValueIsWarnedAboutOnce) {
  IN_FRESH_PROCESS_STDERR(
      ContainsTimes("TF_FORCE_GPU_ALLOW_GROWTH='maybe' is not a boolean (true/1/yes/on or "
                    "false/0/no/off); ignored, as if unset",
                    1),
      {
        setenv("TF_FORCE_GPU_ALLOW_GROWTH", "maybe", 1);
        auto gpus = xdev::list_physical_devices("GPU");
        EXPECT_FALSE(xdev::get_memory_growth(gpus[0]));
        EXPECT_FALSE(xdev::get_memory_growth(gpus[1]));
        EXPECT_FALSE(xdev::get_memory_info("GPU:0").growth);
      });
}

// A visible-devices entry that names no device is warned about by name.
TEST_F(Config, VisibleDevicesEntryNamingNoDeviceIsWarnedAbout) {
  IN_FRESH_PROCESS_STDERR(
      ContainsTimes("XDEV_VISIBLE_DEVICES: \"GPU:7\" names no physical device (there are "
                    "GPU:0, GPU:1)",
                    1),
      {
        setenv("XDEV_VISIBLE_DEVICES", "GPU:7,GPU:0", 1);
        EXPECT_EQ(xdev::num_gpus(), 1);
      });
  IN_FRESH_PROCESS_STDERR(
      ::testing::AllOf(
          ContainsTimes("\"TPU:0\" names no physical device (there is no TPU device)", 1),
          ContainsTimes("names no existing TPU device: no TPU device is visible", 1)),
      {
        setenv("XDEV_VISIBLE_DEVICES", "TPU:0", 1);
        EXPECT_EQ(xdev::num_gpus(), 2);
      });
  // A CPU that does not exist never hides the host device: the program runs.
  IN_FRESH_PROCESS_STDERR(
      ContainsTimes("XDEV_VISIBLE_DEVICES=\"CPU:9\" names no existing CPU device; every CPU "
                    "stays visible",
                    1),
      {
        setenv("XDEV_VISIBLE_DEVICES", "CPU:9", 1);
        EXPECT_EQ(xdev::list_logical_devices("CPU").size(), 1u);
        EXPECT_EQ(xdev::constant({1.0f}).to_vector<float>(), (std::vector<float>{1.0f}));
      });
  // GPU:7 alone on a machine of two GPUs: none is visible, said once.
  IN_FRESH_PROCESS_STDERR(
      ContainsTimes("names no existing GPU device: no GPU device is visible", 1),
      {
        setenv("XDEV_VISIBLE_DEVICES", "GPU:7", 1);
        EXPECT_EQ(xdev::num_gpus(), 0);
      });
}

// CUDA_VISIBLE_DEVICES' form: a bare index is a GPU's.
TEST_F(Config, VisibleDevicesTakesBareGpuIndices) {
  IN_FRESH_PROCESS({
    setenv("XDEV_VISIBLE_DEVICES", "1", 1);
    const auto gpus = xdev::list_physical_devices("GPU");
    ASSERT_EQ(gpus.size(), 1u);
    EXPECT_EQ(xdev::list_logical_devices("CPU").size(), 1u);
  });
}

}  // namespace
