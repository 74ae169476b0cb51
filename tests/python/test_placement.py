"""Device scopes, soft placement and the placement log: the C++ SDK's lines."""

import threading

import numpy as np
import pytest

import xdev
from conftest import CPU0, GPU0, GPU1, needs_sim, run_python


def test_device_scope_places_tensors_and_ops():
    with xdev.device("/CPU:0"):
        a = xdev.constant([[1.0, 2.0], [3.0, 4.0]])
        b = a @ a
    assert a.device == CPU0 and b.device == CPU0
    with xdev.device(xdev.config.list_logical_devices("CPU")[0]) as scope:
        assert scope.name == CPU0
        assert xdev.zeros([1]).device == CPU0


@needs_sim
def test_scopes_nest_and_are_per_thread():
    seen = {}

    def worker():
        seen["thread"] = xdev.constant(1.0).device  # the outer scope is not this thread's

    with xdev.device("/GPU:1"):
        with xdev.device("/CPU:0"):
            assert xdev.constant(1.0).device == CPU0
        assert xdev.constant(1.0).device == GPU1
        t = threading.Thread(target=worker)
        t.start()
        t.join()
    assert seen["thread"] == GPU0  # highest priority, no scope


def test_one_scope_object_serves_several_threads():
    scope = xdev.device("/CPU:0")
    inside, leave, errors = threading.Barrier(3), threading.Barrier(3), []

    def worker():
        try:
            with scope:
                inside.wait()  # all three threads are in the same scope object at once
                assert xdev.constant(1.0).device == CPU0
                leave.wait()
        except Exception as e:  # noqa: BLE001 -- reported below
            errors.append(e)

    threads = [threading.Thread(target=worker) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors


def test_malformed_device_names_fail_at_once():
    with pytest.raises(xdev.errors.InvalidArgumentError) as e:
        xdev.device("/gpu:x")
    assert str(e.value) == ('invalid device name "/gpu:x": device index "x" in "gpu:x" is not a '
                            'non-negative integer')


def test_an_empty_or_none_device_name_constrains_nothing_as_in_tensorflow():
    with xdev.device("/CPU:0"):
        for name in ("", None, "  "):
            with xdev.device(name):
                assert xdev.constant([1.0]).device == CPU0
    with xdev.device(None):
        assert xdev.constant([1.0]).device == xdev.constant([2.0]).device
    with pytest.raises(TypeError, match="expected a device name or a LogicalDevice, not int"):
        xdev.device(3)


def test_a_device_string_that_does_not_parse_is_tensorflows_value_error():
    # It used to be a soft-placement warning, the op running on the CPU.
    for spec, part in (("garbage", "garbage"), ("/GARBAGE:0", "GARBAGE"),
                       ("/job:localhost/gpu0", "gpu0")):
        with pytest.raises(ValueError, match=f"Unknown attribute '{part}' is encountered "
                                             f"while parsing the device spec"):
            xdev.device(spec)
    # Spellings TensorFlow parses still work: a device type alone, any case.
    for spec in ("cpu:0", "/CPU:0", "CPU", "/device:CPU:0", "/job:localhost/replica:0/task:0/cpu:0"):
        with xdev.device(spec):
            assert xdev.constant([1.0]).device == CPU0


def test_the_placement_log_is_the_cpp_sdks(capfd):
    xdev.debugging.set_log_device_placement(True)
    with xdev.device("/CPU:0"):
        a = xdev.constant([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
        b = xdev.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
        c = xdev.matmul(a, b)
        d = c + 1.0
    xdev.debugging.set_log_device_placement(False)
    assert d.device == CPU0
    err = capfd.readouterr().err
    assert err.splitlines() == [
        f"Executing op _EagerConst in device {CPU0}",
        f"Executing op _EagerConst in device {CPU0}",
        f"Executing op MatMul in device {CPU0}",
        f"Executing op _EagerConst in device {CPU0}",
        f"Executing op Add in device {CPU0}",
    ]


@needs_sim
def test_soft_placement_off_names_the_device_and_on_runs_elsewhere():
    a = xdev.constant([[1.0, 2.0]])
    b = xdev.constant([[1.0], [2.0]])
    xdev.config.set_soft_device_placement(False)
    assert xdev.config.get_soft_device_placement() is False
    with pytest.raises(xdev.errors.Error) as e:
        with xdev.device("/device:GPU:2"):
            xdev.matmul(a, b)
    assert "MatMul(float32) cannot run: /job:localhost/replica:0/task:0/device:GPU:2 unknown device" in str(e.value)
    xdev.config.set_soft_device_placement(True)
    with xdev.device("/device:GPU:2"):
        c = xdev.matmul(a, b)
    assert c.device == GPU0
    record = xdev.debugging.recent_placements()[-1]
    assert record["op"] == "MatMul" and record["rule"] == "soft placement"


@needs_sim
def test_counters_count_implicit_copies_and_read_backs():
    xdev.debugging.reset_placement_counters()
    with xdev.device("/CPU:0"):
        x = xdev.constant([1.0, 2.0])
    with xdev.device("/GPU:0"):
        y = x + x  # x is copied to GPU:0
    y.numpy()
    counters = xdev.debugging.placement_counters()
    assert counters["implicit_copies"] >= 1
    assert counters["read_backs"] >= 1
    with xdev.experimental.strict_placement():
        with pytest.raises(xdev.errors.Error, match="strict placement"):
            with xdev.device("/GPU:0"):
                x + x  # noqa: B018


def test_log_placement_from_the_environment():
    out = run_python("""
        import xdev
        with xdev.device("/CPU:0"):
            xdev.ones([2]) * 2.0
    """, env={"XDEV_LOG_DEVICE_PLACEMENT": "1"})
    assert f"Executing op Fill in device {CPU0}" in out.stderr
    assert f"Executing op Mul in device {CPU0}" in out.stderr


def test_host_fallbacks_are_exact_and_counted():
    # Integer powers: Pow is defined for floats only, so NumPy computes them on a
    # read-back of both operands (comparisons used to, before Less & co. were ops).
    xdev.debugging.reset_placement_counters()
    with xdev.device("/CPU:0"):
        x = xdev.constant([3, 1, 2])
        cubes = x ** 3
    assert xdev.debugging.placement_counters()["read_backs"] >= 2
    assert cubes.device == x.device and cubes.dtype == xdev.int32
    np.testing.assert_array_equal(cubes.numpy(), [27, 1, 8])


@needs_sim
def test_has_kernel_and_list_kernels():
    assert xdev.config.has_kernel("CPU:0", "Exp", xdev.float32)
    assert not xdev.config.has_kernel("CPU:0", "Exp", "int32")  # not defined for int32
    assert xdev.config.has_kernel("CPU:0", "Cast", xdev.float32, xdev.int32)
    assert xdev.config.has_kernel("GPU:0", "MatMul", "float64")
    assert not xdev.config.has_kernel("GPU:0", "MatMul", xdev.int32)  # the sim: floats only
    with pytest.raises(xdev.errors.NotFoundError, match='unknown op "exp"'):
        xdev.config.has_kernel("CPU:0", "exp", xdev.float32)
    with pytest.raises(xdev.errors.NotFoundError, match="GPU:7 unknown device"):
        xdev.config.list_kernels("GPU:7")
    ops = {o["op"]: o for o in xdev.config.list_kernels("GPU:0")}
    assert (xdev.float32, xdev.float32) in ops["MatMul"]["available"]
    assert (xdev.int32, xdev.int32) in ops["MatMul"]["defined"]
    assert (xdev.int32, xdev.int32) not in ops["MatMul"]["available"]


def test_fallback_warns_once_counts_and_can_be_an_error():
    out = run_python(f"""
        import xdev
        x = xdev.constant([1, 2, 3])  # int32 on GPU:0; the sim has float kernels only
        xdev.debugging.reset_placement_counters()
        for _ in range(3):
            assert (x - x).device == "{CPU0}"
        (c,) = xdev.debugging.placement_counters()["fallbacks_by_kernel"]
        assert (c["op"], c["input"], c["device"], c["ran_on"], c["ops"]) == \\
            ("Sub", xdev.int32, "{GPU0}", "{CPU0}", 3), c
        xdev.config.set_fallback_policy("error")
        assert xdev.config.get_fallback_policy() == "error"
        try:
            x * x
        except xdev.errors.UnimplementedError as e:
            assert "no Mul int32 kernel on {GPU0}" in str(e), e
        else:
            raise AssertionError("Mul fell back under the error policy")
    """, sim=True)
    assert out.stderr.count("fallback: no Sub int32 kernel on " + GPU0) == 1, out.stderr
    assert "fallback: no Mul" not in out.stderr
