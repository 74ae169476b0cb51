"""Losses: the C++ ones (<xdev/layers.hpp>), each a scalar mean over the batch, as
``tf.keras.losses.MeanSquaredError()(y_true, y_pred)`` and
``tf.compat.v1.losses.softmax_cross_entropy`` give it."""

from ._xdev import mean_squared_error, softmax_cross_entropy, sparse_softmax_cross_entropy

__all__ = ["mean_squared_error", "softmax_cross_entropy", "sparse_softmax_cross_entropy"]
