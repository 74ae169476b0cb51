"""Training from Python: xdev.GradientTape (the C++ tape), Variables, optimizers,
layers and losses."""

import threading

import numpy as np
import pytest

import xdev
from conftest import GPU1, REPO, needs_sim, run_python


def _f64(shape, seed):
    return np.random.default_rng(seed).uniform(-1.0, 1.0, size=shape)


def _numeric_gradients(fn, arrays, eps=1e-6):
    """Central differences of the scalar fn(*tensors) with respect to each array."""
    grads = []
    for k, a in enumerate(arrays):
        g = np.zeros_like(a)
        for idx in np.ndindex(a.shape):
            up = [x.copy() for x in arrays]
            down = [x.copy() for x in arrays]
            up[k][idx] += eps
            down[k][idx] -= eps
            f_up = float(fn(*[xdev.constant(x) for x in up]))
            f_down = float(fn(*[xdev.constant(x) for x in down]))
            g[idx] = (f_up - f_down) / (2 * eps)
        grads.append(g)
    return grads


GRADIENT_CASES = {
    # a [4, 1] times b [1, 3]: both gradients are reduced over the broadcast axis.
    "broadcast_multiply": (lambda a, b: xdev.reduce_sum(xdev.sin(a * b)), [(4, 1), (1, 3)]),
    # The bias [2] broadcast over the batch of 4: its gradient sums the rows.
    "dense_tanh": (lambda x, w, b: xdev.reduce_sum(xdev.square(xdev.tanh(x @ w + b))),
                   [(4, 3), (3, 2), (2,)]),
    "divide_exp_log": (lambda a, b: xdev.reduce_mean(
        xdev.math.log(1.0 + xdev.exp(a)) / (b * b + 1.0)), [(2, 3), (3,)]),
    "sigmoid_subtract": (lambda a, b: xdev.reduce_sum(xdev.sigmoid(a - b) * a),
                         [(2, 3), (2, 1)]),
    "softmax_cross_entropy": (lambda logits, labels: xdev.losses.softmax_cross_entropy(
        xdev.nn.softmax(labels), logits), [(3, 4), (3, 4)]),
    "mean_squared_error": (lambda p, t: xdev.losses.mean_squared_error(t, p), [(5, 2), (5, 2)]),
}


@pytest.mark.parametrize("case", sorted(GRADIENT_CASES))
def test_gradients_match_finite_differences_in_float64(case):
    fn, shapes = GRADIENT_CASES[case]
    arrays = [_f64(s, seed) for seed, s in enumerate(shapes)]
    tensors = [xdev.constant(a) for a in arrays]
    assert all(t.dtype == xdev.float64 for t in tensors)
    with xdev.GradientTape() as tape:
        tape.watch(tensors)
        y = fn(*tensors)
    grads = tape.gradient(y, tensors)
    assert isinstance(grads, list) and len(grads) == len(tensors)
    for g, t, expected in zip(grads, tensors, _numeric_gradients(fn, arrays)):
        assert g.shape == t.shape and g.dtype == xdev.float64
        np.testing.assert_allclose(g.numpy(), expected, rtol=1e-6, atol=1e-8)


def test_a_persistent_tape_gives_gradients_more_than_once():
    x = xdev.constant([1.0, 2.0, 3.0])
    with xdev.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * x
        z = y * y  # x^4
    np.testing.assert_allclose(tape.gradient(z, x).numpy(), 4 * np.array([1.0, 8.0, 27.0]))
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), [2.0, 4.0, 6.0])
    np.testing.assert_allclose(tape.gradient(z, x).numpy(), [4.0, 32.0, 108.0])


def test_a_non_persistent_tape_refuses_a_second_gradient():
    x = xdev.constant([1.0, 2.0])
    with xdev.GradientTape() as tape:
        tape.watch(x)
        y = xdev.reduce_sum(x * x)
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), [2.0, 4.0])
    with pytest.raises(xdev.errors.FailedPreconditionError,
                       match=r"non-persistent tape computes gradients only once.*"
                             r"persistent=True"):
        tape.gradient(y, x)
    with pytest.raises(xdev.errors.FailedPreconditionError, match="make a new tape"):
        with tape:
            pass


