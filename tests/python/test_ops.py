"""Every op of the op table, the operators and indexing, against NumPy."""

import numpy as np
import pytest

import xdev
from conftest import CPU0, GPU0, needs_sim

RNG = np.random.default_rng(7)
FLOATS = [np.float32, np.float64]
NUMBERS = [np.float32, np.float64, np.int32, np.int64]


def sample(shape, dtype):
    if np.dtype(dtype).kind == "f":
        return RNG.standard_normal(shape).astype(dtype)
    return RNG.integers(-50, 50, size=shape).astype(dtype)


def on_cpu(array):
    with xdev.device("/CPU:0"):
        return xdev.constant(array)


@pytest.mark.parametrize("dtype", NUMBERS)
@pytest.mark.parametrize("shapes", [((2, 3), (2, 3)), ((4, 1, 3), (2, 1)), ((3,), ()),
                                    ((0, 3), (3,))])
def test_elementwise_ops_match_numpy_with_broadcasting(dtype, shapes):
    a, b = sample(shapes[0], dtype), sample(shapes[1], dtype)
    b = np.where(b == 0, 1, b).astype(dtype)
    x, y = on_cpu(a), on_cpu(b)
    np.testing.assert_array_equal(xdev.add(x, y).numpy(), a + b)
    np.testing.assert_array_equal(xdev.subtract(x, y).numpy(), a - b)
    np.testing.assert_array_equal(xdev.multiply(x, y).numpy(), a * b)
    np.testing.assert_array_equal((x + y).numpy(), a + b)
    np.testing.assert_array_equal((x - y).numpy(), a - b)
    np.testing.assert_array_equal((x * y).numpy(), a * b)
    np.testing.assert_array_equal((-x).numpy(), -a)
    np.testing.assert_array_equal(xdev.negative(x).numpy(), -a)
    np.testing.assert_array_equal(xdev.nn.relu(x).numpy(), np.maximum(a, 0))
    if np.dtype(dtype).kind == "f":
        np.testing.assert_array_equal((x / y).numpy(), a / b)
        np.testing.assert_array_equal(xdev.truncatediv(x, y).numpy(), a / b)
    else:
        # TensorFlow's `/`: true division, integers as float64.
        quotient = x / y
        assert quotient.dtype == xdev.float64
        np.testing.assert_array_equal(quotient.numpy(), a.astype(np.float64) / b)
        # xdev's Div: toward zero (docs/ops.md).
        np.testing.assert_array_equal(xdev.truncatediv(x, y).numpy(),
                                      np.trunc(a / b).astype(dtype))


def test_results_keep_dtype_shape_and_device():
    x = on_cpu(np.ones((2, 3), np.float32))
    with xdev.device("/CPU:0"):
        y = x + x
    assert y.dtype == xdev.float32
    assert y.shape == (2, 3)
    assert y.device == CPU0
    assert y.ndim == 2
    assert len(y) == 2


@needs_sim
def test_ops_without_a_scope_go_to_the_highest_priority_device():
    # As in TensorFlow: inputs on the CPU, the op on the GPU (inputs copied there).
    x = on_cpu(np.ones((2, 3), np.float32))
    assert (x + x).device == GPU0


@pytest.mark.parametrize("dtype", NUMBERS)
@pytest.mark.parametrize("ta", [False, True])
@pytest.mark.parametrize("tb", [False, True])
def test_matmul_matches_numpy(dtype, ta, tb):
    a, b = sample((4, 3), dtype), sample((3, 5), dtype)
    a_in = a.T.copy() if ta else a
    b_in = b.T.copy() if tb else b
    got = xdev.matmul(on_cpu(a_in), on_cpu(b_in), transpose_a=ta, transpose_b=tb).numpy()
    expected = a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_allclose(got, expected.astype(dtype), rtol=1e-5)
    np.testing.assert_allclose((on_cpu(a) @ on_cpu(b)).numpy(), expected.astype(dtype), rtol=1e-5)


