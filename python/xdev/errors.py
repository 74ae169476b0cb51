"""Errors (``tf.errors``): one :class:`Error` base, one subclass per status code.

The messages are the C++ SDK's, word for word. :class:`Error` is a
``RuntimeError`` (as ``xdev::Error`` is a ``std::runtime_error``), so
TensorFlow's ``except RuntimeError`` snippets work unchanged.
"""

from ._xdev import (
    AbiMismatchError,
    Error,
    FailedPreconditionError,
    InternalError,
    InvalidArgumentError,
    NotFoundError,
    ResourceExhaustedError,
    UnavailableError,
    UnimplementedError,
)

OpError = Error  # TensorFlow's name for the base

__all__ = [
    "Error", "OpError", "InvalidArgumentError", "NotFoundError", "ResourceExhaustedError",
    "UnimplementedError", "FailedPreconditionError", "UnavailableError", "InternalError",
    "AbiMismatchError",
]
