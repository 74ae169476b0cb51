"""Element types (``tf.dtypes``): ``xdev.float32``, ``float64``, ``int32``, ``int64``, ``bool``,
``float16``, ``bfloat16``, ``uint8``, ``int8``.

NumPy arrays of float16, uint8 and int8 come in and go out as they are; bfloat16 is
ml_dtypes' (NumPy has none). safetensors files keep them too (see :func:`xdev.load_file`).
"""

import builtins as _builtins

import numpy as _np

from ._xdev import DType

float32 = DType.float32
float64 = DType.float64
int32 = DType.int32
int64 = DType.int64
bool = DType.bool  # noqa: A001 -- TensorFlow's name (tf.bool)
float16 = DType.float16
bfloat16 = DType.bfloat16
uint8 = DType.uint8
int8 = DType.int8
double = float64
half = float16

_TO_NUMPY = {
    DType.float32: _np.dtype(_np.float32),
    DType.float64: _np.dtype(_np.float64),
    DType.int32: _np.dtype(_np.int32),
    DType.int64: _np.dtype(_np.int64),
    DType.bool: _np.dtype(_np.bool_),
    DType.float16: _np.dtype(_np.float16),
    DType.uint8: _np.dtype(_np.uint8),
    DType.int8: _np.dtype(_np.int8),
}
try:  # bfloat16 is ml_dtypes' where it is installed
    import ml_dtypes as _ml_dtypes

    _TO_NUMPY[DType.bfloat16] = _np.dtype(_ml_dtypes.bfloat16)
except ImportError:
    pass
_FROM_NUMPY = {v: k for k, v in _TO_NUMPY.items()}
_NAMES = {d.name: d for d in DType}
_NAMES.update({"float": float32, "double": float64, "bool_": bool, "half": float16})


def _bfloat16_view(bits):
    """A bfloat16 tensor's ``numpy()``: its uint16 bits as ml_dtypes' bfloat16."""
    if DType.bfloat16 not in _TO_NUMPY:
        raise TypeError("a bfloat16 tensor's values need ml_dtypes' bfloat16 in NumPy "
                        "(pip install ml_dtypes), or cast it first: xdev.cast(t, xdev.float32)")
    return bits.view(_TO_NUMPY[DType.bfloat16])


def _as_numpy_type(dtype):
    """``DType.as_numpy_dtype``: the NumPy scalar type of ``dtype``."""
    if dtype not in _TO_NUMPY:
        raise TypeError(f"{dtype!r} has no NumPy type here: bfloat16 is ml_dtypes' "
                        "(pip install ml_dtypes)")
    return _TO_NUMPY[dtype].type


def as_dtype(type_value):
    """The :class:`DType` for a DType, a name (``"float32"``), or a NumPy dtype or scalar type.

    Raises TypeError for anything xdev has no dtype for (e.g. ``np.int16``).
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
        "(xdev has float32, float64, int32, int64, bool, float16, bfloat16, uint8, int8)")


__all__ = ["DType", "as_dtype", "float32", "float64", "int32", "int64", "bool", "float16",
           "bfloat16", "uint8", "int8", "double", "half"]
