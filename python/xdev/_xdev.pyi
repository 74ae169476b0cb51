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
    """
    Element types (tf.DType): float32, float64, int32, int64, bool, float16, bfloat16, uint8, int8.
    """

    def __repr__(self) -> str: ...

    float32 = 1

    float64 = 2

    int32 = 3

    int64 = 4

    bool = 5

    float16 = 6

    bfloat16 = 7

    uint8 = 8

    int8 = 9

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
        """The NumPy scalar type (numpy.float32, ..., ml_dtypes.bfloat16)."""

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

    def __str__(self) -> object: ...

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

    @overload
    def __floordiv__(self, arg: Tensor, /) -> Tensor: ...

    @overload
    def __floordiv__(self, arg: object, /) -> Tensor: ...

    def __rfloordiv__(self, arg: object, /) -> Tensor: ...

    @overload
    def __mod__(self, arg: Tensor, /) -> Tensor: ...

    @overload
    def __mod__(self, arg: object, /) -> Tensor: ...

    def __rmod__(self, arg: object, /) -> Tensor: ...

    @overload
    def __and__(self, arg: Tensor, /) -> Tensor: ...

    @overload
    def __and__(self, arg: object, /) -> Tensor: ...

    def __rand__(self, arg: object, /) -> Tensor: ...

    @overload
    def __or__(self, arg: Tensor, /) -> Tensor: ...

    @overload
    def __or__(self, arg: object, /) -> Tensor: ...

    def __ror__(self, arg: object, /) -> Tensor: ...

    def __invert__(self) -> Tensor: ...

    def __abs__(self) -> Tensor: ...

def zeros(shape: Sequence[int], dtype: object = DType.float32) -> Tensor:
    """Zeros (logged as Fill)."""

def ones(shape: Sequence[int], dtype: object = DType.float32) -> Tensor:
    """Ones (logged as Fill)."""

def matmul(a: object, b: object, transpose_a: bool = False, transpose_b: bool = False, adjoint_a: bool = False, adjoint_b: bool = False) -> Tensor:
    """
    The matrix product a · b (MatMul); inputs of rank > 2 are batches of matrices whose batch axes broadcast (BatchMatMulV2), like tf.linalg.matmul.
    """

def batch_matmul(x: object, y: object, adj_x: bool = False, adj_y: bool = False) -> Tensor:
    """
    x [..., M, K] · y [..., K, N] per matrix of the batch axes, which broadcast; adj_x / adj_y swap the last two axes first (BatchMatMulV2).
    """

def add_n(inputs: object) -> Tensor:
    """The sum of tensors of one shape and dtype, on any devices (AddN)."""

def cast(x: object, dtype: object) -> Tensor:
    """x converted to dtype (Cast)."""

@overload
def abs(x: Tensor) -> Tensor: ...

@overload
def abs(x: object) -> Tensor:
    """|x| (Abs)."""

@overload
def sign(x: Tensor) -> Tensor: ...

@overload
def sign(x: object) -> Tensor:
    """-1, 0 or 1 by the sign of x; NaN stays NaN (Sign)."""

@overload
def square(x: Tensor) -> Tensor: ...

@overload
def square(x: object) -> Tensor:
    """x * x (Square)."""

@overload
def exp(x: Tensor) -> Tensor: ...

@overload
def exp(x: object) -> Tensor:
    """eˣ (Exp)."""

@overload
def expm1(x: Tensor) -> Tensor: ...

@overload
def expm1(x: object) -> Tensor:
    """eˣ - 1, exact near 0 (Expm1)."""

@overload
def log(x: Tensor) -> Tensor: ...

@overload
def log(x: object) -> Tensor:
    """ln x (Log)."""

@overload
def log1p(x: Tensor) -> Tensor: ...

@overload
def log1p(x: object) -> Tensor:
    """ln(1 + x), exact near 0 (Log1p)."""

@overload
def sqrt(x: Tensor) -> Tensor: ...

@overload
def sqrt(x: object) -> Tensor:
    """√x (Sqrt)."""

@overload
def rsqrt(x: Tensor) -> Tensor: ...

@overload
def rsqrt(x: object) -> Tensor:
    """1 / √x (Rsqrt)."""

@overload
def reciprocal(x: Tensor) -> Tensor: ...

@overload
def reciprocal(x: object) -> Tensor:
    """1 / x (Reciprocal)."""

@overload
def sin(x: Tensor) -> Tensor: ...

@overload
def sin(x: object) -> Tensor:
    """sin x (Sin)."""

@overload
def cos(x: Tensor) -> Tensor: ...

@overload
def cos(x: object) -> Tensor:
    """cos x (Cos)."""

@overload
def tanh(x: Tensor) -> Tensor: ...

@overload
def tanh(x: object) -> Tensor:
    """tanh x (Tanh)."""

