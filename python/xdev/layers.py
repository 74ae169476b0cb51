"""Layers (``tf.keras.layers``): the C++ ones (<xdev/layers.hpp>); their parameters are
:class:`xdev.Variable` objects, made on the device of the innermost ``xdev.device``
scope when the layer is built (at its first call, as in Keras), watched by every
GradientTape recording when the layer runs.

    model = xdev.layers.Sequential([
        xdev.layers.Dense(16, activation="relu"),
        xdev.layers.Dense(2),
    ])
    logits = model(x)                       # builds the layers: kernels [2, 16], [16, 2]
    model.trainable_variables               # [kernel, bias, kernel, bias]
"""

import threading

from . import _xdev
from ._convert import convert_to_tensor
from ._variables import Variable
from .dtypes import as_dtype


# Activation names run after the C++ layer, as functions of its output.
# Every activation name, as a function of a tensor. The C++ layers run the
# names of _CPP_ACTIVATIONS themselves (xdev::Activation); the others run
# after the C++ layer, as functions of its output.
_ACTIVATIONS = {
    "linear": lambda y: y,
    "relu": _xdev.relu,
    "tanh": _xdev.tanh,
    "sigmoid": _xdev.sigmoid,
    "gelu": _xdev.gelu,
    "softmax": lambda y: _xdev.softmax(y, axis=-1),
    "log_softmax": lambda y: _xdev.log_softmax(y, axis=-1),
    "softplus": _xdev.softplus,
    "leaky_relu": _xdev.leaky_relu,
}
_CPP_ACTIVATIONS = {"linear", "relu", "tanh", "sigmoid", "gelu"}

# Held while a layer is built (a rare, short event): two threads calling a new layer
# at once build it once.
_BUILD_LOCK = threading.RLock()


class Layer:
    """A C++ module built at the first call; ``trainable_variables``, ``to(device)``."""

    def __init__(self):
        self._cpp = None
        self._variables = []

    def _build(self, x):
        raise NotImplementedError  # each layer makes its C++ module

    def _build_once(self, x):
        """Builds the layer at its first call, once even when the replicas of
        ``strategy.run`` make that call together: the first builds, the others wait and
        use its parameters. Inside ``run`` the parameters go on replica 0's device,
        whichever replica gets here first, so where they live does not depend on timing."""
        with _BUILD_LOCK:
            if self._cpp is not None:
                return
            from .distribute import get_replica_context
            replica = get_replica_context()
            if replica is None:
                cpp = self._build(x)
            else:
                with _xdev.DeviceScope(replica.strategy._local_devices[0]):
                    cpp = self._build(x)
            self._variables = [Variable._wrap(v) for v in cpp.parameters()]
            self._cpp = cpp

    def __call__(self, inputs, training=False):
        if getattr(inputs, "_is_keras_tensor", False):  # xdev.keras's functional API
            return inputs._apply(self)
        x = convert_to_tensor(inputs)
        if self._cpp is None:
            self._build_once(x)
        y = self._cpp(x, bool(training))
        # A function (xdev.nn.relu, a lambda) runs after the C++ layer; names run in it.
        activation = getattr(self, "activation", None)
        if activation is None or getattr(self, "_named_activation", None):
            return y
        return activation(y)

    def _set_activation(self, layer, activation):
        if not (activation is None or isinstance(activation, str) or callable(activation)):
            raise TypeError(f"{layer}: activation must be None, a name or a function, not "
                            f"{type(activation).__name__}")
        if isinstance(activation, str) and activation not in _CPP_ACTIVATIONS:
            activation = _ACTIVATIONS.get(activation, activation)  # unknown: the C++ refusal
        self.activation = activation
        self._named_activation = activation if isinstance(activation, str) else None

    @property
    def built(self):
        return self._cpp is not None

    @property
    def variables(self):
        """Every parameter, in a fixed order (empty until built)."""
        return list(self._variables)

    weights = variables

    @property
    def trainable_variables(self):
        return [v for v in self._variables if v.trainable]

    def to(self, device):
        """Moves every parameter to ``device`` (a name or a LogicalDevice)."""
        if self._cpp is not None:
            self._cpp.to(getattr(device, "name", device))
        return self