def test_gradient_inside_the_block_and_nested_tapes_give_second_derivatives():
    x = xdev.constant(3.0)
    with xdev.GradientTape() as outer:
        outer.watch(x)
        with xdev.GradientTape() as inner:
            inner.watch(x)
            y = x * x * x
        dy = inner.gradient(y, x)  # 3x^2, recorded by the outer tape
    assert float(dy) == pytest.approx(27.0)
    assert float(outer.gradient(dy, x)) == pytest.approx(18.0)  # 6x


def test_stop_gradient_cuts_the_path():
    x = xdev.constant([2.0, -1.0])
    with xdev.GradientTape() as tape:
        tape.watch(x)
        y = xdev.reduce_sum(x * xdev.stop_gradient(x))
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), [2.0, -1.0])  # not 2x
    np.testing.assert_array_equal(xdev.stop_gradient(x).numpy(), x.numpy())


def test_stop_recording_leaves_ops_off_the_tape():
    x = xdev.constant(2.0)
    with xdev.GradientTape() as tape:
        tape.watch(x)
        with tape.stop_recording():
            unrecorded = x * x
        recorded = x * x
    assert tape.gradient([unrecorded, recorded][0], x) is None
    with xdev.GradientTape() as tape:
        tape.watch(x)
        recorded = x * x
    assert float(tape.gradient(recorded, x)) == pytest.approx(4.0)
    with pytest.raises(xdev.errors.FailedPreconditionError, match="not recording"):
        with tape.stop_recording():
            pass


def test_unconnected_sources_get_none_or_zeros():
    x = xdev.constant([1.0, 2.0])
    z = xdev.constant([[5.0]])
    with xdev.GradientTape(persistent=True) as tape:
        tape.watch([x, z])
        y = xdev.reduce_sum(3.0 * x)
    gx, gz = tape.gradient(y, [x, z])
    np.testing.assert_allclose(gx.numpy(), [3.0, 3.0])
    assert gz is None
    gx, gz = tape.gradient(y, (x, z), unconnected_gradients="zero")
    assert gz.shape == (1, 1) and gz.dtype == xdev.float32
    np.testing.assert_array_equal(gz.numpy(), [[0.0]])


def test_a_plain_tensor_is_a_source_only_when_watched():
    x = xdev.constant([1.0, 2.0])
    with xdev.GradientTape() as tape:
        y = x * x
    assert tape.gradient(y, x) is None
    with xdev.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), [2.0, 4.0])
    with xdev.GradientTape() as tape:
        with pytest.raises(TypeError, match="item 0 is a numpy.ndarray"):
            tape.watch(np.ones(2))


def test_trainable_variables_are_watched_automatically():
    w = xdev.Variable([[1.0], [2.0]], name="w")
    frozen = xdev.Variable([3.0], trainable=False)
    x = xdev.constant([[3.0, 4.0]])
    with xdev.GradientTape() as tape:
        y = xdev.reduce_sum(xdev.square(x @ w)) * frozen  # (x @ w) = 11
    grads = tape.gradient(y, {"w": w, "frozen": frozen})
    assert set(grads) == {"w", "frozen"}
    np.testing.assert_allclose(grads["w"].numpy(), [[2 * 11 * 3 * 3.0], [2 * 11 * 4 * 3.0]])
    assert grads["frozen"] is None  # not trainable, not watched

    with xdev.GradientTape() as tape:
        tape.watch(frozen)
        y = xdev.reduce_sum(frozen * w)
    gw, gf = tape.gradient(y, (w, frozen))
    np.testing.assert_allclose(gf.numpy(), [3.0])
    np.testing.assert_allclose(gw.numpy(), [[3.0], [3.0]])

    with xdev.GradientTape(watch_accessed_variables=False) as tape:
        y = xdev.reduce_sum(w * w)
    assert tape.gradient(y, w) is None


def test_a_variable_read_twice_sums_its_gradients():
    v = xdev.Variable(2.0)
    with xdev.GradientTape() as tape:
        y = v * v + 3.0 * v
    assert float(tape.gradient(y, v)) == pytest.approx(7.0)


