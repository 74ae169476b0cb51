# TensorFlow's GPU guide, "Logging device placement", in xdev.
import xdev

xdev.debugging.set_log_device_placement(True)

# Create some tensors
a = xdev.constant([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
b = xdev.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
c = xdev.matmul(a, b)

print(c)
