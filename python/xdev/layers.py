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

from . import _xdev
from ._convert import convert_to_tensor
from ._variables import Variable
from .dtypes import as_dtype


class Layer:
    """A C++ module built at the first call; ``trainable_variables``, ``to(device)``."""

    def __init__(self):
        self._cpp = None
        self._variables = []

    def _build(self, x):
        raise NotImplementedError  # each layer makes its C++ module

    def __call__(self, inputs, training=False):
        x = convert_to_tensor(inputs)
        if self._cpp is None:
            self._cpp = self._build(x)
            self._variables = [Variable._wrap(v) for v in self._cpp.parameters()]
        return self._cpp(x, bool(training))

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


class Dense(Layer):
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
        self.activation = activation
        # A function (xdev.nn.relu, a lambda) runs after the C++ layer; names run in it.
        if not (activation is None or isinstance(activation, str) or callable(activation)):
            raise TypeError(f"Dense: activation must be None, a name or a function, not "
                            f"{type(activation).__name__}")
        self._named_activation = activation if isinstance(activation, str) else None
        self._dtype = None if dtype is None else as_dtype(dtype)
        self._seed = seed
        if input_dim is not None:
            self._cpp = self._make(int(input_dim), self._dtype or as_dtype("float32"))
            self._variables = [Variable._wrap(v) for v in self._cpp.parameters()]

    def _make(self, input_dim, dtype):
        return _xdev._Dense(input_dim, self.units, self._named_activation, dtype, self._seed)

    def __call__(self, inputs, training=False):
        y = super().__call__(inputs, training)
        return y if self.activation is None or self._named_activation else self.activation(y)

    def _build(self, x):
        if x.ndim < 1:
            raise _xdev.InvalidArgumentError(
                f"Dense: the input must have a feature axis, not shape {tuple(x.shape)}")
        return self._make(int(x.shape[-1]), self._dtype or x.dtype)

    @property
    def kernel(self):
        return self._variables[0] if self._variables else None

    @property
    def bias(self):
        return self._variables[1] if self._variables else None


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


__all__ = ["Dense", "Layer", "Sequential"]
