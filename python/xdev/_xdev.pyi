"""
xdev's C++ SDK, bound with nanobind (use the xdev package, not this module)
"""

from collections.abc import Sequence
import enum
from typing import overload

from xdev.errors import (
    AbiMismatchError as AbiMismatchError,
    Error as Error,
    FailedPreconditionError as FailedPreconditionError,
    InternalError as InternalError,
    InvalidArgumentError as InvalidArgumentError,
    NotFoundError as NotFoundError,
    ResourceExhaustedError as ResourceExhaustedError,
    UnavailableError as UnavailableError,
    UnimplementedError as UnimplementedError
)


class PhysicalDevice:
    """A device a plugin found (tf.config.PhysicalDevice)."""

    @property
    def name(self) -> str: ...

    @property
    def device_type(self) -> str: ...

    @property
    def id(self) -> int: ...

    @property
    def platform(self) -> str: ...

    @property
    def plugin(self) -> str: ...

    @property
    def model(self) -> str: ...

    @property
    def memory_limit(self) -> int: ...

    @property
    def bus_id(self) -> str: ...

    @property
    def numa_node(self) -> int: ...

    @property
    def incarnation(self) -> int: ...

    @property
    def physical_device_desc(self) -> str: ...

    @property
    def properties(self) -> dict[str, str]: ...

    def __repr__(self) -> str: ...

    def __eq__(self, arg: PhysicalDevice, /) -> bool: ...

    def __hash__(self) -> int: ...

class LogicalDevice:
    """A device ops and tensors are placed on (tf.config.LogicalDevice)."""

    @property
    def name(self) -> str: ...

    @property
    def device_type(self) -> str: ...

    @property
    def id(self) -> int: ...

    def __repr__(self) -> str: ...

    def __eq__(self, arg: LogicalDevice, /) -> bool: ...

    def __hash__(self) -> int: ...

class PluginInfo:
    """A plugin file the runtime found, loaded or skipped."""

    @property
    def file(self) -> str: ...

    @property
    def loaded(self) -> bool: ...

    @property
    def reason(self) -> str: ...

    @property
    def name(self) -> str: ...

    @property
    def abi_version(self) -> str: ...

    @property
    def version(self) -> str: ...

    @property
    def status(self) -> str: ...

    @property
    def device_count(self) -> int: ...

    def __repr__(self) -> str: ...

def version() -> str: ...

def list_physical_devices(device_type: str = '') -> list[PhysicalDevice]: ...

def list_logical_devices(device_type: str = '') -> list[LogicalDevice]: ...

def num_gpus() -> int: ...

def list_plugins() -> list[PluginInfo]: ...

def plugin_search_path() -> list[str]: ...

def set_visible_devices(devices: Sequence[PhysicalDevice], device_type: str = '') -> None: ...

def get_visible_devices(device_type: str = '') -> list[PhysicalDevice]: ...

def set_memory_growth(device: PhysicalDevice, enable: bool) -> None: ...

def get_memory_growth(device: PhysicalDevice) -> bool: ...

def set_logical_device_configuration(device: PhysicalDevice, memory_limits: Sequence[int | None]) -> None: ...

def get_logical_device_configuration(device: PhysicalDevice) -> list[int | None]: ...

def set_per_process_memory_fraction(fraction: float) -> None: ...

def devices_initialized() -> bool: ...

def get_memory_info(device: str) -> dict: ...

def reset_memory_stats(device: str) -> None: ...

def set_log_device_placement(enabled: bool) -> None: ...

def get_log_device_placement() -> bool: ...

def set_soft_device_placement(enabled: bool) -> None: ...

def get_soft_device_placement() -> bool: ...

def placement_counters() -> dict: ...

def set_fallback_policy(policy: str) -> None: ...

def get_fallback_policy() -> str: ...

def has_kernel(device: str, op: str, dtype: object, output_dtype: object | None = None) -> bool: ...

def list_kernels(device: str) -> list: ...

def reset_placement_counters() -> None: ...

def recent_placements() -> list: ...

def clear_recent_placements() -> None: ...

class DeviceScope:
    """
    `with xdev.device(name):` places every op and tensor of the block on that device (tf.device).
    """

    def __init__(self, name: str) -> None: ...

    @property
    def name(self) -> str: ...

    def __enter__(self) -> DeviceScope: ...

    def __exit__(self, exc_type: object | None, exc_value: object | None, traceback: object | None) -> bool: ...

    def __repr__(self) -> str: ...

