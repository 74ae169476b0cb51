# TensorFlow's GPU guide, "Manual device placement", in xdev.
import xdev

xdev.debugging.set_log_device_placement(True)

# Place tensors on the CPU
with xdev.device('/CPU:0'):
  a = xdev.constant([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
  b = xdev.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])

# Run on the GPU
c = xdev.matmul(a, b)
print(c)
