"""Tensor creation (``tf.constant``, ``tf.fill``, ...) and the Tensor methods written in
Python: ``__array__``, ``__repr__``, iteration, ``**`` and the comparisons."""

import math as _math

import numpy as np

from . import _xdev
from ._convert import array_to_tensor, convert_to_tensor, to_array
from .dtypes import as_dtype, bfloat16

Tensor = _xdev.Tensor


def constant(value, dtype=None, shape=None, name=None):
    """A tensor from a number, nested list, NumPy array or tensor (logged as _EagerConst).

    ``dtype`` converts (never silently losing values); ``shape`` reshapes, or fills it
    when ``value`` is a single number.
    """
    del name
    if isinstance(value, Tensor) and shape is None:
        return value if dtype is None or value.dtype == as_dtype(dtype) else \
            _xdev.cast(value, as_dtype(dtype))
    if isinstance(value, Tensor):
        value = value.numpy()
    if dtype is None and shape is None and type(value) in (bool, int, float):
        return _xdev._to_tensor(value)
    array = to_array(value, dtype)
    if shape is not None:
        shape = tuple(int(d) for d in shape)
        count = _math.prod(shape)
        if array.size == 1:
            array = np.full(shape, array.reshape(()), dtype=array.dtype)
        elif array.size == count:
            array = array.reshape(shape)
        else:
            raise _xdev.InvalidArgumentError(
                f"constant: {array.size} values do not fill a shape of {count} elements "
                f"{shape}")
    return array_to_tensor(array)


def fill(dims, value, dtype=None, name=None):
    """A tensor of shape ``dims`` with every element ``value`` (logged as Fill). The dtype
    follows ``value`` (float -> float32, int -> int32, bool -> bool) unless given."""
    del name
    if dtype is None:
        dtype = convert_to_tensor(value).dtype
    dtype = as_dtype(dtype)
    return _xdev._fill([int(d) for d in dims], float(value), dtype)


def zeros_like(tensor, dtype=None):
    t = convert_to_tensor(tensor)
    return _xdev.zeros(list(t.shape), t.dtype if dtype is None else as_dtype(dtype))


def ones_like(tensor, dtype=None):
    t = convert_to_tensor(tensor)
    return _xdev.ones(list(t.shape), t.dtype if dtype is None else as_dtype(dtype))


# --- Tensor methods written in Python (bound by the extension, xdev/src/tensor.cpp) ---

def tensor_array(self, dtype=None, copy=None):
    """``numpy.asarray(t)``: host memory is shared (read-only, through DLPack); device
    memory is copied (``copy=False`` then raises)."""
    if copy is not True and self.__dlpack_device__()[0] == 1 and self.dtype != bfloat16:
        array = np.from_dlpack(self)  # (NumPy takes no bfloat16 through DLPack: copied)
    elif copy is False and self.dtype == bfloat16:
        raise ValueError("a bfloat16 tensor becomes a NumPy array by a copy (NumPy takes no "
                         "bfloat16 through DLPack)")
    elif copy is False:
        raise ValueError(
            f"the tensor lives on {self.device}: converting it to a NumPy array needs a copy")
    else:
        array = self.numpy()
    if dtype is not None and array.dtype != np.dtype(dtype):
        if copy is False:
            raise ValueError(f"converting {array.dtype} to {np.dtype(dtype)} needs a copy")
        array = array.astype(dtype)
    return array


def _numpy_text(text):
    # TensorFlow's layout: an array of several lines starts on a line of its own.
    return "\n" + text if "\n" in text else text


def tensor_str(self):
    """``str(t)`` as TensorFlow prints it: ``tf.Tensor(<NumPy's str>, shape=..., dtype=...)``."""
    return (f"tf.Tensor({_numpy_text(str(self.numpy()))}, shape={tuple(self.shape)}, "
            f"dtype={self.dtype.name})")


def tensor_repr(self):
    """``repr(t)`` as TensorFlow writes it: ``<tf.Tensor: shape=..., dtype=..., numpy=...>``
    (a scalar's value bare: ``numpy=3``)."""
    values = self.numpy()
    return (f"<tf.Tensor: shape={tuple(self.shape)}, dtype={self.dtype.name}, "
            f"numpy={_numpy_text(repr(values) if values.ndim else str(values))}>")


def _comparable(other):
    if isinstance(other, Tensor) or hasattr(other, "__xdev_tensor__"):
        return True
    try:
        return np.asarray(other).dtype.kind in "biuf"
    except (TypeError, ValueError):
        return False


def tensor_eq(self, other):
    """Elementwise ``==`` (TensorFlow 2's); with what is not tensor-like (None, a string)
    Python's identity comparison applies (so ``t == None`` is False)."""
    if not _comparable(other):
        return NotImplemented
    from .math import equal
    return equal(self, other)


def tensor_ne(self, other):
    if not _comparable(other):
        return NotImplemented
    from .math import not_equal
    return not_equal(self, other)


def tensor_iter(self):
    if self.ndim == 0:
        raise TypeError("Cannot iterate over a scalar tensor.")
    return (self[i] for i in range(self.shape[0]))
