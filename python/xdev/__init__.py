"""xdev: a plugin-first device runtime, with TensorFlow's Python API.

    import xdev
    print("Num GPUs Available:", len(xdev.config.list_physical_devices("GPU")))
    xdev.debugging.set_log_device_placement(True)
    with xdev.device("/CPU:0"):
        a = xdev.constant([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    c = a @ xdev.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    print(c)            # tf.Tensor(\n[[22. 28.]\n [49. 64.]], shape=(2, 2), dtype=float32)
    c.numpy()           # a NumPy array; numpy.from_dlpack(c) shares the memory

The names follow TensorFlow's (``xdev.config``, ``xdev.device``, ``xdev.constant``,
``xdev.distribute.MirroredStrategy``, ...); the log lines and error messages are the
C++ SDK's. docs/user-guide.md (Python) has the details.
"""

import contextlib as _contextlib

from . import _xdev
from ._xdev import (  # noqa: A004 (range, slice: TensorFlow's names)
    DType,
    Event,
    LogicalDevice,
    PhysicalDevice,
    Tensor,
    add,
    add_n,
    batch_matmul,
    broadcast_to,
    cast,
    clip_by_value,
    concat,
    divide,
    elapsed_ms,
    expand_dims,
    gather,
    identity,
    matmul,
    multiply,
    negative,
    num_gpus,
    one_hot,
    ones,
    pad,
    range,
    reduce_mean,
    reduce_sum,
    reshape,
    slice,
    split,
    squeeze,
    stack,
    strided_slice,
    subtract,
    synchronize,
    tensor_scatter_nd_add,
    tile,
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
    layers,
    linalg,
    losses,
    math,
    nn,
    optimizers,
    random,
    trace,
    train,
)
from . import _fallback  # noqa: E402
from ._convert import convert_to_tensor  # noqa: E402
from ._tape import GradientTape, stop_gradient  # noqa: E402
from ._tensor import constant, fill, ones_like, zeros_like  # noqa: E402
from ._variables import Variable  # noqa: E402
from .dlpack import from_dlpack  # noqa: E402
from .dtypes import (  # noqa: E402,A004
    as_dtype, bfloat16, bool, double, float16, float32, float64, half, int8, int32, int64,
    uint8)
from .math import (  # noqa: E402,A004 -- TensorFlow's top-level math names
    abs,
    argmax,
    argmin,
    cos,
    cumsum,
    equal,
    exp,
    floor,
    greater,
    greater_equal,
    less,
    less_equal,
    logical_and,
    logical_not,
    logical_or,
    maximum,
    minimum,
    not_equal,
    pow,
    reduce_all,
    reduce_any,
    reduce_logsumexp,
    reduce_max,
    reduce_min,
    reduce_prod,
    round,
    sigmoid,
    sign,
    sin,
    sqrt,
    square,
    tanh,
    truediv,
)
from .nn import relu  # noqa: E402
from .safetensors import load_file, save_file  # noqa: E402

from . import keras  # noqa: E402 -- after the modules it is built on

__version__ = _xdev.__version__
newaxis = None

sub = subtract  # the C++ SDK's names
mul = multiply
neg = negative


def device(device_name):
    """``with xdev.device("/GPU:0"):`` places the block's ops and tensors on that device
    (any of TensorFlow's spellings, or a LogicalDevice). Per thread, nestable. ``""`` and
    ``None`` constrain nothing, as in TensorFlow: the block keeps the enclosing scope's
    placement."""
    if device_name is None or (isinstance(device_name, str) and device_name.strip() == ""):
        return _contextlib.nullcontext()
    name = getattr(device_name, "name", device_name)
    if not isinstance(name, str):
        raise TypeError(f"device: expected a device name or a LogicalDevice, not "
                        f"{type(device_name).__name__}")
    _check_device_spec(name)
    return _xdev.DeviceScope(name)