def test_tensors_and_variables_together():
    v = xdev.Variable([1.0, 2.0])
    x = xdev.constant([3.0, 4.0])
    with xdev.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = xdev.reduce_sum(v * x)
    gv, gx = tape.gradient(y, [v, x])
    np.testing.assert_allclose(gv.numpy(), [3.0, 4.0])
    np.testing.assert_allclose(gx.numpy(), [1.0, 2.0])
    # A non-persistent tape too: one backward pass serves both kinds, then
    # the tape is spent.
    with xdev.GradientTape() as tape:
        tape.watch(x)
        y = xdev.reduce_sum(v * x * v)
    gx, gv = tape.gradient(y, (x, v))
    np.testing.assert_allclose(gx.numpy(), [1.0, 4.0])
    np.testing.assert_allclose(gv.numpy(), [6.0, 16.0])
    with pytest.raises(xdev.errors.FailedPreconditionError, match=r"persistent=True"):
        tape.gradient(y, [v])


def test_integer_targets_and_sources_are_refused_naming_the_dtype():
    i = xdev.constant([1, 2])
    x = xdev.constant([1.0, 2.0])
    with xdev.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = xdev.cast(x, xdev.int32) * i
        z = xdev.reduce_sum(x)
    with pytest.raises(xdev.errors.InvalidArgumentError,
                       match=r"the target \(shape \(2,\)\) is int32"):
        tape.gradient(y, x)
    with pytest.raises(xdev.errors.InvalidArgumentError,
                       match=r"source 1 \(shape \(2,\)\) is int32"):
        tape.gradient(z, [x, i])
    with pytest.raises(xdev.errors.InvalidArgumentError, match=r"Variable 'n'\) is int64"):
        tape.gradient(z, xdev.Variable(np.int64(3), name="n"))
    with xdev.GradientTape() as tape:
        with pytest.raises(xdev.errors.InvalidArgumentError, match="watch: the tensor is int32"):
            tape.watch(i)


def test_a_path_through_an_integer_op_names_it():
    x = xdev.constant([1.5, 2.5])
    with xdev.GradientTape() as tape:
        tape.watch(x)
        y = xdev.reduce_sum(xdev.cast(xdev.argmax(x), xdev.float32) * x)
    with pytest.raises(xdev.errors.InvalidArgumentError, match="ArgMax"):
        tape.gradient(y, x)


def test_the_variable_api_is_kept():
    v = xdev.Variable([1.0, 2.0], name="v")
    assert (v.shape, v.dtype, v.name, v.trainable) == ((2,), xdev.float32, "v", True)
    assert v.device == xdev.constant([1.0]).device and v.ndim == 1
    with xdev.device("/CPU:0"):  # made on the device of the innermost scope
        assert xdev.Variable(xdev.constant([1.0])).device.endswith("/device:CPU:0")
    np.testing.assert_array_equal(v.numpy(), [1.0, 2.0])
    np.testing.assert_array_equal((v + 1.0).numpy(), [2.0, 3.0])
    np.testing.assert_array_equal(xdev.multiply(v, v).numpy(), [1.0, 4.0])
    np.testing.assert_array_equal(np.asarray(v), [1.0, 2.0])
    assert v.assign([5.0, 6.0]) is v
    v.assign_add(1.0)
    v.assign_sub(xdev.constant([0.5, 0.5]))
    np.testing.assert_array_equal(v.numpy(), [5.5, 6.5])
    with pytest.raises(xdev.errors.InvalidArgumentError,
                       match=r"Variable.assign: v is float32 of shape \(2,\); the value is "
                             r"float32 of shape \(3,\)"):
        v.assign([1.0, 2.0, 3.0])
    with pytest.raises(xdev.errors.InvalidArgumentError, match="Cannot convert 0.5"):
        xdev.Variable(1).assign_add(0.5)
    # Updates are not recorded: the gradient sees the value read, not the assignment.
    with xdev.GradientTape() as tape:
        y = xdev.reduce_sum(v * 2.0)
        v.assign([0.0, 0.0])
    np.testing.assert_array_equal(tape.gradient(y, v).numpy(), [2.0, 2.0])


