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


def test_optimizers_update_mirrored_variables_like_one_device_with_the_full_batch():
    # SGD with momentum and Adam on MirroredVariables over 2 logical CPUs, with the
    # PerReplica gradients strategy.run returns: the same weights as the same optimizer
    # on plain Variables with the whole batch, and every copy identical.
    run_on_logical_cpus(2, """
        import numpy as np
        rng = np.random.default_rng(3)
        x = rng.standard_normal((16, 3))
        y = x @ np.array([[1.0], [-2.0], [0.5]]) + 0.25
        strategy = xdev.distribute.MirroredStrategy()
        assert strategy.num_replicas_in_sync == 2
        xs, ys = strategy.split_batch(x), strategy.split_batch(y)

        def gradients(w, b, xb, yb):
            with xdev.GradientTape() as tape:
                err = xdev.matmul(xb, w) + b - yb
                loss = xdev.reduce_sum(err * err) / 16.0
            return tape.gradient(loss, [w, b])

        for make in (lambda: xdev.optimizers.SGD(learning_rate=0.05, momentum=0.9),
                     lambda: xdev.optimizers.SGD(learning_rate=0.05, momentum=0.9, nesterov=True),
                     lambda: xdev.optimizers.Adam(learning_rate=0.05),
                     lambda: xdev.optimizers.AdamW(learning_rate=0.05, weight_decay=0.01)):
            with xdev.device("/CPU:0"):
                w1 = xdev.Variable(xdev.zeros([3, 1], dtype=xdev.float64))
                b1 = xdev.Variable(xdev.zeros([1], dtype=xdev.float64))
            single = make()
            for _ in range(15):
                single.apply_gradients(zip(gradients(w1, b1, x, y), [w1, b1]))

            with strategy.scope():
                w = xdev.Variable(xdev.zeros([3, 1], dtype=xdev.float64))
                b = xdev.Variable(xdev.zeros([1], dtype=xdev.float64))
            opt = make()
            for step in range(15):
                grads = strategy.run(gradients, args=(w, b, xs, ys))
                assert isinstance(grads[0], xdev.distribute.PerReplica)
                assert opt.apply_gradients(zip(grads, [w, b])) == step + 1
            np.testing.assert_allclose(w.numpy(), w1.numpy(), rtol=0, atol=1e-9)
            np.testing.assert_allclose(b.numpy(), b1.numpy(), rtol=0, atol=1e-9)
            assert abs(w.numpy()[0, 0]) > 0.1  # training moved the weights
            for var in (w, b):
                copies = [v.numpy() for v in var.values]
                assert [str(v.device) for v in var.values] == list(strategy.extended.worker_devices)
                np.testing.assert_array_equal(copies[1], copies[0])
        print("ok")
    """)


def test_optimizers_refuse_what_does_not_fit_mirrored_variables():
    run_on_logical_cpus(2, """
        import pytest
        strategy = xdev.distribute.MirroredStrategy()
        with strategy.scope():
            w = xdev.Variable([1.0, 2.0])
        plain = xdev.Variable([1.0, 2.0])
        opt = xdev.optimizers.Adam(learning_rate=0.1)
        grads = strategy.run(lambda: xdev.constant([1.0, 1.0]))
        with pytest.raises(TypeError, match="item 1 is a plain Variable among MirroredVariables"):
            opt.apply_gradients([(grads, w), (xdev.constant([1.0, 1.0]), plain)])
        with pytest.raises(TypeError, match="one value for a MirroredVariable with 2 replicas"):
            opt.apply_gradients([(xdev.constant([1.0, 1.0]), w)])
        wrong = strategy.run(lambda: xdev.constant([1.0, 1.0, 1.0]))
        with pytest.raises(xdev.errors.InvalidArgumentError,
                           match=r"mirrored variable 0 on replica 0 .* is float32 of shape"):
            opt.apply_gradients([(wrong, w)])
        one = xdev.distribute.PerReplica([grads.values[0]])
        with pytest.raises(xdev.errors.InvalidArgumentError,
                           match="1 gradients for mirrored variable 0 on 2 local replicas"):
            opt.apply_gradients([(one, w)])
        assert opt.iterations == 0
        assert [v.numpy().tolist() for v in w.values] == [[1.0, 2.0]] * 2
        # None gradients leave the variable alone, as for plain Variables.
        opt.apply_gradients([(None, w)])
        assert [v.numpy().tolist() for v in w.values] == [[1.0, 2.0]] * 2
        print("ok")
    """)


