"""DLPack 1.x, the buffer protocol and __array__: zero-copy where the memory allows it
(the same data pointer), the read-only flag, copies otherwise, never silently wrong."""

import ctypes
import sys

import numpy as np
import pytest

import xdev
from conftest import CPU0, needs_sim, run_python


def cpu(value):
    with xdev.device("/CPU:0"):
        return xdev.constant(value)


def address(array):
    return array.__array_interface__["data"][0]


class _DLManagedTensorVersioned(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32),
                ("manager_ctx", ctypes.c_void_p), ("deleter", ctypes.c_void_p),
                ("flags", ctypes.c_uint64), ("data", ctypes.c_void_p),
                ("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


def capsule_fields(capsule, name=b"dltensor_versioned"):
    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.restype = ctypes.c_void_p
    get.argtypes = [ctypes.py_object, ctypes.c_char_p]
    return _DLManagedTensorVersioned.from_address(get(capsule, name))


def test_numpy_from_dlpack_shares_the_memory_read_only():
    t = cpu([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    assert t.__dlpack_device__() == (1, 0)
    a = np.from_dlpack(t)
    b = np.from_dlpack(t)
    assert address(a) == address(b)  # both views of the tensor's own memory
    assert not a.flags.writeable  # DLPACK_FLAG_BITMASK_READ_ONLY
    np.testing.assert_array_equal(a, [[1, 2, 3], [4, 5, 6]])
    with pytest.raises(ValueError):
        a[0, 0] = 7
    del t  # the array keeps the memory alive
    assert a.sum() == 21


def test_capsules_are_versioned_unless_the_consumer_is_older():
    t = cpu([1.0, 2.0])
    versioned = t.__dlpack__(max_version=(1, 0))
    assert "dltensor_versioned" in repr(versioned)
    fields = capsule_fields(versioned)
    assert (fields.major, fields.minor) == (1, 1)
    assert fields.flags & 1  # read-only
    assert not fields.flags & 2  # not a copy
    assert (fields.device_type, fields.device_id) == (1, 0)
    legacy = t.__dlpack__()
    assert '"dltensor"' in repr(legacy)
    # A consumed capsule cannot be used twice.
    first = xdev.from_dlpack(versioned)
    with pytest.raises(ValueError, match="already consumed"):
        xdev.from_dlpack(versioned)
    assert first.numpy().tolist() == [1.0, 2.0]
    assert xdev.from_dlpack(legacy).numpy().tolist() == [1.0, 2.0]
    with pytest.raises(ValueError, match="stream must be None"):
        t.__dlpack__(stream=1, max_version=(1, 0))


def test_round_trip_numpy_xdev_numpy_is_zero_copy():
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    refs = sys.getrefcount(a)
    x = xdev.from_dlpack(a)
    assert x.device == CPU0
    assert sys.getrefcount(a) == refs + 1  # NumPy's export holds the array for us
    assert address(np.from_dlpack(x)) == address(a)  # the very same memory
    with xdev.device("/CPU:0"):
        np.testing.assert_array_equal(xdev.reduce_sum(x, axis=1).numpy(), a.sum(axis=1))
    del x
    assert sys.getrefcount(a) == refs  # released when the tensor died
    assert xdev.from_dlpack(xdev.from_dlpack(a)) is not None


def test_strided_and_broadcast_numpy_arrays_are_shared():
    a = np.arange(24, dtype=np.float64).reshape(4, 6)
    view = a[1:, ::2]
    x = xdev.from_dlpack(view)
    assert x.shape == (3, 3) and not x.is_contiguous()
    assert address(np.from_dlpack(x)) == address(view)
    np.testing.assert_array_equal(x.numpy(), view)
    row = np.broadcast_to(np.arange(3, dtype=np.int64), (4, 3))
    y = xdev.from_dlpack(row)
    assert y.strides == [0, 1]
    np.testing.assert_array_equal(y.numpy(), row)


def test_reversed_arrays_are_copied_not_misread():
    a = np.arange(5, dtype=np.int32)[::-1]
    with xdev.device("/CPU:0"):  # a copy goes where placement says, like constant()
        x = xdev.from_dlpack(a)
    np.testing.assert_array_equal(x.numpy(), [4, 3, 2, 1, 0])
    assert address(np.from_dlpack(x)) != address(a)


def test_writes_through_numpy_are_seen_by_the_imported_tensor():
    # DLPack shares memory: the tensor is a view of the producer's buffer.
    a = np.zeros(3, np.float32)
    x = xdev.from_dlpack(a)
    a[1] = 5
    assert x.numpy().tolist() == [0, 5, 0]


def test_float16_and_bytes_round_trip_through_numpy():
    a = np.array([1.5, -0.1, 65504.0], np.float16)
    x = xdev.from_dlpack(a)
    assert x.dtype == xdev.float16
    back = x.numpy()
    assert back.dtype == np.float16 and back.tobytes() == a.tobytes()
    y = xdev.cast(xdev.constant([300.5, -1.0]), xdev.uint8)
    assert y.numpy().dtype == np.uint8 and y.numpy().tolist() == [255, 0]
    assert (x * 2).dtype == xdev.float16


def test_dtypes_xdev_lacks_are_refused():
    with pytest.raises(xdev.errors.InvalidArgumentError, match="dtype int16 has no xdev dtype"):
        xdev.from_dlpack(np.ones(2, np.int16))
    with pytest.raises(xdev.errors.InvalidArgumentError, match="dtype uint16 has no xdev dtype"):
        xdev.from_dlpack(np.ones(2, np.uint16))
    for dtype in (np.float32, np.float64, np.int32, np.int64, np.bool_, np.float16, np.uint8,
                  np.int8):
        x = xdev.from_dlpack(np.ones(2, dtype))
        assert x.dtype == xdev.as_dtype(dtype)


def test_producers_without_dlpack_1_keywords_still_work():
    class Legacy:
        def __init__(self, array):
            self.array = array

        def __dlpack__(self, stream=None):
            return self.array.__dlpack__(stream=stream)

        def __dlpack_device__(self):
            return self.array.__dlpack_device__()

    a = np.arange(4, dtype=np.int64)
    x = xdev.from_dlpack(Legacy(a))
    assert address(np.from_dlpack(x)) == address(a)


def test_copy_on_request():
    a = np.arange(4, dtype=np.float32)
    x = xdev.from_dlpack(a, copy=True)
    assert address(np.from_dlpack(x)) != address(a)
    t = cpu([1.0, 2.0])
    copied = t.__dlpack__(max_version=(1, 1), copy=True)
    assert capsule_fields(copied).flags == 2  # IS_COPIED, and writable: nobody else has it
    assert np.from_dlpack(t, copy=True).flags.writeable


def test_buffer_protocol_and_array_protocol():
    t = cpu([[1.0, 2.0], [3.0, 4.0]])
    view = memoryview(t)
    assert view.readonly and view.format == "f" and view.shape == (2, 2)
    assert view.tolist() == [[1.0, 2.0], [3.0, 4.0]]
    shared = np.asarray(t)
    assert address(shared) == address(np.from_dlpack(t)) and not shared.flags.writeable
    copy = np.array(t)
    assert copy.flags.writeable and address(copy) != address(shared)
    assert np.asarray(t, dtype=np.float64).dtype == np.float64
    column = t[:, 1]
    assert memoryview(column).strides == (8,)
    assert np.asarray(column).tolist() == [2.0, 4.0]
    with pytest.raises((BufferError, TypeError), match="not writable|read-only"):
        ctypes.c_char.from_buffer(t)  # asks for a writable buffer


@needs_sim
def test_device_memory_is_never_handed_out_as_host_memory():
    with xdev.device("/GPU:1"):
        t = xdev.constant([1.0, 2.0, 3.0])
    assert t.__dlpack_device__() == (12, 1)  # kDLExtDev: the sim plugin's declaration
    with pytest.raises(RuntimeError, match="Unsupported device"):
        np.from_dlpack(t)  # NumPy refuses a device it cannot read
    with pytest.raises(BufferError, match="whose memory the host cannot read"):
        memoryview(t)
    np.testing.assert_array_equal(np.asarray(t), [1, 2, 3])  # a copy
    with pytest.raises(ValueError, match="needs a copy"):
        np.asarray(t, copy=False)
    host = np.from_dlpack(t, device="cpu")  # NumPy asks for a host copy
    np.testing.assert_array_equal(host, [1, 2, 3])
    capsule = t.__dlpack__(max_version=(1, 1), dl_device=(1, 0))
    fields = capsule_fields(capsule)
    assert fields.flags & 2 and fields.device_type == 1
    with pytest.raises(BufferError, match="needs a copy"):
        t.__dlpack__(max_version=(1, 1), dl_device=(1, 0), copy=False)
    with pytest.raises(BufferError, match="can be exported to its own device or to the host"):
        t.__dlpack__(max_version=(1, 1), dl_device=(2, 0))
    # Round trip through DLPack: the same memory again.
    again = xdev.from_dlpack(t.__dlpack__(max_version=(1, 1)))
    assert again.device == t.device
    np.testing.assert_array_equal(again.numpy(), [1, 2, 3])
    assert xdev.from_dlpack(t) is t


def test_foreign_device_memory_nobody_reads_is_refused_with_its_name():
    class FakeCuda:
        def __init__(self):
            self.array = np.ones(2, np.float32)

        def __dlpack__(self, stream=None, max_version=None, dl_device=None, copy=None):
            if dl_device is not None:
                raise BufferError("no host copies here")
            capsule = self.array.__dlpack__(max_version=max_version)
            capsule_fields(capsule).device_type = 2  # pretend: CUDA memory
            return capsule

        def __dlpack_device__(self):
            return (2, 0)

    with pytest.raises(xdev.errors.NotFoundError, match="no xdev device can address memory on cuda:0"):
        xdev.from_dlpack(FakeCuda())


def test_device_memory_of_a_declared_type_is_shared_after_stream_negotiation():
    # The fakecl test plugin declares DLPack OpenCL memory and a stream handle: a
    # producer of OpenCL memory is asked to order its work before that stream, and the
    # memory is used in place.
    out = run_python("""
        import ctypes
        import numpy as np
        import xdev

        get = ctypes.pythonapi.PyCapsule_GetPointer
        get.restype = ctypes.c_void_p
        get.argtypes = [ctypes.py_object, ctypes.c_char_p]

        class OpenClArray:  # host memory behind an OpenCL label, like the plugin's
            def __init__(self):
                self.array = np.arange(4, dtype=np.float32)
                self.streams = []
            def __dlpack__(self, stream=None, max_version=None, dl_device=None, copy=None):
                self.streams.append(stream)
                capsule = self.array.__dlpack__(max_version=max_version)
                # DLManagedTensorVersioned: device_type at byte 40
                ctypes.c_int32.from_address(get(capsule, b"dltensor_versioned") + 40).value = 4
                return capsule
            def __dlpack_device__(self):
                return (4, 0)

        producer = OpenClArray()
        x = xdev.from_dlpack(producer)
        print(x.device)
        print(producer.streams == [xdev._xdev.dlpack_stream(x.device)], hex(producer.streams[0]))
        print(x.__dlpack_device__())
        capsule = x.__dlpack__(max_version=(1, 1))
        data = ctypes.c_void_p.from_address(get(capsule, b"dltensor_versioned") + 32).value
        print(data == producer.array.ctypes.data)
        print(x.numpy().tolist())
        print(xdev._xdev.dlpack_stream("/CPU:0"))
    """, fakecl=True).stdout.splitlines()
    assert out == ["/job:localhost/replica:0/task:0/device:FAKECL:0", "True 0x5eed0c1", "(4, 0)",
                   "True", "[0.0, 1.0, 2.0, 3.0]", "None"]


def test_foreign_device_memory_comes_over_as_a_host_copy_when_the_producer_offers_one():
    class DeviceWithHostCopies:
        def __init__(self):
            self.array = np.arange(3, dtype=np.float32)

        def __dlpack__(self, stream=None, max_version=None, dl_device=None, copy=None):
            assert dl_device == (1, 0) and copy is True
            return self.array.copy().__dlpack__(max_version=max_version)

        def __dlpack_device__(self):
            return (4, 0)  # OpenCL, say

    x = xdev.from_dlpack(DeviceWithHostCopies())
    np.testing.assert_array_equal(x.numpy(), [0, 1, 2])
