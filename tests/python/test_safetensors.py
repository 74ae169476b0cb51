"""safetensors files: xdev's files open with the safetensors package and the other way
round, float16, bfloat16, uint8 and int8 included (each as its own dtype, written back bit for
bit)."""

import json
import struct

import ml_dtypes
import numpy as np
import pytest
import safetensors
import safetensors.numpy

import xdev

RNG = np.random.default_rng(3)


def header_and_data(path):
    raw = open(path, "rb").read()
    (n,) = struct.unpack("<Q", raw[:8])
    return json.loads(raw[8:8 + n]), raw[8 + n:], n


def test_files_xdev_writes_open_with_safetensors(tmp_path):
    arrays = {
        "f32": RNG.standard_normal((3, 4)).astype(np.float32),
        "f64": RNG.standard_normal(5),
        "i32": np.arange(-3, 3, dtype=np.int32).reshape(2, 3),
        "i64": np.array([2 ** 40, -1], np.int64),
        "b": np.array([True, False, True]),
        "scalar": np.array(2.5, np.float32),
    }
    with xdev.device("/CPU:0"):
        tensors = {k: xdev.constant(v) for k, v in arrays.items()}
    path = tmp_path / "x.safetensors"
    xdev.save_file(tensors, path, metadata={"format": "np", "by": "xdev"})
    loaded = safetensors.numpy.load_file(str(path))
    assert set(loaded) == set(arrays)
    for k, v in arrays.items():
        assert loaded[k].dtype == v.dtype, k
        np.testing.assert_array_equal(loaded[k], v)
    with safetensors.safe_open(str(path), framework="numpy") as f:
        assert f.metadata() == {"format": "np", "by": "xdev"}
    _, _, n = header_and_data(path)
    assert n % 8 == 0


def test_files_safetensors_writes_open_with_xdev(tmp_path):
    arrays = {
        "w": RNG.standard_normal((4, 3)).astype(np.float32),
        "ids": np.arange(6, dtype=np.int64),
        "mask": np.array([[True, False]]),
        "d": RNG.standard_normal(3),
        "i": np.array([1, -2], np.int32),
    }
    path = tmp_path / "st.safetensors"
    safetensors.numpy.save_file(arrays, str(path), metadata={"k": "v"})
    loaded = xdev.load_file(path, device="/CPU:0")
    assert loaded.metadata == {"k": "v"}
    assert loaded.dtypes == {}
    for k, v in arrays.items():
        assert loaded[k].device.endswith("CPU:0")
        assert loaded[k].numpy().dtype == v.dtype, k
        np.testing.assert_array_equal(loaded[k].numpy(), v)


def test_half_and_byte_dtypes_keep_their_dtype_and_are_written_back_bit_for_bit(tmp_path):
    half = np.array([1.0, -2.5, 65504.0, 6e-8, np.inf, -0.0, np.nan], np.float16)
    bf16 = np.array([[1.0, -3.5e38], [1e-38, 0.333]], dtype=ml_dtypes.bfloat16)
    small = np.array([0, 200, 255], np.uint8)
    src = tmp_path / "half.safetensors"
    safetensors.numpy.save_file({"h": half, "b": bf16, "u": small}, str(src))

    loaded = xdev.load_file(src)
    assert loaded.dtypes == {}  # each is held in its own dtype: nothing to remember
    assert loaded["h"].dtype == xdev.float16 and loaded["b"].dtype == xdev.bfloat16
    assert loaded["u"].dtype == xdev.uint8
    assert loaded["h"].numpy().dtype == np.float16
    assert loaded["h"].numpy().tobytes() == half.tobytes()
    assert loaded["b"].numpy().dtype == ml_dtypes.bfloat16
    assert loaded["b"].numpy().tobytes() == bf16.tobytes()
    assert loaded["u"].numpy().dtype == np.uint8
    np.testing.assert_array_equal(loaded["u"].numpy(), small)

    out = tmp_path / "again.safetensors"
    xdev.save_file(loaded, out)
    again = safetensors.numpy.load_file(str(out))
    assert again["h"].dtype == np.float16 and again["b"].dtype == ml_dtypes.bfloat16
    assert again["h"].tobytes() == half.tobytes()
    assert again["b"].tobytes() == bf16.tobytes()
    np.testing.assert_array_equal(again["u"], small)
    # The whole file is the one the safetensors package wrote, byte for byte.
    assert open(out, "rb").read() == open(src, "rb").read()


def test_numpy_half_arrays_can_be_saved_directly(tmp_path):
    half = RNG.standard_normal(10).astype(np.float16)
    bf16 = RNG.standard_normal(4).astype(ml_dtypes.bfloat16)
    path = tmp_path / "np.safetensors"
    xdev.save_file({"h": half, "b": bf16, "f": np.ones(2, np.float32)}, path)
    loaded = safetensors.numpy.load_file(str(path))
    assert loaded["h"].tobytes() == half.tobytes()
    assert loaded["b"].tobytes() == bf16.tobytes()
    assert loaded["f"].dtype == np.float32


def test_float32_to_half_rounds_like_numpy(tmp_path):
    values = np.concatenate([
        RNG.standard_normal(4000).astype(np.float32) * 1000,
        np.float32([65519, 65520, 1e-8, 2.0 ** -25, 3 * 2.0 ** -25, 1 + 2.0 ** -11]),
    ])
    path = tmp_path / "round.safetensors"
    with xdev.device("/CPU:0"):
        xdev.save_file({"h": xdev.constant(values), "b": xdev.constant(values)}, path,
                       dtypes={"h": "F16", "b": "BF16"})
    loaded = safetensors.numpy.load_file(str(path))
    with np.errstate(over="ignore"):  # 65520 rounds to inf, as it should
        assert loaded["h"].tobytes() == values.astype(np.float16).tobytes()
    assert loaded["b"].tobytes() == values.astype(ml_dtypes.bfloat16).tobytes()


def test_errors(tmp_path):
    with pytest.raises(xdev.errors.NotFoundError, match="cannot open"):
        xdev.load_file(tmp_path / "missing.safetensors")
    bad = tmp_path / "bad.safetensors"
    bad.write_bytes(struct.pack("<Q", 5) + b"{nope")
    with pytest.raises(xdev.errors.InvalidArgumentError, match="the header is not valid JSON"):
        xdev.load_file(bad)
    with pytest.raises(xdev.errors.InvalidArgumentError,
                       match=r'tensor "x" holds 300, outside the range of U8 \(0\.\.255\)'):
        xdev.save_file({"x": xdev.constant([1, 300])}, tmp_path / "u8.safetensors",
                       dtypes={"x": "U8"})
    assert not (tmp_path / "u8.safetensors").exists()
    with pytest.raises(xdev.errors.InvalidArgumentError, match="cannot be written as F16"):
        xdev.save_file({"x": xdev.constant([1, 2])}, tmp_path / "f.safetensors",
                       dtypes={"x": "F16"})
