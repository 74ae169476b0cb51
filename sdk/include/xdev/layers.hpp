// Models made of layers (tf.keras.layers), their weight initialisers and
// losses. Parameters are Variables (<xdev/autodiff.hpp>): made on the device
// of the innermost DeviceScope when the layer is constructed, watched by
// every GradientTape alive when the layer runs, and moved as a unit by
// Module::to.
//
//   xdev::Sequential model;
//   model.add<xdev::Flatten>();
//   model.add<xdev::Dense>(28 * 28, 128, xdev::Activation::kRelu);
//   model.add<xdev::Dense>(128, 10);
//   xdev::Adam optimizer(1e-3);
//   xdev::Tensor images = xdev::random_uniform({32, 28, 28}), labels = xdev::zeros({32}, xdev::DType::kInt32);
//   xdev::GradientTape tape;
//   xdev::Tensor loss = xdev::sparse_softmax_cross_entropy(labels, model(images, /*training=*/true));
//   std::vector<xdev::Variable> vars = model.trainable_variables();
//   optimizer.apply_gradients(tape.gradient(loss, vars), vars);
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <xdev/autodiff.hpp>
#include <xdev/device.hpp>
#include <xdev/dtype.hpp>
#include <xdev/export.hpp>
#include <xdev/tensor.hpp>

namespace xdev {

// --- initialisers (tf.keras.initializers) --------------------------------------
//
// fan_in and fan_out of a shape as Keras counts them: [in, out] for a dense
// kernel; [kh, kw, in, out] for a convolution's (in and out times kh·kw).
// Without a seed, the next value of the random counter (set_random_seed).
XDEV_API Tensor glorot_uniform(const Shape& shape, DType dtype = DType::kFloat32,
                               std::optional<uint64_t> seed = std::nullopt);
XDEV_API Tensor he_uniform(const Shape& shape, DType dtype = DType::kFloat32,
                           std::optional<uint64_t> seed = std::nullopt);

// --- losses (means over the batch) ------------------------------------------------

// mean((y_pred − y_true)²) over every element.
XDEV_API Tensor mean_squared_error(const Tensor& y_true, const Tensor& y_pred);
// mean over the batch of −Σ labels · log_softmax(logits): labels [batch,
// classes] (one-hot or probabilities), logits of the same shape.
XDEV_API Tensor softmax_cross_entropy(const Tensor& labels, const Tensor& logits);
// The same with class indices [batch] (int32 or int64) as labels.
XDEV_API Tensor sparse_softmax_cross_entropy(const Tensor& labels, const Tensor& logits);

// --- modules --------------------------------------------------------------------

// B25: a model whose parameters move to a device as a unit.
class XDEV_API Module {
 public:
  virtual ~Module() = default;
  // The output for `x`; `training` switches layers that act only while
  // training (Dropout).
  Tensor operator()(const Tensor& x, bool training = false) { return call(x, training); }
  virtual Tensor call(const Tensor& x, bool training) = 0;
  // Every parameter, in a fixed order.
  virtual std::vector<Variable> parameters() { return {}; }
  std::vector<Variable> trainable_variables();
  // Moves every parameter to `device` (no copy for those already there).
  void to(const std::string& device);
  void to(const Device& device) { to(device.name); }
};

enum class Activation { kLinear, kRelu, kTanh, kSigmoid, kGelu };
XDEV_API Tensor activate(Activation activation, const Tensor& x);

// y = activation(x · kernel + bias): kernel [in, out], bias [out].
class XDEV_API Dense : public Module {
 public:
  // Kernel Glorot-uniform, bias zeros (Keras' defaults).
  Dense(int64_t in, int64_t out, Activation activation = Activation::kLinear,
        DType dtype = DType::kFloat32, std::optional<uint64_t> seed = std::nullopt);
  // With the given initial values.
  Dense(const Tensor& kernel, const Tensor& bias, Activation activation = Activation::kLinear);
  Tensor call(const Tensor& x, bool training) override;
  std::vector<Variable> parameters() override { return {kernel_, bias_}; }
  const Variable& kernel() const { return kernel_; }
  const Variable& bias() const { return bias_; }