@overload
def sigmoid(x: Tensor) -> Tensor: ...

@overload
def sigmoid(x: object) -> Tensor:
    """1 / (1 + e⁻ˣ) (Sigmoid)."""

@overload
def erf(x: Tensor) -> Tensor: ...

@overload
def erf(x: object) -> Tensor:
    """The error function (Erf)."""

@overload
def softplus(x: Tensor) -> Tensor: ...

@overload
def softplus(x: object) -> Tensor:
    """ln(1 + eˣ) (Softplus)."""

@overload
def floor(x: Tensor) -> Tensor: ...

@overload
def floor(x: object) -> Tensor:
    """The largest integer ≤ x (Floor)."""

@overload
def ceil(x: Tensor) -> Tensor: ...

@overload
def ceil(x: object) -> Tensor:
    """The smallest integer ≥ x (Ceil)."""

@overload
def round(x: Tensor) -> Tensor: ...

@overload
def round(x: object) -> Tensor:
    """x rounded to the nearest integer, halves to even (Round)."""

@overload
def logical_not(x: Tensor) -> Tensor: ...

@overload
def logical_not(x: object) -> Tensor:
    """not x, for bool x (LogicalNot)."""

@overload
def is_nan(x: Tensor) -> Tensor: ...

@overload
def is_nan(x: object) -> Tensor:
    """Whether x is NaN, for float x (IsNan)."""

@overload
def is_finite(x: Tensor) -> Tensor: ...

@overload
def is_finite(x: object) -> Tensor:
    """Whether x is neither inf nor NaN (IsFinite)."""

@overload
def pow(x: Tensor, y: Tensor) -> Tensor: ...

@overload
def pow(x: object, y: object) -> Tensor:
    """xʸ for float32/float64 (Pow)."""

@overload
def maximum(x: Tensor, y: Tensor) -> Tensor: ...

@overload
def maximum(x: object, y: object) -> Tensor:
    """The larger of x and y; NaN propagates (Maximum)."""

@overload
def minimum(x: Tensor, y: Tensor) -> Tensor: ...

@overload
def minimum(x: object, y: object) -> Tensor:
    """The smaller of x and y; NaN propagates (Minimum)."""

@overload
def floordiv(x: Tensor, y: Tensor) -> Tensor: ...

@overload
def floordiv(x: object, y: object) -> Tensor:
    """x / y rounded toward -inf (FloorDiv)."""

@overload
def floormod(x: Tensor, y: Tensor) -> Tensor: ...

@overload
def floormod(x: object, y: object) -> Tensor:
    """x - floordiv(x, y) * y: the remainder takes y's sign (FloorMod)."""

@overload
def squared_difference(x: Tensor, y: Tensor) -> Tensor: ...

@overload
def squared_difference(x: object, y: object) -> Tensor:
    """(x - y)² (SquaredDifference)."""

@overload
def equal(x: Tensor, y: Tensor) -> Tensor: ...

@overload
def equal(x: object, y: object) -> Tensor:
    """x == y, a bool tensor (Equal)."""

@overload
def not_equal(x: Tensor, y: Tensor) -> Tensor: ...

@overload
def not_equal(x: object, y: object) -> Tensor:
    """x != y, a bool tensor (NotEqual)."""

@overload
def less(x: Tensor, y: Tensor) -> Tensor: ...

@overload
def less(x: object, y: object) -> Tensor:
    """x < y, a bool tensor (Less)."""

@overload
def less_equal(x: Tensor, y: Tensor) -> Tensor: ...

@overload
def less_equal(x: object, y: object) -> Tensor:
    """x <= y, a bool tensor (LessEqual)."""

@overload
def greater(x: Tensor, y: Tensor) -> Tensor: ...

@overload
def greater(x: object, y: object) -> Tensor:
    """x > y, a bool tensor (Greater)."""

@overload
def greater_equal(x: Tensor, y: Tensor) -> Tensor: ...

@overload
def greater_equal(x: object, y: object) -> Tensor:
    """x >= y, a bool tensor (GreaterEqual)."""

@overload
def logical_and(x: Tensor, y: Tensor) -> Tensor: ...

@overload
def logical_and(x: object, y: object) -> Tensor:
    """x and y, for bool x and y (LogicalAnd)."""

@overload
def logical_or(x: Tensor, y: Tensor) -> Tensor: ...

@overload
def logical_or(x: object, y: object) -> Tensor:
    """x or y, for bool x and y (LogicalOr)."""

def reduce_sum(input_tensor: object, axis: object | None = None, keepdims: bool = False) -> Tensor:
    """The sum over `axis` (None: all axes; []: none, x itself) (Sum)."""

def reduce_mean(input_tensor: object, axis: object | None = None, keepdims: bool = False) -> Tensor:
    """The mean over `axis` (None: all axes; []: none, x itself) (Mean)."""

