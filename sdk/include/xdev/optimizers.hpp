// Optimizers (tf.keras.optimizers): SGD with momentum and Nesterov, Adam and
// AdamW, with Keras' update rules. Each update is made of SDK ops run on the
// variable's device (its slots — momentum, moments — live there too), not
// recorded by tapes.
//
//   xdev::Variable v(xdev::zeros({3}));
//   xdev::SGD opt(0.1, /*momentum=*/0.9, /*nesterov=*/true);
//   opt.apply_gradients({xdev::ones({3})}, {v});   // v = −0.19 each
//
// Under MirroredStrategy or MultiWorkerMirroredStrategy (<xdev/distribute.hpp>)
// it takes each MirroredVariable's gradients on every local replica, as
// xdev::per_replica gives them from run(), sums them over all replicas and
// gives every copy the same update (tf.keras' apply_gradients under a strategy):
//   xdev::MirroredStrategy strategy;
//   xdev::MirroredVariable w = strategy.create_variable(xdev::zeros({3, 1}));
//   xdev::MirroredVariable b = strategy.create_variable(xdev::zeros({1}));
//   auto results = strategy.run([&](const xdev::ReplicaContext& r) {
//     return std::vector<xdev::Tensor>{gradient(w.local(r), x), gradient(b.local(r), x)};
//   });                                          // {dW, db} per replica
//   xdev::Adam adam(0.01);
//   adam.apply_gradients(strategy, {xdev::per_replica(results, 0),
//                                   xdev::per_replica(results, 1)}, {&w, &b});
//
// Fused update kernels (one op per variable, as TensorFlow's
// ResourceApplyAdam) are not in the op table yet: these composites are what
// such optional ops would fall back to.
#pragma once

#include <cstdint>
#include <memory>
#include <unordered_map>
#include <utility>
#include <vector>

#include <xdev/autodiff.hpp>
#include <xdev/distribute.hpp>
#include <xdev/export.hpp>
#include <xdev/tensor.hpp>

namespace xdev {

class XDEV_API Optimizer {
 public:
  // Defined in the library (not inline), so that its symbol is exported
  // whatever the optimisation level of the build.
  virtual ~Optimizer();
  // One step: variables[i] updated with gradients[i] (an undefined gradient
  // leaves its variable alone, as TensorFlow skips None). Throws
  // xdev::Error(kInvalidArgument) when the counts, shapes or dtypes differ.
  void apply_gradients(const std::vector<Tensor>& gradients, const std::vector<Variable>& variables);
  // One step on mirrored variables: gradients[i] holds variables[i]'s gradient
  // on each local replica (xdev::per_replica(results, k)). Each variable's
  // gradients are summed over every replica (of every worker) by
  // `replicas.sum`, as TensorFlow aggregates them (SUM: scale the loss by the
  // global batch), then every copy gets the same update on its device, with
  // slots (momentum, Adam's moments) kept per replica device. A variable
  // whose gradients are all undefined is left alone. Throws
  // xdev::Error(kInvalidArgument), naming the variable and replica, when
  // counts, devices, shapes or dtypes differ, before any collective; all or
  // nothing: no copy, slot or step count changes unless every update succeeds.
  void apply_gradients(const CrossReplicaSum& replicas,
                       const std::vector<std::vector<Tensor>>& gradients,
                       const std::vector<MirroredVariable*>& variables);
  // The same with `strategy`'s sum: MirroredStrategy or
  // MultiWorkerMirroredStrategy (include <xdev/multi_worker.hpp>).
  template <typename Strategy>
    requires requires(const Strategy& s) { cross_replica_sum(s); }
  void apply_gradients(const Strategy& strategy, const std::vector<std::vector<Tensor>>& gradients,
                       const std::vector<MirroredVariable*>& variables) {
    apply_gradients(cross_replica_sum(strategy), gradients, variables);
  }
  // Steps applied so far.
  int64_t iterations() const { return iterations_; }

