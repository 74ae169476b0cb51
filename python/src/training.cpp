// Training for xdev.GradientTape, xdev.Variable, xdev.optimizers, xdev.layers
// and xdev.losses: the C++ tape, variables, optimizers, layers and losses
// (<xdev/autodiff.hpp>, <xdev/optimizers.hpp>, <xdev/layers.hpp>), bound as
// they are. The Python package adds TensorFlow's argument handling (nested
// sources, None gradients, zip(grads, vars), the context manager).
#include "bindings.hpp"

#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/unique_ptr.h>
#include <nanobind/stl/vector.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace xdev::python {
namespace {

// A GradientTape made by __enter__ (it records from construction on) and
// kept after __exit__ with recording stopped, so that gradient() works after
// the `with` block as in TensorFlow. Dropped by close(): a spent
// non-persistent tape frees itself at once.
class PyTape {
 public:
  PyTape(bool persistent, bool watch_accessed_variables)
      : persistent_(persistent), watch_accessed_variables_(watch_accessed_variables) {}

  void start() {
    if (tape_ == nullptr) {
      tape_ = std::make_unique<GradientTape>(persistent_, watch_accessed_variables_);
    }
    stopped_.reset();
  }
  void stop() {
    if (tape_ != nullptr && stopped_ == nullptr) {
      stopped_ = std::make_unique<GradientTape::StopRecording>(*tape_);
    }
  }
  bool recording() const { return tape_ != nullptr && stopped_ == nullptr; }
  void close() {
    stopped_.reset();
    tape_.reset();
    closed_ = true;
  }
  GradientTape& tape(const char* what) {
    if (tape_ == nullptr) {
      throw Error(ErrorCode::kFailedPrecondition,
                  std::string("GradientTape.") + what +
                      (closed_ ? ": the non-persistent tape is spent (it computed its gradient "
                                 "and freed its records); make it "
                                 "xdev.GradientTape(persistent=True) to use it again"
                               : ": the tape has not recorded anything yet; use it as `with "
                                 "xdev.GradientTape() as tape:`"));
    }
    return *tape_;
  }

 private:
  bool persistent_, watch_accessed_variables_;
  std::unique_ptr<GradientTape> tape_;
  std::unique_ptr<GradientTape::StopRecording> stopped_;
  bool closed_ = false;
};

// An optional tensor: None for TensorFlow's "no gradient".
Tensor optional_tensor(nb::handle obj) {
  if (obj.is_none()) return Tensor();
  return to_tensor(obj);
}

std::vector<Tensor> optional_tensors(const nb::sequence& objs) {
  std::vector<Tensor> out;
  for (nb::handle h : objs) out.push_back(optional_tensor(h));
  return out;
}

nb::list optional_list(const std::vector<Tensor>& tensors) {
  nb::list out;
  for (const Tensor& t : tensors) out.append(t.defined() ? nb::cast(t) : nb::none());
  return out;
}

Activation to_activation(nb::handle obj) {
  if (obj.is_none()) return Activation::kLinear;
  const std::string name = nb::cast<std::string>(obj);
  if (name == "linear") return Activation::kLinear;
  if (name == "relu") return Activation::kRelu;
  if (name == "tanh") return Activation::kTanh;
  if (name == "sigmoid") return Activation::kSigmoid;
  if (name == "gelu") return Activation::kGelu;
  throw Error(ErrorCode::kInvalidArgument,
              "activation '" + name +
                  "' is not one of None, 'linear', 'relu', 'tanh', 'sigmoid', 'gelu'");
}

// A loss of (truth, prediction). The prediction is converted first; a truth
// that is not a tensor yet takes its dtype when `truth_like_prediction` (the
// class indices of sparse losses keep theirs).
template <Tensor (*Fn)(const Tensor&, const Tensor&)>
void def_loss(nb::module_& m, const char* name, const char* truth, const char* prediction,
              bool truth_like_prediction, const char* doc) {
  m.def(name, [truth_like_prediction](nb::handle t, nb::handle p) {
    Tensor pred = to_tensor(p);
    Tensor true_value = truth_like_prediction ? to_tensor(t, pred.dtype()) : to_tensor(t);
    nb::gil_scoped_release release;
    return Fn(true_value, pred);
  }, nb::arg(truth), nb::arg(prediction), doc);
}

template <typename Fn>
auto without_gil(Fn&& fn) {
  nb::gil_scoped_release release;
  return fn();
}

}  // namespace

