"""Keras' layers (``tf.keras.layers``): xdev's (Dense, Conv2D, MaxPooling2D, Flatten,
Dropout, LayerNormalization, Embedding), ``Input``, and the layers without weights
(Activation, ReLU, Softmax, AveragePooling2D)."""

from .. import _xdev
from .. import layers as _layers
from .._convert import convert_to_tensor
from ..layers import (Conv2D, Dense, Dropout, Embedding, Flatten, Layer, LayerNormalization,
                      MaxPool2D, MaxPooling2D)
from ._engine import Input, InputLayer


class _Stateless:
    """A layer without weights: a function of its input."""

    variables = weights = trainable_variables = property(lambda self: [])

    def __call__(self, inputs, training=False):
        if getattr(inputs, "_is_keras_tensor", False):
            return inputs._apply(self)
        return self.call(convert_to_tensor(inputs))

    def to(self, device):
        return self


class Activation(_Stateless):
    """``Activation("relu")`` (any name Dense takes, or a function)."""

    def __init__(self, activation):
        fn = activation
        if isinstance(activation, str):
            if activation not in _layers._ACTIVATIONS:
                raise ValueError(f"Activation: unknown activation {activation!r}; xdev has "
                                 f"{', '.join(_layers._ACTIVATIONS)}")
            fn = _layers._ACTIVATIONS[activation]
        if not callable(fn):
            raise TypeError(f"Activation: {activation!r} is not a name or a function")
        self.activation = fn

    def call(self, x):
        return self.activation(x)


class ReLU(_Stateless):
    def call(self, x):
        return _xdev.relu(x)


class Softmax(_Stateless):
    def __init__(self, axis=-1):
        self.axis = axis

    def call(self, x):
        return _xdev.softmax(x, axis=self.axis)


class AveragePooling2D(_Stateless):
    """The mean of each pool_size window of NHWC images (strides default to the window)."""

    def __init__(self, pool_size=(2, 2), strides=None, padding="valid"):
        self.pool_size = _layers._pair("AveragePooling2D", "pool_size", pool_size)
        self.strides = self.pool_size if strides is None else _layers._pair(
            "AveragePooling2D", "strides", strides)
        self.padding = _layers._padding("AveragePooling2D", padding)

    def call(self, x):
        _layers._image_input("AveragePooling2D", x)
        return _xdev.avg_pool(x, list(self.pool_size), list(self.strides), self.padding)


AvgPool2D = AveragePooling2D

__all__ = ["Activation", "AveragePooling2D", "AvgPool2D", "Conv2D", "Dense", "Dropout",
           "Embedding", "Flatten", "Input", "InputLayer", "Layer", "LayerNormalization",
           "MaxPool2D", "MaxPooling2D", "ReLU", "Softmax"]
