"""Optimizers (``tf.keras.optimizers``): the C++ ones (<xdev/optimizers.hpp>), with
Keras' update rules, run on each variable's device.

    opt = xdev.optimizers.Adam(learning_rate=1e-3)
    with xdev.GradientTape() as tape:
        loss = ...
    grads = tape.gradient(loss, variables)
    opt.apply_gradients(zip(grads, variables))

A None gradient leaves its variable alone (as TensorFlow skips it).
"""

from . import _xdev
from ._variables import Variable


class Optimizer:
    """What every optimizer has: ``apply_gradients``, ``iterations``, ``learning_rate``."""

    def __init__(self, cpp, name):
        self._cpp = cpp
        self.name = name

    def apply_gradients(self, grads_and_vars):
        """One step: each variable updated with its gradient (``zip(grads, vars)``).
        Returns the number of steps applied so far."""
        grads, variables = [], []
        for i, pair in enumerate(grads_and_vars):
            try:
                grad, var = pair
            except (TypeError, ValueError):
                raise TypeError(
                    f"{self.name}.apply_gradients: item {i} is not a (gradient, variable) "
                    "pair; pass zip(grads, variables)") from None
            if not isinstance(var, Variable) or not hasattr(var, "_var"):
                what = ("a MirroredVariable (reduce the gradients and use assign_sub)"
                        if isinstance(var, Variable) else f"a {type(var).__name__}")
                raise TypeError(
                    f"{self.name}.apply_gradients: the variable of item {i} is {what}; "
                    "optimizers update xdev.Variable objects")
            grads.append(grad)
            variables.append(var._var)
        self._cpp.apply_gradients(grads, variables)
        return self._cpp.iterations

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
