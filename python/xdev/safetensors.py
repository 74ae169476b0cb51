"""safetensors files (``safetensors.numpy.save_file`` / ``load_file``, xdev's way).

Files xdev writes open with the ``safetensors`` package and the other way round.
F16, BF16, U8 and I8 tensors load as float16, bfloat16, uint8 and int8. The file
dtypes xdev has no dtype for are held exactly in a wider one (U16/I16 in int32,
U32/U64 in int64); the returned dict remembers each such tensor's file dtype
(``.dtypes``), and :func:`save_file` writes it back bit for bit. NumPy arrays may
be saved directly, float16 and ml_dtypes' bfloat16 included.
"""

import numpy as np

from . import _xdev
from ._convert import convert_to_tensor

# NumPy dtypes xdev has no dtype for: the file dtype and the xdev-held dtype.
_NUMPY_FILE_DTYPES = {
    np.dtype(np.uint16): ("U16", np.int32),
    np.dtype(np.int16): ("I16", np.int32),
    np.dtype(np.uint32): ("U32", np.int64),
    np.dtype(np.uint64): ("U64", np.int64),
}


class SafetensorsDict(dict):
    """What :func:`load_file` returns: name -> tensor, plus the file's ``metadata`` and the
    file ``dtypes`` of the tensors held in a wider dtype (U16, I16, U32, U64)."""

    def __init__(self, tensors=(), dtypes=None, metadata=None):
        super().__init__(tensors)
        self.dtypes = dict(dtypes or {})
        self.metadata = dict(metadata or {})


def save_file(tensors, filename, metadata=None, dtypes=None):
    """Writes ``tensors`` (name -> tensor or NumPy array) to ``filename``.

    ``metadata``: str -> str, stored as ``__metadata__`` (default: the ``metadata`` of a
    dict :func:`load_file` returned). ``dtypes``: name -> file dtype ("F16", "BF16", "U8",
    ...) for float32/integer tensors to be stored narrower (default: a loaded dict's
    ``dtypes``, and the dtype of NumPy uint16/int16/uint32/uint64 arrays). float32
    values are rounded to nearest even; integers out of range raise
    :class:`xdev.errors.InvalidArgumentError`. The file is written under a temporary name
    and renamed.
    """
    if metadata is None:
        metadata = getattr(tensors, "metadata", None) or {}
    file_dtypes = dict(getattr(tensors, "dtypes", None) or {})
    converted = {}
    for name, value in tensors.items():
        if not isinstance(value, _xdev.Tensor) and not hasattr(value, "__xdev_tensor__"):
            array = np.asarray(value)
            narrow = _NUMPY_FILE_DTYPES.get(array.dtype)
            if narrow is not None:
                file_dtypes.setdefault(name, narrow[0])
                value = array.astype(narrow[1])
        converted[str(name)] = convert_to_tensor(value)
    file_dtypes.update(dtypes or {})
    file_dtypes = {k: v for k, v in file_dtypes.items() if k in converted}
    _xdev._save_file(converted, str(filename), {str(k): str(v) for k, v in metadata.items()},
                     file_dtypes)


def load_file(filename, device=None):
    """Reads a safetensors file: a :class:`SafetensorsDict` name -> tensor, on ``device``
    (any spelling; None places them like :func:`xdev.constant`)."""
    tensors, dtypes, metadata = _xdev._load_file(str(filename), "" if device is None else device)
    return SafetensorsDict(tensors, dtypes, metadata)


__all__ = ["save_file", "load_file", "SafetensorsDict"]