def test_mirrored_variables_are_watched_inside_run():
    strategy = xdev.distribute.MirroredStrategy(["/CPU:0"])
    with strategy.scope():
        w = xdev.Variable([1.0, 2.0])
    assert isinstance(w, xdev.distribute.MirroredVariable)
    assert w.shape == (2,) and w.dtype == xdev.float32

    def step(x):
        with xdev.GradientTape() as tape:
            loss = xdev.reduce_sum(w * x)
        return tape.gradient(loss, w)

    grad = strategy.run(step, args=(xdev.constant([3.0, 4.0]),))
    np.testing.assert_allclose(grad.numpy(), [3.0, 4.0])


# --- optimizers ---------------------------------------------------------------------


def test_sgd_steps_match_hand_computed_updates():
    g = np.array([0.5, -1.0])
    w0 = np.array([1.0, 2.0])
    plain = xdev.Variable(w0)
    xdev.optimizers.SGD(learning_rate=0.1).apply_gradients([(xdev.constant(g), plain)])
    np.testing.assert_allclose(plain.numpy(), w0 - 0.1 * g)

    for nesterov in (False, True):
        v = xdev.Variable(w0)
        opt = xdev.optimizers.SGD(learning_rate=0.1, momentum=0.9, nesterov=nesterov)
        velocity, w = np.zeros(2), w0.copy()
        for _ in range(2):
            assert opt.apply_gradients(zip([xdev.constant(g)], [v])) == opt.iterations
            velocity = 0.9 * velocity - 0.1 * g
            w = w + (0.9 * velocity - 0.1 * g if nesterov else velocity)
        assert opt.iterations == 2
        np.testing.assert_allclose(v.numpy(), w, rtol=1e-12)


def test_adam_and_adamw_first_steps_match_hand_computed_updates():
    g = np.array([0.5, -2.0, 0.0])
    w0 = np.array([1.0, -1.0, 3.0])
    lr, b1, b2, eps, wd = 0.01, 0.9, 0.999, 1e-7, 0.1

    def adam_step(w, m, v, t):
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        w = w - lr * np.sqrt(1 - b2 ** t) / (1 - b1 ** t) * m / (np.sqrt(v) + eps)
        return w, m, v

    var = xdev.Variable(w0)
    opt = xdev.optimizers.Adam(learning_rate=lr, beta_1=b1, beta_2=b2, epsilon=eps)
    w, m, v = w0, np.zeros(3), np.zeros(3)
    for t in (1, 2):
        opt.apply_gradients([(xdev.constant(g), var)])
        w, m, v = adam_step(w, m, v, t)
        np.testing.assert_allclose(var.numpy(), w, rtol=1e-12)

    var = xdev.Variable(w0)
    xdev.optimizers.AdamW(learning_rate=lr, weight_decay=wd).apply_gradients(
        [(xdev.constant(g), var)])
    w, _, _ = adam_step(w0 - lr * wd * w0, np.zeros(3), np.zeros(3), 1)
    np.testing.assert_allclose(var.numpy(), w, rtol=1e-12)


def test_apply_gradients_skips_none_and_names_what_is_wrong():
    a, b = xdev.Variable([1.0]), xdev.Variable([2.0])
    opt = xdev.optimizers.SGD(learning_rate=1.0)
    opt.apply_gradients([(None, a), (xdev.constant([1.0]), b)])
    assert (a.numpy().item(), b.numpy().item()) == (1.0, 1.0)
    with pytest.raises(TypeError, match="variable of item 0 is a Tensor"):
        opt.apply_gradients([(xdev.constant([1.0]), xdev.constant([1.0]))])
    with pytest.raises(TypeError, match="item 0 is not a .gradient, variable. pair"):
        opt.apply_gradients([xdev.constant([1.0])])
    with pytest.raises(xdev.errors.InvalidArgumentError):
        opt.apply_gradients([(xdev.constant([1.0, 2.0]), a)])
    opt.learning_rate = 0.5
    assert opt.learning_rate == 0.5


# --- training a model ----------------------------------------------------------------


def _blobs(seed=0, n=100):
    """Two Gaussian blobs, one per class: linearly separable up to rare outliers."""
    rng = np.random.default_rng(seed)
    x = np.concatenate([rng.normal(-1.0, 0.4, (n, 2)), rng.normal(1.0, 0.4, (n, 2))])
    y = np.concatenate([np.zeros(n, np.int32), np.ones(n, np.int32)])
    return x.astype(np.float32), y


