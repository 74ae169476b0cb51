"""Random tensors (``tf.random``)."""

from . import _xdev
from .dtypes import as_dtype, float32


def uniform(shape, minval=0, maxval=None, dtype=float32, seed=None, name=None):
    """Values uniform in ``[minval, maxval)`` (``maxval`` None: 1), float32 or float64.

    The same ``seed`` gives the same values on every device (docs/ops.md defines the
    generator bit for bit); without one, a process-wide counter (:func:`set_seed`) is used.
    """
    del name
    return _xdev._random_uniform(
        list(shape), float(minval), 1.0 if maxval is None else float(maxval), as_dtype(dtype),
        None if seed is None else int(seed))


def set_seed(seed):
    """Sets the counter that seeds random ops called without a seed."""
    _xdev._set_random_seed(int(seed))


__all__ = ["uniform", "set_seed"]
