"""Keras' losses (``tf.keras.losses``): each object is called as ``loss(y_true, y_pred)``
and gives the mean over the batch; ``per_example`` gives one value per row (what
``fit`` sums per replica). Names: "mse"/"mean_squared_error", "mae"/"mean_absolute_error",
"categorical_crossentropy", "sparse_categorical_crossentropy", "binary_crossentropy"."""

from .. import _xdev
from .. import nn as _nn
from .._convert import convert_to_tensor


def _pair(y_true, y_pred):
    y_pred = convert_to_tensor(y_pred)
    y_true = convert_to_tensor(y_true)
    return y_true, y_pred


def _last_axis_mean(t):
    return _xdev.reduce_mean(t, axis=-1) if t.ndim > 1 else t


class Loss:
    """A loss object: ``loss(y_true, y_pred)`` is the batch mean of ``per_example``."""

    name = "loss"

    def __call__(self, y_true, y_pred):
        return _xdev.reduce_mean(self.per_example(y_true, y_pred))

    def per_example(self, y_true, y_pred):
        raise NotImplementedError

    def get_config(self):
        return {"name": self.name}


class MeanSquaredError(Loss):
    name = "mean_squared_error"

    def per_example(self, y_true, y_pred):
        y_true, y_pred = _pair(y_true, y_pred)
        return _last_axis_mean(_xdev.square(y_pred - _xdev.cast(y_true, y_pred.dtype)))


class MeanAbsoluteError(Loss):
    name = "mean_absolute_error"

    def per_example(self, y_true, y_pred):
        y_true, y_pred = _pair(y_true, y_pred)
        return _last_axis_mean(_xdev.abs(y_pred - _xdev.cast(y_true, y_pred.dtype)))


class _CrossEntropy(Loss):
    def __init__(self, from_logits=False):
        self.from_logits = bool(from_logits)

    def _log_probs(self, y_pred):
        if self.from_logits:
            return _nn.log_softmax(y_pred, axis=-1)
        # Probabilities, as Keras takes them: renormalised and clipped away from 0.
        p = y_pred / _xdev.reduce_sum(y_pred, axis=-1, keepdims=True)
        return _xdev.log(_xdev.clip_by_value(p, 1e-7, 1.0 - 1e-7))


class CategoricalCrossentropy(_CrossEntropy):
    """One-hot (or soft) labels [batch, classes]."""

    name = "categorical_crossentropy"

    def per_example(self, y_true, y_pred):
        y_true, y_pred = _pair(y_true, y_pred)
        if tuple(y_true.shape) != tuple(y_pred.shape):
            raise ValueError(f"{self.name}: labels of shape {tuple(y_true.shape)} for predictions "
                             f"of shape {tuple(y_pred.shape)}; integer class labels take "
                             "sparse_categorical_crossentropy")
        return -_xdev.reduce_sum(_xdev.cast(y_true, y_pred.dtype) * self._log_probs(y_pred),
                                 axis=-1)


class SparseCategoricalCrossentropy(_CrossEntropy):
    """Integer class labels [batch] (or [batch, 1]); a label outside [0, classes) is an
    InvalidArgumentError, as in TensorFlow, never a loss."""

    name = "sparse_categorical_crossentropy"

    def per_example(self, y_true, y_pred):
        y_true, y_pred = _pair(y_true, y_pred)
        if y_true.ndim == y_pred.ndim and y_true.ndim > 1 and y_true.shape[-1] == 1:
            y_true = _xdev.squeeze(y_true, axis=[-1])
        classes = int(y_pred.shape[-1])
        labels = _xdev.cast(y_true, "int64")
        if labels.ndim and labels.shape[0]:
            low = int(_xdev.reduce_min(labels).numpy())
            high = int(_xdev.reduce_max(labels).numpy())
            bad = low if low < 0 else high if high >= classes else None
            if bad is not None:
                raise _xdev.InvalidArgumentError(
                    f"Received a label value of {bad} which is outside the valid range of "
                    f"[0, {classes}).")
        one_hot = _xdev.one_hot(labels, classes, dtype=y_pred.dtype)
        return -_xdev.reduce_sum(one_hot * self._log_probs(y_pred), axis=-1)


class BinaryCrossentropy(Loss):
    name = "binary_crossentropy"

    def __init__(self, from_logits=False):
        self.from_logits = bool(from_logits)

    def per_example(self, y_true, y_pred):
        y_true, y_pred = _pair(y_true, y_pred)
        y = _xdev.cast(y_true, y_pred.dtype)
        if self.from_logits:
            # max(z, 0) - z·y + log(1 + e^-|z|), the stable form
            z = y_pred
            per = _xdev.maximum(z, 0.0) - z * y + _xdev.log1p(_xdev.exp(-_xdev.abs(z)))
        else:
            p = _xdev.clip_by_value(y_pred, 1e-7, 1.0 - 1e-7)
            per = -(y * _xdev.log(p) + (1.0 - y) * _xdev.log(1.0 - p))
        return _last_axis_mean(per)


class _FunctionLoss(Loss):
    def __init__(self, fn):
        self.fn = fn
        self.name = getattr(fn, "__name__", "loss")

    def per_example(self, y_true, y_pred):
        return convert_to_tensor(self.fn(y_true, y_pred))


_NAMES = {
    "mse": MeanSquaredError, "mean_squared_error": MeanSquaredError,
    "mae": MeanAbsoluteError, "mean_absolute_error": MeanAbsoluteError,
    "categorical_crossentropy": CategoricalCrossentropy,
    "sparse_categorical_crossentropy": SparseCategoricalCrossentropy,
    "binary_crossentropy": BinaryCrossentropy,
}


def get(identifier):
    """A loss object from an object, a name, or a function of (y_true, y_pred) giving one
    value per example."""
    if isinstance(identifier, Loss):
        return identifier
    if isinstance(identifier, str):
        if identifier not in _NAMES:
            raise ValueError(f"Unknown loss {identifier!r}; xdev.keras has "
                             f"{', '.join(sorted(_NAMES))}")
        return _NAMES[identifier]()
    if callable(identifier):
        return _FunctionLoss(identifier)
    raise ValueError(f"compile: loss must be a loss object, a name or a function, not "
                     f"{identifier!r}")


def mean_squared_error(y_true, y_pred):
    """Per example: the mean over the last axis of (y_pred - y_true)² (Keras' function)."""
    return MeanSquaredError().per_example(y_true, y_pred)


def sparse_categorical_crossentropy(y_true, y_pred, from_logits=False):
    return SparseCategoricalCrossentropy(from_logits).per_example(y_true, y_pred)


def categorical_crossentropy(y_true, y_pred, from_logits=False):
    return CategoricalCrossentropy(from_logits).per_example(y_true, y_pred)


mse = MSE = mean_squared_error

__all__ = ["BinaryCrossentropy", "CategoricalCrossentropy", "Loss", "MeanAbsoluteError",
           "MeanSquaredError", "SparseCategoricalCrossentropy", "categorical_crossentropy",
           "get", "mean_squared_error", "mse", "sparse_categorical_crossentropy"]
