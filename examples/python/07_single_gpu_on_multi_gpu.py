# TensorFlow's GPU guide, "Using a single GPU on a multi-GPU system", in xdev. Soft
# placement is xdev's default (as in TensorFlow 2); the guide's error shows with it off.
import xdev

xdev.config.set_soft_device_placement(False)
xdev.debugging.set_log_device_placement(True)

try:
  # Specify an invalid GPU device
  with xdev.device('/device:GPU:2'):
    a = xdev.constant([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    b = xdev.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    c = xdev.matmul(a, b)
except RuntimeError as e:
  print(e)
