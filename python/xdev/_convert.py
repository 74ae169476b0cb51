"""Python values to tensors, with TensorFlow's rules (``tf.constant``, ``tf.convert_to_tensor``).

Python numbers and nested lists: bool -> bool, int -> int32 (int64 when a value
does not fit), float -> float32. NumPy arrays keep their dtype. A ``dtype``
converts, but never loses information silently: floats with a fraction do not
become integers, integers out of range are refused, numbers do not become bool.
"""

import numpy as np

from . import _xdev
from .dtypes import _FROM_NUMPY, _TO_NUMPY, as_dtype


def _describe(value):
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _cannot(value, dtype):
    return _xdev.InvalidArgumentError(
        f"Cannot convert {_describe(value)} to EagerTensor of dtype {dtype.name}")


def to_array(value, dtype=None):
    """``value`` as a C-contiguous NumPy array of an xdev dtype."""
    from_numpy = isinstance(value, (np.ndarray, np.generic))
    if not from_numpy and hasattr(value, "__array__") and not isinstance(value, (list, tuple)):
        value = np.asarray(value)  # torch, CuPy-on-host, ...: keep their dtype
        from_numpy = True
    try:
        array = np.asarray(value)
    except ValueError as e:
        raise _xdev.InvalidArgumentError(
            f"Can't convert non-rectangular Python sequence to Tensor: {_describe(value)}") from e
    if array.dtype == object:
        raise _xdev.InvalidArgumentError(
            f"Can't convert non-rectangular Python sequence to Tensor: {_describe(value)}")
    if dtype is None:
        if from_numpy:
            if array.dtype not in _FROM_NUMPY:
                raise _xdev.InvalidArgumentError(
                    f"NumPy dtype {array.dtype} has no xdev dtype (xdev has float32, float64, "
                    "int32, int64, bool, float16, bfloat16, uint8, int8); pass dtype= or "
                    "convert it first")
            target = _FROM_NUMPY[array.dtype]
        elif array.size == 0 and array.dtype.kind == "f":
            target = as_dtype("float32")
        elif array.dtype.kind == "b":
            target = as_dtype("bool")
        elif array.dtype.kind in "iu":
            info = np.iinfo(np.int32)
            fits = array.size == 0 or (array.min() >= info.min and array.max() <= info.max)
            target = as_dtype("int32" if fits else "int64")
        elif array.dtype.kind == "f":
            target = as_dtype("float32")
        else:
            raise _xdev.InvalidArgumentError(
                f"Cannot convert {_describe(value)} (dtype {array.dtype}) to a tensor")
    else:
        target = as_dtype(dtype)
    np_dtype = _TO_NUMPY[target]
    if array.dtype != np_dtype:
        kind = array.dtype.kind
        if target.is_bool and kind != "b":
            raise _cannot(value, target)
        if target.is_integer:
            if kind == "f" and not np.all(np.isfinite(array) & (np.floor(array) == array)):
                raise _cannot(value, target)
            if kind in "iuf" and array.size:
                info = np.iinfo(np_dtype)
                if array.min() < info.min or array.max() > info.max:
                    raise _cannot(value, target)
        if kind not in "biuf":
            raise _cannot(value, target)
        array = array.astype(np_dtype)
    return np.asarray(array, order="C")


def convert_to_tensor(value, dtype=None):
    """A tensor from a tensor-like: tensors as they are, ``__xdev_tensor__`` objects
    (variables), numbers, nested lists, NumPy arrays and anything ``np.asarray`` takes."""
    if isinstance(value, _xdev.Tensor):
        if dtype is not None and value.dtype != as_dtype(dtype):
            raise _xdev.InvalidArgumentError(
                f"Tensor conversion requested dtype {as_dtype(dtype).name} for a tensor of "
                f"dtype {value.dtype.name}")
        return value
    if hasattr(value, "__xdev_tensor__"):
        return convert_to_tensor(value.__xdev_tensor__(), dtype)
    if dtype is None and type(value) in (bool, int, float):
        return _xdev._to_tensor(value)
    return array_to_tensor(to_array(value, dtype))


def array_to_tensor(array):
    """A tensor of a NumPy array of an xdev dtype (copied; C order made if needed)."""
    array = np.asarray(array, order="C")
    if array.dtype == _TO_NUMPY.get(_xdev.DType.bfloat16):
        # ml_dtypes' bfloat16 has no DLPack code NumPy gives: its bits as uint16.
        return _xdev._constant_from_array(array.view(np.uint16), _xdev.DType.bfloat16)
    return _xdev._constant_from_array(array)
