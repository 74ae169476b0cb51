// Many devices (docs/behaviour.md B22, B23, B25): mirrored data parallelism and models
// that move to a device as a unit.
//
//   xdev::MirroredStrategy strategy;              // all logical GPUs, else all CPUs
//   auto w = strategy.create_variable(xdev::zeros({3, 1}));
//   auto xs = strategy.split_batch(x);            // one shard per replica
//   auto grads = strategy.run([&](const xdev::ReplicaContext& r) {
//     return std::vector<xdev::Tensor>{gradient(w.local(r), xs[r.replica_id])};
//   });
//   w.assign_sub(strategy.all_reduce(xdev::ReduceOp::kSum, xdev::per_replica(grads, 0)), 0.2);
//   // or, instead of assign_sub, an optimizer (<xdev/optimizers.hpp>): it sums the
//   // gradients over the replicas and gives every copy the same update
//   xdev::Adam optimizer(0.01);
//   optimizer.apply_gradients(strategy, {xdev::per_replica(grads, 0)}, {&w});
#pragma once

#include <functional>
#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <xdev/device.hpp>
#include <xdev/export.hpp>
#include <xdev/layers.hpp>
#include <xdev/tensor.hpp>

namespace xdev {

// How all-reduce combines the replicas' values (tf.distribute.ReduceOp, with
// MAX and MIN as Horovod and NCCL offer them).
enum class ReduceOp { kSum, kMean, kMax, kMin };
// "SUM", "MEAN", "MAX", "MIN".
XDEV_API std::string_view to_string(ReduceOp op) noexcept;

// What a step function learns about the replica it runs as.
struct ReplicaContext {
  int replica_id = 0;
  int num_replicas = 1;
  Device device;
};

// One tensor per replica device, kept identical by the strategy's updates.
// Copies of a MirroredVariable hold their own values but are one variable to
// an optimizer (they share its slots): update through one object.
class XDEV_API MirroredVariable {
 public:
  MirroredVariable() = default;
  // The copy on `replica`'s device.
  const Tensor& local(const ReplicaContext& replica) const { return values_.at(replica.replica_id); }
  const Tensor& local(int replica_id) const { return values_.at(replica_id); }
  const std::vector<Tensor>& values() const { return values_; }
  // The value (replica 0's copy).
  const Tensor& value() const { return values_.at(0); }
  // values[i] -= scale * deltas[i] on every device; `deltas` holds one tensor
  // per replica (as all_reduce returns). All or nothing: if any device fails,
  // no copy changes.
  void assign_sub(const std::vector<Tensor>& deltas, double scale = 1.0);
  // Replaces every copy with `value` (copied to each device).
  void assign(const Tensor& value);

 private:
  friend class MirroredStrategy;
  friend class Optimizer;  // updates every copy at once, keys its slots by identity_
  std::vector<Tensor> values_;
  // Made by create_variable; what optimizers know the variable by.
  std::shared_ptr<const char> identity_;
};

class XDEV_API MirroredStrategy {
 public:
  // Replicas on `devices` (logical devices, any spelling); empty: every
  // logical GPU, or every logical CPU when there is no GPU. Prints
  // "Using MirroredStrategy with devices (...)" like TensorFlow.
  explicit MirroredStrategy(const std::vector<std::string>& devices = {});
  explicit MirroredStrategy(const std::vector<Device>& devices);
  // Braced names: MirroredStrategy({"/GPU:0", "/GPU:1"}); MirroredStrategy({})
  // is the default (every GPU, else every CPU), not an ambiguous call.
  explicit MirroredStrategy(std::initializer_list<std::string> devices)
      : MirroredStrategy(std::vector<std::string>(devices)) {}

  const std::vector<Device>& devices() const { return devices_; }
  int num_replicas_in_sync() const { return static_cast<int>(devices_.size()); }

  // A variable with a copy of `initial` on every replica device.
  MirroredVariable create_variable(const Tensor& initial) const;

  // Splits `batch` along axis 0 into one shard per replica, each on its
  // replica's device; shard sizes differ by at most one row.
  std::vector<Tensor> split_batch(const Tensor& batch) const;

  // Runs `step` once per replica, concurrently, each on its own thread under
  // a DeviceScope of its device. Returns the tensors each replica returned.
  // If a replica throws, waits for the others and throws xdev::Error naming
  // the replica and its device (variables are unchanged: updates happen only
  // through MirroredVariable after run returns).
  std::vector<std::vector<Tensor>> run(
      const std::function<std::vector<Tensor>(const ReplicaContext&)>& step) const;

  // Sum, mean, max or min of one tensor per replica (same shape and dtype);
  // the result is on every replica device (one tensor per replica). Uses the best path
  // the devices offer and logs it (with placement logging on):
  // "All-reduce SUM of 2 x 48 B over (...) via shared memory".
  std::vector<Tensor> all_reduce(ReduceOp op, const std::vector<Tensor>& per_replica) const;

  // Sum, mean, max or min of one tensor per replica, on `destination`.
  Tensor reduce(ReduceOp op, const std::vector<Tensor>& per_replica,
                const std::string& destination = "/CPU:0") const;

  // The path all_reduce takes for these devices: "shared memory" (logical
  // devices of one physical device), "direct copies" (peer copies between
  // devices of one plugin, or host-addressable memory), "host staging".
  std::string all_reduce_path() const;

 private:
  std::vector<Device> devices_;
};

// Column `index` of run()'s result: that output of every replica.
XDEV_API std::vector<Tensor> per_replica(const std::vector<std::vector<Tensor>>& results,
                                         size_t index);

// How a strategy sums one tensor per local replica over all its replicas (of
// every worker, for MultiWorkerMirroredStrategy), the total on every local
// replica device: what Optimizer::apply_gradients needs of a strategy.
// `name` names the tensor in a collective's errors and logs.
struct CrossReplicaSum {
  std::vector<Device> devices;  // the local replica devices, in replica order
  std::function<std::vector<Tensor>(const std::vector<Tensor>& per_replica,
                                    const std::string& name)>
      sum;
};
// all_reduce(kSum) over `strategy`'s replicas (it must outlive the result).
XDEV_API CrossReplicaSum cross_replica_sum(const MirroredStrategy& strategy);

// Module and Dense (B25) are in <xdev/layers.hpp>.

}  // namespace xdev
