"""Math ops (``tf.math``): every elementwise, comparison, logic and reduction op of the
op table, under TensorFlow's names and arguments. Integer powers have no Pow kernel (the
op table defines Pow for float32/float64) and run on the host (see :mod:`xdev._fallback`)."""

from . import _convert, _fallback, _xdev
from ._xdev import (  # noqa: A004 -- TensorFlow's names (abs, round) shadow builtins here
    abs,
    add,
    add_n,
    argmax,
    argmin,
    ceil,
    cos,
    cumsum,
    divide,
    equal,
    erf,
    exp,
    expm1,
    floor,
    floordiv,
    floormod,
    greater,
    greater_equal,
    is_finite,
    is_nan,
    less,
    less_equal,
    log,
    log1p,
    log_softmax,
    logical_and,
    logical_not,
    logical_or,
    maximum,
    minimum,
    multiply,
    negative,
    not_equal,
    reciprocal,
    reduce_all,
    reduce_any,
    reduce_logsumexp,
    reduce_max,
    reduce_mean,
    reduce_min,
    reduce_prod,
    reduce_sum,
    rsqrt,
    sigmoid,
    sign,
    sin,
    softplus,
    sqrt,
    square,
    squared_difference,
    subtract,
    tanh,
    truncatediv,
)

truediv = divide
mod = floormod


def round(x, name=None):  # noqa: A001 -- TensorFlow's name
    """x rounded to the nearest integer, halves to even (Round); an integer tensor is
    returned as it is, as TensorFlow's ``tf.round`` does."""
    del name
    t = _convert.convert_to_tensor(x)
    return t if t.dtype.is_integer else _xdev.round(t)


def pow(x, y):  # noqa: A001 -- TensorFlow's name
    """x ** y elementwise (Pow); integer powers are computed on the host."""
    a, b = _fallback.operands(x, y)
    if a.dtype.is_integer and b.dtype.is_integer:
        return _fallback.pow(a, b)
    return _xdev.pow(a, b)


__all__ = [
    "abs", "add", "add_n", "argmax", "argmin", "ceil", "cos", "cumsum", "divide", "equal",
    "erf", "exp", "expm1", "floor", "floordiv", "floormod", "greater", "greater_equal",
    "is_finite", "is_nan", "less", "less_equal", "log", "log1p", "log_softmax", "logical_and",
    "logical_not", "logical_or", "maximum", "minimum", "mod", "multiply", "negative",
    "not_equal", "pow", "reciprocal", "reduce_all", "reduce_any", "reduce_logsumexp",
    "reduce_max", "reduce_mean", "reduce_min", "reduce_prod", "reduce_sum", "round", "rsqrt",
    "sigmoid", "sign", "sin", "softplus", "sqrt", "square", "squared_difference", "subtract",
    "tanh", "truediv", "truncatediv",
]
