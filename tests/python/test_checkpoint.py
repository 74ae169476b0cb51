"""xdev.train.Checkpoint: save and restore variables, models and optimizers (TensorFlow's
tf.train.Checkpoint), onto whatever device the objects live on."""

import os

import numpy as np
import pytest

import xdev
from conftest import run_on_logical_cpus

X = np.random.default_rng(3).standard_normal((16, 4)).astype(np.float32)
Y = np.random.default_rng(4).standard_normal((16, 2)).astype(np.float32)


def make(seed=0):
    """A model (built) and an Adam optimizer; weights from ``seed``."""
    model = xdev.keras.Sequential([xdev.keras.layers.Dense(8, activation="relu"),
                                   xdev.keras.layers.Dense(2)])
    model(xdev.constant(X))
    rng = np.random.default_rng(seed)
    model.set_weights([rng.standard_normal(v.shape).astype(np.float32) * 0.3
                       for v in model.variables])
    return model, xdev.optimizers.Adam(0.05)


def train(model, opt, steps):
    losses = []
    for _ in range(steps):
        with xdev.GradientTape() as tape:
            loss = xdev.reduce_mean(xdev.square(model(xdev.constant(X)) - Y))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        losses.append(float(loss.numpy()))
    return losses


def test_a_restored_run_continues_bit_for_bit(tmp_path):
    model, opt = make()
    step = xdev.Variable(0, dtype=xdev.int64)
    train(model, opt, 3)
    step.assign(3)
    ckpt = xdev.train.Checkpoint(step=step, model=model, optimizer=opt)
    path = ckpt.save(tmp_path / "ckpt")
    assert path == str(tmp_path / "ckpt-1")
    assert os.path.exists(path + ".safetensors")
    expected = train(model, opt, 4)

    # Fresh objects with other weights and an optimizer that never ran.
    model2, opt2 = make(seed=9)
    step2 = xdev.Variable(0, dtype=xdev.int64)
    status = xdev.train.Checkpoint(step=step2, model=model2, optimizer=opt2).restore(
        xdev.train.latest_checkpoint(tmp_path))
    status.assert_consumed()
    assert int(step2.numpy()) == 3
    assert opt2.iterations == 3
    # Adam's moments and step count came back too: the same losses, bit for bit.
    assert train(model2, opt2, 4) == expected


def test_without_the_optimizer_the_run_differs(tmp_path):
    """The check above is sharp: restoring the weights alone does not continue the run."""
    model, opt = make()
    train(model, opt, 3)
    path = xdev.train.Checkpoint(model=model).save(tmp_path / "ckpt")
    expected = train(model, opt, 4)
    model2, opt2 = make(seed=9)
    xdev.train.Checkpoint(model=model2).restore(path).assert_consumed()
    assert train(model2, opt2, 4) != expected


def test_save_counts_and_latest_checkpoint_follows(tmp_path):
    v = xdev.Variable([1.0, 2.0])
    ckpt = xdev.train.Checkpoint(v=v)
    assert xdev.train.latest_checkpoint(tmp_path) is None
    first = ckpt.save(tmp_path / "ckpt")
    v.assign([5.0, 6.0])
    second = ckpt.save(tmp_path / "ckpt")
    assert (first, second) == (str(tmp_path / "ckpt-1"), str(tmp_path / "ckpt-2"))
    assert xdev.train.latest_checkpoint(tmp_path) == second
    ckpt.restore(first)
    np.testing.assert_array_equal(v.numpy(), [1.0, 2.0])
    # write: exactly the prefix given, no counter, no state file change.
    assert ckpt.write(tmp_path / "other") == str(tmp_path / "other")
    assert xdev.train.latest_checkpoint(tmp_path) == second


def test_a_mismatch_is_an_error_and_assigns_nothing(tmp_path):
    a, b = xdev.Variable([1.0, 2.0]), xdev.Variable([3.0])
    path = xdev.train.Checkpoint(a=a, b=b).write(tmp_path / "ckpt")
    a2, b2 = xdev.Variable([0.0, 0.0]), xdev.Variable([0.0, 0.0])  # b: another shape
    with pytest.raises(ValueError, match=r"b is float32\(2,\) here, float32\(1,\)"):
        xdev.train.Checkpoint(a=a2, b=b2).restore(path)
    np.testing.assert_array_equal(a2.numpy(), [0.0, 0.0])
    i = xdev.Variable([0, 0])
    with pytest.raises(ValueError, match="a is int32"):
        xdev.train.Checkpoint(a=i).restore(path)