class StrictPlacement:
    """
    `with xdev.experimental.strict_placement():` an op whose inputs live on another device fails instead of copying them.
    """

    def __init__(self, strict: bool = True) -> None: ...

    def __enter__(self) -> StrictPlacement: ...

    def __exit__(self, exc_type: object | None, exc_value: object | None, traceback: object | None) -> bool: ...

class DType(enum.Enum):
    """Element types (tf.DType): float32, float64, int32, int64, bool."""

    def __repr__(self) -> str: ...

    float32 = 1

    float64 = 2

    int32 = 3

    int64 = 4

    bool = 5

    @property
    def size(self) -> int:
        """Bytes per element."""

    @property
    def is_floating(self) -> bool: ...

    @property
    def is_integer(self) -> bool: ...

    @property
    def is_bool(self) -> bool: ...

    @property
    def as_numpy_dtype(self) -> object:
        """The NumPy scalar type (numpy.float32, ...)."""

class Tensor:
    """A typed, shaped, immutable array on one device (tf.Tensor)."""

    @property
    def shape(self) -> tuple:
        """The dimensions, as a tuple of ints."""

    @property
    def dtype(self) -> DType: ...

    @property
    def device(self) -> str:
        """The canonical name of the logical device the tensor lives on."""

    @property
    def ndim(self) -> int: ...

    @property
    def strides(self) -> list[int]:
        """
        Strides in elements (views made by indexing or transposing are strided).
        """

    def is_contiguous(self) -> bool: ...

    def numpy(self) -> object:
        """The values as a new NumPy array (a copy, read back from the device)."""

    def item(self) -> object:
        """The value of a one-element tensor as a Python number."""

    @overload
    def to(self, device: str) -> Tensor:
        """This tensor if it lives on `device` already, else a copy there."""

    @overload
    def to(self, device: LogicalDevice) -> Tensor: ...

    @overload
    def copy_to(self, device: str) -> Tensor:
        """Always a new buffer on `device`."""

    @overload
    def copy_to(self, device: LogicalDevice) -> Tensor: ...

    def cpu(self) -> Tensor:
        """The tensor on /CPU:0 (a copy unless it lives there)."""

    def __str__(self) -> str: ...

    def __len__(self) -> int: ...

    def __bool__(self) -> bool: ...

    def __float__(self) -> float: ...

    def __int__(self) -> int: ...

    def __index__(self) -> int: ...

    def __getitem__(self, arg: object, /) -> object: ...

    def __neg__(self) -> Tensor: ...

    def __dlpack__(self, *, stream: object | None = None, max_version: object | None = None, dl_device: object | None = None, copy: object | None = None) -> object:
        """A DLPack capsule of the tensor's memory (no copy; read-only)."""

    def __dlpack_device__(self) -> tuple: ...

    def __hash__(self) -> int: ...

    __array_priority__: int = 100

    def __array__(self, dtype: object | None = None, copy: object | None = None) -> object:
        """A NumPy array: shares host memory (read-only), copies device memory."""

    def __repr__(self) -> object: ...

    def __eq__(self, arg: object, /) -> object: ...

    def __ne__(self, arg: object, /) -> object: ...

    def __iter__(self) -> object: ...

    def __pow__(self, arg: object, /) -> object: ...

    def __rpow__(self, arg: object, /) -> object: ...

    def __lt__(self, arg: object, /) -> object: ...

    def __le__(self, arg: object, /) -> object: ...

    def __gt__(self, arg: object, /) -> object: ...

    def __ge__(self, arg: object, /) -> object: ...

    @overload
    def __add__(self, arg: Tensor, /) -> Tensor: ...

    @overload
    def __add__(self, arg: object, /) -> Tensor: ...

    def __radd__(self, arg: object, /) -> Tensor: ...

    @overload
    def __sub__(self, arg: Tensor, /) -> Tensor: ...

    @overload
    def __sub__(self, arg: object, /) -> Tensor: ...

    def __rsub__(self, arg: object, /) -> Tensor: ...

    @overload
    def __mul__(self, arg: Tensor, /) -> Tensor: ...

    @overload
    def __mul__(self, arg: object, /) -> Tensor: ...

    def __rmul__(self, arg: object, /) -> Tensor: ...

    @overload
    def __truediv__(self, arg: Tensor, /) -> Tensor: ...

    @overload
    def __truediv__(self, arg: object, /) -> Tensor: ...

    def __rtruediv__(self, arg: object, /) -> Tensor: ...

    @overload
    def __matmul__(self, arg: Tensor, /) -> Tensor: ...

    @overload
    def __matmul__(self, arg: object, /) -> Tensor: ...

    def __rmatmul__(self, arg: object, /) -> Tensor: ...

