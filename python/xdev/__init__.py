"""xdev: a plugin-first device runtime, with TensorFlow's Python API.

    import xdev
    print("Num GPUs Available:", len(xdev.config.list_physical_devices("GPU")))
    xdev.debugging.set_log_device_placement(True)
    with xdev.device("/CPU:0"):
        a = xdev.constant([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    c = a @ xdev.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    print(c)            # tf.Tensor([[22. 28.] [49. 64.]], shape=(2, 2), dtype=float32)
    c.numpy()           # a NumPy array; numpy.from_dlpack(c) shares the memory

The names follow TensorFlow's (``xdev.config``, ``xdev.device``, ``xdev.constant``,
``xdev.distribute.MirroredStrategy``, ...); the log lines and error messages are the
C++ SDK's. docs/user-guide.md (Python) has the details.
"""

from . import _xdev
from ._xdev import (
    DType,
    Event,
    LogicalDevice,
    PhysicalDevice,
    Tensor,
    add,
    add_n,
    cast,
    divide,
    elapsed_ms,
    matmul,
    multiply,
    negative,
    num_gpus,
    ones,
    reduce_mean,
    reduce_sum,
    reshape,
    subtract,
    synchronize,
    transpose,
    truncatediv,
    zeros,
)

from . import (  # noqa: E402
    config,
    debugging,
    distribute,
    dtypes,
    errors,
    experimental,
    math,
    nn,
    random,
    trace,
)
from ._convert import convert_to_tensor  # noqa: E402
from ._tensor import constant, fill, ones_like, zeros_like  # noqa: E402
from ._variables import Variable  # noqa: E402
from .dlpack import from_dlpack  # noqa: E402
from .dtypes import as_dtype, bool, double, float32, float64, int32, int64  # noqa: E402,A004
from .math import pow  # noqa: E402,A004
from .nn import relu  # noqa: E402
from .safetensors import load_file, save_file  # noqa: E402

__version__ = _xdev.__version__
newaxis = None

sub = subtract  # the C++ SDK's names
mul = multiply
neg = negative


def device(device_name):
    """``with xdev.device("/GPU:0"):`` places the block's ops and tensors on that device
    (any of TensorFlow's spellings, or a LogicalDevice). Per thread, nestable."""
    return _xdev.DeviceScope(getattr(device_name, "name", device_name))


def try_gpu(i=0):
    """GPU ``i`` if it exists, else CPU:0 (d2l's try_gpu)."""
    gpus = config.list_logical_devices("GPU")
    return gpus[i] if i < len(gpus) else config.list_logical_devices("CPU")[0]


def try_all_gpus():
    """Every logical GPU, or [CPU:0] when there is none (d2l's try_all_gpus)."""
    return config.list_logical_devices("GPU") or config.list_logical_devices("CPU")[:1]


__all__ = [
    "DType", "Event", "LogicalDevice", "PhysicalDevice", "Tensor", "Variable", "add", "add_n",
    "as_dtype", "bool", "cast", "config", "constant", "convert_to_tensor", "debugging",
    "device", "distribute", "divide", "double", "dtypes", "elapsed_ms", "errors", "experimental", "fill",
    "float32", "float64", "from_dlpack", "int32", "int64", "load_file", "math", "matmul",
    "mul", "multiply", "neg", "negative", "newaxis", "nn", "num_gpus", "ones", "ones_like",
    "pow", "random", "reduce_mean", "reduce_sum", "relu", "reshape", "save_file", "sub",
    "subtract", "synchronize", "trace", "transpose", "truncatediv", "try_all_gpus", "try_gpu", "zeros", "zeros_like",
]