def reduce_max(input_tensor: object, axis: object | None = None, keepdims: bool = False) -> Tensor:
    """The largest element over `axis`; NaN wins (Max)."""

def reduce_min(input_tensor: object, axis: object | None = None, keepdims: bool = False) -> Tensor:
    """The smallest element over `axis`; NaN wins (Min)."""

def reduce_prod(input_tensor: object, axis: object | None = None, keepdims: bool = False) -> Tensor:
    """The product over `axis` (Prod)."""

def reduce_any(input_tensor: object, axis: object | None = None, keepdims: bool = False) -> Tensor:
    """Whether any element over `axis` is true (Any)."""

def reduce_all(input_tensor: object, axis: object | None = None, keepdims: bool = False) -> Tensor:
    """Whether every element over `axis` is true (All)."""

def reduce_logsumexp(input_tensor: object, axis: object | None = None, keepdims: bool = False) -> Tensor:
    """ln Σ eˣ over `axis`, without overflow (LogSumExp)."""

@overload
def relu(x: Tensor) -> Tensor: ...

@overload
def relu(x: object) -> Tensor:
    """max(x, 0) (Relu)."""

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

def where(condition: object, x: object, y: object) -> Tensor:
    """
    x where condition is true, else y; the three broadcast together (Select).
    """

def clip_by_value(t: object, clip_value_min: object, clip_value_max: object) -> Tensor:
    """
    min(max(t, clip_value_min), clip_value_max), broadcast together (ClipByValue).
    """

def argmax(input: object, axis: object | None = None, output_type: object = DType.int64) -> Tensor:
    """
    The index of the first largest element along `axis` (None: 0); a NaN counts as the largest (ArgMax).
    """

def argmin(input: object, axis: object | None = None, output_type: object = DType.int64) -> Tensor:
    """
    The index of the first smallest element along `axis` (None: 0); a NaN counts as the smallest (ArgMin).
    """

def cumsum(x: object, axis: object = 0, exclusive: bool = False, reverse: bool = False) -> Tensor:
    """
    The running sum along `axis`; exclusive leaves each element out of its own sum, reverse sums from the end (CumSum).
    """

def leaky_relu(features: object, alpha: float = 0.2) -> Tensor:
    """x if x > 0 else alpha * x (LeakyRelu)."""

def gelu(features: object, approximate: bool = False) -> Tensor:
    """x Φ(x), or its tanh form when approximate (Gelu)."""

def softmax(logits: object, axis: object | None = None) -> Tensor:
    """eˣ / Σ eˣ along `axis` (None: the last) (Softmax)."""

def log_softmax(logits: object, axis: object | None = None) -> Tensor:
    """x - ln Σ eˣ along `axis` (None: the last) (LogSoftmax)."""

def bias_add(value: object, bias: object, data_format: str = 'NHWC') -> Tensor:
    """
    value + bias along the last axis (NHWC) or axis 1 (NCHW) (BiasAdd; integers: the broadcast Add).
    """

def softmax_cross_entropy_with_logits_raw(features: object, labels: object) -> tuple:
    """
    TF's raw op: (loss [batch], backprop [batch, classes]) of [batch, classes] features and labels (SoftmaxCrossEntropyWithLogits).
    """

def layer_norm(x: object, gamma: object, beta: object, begin_norm_axis: int = -1, epsilon: float = 0.001) -> Tensor:
    """
    (x - mean) / sqrt(variance + epsilon) * gamma + beta over the axes from begin_norm_axis (LayerNorm).
    """

def dropout(x: object, rate: float, seed: int | None = None) -> Tensor:
    """
    x / (1 - rate) where a uniform sample is >= rate, else 0 (tf.nn.dropout).
    """

def conv2d(input: object, filters: object, strides: object, padding: str, data_format: str = 'NHWC', dilations: object | None = None) -> Tensor:
    """
    2-d cross-correlation of an NHWC (or NCHW) input with filters [KH, KW, in, out] (Conv2D).
    """

def conv2d_backprop_input(input_sizes: object, filter: object, out_backprop: object, strides: object, padding: str, data_format: str = 'NHWC', dilations: object | None = None) -> Tensor:
    """
    The gradient of conv2d with respect to an input of shape input_sizes (Conv2DBackpropInput).
    """

def conv2d_backprop_filter(input: object, filter_sizes: object, out_backprop: object, strides: object, padding: str, data_format: str = 'NHWC', dilations: object | None = None) -> Tensor:
    """
    The gradient of conv2d with respect to a filter of shape filter_sizes (Conv2DBackpropFilter).
    """

def max_pool(input: object, ksize: object, strides: object, padding: str, data_format: str = 'NHWC') -> Tensor:
    """The maximum of each window (MaxPool)."""

