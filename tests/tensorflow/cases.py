"""One oracle case per op of the op table: the same call under TensorFlow and xdev.

A case is `Case(make)`: `make(rng, dtype, out_dtype)` returns `(args, call)`, where
`args` are NumPy arrays (made tensors with `m.constant` first) or plain Python values,
and `call(m, *args)` runs the op through the public API of module `m` (`tensorflow`
or `xdev`, which share TensorFlow's names). Where TensorFlow 2 has an op only as a raw
op (the convolution and pooling gradients) or not at all (LayerNorm: its formula),
`call` asks `is_tf(m)`.
"""

import dataclasses
from typing import Callable, Optional

import numpy as np

try:
    import ml_dtypes
    BFLOAT16 = ml_dtypes.bfloat16
except ImportError:  # the lane installs it; the coverage test says what is missing
    BFLOAT16 = None

FLOATS = ("float32", "float64", "float16", "bfloat16")
SIGNED = ("int8", "int32", "int64")


def numpy_dtype(name):
    return BFLOAT16 if name == "bfloat16" else np.dtype(name)


def values(rng, dtype, shape, kind="general"):
    """Test values of `dtype`: "general" (both signs, small), "positive", "divisor"
    (no zero), "unit" (in (-1, 1)), "indices" (0..2)."""
    shape = tuple(shape)
    if dtype == "bool":
        return rng.random(shape) < 0.5
    if dtype in FLOATS:
        if kind == "positive":
            v = rng.uniform(0.25, 3.0, shape)
        elif kind == "unit":
            v = rng.uniform(-0.9, 0.9, shape)
        elif kind == "divisor":
            v = rng.uniform(0.5, 2.0, shape) * rng.choice([-1.0, 1.0], shape)
        else:
            v = rng.uniform(-3.0, 3.0, shape)
        return v.astype(numpy_dtype(dtype))
    lo = 0 if dtype == "uint8" else -9
    if kind in ("positive", "indices"):
        lo = 0
    hi = 3 if kind == "indices" else 10
    v = rng.integers(lo, hi, shape)
    if kind == "divisor":
        v[v == 0] = 1
    return v.astype(numpy_dtype(dtype))


@dataclasses.dataclass
class Case:
    make: Callable
    # Relative tolerance for float32 (transcendentals: both libraries round differently).
    rtol32: float = 2e-6


def unary(fn, kind="general"):
    return Case(lambda rng, dt, _: ([values(rng, dt, (3, 4), kind)], fn))


def binary(fn, kind_y="general"):
    def make(rng, dt, _):
        # Broadcast along the first axis: [3, 4] op [4].
        return [values(rng, dt, (3, 4)), values(rng, dt, (4,), kind_y)], fn
    return Case(make)


def comparison(fn):
    def make(rng, dt, _):
        x = values(rng, dt, (3, 4))
        y = x.copy()
        y[0] = values(rng, dt, (4,))  # some equal, some not
        return [x, y], fn
    return Case(make)


def reduction(fn, kind="general"):
    def make(rng, dt, _):
        return [values(rng, dt, (2, 3, 4), kind)], lambda m, x: [
            fn(m, x), fn(m, x, axis=1), fn(m, x, axis=[0, 2], keepdims=True),
            fn(m, x, axis=-1), fn(m, x, axis=[])]
    return Case(make)


def images(rng, dt, shape):
    return values(rng, dt, shape, "unit")


def is_tf(m):
    return m.__name__ == "tensorflow"


# TensorFlow 2 keeps the convolution and pooling gradients as raw ops only; xdev has them
# in xdev.nn under tf.compat.v1's names.
def conv_input_grad(m, f, dy, strides, padding):
    if is_tf(m):
        return m.raw_ops.Conv2DBackpropInput(input_sizes=[2, 5, 5, 3], filter=f,
                                             out_backprop=dy, strides=strides, padding=padding)
    return m.nn.conv2d_backprop_input([2, 5, 5, 3], f, dy, strides, padding)


def conv_filter_grad(m, x, dy, strides, padding):
    if is_tf(m):
        return m.raw_ops.Conv2DBackpropFilter(input=x, filter_sizes=[3, 3, 3, 4],
                                              out_backprop=dy, strides=strides,
                                              padding=padding)
    return m.nn.conv2d_backprop_filter(x, [3, 3, 3, 4], dy, strides, padding)


WINDOW, STEP = [1, 2, 2, 1], [1, 1, 1, 1]