def test_apply_gradients_inside_run_sums_the_replicas_and_steps_once_as_tensorflow():
    # TensorFlow's custom training loop: a layer made in scope, built at its first call
    # inside run, and apply_gradients inside the step function. Every run of it on two
    # logical CPUs gives the weights of one device with the whole batch, and one step
    # is one iteration.
    run_on_logical_cpus(2, """
        import numpy as np
        rng = np.random.default_rng(5)
        x = rng.standard_normal((16, 4)).astype(np.float32)
        y = rng.standard_normal((16, 2)).astype(np.float32)

        def train(strategy, make_optimizer, steps=4):
            with strategy.scope():
                layer = xdev.layers.Dense(2, seed=7)
                opt = make_optimizer()
            xs, ys = strategy.split_batch(x), strategy.split_batch(y)

            def step(xb, yb):
                with xdev.GradientTape() as tape:
                    loss = xdev.reduce_sum(xdev.square(layer(xb) - yb)) / 16.0
                grads = tape.gradient(loss, layer.trainable_variables)
                opt.apply_gradients(zip(grads, layer.trainable_variables))
                return loss

            for _ in range(steps):
                strategy.run(step, args=(xs, ys))
            return opt.iterations, [v.numpy() for v in layer.trainable_variables], layer

        for make in (lambda: xdev.optimizers.SGD(learning_rate=0.1),
                     lambda: xdev.optimizers.Adam(learning_rate=0.05)):
            iterations, single, _ = train(xdev.distribute.MirroredStrategy(["/CPU:0"]), make)
            assert iterations == 4
            for attempt in range(8):
                iterations, weights, layer = train(xdev.distribute.MirroredStrategy(), make)
                assert iterations == 4, (attempt, iterations)
                assert layer.kernel.device.endswith("CPU:0"), layer.kernel.device
                for got, want in zip(weights, single):
                    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
        print("ok")
    """)


def test_replicas_that_disagree_on_apply_gradients_fail_instead_of_hanging():
    run_on_logical_cpus(2, """
        import pytest
        strategy = xdev.distribute.MirroredStrategy()
        w = xdev.Variable([1.0, 2.0])
        opt = xdev.optimizers.SGD(learning_rate=1.0)

        def only_replica_0():
            if xdev.distribute.get_replica_context().replica_id_in_sync_group == 0:
                opt.apply_gradients([(xdev.constant([1.0, 1.0]), w)])

        with pytest.raises(xdev.errors.FailedPreconditionError,
                           match="did not make the same apply_gradients calls"):
            strategy.run(only_replica_0)

        def replica_1_raises():
            if xdev.distribute.get_replica_context().replica_id_in_sync_group == 1:
                raise KeyError("boom")
            opt.apply_gradients([(xdev.constant([1.0, 1.0]), w)])

        with pytest.raises(KeyError, match="boom"):
            strategy.run(replica_1_raises)

        other = xdev.Variable([0.0, 0.0])
        def other_variables():
            rid = xdev.distribute.get_replica_context().replica_id_in_sync_group
            opt.apply_gradients([(xdev.constant([1.0, 1.0]), w if rid == 0 else other)])

        with pytest.raises(ValueError, match="replica 1 passed other variables than replica 0"):
            strategy.run(other_variables)
        assert opt.iterations == 0
        assert w.numpy().tolist() == [1.0, 2.0]
        # Together they apply the sum once.
        strategy.run(lambda: opt.apply_gradients([(xdev.constant([0.25, 0.5]), w)]))
        assert opt.iterations == 1
        assert w.numpy().tolist() == [0.5, 1.0]
        print("ok")
    """)


def test_one_replica_takes_the_plain_gradient_run_returns():
    strategy = xdev.distribute.MirroredStrategy(["/CPU:0"])
    with strategy.scope():
        w = xdev.Variable(xdev.constant([1.0, 2.0]))
    grad = strategy.run(lambda: xdev.constant([0.5, 1.0]))
    assert not isinstance(grad, xdev.distribute.PerReplica)
    xdev.optimizers.SGD(learning_rate=2.0).apply_gradients([(grad, w)])
    np.testing.assert_array_equal(w.numpy(), [0.0, 0.0])
