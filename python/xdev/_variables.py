"""Variables (``tf.Variable``): a tensor that ``assign`` replaces. Under
``strategy.scope()`` a Variable is a :class:`xdev.distribute.MirroredVariable`
with a copy on every replica device."""

from . import _xdev
from ._convert import convert_to_tensor


class Variable:
    """A named, replaceable tensor. Ops take it wherever they take a tensor."""

    def __new__(cls, initial_value=None, *args, **kwargs):
        if cls is Variable:
            from .distribute import get_strategy
            strategy = get_strategy()
            if strategy is not None:
                from .distribute import MirroredVariable
                return MirroredVariable.__new__(MirroredVariable)
        return super().__new__(cls)

    def __init__(self, initial_value, dtype=None, name=None, trainable=True):
        if getattr(self, "_initialized", False):
            return
        self._initialized = True
        self.name = name or "Variable"
        self.trainable = trainable
        self._init(convert_to_tensor(initial_value, dtype))

    def _init(self, tensor):
        self._value = tensor

    # --- reading ---
    def read_value(self):
        return self._value

    def value(self):
        return self.read_value()

    def __xdev_tensor__(self):
        return self.read_value()

    def numpy(self):
        return self.read_value().numpy()

    def __array__(self, dtype=None, copy=None):
        return self.read_value().__array__(dtype=dtype, copy=copy)

    shape = property(lambda self: self.read_value().shape)
    dtype = property(lambda self: self.read_value().dtype)
    device = property(lambda self: self.read_value().device)
    ndim = property(lambda self: self.read_value().ndim)

    # --- writing: a new tensor replaces the old one (tensors are immutable) ---
    def assign(self, value):
        new = convert_to_tensor(value, self.dtype).to(self.device)
        if tuple(new.shape) != tuple(self.shape):
            raise _xdev.InvalidArgumentError(
                f"assign: shape {tuple(new.shape)} does not match the variable's "
                f"{tuple(self.shape)}")
        self._value = new
        return self

    def assign_add(self, delta):
        return self.assign(self.read_value() + delta)

    def assign_sub(self, delta):
        return self.assign(self.read_value() - delta)

    def __repr__(self):
        return (f"<xdev.Variable '{self.name}' shape={tuple(self.shape)} "
                f"dtype={self.dtype.name}, numpy={self.numpy()!r}>")

    # --- ops take the value ---
    def __getitem__(self, key):
        return self.read_value()[key]

    def __len__(self):
        return len(self.read_value())

    def __neg__(self):
        return -self.read_value()

    def __bool__(self):
        return bool(self.read_value())

    def __float__(self):
        return float(self.read_value())

    def __int__(self):
        return int(self.read_value())

    __hash__ = None


def _delegate(name):
    def method(self, *args):
        return getattr(self.read_value(), name)(*args)
    method.__name__ = name
    return method


for _name in ("__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__",
              "__truediv__", "__rtruediv__", "__matmul__", "__rmatmul__", "__pow__",
              "__rpow__", "__lt__", "__le__", "__gt__", "__ge__", "__eq__", "__ne__"):
    setattr(Variable, _name, _delegate(_name))