def max_pool_grad(m, x, g):
    x = m.reshape(x, [1, 3, 4, 1])
    y = m.nn.max_pool2d(x, 2, 1, "VALID")
    g = m.reshape(g, [1, 2, 3, 1])
    if is_tf(m):
        return m.raw_ops.MaxPoolGrad(orig_input=x, orig_output=y, grad=g, ksize=WINDOW,
                                     strides=STEP, padding="VALID")
    return m.nn.max_pool_grad(x, y, g, WINDOW, STEP, "VALID")


def avg_pool_grad(m, g):
    g = m.reshape(g, [1, 3, 4, 1])
    if is_tf(m):
        return m.raw_ops.AvgPoolGrad(orig_input_shape=[1, 3, 4, 1], grad=g, ksize=WINDOW,
                                     strides=STEP, padding="SAME")
    return m.nn.avg_pool_grad([1, 3, 4, 1], g, WINDOW, STEP, "SAME")


def layer_norm(m, x, gamma, beta):
    if is_tf(m):  # TensorFlow has no LayerNorm op: the formula, with tf.nn.moments
        mean, var = m.nn.moments(x, axes=[-1], keepdims=True)
        return (x - mean) * m.math.rsqrt(var + 1e-3) * gamma + beta
    return m.nn.layer_norm(x, gamma, beta, begin_norm_axis=1, epsilon=1e-3)


def scatter(rng, dt, _):
    tensor = values(rng, dt, (4, 3))
    indices = np.array([[0], [2], [0]], np.int32)
    updates = values(rng, dt, (3, 3))
    return [tensor, indices, updates], lambda m, t, i, u: m.tensor_scatter_nd_add(t, i, u)


