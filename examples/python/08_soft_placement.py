# TensorFlow's GPU guide, "Using a single GPU on a multi-GPU system" (soft placement),
# in xdev.
import xdev

xdev.config.set_soft_device_placement(True)
xdev.debugging.set_log_device_placement(True)

# Creates some tensors
a = xdev.constant([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
b = xdev.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
c = xdev.matmul(a, b)

print(c)
