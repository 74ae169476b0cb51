// The optimizers of <xdev/optimizers.hpp>: Keras' update rules as SDK ops on
// each variable's device, outside every tape.
#include <xdev/optimizers.hpp>

#include <xdev/ops.hpp>
#include <xdev/placement.hpp>

#include <cmath>
#include <sstream>

#include "tensors/op_record.hpp"

namespace xdev {
namespace {

Tensor sc(const Tensor& like, double v) { return scalar_like(like, Literal(v)); }

Tensor zeros_like(const Tensor& x) { return zeros(x.shape(), x.dtype()); }

// "float32 of shape [2, 3]", for mismatch messages.
std::string describe(DType dtype, const Shape& shape) {
  std::ostringstream out;
  out << to_string(dtype) << " of shape " << shape;
  return out.str();
}

}  // namespace

Optimizer::~Optimizer() = default;

void Optimizer::apply_gradients(const std::vector<Tensor>& gradients,
                                const std::vector<Variable>& variables) {
  if (gradients.size() != variables.size()) {
    throw Error(ErrorCode::kInvalidArgument,
                "apply_gradients: " + std::to_string(gradients.size()) + " gradients for " +
                    std::to_string(variables.size()) + " variables");
  }
  for (size_t i = 0; i < variables.size(); ++i) {
    if (!variables[i].defined()) {
      throw Error(ErrorCode::kInvalidArgument,
                  "apply_gradients: variable " + std::to_string(i) + " is empty");
    }
    if (!gradients[i].defined()) continue;
    if (!(gradients[i].shape() == variables[i].shape()) ||
        gradients[i].dtype() != variables[i].dtype()) {
      throw Error(ErrorCode::kInvalidArgument,
                  "apply_gradients: gradient " + std::to_string(i) + " is " +
                      describe(gradients[i].dtype(), gradients[i].shape()) + ", its variable " +
                      (variables[i].name().empty() ? "" : "'" + variables[i].name() + "' ") +
                      "is " + describe(variables[i].dtype(), variables[i].shape()));
    }
  }
  ++iterations_;
  detail::NoRecording no_tape;
  for (size_t i = 0; i < variables.size(); ++i) {
    if (!gradients[i].defined()) continue;
    Variable var = variables[i];
    auto [it, fresh] = slots_.try_emplace(var.state().get(), var, std::vector<Tensor>{});
    DeviceScope scope(var.device());
    update(var, gradients[i].to(var.device()), it->second.second, iterations_);
  }
}

void Optimizer::apply_gradients(const CrossReplicaSum& replicas,
                                const std::vector<std::vector<Tensor>>& gradients,
                                const std::vector<MirroredVariable*>& variables) {
  const size_t n = replicas.devices.size();
  auto invalid = [](const std::string& what) {
    return Error(ErrorCode::kInvalidArgument, "apply_gradients: " + what);
  };
  if (n == 0 || !replicas.sum) throw invalid("the strategy has no replicas (or no sum)");
  if (gradients.size() != variables.size()) {
    throw invalid(std::to_string(gradients.size()) + " gradient lists for " +
                  std::to_string(variables.size()) + " mirrored variables");
  }
  // Everything is checked before the first collective, so that a mistake
  // leaves every worker's variables as they were.
  std::vector<bool> skip(variables.size(), false);
  for (size_t i = 0; i < variables.size(); ++i) {
    const std::string var = "mirrored variable " + std::to_string(i);
    const MirroredVariable* v = variables[i];
    if (v == nullptr || v->values_.empty() || !v->identity_) {
      throw invalid(var + " is empty (make it with the strategy's create_variable)");
    }
    for (size_t j = 0; j < i; ++j) {
      if (variables[j]->identity_ == v->identity_) {
        throw invalid(var + " is mirrored variable " + std::to_string(j) + " again");
      }
    }
    if (v->values_.size() != n) {
      throw invalid(var + " has " + std::to_string(v->values_.size()) + " copies, the strategy has " +
                    std::to_string(n) + " local replicas");
    }
    if (gradients[i].size() != n) {
      throw invalid(std::to_string(gradients[i].size()) + " gradients for " + var + " on " +
                    std::to_string(n) + " local replicas (one per replica: per_replica(results, k))");
    }
    size_t defined = 0;
    for (const Tensor& g : gradients[i]) defined += g.defined() ? 1 : 0;
    if (defined == 0) {
      skip[i] = true;  // TensorFlow skips None gradients
      continue;
    }
    for (size_t r = 0; r < n; ++r) {
      const Tensor& copy = v->values_[r];
      const Tensor& g = gradients[i][r];
      const std::string where = " on replica " + std::to_string(r) + " (" +
                                replicas.devices[r].name + ")";
      if (!(copy.device() == replicas.devices[r])) {
        throw invalid(var + " has its copy for replica " + std::to_string(r) + " on " +
                      copy.device().name + ", the strategy's replica " + std::to_string(r) +
                      " is " + replicas.devices[r].name);
      }
      if (!g.defined()) {
        throw invalid("the gradient of " + var + where +
                      " is undefined while other replicas have one");
      }
      if (!(g.shape() == copy.shape()) || g.dtype() != copy.dtype()) {
        throw invalid("the gradient of " + var + where + " is " + describe(g.dtype(), g.shape()) +
                      ", the variable is " + describe(copy.dtype(), copy.shape()));
      }
    }
  }
  detail::NoRecording no_tape;
  // The sums, in the order of `variables` (every worker makes the same calls).
  std::vector<std::vector<Tensor>> totals(variables.size());
  for (size_t i = 0; i < variables.size(); ++i) {
    if (skip[i]) continue;
    totals[i] = replicas.sum(gradients[i], "apply_gradients/variable_" + std::to_string(i));
    if (totals[i].size() != n) {
      throw Error(ErrorCode::kInternal, "apply_gradients: the strategy's sum returned " +
                                            std::to_string(totals[i].size()) + " tensors for " +
                                            std::to_string(n) + " replicas");
    }
  }
  // Every copy's update, staged: values and slots are immutable tensors, so
  // nothing is visible until the commit below.
  const int64_t step = iterations_ + 1;
  std::vector<std::vector<Tensor>> values(variables.size());
  std::vector<std::vector<std::vector<Tensor>>> slots(variables.size());
  for (size_t i = 0; i < variables.size(); ++i) {
    if (skip[i]) continue;
    MirroredVariable& v = *variables[i];
    auto found = mirrored_slots_.find(v.identity_.get());
    slots[i] = found != mirrored_slots_.end() ? found->second.second
                                               : std::vector<std::vector<Tensor>>(n);
    for (size_t r = 0; r < n; ++r) {
      DeviceScope scope(replicas.devices[r]);
      Variable copy(v.values_[r], /*trainable=*/false);  // update() takes a Variable
      update(copy, totals[i][r].to(replicas.devices[r]), slots[i][r], step);
      values[i].push_back(copy.read_value());
    }
  }
  ++iterations_;
  for (size_t i = 0; i < variables.size(); ++i) {
    if (skip[i]) continue;
    MirroredVariable& v = *variables[i];
    v.values_ = std::move(values[i]);
    mirrored_slots_[v.identity_.get()] = {v.identity_, std::move(slots[i])};
  }
}

std::vector<Tensor> Optimizer::slots(const Variable& variable) const {
  if (!variable.defined()) throw Error(ErrorCode::kInvalidArgument, "slots: the variable is empty");
  auto found = slots_.find(variable.state().get());
  return found == slots_.end() ? std::vector<Tensor>{} : found->second.second;
}

void Optimizer::set_slots(const Variable& variable, const std::vector<Tensor>& slots) {
  const std::string who =
      "set_slots" + (variable.defined() && !variable.name().empty()
                         ? " (variable '" + variable.name() + "')"
                         : std::string());
  if (!variable.defined()) throw Error(ErrorCode::kInvalidArgument, who + ": the variable is empty");
  const int count = slot_count();
  if (count < 0) {
    throw Error(ErrorCode::kUnimplemented,
                who + ": this optimizer does not say how many slots it keeps (slot_count)");
  }
  if (slots.size() != static_cast<size_t>(count)) {
    throw Error(ErrorCode::kInvalidArgument, who + ": " + std::to_string(slots.size()) +
                                                 " slots given, this optimizer keeps " +
                                                 std::to_string(count) + " per variable");
  }
  for (size_t i = 0; i < slots.size(); ++i) {
    if (!slots[i].defined() || !(slots[i].shape() == variable.shape()) ||
        slots[i].dtype() != variable.dtype()) {
      throw Error(ErrorCode::kInvalidArgument,
                  who + ": slot " + std::to_string(i) + " is " +
                      (slots[i].defined() ? describe(slots[i].dtype(), slots[i].shape())
                                          : std::string("empty")) +
                      ", the variable is " + describe(variable.dtype(), variable.shape()));
    }
  }
  // Updates make new slot tensors (never write into these), so the caller's
  // tensors can be kept as they are once on the variable's device.
  std::vector<Tensor> on_device;
  {
    detail::NoRecording no_tape;
    for (const Tensor& t : slots) on_device.push_back(t.to(variable.device()));
  }
  slots_.insert_or_assign(variable.state().get(), std::make_pair(variable, std::move(on_device)));
}

void Optimizer::set_iterations(int64_t iterations) {
  if (iterations < 0) {
    throw Error(ErrorCode::kInvalidArgument,
                "set_iterations: " + std::to_string(iterations) + " is negative");
  }
  iterations_ = iterations;
}

SGD::SGD(double learning_rate, double momentum, bool nesterov)
    : Optimizer(learning_rate), momentum_(momentum), nesterov_(nesterov) {
  if (!(momentum >= 0.0 && momentum <= 1.0)) {
    throw Error(ErrorCode::kInvalidArgument, "SGD: momentum must be in [0, 1]");
  }
}

void SGD::update(Variable& variable, const Tensor& g, std::vector<Tensor>& slots, int64_t) {
  const Tensor step = mul(g, sc(g, learning_rate()));
  if (momentum_ == 0.0) {
    variable.assign_sub(step);
    return;
  }
  if (slots.empty()) slots.push_back(zeros_like(g));
  Tensor& v = slots[0];
  v = sub(mul(v, sc(v, momentum_)), step);
  variable.assign_add(nesterov_ ? sub(mul(v, sc(v, momentum_)), step) : v);
}

Adam::Adam(double learning_rate, double beta_1, double beta_2, double epsilon)
    : Optimizer(learning_rate), beta_1_(beta_1), beta_2_(beta_2), epsilon_(epsilon) {}

void Adam::update(Variable& variable, const Tensor& g, std::vector<Tensor>& slots, int64_t step) {
  if (slots.empty()) {
    slots.push_back(zeros_like(g));
    slots.push_back(zeros_like(g));
  }
  Tensor &m = slots[0], &v = slots[1];
  m = add(m, mul(sub(g, m), sc(g, 1.0 - beta_1_)));
  v = add(v, mul(sub(square(g), v), sc(g, 1.0 - beta_2_)));
  const double t = static_cast<double>(step);
  const double lr = learning_rate() * std::sqrt(1.0 - std::pow(beta_2_, t)) /
                    (1.0 - std::pow(beta_1_, t));
  variable.assign_sub(div(mul(m, sc(m, lr)), add(sqrt(v), sc(v, epsilon_))));
}

AdamW::AdamW(double learning_rate, double weight_decay, double beta_1, double beta_2,
             double epsilon)
    : Adam(learning_rate, beta_1, beta_2, epsilon), weight_decay_(weight_decay) {}

void AdamW::update(Variable& variable, const Tensor& g, std::vector<Tensor>& slots, int64_t step) {
  const Tensor w = variable.read_value();
  variable.assign_sub(mul(w, sc(w, learning_rate() * weight_decay_)));
  Adam::update(variable, g, slots, step);
}

}  // namespace xdev
