"""Threads: ops from many Python threads at once (the SDK is thread-safe), with the GIL
released while ops, copies and waits run."""

import threading

import numpy as np

import xdev
from conftest import CPU0, needs_sim, run_python


def test_many_threads_run_ops_with_their_own_scopes():
    results, errors = {}, []
    devices = [CPU0] + [d.name for d in xdev.config.list_logical_devices("GPU")]

    def worker(i):
        try:
            device = devices[i % len(devices)]
            with xdev.device(device):
                a = xdev.constant(np.full((8, 8), i, np.float32))
                total = a
                for _ in range(50):
                    total = total + a @ xdev.ones([8, 8])
                results[i] = (total.device, float(xdev.reduce_sum(total).numpy()))
        except Exception as e:  # noqa: BLE001 -- reported below
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    for i in range(16):
        device, value = results[i]
        assert device == devices[i % len(devices)]
        # total = a + 50 * (a @ ones) = i + 50 * 8i per element, 64 elements
        assert value == 64 * (i + 50 * 8 * i)


@needs_sim
def test_the_gil_is_released_while_an_op_runs():
    # The sim GPU sleeps 300 ms before every kernel. While a thread waits in such an op,
    # the main thread must be able to run Python: with the GIL held by the op, it could
    # only run again after the op finished.
    out = run_python("""
        import threading, time
        import xdev
        with xdev.device("/GPU:0"):
            a = xdev.constant([[1.0]])
        started = threading.Event()
        def op():
            started.set()
            with xdev.device("/GPU:0"):
                (a @ a).numpy()
        t = threading.Thread(target=op)
        t.start()
        started.wait()
        time.sleep(0.05)
        ran_python = sum(range(1000))
        print(t.is_alive(), ran_python)
        t.join()
    """, sim=True, env={"XDEV_SIM_DELAY_US": "300000"}).stdout.split()
    assert out == ["True", "499500"]
