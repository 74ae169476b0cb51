"""A Keras for xdev (``tf.keras`` under ``import xdev as tf``): layers, functional and
sequential models with compile / fit / evaluate / predict, optimizers, losses, metrics,
built on xdev's layers, GradientTape and optimizers. Under ``strategy.scope()`` a model
trains with the strategy: each batch is split across the replicas.

    import xdev as tf
    inputs = tf.keras.layers.Input(shape=(1,))
    predictions = tf.keras.layers.Dense(1)(inputs)
    model = tf.keras.models.Model(inputs=inputs, outputs=predictions)
    model.compile(loss="mse", optimizer=tf.keras.optimizers.SGD(learning_rate=0.2))
    model.fit(x, y, epochs=2, batch_size=10)
"""

from . import layers, losses, metrics, models, optimizers
from ._engine import History, Input, Model, Sequential

__all__ = ["History", "Input", "Model", "Sequential", "layers", "losses", "metrics", "models",
           "optimizers"]