  // The optimizer's state, for checkpoints (xdev.train.Checkpoint): the
  // slots of `variable` (momentum, Adam's m and v; the tensors themselves, on
  // the variable's device), empty before its first update.
  std::vector<Tensor> slots(const Variable& variable) const;
  // Replaces `variable`'s slots with copies of `slots` on the variable's
  // device. Throws xdev::Error(kInvalidArgument) unless there are exactly
  // slot_count() of them, each of the variable's shape and dtype (nothing
  // changes then), and kUnimplemented for an optimizer that does not say how
  // many slots it keeps.
  void set_slots(const Variable& variable, const std::vector<Tensor>& slots);
  // Sets the step count (a restored checkpoint's; Adam's bias correction
  // reads it). Throws xdev::Error(kInvalidArgument) when negative.
  void set_iterations(int64_t iterations);
  // How many slots each variable has once updated (SGD: 1 with momentum,
  // else 0; Adam and AdamW: 2); -1 when not known (an optimizer defined
  // outside the SDK that does not override it).
  virtual int slot_count() const { return -1; }
  double learning_rate() const { return learning_rate_; }
  void set_learning_rate(double lr) { learning_rate_ = lr; }

 protected:
  explicit Optimizer(double learning_rate) : learning_rate_(learning_rate) {}
  // Updates `variable` with `gradient` at step `step` (1 for the first);
  // `slots` are this variable's, created empty and kept between steps.
  virtual void update(Variable& variable, const Tensor& gradient, std::vector<Tensor>& slots,
                      int64_t step) = 0;

 private:
  double learning_rate_;
  int64_t iterations_ = 0;
  // Slots by variable (the key keeps the variable's state alive).
  std::unordered_map<const void*, std::pair<Variable, std::vector<Tensor>>> slots_;
  // Slots of mirrored variables by identity (kept alive by the key's owner),
  // one vector per replica.
  std::unordered_map<const void*,
                     std::pair<std::shared_ptr<const char>, std::vector<std::vector<Tensor>>>>
      mirrored_slots_;
};

// w −= lr · g; with momentum m: v = m·v − lr·g, then w += v, or with
// Nesterov w += m·v − lr·g.
class XDEV_API SGD : public Optimizer {
 public:
  explicit SGD(double learning_rate = 0.01, double momentum = 0.0, bool nesterov = false);

  int slot_count() const override { return momentum_ == 0.0 ? 0 : 1; }

 protected:
  void update(Variable& variable, const Tensor& gradient, std::vector<Tensor>& slots,
              int64_t step) override;

 private:
  double momentum_;
  bool nesterov_;
};

// m = β1·m + (1 − β1)·g, v = β2·v + (1 − β2)·g², then
// w −= lr·√(1 − β2ᵗ)/(1 − β1ᵗ) · m / (√v + ε)  (Keras' Adam).
class XDEV_API Adam : public Optimizer {
 public:
  explicit Adam(double learning_rate = 0.001, double beta_1 = 0.9, double beta_2 = 0.999,
                double epsilon = 1e-7);

  int slot_count() const override { return 2; }

 protected:
  void update(Variable& variable, const Tensor& gradient, std::vector<Tensor>& slots,
              int64_t step) override;

 private:
  double beta_1_, beta_2_, epsilon_;
};

// Adam with decoupled weight decay: w −= lr·weight_decay·w before Adam's
// step (Keras' AdamW).
class XDEV_API AdamW : public Adam {
 public:
  explicit AdamW(double learning_rate = 0.001, double weight_decay = 0.004, double beta_1 = 0.9,
                 double beta_2 = 0.999, double epsilon = 1e-7);

 protected:
  void update(Variable& variable, const Tensor& gradient, std::vector<Tensor>& slots,
              int64_t step) override;

 private:
  double weight_decay_;
};

}  // namespace xdev
