"""Keras' model API over xdev's layers, tape and optimizers: symbolic ``Input``s,
functional ``Model(inputs, outputs)``, ``Sequential``, and ``compile`` / ``fit`` /
``evaluate`` / ``predict`` / ``save_weights`` / ``load_weights``.

Under ``strategy.scope()`` (``MirroredStrategy``) a model remembers the strategy; ``fit``
and ``evaluate`` split every batch across its replicas as TensorFlow does: each replica
computes the loss of its rows divided by the global batch size, the gradients are summed
over the replicas inside ``strategy.run`` and every weight is updated once a step.
"""

import math
import sys
import time

import numpy as np

from .. import _xdev
from .. import distribute as _distribute
from .. import layers as _layers
from .._convert import convert_to_tensor
from .._tape import GradientTape
from .._variables import Variable
from ..dtypes import as_dtype
from . import losses as _losses
from . import metrics as _metrics
from . import optimizers as _optimizers


class KerasTensor:
    """A symbolic tensor: what ``Input`` returns and what a layer called on one gives.
    It has a shape (``None`` for the batch axis) and a dtype, and records the layer
    call that made it, so that ``Model(inputs, outputs)`` can replay the calls."""

    _is_keras_tensor = True

    def __init__(self, shape, dtype, layer=None, parents=()):
        self.shape = tuple(shape)
        self.dtype = dtype
        self._layer = layer
        self._parents = tuple(parents)

    def _example(self):
        """A one-row tensor of this shape (zeros), to build and run a layer on."""
        shape = [1 if d is None else int(d) for d in self.shape]
        return _xdev.zeros(shape, self.dtype)

    def _apply(self, layer):
        out = layer(self._example())  # builds the layer, as Keras does here
        return KerasTensor((None,) + tuple(out.shape[1:]), out.dtype, layer, (self,))

    def __repr__(self):
        return f"<KerasTensor shape={self.shape}, dtype={self.dtype.name}>"


class InputLayer:
    """The first layer of a functional model (``model.layers[0]``): no weights."""

    def __init__(self, tensor, name="input_layer"):
        self.name = name
        self.output = tensor
        self.variables = self.weights = self.trainable_variables = []

    def __call__(self, inputs, training=False):
        return inputs

    def __repr__(self):
        return f"<InputLayer shape={self.output.shape}>"


def Input(shape=None, batch_size=None, dtype=None, name=None):  # noqa: N802 -- Keras' name
    """``tf.keras.Input``: a symbolic input of ``shape`` (without the batch axis)."""
    if shape is None:
        raise ValueError("Input: pass shape=, the shape of one example (without the batch)")
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    for d in shape:
        if d is not None and (not isinstance(d, (int, np.integer)) or d < 0):
            raise ValueError(f"Input: shape {shape} has a dimension that is not a size")
    return KerasTensor((batch_size,) + shape, as_dtype("float32" if dtype is None else dtype))


def _unique(variables):
    seen, out = set(), []
    for v in variables:
        if id(v) not in seen:
            seen.add(id(v))
            out.append(v)
    return out


class History:
    """What ``fit`` returns: ``history`` maps each metric name to its value per epoch."""

    def __init__(self):
        self.history = {}
        self.epoch = []


def _as_array(value, what):
    if value is None:
        return None
    if isinstance(value, _xdev.Tensor):
        return value.numpy()
    array = np.asarray(value)
    if array.dtype == object:
        raise ValueError(f"{what}: cannot make an array of {type(value).__name__}")
    if array.dtype == np.float64:  # Keras' floatx
        array = array.astype(np.float32)
    return array


