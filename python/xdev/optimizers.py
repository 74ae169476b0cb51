"""Optimizers (``tf.keras.optimizers``): the C++ ones (<xdev/optimizers.hpp>), with
Keras' update rules, run on each variable's device.

    opt = xdev.optimizers.Adam(learning_rate=1e-3)
    with xdev.GradientTape() as tape:
        loss = ...
    grads = tape.gradient(loss, variables)
    opt.apply_gradients(zip(grads, variables))

A None gradient leaves its variable alone (as TensorFlow skips it).

Called inside ``strategy.run`` (TensorFlow's custom training loop), ``apply_gradients``
waits for every replica's call, sums each variable's gradients over the replicas and
updates the variable once (``iterations`` counts one step); every replica must make the
same calls with the same variables, and afterwards each sees the updated values.

After ``run`` returns, ``apply_gradients`` takes the MirroredVariables
created in ``strategy.scope()`` with the PerReplica gradients ``strategy.run``
returned (a plain tensor with one replica in the process); it sums each variable's
gradients over every replica (of every worker, with MultiWorkerMirroredStrategy), as
TensorFlow's default ``experimental_aggregate_gradients`` does, and gives every copy
the same update, with slots (momentum, Adam's moments) kept on each replica's device:

    def step(x, y):
        with xdev.GradientTape() as tape:
            loss = xdev.reduce_sum(xdev.square(model(x) - y)) / global_batch
        return tape.gradient(loss, [w, b])
    grads = strategy.run(step, args=(xs, ys))       # PerReplica gradients
    opt.apply_gradients(zip(grads, [w, b]))          # after run returns
"""

from . import _xdev
from ._convert import convert_to_tensor
from ._variables import Variable
from .distribute import (MirroredVariable, MultiWorkerMirroredStrategy, PerReplica,
                         get_replica_context)