void bind_training(nb::module_& m) {
  nb::class_<Variable>(m, "_Variable", "xdev::Variable (use xdev.Variable)")
      .def("__init__", [](Variable* self, const Tensor& initial, bool trainable,
                          const std::string& name) {
        nb::gil_scoped_release release;
        new (self) Variable(initial, trainable, name);
      }, nb::arg("initial"), nb::arg("trainable") = true, nb::arg("name") = "")
      .def("read_value", &Variable::read_value, release_gil(),
           "The value; tapes recording on this thread watch it when the variable is trainable.")
      .def("assign", &Variable::assign, nb::arg("value"), release_gil())
      .def("assign_add", &Variable::assign_add, nb::arg("delta"), release_gil())
      .def("assign_sub", &Variable::assign_sub, nb::arg("delta"), release_gil())
      .def("move_to", &Variable::move_to, nb::arg("device"), release_gil())
      .def_prop_ro("dtype", &Variable::dtype)
      .def_prop_ro("shape", [](const Variable& v) { return v.shape().to_vector(); })
      .def_prop_ro("device", [](const Variable& v) { return v.device().name; })
      .def_prop_ro("trainable", &Variable::trainable)
      .def_prop_ro("name", &Variable::name)
      .def("same_as", &Variable::same_as, nb::arg("other"))
      .def_prop_ro("key", [](const Variable& v) {
        return reinterpret_cast<uintptr_t>(v.state().get());
      }, "The same number for every handle of one variable, while it lives.");

  nb::class_<PyTape>(m, "_GradientTape", "xdev::GradientTape (use xdev.GradientTape)")
      .def(nb::init<bool, bool>(), nb::arg("persistent"), nb::arg("watch_accessed_variables"))
      .def("start", &PyTape::start, "Records from now on (makes the C++ tape the first time).")
      .def("stop", &PyTape::stop, "Stops recording; gradient() still works.")
      .def("close", &PyTape::close, "Frees the tape and its records.")
      .def_prop_ro("recording", &PyTape::recording)
      .def("watch", [](PyTape& t, const Tensor& x) { t.tape("watch").watch(x); }, nb::arg("x"),
           release_gil())
      .def("watch", [](PyTape& t, const Variable& v) { t.tape("watch").watch(v); },
           nb::arg("variable"), release_gil())
      .def("watched_variables",
           [](PyTape& t) { return t.tape("watched_variables").watched_variables(); })
      .def("num_records", [](PyTape& t) { return t.tape("num_records").num_records(); })
      .def("gradient", [](PyTape& t, const Tensor& target, const std::vector<Tensor>& tensors,
                          const std::vector<Variable>& variables, nb::handle output_gradient) {
        Tensor og = optional_tensor(output_gradient);
        GradientTape& tape = t.tape("gradient");
        return optional_list(
            without_gil([&] { return tape.gradient(target, tensors, variables, og); }));
      }, nb::arg("target"), nb::arg("tensors"), nb::arg("variables"),
         nb::arg("output_gradient") = nb::none(),
         "The gradients of `tensors`, then of `variables`, in one backward pass.");

  m.def("stop_gradient", [](nb::handle input) {
    Tensor x = to_tensor(input);
    nb::gil_scoped_release release;
    return stop_gradient(x);
  }, nb::arg("input"),
        "tf.stop_gradient: input's values as a tensor no tape sees as a function of input "
        "(no copy).");

  // --- optimizers ---
  nb::class_<Optimizer>(m, "_Optimizer", "xdev::Optimizer (use xdev.optimizers)")
      .def("apply_gradients", [](Optimizer& o, const nb::sequence& gradients,
                                 const std::vector<Variable>& variables) {
        std::vector<Tensor> grads = optional_tensors(gradients);
        nb::gil_scoped_release release;
        o.apply_gradients(grads, variables);
      }, nb::arg("gradients"), nb::arg("variables"))
      // gradients[i]: variables[i]'s gradient on each local replica (None where
      // there is none); summed over every replica by `replicas`.
      .def("apply_gradients_mirrored", [](Optimizer& o, const CrossReplicaSum& replicas,
                                          const nb::sequence& gradients,
                                          const std::vector<MirroredVariable*>& variables) {
        std::vector<std::vector<Tensor>> grads;
        for (nb::handle per_replica : gradients) {
          grads.push_back(optional_tensors(nb::borrow<nb::sequence>(per_replica)));
        }
        nb::gil_scoped_release release;
        o.apply_gradients(replicas, grads, variables);
      }, nb::arg("replicas"), nb::arg("gradients"), nb::arg("variables"))
      .def_prop_ro("iterations", &Optimizer::iterations)
      .def("set_iterations", &Optimizer::set_iterations, nb::arg("iterations"))
      .def("slots", &Optimizer::slots, nb::arg("variable"), release_gil(),
           "The variable's slots (empty before its first update).")
      .def("set_slots", &Optimizer::set_slots, nb::arg("variable"), nb::arg("slots"),
           release_gil())
      .def_prop_ro("slot_count", &Optimizer::slot_count)
      .def_prop_rw("learning_rate", &Optimizer::learning_rate, &Optimizer::set_learning_rate);
  nb::class_<SGD, Optimizer>(m, "_SGD")
      .def(nb::init<double, double, bool>(), nb::arg("learning_rate"), nb::arg("momentum"),
           nb::arg("nesterov"));
  nb::class_<Adam, Optimizer>(m, "_Adam")
      .def(nb::init<double, double, double, double>(), nb::arg("learning_rate"),
           nb::arg("beta_1"), nb::arg("beta_2"), nb::arg("epsilon"));
  nb::class_<AdamW, Adam>(m, "_AdamW")
      .def(nb::init<double, double, double, double, double>(), nb::arg("learning_rate"),
           nb::arg("weight_decay"), nb::arg("beta_1"), nb::arg("beta_2"), nb::arg("epsilon"));

  // --- layers and losses ---
  nb::class_<Module>(m, "_Module", "xdev::Module (use xdev.layers)")
      .def("__call__", [](Module& layer, nb::handle x, bool training) {
        Tensor input = to_tensor(x);
        nb::gil_scoped_release release;
        return layer(input, training);
      }, nb::arg("x"), nb::arg("training") = false)
      .def("parameters", &Module::parameters)
      .def("trainable_variables", &Module::trainable_variables)
      .def("to", [](Module& layer, const std::string& device) { layer.to(device); },
           nb::arg("device"), release_gil());
  nb::class_<Dense, Module>(m, "_Dense")
      .def("__init__", [](Dense* self, int64_t in, int64_t out, nb::handle activation,
                          DType dtype, std::optional<uint64_t> seed) {
        Activation a = to_activation(activation);
        nb::gil_scoped_release release;
        new (self) Dense(in, out, a, dtype, seed);
      }, nb::arg("in"), nb::arg("out"), nb::arg("activation").none() = nb::none(),
           nb::arg("dtype") = DType::kFloat32, nb::arg("seed").none() = nb::none())
      .def_prop_ro("kernel", [](const Dense& d) { return d.kernel(); })
      .def_prop_ro("bias", [](const Dense& d) { return d.bias(); });
  nb::class_<Conv2D, Module>(m, "_Conv2D")
      .def("__init__", [](Conv2D* self, int64_t in_channels, int64_t filters,
                          std::vector<int64_t> kernel_size, std::vector<int64_t> strides,
                          std::string padding, nb::handle activation, DType dtype,
                          std::optional<uint64_t> seed) {
        Activation a = to_activation(activation);
        nb::gil_scoped_release release;
        new (self) Conv2D(in_channels, filters, std::move(kernel_size), std::move(strides),
                          std::move(padding), a, dtype, seed);
      }, nb::arg("in_channels"), nb::arg("filters"), nb::arg("kernel_size"), nb::arg("strides"),
         nb::arg("padding"), nb::arg("activation").none() = nb::none(),
         nb::arg("dtype") = DType::kFloat32, nb::arg("seed").none() = nb::none());
  nb::class_<MaxPool, Module>(m, "_MaxPool")
      .def(nb::init<std::vector<int64_t>, std::vector<int64_t>, std::string>(),
           nb::arg("pool_size"), nb::arg("strides"), nb::arg("padding"));
  nb::class_<Flatten, Module>(m, "_Flatten").def(nb::init<>());
  nb::class_<Dropout, Module>(m, "_Dropout")
      .def(nb::init<double, std::optional<uint64_t>>(), nb::arg("rate"),
           nb::arg("seed").none() = nb::none());
  nb::class_<LayerNorm, Module>(m, "_LayerNorm")
      .def(nb::init<int64_t, double, DType>(), nb::arg("dim"), nb::arg("epsilon"),
           nb::arg("dtype") = DType::kFloat32, release_gil());
  nb::class_<Embedding, Module>(m, "_Embedding")
      .def(nb::init<int64_t, int64_t, DType, std::optional<uint64_t>>(), nb::arg("vocabulary"),
           nb::arg("dim"), nb::arg("dtype") = DType::kFloat32, nb::arg("seed").none() = nb::none(),
           release_gil());

  def_loss<&mean_squared_error>(m, "mean_squared_error", "y_true", "y_pred", true,
                                "mean((y_pred - y_true)^2) over every element.");
  def_loss<&softmax_cross_entropy>(
      m, "softmax_cross_entropy", "labels", "logits", true,
      "Mean over the batch of -sum(labels * log_softmax(logits)); labels [batch, classes].");
  def_loss<&sparse_softmax_cross_entropy>(
      m, "sparse_softmax_cross_entropy", "labels", "logits", false,
      "The same with class indices [batch] (int32 or int64) as labels.");
}

}  // namespace xdev::python
