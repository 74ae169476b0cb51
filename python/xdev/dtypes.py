"""Element types (``tf.dtypes``): ``xdev.float32``, ``float64``, ``int32``, ``int64``, ``bool``.

xdev has these five; the safetensors reader holds float16/bfloat16 and narrow
integers in the nearest wider one (see :func:`xdev.load_file`).
"""

import builtins as _builtins

import numpy as _np

from ._xdev import DType

float32 = DType.float32
float64 = DType.float64
int32 = DType.int32
int64 = DType.int64
bool = DType.bool  # noqa: A001 -- TensorFlow's name (tf.bool)
double = float64

_TO_NUMPY = {
    DType.float32: _np.dtype(_np.float32),
    DType.float64: _np.dtype(_np.float64),
    DType.int32: _np.dtype(_np.int32),
    DType.int64: _np.dtype(_np.int64),
    DType.bool: _np.dtype(_np.bool_),
}
_FROM_NUMPY = {v: k for k, v in _TO_NUMPY.items()}
_NAMES = {d.name: d for d in DType}
_NAMES.update({"float": float32, "double": float64, "bool_": bool})


def as_dtype(type_value):
    """The :class:`DType` for a DType, a name (``"float32"``), or a NumPy dtype or scalar type.

    Raises TypeError for anything xdev has no dtype for (e.g. ``np.float16``).
    """
    if isinstance(type_value, DType):
        return type_value
    if isinstance(type_value, str) and type_value in _NAMES:
        return _NAMES[type_value]
    if type_value is _builtins.bool:
        return bool
    try:
        np_dtype = _np.dtype(type_value)
    except TypeError:
        np_dtype = None
    if np_dtype is not None and np_dtype in _FROM_NUMPY:
        return _FROM_NUMPY[np_dtype]
    raise TypeError(
        f"Cannot convert {type_value!r} to an xdev DType "
        "(xdev has float32, float64, int32, int64, bool)")


__all__ = ["DType", "as_dtype", "float32", "float64", "int32", "int64", "bool", "double"]
