"""Neural-network ops (``tf.nn``)."""

from ._xdev import (
    bias_add,
    dropout,
    gelu,
    layer_norm,
    leaky_relu,
    log_softmax,
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


__all__ = ["bias_add", "dropout", "gelu", "layer_norm", "leaky_relu", "log_softmax", "relu",
           "sigmoid", "softmax", "softmax_cross_entropy_with_logits",
           "softmax_cross_entropy_with_logits_raw", "softplus", "tanh"]
