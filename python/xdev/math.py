"""Math ops (``tf.math``). ``pow`` and the comparisons run on the host for now
(see :mod:`xdev._fallback`)."""

import numpy as _np

from . import _fallback
from ._xdev import (
    add,
    add_n,
    divide,
    multiply,
    negative,
    reduce_mean,
    reduce_sum,
    subtract,
    truncatediv,
)

truediv = divide


def pow(x, y):  # noqa: A001 -- TensorFlow's name
    """x ** y elementwise (host fallback until the op table has Pow)."""
    return _fallback.pow(x, y)


def less(x, y):
    return _fallback.binary(_np.less, "Less", x, y)


def less_equal(x, y):
    return _fallback.binary(_np.less_equal, "LessEqual", x, y)


def greater(x, y):
    return _fallback.binary(_np.greater, "Greater", x, y)


def greater_equal(x, y):
    return _fallback.binary(_np.greater_equal, "GreaterEqual", x, y)


def equal(x, y):
    return _fallback.binary(_np.equal, "Equal", x, y)


def not_equal(x, y):
    return _fallback.binary(_np.not_equal, "NotEqual", x, y)


__all__ = [
    "add", "subtract", "multiply", "divide", "truediv", "truncatediv", "negative", "add_n",
    "reduce_sum", "reduce_mean", "pow", "less", "less_equal", "greater", "greater_equal",
    "equal", "not_equal",
]
