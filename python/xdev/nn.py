"""Neural-network ops (``tf.nn``)."""

from ._xdev import (
    avg_pool,
    avg_pool_grad,
    bias_add,
    conv2d,
    conv2d_backprop_filter,
    conv2d_backprop_input,
    dropout,
    gelu,
    layer_norm,
    leaky_relu,
    log_softmax,
    max_pool,
    max_pool_grad,
    relu,
    sigmoid,
    softmax,
    softmax_cross_entropy_with_logits_raw,
    softplus,
    tanh,
)


def softmax_cross_entropy_with_logits(labels, logits):
    """tf.nn.softmax_cross_entropy_with_logits of [batch, classes] labels and logits: the loss
    per row, -sum(labels * log_softmax(logits)) (SoftmaxCrossEntropyWithLogits)."""
    return softmax_cross_entropy_with_logits_raw(logits, labels)[0]


__all__ = ["avg_pool", "avg_pool_grad", "bias_add", "conv2d", "conv2d_backprop_filter",
           "conv2d_backprop_input", "dropout", "gelu", "layer_norm", "leaky_relu", "log_softmax",
           "max_pool", "max_pool_grad", "relu", "sigmoid", "softmax",
           "softmax_cross_entropy_with_logits", "softmax_cross_entropy_with_logits_raw",
           "softplus", "tanh"]