class Optimizer:
    """What every optimizer has: ``apply_gradients``, ``iterations``, ``learning_rate``."""

    def __init__(self, cpp, name):
        self._cpp = cpp
        self.name = name

    def apply_gradients(self, grads_and_vars):
        """One step: each variable updated with its gradient (``zip(grads, vars)``).
        Returns the number of steps applied so far."""
        pairs = []
        for i, pair in enumerate(grads_and_vars):
            try:
                grad, var = pair
            except (TypeError, ValueError):
                raise TypeError(
                    f"{self.name}.apply_gradients: item {i} is not a (gradient, variable) "
                    "pair; pass zip(grads, variables)") from None
            if not isinstance(var, Variable):
                raise TypeError(
                    f"{self.name}.apply_gradients: the variable of item {i} is a "
                    f"{type(var).__name__}; optimizers update xdev.Variable objects")
            pairs.append((grad, var))
        replica = get_replica_context()
        if replica is not None:
            if isinstance(replica.strategy, MultiWorkerMirroredStrategy):
                raise _xdev.UnimplementedError(
                    f"{self.name}.apply_gradients inside MultiWorkerMirroredStrategy.run: "
                    "return the gradients from the step function and apply them after run "
                    "returns")
            return replica._apply_together(self._apply_across_replicas, pairs)
        mirrored = [isinstance(var, MirroredVariable) for _, var in pairs]
        if any(mirrored):
            if not all(mirrored):
                i = mirrored.index(False)
                raise TypeError(
                    f"{self.name}.apply_gradients: item {i} is a plain Variable among "
                    "MirroredVariables; create every variable in strategy.scope()")
            self._apply_mirrored(pairs)
        else:
            self._cpp.apply_gradients([g for g, _ in pairs], [v._var for _, v in pairs])
        return self._cpp.iterations

    def _apply_across_replicas(self, slots):
        """``apply_gradients`` called inside ``strategy.run`` (TensorFlow's custom
        training loop): ``slots`` holds every replica's (gradient, variable) pairs, in
        replica order. Each variable's gradients are summed over the replicas, as
        TensorFlow aggregates them, and the variable is updated once (every copy of a
        MirroredVariable alike), so one step is one iteration whatever the replica count."""
        first = slots[0]
        for r, pairs in enumerate(slots[1:], 1):
            if len(pairs) != len(first) or any(a[1] is not b[1] for a, b in zip(first, pairs)):
                raise ValueError(
                    f"{self.name}.apply_gradients inside strategy.run: replica {r} passed other "
                    "variables than replica 0; every replica applies the gradients of the same "
                    "variables, in the same order")
        variables = [var for _, var in first]
        per_variable = [[pairs[k][0] for pairs in slots] for k in range(len(first))]
        if any(isinstance(var, MirroredVariable) for var in variables):
            return self.apply_gradients(
                [(PerReplica(grads), var) for grads, var in zip(per_variable, variables)])
        summed = []
        for k, (grads, var) in enumerate(zip(per_variable, variables)):
            present = [g is not None for g in grads]
            if not any(present):
                summed.append(None)
                continue
            if not all(present):
                raise ValueError(
                    f"{self.name}.apply_gradients inside strategy.run: the gradient of item {k} "
                    f"is None in replica {present.index(False)} but not in replica "
                    f"{present.index(True)}")
            # In replica order on the variable's device: the same sum every run.
            on_device = [convert_to_tensor(g).to(var.device) for g in grads]
            summed.append(on_device[0] if len(on_device) == 1 else _xdev.add_n(on_device))
        return self.apply_gradients(zip(summed, variables))

    def _apply_mirrored(self, pairs):
        """MirroredVariables with their PerReplica gradients: summed over every replica by
        the variables' strategy, then the same update on every copy (C++)."""
        if get_replica_context() is not None:
            raise _xdev.FailedPreconditionError(
                f"{self.name}.apply_gradients on MirroredVariables inside strategy.run: return "
                "the gradients from the step function and apply them after run returns")
        strategy = pairs[0][1]._strategy
        replicas = len(strategy._local_devices)
        grads = []
        for i, (grad, var) in enumerate(pairs):
            if var._strategy is not strategy:
                raise ValueError(
                    f"{self.name}.apply_gradients: the MirroredVariable of item {i} belongs to "
                    "another strategy than item 0's")
            if grad is None:
                grads.append([None] * replicas)
            elif isinstance(grad, PerReplica):
                grads.append([None if g is None else convert_to_tensor(g) for g in grad.values])
            elif replicas == 1:
                grads.append([convert_to_tensor(grad)])
            else:
                raise TypeError(
                    f"{self.name}.apply_gradients: the gradient of item {i} is one value for a "
                    f"MirroredVariable with {replicas} replicas in this process; pass the "
                    "PerReplica gradients strategy.run returned")
        self._cpp.apply_gradients_mirrored(strategy._cpp.cross_replica_sum(), grads,
                                           [var._mirrored for _, var in pairs])

    @property
    def iterations(self):
        """Steps applied so far."""
        return self._cpp.iterations

    @property
    def learning_rate(self):
        return self._cpp.learning_rate

    @learning_rate.setter
    def learning_rate(self, value):
        self._cpp.learning_rate = float(value)

    def __repr__(self):
        return f"<xdev.optimizers.{type(self).__name__} learning_rate={self.learning_rate}>"


class SGD(Optimizer):
    """w -= lr * g; with momentum m: v = m * v - lr * g, then w += v (Nesterov:
    w += m * v - lr * g)."""

    def __init__(self, learning_rate=0.01, momentum=0.0, nesterov=False, name="SGD"):
        super().__init__(_xdev._SGD(float(learning_rate), float(momentum), bool(nesterov)), name)


class Adam(Optimizer):
    """Keras' Adam: m = b1 * m + (1 - b1) * g, v = b2 * v + (1 - b2) * g^2, then
    w -= lr * sqrt(1 - b2^t) / (1 - b1^t) * m / (sqrt(v) + epsilon)."""

    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7,
                 name="Adam"):
        super().__init__(_xdev._Adam(float(learning_rate), float(beta_1), float(beta_2),
                                     float(epsilon)), name)


class AdamW(Optimizer):
    """Adam with decoupled weight decay: w -= lr * weight_decay * w before Adam's step."""

    def __init__(self, learning_rate=0.001, weight_decay=0.004, beta_1=0.9, beta_2=0.999,
                 epsilon=1e-7, name="AdamW"):
        super().__init__(_xdev._AdamW(float(learning_rate), float(weight_decay), float(beta_1),
                                      float(beta_2), float(epsilon)), name)


__all__ = ["Adam", "AdamW", "Optimizer", "SGD"]
