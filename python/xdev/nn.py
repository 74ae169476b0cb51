"""Neural-network ops (``tf.nn``)."""

from . import _convert, _xdev
from .dtypes import float32
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


def leaky_relu(features, alpha=0.2, name=None):
    """x > 0 ? x : alpha * x (LeakyRelu). Integer features are cast to float32 first, as
    TensorFlow's ``tf.nn.leaky_relu`` does."""
    del name
    x = _convert.convert_to_tensor(features)
    if x.dtype.is_integer:
        x = _xdev.cast(x, float32)
    return _xdev.leaky_relu(x, alpha)


def max_pool2d(input, ksize, strides, padding, data_format="NHWC", name=None):  # noqa: A002
    """``tf.nn.max_pool2d``: max_pool over the two spatial axes of a 4-d input."""
    del name
    return max_pool(input, ksize, strides, padding, data_format)


def avg_pool2d(input, ksize, strides, padding, data_format="NHWC", name=None):  # noqa: A002
    """``tf.nn.avg_pool2d``: avg_pool over the two spatial axes of a 4-d input."""
    del name
    return avg_pool(input, ksize, strides, padding, data_format)


def softmax_cross_entropy_with_logits(labels, logits):
    """tf.nn.softmax_cross_entropy_with_logits of [batch, classes] labels and logits: the loss
    per row, -sum(labels * log_softmax(logits)) (SoftmaxCrossEntropyWithLogits)."""
    return softmax_cross_entropy_with_logits_raw(logits, labels)[0]


__all__ = ["avg_pool", "avg_pool2d", "avg_pool_grad", "bias_add", "conv2d",
           "conv2d_backprop_filter", "conv2d_backprop_input", "dropout", "gelu", "layer_norm", "leaky_relu", "log_softmax",
           "max_pool", "max_pool2d", "max_pool_grad", "relu", "sigmoid", "softmax",
           "softmax_cross_entropy_with_logits", "softmax_cross_entropy_with_logits_raw",
           "softplus", "tanh"]
