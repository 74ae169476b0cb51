// The end of TensorFlow's GPU guide: one dense layer trained with MSE and SGD
// with momentum (learning rate 0.2, momentum 0.5) on synthetic linear data,
// first on one device, then mirrored over 2 and 4 logical devices
// (docs/behaviour.md B23). Gradients come from xdev::GradientTape; the
// optimizer sums each variable's per-replica gradients over the replicas and
// updates every copy. The mirrored runs must end with the single-device weights.
// With --multi-worker (when built with MPI) it trains once with
// MultiWorkerMirroredStrategy over --local-replicas logical CPUs per worker,
// one worker per process: mpirun -np 2 xdev-train-mirrored --multi-worker
// ends with the weights of one process over 2 logical CPUs (same global batch).
//
//   xdev-train-mirrored [--steps N]
//   mpirun -np W xdev-train-mirrored --multi-worker [--local-replicas L] [--weights-out FILE]
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iomanip>
#include <iostream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <xdev/xdev.hpp>
#ifdef XDEV_HAVE_MPI
#include <xdev/multi_worker.hpp>
#endif

namespace {

constexpr int kBatch = 64;
constexpr double kLearningRate = 0.2;
constexpr double kMomentum = 0.5;

struct Data {
  xdev::Tensor x;  // [64, 3]
  xdev::Tensor y;  // [64, 1] = x · [2, -3, 0.5]ᵀ + 1
};

Data make_data() {
  xdev::DeviceScope scope("/CPU:0");
  xdev::Tensor x = xdev::random_uniform({kBatch, 3}, -1.0, 1.0, xdev::DType::kFloat32, 42);
  xdev::Tensor w = xdev::constant({{2.f}, {-3.f}, {0.5f}});
  xdev::Tensor y = xdev::matmul(x, w) + xdev::constant({1.f});
  return {x, y};
}

// The loss mean((x·W + b - y)²) over the whole batch of `total_rows`, for
// the rows this replica holds, and its gradients from a GradientTape (each
// replica's thread records on its own tape). Returns {dW, db, loss}.
std::vector<xdev::Tensor> gradients(const xdev::Tensor& w, const xdev::Tensor& b,
                                    const xdev::Tensor& x, const xdev::Tensor& y,
                                    int64_t total_rows) {
  xdev::GradientTape tape;
  tape.watch(w);
  tape.watch(b);
  xdev::Tensor error = xdev::matmul(x, w) + b - y;
  xdev::Tensor loss = xdev::sum(error * error) / static_cast<double>(total_rows);
  std::vector<xdev::Tensor> g = tape.gradient(loss, {w, b});
  return {g[0], g[1], loss};
}

// The same model as a Dense layer whose Variables the tape watches when the
// layer reads them.
std::vector<float> train_single(int steps) {
  Data data = make_data();
  xdev::Dense model(xdev::zeros({3, 1}), xdev::zeros({1}));
  model.to("/CPU:0");
  xdev::SGD optimizer(kLearningRate, kMomentum);
  const std::vector<xdev::Variable> vars = model.trainable_variables();
  std::cout << "Single device (/CPU:0)\n";
  for (int step = 0; step < steps; ++step) {
    xdev::GradientTape tape;
    xdev::Tensor loss = xdev::mean_squared_error(data.y, model(data.x));
    optimizer.apply_gradients(tape.gradient(loss, vars), vars);
    if (step % 10 == 0 || step == steps - 1) {
      std::cout << "  step " << std::setw(3) << step << "  loss " << loss.item<float>() << "\n";
    }
  }
  auto out = model.kernel().read_value().to_vector<float>();
  out.push_back(model.bias().read_value().to_vector<float>()[0]);
  return out;
}

// One training run over `strategy`'s replicas (MirroredStrategy, or
// MultiWorkerMirroredStrategy across processes): the optimizer sums the
// gradients over every replica; `sum` all-reduces the loss for the log.
template <typename Strategy, typename Sum>
std::vector<float> train_replicated(const Strategy& strategy, int steps, const Sum& sum) {
  Data data = make_data();  // the same global batch in every process (seeded)
  xdev::MirroredVariable w = strategy.create_variable(xdev::zeros({3, 1}));
  xdev::MirroredVariable b = strategy.create_variable(xdev::zeros({1}));
  std::vector<xdev::Tensor> xs = strategy.split_batch(data.x);
  std::vector<xdev::Tensor> ys = strategy.split_batch(data.y);
  xdev::SGD optimizer(kLearningRate, kMomentum);  // momentum slots on every replica device
  for (int step = 0; step < steps; ++step) {
    auto results = strategy.run([&](const xdev::ReplicaContext& r) {
      return gradients(w.local(r), b.local(r), xs[r.replica_id], ys[r.replica_id], kBatch);
    });
    optimizer.apply_gradients(
        strategy, {xdev::per_replica(results, 0), xdev::per_replica(results, 1)}, {&w, &b});
    if (step % 10 == 0 || step == steps - 1) {
      float loss = sum(xdev::per_replica(results, 2), "loss")[0].template item<float>();
      std::cout << "  step " << std::setw(3) << step << "  loss " << loss << "\n";
    }
  }
  // Every replica holds the same weights.
  for (size_t i = 1; i < w.values().size(); ++i) {
    if (w.local(static_cast<int>(i)).to_vector<float>() != w.local(0).to_vector<float>()) {
      throw std::runtime_error("replica " + std::to_string(i) + " diverged from replica 0");
    }
  }
  auto out = w.value().to_vector<float>();
  out.push_back(b.value().to_vector<float>()[0]);
  return out;
}

std::vector<std::string> logical_cpus(int n) {
  std::vector<std::string> devices;
  for (int i = 0; i < n; ++i) devices.push_back("/CPU:" + std::to_string(i));
  return devices;
}

std::vector<float> train_mirrored(int replicas, int steps) {
  xdev::MirroredStrategy strategy(logical_cpus(replicas));
  std::cout << "Mirrored over " << replicas << " replicas (all-reduce via "
            << strategy.all_reduce_path() << ")\n";
  return train_replicated(strategy, steps, [&](const std::vector<xdev::Tensor>& v, const char*) {
    return strategy.all_reduce(xdev::ReduceOp::kSum, v);
  });
}

void print_weights(const std::string& label, const std::vector<float>& v) {
  std::cout << label << " w = [" << v[0] << ", " << v[1] << ", " << v[2] << "], b = " << v[3]
            << "\n";
}

// `count` logical CPUs of 256 MiB each, so the tour runs without a GPU.
void configure_logical_cpus(int count) {
  xdev::PhysicalDevice cpu = xdev::list_physical_devices("CPU").at(0);
  xdev::set_logical_device_configuration(
      cpu, std::vector<xdev::LogicalDeviceConfiguration>(static_cast<size_t>(count),
                                                         {.memory_limit = 256}));
}

#ifdef XDEV_HAVE_MPI
// One run across workers; task 0 prints and writes the weights.
int train_multi_worker(int local_replicas, int steps, const std::string& weights_out) {
  configure_logical_cpus(local_replicas);
  xdev::MultiWorkerMirroredStrategy strategy(logical_cpus(local_replicas));
  if (!strategy.is_chief()) std::cout.setstate(std::ios::failbit);  // one voice
  std::cout << "Multi-worker: " << strategy.num_workers() << " workers x " << local_replicas
            << " replicas (task " << strategy.task_id() << ")\n";
  std::vector<float> w = train_replicated(
      strategy, steps, [&](const std::vector<xdev::Tensor>& v, const char* name) {
        return strategy.all_reduce(xdev::ReduceOp::kSum, v, name);
      });
  print_weights(std::to_string(strategy.num_replicas_in_sync()) + " replicas:", w);
  if (strategy.is_chief() && !weights_out.empty()) {
    FILE* f = std::fopen(weights_out.c_str(), "w");
    if (f == nullptr) throw std::runtime_error("cannot write " + weights_out);
    for (float v : w) std::fprintf(f, "%.9g\n", v);
    std::fclose(f);
  }
  return 0;
}
#endif

}  // namespace

