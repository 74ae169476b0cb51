"""The data-movement ops (ConcatV2, Pack, Identity, Tile, PadV2, GatherV2), the views
(expand_dims, squeeze, broadcast_to) and the indexing ops (Slice, StridedSlice, Range, OneHot;
against NumPy's x[...], arange and eye), bound with TensorFlow's names and arguments, against
NumPy for every dtype (values copied bit for bit), and their errors as xdev.errors classes
that name the op."""

import numpy as np
import pytest

import xdev

RNG = np.random.default_rng(29)
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
def test_concat_and_stack(dtype):
    a, b, c = sample((2, 3), dtype), sample((2, 1), dtype), sample((2, 0), dtype)
    same(xdev.concat([a, b, c], axis=1), np.concatenate([a, b, c], axis=1))
    same(xdev.concat([a, a], axis=-2), np.concatenate([a, a], axis=0))
    same(xdev.stack([a, a, a]), np.stack([a, a, a]))
    same(xdev.stack([a, a], axis=-1), np.stack([a, a], axis=-1))
    # Tensors, NumPy arrays and lists mix; a transposed view is read through its strides.
    t = xdev.constant(sample((3, 2), dtype))
    same(xdev.concat([xdev.transpose(t), a], 0),
         np.concatenate([t.numpy().T, a], 0))


@pytest.mark.parametrize("dtype", DTYPES)
def test_identity_tile_pad(dtype):
    x = sample((2, 3), dtype)
    same(xdev.identity(x), x)
    same(xdev.tile(x, [2, 3]), np.tile(x, (2, 3)))
    same(xdev.tile(x, [0, 1]), np.tile(x, (0, 1)))
    same(xdev.pad(x, [[1, 0], [2, 1]]), np.pad(x, ((1, 0), (2, 1))))
    if dtype != np.bool_:
        same(xdev.pad(x, [[0, 1], [1, 1]], constant_values=7),
             np.pad(x, ((0, 1), (1, 1)), constant_values=7))


@pytest.mark.parametrize("dtype", DTYPES)
def test_gather(dtype):
    params = sample((4, 3), dtype)
    same(xdev.gather(params, [3, 0, 0]), np.take(params, [3, 0, 0], axis=0))
    idx = np.array([[2, 1], [0, 2]], np.int32)
    same(xdev.gather(params, idx, axis=1), np.take(params, idx, axis=1))
    same(xdev.gather(params, np.zeros((0,), np.int64), axis=-1),
         np.take(params, np.zeros((0,), np.int64), axis=1))


def test_views_share_storage_and_match_numpy():
    x = sample((2, 1, 3), np.float32)
    same(xdev.expand_dims(x, 0), np.expand_dims(x, 0))
    same(xdev.expand_dims(x, -1), np.expand_dims(x, -1))
    same(xdev.squeeze(x), np.squeeze(x))
    same(xdev.squeeze(x, axis=[1]), np.squeeze(x, axis=1))
    same(xdev.broadcast_to(x, [4, 2, 5, 3]), np.broadcast_to(x, (4, 2, 5, 3)))
    # An op on a stride-0 view reads every element it names.
    b = xdev.broadcast_to(np.array([1.0, 2.0], np.float64), [3, 2])
    same(xdev.reduce_sum(b, axis=0), np.array([3.0, 6.0]))


def test_errors_name_the_op_and_the_value():
    with pytest.raises(xdev.errors.InvalidArgumentError, match="(?s)GatherV2.*out of range"):
        xdev.gather(np.arange(3.0), [0, 5])
    with pytest.raises(xdev.errors.InvalidArgumentError, match="ConcatV2"):
        xdev.concat([np.zeros((2, 3)), np.zeros((3, 2))], axis=0)
    with pytest.raises(xdev.errors.InvalidArgumentError, match="Pack"):
        xdev.stack([np.zeros(2), np.zeros(3)])
    with pytest.raises(xdev.errors.InvalidArgumentError, match="Tile"):
        xdev.tile(np.zeros((2, 2)), [1])
    with pytest.raises(xdev.errors.InvalidArgumentError, match="PadV2"):
        xdev.pad(np.zeros((2, 2)), [[1, 1, 1], [0, 0]])
    with pytest.raises(xdev.errors.UnimplementedError, match="REFLECT"):
        xdev.pad(np.zeros((2, 2)), [[1, 1], [0, 0]], mode="REFLECT")
    with pytest.raises(xdev.errors.InvalidArgumentError, match="Squeeze"):
        xdev.squeeze(np.zeros((2, 3)), axis=[0])


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