def avg_pool(input: object, ksize: object, strides: object, padding: str, data_format: str = 'NHWC') -> Tensor:
    """The mean of each window's elements inside the input (AvgPool)."""

def max_pool_grad(orig_input: object, orig_output: object, grad: object, ksize: object, strides: object, padding: str, data_format: str = 'NHWC') -> Tensor:
    """
    max_pool's gradient, routed to each window's first maximum (MaxPoolGrad).
    """

def avg_pool_grad(orig_input_shape: object, grad: object, ksize: object, strides: object, padding: str, data_format: str = 'NHWC') -> Tensor:
    """
    avg_pool's gradient, spread over each window's elements inside the input (AvgPoolGrad).
    """

def concat(values: object, axis: object) -> Tensor:
    """
    The tensors joined along an existing `axis` (negative: from the end) (ConcatV2).
    """

def stack(values: object, axis: object = 0) -> Tensor:
    """The tensors stacked along a new `axis` of the output (Pack)."""

def identity(input: object) -> Tensor:
    """A new tensor holding input's values (Identity)."""

def tile(input: object, multiples: Sequence[int]) -> Tensor:
    """input repeated multiples[k] times along each axis k (Tile)."""

def pad(tensor: object, paddings: Sequence[Sequence[int]], mode: str = 'CONSTANT', constant_values: float = 0.0) -> Tensor:
    """
    tensor with paddings[k] = [before, after] elements of constant_values around axis k (PadV2).
    """

def gather(params: object, indices: object, axis: object | None = None) -> Tensor:
    """
    The slices of params along `axis` (None: 0) at `indices`; an index out of range is an error (GatherV2).
    """

def slice(input_: object, begin: Sequence[int], size: Sequence[int]) -> Tensor:
    """
    The window of input_ at `begin` of `size` (-1: to the end of the axis), a view (Slice).
    """

def strided_slice(input_: object, begin: Sequence[int], end: Sequence[int], strides: Sequence[int] | None = None, begin_mask: int = 0, end_mask: int = 0, ellipsis_mask: int = 0, new_axis_mask: int = 0, shrink_axis_mask: int = 0) -> Tensor:
    """
    input_[begin:end:strides] with TensorFlow's masks (None strides: 1); a view unless a stride is negative (StridedSlice).
    """

def range(start: object, limit: object | None = None, delta: object = 1, dtype: object | None = None) -> Tensor:
    """
    start, start + delta, ... up to limit, not included (one argument: 0 to it); Python ints give int32, else float32 (Range).
    """

def one_hot(indices: object, depth: int, on_value: float | None = None, off_value: float | None = None, axis: object | None = None, dtype: object | None = None) -> Tensor:
    """
    on_value where the index equals the position along a new axis of depth, else off_value; an index out of range gives off_value (OneHot).
    """

def tensor_scatter_nd_add(tensor: object, indices: object, updates: object) -> Tensor:
    """
    A copy of tensor with each slice of updates added at its index (rows of indices [..., D] index tensor's first D axes; repeated indices add up); an index out of range is an error (TensorScatterAdd).
    """

def split(value: object, num_or_size_splits: object, axis: object = 0, num: int | None = None) -> list[Tensor]:
    """
    value cut along `axis` into a list of views (no copy): an int makes that many equal pieces (Split), a list one piece per size, at most one of them -1 (SplitV).
    """

def broadcast_to_copy(input: object, shape: Sequence[int]) -> Tensor:
    """
    input broadcast to `shape` as a new dense tensor, every element stored (BroadcastTo).
    """

def expand_dims(input: object, axis: object) -> Tensor:
    """A view with an axis of size 1 inserted at `axis`."""

def squeeze(input: object, axis: object | None = None) -> Tensor:
    """A view without the axes of size 1 in `axis` (None: all of them)."""

def broadcast_to(input: object, shape: Sequence[int]) -> Tensor:
    """A view of input broadcast to `shape` (stride 0)."""

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
    """
    How all-reduce combines values (tf.distribute.ReduceOp; MAX and MIN as Horovod and NCCL offer them).
    """

    SUM = 0

    MEAN = 1

    MAX = 2

    MIN = 3

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

def stop_gradient(input: object) -> Tensor:
    """
    tf.stop_gradient: input's values as a tensor no tape sees as a function of input (no copy).
    """

def mean_squared_error(y_true: object, y_pred: object) -> Tensor:
    """mean((y_pred - y_true)^2) over every element."""

def softmax_cross_entropy(labels: object, logits: object) -> Tensor:
    """
    Mean over the batch of -sum(labels * log_softmax(logits)); labels [batch, classes].
    """

def sparse_softmax_cross_entropy(labels: object, logits: object) -> Tensor:
    """The same with class indices [batch] (int32 or int64) as labels."""
