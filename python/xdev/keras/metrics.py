"""The metrics ``compile(metrics=[...])`` takes, by name: "accuracy" (chosen from the
shapes and the loss as Keras chooses it), "sparse_categorical_accuracy",
"categorical_accuracy", "binary_accuracy", "mae", "mse". ``fit`` and ``evaluate`` report
each averaged over the examples."""

from .. import _xdev
from .._convert import convert_to_tensor

_NAMES = ("accuracy", "acc", "sparse_categorical_accuracy", "categorical_accuracy",
          "binary_accuracy", "mae", "mean_absolute_error", "mse", "mean_squared_error")


def check(name):
    if name not in _NAMES:
        raise ValueError(f"Unknown metric {name!r}; xdev.keras has {', '.join(_NAMES)}")


def _accuracy_kind(name, y_true, y_pred, loss):
    if name not in ("accuracy", "acc"):
        return name
    loss_name = getattr(loss, "name", "")
    if loss_name == "sparse_categorical_crossentropy":
        return "sparse_categorical_accuracy"
    if loss_name == "categorical_crossentropy":
        return "categorical_accuracy"
    if y_pred.ndim and int(y_pred.shape[-1]) == 1:
        return "binary_accuracy"
    if y_true.ndim < y_pred.ndim or (y_true.ndim == y_pred.ndim and int(y_true.shape[-1]) == 1):
        return "sparse_categorical_accuracy"
    return "categorical_accuracy"


def batch_sum(name, y_true, y_pred, loss):
    """The metric summed over the examples of one batch (a scalar tensor)."""
    y_true, y_pred = convert_to_tensor(y_true), convert_to_tensor(y_pred)
    kind = _accuracy_kind(name, y_true, y_pred, loss)
    if kind == "sparse_categorical_accuracy":
        labels = _xdev.cast(y_true, "int64")
        if labels.ndim == y_pred.ndim:
            labels = _xdev.squeeze(labels, axis=[-1])
        hits = _xdev.equal(_xdev.argmax(y_pred, axis=-1), labels)
    elif kind == "categorical_accuracy":
        hits = _xdev.equal(_xdev.argmax(y_pred, axis=-1), _xdev.argmax(y_true, axis=-1))
    elif kind == "binary_accuracy":
        guess = _xdev.cast(_xdev.greater(y_pred, _xdev.cast(0.5, y_pred.dtype)), y_pred.dtype)
        hits = _xdev.reduce_mean(
            _xdev.cast(_xdev.equal(guess, _xdev.cast(y_true, y_pred.dtype)), "float32"), axis=-1)
        return _xdev.reduce_sum(hits)
    else:
        diff = y_pred - _xdev.cast(y_true, y_pred.dtype)
        per = _xdev.abs(diff) if kind in ("mae", "mean_absolute_error") else _xdev.square(diff)
        per = _xdev.reduce_mean(per, axis=-1) if per.ndim > 1 else per
        return _xdev.reduce_sum(_xdev.cast(per, "float32"))
    return _xdev.reduce_sum(_xdev.cast(hits, "float32"))
