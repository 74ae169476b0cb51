// Data parallelism across processes and hosts (TensorFlow's
// MultiWorkerMirroredStrategy) on Open MPI. In libxdev_mpi, built when meson
// finds MPI (-Dmpi=auto); link it with `pkg-config --libs xdev-mpi`.
//
//   // mpirun -np 2 ./train        (each process is one worker, a "task")
//   xdev::MultiWorkerMirroredStrategy strategy;   // this worker's GPUs, else CPUs
//   auto w = strategy.create_variable(xdev::zeros({3, 1}));  // task 0's value everywhere
//   auto xs = strategy.split_batch(x);            // this worker's rows of the global batch
//   auto grads = strategy.run([&](const xdev::ReplicaContext& r) {
//     return std::vector<xdev::Tensor>{gradient(w.local(r), xs[r.replica_id])};
//   });
//   w.assign_sub(strategy.all_reduce(xdev::ReduceOp::kSum, xdev::per_replica(grads, 0),
//                                    "grad/w"), 0.2);
//   // or, instead of assign_sub, an optimizer (slots on every replica device):
//   xdev::SGD optimizer(0.2, /*momentum=*/0.9);
//   optimizer.apply_gradients(strategy, {xdev::per_replica(grads, 0)}, {&w});
//
// Started without mpirun (and without XDEV_CONFIG), it runs as a single
// worker and says so. Every collective is a call all workers make in the same
// order with tensors of the same shape and dtype; a mismatch is an error on
// every worker naming the tensor and both shapes, and a worker that stops
// answering (it died, or hangs) is an error naming it after
// XDEV_COLLECTIVE_TIMEOUT_S seconds (default 60) instead of a hang. After
// such an error the strategy is broken: every later collective throws.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <xdev/distribute.hpp>

#if defined(XDEV_BUILDING_MPI) && (defined(__GNUC__) || defined(__clang__))
#define XDEV_MPI_API __attribute__((visibility("default")))
#else
#define XDEV_MPI_API
#endif

namespace xdev {

// Who the workers are and which one this process is: mpirun's ranks and
// host names, or XDEV_CONFIG (TF_CONFIG's shape: {"cluster": {"worker":
// ["h0:p", "h1:p"]}, "task": {"type": "worker", "index": 0}}); the
// strategy's constructor throws xdev::Error naming XDEV_CONFIG when it is
// malformed or disagrees with mpirun.
struct ClusterSpec {
  std::vector<std::string> workers;  // "host:port" from XDEV_CONFIG, else MPI's host names
  int task_id = 0;
  std::string source;  // "mpi", "XDEV_CONFIG" or "single worker"
};

class XDEV_MPI_API MultiWorkerMirroredStrategy {
 public:
  // Replicas on this worker's `local_devices` (MirroredStrategy's defaults
  // when empty); the same number on every worker. Prints
  // "Using MultiWorkerMirroredStrategy with cluster_spec = ..." like TensorFlow.
  explicit MultiWorkerMirroredStrategy(const std::vector<std::string>& local_devices = {});
  ~MultiWorkerMirroredStrategy();
  MultiWorkerMirroredStrategy(const MultiWorkerMirroredStrategy&) = delete;
  MultiWorkerMirroredStrategy& operator=(const MultiWorkerMirroredStrategy&) = delete;

  const ClusterSpec& cluster() const;
  int task_id() const { return cluster().task_id; }
  int num_workers() const { return static_cast<int>(cluster().workers.size()); }
  bool is_chief() const { return task_id() == 0; }
  // The replicas of this worker (in-process collectives go through it).
  const MirroredStrategy& local() const;
  int num_local_replicas() const { return local().num_replicas_in_sync(); }
  int num_replicas_in_sync() const { return num_workers() * num_local_replicas(); }
  // Global index of a local replica: task_id * num_local_replicas + local id.
  int global_replica_id(const ReplicaContext& replica) const {
    return task_id() * num_local_replicas() + replica.replica_id;
  }
  // This worker's devices as TensorFlow names them in a cluster:
  // "/job:worker/replica:0/task:1/device:CPU:0".
  std::vector<std::string> device_names() const;

  // A variable with task 0's `initial` on every replica of every worker.
  MirroredVariable create_variable(const Tensor& initial) const;
  // This worker's share of `global_batch` (the same batch on every worker),
  // one shard per local replica: global replica g gets the rows
  // MirroredStrategy would give replica g of num_replicas_in_sync().
  std::vector<Tensor> split_batch(const Tensor& global_batch) const;
  // MirroredStrategy::run on this worker's replicas (replica_id is local).
  std::vector<std::vector<Tensor>> run(
      const std::function<std::vector<Tensor>(const ReplicaContext&)>& step) const;

  // Collectives over every replica of every worker; `per_replica` holds one
  // tensor per local replica, `name` names the tensor in errors and logs.
  // Sum/mean/max/min; the result on every local replica device.
  std::vector<Tensor> all_reduce(ReduceOp op, const std::vector<Tensor>& per_replica,
                                 const std::string& name = "") const;
  // `value` of task `root_task` on every local replica device (the other
  // workers pass a tensor of the same shape and dtype).
  std::vector<Tensor> broadcast(const Tensor& value, int root_task = 0,
                                const std::string& name = "") const;
  // Every replica's tensor concatenated along axis 0 in global replica order,
  // on every local replica device.
  std::vector<Tensor> all_gather(const std::vector<Tensor>& per_replica,
                                 const std::string& name = "") const;
  // all_reduce, then global replica g keeps rows [g·n/R, (g+1)·n/R) of the
  // result (axis 0 of n rows must divide by R = num_replicas_in_sync()).
  std::vector<Tensor> reduce_scatter(ReduceOp op, const std::vector<Tensor>& per_replica,
                                     const std::string& name = "") const;
  // Returns when every worker has called it.
  void barrier() const;

  // Writes a safetensors checkpoint of replica 0's values on task 0 only,
  // then waits for every worker (so nobody reads a half-written file).
  void save_checkpoint(const std::vector<std::pair<std::string, MirroredVariable>>& variables,
                       const std::string& path) const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// all_reduce(kSum) over every replica of every worker, for
// Optimizer::apply_gradients (`strategy` must outlive the result). Inline:
// libxdev's optimizers reach MPI only through it.
inline CrossReplicaSum cross_replica_sum(const MultiWorkerMirroredStrategy& strategy) {
  return {strategy.local().devices(),
          [&strategy](const std::vector<Tensor>& per_replica, const std::string& name) {
            return strategy.all_reduce(ReduceOp::kSum, per_replica, name);
          }};
}

}  // namespace xdev
