// One worker of the multi-worker tests (run_case.sh starts it under mpirun,
// or alone). Each mode prints "PASS <mode>" and exits 0 when its checks hold,
// or prints what failed and exits 1.
//
//   mpi_worker collectives|mismatch|killed|hung|single|one_worker|optimizer|config <expected task>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <xdev/interop.hpp>
#include <xdev/multi_worker.hpp>
#include <xdev/optimizers.hpp>
#include <xdev/placement.hpp>
#include <xdev/xdev.hpp>

#include "regression.hpp"

namespace {

int g_failures = 0;

void expect(bool ok, const std::string& what) {
  if (!ok) {
    std::cout << "FAIL: " << what << std::endl;
    ++g_failures;
  }
}

template <typename T>
std::string text(const std::vector<T>& v) {
  std::ostringstream out;
  out << "[";
  for (size_t i = 0; i < v.size(); ++i) out << (i ? ", " : "") << v[i];
  return out.str() + "]";
}

void use_logical_cpus(int n) {
  std::vector<xdev::LogicalDeviceConfiguration> config(static_cast<size_t>(n),
                                                       {.memory_limit = 128});
  xdev::set_logical_device_configuration(xdev::list_physical_devices("CPU").at(0), config);
}

// XDEV_TEST_DEVICE_TYPE: "CPU" (logical CPUs, the host path) or "GPU" (the
// sim plugin's devices: its device collectives, ABI 1.7).
std::string device_type() {
  const char* type = std::getenv("XDEV_TEST_DEVICE_TYPE");
  return type != nullptr && *type != '\0' ? type : "CPU";
}

// n local devices of device_type(); n logical CPUs are made first for CPU.
// XDEV_TEST_GPUS_BY_RANK=1 (the cuda cases): worker k on this host takes
// devices k·n ... k·n + n-1 (NCCL takes one GPU per rank).
std::vector<std::string> local_devices(int n) {
  if (device_type() == "CPU" && n > 1) use_logical_cpus(n);
  const char* by_rank = std::getenv("XDEV_TEST_GPUS_BY_RANK");
  const char* local_rank = std::getenv("OMPI_COMM_WORLD_LOCAL_RANK");
  const int first = by_rank != nullptr && std::string(by_rank) == "1" && local_rank != nullptr
                        ? std::atoi(local_rank) * n
                        : 0;
  std::vector<std::string> out;
  for (int i = 0; i < n; ++i) {
    out.push_back("/" + device_type() + ":" + std::to_string(first + i));
  }
  return out;
}

// Every value of every replica's copy of a collective's result.
void expect_everywhere(const std::vector<xdev::Tensor>& got, const std::vector<float>& want,
                       const std::string& what) {
  for (size_t i = 0; i < got.size(); ++i) {
    std::vector<float> values = got[i].to_vector<float>();
    expect(values == want, what + " on local replica " + std::to_string(i) + ": got " +
                               text(values) + ", want " + text(want));
  }
}

void collectives() {
  xdev::MultiWorkerMirroredStrategy s(local_devices(2));
  const int W = s.num_workers(), L = s.num_local_replicas(), R = s.num_replicas_in_sync();
  expect(W == 2 && L == 2 && R == 4, "2 workers x 2 replicas, got " + std::to_string(W) + " x " +
                                         std::to_string(L));
  expect(s.device_names().at(1) ==
             "/job:worker/replica:0/task:" + std::to_string(s.task_id()) + "/device:" +
                 device_type() + ":1",
         "device name " + s.device_names().at(1));
  // Replica g holds [g, 10 - g].
  std::vector<xdev::Tensor> values;
  for (int l = 0; l < L; ++l) {
    const float g = static_cast<float>(s.task_id() * L + l);
    values.push_back(xdev::constant(std::vector<float>{g, 10 - g}, xdev::Shape{2})
                         .to(s.local().devices()[l]));
  }
  xdev::set_log_device_placement(true);  // the path of each collective (run_case.sh reads it)
  expect_everywhere(s.all_reduce(xdev::ReduceOp::kSum, values, "sum"), {6, 34}, "SUM");
  xdev::set_log_device_placement(false);
  // The inputs are read where they are, never written.
  const float g0 = static_cast<float>(s.task_id() * L);
  expect(values[0].to_vector<float>() == std::vector<float>{g0, 10 - g0}, "inputs unchanged");
  expect_everywhere(s.all_reduce(xdev::ReduceOp::kMean, values, "mean"), {1.5, 8.5}, "MEAN");
  expect_everywhere(s.all_reduce(xdev::ReduceOp::kMax, values, "max"), {3, 10}, "MAX");
  expect_everywhere(s.all_reduce(xdev::ReduceOp::kMin, values, "min"), {0, 7}, "MIN");
  expect_everywhere(s.all_gather(values, "gather"), {0, 10, 1, 9, 2, 8, 3, 7}, "all_gather");
  // Reduce-scatter of [4] tensors: replica g holds g·[1, 2, 3, 4]; the sum is
  // 6·[1, 2, 3, 4] and global replica g keeps element g.
  std::vector<xdev::Tensor> rows;
  for (int l = 0; l < L; ++l) {
    const float g = static_cast<float>(s.task_id() * L + l);
    rows.push_back(xdev::constant(std::vector<float>{g, 2 * g, 3 * g, 4 * g}, xdev::Shape{4}));
  }
  std::vector<xdev::Tensor> scattered = s.reduce_scatter(xdev::ReduceOp::kSum, rows, "scatter");
  for (int l = 0; l < L; ++l) {
    const float g = static_cast<float>(s.task_id() * L + l);
    expect(scattered[l].to_vector<float>() == std::vector<float>{6 * (g + 1)},
           "reduce_scatter on global replica " + std::to_string(static_cast<int>(g)) + ": " +
               text(scattered[l].to_vector<float>()));
  }
  // Broadcast from task 1, and variables start as task 0's value.
  xdev::Tensor mine = xdev::constant(std::vector<float>{float(s.task_id()) + 5}, xdev::Shape{1});
  expect_everywhere(s.broadcast(mine, 1, "from task 1"), {6}, "broadcast from task 1");
  xdev::MirroredVariable v = s.create_variable(mine);
  for (const xdev::Tensor& t : v.values()) {
    expect(t.to_vector<float>() == std::vector<float>{5}, "variable starts as task 0's value");
  }
  // Chunked and pipelined: 3 MiB + 4 B in 1 MiB chunks (XDEV_COLLECTIVE_CHUNK_MIB=1).
  const int64_t n = (3 << 20) / 4 + 1;
  std::vector<xdev::Tensor> big;
  for (int l = 0; l < L; ++l) {
    xdev::DeviceScope scope(s.local().devices()[l]);
    big.push_back(xdev::fill({n}, double(s.task_id() * L + l + 1)));
  }
  std::vector<float> summed = s.all_reduce(xdev::ReduceOp::kSum, big, "big")[1].to_vector<float>();
  bool all_ten = true;
  for (float x : summed) all_ten = all_ten && x == 10;
  expect(all_ten && static_cast<int64_t>(summed.size()) == n, "chunked all-reduce of 3 MiB");
  // int64 and float64 travel with their own MPI types.
  std::vector<xdev::Tensor> ints;
  for (int l = 0; l < L; ++l) {
    ints.push_back(xdev::constant(std::vector<int64_t>{int64_t(1) << 40}, xdev::Shape{1}));
  }
  expect(s.all_reduce(xdev::ReduceOp::kSum, ints, "ints")[0].to_vector<int64_t>() ==
             std::vector<int64_t>{int64_t(4) << 40},
         "int64 SUM");
  // bool tensors are refused, on every worker alike (as inside one process).
  std::vector<xdev::Tensor> flags;
  for (int l = 0; l < L; ++l) flags.push_back(xdev::cast(xdev::ones({2}), xdev::DType::kBool));
  bool refused = false;
  try {
    s.all_reduce(xdev::ReduceOp::kMax, flags, "flags");
  } catch (const xdev::Error&) {
    refused = true;
  }
  expect(refused, "a bool all-reduce is refused");
  // A checkpoint from task 0 only: run_case.sh gives each worker its own
  // directory, so task 1's must stay empty.
  const char* dir = std::getenv("XDEV_TEST_CHECKPOINT_DIR");
  expect(dir != nullptr, "XDEV_TEST_CHECKPOINT_DIR is set");
  if (dir != nullptr) {
    const std::string path = std::string(dir) + "/ckpt.safetensors";
    s.save_checkpoint({{"v", v}}, path);
    if (s.is_chief()) {
      xdev::SafetensorsFile file = xdev::load_file(path);
      expect(file.metadata.at("written_by") == "task 0 of 2", "checkpoint written by task 0");
      expect(file.tensors.at("v").to_vector<float>() == std::vector<float>{5}, "checkpoint value");
    } else {
      expect(!std::filesystem::exists(path), "task 1 wrote no checkpoint");
    }
  }
  // Collectives belong to the thread that started MPI (MPI_THREAD_FUNNELED):
  // from another thread they throw before any MPI call.
  std::string from_thread;
  std::thread([&] {
    try {
      s.all_reduce(xdev::ReduceOp::kSum, values, "from a thread");
    } catch (const xdev::Error& e) {
      from_thread = e.what();
    }
  }).join();
  expect(from_thread.find("called from a thread other than the one that started MPI") !=
             std::string::npos,
         "a collective from another thread: '" + from_thread + "'");
  s.barrier();
}

void mismatch() {
  xdev::MultiWorkerMirroredStrategy s(local_devices(1));
  xdev::Tensor t = xdev::zeros({s.task_id() == 0 ? 3 : 4, 1});
  try {
    s.all_reduce(xdev::ReduceOp::kSum, {t}, "dense/kernel/grad");
    expect(false, "mismatched shapes were reduced");
  } catch (const xdev::Error& e) {
    std::cout << "task " << s.task_id() << " caught: " << e.what() << std::endl;
    const std::string m = e.what();
    expect(m.find("'dense/kernel/grad'") != std::string::npos &&
               m.find("task 0 has all_reduce SUM of 'dense/kernel/grad' (3, 1) float32") !=
                   std::string::npos &&
               m.find("task 1 has all_reduce SUM of 'dense/kernel/grad' (4, 1) float32") !=
                   std::string::npos,
           "the error names the tensor and both shapes");
  }
  // A dtype mismatch too; the strategy stays usable after a header mismatch.
  xdev::Tensor d = xdev::zeros({2}, s.task_id() == 0 ? xdev::DType::kFloat32
                                                     : xdev::DType::kFloat64);
  try {
    s.all_reduce(xdev::ReduceOp::kSum, {d}, "bias");
    expect(false, "mismatched dtypes were reduced");
  } catch (const xdev::Error& e) {
    const std::string m = e.what();
    expect(m.find("(2,) float32") != std::string::npos && m.find("(2,) float64") != std::string::npos,
           std::string("the error names both dtypes: ") + e.what());
  }
  // One replica per worker: bool is refused at the MPI step, on both alike.
  try {
    s.all_reduce(xdev::ReduceOp::kMax, {xdev::cast(xdev::ones({2}), xdev::DType::kBool)}, "b");
    expect(false, "a bool all-reduce ran");
  } catch (const xdev::Error& e) {
    expect(std::string(e.what()).find("bool tensors are not reduced") != std::string::npos,
           std::string("bool refused: ") + e.what());
  }
  s.barrier();
}

// Task 1 dies (SIGKILL) or hangs (SIGSTOP) mid-step; task 0 must say so.
// On the host path task 1 stops before step 1's header exchange; on the sim's
// device path after it, inside the device collective (run_case.sh delays
// task 1's collectives by 2 s with XDEV_SIM_COLLECTIVE_DELAY_US; the signal
// comes 1 s into step 1), so task 0 waits in the device path's deadline loop.
void lost(int signal) {
  xdev::MultiWorkerMirroredStrategy s(local_devices(1));
  xdev::Tensor g = xdev::fill({4}, 1.0);
  s.all_reduce(xdev::ReduceOp::kSum, {g}, "step 0");
  if (s.task_id() == 1) {
    std::cout << "task 1: raising " << (signal == SIGKILL ? "SIGKILL" : "SIGSTOP")
              << " mid-step" << std::endl;
    if (device_type() == "CPU") {
      std::raise(signal);
    } else {
      std::thread([signal] {
        std::this_thread::sleep_for(std::chrono::seconds(1));
        std::raise(signal);
      }).detach();
    }
  }
  const auto start = std::chrono::steady_clock::now();
  try {
    s.all_reduce(xdev::ReduceOp::kSum, {g}, "step 1");
    expect(false, "the all-reduce with a dead worker returned");
  } catch (const xdev::Error& e) {
    if (s.task_id() != 0) {
      // The stopped task 1 of the device path, continued by mpirun as it
      // ends the job: its collective was aborted by task 0.
      std::cout << "task " << s.task_id() << " (continued) caught: " << e.what() << std::endl;
      std::exit(3);
    }
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::cout << "task 0 caught after " << seconds << " s: " << e.what() << std::endl;
    const std::string m = e.what();
    expect(m.find("lost task 1 (") != std::string::npos, "the error names task 1");
    // The timeout (XDEV_COLLECTIVE_TIMEOUT_S) plus the probe's grace (at most 10 s).
    const char* timeout = std::getenv("XDEV_COLLECTIVE_TIMEOUT_S");
    const double limit = (timeout ? std::atof(timeout) : 60) + 10 + 2;
    expect(seconds < limit, "the error came within " + std::to_string(limit) + " s");
    std::cout << "PASS lost worker (task 0)" << std::endl;
    // MPI is not finalized: a worker is lost. A hung worker is only ended by
    // mpirun when this one fails: exit 3 then, and the script expects it.
    std::exit(g_failures != 0 ? 1 : signal == SIGSTOP ? 3 : 0);
  }
}

void single() {
  xdev::MultiWorkerMirroredStrategy s(local_devices(2));
  expect(s.num_workers() == 1 && s.task_id() == 0 && s.cluster().source == "single worker",
         "a single worker");
  std::vector<xdev::Tensor> v{xdev::constant(std::vector<float>{1, 5}, xdev::Shape{2}),
                              xdev::constant(std::vector<float>{3, 2}, xdev::Shape{2})};
  expect_everywhere(s.all_reduce(xdev::ReduceOp::kMean, v, "m"), {2, 3.5}, "single-worker MEAN");
  expect_everywhere(s.all_reduce(xdev::ReduceOp::kMax, v, "x"), {3, 5}, "single-worker MAX");
  expect_everywhere(s.all_gather(v, "g"), {1, 5, 3, 2}, "single-worker all_gather");
  s.barrier();
}

// mpirun -np 1: one worker with one device. On a device that offers
// collectives its communicator has one rank (NCCL allows it; two ranks on one
// GPU it refuses), so a machine with one GPU still runs the cuda plugin's
// device path (run_case.sh checks the log says so). Every collective returns
// its input.
void one_worker() {
  xdev::MultiWorkerMirroredStrategy s(local_devices(1));
  expect(s.num_workers() == 1 && s.task_id() == 0 && s.num_replicas_in_sync() == 1 &&
             s.cluster().source == "mpi",
         "one worker of one replica, from mpirun");
  const xdev::Device& device = s.local().devices()[0];
  const xdev::Tensor v = xdev::constant(std::vector<float>{1, 5}, xdev::Shape{2}).to(device);
  xdev::set_log_device_placement(true);  // the path of each collective (run_case.sh reads it)
  expect_everywhere(s.all_reduce(xdev::ReduceOp::kSum, {v}, "sum"), {1, 5}, "one-worker SUM");
  xdev::set_log_device_placement(false);
  expect_everywhere(s.all_reduce(xdev::ReduceOp::kMean, {v}, "mean"), {1, 5}, "one-worker MEAN");
  expect_everywhere(s.all_reduce(xdev::ReduceOp::kMax, {v}, "max"), {1, 5}, "one-worker MAX");
  expect_everywhere(s.all_gather({v}, "gather"), {1, 5}, "one-worker all_gather");
  expect_everywhere(s.reduce_scatter(xdev::ReduceOp::kSum, {v}, "scatter"), {1, 5},
                    "one-worker reduce_scatter");
  expect_everywhere(s.broadcast(v, 0, "broadcast"), {1, 5}, "one-worker broadcast");
  s.barrier();
}

// Optimizers on MirroredVariables across the workers (2 local replicas each):
// the gradients summed over every replica of every worker, the same update on
// every copy. Each worker also trains the same optimizer on plain Variables
// with the whole batch in this one process: the weights must agree, and every
// worker's copies must be identical.
void optimizer() {
  xdev::MultiWorkerMirroredStrategy s(local_devices(2));
  const int64_t rows = 16;
  xdev::Tensor x, y;
  {
    xdev::DeviceScope scope("/CPU:0");  // the same global batch on every worker (seeded)
    x = xdev::random_uniform({rows, 3}, -1.0, 1.0, xdev::DType::kFloat64, 11);
    y = xdev::matmul(x, xdev::constant({{2.0}, {-3.0}, {0.5}})) + xdev::constant({1.0});
  }
  const std::vector<std::pair<std::string, std::function<std::unique_ptr<xdev::Optimizer>()>>>
      optimizers = {{"Adam", [] { return std::make_unique<xdev::Adam>(0.05); }},
                    {"SGD momentum", [] { return std::make_unique<xdev::SGD>(0.1, 0.9); }}};
  for (const auto& [label, make] : optimizers) {
    auto single = make();
    const std::vector<double> expected =
        xdev_test::train_regression_on_one_device(*single, x, y, 10);
    auto opt = make();
    const xdev_test::MirroredRegression m = xdev_test::train_regression_mirrored(s, *opt, x, y, 10);
    const xdev::MirroredVariable &w = m.w, &b = m.b;
    const std::vector<double> got = m.weights();
    double worst = 0;
    for (size_t i = 0; i < got.size(); ++i) worst = std::max(worst, std::abs(got[i] - expected[i]));
    expect(worst <= 1e-9 && std::abs(got[0]) > 0.1,
           label + ": task " + std::to_string(s.task_id()) + " ends with " + text(got) +
               ", one process with the whole batch with " + text(expected));
    for (int r = 1; r < s.num_local_replicas(); ++r) {
      expect(w.local(r).to_vector<double>() == w.local(0).to_vector<double>() &&
                 b.local(r).to_vector<double>() == b.local(0).to_vector<double>(),
             label + ": local replica " + std::to_string(r) + " differs from replica 0");
    }
    // Every replica of every worker holds the same weights, bit for bit.
    std::vector<double> everyone = s.all_gather(w.values(), "final/w")[0].to_vector<double>();
    for (size_t i = 3; i < everyone.size(); ++i) {
      expect(everyone[i] == everyone[i % 3], label + ": the workers' weights differ: " +
                                                 text(everyone));
    }
    std::cout << label << " task " << s.task_id() << ": " << text(got) << std::endl;
  }
}

void config(int expected_task) {
  xdev::MultiWorkerMirroredStrategy s({"/CPU:0"});
  expect(s.task_id() == expected_task,
         "task " + std::to_string(s.task_id()) + " from XDEV_CONFIG, want " +
             std::to_string(expected_task));
  expect(s.cluster().source == "XDEV_CONFIG" &&
             s.cluster().workers == std::vector<std::string>{"alpha:2222", "beta:2222"},
         "workers from XDEV_CONFIG");
  xdev::Tensor id = xdev::constant(std::vector<float>{float(s.task_id())}, xdev::Shape{1});
  expect_everywhere(s.all_gather({id}, "ids"), {0, 1}, "ranks ordered by task index");
}

}  // namespace

int main(int argc, char** argv) try {
  const std::string mode = argc > 1 ? argv[1] : "";
  if (mode == "collectives") collectives();
  else if (mode == "mismatch") mismatch();
  else if (mode == "killed") lost(SIGKILL);
  else if (mode == "hung") lost(SIGSTOP);
  else if (mode == "single") single();
  else if (mode == "one_worker") one_worker();
  else if (mode == "optimizer") optimizer();
  else if (mode == "config" && argc > 2) config(std::atoi(argv[2]));
  else {
    std::cerr << "usage: mpi_worker "
                 "collectives|mismatch|killed|hung|single|one_worker|optimizer|config TASK\n";
    return 2;
  }
  if (g_failures == 0) std::cout << "PASS " << mode << std::endl;
  return g_failures == 0 ? 0 : 1;
} catch (const std::exception& e) {
  std::cout << "FAIL: " << e.what() << std::endl;
  return 1;
}
