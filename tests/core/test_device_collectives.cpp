// xdev::DeviceCommunicator (<xdev/device_collectives.hpp>, plugin ABI 1.7)
// in one process: the sim plugin's two devices are the two ranks of a group
// (its collectives meet in shared memory). Results of every kind, the
// checks before the plugin is called, why a device set cannot take part,
// a group that never fills up, and abort() releasing a pending collective.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>
#include <vector>

#include <xdev/device_collectives.hpp>
#include <xdev/xdev.hpp>

namespace {

using xdev::CollectiveKind;
using xdev::DeviceCommunicator;
using xdev::ReduceOp;
using xdev::Tensor;

// A device as a caller names it ("/GPU:1": type GPU, index 1).
xdev::Device named(const std::string& name) {
  const size_t colon = name.rfind(':');
  return xdev::Device{name, name.substr(1, colon - 1), std::stoi(name.substr(colon + 1))};
}

std::vector<xdev::Device> gpus() { return {named("/GPU:0"), named("/GPU:1")}; }

Tensor on(int device, std::vector<float> values) {
  xdev::DeviceScope scope("/GPU:" + std::to_string(device));
  const int64_t n = static_cast<int64_t>(values.size());
  return xdev::constant(values, xdev::Shape{n}).to("/GPU:" + std::to_string(device));
}

Tensor zeros_on(int device, int64_t n) {
  xdev::DeviceScope scope("/GPU:" + std::to_string(device));
  return xdev::zeros({n});
}

// Runs until poll() says done (the sim's ranks are its stream workers).
void wait(DeviceCommunicator& comm) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (!comm.poll()) {
    ASSERT_LT(std::chrono::steady_clock::now(), until) << "the collective did not complete";
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

std::unique_ptr<DeviceCommunicator> group_of_two() {
  const std::vector<uint8_t> id = DeviceCommunicator::unique_id(gpus());
  return std::make_unique<DeviceCommunicator>(gpus(), id, 2, std::vector<int>{0, 1},
                                              std::chrono::seconds(10));
}

TEST(DeviceCollectives, TheSimOffersThemAndTheCpuDoesNot) {
  std::string why;
  EXPECT_EQ(DeviceCommunicator::plugin_for(gpus(), &why), "sim");
  EXPECT_EQ(why, "");
  EXPECT_EQ(DeviceCommunicator::plugin_for({named("/CPU:0")}, &why), "");
  EXPECT_NE(why.find("plugin cpu (ABI 1."), std::string::npos) << why;
  EXPECT_NE(why.find("does not declare XDEV_CAP_COLLECTIVES (ABI 1.7)"), std::string::npos)
      << why;
  EXPECT_EQ(DeviceCommunicator::plugin_for({named("/GPU:0"), named("/CPU:0")}, &why),
            "");
  EXPECT_NE(why.find("belong to different plugins"), std::string::npos) << why;
  EXPECT_THROW(DeviceCommunicator::unique_id({named("/CPU:0")}), xdev::Error);
}

TEST(DeviceCollectives, EveryKindBetweenTwoDevices) {
  auto comm = group_of_two();
  EXPECT_EQ(comm->plugin(), "sim");
  EXPECT_EQ(comm->nranks(), 2);
  const std::vector<Tensor> send{on(0, {1, 7, -2}), on(1, {4, 5, 3})};
  struct Case {
    ReduceOp op;
    std::vector<float> want;
  };
  for (const Case& c : {Case{ReduceOp::kSum, {5, 12, 1}}, Case{ReduceOp::kMax, {4, 7, 3}},
                        Case{ReduceOp::kMin, {1, 5, -2}}}) {
    const std::vector<Tensor> recv{zeros_on(0, 3), zeros_on(1, 3)};
    comm->enqueue(CollectiveKind::kAllReduce, c.op, send, recv);
    wait(*comm);
    for (const Tensor& r : recv) EXPECT_EQ(r.to_vector<float>(), c.want) << xdev::to_string(c.op);
  }
  EXPECT_EQ(send[0].to_vector<float>(), (std::vector<float>{1, 7, -2})) << "inputs unchanged";
  // In place.
  const std::vector<Tensor> both{on(0, {1, 2}), on(1, {10, 20})};
  comm->enqueue(CollectiveKind::kAllReduce, ReduceOp::kSum, both, both);
  wait(*comm);
  EXPECT_EQ(both[1].to_vector<float>(), (std::vector<float>{11, 22}));

  const std::vector<Tensor> gathered{zeros_on(0, 6), zeros_on(1, 6)};
  comm->enqueue(CollectiveKind::kAllGather, ReduceOp::kSum, send, gathered);
  wait(*comm);
  for (const Tensor& r : gathered) {
    EXPECT_EQ(r.to_vector<float>(), (std::vector<float>{1, 7, -2, 4, 5, 3}));
  }
  const std::vector<Tensor> broadcast{zeros_on(0, 3), zeros_on(1, 3)};
  comm->enqueue(CollectiveKind::kBroadcast, ReduceOp::kSum, send, broadcast, /*root=*/1);
  wait(*comm);
  for (const Tensor& r : broadcast) EXPECT_EQ(r.to_vector<float>(), (std::vector<float>{4, 5, 3}));

  const std::vector<Tensor> rows{on(0, {1, 2, 3, 4}), on(1, {10, 20, 30, 40})};
  const std::vector<Tensor> mine{zeros_on(0, 2), zeros_on(1, 2)};
  comm->enqueue(CollectiveKind::kReduceScatter, ReduceOp::kSum, rows, mine);
  wait(*comm);
  EXPECT_EQ(mine[0].to_vector<float>(), (std::vector<float>{11, 22}));
  EXPECT_EQ(mine[1].to_vector<float>(), (std::vector<float>{33, 44}));
}

// More than one round of the sim's 1 MiB areas per rank.
TEST(DeviceCollectives, ALargeAllReduceRunsInRounds) {
  auto comm = group_of_two();
  const int64_t n = (3 << 20) / 4 + 5;
  std::vector<Tensor> send, recv;
  for (int d = 0; d < 2; ++d) {
    xdev::DeviceScope scope("/GPU:" + std::to_string(d));
    send.push_back(xdev::fill({n}, d + 1.0));
    recv.push_back(xdev::zeros({n}));
  }
  comm->enqueue(CollectiveKind::kAllReduce, ReduceOp::kSum, send, recv);
  wait(*comm);
  const std::vector<float> got = recv[1].to_vector<float>();
  ASSERT_EQ(static_cast<int64_t>(got.size()), n);
  for (float x : got) ASSERT_EQ(x, 3.0f);
}

TEST(DeviceCollectives, BadCallsAreRefusedBeforeThePlugin) {
  auto comm = group_of_two();
  const std::vector<Tensor> send{on(0, {1, 2}), on(1, {3, 4})};
  // recv of the wrong size for an all-gather of 2 ranks.
  EXPECT_THROW(comm->enqueue(CollectiveKind::kAllGather, ReduceOp::kSum, send,
                             {zeros_on(0, 2), zeros_on(1, 2)}),
               xdev::Error);
  // A mean is the caller's division.
  EXPECT_THROW(comm->enqueue(CollectiveKind::kAllReduce, ReduceOp::kMean, send, send),
               xdev::Error);
  // A tensor on the other device.
  EXPECT_THROW(comm->enqueue(CollectiveKind::kAllReduce, ReduceOp::kSum, {send[1], send[0]},
                             {send[1], send[0]}),
               xdev::Error);
  // The group still works.
  comm->enqueue(CollectiveKind::kAllReduce, ReduceOp::kSum, send, send);
  wait(*comm);
  EXPECT_EQ(send[0].to_vector<float>(), (std::vector<float>{4, 6}));
}

TEST(DeviceCollectives, AGroupThatNeverFillsUpTimesOut) {
  const std::vector<uint8_t> id = DeviceCommunicator::unique_id(gpus());
  try {
    DeviceCommunicator comm(gpus(), id, 3, {0, 1}, std::chrono::milliseconds(300));
    ADD_FAILURE() << "a group of 3 ranks formed with 2";
  } catch (const xdev::Error& e) {
    EXPECT_EQ(e.code(), xdev::ErrorCode::kUnavailable);
    EXPECT_NE(std::string(e.what()).find("2 of 3 ranks joined within 300 ms"), std::string::npos)
        << e.what();
  }
}

// A group of two communicators (one device each, as two processes would
// have) whose rank 1 never enqueues: rank 0's collective stays pending until
// abort(), which lets its stream drain; later calls are refused, and rank 1
// learns that rank 0 aborted the group.
TEST(DeviceCollectives, AbortReleasesAPendingCollective) {
  const std::vector<uint8_t> id = DeviceCommunicator::unique_id({named("/GPU:0")});
  std::unique_ptr<DeviceCommunicator> first, second;
  std::thread joiner([&] {
    second = std::make_unique<DeviceCommunicator>(std::vector<xdev::Device>{named("/GPU:1")},
                                                  id, 2, std::vector<int>{1},
                                                  std::chrono::seconds(10));
  });
  first = std::make_unique<DeviceCommunicator>(std::vector<xdev::Device>{named("/GPU:0")},
                                               id, 2, std::vector<int>{0},
                                               std::chrono::seconds(10));
  joiner.join();
  const std::vector<Tensor> t{on(0, {1, 2})};
  first->enqueue(CollectiveKind::kAllReduce, ReduceOp::kSum, t, t);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_FALSE(first->poll()) << "completed without rank 1";
  first->abort();
  EXPECT_THROW(first->poll(), xdev::Error);
  // The aborted work failed on GPU:0's stream; the stream drains.
  EXPECT_THROW(xdev::synchronize("/GPU:0"), xdev::Error);
  xdev::synchronize("/GPU:0");
  // The other rank sees the group aborted.
  try {
    second->poll();
    ADD_FAILURE() << "rank 1 did not see the abort";
  } catch (const xdev::Error& e) {
    EXPECT_NE(std::string(e.what()).find("rank 0 aborted the group"), std::string::npos)
        << e.what();
  }
}

}  // namespace