def test_slicing_errors_name_the_op_and_the_values():
    with pytest.raises(xdev.errors.InvalidArgumentError, match="(?s)Slice.*axis 0.*begin 2"):
        xdev.slice(np.zeros((3, 4)), [2, 0], [2, 1])
    with pytest.raises(xdev.errors.InvalidArgumentError, match=r"StridedSlice.*strides\[0\] is 0"):
        xdev.strided_slice(np.zeros((3, 4)), [0], [1], [0])
    with pytest.raises(xdev.errors.InvalidArgumentError, match=r"StridedSlice.*begin\[0\] = 5"):
        xdev.strided_slice(np.zeros((3, 4)), [5], [6], [1], shrink_axis_mask=1)


def test_range_follows_tf_range():
    same(xdev.range(5), np.arange(5, dtype=np.int32))
    same(xdev.range(1, 10, 3), np.arange(1, 10, 3, dtype=np.int32))
    same(xdev.range(0.0, 1.0, 0.25), np.arange(0.0, 1.0, 0.25, dtype=np.float32))
    same(xdev.range(5, 0, -2, dtype=xdev.int64), np.array([5, 3, 1], np.int64))
    with pytest.raises(xdev.errors.InvalidArgumentError, match="Range.*delta is 0"):
        xdev.range(0, 3, 0)


@pytest.mark.parametrize("dtype", DTYPES)
def test_one_hot(dtype):
    indices = np.array([[0, 2], [-1, 3]], np.int32)
    eye = np.eye(3, dtype=dtype)
    expected = np.stack([np.stack([eye[0], eye[2]]),
                         np.zeros((2, 3), dtype)])
    same(xdev.one_hot(indices, 3, dtype=xdev.as_dtype(dtype)), expected)
    same(xdev.one_hot(indices, 3, axis=0, dtype=xdev.as_dtype(dtype)),
         np.moveaxis(expected, -1, 0))
    with pytest.raises(xdev.errors.InvalidArgumentError, match="OneHot.*depth"):
        xdev.one_hot([1], -1)


@pytest.mark.parametrize("dtype", DTYPES)
def test_split_gives_views_like_tf_split(dtype):
    x = sample((4, 6, 3), dtype)
    t = xdev.constant(x)
    pieces = xdev.split(t, 3, axis=1)
    assert isinstance(pieces, list) and len(pieces) == 3
    for got, expected in zip(pieces, np.split(x, 3, axis=1)):
        same(got, expected)
    # Sizes, one of them -1 (the rest), a negative axis; a NumPy array of sizes.
    for sizes in ([1, 2, 3], [2, -1], np.array([0, 6, 0])):
        pieces = xdev.split(x, sizes, axis=-2)
        bounds = np.cumsum([6 - sum(s for s in sizes if s != -1) if s == -1 else s
                            for s in sizes])[:-1]
        expected = np.split(x, bounds, axis=1)
        assert len(pieces) == len(expected)
        for got, want in zip(pieces, expected):
            same(got, want)
    same(xdev.split(x, 2)[1], x[2:])  # axis 0 by default
    same(xdev.split(x, [3], axis=2, num=1)[0], x)
    same(xdev.split(x, np.int64(2), axis=np.int32(0))[0], x[:2])  # NumPy integers are ints


def test_split_pieces_share_the_input_storage():
    with xdev.device("/CPU:0"):  # host memory, which DLPack shows
        t = xdev.constant(np.arange(12.0, dtype=np.float32).reshape(3, 4))
    a, b = xdev.split(t, [1, 3], axis=1)
    base = np.from_dlpack(t).__array_interface__["data"][0]
    assert np.from_dlpack(a).__array_interface__["data"][0] == base
    assert np.from_dlpack(b).__array_interface__["data"][0] == base + 4  # one float32 along
    same(xdev.reduce_sum(b, axis=1), np.array([6.0, 18.0, 30.0], np.float32))


