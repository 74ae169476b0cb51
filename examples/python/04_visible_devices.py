# TensorFlow's GPU guide, "Limiting GPU memory growth" (first snippet), in xdev.
import xdev

gpus = xdev.config.list_physical_devices('GPU')
if gpus:
  # Restrict TensorFlow to only use the first GPU
  try:
    xdev.config.set_visible_devices(gpus[0], 'GPU')
    logical_gpus = xdev.config.list_logical_devices('GPU')
    print(len(gpus), "Physical GPUs,", len(logical_gpus), "Logical GPU")
  except RuntimeError as e:
    # Visible devices must be set before GPUs have been initialized
    print(e)
