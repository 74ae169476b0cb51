"""Tracing, synchronize and events from Python (xdev.trace, xdev.synchronize, xdev.Event)."""

import json

import pytest

import xdev
from conftest import run_python


def test_a_traced_block_writes_op_copy_and_memory_events(tmp_path):
    path = tmp_path / "trace.json"
    # In a fresh interpreter on the sim GPUs: the MatMul runs on GPU:0 after copies.
    run_python(f"""
        import xdev
        with xdev.device("/CPU:0"):
            a = xdev.constant([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
            b = xdev.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
        with xdev.trace.tracing({str(path)!r}):
            assert xdev.trace.active()
            c = a @ b
            assert c.numpy().tolist() == [[22.0, 28.0], [49.0, 64.0]]
        assert not xdev.trace.active()
    """, sim=True)
    events = json.loads(path.read_text())["traceEvents"]
    ops = [e for e in events if e.get("cat") == "op" and e["name"] == "MatMul"]
    assert ops and ops[0]["args"]["device"].endswith("device:GPU:0")
    assert ops[0]["args"]["output_shape"] == [2, 2]
    assert any(e.get("cat") == "copy" and e["args"]["direction"] == "device_to_host"
               for e in events)
    assert any(e.get("cat") == "memory" and e["name"] == "alloc" for e in events)


def test_trace_start_on_an_unwritable_path_raises_naming_it(tmp_path):
    bad = tmp_path / "no" / "such" / "dir" / "trace.json"
    with pytest.raises(xdev.errors.OpError, match="no/such/dir"):
        xdev.trace.start(str(bad))
    assert not xdev.trace.active()


def test_events_time_device_work_on_the_cpu():
    start, end = xdev.Event("/CPU:0"), xdev.Event("/CPU:0")
    assert not start.recorded and start.query()
    start.record()
    x = xdev.ones([256, 256])
    y = x @ x
    end.record()
    end.synchronize()
    assert end.query() and end.recorded
    ms = start.elapsed_ms(end)
    assert ms >= 0.0
    assert xdev.elapsed_ms(start, end) == pytest.approx(ms)
    assert start.device.endswith("device:CPU:0")
    xdev.synchronize("/CPU:0")
    xdev.synchronize()
    assert float(y.numpy()[0, 0]) == 256.0


def test_elapsed_ms_of_an_unrecorded_event_is_a_failed_precondition():
    start, end = xdev.Event("/CPU:0"), xdev.Event("/CPU:0")
    start.record()
    with pytest.raises(xdev.errors.FailedPreconditionError):
        xdev.elapsed_ms(start, end)


def test_an_unknown_device_is_not_found():
    with pytest.raises(xdev.errors.NotFoundError, match="GPU:7"):
        xdev.Event("/GPU:7")
    with pytest.raises(xdev.errors.NotFoundError, match="GPU:7"):
        xdev.synchronize("/GPU:7")