class _KernelAndBias(Layer):
    """A layer whose parameters are a kernel and a bias (None until built)."""

    @property
    def kernel(self):
        return self._variables[0] if self._variables else None

    @property
    def bias(self):
        return self._variables[1] if self._variables else None


class Dense(_KernelAndBias):
    """y = activation(x @ kernel + bias): kernel [input features, units] Glorot-uniform,
    bias zeros (Keras' defaults). activation: None/"linear", "relu", "tanh", "sigmoid",
    "gelu" (run by the C++ layer), or a function of one tensor. dtype None: the first
    input's. seed: the kernel's initialiser seed (None: the next value of xdev.random's
    counter)."""

    def __init__(self, units, activation=None, dtype=None, seed=None, input_dim=None):
        super().__init__()
        if int(units) <= 0:
            raise ValueError(f"Dense: units must be positive, not {units!r}")
        self.units = int(units)
        self._set_activation("Dense", activation)
        self._dtype = None if dtype is None else as_dtype(dtype)
        self._seed = seed
        if input_dim is not None:
            self._cpp = self._make(int(input_dim), self._dtype or as_dtype("float32"))
            self._variables = [Variable._wrap(v) for v in self._cpp.parameters()]

    def _make(self, input_dim, dtype):
        return _xdev._Dense(input_dim, self.units, self._named_activation, dtype, self._seed)

    def _build(self, x):
        if x.ndim < 1:
            raise _xdev.InvalidArgumentError(
                f"Dense: the input must have a feature axis, not shape {tuple(x.shape)}")
        return self._make(int(x.shape[-1]), self._dtype or x.dtype)


def _pair(name, what, value):
    """An int or a pair of ints as [h, w]; a ValueError naming the layer otherwise."""
    items = [value, value] if isinstance(value, int) else list(value)
    if len(items) != 2 or not all(isinstance(v, int) and v > 0 for v in items):
        raise ValueError(f"{name}: {what} must be a positive int or two of them, not {value!r}")
    return items


def _padding(name, padding):
    if not isinstance(padding, str) or padding.upper() not in ("VALID", "SAME"):
        raise ValueError(f"{name}: padding must be 'valid' or 'same', not {padding!r}")
    return padding.upper()


def _image_input(name, x):
    if x.ndim != 4:
        raise _xdev.InvalidArgumentError(
            f"{name}: the input must be NHWC images [batch, height, width, channels], "
            f"not shape {tuple(x.shape)}")


class Conv2D(_KernelAndBias):
    """``tf.keras.layers.Conv2D`` over NHWC images: kernel [kh, kw, in channels, filters]
    Glorot-uniform, bias [filters] zeros, built at the first call from the input's
    channels. activation as for :class:`Dense`."""

    def __init__(self, filters, kernel_size, strides=(1, 1), padding="valid",
                 activation=None, dtype=None, seed=None):
        super().__init__()
        if not isinstance(filters, int) or filters <= 0:
            raise ValueError(f"Conv2D: filters must be a positive int, not {filters!r}")
        self.filters = filters
        self.kernel_size = _pair("Conv2D", "kernel_size", kernel_size)
        self.strides = _pair("Conv2D", "strides", strides)
        self.padding = _padding("Conv2D", padding)
        self._set_activation("Conv2D", activation)
        self._dtype = None if dtype is None else as_dtype(dtype)
        self._seed = seed

    def _build(self, x):
        _image_input("Conv2D", x)
        return _xdev._Conv2D(int(x.shape[3]), self.filters, self.kernel_size, self.strides,
                             self.padding, self._named_activation, self._dtype or x.dtype,
                             self._seed)


class MaxPool2D(Layer):
    """``tf.keras.layers.MaxPool2D`` over NHWC images (strides default to the window)."""

    def __init__(self, pool_size=(2, 2), strides=None, padding="valid"):
        super().__init__()
        self.pool_size = _pair("MaxPool2D", "pool_size", pool_size)
        self.strides = self.pool_size if strides is None else _pair("MaxPool2D", "strides",
                                                                     strides)
        self.padding = _padding("MaxPool2D", padding)

    def _build(self, x):
        _image_input("MaxPool2D", x)
        return _xdev._MaxPool(self.pool_size, self.strides, self.padding)