 private:
  Variable kernel_, bias_;
  Activation activation_;
};

// [batch, ...] -> [batch, rest]: a view (no copy) of contiguous input.
class XDEV_API Flatten : public Module {
 public:
  Tensor call(const Tensor& x, bool training) override;
};

// tf.keras.layers.Conv2D over NHWC images: kernel [kh, kw, in, filters]
// (Glorot-uniform), bias [filters] (zeros).
class XDEV_API Conv2D : public Module {
 public:
  Conv2D(int64_t in_channels, int64_t filters, std::vector<int64_t> kernel_size,
         std::vector<int64_t> strides = {1, 1}, std::string padding = "VALID",
         Activation activation = Activation::kLinear, DType dtype = DType::kFloat32,
         std::optional<uint64_t> seed = std::nullopt);
  Tensor call(const Tensor& x, bool training) override;
  std::vector<Variable> parameters() override { return {kernel_, bias_}; }

 private:
  Variable kernel_, bias_;
  std::vector<int64_t> strides_;
  std::string padding_;
  Activation activation_;
};

// tf.keras.layers.MaxPool2D over NHWC images (strides default to the window).
class XDEV_API MaxPool : public Module {
 public:
  explicit MaxPool(std::vector<int64_t> pool_size = {2, 2}, std::vector<int64_t> strides = {},
                   std::string padding = "VALID");
  Tensor call(const Tensor& x, bool training) override;

 private:
  std::vector<int64_t> pool_size_, strides_;
  std::string padding_;
};

// tf.keras.layers.Dropout: while training, each element kept with
// probability 1 − rate and scaled by 1 / (1 − rate); otherwise x as it is.
// With a seed, call n uses seed + n (reproducible runs).
class XDEV_API Dropout : public Module {
 public:
  explicit Dropout(double rate, std::optional<uint64_t> seed = std::nullopt);
  Tensor call(const Tensor& x, bool training) override;

 private:
  double rate_;
  std::optional<uint64_t> seed_;
  uint64_t calls_ = 0;
};

// tf.keras.layers.LayerNormalization over the last axis of size `dim`:
// gamma ones, beta zeros.
class XDEV_API LayerNorm : public Module {
 public:
  explicit LayerNorm(int64_t dim, double epsilon = 1e-3, DType dtype = DType::kFloat32);
  Tensor call(const Tensor& x, bool training) override;
  std::vector<Variable> parameters() override { return {gamma_, beta_}; }

 private:
  Variable gamma_, beta_;
  double epsilon_;
};

// tf.keras.layers.Embedding: indices (int32/int64, any shape) -> rows of a
// [vocabulary, dim] table (uniform in [−0.05, 0.05), Keras' default).
class XDEV_API Embedding : public Module {
 public:
  Embedding(int64_t vocabulary, int64_t dim, DType dtype = DType::kFloat32,
            std::optional<uint64_t> seed = std::nullopt);
  Tensor call(const Tensor& indices, bool training) override;
  std::vector<Variable> parameters() override { return {table_}; }

 private:
  Variable table_;
};

// Layers run one after another; their parameters in that order.
class XDEV_API Sequential : public Module {
 public:
  Sequential() = default;
  explicit Sequential(std::vector<std::shared_ptr<Module>> layers) : layers_(std::move(layers)) {}
  Sequential& add(std::shared_ptr<Module> layer);
  // Constructs a layer in place: model.add<xdev::Dense>(4, 8).
  template <typename L, typename... Args>
  L& add(Args&&... args) {
    auto layer = std::make_shared<L>(std::forward<Args>(args)...);
    L& ref = *layer;
    add(std::move(layer));
    return ref;
  }
  Tensor call(const Tensor& x, bool training) override;
  std::vector<Variable> parameters() override;
  const std::vector<std::shared_ptr<Module>>& layers() const { return layers_; }

 private:
  std::vector<std::shared_ptr<Module>> layers_;
};

}  // namespace xdev
