"""``tf.keras.models``: Model, Sequential."""

from ._engine import Model, Sequential

__all__ = ["Model", "Sequential"]
