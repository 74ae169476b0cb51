// The optimizers of <xdev/optimizers.hpp>: Keras' update rules as SDK ops on
// each variable's device, outside every tape.
#include <xdev/optimizers.hpp>

#include <xdev/ops.hpp>
#include <xdev/placement.hpp>

#include <cmath>
#include <sstream>

#include "ops/op_record.hpp"

namespace xdev {
namespace {

Tensor sc(const Tensor& like, double v) { return scalar_like(like, Literal(v)); }

Tensor zeros_like(const Tensor& x) { return zeros(x.shape(), x.dtype()); }

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
      std::ostringstream m;
      m << "apply_gradients: gradient " << i << " is " << to_string(gradients[i].dtype())
        << " of shape " << gradients[i].shape() << ", its variable "
        << (variables[i].name().empty() ? "" : "'" + variables[i].name() + "' ") << "is "
        << to_string(variables[i].dtype()) << " of shape " << variables[i].shape();
      throw Error(ErrorCode::kInvalidArgument, m.str());
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
