"""The math, comparison, logic, reduction and nn ops of the op table, bound with
TensorFlow's names and arguments, against NumPy (broadcasting, NaN, empty inputs, int
dtypes), and their errors as xdev.errors classes that name the op."""

import math

import numpy as np
import pytest

import xdev

RNG = np.random.default_rng(13)
FLOATS = [np.float32, np.float64]
INTS = [np.int32, np.int64]
NUMBERS = FLOATS + INTS
BROADCASTS = [((2, 3), (2, 3)), ((4, 1, 3), (2, 1)), ((3,), ()), ((0, 3), (3,))]


def sample(shape, dtype, nan=False):
    if np.dtype(dtype).kind == "f":
        a = (RNG.standard_normal(shape) * 3).astype(dtype)
        if nan and a.size:
            a.flat[0] = np.nan
        return a
    return RNG.integers(-50, 50, size=shape).astype(dtype)


def on_cpu(array):
    with xdev.device("/CPU:0"):
        return xdev.constant(array)


def assert_close(got, expected, x=0.0):
    """docs/ops.md's bound: within 4·eps·|result| + 4·eps·|x| of the exact result (computed
    in float64 here, so float64 results get twice that); NaN where NumPy has NaN."""
    got = got.numpy()
    expected = np.asarray(expected)
    assert got.shape == expected.shape
    eps = np.finfo(got.dtype).eps
    scale = 2 if got.dtype == np.float64 else 1
    bound = scale * 4 * eps * (np.abs(expected) + np.abs(np.asarray(x, np.float64)))
    bound = np.where(np.isfinite(bound), bound, 0) + np.finfo(got.dtype).tiny
    same = (got == expected) | (np.isnan(got) & np.isnan(expected))
    with np.errstate(invalid="ignore"):
        near = np.abs(got.astype(np.float64) - expected) <= bound
    assert np.all(same | near), f"got {got}, expected {expected}"


_erf = np.vectorize(math.erf, otypes=[np.float64])


def _gelu(x):
    return 0.5 * x * (1 + _erf(x / math.sqrt(2)))


def _gelu_tanh(x):
    return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))


# name, NumPy reference (on float64), the op's name in errors
FLOAT_UNARY = [
    ("exp", np.exp, "Exp"), ("expm1", np.expm1, "Expm1"), ("log", np.log, "Log"),
    ("log1p", np.log1p, "Log1p"), ("sqrt", np.sqrt, "Sqrt"),
    ("rsqrt", lambda x: 1 / np.sqrt(x), "Rsqrt"),
    ("reciprocal", lambda x: 1 / x, "Reciprocal"), ("sin", np.sin, "Sin"), ("cos", np.cos, "Cos"),
    ("tanh", np.tanh, "Tanh"), ("sigmoid", lambda x: 1 / (1 + np.exp(-x)), "Sigmoid"),
    ("erf", _erf, "Erf"), ("softplus", lambda x: np.logaddexp(0, x), "Softplus"),
    ("floor", np.floor, "Floor"), ("ceil", np.ceil, "Ceil"), ("round", np.round, "Round"),
]
EXACT_UNARY = [("abs", np.abs), ("sign", np.sign), ("square", np.square)]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("name,reference,op", FLOAT_UNARY)
def test_float_unary_ops_match_numpy(name, reference, op, dtype):
    specials = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 0.5, 1.5, 2.5, -0.5, 1000.0],
                        dtype)
    for a in [sample((3, 4), dtype), specials, np.zeros((0, 2), dtype), np.array(0.25, dtype)]:
        with np.errstate(all="ignore"):
            expected = reference(a.astype(np.float64))
        assert_close(getattr(xdev.math, name)(on_cpu(a)), expected, a)
    ints = on_cpu(np.array([1, 2], np.int32))
    if name == "round":  # tf.round: an integer tensor is already round
        assert getattr(xdev.math, name)(ints) is ints
        return
    with pytest.raises(xdev.errors.InvalidArgumentError, match=op):
        getattr(xdev.math, name)(ints)


@pytest.mark.parametrize("dtype", NUMBERS)
@pytest.mark.parametrize("name,reference", EXACT_UNARY)
def test_abs_sign_square_take_every_number_dtype(name, reference, dtype):
    a = sample((2, 5), dtype, nan=True)
    got = getattr(xdev.math, name)(on_cpu(a))
    assert got.dtype == xdev.as_dtype(dtype)
    np.testing.assert_array_equal(got.numpy(), reference(a))
    np.testing.assert_array_equal(getattr(xdev.math, name)(on_cpu(a[:0])).numpy(), a[:0])