def _accuracy(logits, y):
    return float(np.mean(np.argmax(logits.numpy(), axis=1) == y))


@pytest.mark.parametrize("optimizer", [
    lambda: xdev.optimizers.SGD(learning_rate=0.5, momentum=0.9),
    lambda: xdev.optimizers.Adam(learning_rate=0.05),
], ids=["sgd", "adam"])
def test_a_two_layer_network_of_variables_learns_the_blobs(optimizer):
    x_np, y_np = _blobs()
    x, y = xdev.constant(x_np), xdev.constant(y_np)
    rng = np.random.default_rng(1)
    w1 = xdev.Variable(rng.normal(0, 0.5, (2, 8)).astype(np.float32), name="w1")
    b1 = xdev.Variable(np.zeros(8, np.float32), name="b1")
    w2 = xdev.Variable(rng.normal(0, 0.5, (8, 2)).astype(np.float32), name="w2")
    b2 = xdev.Variable(np.zeros(2, np.float32), name="b2")
    variables = [w1, b1, w2, b2]
    opt = optimizer()

    def model(inputs):
        return xdev.nn.relu(inputs @ w1 + b1) @ w2 + b2

    first = None
    for _ in range(60):
        with xdev.GradientTape() as tape:
            loss = xdev.losses.sparse_softmax_cross_entropy(y, model(x))
        grads = tape.gradient(loss, variables)
        assert all(g is not None for g in grads)
        opt.apply_gradients(zip(grads, variables))
        first = float(loss) if first is None else first
    assert float(loss) < 0.5 * first
    assert _accuracy(model(x), y_np) >= 0.97


def _fit(model, x, y, opt, steps):
    """`steps` full-batch steps of the mean sparse softmax cross-entropy."""
    for _ in range(steps):
        with xdev.GradientTape() as tape:
            loss = xdev.losses.sparse_softmax_cross_entropy(y, model(x, training=True))
        variables = model.trainable_variables
        opt.apply_gradients(zip(tape.gradient(loss, variables), variables))


def test_dense_layers_in_a_sequential_model_train_with_adam():
    x_np, y_np = _blobs(seed=2)
    x, y = xdev.constant(x_np), xdev.constant(y_np)
    model = xdev.layers.Sequential([
        xdev.layers.Dense(8, activation="relu", seed=3),
        xdev.layers.Dense(2, seed=4),
    ])
    assert model.trainable_variables == []  # built at the first call, as in Keras
    model(x)
    shapes = [v.shape for v in model.trainable_variables]
    assert shapes == [(2, 8), (8,), (8, 2), (2,)]
    assert model.trainable_variables[0] is model.layers[0].kernel  # stable handles
    opt = xdev.optimizers.Adam(learning_rate=0.05)
    _fit(model, x, y, opt, steps=60)
    assert _accuracy(model(x), y_np) >= 0.97


def test_dense_computes_x_at_kernel_plus_bias():
    layer = xdev.layers.Dense(3, activation=None, input_dim=2, seed=0)
    assert layer.built and layer.kernel.shape == (2, 3) and layer.bias.shape == (3,)
    x = np.array([[1.0, 2.0]], np.float32)
    expected = x @ layer.kernel.numpy() + layer.bias.numpy()
    np.testing.assert_allclose(layer(x).numpy(), expected, rtol=1e-6)
    relu = xdev.layers.Dense(3, activation="relu", input_dim=2, seed=0)
    np.testing.assert_allclose(relu(x).numpy(), np.maximum(expected, 0.0), rtol=1e-6)
    with pytest.raises(xdev.errors.InvalidArgumentError, match="activation 'swish'"):
        xdev.layers.Dense(2, activation="swish", input_dim=2)
    with pytest.raises(TypeError, match="activation must be None, a name or a function"):
        xdev.layers.Dense(2, activation=3)
    as_function = xdev.layers.Dense(3, activation=xdev.nn.relu, input_dim=2, seed=0)
    np.testing.assert_allclose(as_function(x).numpy(), np.maximum(expected, 0.0), rtol=1e-6)