# TensorFlow's device types; a plugin's own types are read from its devices.
_STANDARD_DEVICE_TYPES = frozenset({"CPU", "GPU", "TPU"})


def _check_device_spec(spec):
    """TensorFlow's parse of a device string: each ``/``-separated part is ``job:x``,
    ``replica:n``, ``task:n``, ``device:TYPE:n`` or ``TYPE[:n]`` with TYPE a device type;
    anything else is a ValueError naming it, as ``tf.device`` raises (a spec that parses
    but names no device falls to soft placement, as in TensorFlow)."""
    types = None
    for part in spec.split("/"):
        fields = part.split(":")
        key = fields[0]
        if key == "" or (len(fields) == 2 and key in ("job", "replica", "task")) or \
                (len(fields) == 3 and key == "device"):
            continue
        if len(fields) in (1, 2):
            if key.upper() in _STANDARD_DEVICE_TYPES:
                continue  # the common case: no plugin query on every scope
            if types is None:
                types = _STANDARD_DEVICE_TYPES | {
                    d.device_type.upper() for d in _xdev.list_physical_devices()}
            if key.upper() in types:
                continue
        raise ValueError(f"Unknown attribute '{key}' is encountered while parsing the device "
                         f"spec: '{spec}'.")


def where(condition, x=None, y=None):
    """``tf.where``: x where condition is true, else y, the three broadcast together
    (Select); without x and y, the coordinates of the true elements (int64, one row each,
    computed on the host: the op table has no op for it)."""
    if x is None and y is None:
        return _fallback.argwhere(condition)
    if x is None or y is None:
        raise ValueError("where: x and y must both be given, or both be None")
    return _xdev.where(condition, x, y)


def try_gpu(i=0):
    """GPU ``i`` if it exists, else CPU:0 (d2l's try_gpu)."""
    gpus = config.list_logical_devices("GPU")
    return gpus[i] if i < len(gpus) else config.list_logical_devices("CPU")[0]


def try_all_gpus():
    """Every logical GPU, or [CPU:0] when there is none (d2l's try_all_gpus)."""
    return config.list_logical_devices("GPU") or config.list_logical_devices("CPU")[:1]


__all__ = [
    "abs", "add", "add_n", "argmax", "argmin", "as_dtype", "batch_matmul", "bool", "broadcast_to",
    "cast", "clip_by_value", "concat", "config", "constant", "convert_to_tensor", "cos", "cumsum",
    "debugging", "device", "distribute", "divide", "double", "DType", "dtypes", "elapsed_ms",
    "equal", "errors", "Event", "exp", "expand_dims", "experimental", "fill", "float16",
    "bfloat16", "float32", "float64", "half", "int8", "uint8", "floor", "from_dlpack", "gather",
    "GradientTape", "greater", "greater_equal", "identity", "int32", "int64", "keras", "layers",
    "less",
    "less_equal", "linalg", "load_file", "losses", "logical_and", "logical_not", "logical_or",
    "LogicalDevice", "math", "matmul", "maximum", "minimum", "mul", "multiply", "neg", "negative",
    "newaxis", "nn", "not_equal", "num_gpus", "one_hot", "ones", "ones_like", "optimizers", "pad",
    "PhysicalDevice", "pow", "random", "range", "reduce_all", "reduce_any", "reduce_logsumexp",
    "reduce_max", "reduce_mean", "reduce_min", "reduce_prod", "reduce_sum", "relu", "reshape",
    "round", "save_file", "sigmoid", "sign", "sin", "slice", "split", "sqrt", "square", "squeeze",
    "stack", "stop_gradient", "strided_slice", "sub", "subtract", "synchronize", "tanh", "Tensor",
    "tensor_scatter_nd_add", "tile", "trace", "transpose", "truediv", "truncatediv",
    "try_all_gpus", "try_gpu", "Variable", "where", "zeros", "zeros_like"
]
