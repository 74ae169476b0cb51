"""Edge cases through TensorFlow and xdev: errors and their classes, dtype conversions at
the edges of a dtype's range, device strings. Same rule as test_ops.py: any difference is a
row of docs/tensorflow-differences.md (subject: the case's name, dtypes "—")."""

import numpy as np
import pytest

from conftest import RESULTS, documented_differences
import oracle


def as_numpy_names(m):
    return [np.dtype(getattr(m, d).as_numpy_dtype).name for d in
            ("float32", "float64", "int32", "int64", "bool", "float16", "bfloat16", "uint8",
             "int8")]


def ints(m, values, dtype="int32"):
    return m.constant(np.array(values, dtype))


EDGES = {
    "integer Div by zero": lambda m: m.truncatediv(ints(m, [4, 1]), ints(m, [2, 0])),
    "integer FloorDiv by zero": lambda m: m.math.floordiv(ints(m, [4, 1]), ints(m, [2, 0])),
    "integer FloorMod by zero": lambda m: m.math.floormod(ints(m, [4, 1]), ints(m, [2, 0])),
    "int8 FloorDiv by zero": lambda m: m.math.floordiv(ints(m, [4, 1], "int8"),
                                                       ints(m, [2, 0], "int8")),
    "uint8 constant 300": lambda m: m.constant(300, dtype=m.uint8),
    "uint8 constant -1": lambda m: m.constant(-1, dtype=m.uint8),
    "int8 constant 128": lambda m: m.constant(128, dtype=m.int8),
    "int32 constant 2**31": lambda m: m.constant(2**31, dtype=m.int32),
    "reduce_sum over axis=[]": lambda m: m.reduce_sum(m.constant([[1.0, 2.0]]), axis=[]),
    "reduce_max over axis=[]": lambda m: m.reduce_max(m.constant([[1.0, 2.0]]), axis=[]),
    "reduce_any over axis=[]": lambda m: m.reduce_any(m.constant([True, False]), axis=[]),
    "reduce_sum axis out of range": lambda m: m.reduce_sum(m.constant([1.0]), axis=3),
    "matmul inner sizes differ": lambda m: m.matmul(m.ones([2, 3]), m.ones([2, 3])),
    "gather index out of range": lambda m: m.gather(m.constant([1.0, 2.0]), ints(m, [5])),
    "bfloat16 from NumPy and back": lambda m: m.constant(
        np.array([1.5, -2.25], dtype=m.bfloat16.as_numpy_dtype)) * 2,
    "as_numpy_dtype of every dtype": lambda m: m.constant(as_numpy_names(m) == [
        "float32", "float64", "int32", "int64", "bool", "float16", "bfloat16", "uint8", "int8"]),
    "device('') is no constraint": lambda m: _on(m, ""),
    "device(None) is no constraint": lambda m: _on(m, None),
    "device('garbage') does not parse": lambda m: _on(m, "garbage"),
    "device('/GARBAGE:0') does not parse": lambda m: _on(m, "/GARBAGE:0"),
    "device('GPU') without a GPU": lambda m: _on(m, "GPU"),
    "device on a job that is not there": lambda m: _on(m, "/job:foo/device:CPU:0"),
    "int8 arithmetic wraps": lambda m: ints(m, [100, -100], "int8") * ints(m, [2, 2], "int8"),
    "uint8 subtraction wraps": lambda m: ints(m, [1], "uint8") - ints(m, [2], "uint8"),
    "int8 mean truncates": lambda m: m.reduce_mean(ints(m, [-3, -4, 2], "int8")),
}


def _on(m, name):
    with m.device(name):
        return m.constant([1.0]) + 1.0


@pytest.mark.parametrize("name", sorted(EDGES))
def test_edge_agrees_with_tensorflow(name):
    import tensorflow as tf
    import xdev
    outs = [oracle.run(m, lambda m, f=EDGES[name]: f(m), []) for m in (tf, xdev)]
    RESULTS["compared"] += 1
    difference = oracle.differ(*outs)
    documented = documented_differences()
    key = (name, "—")
    if difference is None:
        RESULTS["same"] += 1
        assert key not in documented, f"{name}: documented, but no longer differs"
        return
    assert key in documented, (f"{name} differs from TensorFlow and "
                               f"docs/tensorflow-differences.md does not say why:\n{difference}")
    RESULTS["documented"] += 1


TEXTS = {
    "matrix": lambda m: m.constant([[1.0, 2.0], [3.0, 4.0]]),
    "wide int matrix": lambda m: m.constant([[44, 56], [98, 128]]),
    "vector": lambda m: m.constant([1.5, -2.0]),
    "scalar": lambda m: m.constant(3),
    "bool": lambda m: m.constant([True, False]),
    "empty": lambda m: m.zeros([0, 2]),
    "float16": lambda m: m.constant(np.array([1.5, 2.0], np.float16)),
    "uint8 scalar": lambda m: m.constant(np.array(7, np.uint8)),
}


@pytest.mark.parametrize("name", sorted(TEXTS))
def test_str_and_repr_are_tensorflows(name):
    import tensorflow as tf
    import xdev
    RESULTS["compared"] += 1
    with tf.device("/CPU:0"):
        t = TEXTS[name](tf)
    x = TEXTS[name](xdev)
    assert (str(x), repr(x)) == (str(t), repr(t))
    RESULTS["same"] += 1