def test_losses_values():
    t = np.array([[1.0, 0.0], [0.0, 1.0]])
    p = np.array([[0.5, 0.5], [1.0, 3.0]])
    assert float(xdev.losses.mean_squared_error(t, p)) == pytest.approx(np.mean((p - t) ** 2))
    logits = np.array([[2.0, 0.0], [0.0, 1.0]])
    log_softmax = logits - np.log(np.exp(logits).sum(axis=1, keepdims=True))
    expected = -np.mean(np.sum(t * log_softmax, axis=1))
    assert float(xdev.losses.softmax_cross_entropy(t, logits)) == pytest.approx(expected)
    sparse = xdev.losses.sparse_softmax_cross_entropy(np.array([0, 1], np.int32), logits)
    assert float(sparse) == pytest.approx(expected)


def test_the_user_guides_python_training_loop_runs_and_learns():
    guide = (REPO / "docs" / "user-guide.md").read_text()
    section = guide[guide.index("## Training: GradientTape"):]
    code = section[section.index("```python\n") + len("```python\n"):]
    code = code[:code.index("```")]
    assert "xdev.GradientTape()" in code and "apply_gradients" in code
    lines = run_python(code).stdout.splitlines()
    losses = [float(line.split()[-1]) for line in lines if line.startswith("step ")]
    assert len(losses) == 5 and losses[-1] < 0.1 * losses[0]


def test_watched_variables_are_the_users_objects_in_first_seen_order():
    a, b = xdev.Variable(1.0, name="a"), xdev.Variable(2.0, name="b")
    frozen = xdev.Variable(3.0, trainable=False)
    with xdev.GradientTape() as tape:
        y = b * a * frozen
    watched = tape.watched_variables()
    assert len(watched) == 2 and watched[0] is b and watched[1] is a
    tape.gradient(y, [a])
    with pytest.raises(xdev.errors.FailedPreconditionError, match="non-persistent tape is spent"):
        tape.watched_variables()
    layer = xdev.layers.Dense(1, input_dim=2)
    with xdev.GradientTape() as tape:
        layer(xdev.ones([1, 2]))  # read by the C++ layer
    watched = tape.watched_variables()  # in the order the C++ layer read them
    assert sorted(map(id, watched)) == sorted(map(id, layer.trainable_variables))


@needs_sim
def test_the_backward_pass_runs_where_the_forward_ops_ran():
    with xdev.device("/GPU:1"):
        x = xdev.constant([[1.0, 2.0]])
        w = xdev.Variable([[3.0], [4.0]])
    assert w.device == GPU1
    with xdev.GradientTape() as tape:
        y = x @ w + x @ w  # MatMul and Add: the sim's kernels
    g = tape.gradient(y, w, output_gradients=[[1.0]])
    assert g.device == GPU1
    np.testing.assert_array_equal(g.numpy(), [[2.0], [4.0]])


def test_a_tape_records_only_its_own_threads_ops():
    x = xdev.constant([1.0, 2.0])
    other = {}
    with xdev.GradientTape(persistent=True) as tape:
        tape.watch(x)
        thread = threading.Thread(target=lambda: other.setdefault("y", x * x))
        thread.start()
        thread.join()
        mine = x * x
    assert tape.gradient(other["y"], x) is None
    np.testing.assert_allclose(tape.gradient(mine, x).numpy(), [2.0, 4.0])


def test_losses_take_the_truth_in_the_predictions_dtype():
    pred = xdev.constant(np.array([[0.5, 1.5]]))  # float64
    assert float(xdev.losses.mean_squared_error([[1, 1]], pred)) == pytest.approx(0.25)
    assert xdev.losses.softmax_cross_entropy([[0, 1]], pred).dtype == xdev.float64


def _bars(n, seed):
    """8x8 one-channel images: class 0 a horizontal bar, class 1 a vertical one, in
    noise."""
    rng = np.random.default_rng(seed)
    x = rng.normal(0.0, 0.3, size=(n, 8, 8, 1)).astype(np.float32)
    y = rng.integers(0, 2, size=n).astype(np.int32)
    where = rng.integers(0, 8, size=n)
    for i in range(n):
        if y[i] == 0:
            x[i, where[i], :, 0] += 1.0
        else:
            x[i, :, where[i], 0] += 1.0
    return x, y


