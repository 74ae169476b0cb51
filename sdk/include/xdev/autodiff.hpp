// Reverse-mode automatic differentiation (TensorFlow's tf.GradientTape) and
// variables (tf.Variable).
//
//   xdev::Tensor inputs = xdev::random_uniform({8, 3}), targets = xdev::ones({8, 1});
//   xdev::Variable v(xdev::random_uniform({3, 1}));
//   xdev::GradientTape tape;                       // records this thread's ops
//   xdev::Tensor loss = xdev::mean(xdev::square(xdev::matmul(inputs, v) - targets));
//   xdev::Tensor g = tape.gradient(loss, v);
//   v.assign_sub(g * 0.1f);
//
// A tape records every op, view and explicit copy its thread runs while it
// is alive whose inputs are on the tape: tensors it watches, the values of
// trainable variables read while it is alive (watch_accessed_variables), and
// what recorded ops produced. The backward pass is made of ordinary SDK ops:
// each op's gradient runs under a DeviceScope of the device that ran the op
// (so on the same device, falling back by the usual rules when that device
// lacks a kernel). Every op's gradient is defined once, in the gradient
// table (core/autodiff/gradients.cpp); ops without one say why.
//
// Errors (xdev::Error): asking for a gradient through an op that is not
// differentiable names the op and the reason (kInvalidArgument; ArgMax,
// comparisons, an integer or bool result on the way from a source to the
// target); a second gradient() of a non-persistent tape, or watching a
// tensor that is not float32/float64, too.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <xdev/device.hpp>
#include <xdev/dtype.hpp>
#include <xdev/export.hpp>
#include <xdev/tensor.hpp>

namespace xdev {

namespace detail {
struct TapeState;
struct VariableState;
}  // namespace detail

// A mutable tensor that lives on one device: tf.Variable. Copies of a
// Variable are handles of the same variable (as Python references are).
class GradientTape;

class XDEV_API Variable {
 public:
  Variable() = default;
  // A variable holding a copy of `initial`, on the device of the innermost
  // DeviceScope of this thread, else on `initial`'s device. Trainable
  // variables are watched by every tape alive when they are read.
  explicit Variable(const Tensor& initial, bool trainable = true, std::string name = "");

  bool defined() const { return state_ != nullptr; }
  // The current value; a tape alive on this thread watches it (trainable
  // variables, watch_accessed_variables). Implicitly a Tensor:
  //   xdev::matmul(x, w)  // w a Variable
  Tensor read_value() const;
  operator Tensor() const { return read_value(); }  // NOLINT: tf.Variable converts too

  // value = `value` (same shape and dtype; moved to the variable's device).
  // Not recorded by tapes (a new value, not a function of the old one).
  void assign(const Tensor& value);
  // value += delta / value -= delta (delta broadcast to the value's shape),
  // run on the variable's device; not recorded by tapes.
  void assign_add(const Tensor& delta);
  void assign_sub(const Tensor& delta);
  // The variable lives on `device` from now on (its value copied there; no
  // copy if it is there already): Module::to.
  void move_to(const std::string& device);

  DType dtype() const;
  Shape shape() const;
  Device device() const;
  bool trainable() const;
  const std::string& name() const;
  // Whether `other` is a handle of the same variable.
  bool same_as(const Variable& other) const { return state_ == other.state_; }

  const std::shared_ptr<detail::VariableState>& state() const { return state_; }

 private:
  friend class GradientTape;  // watched_variables() makes handles
  std::shared_ptr<detail::VariableState> state_;
};

// Records the ops of the thread that makes it, from construction to
// destruction (nestable: each tape alive on the thread records). A tape
// belongs to its thread: it records only that thread's ops, and a tape
// destroyed on another thread only stops recording.
class XDEV_API GradientTape {
 public:
  // persistent: gradient() may be called more than once (the records are
  // kept until the tape dies); otherwise the first gradient() frees each
  // record as soon as the backward pass is past it, and the tape is spent.
  explicit GradientTape(bool persistent = false, bool watch_accessed_variables = true);
  ~GradientTape();
  GradientTape(const GradientTape&) = delete;
  GradientTape& operator=(const GradientTape&) = delete;

  // Records the ops that use `x` from now on (float32/float64 only).
  void watch(const Tensor& x);
  void watch(const Variable& v);
  // The variables this tape watched, in the order it first saw them.
  std::vector<Variable> watched_variables() const;

  // d target / d source for each source: a tensor of the source's shape, or
  // an undefined Tensor where the target does not depend on the source
  // (TensorFlow's None). `output_gradient` (default: ones of the target's
  // shape) is the gradient the target is weighted by.
  std::vector<Tensor> gradient(const Tensor& target, const std::vector<Tensor>& sources,
                               const Tensor& output_gradient = Tensor());
  Tensor gradient(const Tensor& target, const Tensor& source);
  // With respect to variables: the sum over every value of the variable
  // read while the tape recorded. (A braced list of variables is ambiguous
  // between the two vector overloads: pass a std::vector<Variable>.)
  std::vector<Tensor> gradient(const Tensor& target, const std::vector<Variable>& sources,
                               const Tensor& output_gradient = Tensor());
  Tensor gradient(const Tensor& target, const Variable& source);
  // Tensors and variables together, in one backward pass (a non-persistent
  // tape makes only one): the gradients of `tensors`, then those of
  // `variables`, each as above.
  std::vector<Tensor> gradient(const Tensor& target, const std::vector<Tensor>& tensors,
                               const std::vector<Variable>& variables,
                               const Tensor& output_gradient = Tensor());

  // Stops this tape recording while alive (tf.GradientTape.stop_recording).
  class XDEV_API StopRecording {
   public:
    explicit StopRecording(GradientTape& tape);
    ~StopRecording();
    StopRecording(const StopRecording&) = delete;
    StopRecording& operator=(const StopRecording&) = delete;

   private:
    std::shared_ptr<detail::TapeState> state_;
  };

  // How many records the tape holds (what a non-persistent tape has not
  // freed yet): for tests and memory diagnostics.
  size_t num_records() const;

 private:
  std::shared_ptr<detail::TapeState> state_;
};

// x's values as a new tensor that no tape sees as a function of x
// (tf.stop_gradient): shares x's storage, costs no copy.
XDEV_API Tensor stop_gradient(const Tensor& x);

}  // namespace xdev
