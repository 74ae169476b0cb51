// Tracing (core/trace, <xdev/trace.hpp>): a walkthrough-like program traced
// with xdev::trace::start/stop writes a Chrome trace-event file that parses
// as JSON and holds the op, copy, allocation, placement and collective
// events, on one track per device.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include <unistd.h>

#include <nlohmann/json.hpp>

#include <xdev/xdev.hpp>

namespace {

using nlohmann::json;

std::filesystem::path trace_file(const char* name) {
  return std::filesystem::temp_directory_path() /
         (std::string("xdev_test_trace_") + std::to_string(::getpid()) + "_" + name + ".json");
}

json load(const std::filesystem::path& path) {
  std::ifstream in(path);
  return json::parse(in);  // throws on a file that is not complete JSON
}

// The events of category `cat` (all of them when cat is empty).
std::vector<json> events(const json& trace, const std::string& cat) {
  std::vector<json> out;
  for (const json& e : trace.at("traceEvents")) {
    if (cat.empty() || e.value("cat", "") == cat) out.push_back(e);
  }
  return out;
}

TEST(Trace, WalkthroughTraceHasOpCopyAllocPlacementAndCollectiveEvents) {
  const auto path = trace_file("walkthrough");
  xdev::trace::start(path.string());
  EXPECT_TRUE(xdev::trace::active());
  xdev::Tensor a, b;
  {
    xdev::DeviceScope cpu("/CPU:0");
    a = xdev::constant({{1.f, 2.f, 3.f}, {4.f, 5.f, 6.f}});
    b = xdev::constant({{1.f, 2.f}, {3.f, 4.f}, {5.f, 6.f}});
  }
  xdev::Tensor c = xdev::matmul(a, b);  // on the sim GPU: both inputs copied there
  EXPECT_EQ(c.to_vector<float>(), (std::vector<float>{22.f, 28.f, 49.f, 64.f}));
  xdev::MirroredStrategy strategy(std::vector<std::string>{"/GPU:0", "/GPU:1"});
  std::vector<xdev::Tensor> towers;
  for (const char* d : {"/GPU:0", "/GPU:1"}) {
    xdev::DeviceScope scope(d);
    towers.push_back(xdev::matmul(xdev::constant({{1.f, 2.f}}), xdev::constant({{3.f}, {4.f}})));
  }
  strategy.all_reduce(xdev::ReduceOp::kSum, towers);
  xdev::trace::stop();
  EXPECT_FALSE(xdev::trace::active());

  const json trace = load(path);
  std::filesystem::remove(path);

  // Tracks: a process per device, named, with its stream as a thread.
  std::set<std::string> processes;
  for (const json& e : events(trace, "")) {
    if (e.value("ph", "") == "M" && e.value("name", "") == "process_name") {
      processes.insert(e.at("args").at("name").get<std::string>());
    }
  }
  EXPECT_THAT(processes, ::testing::IsSupersetOf(
                             {"host", "/job:localhost/replica:0/task:0/device:GPU:0",
                              "/job:localhost/replica:0/task:0/device:GPU:1",
                              "/job:localhost/replica:0/task:0/device:CPU:0"}));

  bool matmul_on_gpu = false;
  for (const json& e : events(trace, "op")) {
    EXPECT_EQ(e.at("ph"), "X");
    EXPECT_TRUE(e.contains("ts") && e.contains("dur"));
    if (e.at("name") == "MatMul" &&
        e.at("args").at("device") == "/job:localhost/replica:0/task:0/device:GPU:0" &&
        e.at("args").at("input_shapes") == json::parse("[[2,3],[3,2]]")) {
      matmul_on_gpu = true;
      EXPECT_EQ(e.at("args").at("input_dtype"), "float32");
      EXPECT_EQ(e.at("args").at("output_shape"), json::parse("[2,2]"));
      EXPECT_EQ(e.at("args").at("implicit_copy_bytes"), 48);  // 24 + 24 bytes moved
      EXPECT_EQ(e.at("pid"), 1);  // the first device's track
    }
  }
  EXPECT_TRUE(matmul_on_gpu);

  bool cpu_to_gpu = false, read_back = false;
  for (const json& e : events(trace, "copy")) {
    const json& args = e.at("args");
    if (args.at("direction") == "device_to_device" && args.at("bytes") == 24 &&
        args.at("from") == "/job:localhost/replica:0/task:0/device:CPU:0") {
      cpu_to_gpu = true;
      EXPECT_EQ(args.at("path"), "from host-addressable memory");
    }
    if (args.at("direction") == "device_to_host" && args.at("bytes") == 16) read_back = true;
  }
  EXPECT_TRUE(cpu_to_gpu);
  EXPECT_TRUE(read_back);

  bool alloc = false, free = false;
  for (const json& e : events(trace, "memory")) {
    if (e.at("name") == "alloc" && e.at("args").at("bytes").get<uint64_t>() >= 16) alloc = true;
    if (e.at("name") == "free") free = true;
    EXPECT_TRUE(e.at("args").contains("pool"));
  }
  EXPECT_TRUE(alloc);
  EXPECT_TRUE(free);

  bool placed = false;
  for (const json& e : events(trace, "placement")) {
    const json& args = e.at("args");
    if (args.at("op") == "MatMul" && args.at("rule") == "priority") {
      placed = true;
      EXPECT_EQ(args.at("chosen"), "/job:localhost/replica:0/task:0/device:GPU:0");
      ASSERT_FALSE(args.at("rejected").empty());
      EXPECT_TRUE(args.at("rejected")[0].contains("why"));
    }
  }
  EXPECT_TRUE(placed);

  const auto collectives = events(trace, "collective");
  ASSERT_EQ(collectives.size(), 1u);
  EXPECT_EQ(collectives[0].at("name"), "all_reduce");
  EXPECT_EQ(collectives[0].at("args").at("replicas"), 2);
}

TEST(Trace, StartTwiceFailsAndStopWithoutStartIsANoOp) {
  xdev::trace::stop();
  const auto path = trace_file("twice");
  xdev::trace::start(path.string());
  EXPECT_THROW(xdev::trace::start(path.string()), xdev::Error);
  xdev::trace::stop();
  EXPECT_NO_THROW(load(path));
  std::filesystem::remove(path);
  EXPECT_THROW(xdev::trace::start("/nonexistent-dir/trace.json"), xdev::Error);
  EXPECT_FALSE(xdev::trace::active());
}

TEST(Trace, NothingIsWrittenWhenOff) {
  const auto path = trace_file("off");
  xdev::trace::start(path.string());
  xdev::trace::stop();
  (void)xdev::add(xdev::constant({1.f}), xdev::constant({2.f}));  // after stop
  const json trace = load(path);
  std::filesystem::remove(path);
  EXPECT_TRUE(events(trace, "op").empty());
}

}  // namespace
