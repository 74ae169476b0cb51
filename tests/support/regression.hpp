// Float64 linear regression trained by an optimizer, on plain Variables with
// the whole batch or on MirroredVariables with one shard per replica: what the
// tests of optimizers under a strategy (tests/core/test_distribute.cpp,
// tests/distribute_mpi/mpi_worker.cpp) compare. Each replica's loss is scaled
// by the global batch, so the summed gradients are the whole batch's.
#pragma once

#include <cstdint>
#include <vector>

#include <xdev/xdev.hpp>

namespace xdev_test {

// {dW, db} of sum((x·w + b − y)²) / rows.
inline std::vector<xdev::Tensor> regression_gradients(const xdev::Tensor& w, const xdev::Tensor& b,
                                                      const xdev::Tensor& x, const xdev::Tensor& y,
                                                      int64_t rows) {
  xdev::GradientTape tape;
  tape.watch(w);
  tape.watch(b);
  xdev::Tensor error = xdev::matmul(x, w) + b - y;
  return tape.gradient(xdev::sum(error * error) / static_cast<double>(rows), {w, b});
}

// `steps` steps from zeros on /CPU:0 with the whole batch; returns w then b.
inline std::vector<double> train_regression_on_one_device(xdev::Optimizer& opt,
                                                          const xdev::Tensor& x,
                                                          const xdev::Tensor& y, int steps) {
  xdev::DeviceScope scope("/CPU:0");
  xdev::Variable w(xdev::zeros({x.shape()[1], 1}, xdev::DType::kFloat64));
  xdev::Variable b(xdev::zeros({1}, xdev::DType::kFloat64));
  for (int step = 0; step < steps; ++step) {
    opt.apply_gradients(regression_gradients(w, b, x, y, x.shape()[0]), {w, b});
  }
  std::vector<double> out = w.read_value().to_vector<double>();
  out.push_back(b.read_value().to_vector<double>()[0]);
  return out;
}

// The same from zeros on `strategy`'s replicas (MirroredStrategy or
// MultiWorkerMirroredStrategy), `x` and `y` the global batch.
struct MirroredRegression {
  xdev::MirroredVariable w, b;
  // Replica 0's w then b.
  std::vector<double> weights() const {
    std::vector<double> out = w.value().to_vector<double>();
    out.push_back(b.value().to_vector<double>()[0]);
    return out;
  }
};

template <typename Strategy>
MirroredRegression train_regression_mirrored(const Strategy& strategy, xdev::Optimizer& opt,
                                             const xdev::Tensor& x, const xdev::Tensor& y,
                                             int steps) {
  MirroredRegression m{strategy.create_variable(xdev::zeros({x.shape()[1], 1},
                                                            xdev::DType::kFloat64)),
                       strategy.create_variable(xdev::zeros({1}, xdev::DType::kFloat64))};
  const std::vector<xdev::Tensor> xs = strategy.split_batch(x), ys = strategy.split_batch(y);
  for (int step = 0; step < steps; ++step) {
    auto results = strategy.run([&](const xdev::ReplicaContext& r) {
      return regression_gradients(m.w.local(r), m.b.local(r), xs[r.replica_id],
                                  ys[r.replica_id], x.shape()[0]);
    });
    opt.apply_gradients(strategy, {xdev::per_replica(results, 0), xdev::per_replica(results, 1)},
                        {&m.w, &m.b});
  }
  return m;
}

}  // namespace xdev_test
