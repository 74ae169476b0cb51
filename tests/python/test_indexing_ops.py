"""The indexing ops (Slice, StridedSlice) bound with TensorFlow's names and arguments
(xdev.slice, xdev.strided_slice), against NumPy's x[...] for the same index, for every
dtype (values copied bit for bit), and their errors as xdev.errors classes that name the op."""

import numpy as np
import pytest

import xdev

RNG = np.random.default_rng(31)
DTYPES = [np.float32, np.float64, np.int32, np.int64, np.bool_]


def sample(shape, dtype):
    if dtype == np.bool_:
        return RNG.integers(0, 2, size=shape).astype(np.bool_)
    if np.dtype(dtype).kind == "f":
        return (RNG.standard_normal(shape) * 3).astype(dtype)
    return RNG.integers(-50, 50, size=shape).astype(dtype)


def same(got, expected):
    got = got.numpy()
    expected = np.asarray(expected)
    assert got.dtype == expected.dtype, (got.dtype, expected.dtype)
    assert got.shape == expected.shape, (got.shape, expected.shape)
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("dtype", DTYPES)
def test_slice(dtype):
    x = sample((3, 4, 5), dtype)
    same(xdev.slice(x, [1, 0, 2], [2, -1, 3]), x[1:3, :, 2:5])
    same(xdev.slice(x, [3, 0, 0], [0, -1, -1]), x[3:3])
    same(xdev.slice(np.array(7, dtype), [], []), np.array(7, dtype))


@pytest.mark.parametrize("dtype", DTYPES)
def test_strided_slice(dtype):
    x = sample((3, 4, 5), dtype)
    same(xdev.strided_slice(x, [0, 3], [3, 0], [1, -2]), x[0:3, 3:0:-2])
    same(xdev.strided_slice(x, [0], [0], [-1], begin_mask=1, end_mask=1), x[::-1])
    # x[1, ..., None, -1]: shrink, ellipsis, new axis, shrink.
    same(xdev.strided_slice(x, [1, 0, 0, -1], [2, 0, 0, 0], [1, 1, 1, 1], ellipsis_mask=2,
                            new_axis_mask=4, shrink_axis_mask=9), x[1, ..., None, -1])
    same(xdev.strided_slice(x, [-100, 1], [100, 100], None), x[-100:100, 1:100])
    # A transposed input.
    t = xdev.transpose(xdev.constant(x))
    same(xdev.strided_slice(t, [4, 0], [0, 0], [-2, 1], end_mask=2), x.T[4:0:-2])


def test_errors_name_the_op_and_the_values():
    with pytest.raises(xdev.errors.InvalidArgumentError, match="(?s)Slice.*axis 0.*begin 2"):
        xdev.slice(np.zeros((3, 4)), [2, 0], [2, 1])
    with pytest.raises(xdev.errors.InvalidArgumentError, match=r"StridedSlice.*strides\[0\] is 0"):
        xdev.strided_slice(np.zeros((3, 4)), [0], [1], [0])
    with pytest.raises(xdev.errors.InvalidArgumentError, match=r"StridedSlice.*begin\[0\] = 5"):
        xdev.strided_slice(np.zeros((3, 4)), [5], [6], [1], shrink_axis_mask=1)
