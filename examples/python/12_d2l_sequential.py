# d2l.ai, "GPUs" (TensorFlow tab), "Neural Networks and GPUs", line for line with
# `import xdev as tf`: a Sequential model made in a MirroredStrategy scope; its weights
# live on the first GPU (CPU:0 without one).
import xdev as tf


def try_gpu(i=0):
    """Return gpu(i) if exists, otherwise return cpu()."""
    if len(tf.config.experimental.list_physical_devices('GPU')) >= i + 1:
        return tf.device(f'/GPU:{i}')
    return tf.device('/CPU:0')


with try_gpu():
    X = tf.ones((2, 3))

strategy = tf.distribute.MirroredStrategy()
with strategy.scope():
    net = tf.keras.models.Sequential([
        tf.keras.layers.Dense(1)])

print(net(X).shape)
print(net.layers[0].weights[0].device, net.layers[0].weights[1].device)