def test_split_errors_name_the_op_and_the_values():
    x = np.zeros((4, 6))
    with pytest.raises(xdev.errors.InvalidArgumentError, match="Split.*num_split 4.*dimension 6"):
        xdev.split(x, 4, axis=1)
    with pytest.raises(xdev.errors.InvalidArgumentError, match=r"SplitV.*size_splits \{2, 3\}"):
        xdev.split(x, [2, 3], axis=1)
    with pytest.raises(xdev.errors.InvalidArgumentError, match="SplitV.*more than one -1"):
        xdev.split(x, [-1, -1], axis=1)
    with pytest.raises(xdev.errors.InvalidArgumentError, match="Split"):
        xdev.split(x, 2, axis=2)
    with pytest.raises(xdev.errors.InvalidArgumentError, match="SplitV: num is 3.*2 pieces"):
        xdev.split(x, [2, -1], axis=1, num=3)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64])
@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
def test_tensor_scatter_nd_add_matches_numpy(dtype, index_dtype):
    # Elements: rows of one index each, a repeated index adds up (np.add.at).
    t = sample((5,), dtype)
    idx = np.array([[1], [3], [1]], index_dtype)
    upd = sample((3,), dtype)
    expected = t.copy()
    np.add.at(expected, idx[:, 0], upd)
    same(xdev.tensor_scatter_nd_add(t, idx, upd), expected)
    # Slices: indices [2, 2, 1] index axis 0 of a [4, 3, 2] tensor; updates [2, 2, 3, 2].
    t = sample((4, 3, 2), dtype)
    idx = np.array([[[0], [3]], [[3], [2]]], index_dtype)
    upd = sample((2, 2, 3, 2), dtype)
    expected = t.copy()
    np.add.at(expected, idx[..., 0], upd)
    same(xdev.tensor_scatter_nd_add(t, idx, upd), expected)
    # Full coordinates, indices as a Python list, updates taking the tensor's dtype.
    t = sample((3, 4), dtype)
    expected = t.copy()
    expected[2, 1] += 7
    expected[0, 3] += 1
    same(xdev.tensor_scatter_nd_add(xdev.constant(t), [[2, 1], [0, 3]], [7, 1]), expected)


def test_tensor_scatter_nd_add_errors():
    with pytest.raises(xdev.errors.InvalidArgumentError, match="(?s)TensorScatterAdd.*4"):
        xdev.tensor_scatter_nd_add(np.zeros(4), [[1], [4]], np.ones(2))
    with pytest.raises(xdev.errors.InvalidArgumentError, match="(?s)TensorScatterAdd.*-1"):
        xdev.tensor_scatter_nd_add(np.zeros(4), [[-1]], np.ones(1))
    with pytest.raises(xdev.errors.InvalidArgumentError, match="TensorScatterAdd"):
        xdev.tensor_scatter_nd_add(np.zeros(4), [[1], [2]], np.ones(3))  # updates' shape
    with pytest.raises(xdev.errors.InvalidArgumentError, match="TensorScatterAdd"):
        xdev.tensor_scatter_nd_add(np.zeros(4), xdev.constant([[1.0]]), np.ones(1))  # float indices


@pytest.mark.parametrize("dtype", DTYPES)
def test_broadcast_to_copy_stores_every_element(dtype):
    x = sample((2, 1, 3), dtype)
    with xdev.device("/CPU:0"):  # host memory, which DLPack shows
        got = xdev.experimental.broadcast_to_copy(x, [4, 2, 5, 3])
    same(got, np.broadcast_to(x, (4, 2, 5, 3)))
    # A dense tensor: DLPack sees contiguous strides, unlike the stride-0 view.
    assert np.from_dlpack(got).flags["C_CONTIGUOUS"]
    with pytest.raises(xdev.errors.InvalidArgumentError, match="BroadcastTo"):
        xdev.experimental.broadcast_to_copy(x, [2, 2, 4])
