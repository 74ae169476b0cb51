# TensorFlow's GPU guide, "Limiting GPU memory growth" (set_memory_growth), in xdev.
import xdev

gpus = xdev.config.list_physical_devices('GPU')
if gpus:
  try:
    # Currently, memory growth needs to be the same across GPUs
    for gpu in gpus:
      xdev.config.experimental.set_memory_growth(gpu, True)
    logical_gpus = xdev.config.list_logical_devices('GPU')
    print(len(gpus), "Physical GPUs,", len(logical_gpus), "Logical GPUs")
  except RuntimeError as e:
    # Memory growth must be set before GPUs have been initialized
    print(e)