class Model:
    """``tf.keras.Model``: functional (``Model(inputs=..., outputs=...)``) or a
    subclass that defines ``call(self, inputs, training=False)``."""

    def __init__(self, inputs=None, outputs=None, name=None):
        self.name = name or type(self).__name__.lower()
        self._strategy = _distribute.get_strategy()
        self._compiled = False
        self.optimizer = None
        self._inputs = self._outputs = None
        self._order = []
        if inputs is None and outputs is None:
            return
        if inputs is None or outputs is None:
            raise ValueError("Model: pass both inputs= and outputs= (or neither, subclassing)")
        single_in = not isinstance(inputs, (list, tuple))
        single_out = not isinstance(outputs, (list, tuple))
        self._inputs = [inputs] if single_in else list(inputs)
        self._outputs = [outputs] if single_out else list(outputs)
        self._single = (single_in, single_out)
        for t in self._inputs + self._outputs:
            if not getattr(t, "_is_keras_tensor", False):
                raise TypeError(f"Model: inputs and outputs are keras.Input tensors and layer "
                                f"calls on them, not {type(t).__name__}")
        # The layer calls from the inputs to the outputs, in an order that runs each
        # after the calls it reads.
        order, done = [], set()

        def visit(t):
            if id(t) in done:
                return
            done.add(id(t))
            for p in t._parents:
                visit(p)
            order.append(t)

        for t in self._outputs:
            visit(t)
        for t in order:
            if t._layer is None and not any(t is i for i in self._inputs):
                raise ValueError(f"Model: output {self._outputs} needs {t}, which is not among "
                                 "the inputs")
        self._order = [t for t in order if t._layer is not None]
        self._input_layers = [InputLayer(t) for t in self._inputs]

    # --- structure ---
    @property
    def layers(self):
        if self._inputs is None:
            return [v for v in vars(self).values()
                    if isinstance(v, (_layers.Layer, _layers.Sequential, Model))]
        calls = []
        for t in self._order:
            if not any(t._layer is c for c in calls):
                calls.append(t._layer)
        return self._input_layers + calls

    @property
    def variables(self):
        return _unique(v for layer in self.layers for v in getattr(layer, "variables", []))

    weights = variables

    @property
    def trainable_variables(self):
        return [v for v in self.variables if v.trainable]

    trainable_weights = trainable_variables

    def count_params(self):
        return int(sum(int(np.prod(v.shape)) for v in self.variables))

    def get_weights(self):
        return [v.numpy() for v in self.variables]

    def set_weights(self, weights):
        variables = self.variables
        if len(weights) != len(variables):
            raise ValueError(f"set_weights: {len(weights)} arrays for {len(variables)} weights")
        for i, (v, w) in enumerate(zip(variables, weights)):
            w = np.asarray(w)
            if tuple(w.shape) != tuple(v.shape):
                raise ValueError(f"set_weights: weight {i} has shape {tuple(v.shape)}, the "
                                 f"array {tuple(w.shape)}")
            v.assign(w.astype(v.dtype.as_numpy_dtype))

    def summary(self, print_fn=print):
        print_fn(f'Model: "{self.name}"')
        print_fn(f"{'Layer (type)':<32}{'Params':>12}")
        for layer in self.layers:
            n = sum(int(np.prod(v.shape)) for v in getattr(layer, "variables", []))
            print_fn(f"{type(layer).__name__:<32}{n:>12,}")
        print_fn(f"Total params: {self.count_params():,}")

    # --- calling ---
    def __call__(self, inputs, training=False):
        if self._inputs is None:
            return self.call(inputs, training=training)
        given = [inputs] if self._single[0] else list(inputs)
        if len(given) != len(self._inputs):
            raise ValueError(f"{self.name}: {len(given)} inputs for a model of "
                             f"{len(self._inputs)}")
        values = {id(k): convert_to_tensor(v) for k, v in zip(self._inputs, given)}
        for t in self._order:
            x = values[id(t._parents[0])]
            values[id(t)] = _call_layer(t._layer, x, training)
        outs = [values[id(t)] for t in self._outputs]
        return outs[0] if self._single[1] else outs

    def call(self, inputs, training=False):
        raise NotImplementedError(f"{type(self).__name__}: a subclassed Model defines call()")

    # --- training ---
    def compile(self, optimizer="rmsprop", loss=None, metrics=None):
        """``optimizer``: an optimizer or "sgd"/"adam"/"adamw"; ``loss``: a loss object,
        function or name ("mse", "sparse_categorical_crossentropy", ...); ``metrics``:
        names ("accuracy", "mae", "mse")."""
        self.optimizer = _optimizers.get(optimizer)
        self.loss = _losses.get(loss)
        self._metric_names = [m if isinstance(m, str) else getattr(m, "__name__", str(m))
                              for m in (metrics or [])]
        for m in self._metric_names:
            _metrics.check(m)
        if self._strategy is None:
            self._strategy = _distribute.get_strategy()
        self._compiled = True

    def _need_compiled(self, what):
        if not self._compiled:
            raise RuntimeError(f"You must call `compile()` before using the model ({what})")

    def _replicas(self):
        s = self._strategy
        return s if s is not None and s.num_replicas_in_sync > 1 else None

    def _batch_results(self, x, y, train):
        """The loss and metric sums of one batch (numpy arrays), training when ``train``."""
        batch = len(x)
        strategy = self._replicas()
        loss_fn = self.loss

        def step(xb, yb):
            with GradientTape() as tape:
                pred = self(xb, training=train)
                per_example = loss_fn.per_example(yb, pred)
                loss = _xdev.reduce_sum(per_example) / float(batch)
            if train:
                variables = self.trainable_variables
                grads = tape.gradient(loss, variables)
                self.optimizer.apply_gradients(zip(grads, variables))
            sums = [_metrics.batch_sum(m, yb, pred, loss_fn) for m in self._metric_names]
            return [loss] + sums

        if strategy is None:
            out = step(convert_to_tensor(x), convert_to_tensor(y))
            return [float(o.numpy()) for o in out]
        xs, ys = strategy.split_batch(x), strategy.split_batch(y)
        out = strategy.run(step, args=(xs, ys))
        return [float(sum(float(v.numpy()) for v in o.values)) for o in out]

    def _run_epoch(self, x, y, batch_size, train, order, progress):
        n = len(x)
        steps = max(1, math.ceil(n / batch_size))
        totals = np.zeros(1 + len(self._metric_names))
        seen = 0
        for s in range(steps):
            rows = order[s * batch_size:(s + 1) * batch_size]
            if len(rows) == 0:
                break
            result = self._batch_results(x[rows], y[rows], train)
            totals[0] += result[0] * len(rows)
            totals[1:] += result[1:]
            seen += len(rows)
            if progress is not None:
                progress(s + 1, steps, self._logs(totals, seen))
        return self._logs(totals, seen)

    def _logs(self, totals, seen):
        logs = {"loss": totals[0] / max(seen, 1)}
        for name, total in zip(self._metric_names, totals[1:]):
            logs[name] = total / max(seen, 1)
        return logs

    def fit(self, x=None, y=None, batch_size=None, epochs=1, verbose=1, validation_data=None,
            shuffle=True, initial_epoch=0):
        """Trains for ``epochs`` passes over (x, y) in batches of ``batch_size`` (32);
        returns a :class:`History`."""
        self._need_compiled("fit")
        x, y = _as_array(x, "fit x"), _as_array(y, "fit y")
        if x is None or y is None:
            raise ValueError("fit: pass x and y (NumPy arrays or tensors)")
        if len(x) != len(y):
            raise ValueError(f"fit: x has {len(x)} rows and y {len(y)}")
        if len(x) == 0:
            raise ValueError("fit: x has no rows")
        batch_size = 32 if batch_size is None else int(batch_size)
        if batch_size <= 0:
            raise ValueError(f"fit: batch_size must be positive, not {batch_size}")
        if validation_data is not None:
            vx, vy = (_as_array(v, "fit validation_data") for v in validation_data[:2])
        history = History()
        rng = np.random.default_rng()
        for epoch in range(initial_epoch, epochs):
            order = rng.permutation(len(x)) if shuffle else np.arange(len(x))
            bar = _Progress(f"Epoch {epoch + 1}/{epochs}", verbose)
            start = time.perf_counter()
            logs = self._run_epoch(x, y, batch_size, True, order,
                                   bar.update if verbose == 1 else None)
            if validation_data is not None:
                val = self._run_epoch(vx, vy, batch_size, False, np.arange(len(vx)), None)
                logs.update({"val_" + k: v for k, v in val.items()})
            bar.done(math.ceil(len(x) / batch_size), logs, time.perf_counter() - start)
            history.epoch.append(epoch)
            for k, v in logs.items():
                history.history.setdefault(k, []).append(float(v))
        self.history = history
        return history

    def evaluate(self, x=None, y=None, batch_size=None, verbose=1, return_dict=False):
        """The loss (and metrics) over (x, y): a number, a list, or a dict."""
        self._need_compiled("evaluate")
        x, y = _as_array(x, "evaluate x"), _as_array(y, "evaluate y")
        batch_size = 32 if batch_size is None else int(batch_size)
        bar = _Progress(None, verbose)
        start = time.perf_counter()
        logs = self._run_epoch(x, y, batch_size, False, np.arange(len(x)),
                               bar.update if verbose == 1 else None)
        bar.done(math.ceil(len(x) / batch_size), logs, time.perf_counter() - start)
        if return_dict:
            return {k: float(v) for k, v in logs.items()}
        values = [float(v) for v in logs.values()]
        return values[0] if len(values) == 1 else values

    def predict(self, x, batch_size=None, verbose=0):
        """The model's outputs over x, batch by batch, as a NumPy array."""
        x = _as_array(x, "predict x")
        batch_size = 32 if batch_size is None else int(batch_size)
        outs = [self(convert_to_tensor(x[i:i + batch_size])).numpy()
                for i in range(0, len(x), batch_size)]
        return np.concatenate(outs) if outs else np.zeros((0,))

    # --- weights on disk (safetensors) ---
    def save_weights(self, filepath, overwrite=True):
        """Writes every weight, in ``variables`` order, to a safetensors file."""
        import os

        from .. import safetensors
        if not overwrite and os.path.exists(filepath):
            raise FileExistsError(f"save_weights: {filepath} exists (overwrite=False)")
        safetensors.save_file({f"weight_{i}": v.read_value()
                               for i, v in enumerate(self.variables)}, str(filepath),
                              metadata={"format": "xdev.keras", "count": str(len(self.variables))})

    def load_weights(self, filepath):
        """Reads what ``save_weights`` wrote into this model's weights, each onto the
        device it lives on; the count and every shape and dtype must match."""
        from .. import safetensors
        loaded = safetensors.load_file(str(filepath))
        variables = self.variables
        if len(loaded) != len(variables):
            raise ValueError(f"load_weights: {filepath} holds {len(loaded)} weights, the model "
                             f"has {len(variables)}")
        for i, v in enumerate(variables):
            t = loaded.get(f"weight_{i}")
            if t is None:
                raise ValueError(f"load_weights: {filepath} has no weight_{i}")
            if tuple(t.shape) != tuple(v.shape) or t.dtype != v.dtype:
                raise ValueError(f"load_weights: weight {i} is {v.dtype.name}{tuple(v.shape)} in "
                                 f"the model, {t.dtype.name}{tuple(t.shape)} in {filepath}")
            v.assign(t.to(v.device))


