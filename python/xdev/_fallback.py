"""Operations the op table does not define yet, computed on the host with NumPy.

``**``, the comparisons (``< <= > >= == !=``) and indexing with a negative step
have no op (Pow, Less, Equal, Reverse) in xdev's op table yet. Until they do,
they read their inputs back, let NumPy compute exactly what it would, and put
the result on the first input's device (logged as ``_EagerConst``). The values
are right; the cost is a read-back per call (counted in
``xdev.debugging.placement_counters()["read_backs"]``).
"""

import numpy as np

from . import _xdev
from ._convert import convert_to_tensor


def _operands(x, y):
    if isinstance(x, _xdev.Tensor):
        return x, convert_to_tensor(y, x.dtype) if not isinstance(y, _xdev.Tensor) else y
    y = convert_to_tensor(y)
    return convert_to_tensor(x, y.dtype), y


def _on(device, array):
    with _xdev.DeviceScope(device):
        return _xdev._constant_from_array(np.ascontiguousarray(array))


def binary(ufunc, name, x, y):
    """``ufunc(x, y)`` on the host; both inputs need one dtype, as for every xdev op."""
    a, b = _operands(x, y)
    if a.dtype != b.dtype:
        raise _xdev.InvalidArgumentError(
            f"{name}: inputs have different dtypes, x is {a.dtype.name} and y is {b.dtype.name} "
            "(cast one of them)")
    try:
        result = ufunc(a.numpy(), b.numpy())
    except ValueError as e:
        raise _xdev.InvalidArgumentError(
            f"{name}: shapes {a.shape} and {b.shape} cannot be broadcast together") from e
    result = np.asarray(result)
    if result.dtype not in (np.bool_, a.numpy().dtype):
        result = result.astype(a.numpy().dtype)
    return _on(a.device, result)


def pow(x, y):  # noqa: A001 -- the op's name
    a, b = _operands(x, y)
    if a.dtype != b.dtype:
        raise _xdev.InvalidArgumentError(
            f"Pow: inputs have different dtypes, x is {a.dtype.name} and y is {b.dtype.name} "
            "(cast one of them)")
    if a.dtype.is_bool:
        raise _xdev.InvalidArgumentError("Pow: bool inputs are not supported")
    base, exponent = a.numpy(), b.numpy()
    if a.dtype.is_integer and np.any(exponent < 0):
        raise _xdev.InvalidArgumentError("Pow: integers to negative integer powers are not allowed")
    with np.errstate(all="ignore"):
        result = np.power(base, exponent)
    return _on(a.device, np.asarray(result, dtype=base.dtype))


def getitem(tensor, key):
    """``tensor[key]`` for keys xdev's views cannot express (negative steps)."""
    return _on(tensor.device, tensor.numpy()[key])
