"""xdev.distribute.MirroredStrategy: scope(), run, reduce, mirrored variables."""

import numpy as np
import pytest

import xdev
from conftest import GPU0, GPU1, needs_sim, run_on_logical_cpus, run_python


@needs_sim
def test_run_calls_the_step_once_per_replica_on_its_device(capfd):
    strategy = xdev.distribute.MirroredStrategy()
    assert capfd.readouterr().err.strip() == f"Using MirroredStrategy with devices ('{GPU0}', '{GPU1}')"
    assert strategy.num_replicas_in_sync == 2
    assert strategy.extended.worker_devices == (GPU0, GPU1)

    def step(x):
        ctx = xdev.distribute.get_replica_context()
        return xdev.constant([[float(ctx.replica_id_in_sync_group)]]) @ x, x

    x = strategy.experimental_distribute_values_from_function(
        lambda ctx: xdev.constant([[ctx.replica_id_in_sync_group + 1.0]]))
    products, inputs = strategy.run(step, args=(x,))
    assert [v.device for v in products.values] == [GPU0, GPU1]
    assert [v.numpy().item() for v in products.values] == [0.0, 2.0]
    total = strategy.reduce(xdev.distribute.ReduceOp.SUM, products, axis=None)
    assert total.numpy().item() == 2.0
    assert strategy.reduce("MEAN", inputs).numpy().item() == 1.5
    assert xdev.distribute.get_replica_context() is None


@needs_sim
def test_variables_under_scope_are_mirrored_and_update_together():
    strategy = xdev.distribute.MirroredStrategy([GPU0, "/GPU:1"])
    with strategy.scope():
        assert xdev.distribute.get_strategy() is strategy
        w = xdev.Variable(xdev.constant([1.0, 2.0]))
    assert isinstance(w, xdev.distribute.MirroredVariable)
    assert [v.device for v in w.values] == [GPU0, GPU1]
    seen = strategy.run(lambda: w + 0.0)  # the sim GPUs have Add (and MatMul) kernels only
    assert [v.device for v in seen.values] == [GPU0, GPU1]
    grads = strategy.run(lambda: xdev.constant([0.5, 0.5]))
    w.assign_sub(strategy.all_reduce("SUM", grads), 2.0)  # w -= 2 * (0.5 + 0.5)
    for v in w.values:
        np.testing.assert_array_equal(v.numpy(), [-1.0, 0.0])
    with pytest.raises(xdev.errors.FailedPreconditionError, match="inside run"):
        strategy.run(lambda: w.assign_sub(1.0))
    plain = xdev.Variable(3.0)
    assert not isinstance(plain, xdev.distribute.MirroredVariable)
    plain.assign_add(1.0)
    assert float(plain) == 4.0


@needs_sim
def test_a_replica_that_raises_fails_the_step_with_its_own_exception():
    strategy = xdev.distribute.MirroredStrategy()

    def step():
        if xdev.distribute.get_replica_context().replica_id_in_sync_group == 1:
            raise KeyError("boom")
        return xdev.constant(1.0)

    with pytest.raises(KeyError, match="boom") as e:
        strategy.run(step)
    assert any("replica 1" in note and GPU1 in note for note in e.value.__notes__)


def test_training_on_one_two_and_four_logical_cpus_agrees():
    # One dense layer trained with the mirrored strategy on 1, 2 and 4 logical CPUs
    # (each run in its own interpreter): the weights agree.
    program = """
        import sys
        import numpy as np
        import xdev
        n = int(sys.argv[1]) if len(sys.argv) > 1 else {n}
        cpu = xdev.config.list_physical_devices("CPU")[0]
        xdev.config.set_logical_device_configuration(
            cpu, [xdev.config.LogicalDeviceConfiguration(memory_limit=64)] * n)
        strategy = xdev.distribute.MirroredStrategy()
        rng = np.random.default_rng(0)
        x = rng.standard_normal((32, 3)).astype(np.float64)
        y = x @ np.array([[1.0], [-2.0], [0.5]])
        with strategy.scope():
            w = xdev.Variable(xdev.zeros([3, 1], dtype=xdev.float64))
        xs, ys = strategy.split_batch(x), strategy.split_batch(y)
        def gradient(xb, yb):
            err = xdev.matmul(xb, w) - yb
            return xdev.matmul(xb, err, transpose_a=True) * (2.0 / 32)
        for _ in range(100):
            grads = strategy.run(gradient, args=(xs, ys))
            w.assign_sub(strategy.all_reduce("SUM", grads) if n > 1 else grads, 0.1)
        print(" ".join(f"{v:.12f}" for v in w.numpy().ravel()))
    """
    results = [run_python(program.replace("{n}", str(n))).stdout.split() for n in (1, 2, 4)]
    np.testing.assert_allclose(np.float64(results[0]), [1.0, -2.0, 0.5], atol=1e-3)
    np.testing.assert_allclose(np.float64(results[1]), np.float64(results[0]), rtol=1e-12)
    np.testing.assert_allclose(np.float64(results[2]), np.float64(results[0]), rtol=1e-12)


def test_all_reduce_takes_max_and_min_over_two_logical_cpus():
    run_on_logical_cpus(2, """
        s = xdev.distribute.MirroredStrategy()
        values = xdev.distribute.PerReplica([xdev.constant([1.0, 5.0]), xdev.constant([3.0, 2.0])])
        for op, want in (("MAX", [3.0, 5.0]), (xdev.distribute.ReduceOp.MIN, [1.0, 2.0])):
            assert [v.numpy().tolist() for v in s.all_reduce(op, values).values] == [want] * 2, op
            assert s.reduce(op, values).numpy().tolist() == want, op
        try:
            s.reduce("MAX", values, axis=0)
        except ValueError as e:
            assert "SUM or MEAN" in str(e), e
        else:
            raise AssertionError("reduce MAX over an axis ran")
    """)