def _call_layer(layer, x, training):
    takes_training = isinstance(layer, (_layers.Layer, _layers.Sequential, Model))
    return layer(x, training=training) if takes_training else layer(x)


class Sequential(Model):
    """``tf.keras.Sequential``: layers run one after another (``model.layers``); an
    ``Input`` first builds them at once."""

    def __init__(self, layers=None, name=None):
        super().__init__(name=name or "sequential")
        self._stack = []
        self._input = None
        for layer in layers or []:
            self.add(layer)

    def add(self, layer):
        if getattr(layer, "_is_keras_tensor", False):
            if self._stack or self._input is not None:
                raise ValueError("Sequential: an Input must come first")
            self._input = layer
            return
        if not callable(layer):
            raise TypeError(f"Sequential.add: {type(layer).__name__} is not a layer")
        self._stack.append(layer)
        if self._input is not None:
            _call_layer(layer, self._built_example(), False)

    def _built_example(self):
        x = self._input._example()
        for layer in self._stack[:-1]:
            x = _call_layer(layer, x, False)
        return x

    @property
    def layers(self):
        return list(self._stack)

    def call(self, inputs, training=False):
        x = convert_to_tensor(inputs)
        for layer in self._stack:
            x = _call_layer(layer, x, training)
        return x

    def __call__(self, inputs, training=False):
        return self.call(inputs, training=training)


class _Progress:
    """Keras' progress line: ``2/4 ━━━━━━━━━━──────────  0s 3ms/step - loss: 0.1234``."""

    def __init__(self, title, verbose):
        self.verbose = verbose
        self.start = time.perf_counter()
        if title and verbose:
            print(title, flush=True)

    @staticmethod
    def _text(logs):
        return " - ".join(f"{k}: {v:.4f}" for k, v in logs.items())

    def update(self, step, steps, logs):
        width = 20
        filled = width * step // steps
        per_step = (time.perf_counter() - self.start) / step
        line = (f"\r{step:>{len(str(steps))}}/{steps} " + "━" * filled + "─" * (width - filled)
                + f" {per_step * (steps - step):.0f}s {per_step * 1e3:.0f}ms/step - "
                + self._text(logs))
        sys.stdout.write(line)
        sys.stdout.flush()

    def done(self, steps, logs, seconds):
        if self.verbose == 1:
            sys.stdout.write("\n")
        if self.verbose == 2:
            print(f"{steps}/{steps} - {seconds:.0f}s - {self._text(logs)}")
        sys.stdout.flush()


__all__ = ["Input", "InputLayer", "KerasTensor", "Model", "Sequential", "History", "Variable"]