CASES = {
    "MatMul": Case(lambda rng, dt, _: ([values(rng, dt, (3, 5)), values(rng, dt, (4, 5))],
                                       lambda m, a, b: [m.matmul(a, b, transpose_b=True),
                                                        m.matmul(m.transpose(a), a,
                                                                 transpose_a=True)])),
    "Add": binary(lambda m, x, y: m.add(x, y)),
    "Sub": binary(lambda m, x, y: m.subtract(x, y)),
    "Mul": binary(lambda m, x, y: m.multiply(x, y)),
    # Div is TF's truncating Div for integers, x / y for floats.
    "Div": Case(lambda rng, dt, _: (
        [values(rng, dt, (3, 4)), values(rng, dt, (4,), "divisor")],
        (lambda m, x, y: m.truncatediv(x, y)) if dt not in FLOATS
        else (lambda m, x, y: m.divide(x, y)))),
    "Neg": unary(lambda m, x: m.negative(x)),
    "Relu": unary(lambda m, x: m.nn.relu(x)),
    "AddN": Case(lambda rng, dt, _: ([values(rng, dt, (2, 3)) for _ in range(3)],
                                     lambda m, *xs: m.add_n(list(xs)))),
    "Cast": Case(lambda rng, dt, out: (
        [values(rng, dt, (3, 4), "positive" if out in ("uint8", "bool") else "general")],
        lambda m, x: m.cast(x, getattr(m, out)))),
    "Sum": reduction(lambda m, x, **kw: m.reduce_sum(x, **kw)),
    "Mean": reduction(lambda m, x, **kw: m.reduce_mean(x, **kw)),
    "Fill": Case(lambda rng, dt, out: (
        [], lambda m: m.fill([2, 3], m.constant(values(rng, out, ()) if out != "bool" else True,
                                               dtype=getattr(m, out))))),
    # Values differ (each library has its own generator): docs/tensorflow-differences.md.
    "RandomUniform": Case(lambda rng, dt, out: (
        [], lambda m: m.random.uniform([2, 3], -1.0, 2.0, dtype=getattr(m, out), seed=7))),
    "Abs": unary(lambda m, x: m.abs(x)),
    "Sign": unary(lambda m, x: m.sign(x)),
    "Square": unary(lambda m, x: m.square(x)),
    "Exp": unary(lambda m, x: m.exp(x)),
    "Expm1": unary(lambda m, x: m.math.expm1(x)),
    "Log": unary(lambda m, x: m.math.log(x), "positive"),
    "Log1p": unary(lambda m, x: m.math.log1p(x), "positive"),
    "Sqrt": unary(lambda m, x: m.sqrt(x), "positive"),
    "Rsqrt": unary(lambda m, x: m.math.rsqrt(x), "positive"),
    "Reciprocal": unary(lambda m, x: m.math.reciprocal(x), "divisor"),
    "Sin": unary(lambda m, x: m.sin(x)),
    "Cos": unary(lambda m, x: m.cos(x)),
    "Tanh": unary(lambda m, x: m.tanh(x)),
    "Sigmoid": unary(lambda m, x: m.sigmoid(x)),
    "Erf": unary(lambda m, x: m.math.erf(x)),
    "Softplus": unary(lambda m, x: m.math.softplus(x)),
    "Floor": unary(lambda m, x: m.floor(x)),
    "Ceil": unary(lambda m, x: m.math.ceil(x)),
    "Round": unary(lambda m, x: m.round(x)),
    "LeakyRelu": unary(lambda m, x: m.nn.leaky_relu(x, alpha=0.3)),
    "Gelu": unary(lambda m, x: [m.nn.gelu(x), m.nn.gelu(x, approximate=True)]),
    # A positive base: a negative one to a fractional power is NaN in both.
    "Pow": Case(lambda rng, dt, _: ([values(rng, dt, (3, 4), "positive"), values(rng, dt, (4,))],
                            lambda m, x, y: m.pow(x, y))),
    "Maximum": binary(lambda m, x, y: m.maximum(x, y)),
    "Minimum": binary(lambda m, x, y: m.minimum(x, y)),
    "FloorDiv": binary(lambda m, x, y: m.math.floordiv(x, y), "divisor"),
    "FloorMod": binary(lambda m, x, y: m.math.floormod(x, y), "divisor"),
    "SquaredDifference": binary(lambda m, x, y: m.math.squared_difference(x, y)),
    "Equal": comparison(lambda m, x, y: m.equal(x, y)),
    "NotEqual": comparison(lambda m, x, y: m.not_equal(x, y)),
    "Less": comparison(lambda m, x, y: m.less(x, y)),
    "LessEqual": comparison(lambda m, x, y: m.less_equal(x, y)),
    "Greater": comparison(lambda m, x, y: m.greater(x, y)),
    "GreaterEqual": comparison(lambda m, x, y: m.greater_equal(x, y)),
    "LogicalAnd": binary(lambda m, x, y: m.logical_and(x, y)),
    "LogicalOr": binary(lambda m, x, y: m.logical_or(x, y)),
    "LogicalNot": unary(lambda m, x: m.logical_not(x)),
    "IsNan": Case(lambda rng, dt, _: ([np.array([0.0, np.nan, np.inf, -1.0]).astype(
        numpy_dtype(dt))], lambda m, x: m.math.is_nan(x))),
    "IsFinite": Case(lambda rng, dt, _: ([np.array([0.0, np.nan, np.inf, -1.0]).astype(
        numpy_dtype(dt))], lambda m, x: m.math.is_finite(x))),
    # Select is looked up by the condition (bool); x and y take the case's other dtypes.
    "Select": Case(lambda rng, dt, out: (
        [values(rng, "bool", (3, 4)), values(rng, out, (3, 4)), values(rng, out, (4,))],
        lambda m, c, x, y: m.where(c, x, y))),
    "ClipByValue": Case(lambda rng, dt, _: (
        [values(rng, dt, (3, 4))],
        lambda m, x: m.clip_by_value(x, m.constant(values(np.random.default_rng(1), dt, ())),
                                     m.constant(np.array(5).astype(numpy_dtype(dt)))))),
    "Max": reduction(lambda m, x, **kw: m.reduce_max(x, **kw)),
    "Min": reduction(lambda m, x, **kw: m.reduce_min(x, **kw)),
    "Prod": reduction(lambda m, x, **kw: m.reduce_prod(x, **kw)),
    "Any": reduction(lambda m, x, **kw: m.reduce_any(x, **kw)),
    "All": reduction(lambda m, x, **kw: m.reduce_all(x, **kw)),
    "LogSumExp": reduction(lambda m, x, **kw: m.reduce_logsumexp(x, **kw)),
    "ArgMax": unary(lambda m, x: [m.argmax(x, axis=0), m.argmax(x, axis=1)]),
    "ArgMin": unary(lambda m, x: [m.argmin(x, axis=0), m.argmin(x, axis=1)]),
    "CumSum": unary(lambda m, x: [m.cumsum(x, axis=1), m.cumsum(x, axis=0, exclusive=True),
                                  m.cumsum(x, axis=1, reverse=True)]),
    "Softmax": unary(lambda m, x: [m.nn.softmax(x), m.nn.softmax(x, axis=0)]),
    "LogSoftmax": unary(lambda m, x: [m.nn.log_softmax(x), m.nn.log_softmax(x, axis=0)]),
    "ConcatV2": Case(lambda rng, dt, _: ([values(rng, dt, (2, 3)), values(rng, dt, (2, 1))],
                                         lambda m, x, y: m.concat([x, y], axis=1))),
    "Pack": Case(lambda rng, dt, _: ([values(rng, dt, (2, 3)), values(rng, dt, (2, 3))],
                                     lambda m, x, y: [m.stack([x, y]), m.stack([x, y], axis=2)])),
    "Identity": unary(lambda m, x: m.identity(x)),
    "Tile": unary(lambda m, x: m.tile(x, [2, 1])),
    "PadV2": unary(lambda m, x: m.pad(x, [[1, 0], [2, 1]])),
    "GatherV2": Case(lambda rng, dt, _: (
        [values(rng, dt, (3, 4)), np.array([2, 0, 2], np.int64)],
        lambda m, p, i: [m.gather(p, i), m.gather(p, i, axis=1)])),
    "BiasAdd": Case(lambda rng, dt, _: ([values(rng, dt, (2, 3)), values(rng, dt, (3,))],
                                        lambda m, v, b: m.nn.bias_add(v, b))),
    "SoftmaxCrossEntropyWithLogits": Case(lambda rng, dt, _: (
        [np.eye(3)[[0, 2]].astype(numpy_dtype(dt)), values(rng, dt, (2, 3))],
        lambda m, labels, logits: m.nn.softmax_cross_entropy_with_logits(labels=labels,
                                                                           logits=logits))),
    "LayerNorm": Case(lambda rng, dt, _: (
        [values(rng, dt, (3, 5)), values(rng, dt, (5,)), values(rng, dt, (5,))], layer_norm),
        rtol32=1e-5),
    "Slice": unary(lambda m, x: m.slice(x, [1, 1], [2, -1])),
    "StridedSlice": unary(lambda m, x: [x[1:, ::2], x[::-1, 1], x[..., m.newaxis, 2]]),
    "Range": Case(lambda rng, dt, out: (
        [], lambda m: [m.range(1, 9, 2, dtype=getattr(m, out)),
                       m.range(8, 0, -3, dtype=getattr(m, out))])),
    "OneHot": Case(lambda rng, dt, out: (
        [np.array([0, 2, 1, 5], numpy_dtype(dt))],
        lambda m, i: [m.one_hot(i, 3, dtype=getattr(m, out)),
                      m.one_hot(i, 3, axis=0, dtype=getattr(m, out))])),
    "BroadcastTo": Case(lambda rng, dt, _: ([values(rng, dt, (3, 1))],
                                            lambda m, x: m.broadcast_to(x, [2, 3, 4]))),
    "Conv2D": Case(lambda rng, dt, _: (
        [images(rng, dt, (2, 5, 5, 3)), images(rng, dt, (3, 3, 3, 4))],
        lambda m, x, f: [m.nn.conv2d(x, f, strides=1, padding="SAME"),
                         m.nn.conv2d(x, f, strides=2, padding="VALID")]), rtol32=1e-5),
    "Conv2DBackpropInput": Case(lambda rng, dt, _: (
        [images(rng, dt, (3, 3, 3, 4)), images(rng, dt, (2, 5, 5, 4)),
         images(rng, dt, (2, 2, 2, 4))],
        lambda m, f, dy, dy2: [conv_input_grad(m, f, dy, [1, 1, 1, 1], "SAME"),
                               conv_input_grad(m, f, dy2, [1, 2, 2, 1], "VALID")]),
        rtol32=1e-5),
    "Conv2DBackpropFilter": Case(lambda rng, dt, _: (
        [images(rng, dt, (2, 5, 5, 3)), images(rng, dt, (2, 5, 5, 4)),
         images(rng, dt, (2, 2, 2, 4))],
        lambda m, x, dy, dy2: [conv_filter_grad(m, x, dy, [1, 1, 1, 1], "SAME"),
                               conv_filter_grad(m, x, dy2, [1, 2, 2, 1], "VALID")]),
        rtol32=1e-5),
    "MaxPool": unary(lambda m, x: [m.nn.max_pool2d(m.reshape(x, [1, 3, 4, 1]), 2, 1, "VALID"),
                                   m.nn.max_pool2d(m.reshape(x, [1, 3, 4, 1]), 2, 2, "SAME")]),
    "AvgPool": unary(lambda m, x: [m.nn.avg_pool2d(m.reshape(x, [1, 3, 4, 1]), 2, 1, "SAME"),
                                   m.nn.avg_pool2d(m.reshape(x, [1, 3, 4, 1]), 2, 2, "VALID")]),
    "MaxPoolGrad": Case(lambda rng, dt, _: ([values(rng, dt, (3, 4)), values(rng, dt, (2, 3))],
                                            max_pool_grad)),
    "AvgPoolGrad": unary(avg_pool_grad),
    "BatchMatMulV2": Case(lambda rng, dt, _: (
        [values(rng, dt, (2, 3, 4)), values(rng, dt, (1, 4, 2))],
        lambda m, x, y: [m.matmul(x, y), m.linalg.matmul(x, x, transpose_b=True)])),
    "TensorScatterAdd": Case(scatter),
}
