# TensorFlow's GPU guide, "Limiting GPU memory growth" (a hard limit), in xdev.
import xdev

gpus = xdev.config.list_physical_devices('GPU')
if gpus:
  # Restrict TensorFlow to only allocate 1GB of memory on the first GPU
  try:
    xdev.config.set_logical_device_configuration(
        gpus[0],
        [xdev.config.LogicalDeviceConfiguration(memory_limit=1024)])
    logical_gpus = xdev.config.list_logical_devices('GPU')
    print(len(gpus), "Physical GPUs,", len(logical_gpus), "Logical GPUs")
  except RuntimeError as e:
    # Virtual devices must be set before GPUs have been initialized
    print(e)
