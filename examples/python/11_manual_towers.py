# TensorFlow's GPU guide, "Using multiple GPUs" without tf.distribute.Strategy, in xdev.
import xdev

xdev.debugging.set_log_device_placement(True)

gpus = xdev.config.list_logical_devices('GPU')
if gpus:
  # Replicate your computation on multiple GPUs
  c = []
  for gpu in gpus:
    with xdev.device(gpu.name):
      a = xdev.constant([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
      b = xdev.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
      c.append(xdev.matmul(a, b))

  with xdev.device('/CPU:0'):
    matmul_sum = xdev.add_n(c)

  print(matmul_sum)
