"""xdev.keras (tf.keras under `import xdev as tf`): the functional and sequential models,
compile / fit / evaluate / predict, weights on disk, and training under MirroredStrategy,
each checked against values computed by hand with NumPy."""

import numpy as np
import pytest

import xdev
from conftest import run_on_logical_cpus

keras = xdev.keras


def test_the_d2l_sequential_model_builds_at_its_first_call():
    net = keras.models.Sequential([keras.layers.Dense(1)])
    x = xdev.random.uniform((2, 4))
    y = net(x)
    assert y.shape == (2, 1)
    assert [tuple(w.shape) for w in net.layers[0].weights] == [(4, 1), (1,)]
    kernel, bias = net.layers[0].weights
    assert kernel.device == bias.device and kernel.device.startswith("/job:localhost/")
    assert net.count_params() == 5


def test_a_functional_model_runs_its_layer_calls_and_fit_is_gradient_descent():
    # A linear model, full-batch SGD: each epoch is w -= lr * dMSE/dw, computed here by hand.
    rng = np.random.default_rng(0)
    x = rng.standard_normal((8, 3)).astype(np.float32)
    y = (x @ np.array([[1.0], [-2.0], [0.5]], np.float32) + 0.3).astype(np.float32)
    inputs = keras.layers.Input(shape=(3,))
    outputs = keras.layers.Dense(1, seed=3)(inputs)
    model = keras.models.Model(inputs=inputs, outputs=outputs)
    assert [type(layer).__name__ for layer in model.layers] == ["InputLayer", "Dense"]
    model.compile(loss="mse", optimizer=keras.optimizers.SGD(learning_rate=0.1))
    w, b = (v.numpy().astype(np.float64) for v in model.trainable_variables)
    history = model.fit(x, y, batch_size=8, epochs=3, shuffle=False, verbose=0)
    losses = []
    for _ in range(3):
        err = x @ w + b - y
        losses.append(float(np.mean(err ** 2)))
        w = w - 0.1 * (2.0 / 8) * (x.T @ err)
        b = b - 0.1 * (2.0 / 8) * err.sum(axis=0)
    np.testing.assert_allclose(history.history["loss"], losses, rtol=1e-5)
    np.testing.assert_allclose(model.trainable_variables[0].numpy(), w, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(model.trainable_variables[1].numpy(), b, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(model.predict(x), x @ w + b, rtol=1e-4, atol=1e-5)
    assert model.evaluate(x, y, verbose=0) == pytest.approx(float(np.mean((x @ w + b - y) ** 2)),
                                                            rel=1e-4)


def test_a_classifier_learns_reports_accuracy_and_reloads_its_weights(tmp_path, capsys):
    rng = np.random.default_rng(1)
    centers = np.array([[2.0, 0.0], [-2.0, 0.0], [0.0, 2.5]], np.float32)
    labels = rng.integers(0, 3, 150)
    x = (centers[labels] + 0.3 * rng.standard_normal((150, 2))).astype(np.float32)
    model = keras.Sequential([keras.layers.Input(shape=(2,)),
                              keras.layers.Dense(16, activation="relu", seed=1),
                              keras.layers.Dense(3, activation="softmax", seed=2)])
    assert len(model.weights) == 4  # built by the Input
    model.compile(optimizer=keras.optimizers.Adam(0.05), loss="sparse_categorical_crossentropy",
                  metrics=["accuracy"])
    history = model.fit(x, labels, epochs=15, batch_size=32, verbose=1)
    out = capsys.readouterr().out
    assert "Epoch 1/15" in out and "Epoch 15/15" in out and "accuracy:" in out
    assert history.history["loss"][-1] < history.history["loss"][0] / 2
    loss, accuracy = model.evaluate(x, labels, verbose=0)
    assert accuracy > 0.95
    probs = model.predict(x)
    assert probs.shape == (150, 3)
    np.testing.assert_allclose(probs.sum(axis=1), 1.0, rtol=1e-5)
    assert accuracy == pytest.approx(float(np.mean(probs.argmax(axis=1) == labels)))
    path = tmp_path / "classifier.safetensors"
    model.save_weights(path)
    again = keras.Sequential([keras.layers.Input(shape=(2,)),
                              keras.layers.Dense(16, activation="relu", seed=5),
                              keras.layers.Dense(3, activation="softmax", seed=6)])
    again.load_weights(path)
    np.testing.assert_array_equal(again.predict(x), probs)
    wrong = keras.Sequential([keras.layers.Input(shape=(2,)), keras.layers.Dense(4)])
    with pytest.raises(ValueError, match="holds 4 weights, the model has 2"):
        wrong.load_weights(path)


def test_a_label_outside_the_classes_is_an_error_not_a_loss():
    loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    logits = xdev.constant([[1.0, 2.0, 0.5], [0.1, 0.2, 0.3]])
    with pytest.raises(xdev.errors.InvalidArgumentError,
                       match=r"label value of 3 which is outside the valid range of \[0, 3\)"):
        loss([0, 3], logits)
    with pytest.raises(xdev.errors.InvalidArgumentError, match="label value of -1"):
        loss([-1, 0], logits)
    want = -np.log(np.exp([2.0, 0.1]) / np.exp([[1.0, 2.0, 0.5], [0.1, 0.2, 0.3]]).sum(axis=1))
    assert float(loss([1, 0], logits).numpy()) == pytest.approx(float(want.mean()), rel=1e-6)


def test_compile_refuses_what_it_does_not_know():
    model = keras.Sequential([keras.layers.Dense(1)])
    with pytest.raises(ValueError, match="Unknown loss 'msqe'"):
        model.compile(loss="msqe", optimizer="sgd")
    with pytest.raises(ValueError, match="Unknown metric 'precision'"):
        model.compile(loss="mse", optimizer="sgd", metrics=["precision"])
    with pytest.raises(RuntimeError, match="compile"):
        model.fit(np.ones((2, 1)), np.ones((2, 1)))


def test_the_guide_mirrored_keras_model_trains_like_one_device():
    # TensorFlow's GPU guide builds this model in MirroredStrategy.scope(); fit splits each
    # batch across the two logical CPUs. The weights match one device's full batches.
    out = run_on_logical_cpus(2, """
        import numpy as np
        import xdev as tf
        x = np.linspace(-1, 1, 40, dtype=np.float32).reshape(-1, 1)
        y = 3 * x - 1

        def train(strategy):
            with strategy.scope():
                inputs = tf.keras.layers.Input(shape=(1,))
                predictions = tf.keras.layers.Dense(1, seed=4)(inputs)
                model = tf.keras.models.Model(inputs=inputs, outputs=predictions)
                model.compile(loss="mse", optimizer=tf.keras.optimizers.SGD(learning_rate=0.2))
            history = model.fit(x, y, epochs=5, batch_size=10, shuffle=False, verbose=0)
            return history.history["loss"], [v.numpy() for v in model.weights], model

        one, w1, _ = train(tf.distribute.MirroredStrategy(["/CPU:0"]))
        two, w2, model = train(tf.distribute.MirroredStrategy())
        assert model.optimizer.iterations == 20, model.optimizer.iterations
        np.testing.assert_allclose(two, one, rtol=1e-5)
        for a, b in zip(w2, w1):
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
        assert one[-1] < one[0] / 10
        print("ok")
    """)
    assert out.stdout.strip().endswith("ok")