def test_the_walkthrough_product():
    a = xdev.constant([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    b = xdev.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    c = xdev.matmul(a, b)
    assert str(c) == "tf.Tensor(\n[[22. 28.]\n [49. 64.]], shape=(2, 2), dtype=float32)"
    np.testing.assert_array_equal(c.numpy(), [[22, 28], [49, 64]])


@pytest.mark.parametrize("dtype", NUMBERS)
@pytest.mark.parametrize("axis", [None, 0, 1, -1, [0, 2], (1,)])
@pytest.mark.parametrize("keepdims", [False, True])
def test_reductions_match_numpy(dtype, axis, keepdims):
    a = sample((3, 4, 5), dtype)
    x = on_cpu(a)
    np_axis = tuple(axis) if isinstance(axis, (list, tuple)) else axis
    s = xdev.reduce_sum(x, axis=axis, keepdims=keepdims).numpy()
    m = xdev.reduce_mean(x, axis=axis, keepdims=keepdims).numpy()
    np.testing.assert_allclose(s, np.sum(a, axis=np_axis, keepdims=keepdims).astype(dtype),
                               rtol=1e-5)
    if np.dtype(dtype).kind == "f":
        np.testing.assert_allclose(m, np.mean(a, axis=np_axis, keepdims=keepdims), rtol=1e-5)
    else:  # the integer sum divided toward zero (docs/ops.md)
        total = np.sum(a, axis=np_axis, keepdims=keepdims)
        count = a.size // np.asarray(total).size
        np.testing.assert_array_equal(m, np.trunc(total / count).astype(dtype))


@pytest.mark.parametrize("axis", [[], (), np.array([], np.int64)])
def test_an_empty_axis_list_reduces_nothing_as_in_tensorflow(axis):
    # tf.reduce_sum(x, axis=[]) is x (no axis reduced); None is the total.
    a = np.array([[1.5, -2.0, 3.0], [4.0, np.inf, -np.inf]], np.float32)
    x = on_cpu(a)
    for fn in (xdev.reduce_sum, xdev.reduce_mean, xdev.reduce_max, xdev.reduce_min,
               xdev.reduce_prod, xdev.reduce_logsumexp):
        out = fn(x, axis=axis)
        assert out.shape == (2, 3), fn.__name__
        np.testing.assert_array_equal(out.numpy(), a, err_msg=fn.__name__)
        assert fn(x, axis=axis, keepdims=True).shape == (2, 3), fn.__name__
    i = on_cpu(np.array([[7, -3]], np.int32))
    np.testing.assert_array_equal(xdev.reduce_mean(i, axis=[]).numpy(), [[7, -3]])
    b = on_cpu(np.array([True, False]))
    assert xdev.reduce_any(b, axis=[]).numpy().tolist() == [True, False]
    assert xdev.reduce_all(b, axis=[]).numpy().tolist() == [True, False]
    assert float(xdev.reduce_sum(on_cpu(a[:, :1]), axis=None).numpy()) == 5.5
    # The op's dtype rules still hold: Any takes bool alone.
    with pytest.raises(xdev.errors.InvalidArgumentError):
        xdev.reduce_any(x, axis=[])


def test_gradients_through_a_reduction_over_no_axis():
    # Max/Min and Prod gradients re-reduce over the recorded axes: over none,
    # each element is its own extreme and its own product.
    x = xdev.Variable(on_cpu(np.array([[2.0, -1.0], [3.0, 0.0]], np.float32)))
    for fn, expected in ((xdev.reduce_max, [[1, 1], [1, 1]]), (xdev.reduce_prod, [[1, 1], [1, 1]]),
                         (xdev.reduce_sum, [[1, 1], [1, 1]])):
        with xdev.GradientTape() as tape:
            y = xdev.reduce_sum(fn(x, axis=[]) * on_cpu(np.ones((2, 2), np.float32)))
        np.testing.assert_array_equal(tape.gradient(y, x).numpy(), expected, err_msg=fn.__name__)


def test_add_n_cast_transpose_reshape():
    a, b, c = (sample((2, 3), np.float32) for _ in range(3))
    np.testing.assert_allclose(xdev.add_n([on_cpu(a), on_cpu(b), on_cpu(c)]).numpy(),
                               a + b + c, rtol=1e-6)
    x = on_cpu(np.array([[-1.7, 0.2], [3.9, 1e10]], np.float32))
    np.testing.assert_array_equal(xdev.cast(x, xdev.int32).numpy(),
                                  [[-1, 0], [3, np.iinfo(np.int32).max]])  # saturates
    assert xdev.cast(x, "float64").dtype == xdev.float64
    assert xdev.cast(x, np.bool_).numpy().tolist() == [[True, True], [True, True]]
    t = sample((2, 3, 4), np.float32)
    np.testing.assert_array_equal(xdev.transpose(on_cpu(t)).numpy(), t.transpose())
    np.testing.assert_array_equal(xdev.transpose(on_cpu(t), perm=[1, 0, 2]).numpy(),
                                  t.transpose(1, 0, 2))
    np.testing.assert_array_equal(xdev.reshape(on_cpu(t), [4, -1]).numpy(), t.reshape(4, -1))


def test_creation_functions():
    z = xdev.zeros([2, 3])
    assert z.dtype == xdev.float32 and z.shape == (2, 3)
    np.testing.assert_array_equal(z.numpy(), np.zeros((2, 3)))
    np.testing.assert_array_equal(xdev.ones([2], dtype=xdev.int64).numpy(), [1, 1])
    f = xdev.fill([2, 2], 7)
    assert f.dtype == xdev.int32
    np.testing.assert_array_equal(f.numpy(), np.full((2, 2), 7))
    assert xdev.fill([1], 2.5).dtype == xdev.float32
    assert xdev.fill([1], True).numpy().tolist() == [True]
    np.testing.assert_array_equal(xdev.zeros_like(f).numpy(), np.zeros((2, 2)))
    np.testing.assert_array_equal(xdev.ones_like(f, dtype="float64").numpy(), np.ones((2, 2)))


def test_random_uniform_is_in_range_and_seeded():
    a = xdev.random.uniform([1000], minval=2, maxval=3, seed=11).numpy()
    assert a.dtype == np.float32
    assert a.min() >= 2 and a.max() < 3
    b = xdev.random.uniform([1000], minval=2, maxval=3, seed=11).numpy()
    np.testing.assert_array_equal(a, b)
    c = xdev.random.uniform([1000], minval=2, maxval=3, seed=12).numpy()
    assert not np.array_equal(a, c)
    assert xdev.random.uniform([3], dtype=xdev.float64).dtype == xdev.float64
    xdev.random.set_seed(5)
    d = xdev.random.uniform([4]).numpy()
    xdev.random.set_seed(5)
    np.testing.assert_array_equal(d, xdev.random.uniform([4]).numpy())


def test_constant_follows_tensorflow_dtype_rules():
    assert xdev.constant(1).dtype == xdev.int32
    assert xdev.constant(2 ** 40).dtype == xdev.int64
    assert xdev.constant(1.5).dtype == xdev.float32
    assert xdev.constant(True).dtype == xdev.bool
    assert xdev.constant([[1, 2], [3, 4]]).dtype == xdev.int32
    assert xdev.constant([1.0, 2]).dtype == xdev.float32
    assert xdev.constant([]).dtype == xdev.float32
    assert xdev.constant(np.arange(3)).dtype == xdev.int64  # NumPy arrays keep theirs
    assert xdev.constant(np.float64(2)).dtype == xdev.float64
    assert xdev.constant([1, 2], dtype=xdev.float64).dtype == xdev.float64
    np.testing.assert_array_equal(xdev.constant(3.0, shape=[2, 2]).numpy(), np.full((2, 2), 3.0))
    np.testing.assert_array_equal(xdev.constant([1, 2, 3, 4], shape=[2, 2]).numpy(),
                                  [[1, 2], [3, 4]])
    with pytest.raises(xdev.errors.InvalidArgumentError, match="Cannot convert 1.5 to EagerTensor of dtype int32"):
        xdev.constant(1.5, dtype=xdev.int32)
    with pytest.raises(xdev.errors.InvalidArgumentError, match="non-rectangular"):
        xdev.constant([[1, 2], [3]])
    with pytest.raises(xdev.errors.InvalidArgumentError, match="int16 has no xdev dtype"):
        xdev.constant(np.ones(2, np.int16))
    with pytest.raises(xdev.errors.InvalidArgumentError, match="do not fill a shape"):
        xdev.constant([1, 2, 3], shape=[2, 2])


def test_every_dtype_has_its_numpy_type_and_narrow_integers_are_range_checked():
    expected = {xdev.float32: np.float32, xdev.float64: np.float64, xdev.int32: np.int32,
                xdev.int64: np.int64, xdev.bool: np.bool_, xdev.float16: np.float16,
                xdev.uint8: np.uint8, xdev.int8: np.int8}
    for dtype, numpy_type in expected.items():
        assert dtype.as_numpy_dtype is numpy_type, dtype
    try:
        import ml_dtypes
        assert xdev.bfloat16.as_numpy_dtype is ml_dtypes.bfloat16
    except ImportError:
        with pytest.raises(TypeError, match="ml_dtypes"):
            xdev.bfloat16.as_numpy_dtype  # noqa: B018
    assert xdev.uint8.is_integer and xdev.int8.is_integer and not xdev.float16.is_integer
    # Out of the dtype's range is an error, as in TensorFlow, never a wrapped value.
    for value, dtype in ((300, xdev.uint8), (-1, xdev.uint8), (128, xdev.int8), (-129, xdev.int8)):
        with pytest.raises(xdev.errors.InvalidArgumentError,
                           match=f"Cannot convert {value} to EagerTensor of dtype {dtype.name}"):
            xdev.constant(value, dtype=dtype)
    assert xdev.constant(255, dtype=xdev.uint8).numpy() == 255
    assert xdev.constant([-128, 127], dtype=xdev.int8).numpy().tolist() == [-128, 127]
    # A Python number beside a uint8 tensor takes its dtype, range-checked too.
    u = xdev.constant([1, 2], dtype=xdev.uint8)
    cond = xdev.constant([True, False])
    assert xdev.where(cond, u, 7).numpy().tolist() == [1, 7]
    with pytest.raises(xdev.errors.InvalidArgumentError, match="Cannot convert 300"):
        xdev.where(cond, u, 300)


def test_bfloat16_arrays_of_ml_dtypes_go_in_and_come_out_as_they_are():
    ml_dtypes = pytest.importorskip("ml_dtypes", reason="ml_dtypes (bfloat16 for NumPy) is not installed")
    a = np.array([[1.0, -3.5], [0.0078125, 3e38]], dtype=ml_dtypes.bfloat16)
    t = xdev.constant(a)
    assert t.dtype == xdev.bfloat16 and t.shape == (2, 2)
    back = t.numpy()
    assert back.dtype == ml_dtypes.bfloat16 and back.shape == (2, 2)
    np.testing.assert_array_equal(back.view(np.uint16), a.view(np.uint16))  # bit for bit
    np.testing.assert_array_equal(np.asarray(t).view(np.uint16), a.view(np.uint16))
    assert xdev.cast(t, xdev.float32).numpy().tolist() == [[1.0, -3.5], [0.0078125, float(a[1, 1])]]
    hot = xdev.one_hot([0, 2], 3, dtype=xdev.bfloat16).numpy()
    assert hot.shape == (2, 3) and hot.dtype == ml_dtypes.bfloat16
    assert hot.astype(np.float32).tolist() == [[1, 0, 0], [0, 0, 1]]
    assert xdev.constant([1.5, 2.0], dtype=xdev.bfloat16).numpy().astype(np.float32).tolist() == [1.5, 2.0]


def test_python_numbers_take_the_tensor_dtype():
    x = on_cpu(np.array([1.5, 2.5], np.float32))
    assert (x + 1).dtype == xdev.float32
    np.testing.assert_array_equal((x + 1).numpy(), [2.5, 3.5])
    np.testing.assert_array_equal((1 - x).numpy(), [-0.5, -1.5])
    np.testing.assert_array_equal((2 * x).numpy(), [3, 5])
    np.testing.assert_array_equal((3 / x).numpy(), np.float32(3) / np.array([1.5, 2.5], np.float32))
    np.testing.assert_array_equal((x + [1, 2]).numpy(), [2.5, 4.5])
    np.testing.assert_array_equal((x + np.array([1.0, 2.0])).numpy(), [2.5, 4.5])
    i = on_cpu(np.array([1, 2], np.int32))
    np.testing.assert_array_equal((i + 1).numpy(), [2, 3])
    with pytest.raises(xdev.errors.InvalidArgumentError, match="Cannot convert 0.5 to EagerTensor of dtype int32"):
        i + 0.5  # noqa: B018
    with pytest.raises(xdev.errors.InvalidArgumentError,
                       match="Add: inputs have different dtypes, x is int32 and y is float32"):
        i + x  # noqa: B018
    # NumPy on the left defers to the tensor (__array_priority__).
    result = np.array([1.0, 1.0], np.float32) + x
    assert isinstance(result, xdev.Tensor)


def test_pow_and_comparisons_match_numpy():
    a = np.array([[1.5, -2.0, 3.0], [0.0, 4.0, -1.0]], np.float32)
    b = np.array([[2.0, -2.0, 1.0], [0.0, 5.0, -3.0]], np.float32)
    x, y = on_cpu(a), on_cpu(b)
    np.testing.assert_array_equal((x ** 2).numpy(), a ** 2)
    np.testing.assert_array_equal((x ** y).numpy(), np.power(a, b))
    np.testing.assert_array_equal((2 ** x).numpy(), np.float32(2) ** a)
    np.testing.assert_array_equal(xdev.pow(x, 3).numpy(), np.power(a, np.float32(3)))
    for got, expected in [(x < y, a < b), (x <= y, a <= b), (x > y, a > b), (x >= y, a >= b),
                          (x == y, a == b), (x != y, a != b), (x < 1, a < 1)]:
        assert got.dtype == xdev.bool
        np.testing.assert_array_equal(got.numpy(), expected)
        assert got.device == x.device
    i = on_cpu(np.array([2, 3], np.int32))
    np.testing.assert_array_equal((i ** 3).numpy(), [8, 27])
    with pytest.raises(xdev.errors.InvalidArgumentError, match="negative integer powers"):
        i ** -1  # noqa: B018
    with pytest.raises(TypeError, match="unhashable"):
        hash(x)
    assert (x == None) is False and (x != "a") is True  # noqa: E711 -- not tensor-likes
    assert x not in [None, "a"]


INDEX_KEYS = [
    1, -1, (0, 2), (slice(None), 1), slice(1, 3), slice(None, None, 2), (Ellipsis, 0),
    (None, 1), (slice(None), None, slice(1, None)), (1, slice(-3, -1)), slice(5, 1),
    (Ellipsis,), (0, Ellipsis, None), slice(None, None, -1), (slice(None), slice(None, None, -2)),
    np.int64(2), (slice(-100, 100),),
]


@pytest.mark.parametrize("key", INDEX_KEYS, ids=repr)
def test_indexing_matches_numpy(key):
    a = np.arange(3 * 4 * 5, dtype=np.float32).reshape(3, 4, 5)
    x = on_cpu(a)
    got = x[key]
    np.testing.assert_array_equal(got.numpy(), a[key])
    assert got.shape == a[key].shape
    assert got.device == x.device


def test_indexing_makes_views_and_reports_bad_keys():
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    x = on_cpu(a)
    column = x[:, 1]
    assert not column.is_contiguous()  # a view of x's memory
    assert column.strides == [4]
    np.testing.assert_array_equal(xdev.reduce_sum(column).numpy(), a[:, 1].sum())
    assert x[xdev.constant(2)].numpy().tolist() == a[2].tolist()
    with pytest.raises(xdev.errors.InvalidArgumentError, match="index 3 is out of bounds for axis 0 with size 3"):
        x[3]  # noqa: B018
    with pytest.raises(xdev.errors.InvalidArgumentError, match="too many indices"):
        x[0, 0, 0]  # noqa: B018
    with pytest.raises(TypeError, match="Only integers, slices"):
        x["a"]  # noqa: B018
    with pytest.raises(TypeError, match="Only integers, slices"):
        x[1.5]  # noqa: B018
    assert [row.numpy().tolist() for row in x] == a.tolist()


def test_scalars_convert_to_python_numbers():
    assert float(xdev.constant(2.5)) == 2.5
    assert int(xdev.constant(7)) == 7
    assert bool(xdev.constant(True)) is True
    assert xdev.constant(3).item() == 3
    assert [10, 20, 30][xdev.constant(1)] == 20
    with pytest.raises(ValueError, match="ambiguous"):
        bool(xdev.constant([1, 2]))
    with pytest.raises(TypeError, match="len"):
        len(xdev.constant(1.0))


def test_repr_and_str():
    x = xdev.constant([[1.0, 2.0], [3.0, 4.0]])
    # TensorFlow's text: NumPy's, on a line of its own when it has several.
    assert str(x) == "tf.Tensor(\n[[1. 2.]\n [3. 4.]], shape=(2, 2), dtype=float32)"
    assert repr(x) == ("<tf.Tensor: shape=(2, 2), dtype=float32, numpy=\narray([[1., 2.],\n"
                       "       [3., 4.]], dtype=float32)>")
    assert str(xdev.constant([1, 2])) == "tf.Tensor([1 2], shape=(2,), dtype=int32)"
    assert repr(xdev.constant(3)) == "<tf.Tensor: shape=(), dtype=int32, numpy=3>"
    assert repr(xdev.float32) == "xdev.float32"
    assert xdev.float32.as_numpy_dtype is np.float32
    assert xdev.int64.size == 8 and xdev.int64.is_integer and not xdev.int64.is_floating


def test_shape_errors_carry_the_cpp_message():
    with pytest.raises(xdev.errors.InvalidArgumentError) as e:
        xdev.matmul(xdev.zeros([2, 3]), xdev.zeros([2, 3]))
    assert str(e.value) == "MatMul: inner dimensions differ: (2, 3) · (2, 3) (3 vs 2)"
    with pytest.raises(xdev.errors.InvalidArgumentError) as e:
        xdev.zeros([2, 3]) + xdev.zeros([4])
    assert str(e.value) == ("Add: shapes (2, 3) and (4,) cannot be broadcast together "
                            "(dimension 1: 3 vs 4)")


@needs_sim
def test_ops_on_the_simulated_gpu_and_across_devices():
    a = sample((3, 4), np.float32)
    b = sample((4, 2), np.float32)
    with xdev.device("/GPU:0"):
        x, y = xdev.constant(a), xdev.constant(b)
        z = x @ y
    assert z.device == GPU0
    np.testing.assert_allclose(z.numpy(), a @ b, rtol=1e-5)
    # A view of device memory is indexed without touching it; ops read it.
    np.testing.assert_array_equal(x[1:, ::2].numpy(), a[1:, ::2])
    # Inputs on two devices: copied to the op's device.
    s = x + on_cpu(a)
    np.testing.assert_allclose(s.numpy(), a + a)
    # No Cast kernel on the sim GPU: the op falls back to a device that has one.
    with xdev.device("/GPU:0"):
        c = xdev.cast(x, xdev.int32)
    assert c.device == CPU0
    assert x.to("/CPU:0").device == CPU0
    assert x.cpu().device == CPU0
    assert x.to(GPU0) is not None and x.copy_to("/GPU:1").device.endswith("GPU:1")


def test_zero_dimensional_numpy_values_stay_scalars():
    # np.ascontiguousarray made 0-d arrays 1-d: xdev.constant(np.array(0.25)) had shape (1,).
    for value in [np.array(0.25, np.float32), np.float64(2.0), np.array(3, np.int64),
                  np.bool_(True)]:
        assert xdev.constant(value).shape == ()
        assert xdev.convert_to_tensor(value).shape == ()
    assert xdev.constant(np.array(1.5), dtype=xdev.float32).shape == ()
    assert xdev.negative(np.array(0.5)).shape == ()
    assert xdev.pow(np.array(2, np.int32), np.array(3, np.int32)).shape == ()  # host fallback


def assert_products_close(got, x, y):
    """got == x @ y (NumPy's matmul, batches broadcast): integers exactly, floats within the
    rounding of a K-term sum in got's dtype, K * eps * (|x| @ |y|) per element (an element
    that cancels to near 0 keeps the absolute error of its terms)."""
    got = got.numpy() if isinstance(got, xdev.Tensor) else got
    exact = np.matmul(x.astype(np.float64), y.astype(np.float64))
    assert got.shape == exact.shape, (got.shape, exact.shape)
    if np.dtype(x.dtype).kind != "f":
        np.testing.assert_array_equal(got, exact.astype(x.dtype))
        return
    bound = x.shape[-1] * np.finfo(x.dtype).eps * np.matmul(np.abs(x).astype(np.float64),
                                                           np.abs(y).astype(np.float64))
    assert np.all(np.abs(got - exact) <= bound), np.max(np.abs(got - exact) - bound)


@pytest.mark.parametrize("dtype", NUMBERS)
@pytest.mark.parametrize("adj_x", [False, True])
@pytest.mark.parametrize("adj_y", [False, True])
def test_batch_matmul_broadcasts_batches_like_numpy(dtype, adj_x, adj_y):
    # x [2, 1, 3, 4] · y [5, 4, 6]: the batch axes (2, 1) and (5,) broadcast to (2, 5).
    x, y = sample((2, 1, 3, 4), dtype), sample((5, 4, 6), dtype)
    x_in = np.swapaxes(x, -1, -2).copy() if adj_x else x
    y_in = np.swapaxes(y, -1, -2).copy() if adj_y else y
    got = xdev.batch_matmul(on_cpu(x_in), on_cpu(y_in), adj_x=adj_x, adj_y=adj_y)
    assert got.shape == (2, 5, 3, 6) and got.dtype == xdev.as_dtype(dtype)
    assert_products_close(got, x, y)
    # tf.linalg.matmul's names for the same product: transpose_* and adjoint_*.
    assert_products_close(xdev.matmul(x_in, y_in, transpose_a=adj_x, transpose_b=adj_y), x, y)
    assert_products_close(xdev.matmul(x_in, y_in, adjoint_a=adj_x, adjoint_b=adj_y), x, y)


def test_matmul_and_the_operator_take_batches_of_matrices():
    a, b = sample((3, 2, 4), np.float32), sample((4, 5), np.float32)
    assert_products_close(on_cpu(a) @ on_cpu(b), a, b)
    assert_products_close(xdev.matmul(a, b), a, b)
    bt, at = b.T.copy(), a.swapaxes(1, 2).copy()
    assert_products_close(on_cpu(bt) @ on_cpu(at), bt, at)
    # Rank 2 through batch_matmul is the plain product.
    m, n = sample((2, 3), np.float64), sample((3, 4), np.float64)
    assert_products_close(xdev.batch_matmul(m, n), m, n)


def test_batch_matmul_errors():
    with pytest.raises(xdev.errors.InvalidArgumentError, match="BatchMatMulV2: inner dimensions"):
        xdev.batch_matmul(np.zeros((2, 3, 4)), np.zeros((2, 3, 4)))
    with pytest.raises(xdev.errors.InvalidArgumentError, match="BatchMatMulV2: inner dimensions"):
        xdev.matmul(np.zeros((2, 3, 4)), np.zeros((2, 3, 4)))
    with pytest.raises(xdev.errors.InvalidArgumentError, match="BatchMatMulV2.*rank >= 2"):
        xdev.batch_matmul(np.zeros((2, 3, 4)), np.zeros(4))
    with pytest.raises(xdev.errors.InvalidArgumentError, match="BatchMatMulV2"):
        xdev.batch_matmul(np.zeros((2, 3, 4)), np.zeros((3, 4, 5)))  # batches 2 vs 3
    with pytest.raises(xdev.errors.InvalidArgumentError, match="BatchMatMulV2.*dtype"):
        xdev.batch_matmul(xdev.zeros([1, 2, 2], xdev.float32), xdev.zeros([1, 2, 2], xdev.float64))
    with pytest.raises(ValueError, match="transpose_a and adjoint_a"):
        xdev.matmul(np.zeros((2, 2)), np.zeros((2, 2)), transpose_a=True, adjoint_a=True)


@needs_sim
def test_batch_matmul_scatter_and_split_under_a_gpu_scope():
    # The simulated GPU has MatMul and Add only here (conftest): BatchMatMulV2 and
    # TensorScatterAdd fall back to the CPU with the inputs copied there; split's views
    # stay on the GPU with the tensor they cut.
    x, y = sample((2, 3, 4), np.float32), sample((1, 4, 5), np.float32)
    with xdev.device("/GPU:0"):
        assert_products_close(xdev.matmul(xdev.constant(x), xdev.constant(y)), x, y)
        t = xdev.tensor_scatter_nd_add(xdev.zeros([4]), [[1], [3], [1]], [1, 2, 5])
        np.testing.assert_array_equal(t.numpy(), [0, 6, 0, 2])
        with pytest.raises(xdev.errors.InvalidArgumentError, match="TensorScatterAdd"):
            xdev.tensor_scatter_nd_add(xdev.zeros([4]), [[4]], [1])
        pieces = xdev.split(xdev.constant(x), [1, -1], axis=-1)
        assert [p.device for p in pieces] == [GPU0, GPU0]
        np.testing.assert_array_equal(pieces[1].numpy(), x[..., 1:])
