"""What the op table does not define, computed on the host with NumPy.

Integer ``**`` (Pow is defined for float32/float64 only), indexing with a negative step
(no Reverse op) and ``where(condition)`` without x and y (the coordinates of the true
elements: no such op) read their inputs back, let NumPy compute exactly what it would,
and put the result on the first input's device (logged as ``_EagerConst``). The values
are right; the cost is a read-back per call (counted in
``xdev.debugging.placement_counters()["read_backs"]``).
"""

import numpy as np

from . import _xdev
from ._convert import array_to_tensor, convert_to_tensor


def operands(x, y):
    """Both as tensors; a tensor-like takes the other operand's dtype (as in the ops)."""
    if isinstance(x, _xdev.Tensor):
        return x, convert_to_tensor(y, x.dtype) if not isinstance(y, _xdev.Tensor) else y
    y = convert_to_tensor(y)
    return convert_to_tensor(x, y.dtype), y


def _on(device, array):
    with _xdev.DeviceScope(device):
        return array_to_tensor(array)


def pow(x, y):  # noqa: A001 -- the op's name
    a, b = operands(x, y)
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


def argwhere(condition):
    """``tf.where(condition)``: the coordinates (int64, one row each) of the true elements."""
    c = convert_to_tensor(condition)
    if not c.dtype.is_bool:
        raise _xdev.InvalidArgumentError(
            f"Where: condition must be bool, not {c.dtype.name}")
    return _on(c.device, np.argwhere(c.numpy()).astype(np.int64))


def getitem(tensor, key):
    """``tensor[key]`` for keys xdev's views cannot express (negative steps)."""
    return _on(tensor.device, tensor.numpy()[key])