int main(int argc, char** argv) try {
  CLI::App app{"xdev-train-mirrored: one dense layer trained on 1, 2 and 4 logical CPUs; "
               "exits 1 unless the mirrored weights equal the single-device ones"};
  int steps = 50;
  app.add_option("--steps", steps, "Training steps per run")
      ->check(CLI::Range(1, 1000000))
      ->capture_default_str();
#ifdef XDEV_HAVE_MPI
  bool multi_worker = false;
  int local_replicas = 1;
  std::string weights_out;
  app.add_flag("--multi-worker", multi_worker,
               "Train once with MultiWorkerMirroredStrategy (start it with mpirun -np N)");
  app.add_option("--local-replicas", local_replicas, "Logical CPUs per worker (--multi-worker)")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  app.add_option("--weights-out", weights_out,
                 "Task 0 writes the final weights here, one per line (--multi-worker)");
#endif
  CLI11_PARSE(app, argc, argv);
#ifdef XDEV_HAVE_MPI
  if (multi_worker) return train_multi_worker(local_replicas, steps, weights_out);
#endif
  configure_logical_cpus(4);
  std::cout << xdev::list_physical_devices("CPU").size() << " Physical CPU, "
            << xdev::list_logical_devices("CPU").size() << " Logical CPUs\n";

  std::vector<float> one = train_single(steps);
  std::vector<float> two = train_mirrored(2, steps);
  std::vector<float> four = train_mirrored(4, steps);
  print_weights("1 replica: ", one);
  print_weights("2 replicas:", two);
  print_weights("4 replicas:", four);
  float worst = 0;
  for (size_t i = 0; i < one.size(); ++i) {
    worst = std::max({worst, std::fabs(one[i] - two[i]), std::fabs(one[i] - four[i])});
  }
  std::cout << "largest difference from the single-device weights: " << worst << "\n";
  if (worst > 1e-5f) {
    std::cerr << "FAIL: mirrored training differs from single-device training\n";
    return 1;
  }
  std::cout << "equal within 1e-5\n";
  return 0;
} catch (const std::exception& e) {
  std::cerr << "train: " << e.what() << "\n";
  return 1;
}
