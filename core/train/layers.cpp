// The layers, initialisers and losses of <xdev/layers.hpp>, made of SDK ops
// (so a tape differentiates them and they run on any device).
#include <xdev/layers.hpp>

#include <xdev/ops.hpp>

#include <cmath>

namespace xdev {
namespace {

[[noreturn]] void invalid(const std::string& what, const std::string& why) {
  throw Error(ErrorCode::kInvalidArgument, what + ": " + why);
}

// Keras' fans: [in, out], or [kh, kw, in, out] with the receptive field.
std::pair<double, double> fans(const Shape& shape, const char* who) {
  if (shape.rank() < 2) invalid(who, "a shape of rank >= 2 is needed for its fans");
  double receptive = 1;
  for (int k = 0; k + 2 < shape.rank(); ++k) receptive *= static_cast<double>(shape[static_cast<size_t>(k)]);
  const double in = static_cast<double>(shape[static_cast<size_t>(shape.rank() - 2)]) * receptive;
  const double out = static_cast<double>(shape[static_cast<size_t>(shape.rank() - 1)]) * receptive;
  return {in, out};
}

}  // namespace

Tensor glorot_uniform(const Shape& shape, DType dtype, std::optional<uint64_t> seed) {
  const auto [in, out] = fans(shape, "glorot_uniform");
  const double limit = std::sqrt(6.0 / std::max(1.0, in + out));
  return random_uniform(shape, -limit, limit, dtype, seed);
}

Tensor he_uniform(const Shape& shape, DType dtype, std::optional<uint64_t> seed) {
  const double in = fans(shape, "he_uniform").first;
  const double limit = std::sqrt(6.0 / std::max(1.0, in));
  return random_uniform(shape, -limit, limit, dtype, seed);
}

Tensor mean_squared_error(const Tensor& y_true, const Tensor& y_pred) {
  return mean(squared_difference(y_pred, y_true));
}

Tensor softmax_cross_entropy(const Tensor& labels, const Tensor& logits) {
  return mean(softmax_cross_entropy_with_logits(logits, labels).loss);
}

Tensor sparse_softmax_cross_entropy(const Tensor& labels, const Tensor& logits) {
  if (logits.rank() != 2) invalid("sparse_softmax_cross_entropy", "logits must be [batch, classes]");
  // A label outside [0, classes) would be a row of zeros in one_hot and a
  // loss of the other classes' logits: refused, as TensorFlow and PyTorch do.
  const int64_t classes = logits.shape()[1];
  if (labels.defined() && labels.num_elements() > 0 && labels.dtype() != DType::kBool &&
      !is_floating(labels.dtype())) {
    const Tensor wide = cast(labels, DType::kInt64);
    const int64_t low = min(wide).to_vector<int64_t>().at(0);
    const int64_t high = max(wide).to_vector<int64_t>().at(0);
    if (low < 0 || high >= classes) {
      invalid("sparse_softmax_cross_entropy",
              "Received a label value of " + std::to_string(low < 0 ? low : high) +
                  " which is outside the valid range of [0, " + std::to_string(classes) + ")");
    }
  }
  const Tensor hot = one_hot(labels, classes, 1.0, 0.0, -1, logits.dtype());
  return softmax_cross_entropy(hot, logits);
}

// --- Module -------------------------------------------------------------------

std::vector<Variable> Module::trainable_variables() {
  std::vector<Variable> out;
  for (const Variable& v : parameters()) {
    if (v.trainable()) out.push_back(v);
  }
  return out;
}

void Module::to(const std::string& device) {
  for (Variable& v : parameters()) v.move_to(device);
}

Tensor activate(Activation activation, const Tensor& x) {
  switch (activation) {
    case Activation::kLinear: return x;
    case Activation::kRelu: return relu(x);
    case Activation::kTanh: return tanh(x);
    case Activation::kSigmoid: return sigmoid(x);
    case Activation::kGelu: return gelu(x);
  }
  return x;
}

Dense::Dense(int64_t in, int64_t out, Activation activation, DType dtype,
             std::optional<uint64_t> seed)
    : kernel_(glorot_uniform({in, out}, dtype, seed), true, "kernel"),
      bias_(zeros({out}, dtype), true, "bias"),
      activation_(activation) {}

Dense::Dense(const Tensor& kernel, const Tensor& bias, Activation activation)
    : kernel_(kernel, true, "kernel"), bias_(bias, true, "bias"), activation_(activation) {}

Tensor Dense::call(const Tensor& x, bool) {
  return activate(activation_, add(matmul(x, kernel_), bias_));
}

Tensor Flatten::call(const Tensor& x, bool) {
  if (x.rank() < 1) invalid("Flatten", "the input is a scalar; it needs a batch axis");
  return reshape(x, {x.shape()[0], -1});
}

Conv2D::Conv2D(int64_t in_channels, int64_t filters, std::vector<int64_t> kernel_size,
               std::vector<int64_t> strides, std::string padding, Activation activation,
               DType dtype, std::optional<uint64_t> seed)
    : strides_(std::move(strides)), padding_(std::move(padding)), activation_(activation) {
  if (kernel_size.size() != 2) invalid("Conv2D", "kernel_size is (height, width)");
  kernel_ = Variable(glorot_uniform({kernel_size[0], kernel_size[1], in_channels, filters}, dtype, seed),
                     true, "kernel");
  bias_ = Variable(zeros({filters}, dtype), true, "bias");
}

Tensor Conv2D::call(const Tensor& x, bool) {
  return activate(activation_, bias_add(conv2d(x, kernel_, strides_, padding_), bias_));
}

MaxPool::MaxPool(std::vector<int64_t> pool_size, std::vector<int64_t> strides, std::string padding)
    : pool_size_(std::move(pool_size)), strides_(std::move(strides)), padding_(std::move(padding)) {
  if (strides_.empty()) strides_ = pool_size_;
}

Tensor MaxPool::call(const Tensor& x, bool) { return max_pool(x, pool_size_, strides_, padding_); }

Dropout::Dropout(double rate, std::optional<uint64_t> seed) : rate_(rate), seed_(seed) {
  if (!(rate >= 0.0 && rate < 1.0)) invalid("Dropout", "rate must be in [0, 1)");
}

Tensor Dropout::call(const Tensor& x, bool training) {
  if (!training || rate_ == 0.0) return x;
  std::optional<uint64_t> seed;
  if (seed_) seed = *seed_ + calls_++;
  return dropout(x, rate_, seed);
}

LayerNorm::LayerNorm(int64_t dim, double epsilon, DType dtype)
    : gamma_(ones({dim}, dtype), true, "gamma"), beta_(zeros({dim}, dtype), true, "beta"),
      epsilon_(epsilon) {}

Tensor LayerNorm::call(const Tensor& x, bool) {
  return layer_norm(x, gamma_, beta_, -1, epsilon_);
}

Embedding::Embedding(int64_t vocabulary, int64_t dim, DType dtype, std::optional<uint64_t> seed)
    : table_(random_uniform({vocabulary, dim}, -0.05, 0.05, dtype, seed), true, "embeddings") {}

Tensor Embedding::call(const Tensor& indices, bool) { return gather(table_, indices, 0); }

Sequential& Sequential::add(std::shared_ptr<Module> layer) {
  if (layer == nullptr) invalid("Sequential.add", "the layer is null");
  layers_.push_back(std::move(layer));
  return *this;
}

Tensor Sequential::call(const Tensor& x, bool training) {
  Tensor y = x;
  for (const auto& layer : layers_) y = layer->call(y, training);
  return y;
}

std::vector<Variable> Sequential::parameters() {
  std::vector<Variable> out;
  for (const auto& layer : layers_) {
    for (Variable& v : layer->parameters()) out.push_back(std::move(v));
  }
  return out;
}

}  // namespace xdev
