# TensorFlow's GPU guide, "Setup", in xdev.
import xdev

print("Num GPUs Available: ", len(xdev.config.list_physical_devices('GPU')))
