"""Neural-network ops (``tf.nn``)."""

from ._xdev import gelu, leaky_relu, log_softmax, relu, sigmoid, softmax, softplus, tanh

__all__ = ["gelu", "leaky_relu", "log_softmax", "relu", "sigmoid", "softmax", "softplus", "tanh"]
