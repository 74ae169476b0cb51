"""Keras' optimizers (``tf.keras.optimizers``): xdev's SGD (momentum, Nesterov), Adam and
AdamW, and the names ``compile`` takes ("sgd", "adam", "adamw")."""

from ..optimizers import SGD, Adam, AdamW, Optimizer

_NAMES = {"sgd": SGD, "adam": Adam, "adamw": AdamW}


def get(identifier):
    if isinstance(identifier, Optimizer):
        return identifier
    if isinstance(identifier, str) and identifier.lower() in _NAMES:
        return _NAMES[identifier.lower()]()
    raise ValueError(f"compile: optimizer must be an xdev.keras.optimizers object or one of "
                     f"{', '.join(_NAMES)}, not {identifier!r}")


__all__ = ["SGD", "Adam", "AdamW", "Optimizer", "get"]