def test_assert_consumed_names_what_did_not_match(tmp_path):
    a, b = xdev.Variable([1.0]), xdev.Variable([2.0])
    path = xdev.train.Checkpoint(a=a, b=b).write(tmp_path / "ckpt")
    status = xdev.train.Checkpoint(a=xdev.Variable([0.0]), c=xdev.Variable([0.0])).restore(path)
    with pytest.raises(AssertionError, match=r"matched no object: \['b'\].*no value in the "
                                             r"file: \['c'\]"):
        status.assert_consumed()
    with pytest.raises(AssertionError, match=r"no value in the file: \['c'\]"):
        status.assert_existing_objects_matched()
    assert status.expect_partial() is status


def test_an_unbuilt_model_is_refused_not_silently_skipped(tmp_path):
    model, _ = make()
    path = xdev.train.Checkpoint(model=model).write(tmp_path / "ckpt")
    unbuilt = xdev.keras.Sequential([xdev.keras.layers.Dense(8), xdev.keras.layers.Dense(2)])
    with pytest.raises(ValueError, match="model has no variables yet.*build it first"):
        xdev.train.Checkpoint(model=unbuilt).restore(path)


def test_missing_files_and_bad_objects(tmp_path):
    with pytest.raises(xdev.errors.NotFoundError, match="no checkpoint at"):
        xdev.train.Checkpoint(v=xdev.Variable([1.0])).restore(tmp_path / "nothing")
    with pytest.raises(ValueError, match="save_path is None"):
        xdev.train.Checkpoint(v=xdev.Variable([1.0])).restore(None)
    with pytest.raises(TypeError, match="x is a str"):
        xdev.train.Checkpoint(x="text").write(tmp_path / "ckpt")


def test_nested_checkpoints_and_sgd_momentum(tmp_path):
    model, _ = make()
    opt = xdev.optimizers.SGD(0.1, momentum=0.9)
    train(model, opt, 2)
    inner = xdev.train.Checkpoint(model=model)
    path = xdev.train.Checkpoint(net=inner, opt=opt).write(tmp_path / "ckpt")
    expected = train(model, opt, 3)
    model2, _ = make(seed=5)
    opt2 = xdev.optimizers.SGD(0.1, momentum=0.9)
    xdev.train.Checkpoint(net=xdev.train.Checkpoint(model=model2), opt=opt2).restore(
        path).assert_consumed()
    assert train(model2, opt2, 3) == expected


def test_set_slots_checks_count_shape_and_dtype():
    v = xdev.Variable([1.0, 2.0])
    opt = xdev.optimizers.Adam(0.1)
    assert opt._cpp.slots(v._var) == []
    with pytest.raises(xdev.errors.InvalidArgumentError, match="1 slots given, this optimizer "
                                                               "keeps 2"):
        opt._cpp.set_slots(v._var, [xdev.constant([0.0, 0.0])])
    with pytest.raises(xdev.errors.InvalidArgumentError, match="slot 1 is float32 of shape"):
        opt._cpp.set_slots(v._var, [xdev.constant([0.0, 0.0]), xdev.constant([0.0])])
    with pytest.raises(xdev.errors.InvalidArgumentError, match="negative"):
        opt._cpp.set_iterations(-1)
    assert opt._cpp.slots(v._var) == []  # nothing kept from the refused calls


def test_saved_on_one_device_restores_onto_another():
    out = run_on_logical_cpus(2, """
        import os, tempfile
        import numpy as np
        with xdev.device("/CPU:0"):
            v = xdev.Variable([1.0, 2.0, 3.0])
        folder = tempfile.mkdtemp()
        path = xdev.train.Checkpoint(v=v).save(os.path.join(folder, "ckpt"))
        with xdev.device("/CPU:1"):
            w = xdev.Variable([0.0, 0.0, 0.0])
        xdev.train.Checkpoint(v=w).restore(path).assert_consumed()
        print(w.device)
        print(w.numpy().tolist())
    """).stdout.splitlines()
    assert out[0].endswith("device:CPU:1")
    assert out[1] == "[1.0, 2.0, 3.0]"