def test_a_small_cnn_of_the_python_layers_learns_the_bars():
    x_np, y_np = _bars(128, seed=5)
    x, y = xdev.constant(x_np), xdev.constant(y_np)
    model = xdev.layers.Sequential([
        xdev.layers.Conv2D(4, 3, padding="same", activation="relu", seed=6),
        xdev.layers.MaxPool2D(),
        xdev.layers.Flatten(),
        xdev.layers.Dropout(0.1, seed=7),
        xdev.layers.Dense(2, seed=8),
    ])
    model(x)
    shapes = [v.shape for v in model.trainable_variables]
    assert shapes == [(3, 3, 1, 4), (4,), (64, 2), (2,)]
    opt = xdev.optimizers.Adam(learning_rate=0.02)
    _fit(model, x, y, opt, steps=80)
    x_test, y_test = _bars(128, seed=9)
    assert _accuracy(model(x_test), y_test) >= 0.95


def test_conv2d_and_max_pool_match_the_ops():
    x = xdev.constant(_f64((2, 5, 5, 3), 10).astype(np.float32))
    conv = xdev.layers.Conv2D(2, (3, 2), strides=2, padding="valid", seed=1)
    y = conv(x)
    assert conv.kernel.shape == (3, 2, 3, 2) and conv.bias.shape == (2,)
    expected = xdev.nn.conv2d(x, conv.kernel, [1, 2, 2, 1], "VALID") + conv.bias
    np.testing.assert_allclose(y.numpy(), expected.numpy(), rtol=1e-6)
    pool = xdev.layers.MaxPool2D(pool_size=2)
    np.testing.assert_array_equal(pool(x).numpy(),
                                  xdev.nn.max_pool(x, [1, 2, 2, 1], [1, 2, 2, 1], "VALID").numpy())
    assert xdev.layers.Flatten()(x).shape == (2, 75)
    with pytest.raises(xdev.errors.InvalidArgumentError, match=r"Conv2D: the input must be NHWC"):
        xdev.layers.Conv2D(2, 3)(xdev.constant([[1.0]]))
    with pytest.raises(ValueError, match="Conv2D: kernel_size must be"):
        xdev.layers.Conv2D(2, (3, 0))
    with pytest.raises(ValueError, match="MaxPool2D: padding must be 'valid' or 'same'"):
        xdev.layers.MaxPool2D(padding="full")


def test_dropout_layer_norm_and_embedding():
    x = xdev.constant(np.ones((200, 50), np.float32))
    drop = xdev.layers.Dropout(0.5, seed=3)
    np.testing.assert_array_equal(drop(x).numpy(), x.numpy())  # not training: as it is
    kept = drop(x, training=True).numpy()
    assert set(np.unique(kept)) <= {0.0, 2.0}
    assert 0.4 < (kept == 2.0).mean() < 0.6
    with pytest.raises(ValueError, match=r"Dropout: rate must be in \[0, 1\)"):
        xdev.layers.Dropout(1.0)

    norm = xdev.layers.LayerNormalization()
    v = _f64((4, 6), 11)
    out = norm(xdev.constant(v)).numpy()
    ref = (v - v.mean(-1, keepdims=True)) / np.sqrt(v.var(-1, keepdims=True) + 1e-3)
    np.testing.assert_allclose(out, ref, rtol=1e-10, atol=1e-12)
    assert [w.shape for w in norm.trainable_variables] == [(6,), (6,)]

    embed = xdev.layers.Embedding(10, 4, seed=2)
    table = embed.embeddings.numpy()
    assert table.shape == (10, 4) and np.abs(table).max() <= 0.05
    np.testing.assert_array_equal(embed([[1, 9], [9, 0]]).numpy(), table[[[1, 9], [9, 0]]])
    with xdev.GradientTape() as tape:
        loss = xdev.reduce_sum(embed([1, 1, 3]))
    g = tape.gradient(loss, embed.embeddings).numpy()
    assert g[1].tolist() == [2.0] * 4 and g[3].tolist() == [1.0] * 4 and g[0].tolist() == [0.0] * 4
