# TensorFlow's GPU guide, "Using multiple GPUs" with tf.distribute.Strategy, in xdev.
# The guide builds a Keras model inside strategy.scope(); xdev has no Keras, so the
# model is its one Dense(1) layer written out: a kernel and a bias, mirrored.
import xdev

xdev.debugging.set_log_device_placement(True)
gpus = xdev.config.list_logical_devices('GPU')
strategy = xdev.distribute.MirroredStrategy(gpus)
with strategy.scope():
  kernel = xdev.Variable(xdev.constant([[0.5]]))   # Dense(1) on inputs of shape (1,)
  bias = xdev.Variable(xdev.constant([0.25]))

# One prediction per replica, each on its own device.
inputs = strategy.experimental_distribute_values_from_function(
    lambda ctx: xdev.constant([[float(ctx.replica_id_in_sync_group + 1)]]))
predictions = strategy.run(lambda x: xdev.matmul(x, kernel) + bias, args=(inputs,))
print(strategy.reduce(xdev.distribute.ReduceOp.SUM, predictions, axis=None))