MaxPooling2D = MaxPool2D


class Flatten(Layer):
    """[batch, ...] -> [batch, rest] (a view of the input, no copy)."""

    def _build(self, x):
        if x.ndim < 1:
            raise _xdev.InvalidArgumentError("Flatten: the input must have a batch axis, "
                                             "not a scalar")
        return _xdev._Flatten()


class Dropout(Layer):
    """``tf.keras.layers.Dropout``: with ``training=True`` each element is kept with
    probability 1 - rate and scaled by 1 / (1 - rate); otherwise the input as it is.
    A seed makes the masks reproducible (call n uses seed + n)."""

    def __init__(self, rate, seed=None):
        super().__init__()
        if not isinstance(rate, (int, float)) or not 0 <= rate < 1:
            raise ValueError(f"Dropout: rate must be in [0, 1), not {rate!r}")
        self.rate = float(rate)
        self._seed = seed

    def _build(self, x):
        return _xdev._Dropout(self.rate, self._seed)


class LayerNormalization(Layer):
    """``tf.keras.layers.LayerNormalization`` over the last axis: gamma ones, beta zeros,
    built at the first call from the input's last axis."""

    def __init__(self, epsilon=1e-3, dtype=None):
        super().__init__()
        if not epsilon > 0:
            raise ValueError(f"LayerNormalization: epsilon must be positive, not {epsilon!r}")
        self.epsilon = float(epsilon)
        self._dtype = None if dtype is None else as_dtype(dtype)

    def _build(self, x):
        if x.ndim < 1:
            raise _xdev.InvalidArgumentError(
                "LayerNormalization: the input must have an axis to normalise, not a scalar")
        return _xdev._LayerNorm(int(x.shape[-1]), self.epsilon, self._dtype or x.dtype)


class Embedding(Layer):
    """``tf.keras.layers.Embedding``: integer indices (any shape) -> rows of an
    [input_dim, output_dim] table, uniform in [-0.05, 0.05). Made at once (its shape does
    not depend on the input)."""

    def __init__(self, input_dim, output_dim, dtype=None, seed=None):
        super().__init__()
        for what, v in (("input_dim", input_dim), ("output_dim", output_dim)):
            if not isinstance(v, int) or v <= 0:
                raise ValueError(f"Embedding: {what} must be a positive int, not {v!r}")
        self.input_dim, self.output_dim = input_dim, output_dim
        self._cpp = _xdev._Embedding(input_dim, output_dim,
                                     as_dtype("float32") if dtype is None else as_dtype(dtype),
                                     seed)
        self._variables = [Variable._wrap(v) for v in self._cpp.parameters()]

    @property
    def embeddings(self):
        return self._variables[0]


class Sequential:
    """Layers run one after another; their variables in that order. A layer may also be
    a function of one tensor (``xdev.nn.relu``)."""

    def __init__(self, layers=None):
        self.layers = []
        for layer in layers or []:
            self.add(layer)

    def add(self, layer):
        if not callable(layer):
            raise TypeError(f"Sequential.add: {type(layer).__name__} is not a layer")
        self.layers.append(layer)
        return self

    def __call__(self, inputs, training=False):
        x = inputs
        for layer in self.layers:
            takes_training = isinstance(layer, (Layer, Sequential))
            x = layer(x, training=training) if takes_training else layer(x)
        return x

    @property
    def variables(self):
        return [v for layer in self.layers for v in getattr(layer, "variables", [])]

    weights = variables

    @property
    def trainable_variables(self):
        return [v for layer in self.layers for v in getattr(layer, "trainable_variables", [])]

    def to(self, device):
        for layer in self.layers:
            if hasattr(layer, "to"):
                layer.to(device)
        return self


__all__ = ["Conv2D", "Dense", "Dropout", "Embedding", "Flatten", "Layer", "LayerNormalization",
           "MaxPool2D", "MaxPooling2D", "Sequential"]
