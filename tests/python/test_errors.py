"""Errors are Python exceptions: one base, one subclass per status code, the C++ texts."""

import pytest

import xdev
from conftest import needs_sim, run_python

CLASSES = {
    "InvalidArgumentError": (1, "INVALID_ARGUMENT"),
    "NotFoundError": (2, "NOT_FOUND"),
    "ResourceExhaustedError": (3, "OUT_OF_MEMORY"),
    "UnimplementedError": (4, "UNIMPLEMENTED"),
    "FailedPreconditionError": (5, "FAILED_PRECONDITION"),
    "UnavailableError": (6, "UNAVAILABLE"),
    "InternalError": (7, "INTERNAL"),
    "AbiMismatchError": (8, "ABI_MISMATCH"),
}


def test_one_base_and_a_subclass_per_code():
    assert issubclass(xdev.errors.Error, RuntimeError)
    assert xdev.errors.OpError is xdev.errors.Error
    for name, (code, code_name) in CLASSES.items():
        cls = getattr(xdev.errors, name)
        assert issubclass(cls, xdev.errors.Error)
        assert cls.__module__ == "xdev.errors" and cls.__name__ == name
        assert (cls.error_code, cls.code_name) == (code, code_name)


def test_codes_map_to_their_classes():
    with pytest.raises(xdev.errors.InvalidArgumentError):
        xdev.reshape(xdev.zeros([2, 3]), [4])
    with pytest.raises(xdev.errors.NotFoundError) as e:
        xdev.zeros([1]).to("/CPU:5")
    assert "/job:localhost/replica:0/task:0/device:CPU:5 unknown device" in str(e.value)
    with pytest.raises(xdev.errors.FailedPreconditionError):
        xdev.zeros([1])
        xdev.config.set_visible_devices([], "CPU")
    with pytest.raises(xdev.errors.InvalidArgumentError) as e:
        xdev.reshape(xdev.zeros([2, 3]), [4])
    assert str(e.value) == "Reshape: cannot reshape (2, 3) (6 elements) into (4,)"


@needs_sim
def test_out_of_memory_is_resource_exhausted_with_the_cpp_message():
    out = run_python("""
        import numpy as np
        import xdev
        try:
            with xdev.device("/GPU:0"):
                xdev.constant(np.zeros((4, 1024, 1024), np.float32))  # 16 MiB on an 8 MiB device
        except xdev.errors.ResourceExhaustedError as e:
            print(type(e).__name__)
            print(e)
    """, sim=True, env={"XDEV_SIM_MEMORY_MB": "8"}).stdout.splitlines()
    assert out[0] == "ResourceExhaustedError"
    assert "GPU:0" in out[1] and "16777216" in out[1]


def test_python_errors_in_conversions_stay_python_errors():
    with pytest.raises(TypeError, match="Cannot convert 'int16' to an xdev DType"):
        xdev.zeros([1], dtype="int16")
