"""Neural-network ops (``tf.nn``)."""

from ._xdev import relu

__all__ = ["relu"]