def zeros(shape: Sequence[int], dtype: object = DType.float32) -> Tensor:
    """Zeros (logged as Fill)."""

def ones(shape: Sequence[int], dtype: object = DType.float32) -> Tensor:
    """Ones (logged as Fill)."""

@overload
def matmul(a: Tensor, b: Tensor, transpose_a: bool = False, transpose_b: bool = False) -> Tensor:
    """The matrix product a · b (MatMul)."""

@overload
def matmul(a: object, b: object, transpose_a: bool = False, transpose_b: bool = False) -> Tensor: ...

@overload
def add(x: Tensor, y: Tensor) -> Tensor: ...

@overload
def add(x: object, y: object) -> Tensor:
    """x + y with NumPy broadcasting (Add)."""

@overload
def subtract(x: Tensor, y: Tensor) -> Tensor: ...

@overload
def subtract(x: object, y: object) -> Tensor:
    """x - y with NumPy broadcasting (Sub)."""

@overload
def multiply(x: Tensor, y: Tensor) -> Tensor: ...

@overload
def multiply(x: object, y: object) -> Tensor:
    """x * y with NumPy broadcasting (Mul)."""

@overload
def divide(x: Tensor, y: Tensor) -> Tensor: ...

@overload
def divide(x: object, y: object) -> Tensor:
    """x / y, true division: integers are divided as float64 (Div)."""

@overload
def truncatediv(x: Tensor, y: Tensor) -> Tensor: ...

@overload
def truncatediv(x: object, y: object) -> Tensor:
    """x / y in the inputs' dtype; integers round toward zero (Div)."""

@overload
def negative(x: Tensor) -> Tensor: ...

@overload
def negative(x: object) -> Tensor:
    """-x (Neg)."""

@overload
def relu(x: Tensor) -> Tensor: ...

@overload
def relu(x: object) -> Tensor:
    """max(x, 0) (Relu)."""

def add_n(inputs: object) -> Tensor:
    """The sum of tensors of one shape and dtype, on any devices (AddN)."""

def cast(x: object, dtype: object) -> Tensor:
    """x converted to dtype (Cast)."""

def reduce_sum(input_tensor: object, axis: object | None = None, keepdims: bool = False) -> Tensor:
    """The sum over `axis` (None: all axes) (Sum)."""

def reduce_mean(input_tensor: object, axis: object | None = None, keepdims: bool = False) -> Tensor:
    """The mean over `axis` (None: all axes) (Mean)."""

def transpose(a: object, perm: Sequence[int] | None = None) -> Tensor:
    """Axes permuted (None: reversed), as a new contiguous tensor (Copy)."""

def reshape(tensor: object, shape: Sequence[int]) -> Tensor:
    """
    The same values in a new shape; one dimension may be -1 (free when contiguous).
    """

def dlpack_zero_copy_device(device: tuple[int, int]) -> LogicalDevice | None:
    """
    The logical device that takes memory on this DLPack device (type, id) without a copy, or None.
    """

@overload
def dlpack_stream(device: str) -> int | None:
    """
    The native handle of the device's stream for __dlpack__(stream=...), or None.
    """

@overload
def dlpack_stream(device: LogicalDevice) -> int | None: ...

class ReduceOp(enum.Enum):
    """How all-reduce combines values (tf.distribute.ReduceOp)."""

    SUM = 0

    MEAN = 1

def trace_start(path: str) -> None:
    """
    Starts writing a Chrome trace-event file (Perfetto, chrome://tracing) at `path`.
    """

def trace_stop() -> None:
    """Stops tracing; the file is complete JSON from here on."""

def trace_active() -> bool:
    """True while a trace is being written."""

def synchronize(device: str = '') -> None:
    """
    Blocks until the work enqueued on `device` (every device when empty) completed.
    """

class Event:
    """A marker in a device's stream (torch.cuda.Event, with timing)."""

    def __init__(self, device: str = '') -> None: ...

    def record(self) -> None:
        """Marks the current end of the device's stream."""

    def synchronize(self) -> None:
        """Blocks until the event completed."""

    def query(self) -> bool:
        """True when the event completed (does not block)."""

    def wait(self, device: str) -> None:
        """
        Makes later work on `device` wait for this event, without blocking the host.
        """

    def elapsed_ms(self, end: Event) -> float:
        """
        Milliseconds of device time from this event to `end` (waits for `end`).
        """

    @property
    def recorded(self) -> bool: ...

    @property
    def device(self) -> str: ...

def elapsed_ms(start: Event, end: Event) -> float:
    """
    Milliseconds of device time from `start` to `end` (both recorded on one device).
    """