def test_top_level_names_and_tensor_likes():
    a = np.array([0.5, -1.0, 2.0], np.float32)
    for name in ["abs", "exp", "sqrt", "square", "sign", "sin", "cos", "tanh", "sigmoid",
                 "round", "floor"]:
        assert getattr(xdev, name) is getattr(xdev.math, name)
    assert xdev.nn.sigmoid is xdev.math.sigmoid and xdev.nn.softplus is xdev.math.softplus
    assert_close(xdev.exp([0.5, -1.0, 2.0]), np.exp(a.astype(np.float64)), a)
    assert_close(xdev.exp(a), np.exp(a.astype(np.float64)), a)
    assert xdev.exp(1.0).dtype == xdev.float32
    np.testing.assert_array_equal(xdev.abs([-1, 2]).numpy(), [1, 2])
    assert xdev.abs([-1, 2]).dtype == xdev.int32


@pytest.mark.parametrize("dtype", NUMBERS)
@pytest.mark.parametrize("shapes", BROADCASTS)
def test_binary_math_matches_numpy_with_broadcasting(dtype, shapes):
    a, b = sample(shapes[0], dtype, nan=True), sample(shapes[1], dtype)
    if np.dtype(dtype).kind == "i":
        b = np.where(b == 0, 7, b).astype(dtype)
    x, y = on_cpu(a), on_cpu(b)
    np.testing.assert_array_equal(xdev.maximum(x, y).numpy(), np.maximum(a, b))
    np.testing.assert_array_equal(xdev.minimum(x, y).numpy(), np.minimum(a, b))
    np.testing.assert_array_equal(xdev.math.squared_difference(x, y).numpy(),
                                  np.square(a - b))
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(xdev.math.floordiv(x, y).numpy(), np.floor_divide(a, b))
        np.testing.assert_array_equal(xdev.math.floormod(x, y).numpy(), np.mod(a, b))
        np.testing.assert_array_equal((x // y).numpy(), np.floor_divide(a, b))
        np.testing.assert_array_equal((x % y).numpy(), np.mod(a, b))
    assert xdev.math.mod is xdev.math.floormod
    if np.dtype(dtype).kind == "f":
        with np.errstate(all="ignore"):
            expected = np.power(a.astype(np.float64), b.astype(np.float64))
        assert_close(xdev.math.pow(x, y), expected)
        assert_close(x ** y, expected)


def test_binary_math_edge_cases():
    i = on_cpu(np.array([7, -7, 5, np.iinfo(np.int32).min], np.int32))
    z = on_cpu(np.array([3, 3, -2, -1], np.int32))
    # MIN // -1 wraps (docs/ops.md).
    np.testing.assert_array_equal(xdev.math.floordiv(i, z).numpy(),
                                  [2, -3, -3, np.iinfo(np.int32).min])
    np.testing.assert_array_equal(xdev.math.floormod(i, z).numpy(), [1, 2, -1, 0])
    # A zero integer divisor is TensorFlow's InvalidArgumentError (it used to give 0).
    for f in (xdev.math.floordiv, xdev.math.floormod, xdev.truncatediv):
        with pytest.raises(xdev.errors.InvalidArgumentError, match="integer division by zero"):
            f(i, on_cpu(np.array([1, 0, 1, 1], np.int32)))
    with pytest.raises(xdev.errors.InvalidArgumentError, match="integer division by zero"):
        i // 0
    np.testing.assert_array_equal((7 // on_cpu(np.array([2, -2], np.int32))).numpy(), [3, -4])
    np.testing.assert_array_equal((on_cpu(np.array([7.5], np.float32)) % 2).numpy(), [1.5])
    # Python numbers take the tensor's dtype, on either side.
    np.testing.assert_array_equal(xdev.maximum(on_cpu(np.array([1.0, -1.0])), 0).numpy(),
                                  [1.0, 0.0])
    np.testing.assert_array_equal(xdev.minimum(3, on_cpu(np.array([1, 5], np.int64))).numpy(),
                                  [1, 3])
    # Integer powers have no kernel: computed on the host, with the same result dtype.
    p = xdev.pow(on_cpu(np.array([2, 3], np.int64)), 3)
    assert p.dtype == xdev.int64
    np.testing.assert_array_equal(p.numpy(), [8, 27])


COMPARISONS = [("equal", np.equal, "Equal"), ("not_equal", np.not_equal, "NotEqual"),
               ("less", np.less, "Less"), ("less_equal", np.less_equal, "LessEqual"),
               ("greater", np.greater, "Greater"),
               ("greater_equal", np.greater_equal, "GreaterEqual")]


@pytest.mark.parametrize("dtype", NUMBERS)
@pytest.mark.parametrize("shapes", BROADCASTS)
@pytest.mark.parametrize("name,reference,op", COMPARISONS)
def test_comparisons_match_numpy(name, reference, op, dtype, shapes):
    a, b = sample(shapes[0], dtype, nan=True), sample(shapes[1], dtype)
    if a.size and b.size:
        b.flat[0] = a.flat[-1]  # some equal elements
    got = getattr(xdev, name)(on_cpu(a), on_cpu(b))
    assert got.dtype == xdev.bool
    np.testing.assert_array_equal(got.numpy(), reference(a, b))
    assert getattr(xdev.math, name) is getattr(xdev, name)


def test_comparisons_run_as_ops_not_on_the_host():
    x = on_cpu(np.array([1.0, np.nan, 3.0], np.float32))
    before = xdev.debugging.placement_counters()["read_backs"]
    results = [x < 2, x >= 3, x == x, x != x, 2.0 > x, xdev.less_equal(x, 1.0)]
    assert xdev.debugging.placement_counters()["read_backs"] == before  # no host fallback
    for got, expected in zip(results, [[True, False, False], [False, False, True],
                                       [True, False, True], [False, True, False],
                                       [True, False, False], [True, False, False]]):
        np.testing.assert_array_equal(got.numpy(), expected)
    b = on_cpu(np.array([True, False]))
    np.testing.assert_array_equal(xdev.equal(b, [True, True]).numpy(), [True, False])
    with pytest.raises(xdev.errors.InvalidArgumentError,
                       match="Less: inputs have different dtypes, x is float32 and y is int32"):
        xdev.less(x, on_cpu(np.array([1, 2, 3], np.int32)))
    with pytest.raises(xdev.errors.InvalidArgumentError, match="Greater"):
        xdev.greater(b, b)


def test_logic_is_nan_is_finite():
    a = np.array([[True, False, True]])
    b = np.array([[True], [False]])
    x, y = on_cpu(a), on_cpu(b)
    np.testing.assert_array_equal(xdev.logical_and(x, y).numpy(), a & b)
    np.testing.assert_array_equal(xdev.logical_or(x, y).numpy(), a | b)
    np.testing.assert_array_equal(xdev.logical_not(x).numpy(), ~a)
    np.testing.assert_array_equal((x & y).numpy(), a & b)
    np.testing.assert_array_equal((x | y).numpy(), a | b)
    np.testing.assert_array_equal((~x).numpy(), ~a)
    np.testing.assert_array_equal(xdev.logical_and([True, False], True).numpy(), [True, False])
    np.testing.assert_array_equal(xdev.logical_not(on_cpu(np.zeros(0, bool))).numpy(),
                                  np.zeros(0, bool))
    with pytest.raises(xdev.errors.InvalidArgumentError, match="LogicalAnd"):
        xdev.logical_and(on_cpu(np.array([1.0])), on_cpu(np.array([1.0])))
    with pytest.raises(xdev.errors.InvalidArgumentError, match="LogicalNot"):
        xdev.logical_not(on_cpu(np.array([1], np.int32)))
    for dtype in FLOATS:
        f = np.array([0.0, np.nan, np.inf, -np.inf, -2.5], dtype)
        np.testing.assert_array_equal(xdev.math.is_nan(on_cpu(f)).numpy(), np.isnan(f))
        np.testing.assert_array_equal(xdev.math.is_finite(on_cpu(f)).numpy(), np.isfinite(f))
    with pytest.raises(xdev.errors.InvalidArgumentError, match="IsNan"):
        xdev.math.is_nan(on_cpu(np.array([1], np.int64)))


@pytest.mark.parametrize("dtype", NUMBERS)
def test_where_and_clip_by_value_match_numpy(dtype):
    c = np.array([[True, False, True], [False, False, True]])
    a, b = sample((2, 3), dtype, nan=True), sample((3,), dtype)
    got = xdev.where(on_cpu(c), on_cpu(a), on_cpu(b))
    assert got.dtype == xdev.as_dtype(dtype)
    np.testing.assert_array_equal(got.numpy(), np.where(c, a, b))
    np.testing.assert_array_equal(xdev.where(c[0], on_cpu(a), 0).numpy(), np.where(c[0], a, 0))
    lo, hi = np.array(-10, dtype), np.array([[0], [20]], dtype)
    got = xdev.clip_by_value(on_cpu(a), on_cpu(lo), on_cpu(hi))
    np.testing.assert_array_equal(got.numpy(), np.minimum(np.maximum(a, lo), hi))
    np.testing.assert_array_equal(xdev.clip_by_value(on_cpu(a), -5, 5).numpy(),
                                  np.minimum(np.maximum(a, dtype(-5)), dtype(5)))
    empty = np.zeros((0, 3), dtype)
    np.testing.assert_array_equal(xdev.clip_by_value(on_cpu(empty), 0, 1).numpy(), empty)


def test_where_errors_and_the_coordinate_form():
    c = np.array([[True, False], [False, True]])
    coords = xdev.where(on_cpu(c))
    assert coords.dtype == xdev.int64
    np.testing.assert_array_equal(coords.numpy(), np.argwhere(c))
    with pytest.raises(ValueError, match="x and y must both be given"):
        xdev.where(c, x=1.0)
    with pytest.raises(xdev.errors.InvalidArgumentError, match="Select"):
        xdev.where(on_cpu(np.array([1.0, 0.0])), 1.0, 2.0)
    with pytest.raises(xdev.errors.InvalidArgumentError, match="Select"):
        xdev.where(c, on_cpu(np.ones((3, 3), np.float32)), 2.0)
    with pytest.raises(xdev.errors.InvalidArgumentError, match="Where: condition must be bool"):
        xdev.where(on_cpu(np.array([1.0])))
    with pytest.raises(xdev.errors.InvalidArgumentError, match="ClipByValue"):
        xdev.clip_by_value(on_cpu(np.ones(3, np.float32)), on_cpu(np.zeros(2, np.float32)), 1.0)


REDUCTIONS = [("reduce_max", np.max), ("reduce_min", np.min), ("reduce_prod", np.prod)]
AXES = [None, 0, -1, [0, 2], (1,)]


@pytest.mark.parametrize("dtype", NUMBERS)
@pytest.mark.parametrize("name,reference", REDUCTIONS)
@pytest.mark.parametrize("axis", AXES)
@pytest.mark.parametrize("keepdims", [False, True])
def test_reductions_match_numpy(name, reference, dtype, axis, keepdims):
    a = sample((2, 3, 4), dtype)
    if name == "reduce_prod":
        a = (a % 3 + 1).astype(dtype) if np.dtype(dtype).kind == "i" else a / 4
    np_axis = tuple(axis) if isinstance(axis, list) else axis
    got = getattr(xdev, name)(on_cpu(a), axis=axis, keepdims=keepdims)
    assert got.dtype == xdev.as_dtype(dtype)
    expected = reference(a, axis=np_axis, keepdims=keepdims)
    if name == "reduce_prod" and np.dtype(dtype).kind == "f":
        assert_close(got, reference(a.astype(np.float64), axis=np_axis, keepdims=keepdims))
    else:
        np.testing.assert_array_equal(got.numpy(), expected)
    assert getattr(xdev.math, name) is getattr(xdev, name)


def test_axis_takes_numpy_integers_and_integer_scalar_tensors():
    a = sample((2, 3), np.float32)
    for axis in [np.int64(1), np.int32(-1), on_cpu(np.array(1, np.int32)), [np.int64(0)]]:
        expected = a.max(axis=tuple(int(i) for i in axis) if isinstance(axis, list) else int(axis))
        np.testing.assert_array_equal(xdev.reduce_max(a, axis=axis).numpy(), expected)
    np.testing.assert_array_equal(xdev.argmax(a, np.int64(1)).numpy(), a.argmax(axis=1))


def test_reductions_over_nan_and_zero_elements():
    a = np.array([[1.0, np.nan, 3.0], [4.0, 5.0, 6.0]], np.float32)
    np.testing.assert_array_equal(xdev.reduce_max(a, axis=1).numpy(), [np.nan, 6.0])
    np.testing.assert_array_equal(xdev.reduce_min(a, axis=1).numpy(), [np.nan, 4.0])
    empty = on_cpu(np.zeros((0, 2), np.float32))
    np.testing.assert_array_equal(xdev.reduce_max(empty, axis=0).numpy(), [-np.inf, -np.inf])
    np.testing.assert_array_equal(xdev.reduce_min(empty).numpy(), np.inf)
    np.testing.assert_array_equal(xdev.reduce_prod(empty, axis=0).numpy(), [1.0, 1.0])
    np.testing.assert_array_equal(xdev.reduce_logsumexp(empty, axis=0).numpy(),
                                  [-np.inf, -np.inf])
    ints = on_cpu(np.zeros((0,), np.int32))
    assert xdev.reduce_max(ints).numpy() == np.iinfo(np.int32).min
    assert xdev.reduce_min(ints).numpy() == np.iinfo(np.int32).max
    assert xdev.reduce_any(np.zeros(0, bool)).numpy() == np.False_
    assert xdev.reduce_all(np.zeros(0, bool)).numpy() == np.True_


@pytest.mark.parametrize("axis", [None, 0, 1, [0, 1]])
def test_any_all_match_numpy(axis):
    a = np.array([[True, False, False], [True, True, True]])
    np_axis = tuple(axis) if isinstance(axis, list) else axis
    for name, reference in [("reduce_any", np.any), ("reduce_all", np.all)]:
        got = getattr(xdev, name)(on_cpu(a), axis=axis)
        assert got.dtype == xdev.bool
        np.testing.assert_array_equal(got.numpy(), reference(a, axis=np_axis))
        with pytest.raises(xdev.errors.InvalidArgumentError,
                           match="Any" if name == "reduce_any" else "All"):
            getattr(xdev, name)(on_cpu(np.ones(2, np.float32)))


@pytest.mark.parametrize("dtype", FLOATS)
def test_logsumexp_matches_numpy_without_overflow(dtype):
    a = sample((3, 4), dtype, nan=True)
    ref = a.astype(np.float64)
    for axis, keepdims in [(None, False), (1, False), (0, True), ([0, 1], True)]:
        np_axis = tuple(axis) if isinstance(axis, list) else axis
        with np.errstate(invalid="ignore"):
            m = np.max(ref, axis=np_axis, keepdims=True)
            expected = m + np.log(np.sum(np.exp(ref - m), axis=np_axis, keepdims=True))
        if not keepdims:
            expected = np.squeeze(expected, axis=np_axis)
        assert_close(xdev.reduce_logsumexp(on_cpu(a), axis=axis, keepdims=keepdims), expected)
    assert_close(xdev.math.reduce_logsumexp(np.array([1000.0, 1000.0], dtype)),
                 1000 + math.log(2))
    with pytest.raises(xdev.errors.InvalidArgumentError, match="LogSumExp"):
        xdev.reduce_logsumexp(on_cpu(np.ones(2, np.int32)))


@pytest.mark.parametrize("dtype", NUMBERS)
def test_argmax_argmin_match_numpy(dtype):
    a = sample((3, 5), dtype)
    a[1, 3] = a[1, 1]  # ties: the first index
    for axis in [None, 0, 1, -1]:
        np_axis = 0 if axis is None else axis
        for name, reference in [("argmax", np.argmax), ("argmin", np.argmin)]:
            got = getattr(xdev, name)(on_cpu(a), axis)
            assert got.dtype == xdev.int64
            np.testing.assert_array_equal(got.numpy(), reference(a, axis=np_axis))
            got = getattr(xdev.math, name)(a, axis=axis, output_type=xdev.int32)
            assert got.dtype == xdev.int32
            np.testing.assert_array_equal(got.numpy(), reference(a, axis=np_axis))


def test_argmax_nan_and_errors():
    a = np.array([[1.0, np.nan, 5.0, np.nan], [2.0, 0.0, -1.0, 7.0]], np.float32)
    np.testing.assert_array_equal(xdev.argmax(a, 1).numpy(), np.argmax(a, axis=1))
    np.testing.assert_array_equal(xdev.argmin(a, 1).numpy(), np.argmin(a, axis=1))
    with pytest.raises(xdev.errors.InvalidArgumentError, match="ArgMax"):
        xdev.argmax(a, 2)
    with pytest.raises(xdev.errors.InvalidArgumentError, match="ArgMin: output_type must be"):
        xdev.argmin(a, 0, output_type=xdev.float32)


def _np_cumsum(a, axis, exclusive, reverse):
    if reverse:
        a = np.flip(a, axis)
    out = np.cumsum(a, axis=axis, dtype=a.dtype)
    if exclusive:
        out = out - a
    return np.flip(out, axis) if reverse else out


@pytest.mark.parametrize("dtype", NUMBERS)
@pytest.mark.parametrize("exclusive", [False, True])
@pytest.mark.parametrize("reverse", [False, True])
def test_cumsum_matches_numpy(dtype, exclusive, reverse):
    a = sample((3, 4), dtype)
    if np.dtype(dtype).kind == "f":
        a = np.round(a * 8) / 8  # exact sums in any order
    for axis in [0, 1, -1]:
        got = xdev.cumsum(on_cpu(a), axis=axis, exclusive=exclusive, reverse=reverse)
        assert got.dtype == xdev.as_dtype(dtype)
        np.testing.assert_array_equal(got.numpy(), _np_cumsum(a, axis, exclusive, reverse))
    np.testing.assert_array_equal(xdev.math.cumsum([1, 2, 3]).numpy(), [1, 3, 6])
    empty = np.zeros((0, 2), dtype)
    np.testing.assert_array_equal(xdev.cumsum(on_cpu(empty), 1, exclusive, reverse).numpy(),
                                  empty)
    with pytest.raises(xdev.errors.InvalidArgumentError, match="CumSum"):
        xdev.cumsum(on_cpu(a), axis=2)


@pytest.mark.parametrize("dtype", FLOATS)
def test_softmax_and_log_softmax_match_numpy(dtype):
    a = sample((3, 4), dtype) * 100  # large logits must not overflow
    ref = a.astype(np.float64)
    for axis in [None, -1, 0]:
        np_axis = -1 if axis is None else axis
        shifted = ref - ref.max(axis=np_axis, keepdims=True)
        total = np.exp(shifted).sum(axis=np_axis, keepdims=True)
        # docs/ops.md: (8 + ⌈log2(n + 1)⌉) ulp relative (of 1 + |want| for LogSoftmax),
        # doubled for float64, whose reference here is computed in float64 too.
        n = a.shape[np_axis]
        ulps = (8 + math.ceil(math.log2(n + 1))) * (2 if dtype == np.float64 else 1)
        tol = ulps * np.finfo(dtype).eps
        want = np.exp(shifted) / total
        got = xdev.nn.softmax(on_cpu(a), axis=axis).numpy()
        # (below float32's normal range the result may flush to 0)
        assert got.dtype == dtype
        assert np.all(np.abs(got - want) <= tol * want + np.finfo(dtype).tiny), (got, want)
        want = shifted - np.log(total)
        got = xdev.nn.log_softmax(on_cpu(a), axis=axis).numpy()
        assert np.all(np.abs(got - want) <= tol * (1 + np.abs(want))), (got, want)
    assert xdev.math.log_softmax is xdev.nn.log_softmax
    p = xdev.nn.softmax([[1.0, np.nan], [0.0, 0.0]]).numpy()
    assert np.isnan(p[0]).all()
    np.testing.assert_array_equal(p[1], [0.5, 0.5])
    with pytest.raises(xdev.errors.InvalidArgumentError, match="Softmax"):
        xdev.nn.softmax(on_cpu(np.ones((2, 2), np.int32)))
    with pytest.raises(xdev.errors.InvalidArgumentError, match="LogSoftmax"):
        xdev.nn.log_softmax(on_cpu(np.ones((2, 2), dtype)), axis=2)


@pytest.mark.parametrize("dtype", FLOATS)
def test_activations_match_numpy(dtype):
    a = np.concatenate([sample((10,), dtype), np.array([np.nan, 0.0, -0.0, 50.0], dtype)])
    ref = a.astype(np.float64)
    assert_close(xdev.nn.gelu(on_cpu(a)), _gelu(ref), a)
    assert_close(xdev.nn.gelu(on_cpu(a), approximate=True), _gelu_tanh(ref), a)
    assert_close(xdev.nn.gelu(a, True), _gelu_tanh(ref), a)
    np.testing.assert_array_equal(xdev.nn.leaky_relu(on_cpu(a)).numpy(),
                                  np.where(a > 0, a, a * dtype(0.2)))
    np.testing.assert_array_equal(xdev.nn.leaky_relu(on_cpu(a), alpha=0.5).numpy(),
                                  np.where(a > 0, a, a * dtype(0.5)))
    assert xdev.nn.leaky_relu([[-1.0]]).shape == (1, 1)
    with pytest.raises(xdev.errors.InvalidArgumentError, match="Gelu"):
        xdev.nn.gelu(on_cpu(np.ones(2, np.int32)))
    # Integers are cast to float32 first, as tf.nn.leaky_relu does.
    got = xdev.nn.leaky_relu(on_cpu(np.array([-5, 3], np.int64)))
    assert got.dtype == xdev.float32
    np.testing.assert_array_equal(got.numpy(), np.array([-1.0, 3.0], np.float32))


def test_abs_operator_and_dtype_mismatches_name_the_op():
    x = on_cpu(np.array([-1.5, 2.0], np.float32))
    np.testing.assert_array_equal(abs(x).numpy(), [1.5, 2.0])
    i = on_cpu(np.array([1, 2], np.int32))
    for fn, op in [(xdev.maximum, "Maximum"), (xdev.math.floordiv, "FloorDiv"),
                   (xdev.math.squared_difference, "SquaredDifference"),
                   (xdev.equal, "Equal"), (xdev.pow, "Pow")]:
        with pytest.raises(xdev.errors.InvalidArgumentError,
                           match=f"{op}: inputs have different dtypes"):
            fn(x, on_cpu(np.array([1.0, 2.0], np.float64)))
    with pytest.raises(xdev.errors.InvalidArgumentError, match="Maximum"):
        xdev.maximum(x, on_cpu(np.ones(3, np.float32)))
    with pytest.raises(xdev.errors.InvalidArgumentError, match="Cannot convert 0.5"):
        xdev.maximum(i, 0.5)
    with pytest.raises(xdev.errors.InvalidArgumentError, match="Max"):
        xdev.reduce_max(x, axis=3)


@pytest.mark.parametrize("dtype", FLOATS)
def test_nn_bias_add_cross_entropy_layer_norm_and_dropout_match_numpy(dtype):
    rng = np.random.default_rng(5)
    x = rng.uniform(-2, 2, (3, 4, 5)).astype(dtype)
    b5, b4 = rng.uniform(-1, 1, 5).astype(dtype), rng.uniform(-1, 1, 4).astype(dtype)
    np.testing.assert_array_equal(xdev.nn.bias_add(on_cpu(x), on_cpu(b5)).numpy(), x + b5)
    np.testing.assert_array_equal(xdev.nn.bias_add(on_cpu(x), on_cpu(b4), data_format="NCHW").numpy(),
                                  x + b4[None, :, None])
    with pytest.raises(xdev.errors.InvalidArgumentError, match="BiasAdd.*data_format"):
        xdev.nn.bias_add(on_cpu(x), on_cpu(b5), data_format="NCWH")

    logits = rng.uniform(-3, 3, (6, 7)).astype(dtype)
    labels = rng.dirichlet(np.ones(7), 6).astype(dtype)
    shifted = logits - logits.max(axis=1, keepdims=True)
    log_p = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
    tol = 1e-5 if dtype == np.float32 else 1e-12
    loss, backprop = xdev.nn.softmax_cross_entropy_with_logits_raw(on_cpu(logits), on_cpu(labels))
    np.testing.assert_allclose(loss.numpy(), -(labels * log_p).sum(axis=1), rtol=tol, atol=tol)
    np.testing.assert_allclose(backprop.numpy(), np.exp(log_p) - labels, rtol=tol, atol=tol)
    np.testing.assert_allclose(
        xdev.nn.softmax_cross_entropy_with_logits(labels=on_cpu(labels), logits=on_cpu(logits)).numpy(),
        loss.numpy())

    gamma, beta = rng.uniform(0.5, 2, (4, 5)).astype(dtype), rng.uniform(-1, 1, (4, 5)).astype(dtype)
    mean = x.mean(axis=(1, 2), keepdims=True, dtype=np.float64)
    var = ((x - mean) ** 2).mean(axis=(1, 2), keepdims=True)
    want = (x - mean) / np.sqrt(var + 1e-3) * gamma + beta
    got = xdev.nn.layer_norm(on_cpu(x), on_cpu(gamma), on_cpu(beta), begin_norm_axis=1).numpy()
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)
    with pytest.raises(xdev.errors.InvalidArgumentError, match="LayerNorm.*gamma"):
        xdev.nn.layer_norm(on_cpu(x), on_cpu(gamma), on_cpu(beta), begin_norm_axis=2)

    ones = np.ones((50, 40), dtype)
    kept = xdev.nn.dropout(on_cpu(ones), 0.5, seed=3).numpy()
    assert set(np.unique(kept)) <= {0.0, 2.0}
    np.testing.assert_array_equal(xdev.nn.dropout(on_cpu(ones), 0.5, seed=3).numpy(), kept)


def _conv2d_numpy(x, w, stride):
    """NHWC VALID cross-correlation, plainly."""
    n, h, wd, c = x.shape
    kh, kw, _, f = w.shape
    oh, ow = (h - kh) // stride + 1, (wd - kw) // stride + 1
    out = np.zeros((n, oh, ow, f), np.float64)
    for i in range(oh):
        for j in range(ow):
            patch = x[:, i * stride:i * stride + kh, j * stride:j * stride + kw, :].astype(np.float64)
            out[:, i, j, :] = np.tensordot(patch, w.astype(np.float64), axes=([1, 2, 3], [0, 1, 2]))
    return out


@pytest.mark.parametrize("dtype", FLOATS)
def test_nn_conv2d_and_pools_match_numpy(dtype):
    rng = np.random.default_rng(7)
    x = rng.uniform(-1, 1, (2, 7, 6, 3)).astype(dtype)
    w = rng.uniform(-1, 1, (3, 2, 3, 4)).astype(dtype)
    tol = 1e-5 if dtype == np.float32 else 1e-12
    got = xdev.nn.conv2d(on_cpu(x), on_cpu(w), strides=2, padding="VALID").numpy()
    np.testing.assert_allclose(got, _conv2d_numpy(x, w, 2), rtol=tol, atol=tol)
    # TF's four strides and NCHW give the same values, transposed.
    nchw = xdev.nn.conv2d(on_cpu(x.transpose(0, 3, 1, 2).copy()), on_cpu(w), strides=[1, 1, 2, 2],
                          padding="VALID", data_format="NCHW").numpy()
    np.testing.assert_allclose(nchw.transpose(0, 2, 3, 1), got, rtol=tol, atol=tol)
    with pytest.raises(xdev.errors.InvalidArgumentError, match="Conv2D: filter in_channels 3"):
        xdev.nn.conv2d(on_cpu(x[..., :2].copy()), on_cpu(w), strides=1, padding="SAME")

    image = np.arange(1, 10, dtype=dtype).reshape(1, 3, 3, 1)
    np.testing.assert_array_equal(xdev.nn.max_pool(on_cpu(image), 2, 1, "VALID").numpy().ravel(),
                                  [5, 6, 8, 9])
    np.testing.assert_array_equal(xdev.nn.avg_pool(on_cpu(image), 2, 1, "SAME").numpy().ravel(),
                                  [3, 4, 4.5, 6, 7, 7.5, 7.5, 8.5, 9])
    pooled = xdev.nn.max_pool(on_cpu(image), 2, 1, "VALID")
    grad = np.ones((1, 2, 2, 1), dtype)
    np.testing.assert_array_equal(
        xdev.nn.max_pool_grad(on_cpu(image), pooled, on_cpu(grad), 2, 1, "VALID").numpy().ravel(),
        [0, 0, 0, 0, 1, 1, 0, 1, 1])
    np.testing.assert_array_equal(
        xdev.nn.avg_pool_grad([1, 3, 3, 1], on_cpu(grad), 2, 1, "VALID").numpy().ravel(),
        [0.25, 0.5, 0.25, 0.5, 1, 0.5, 0.25, 0.5, 0.25])
    dy = rng.uniform(-1, 1, got.shape).astype(dtype)
    dx = xdev.nn.conv2d_backprop_input(x.shape, on_cpu(w), on_cpu(dy), 2, "VALID").numpy()
    dw = xdev.nn.conv2d_backprop_filter(on_cpu(x), w.shape, on_cpu(dy), 2, "VALID").numpy()
    # <conv(x, w), dy> is linear in each: <dx, x> = <dw, w> = <conv(x, w), dy>.
    inner = float((got.astype(np.float64) * dy).sum())
    np.testing.assert_allclose(float((dx.astype(np.float64) * x).sum()), inner, rtol=1e-4)
    np.testing.assert_allclose(float((dw.astype(np.float64) * w).sum()), inner, rtol=1e-4)
