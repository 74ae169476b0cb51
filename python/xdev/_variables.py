"""Variables (``tf.Variable``): the C++ ``xdev::Variable``, so that a recording
:class:`xdev.GradientTape` watches the reads of trainable variables and optimizers
update them. Under ``strategy.scope()`` a Variable is a
:class:`xdev.distribute.MirroredVariable` with a copy on every replica device."""

import weakref

from . import _xdev
from ._convert import convert_to_tensor

# The Python Variable of each C++ variable alive (by its key), so that what the C++
# side hands back (GradientTape.watched_variables) is the user's object.
_by_key = weakref.WeakValueDictionary()


def _python_variable(cpp_variable):
    """The Python Variable holding ``cpp_variable`` (a new handle if there is none)."""
    found = _by_key.get(cpp_variable.key)
    return found if found is not None else Variable._wrap(cpp_variable)


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
        # The C++ variable (xdev::Variable): tapes recording on this thread watch
        # its reads when it is trainable, optimizers update it in place.
        self._var = _xdev._Variable(tensor, bool(self.trainable), self.name)
        _by_key[self._var.key] = self

    @classmethod
    def _wrap(cls, cpp_variable):
        """A Python handle of an existing C++ variable (a layer's parameter)."""
        self = object.__new__(Variable)
        self._initialized = True
        self.name = cpp_variable.name or "Variable"
        self.trainable = cpp_variable.trainable
        self._var = cpp_variable
        _by_key[cpp_variable.key] = self
        return self

    # --- reading ---
    def read_value(self):
        """The current value; a recording GradientTape watches it (trainable variables)."""
        return self._var.read_value()

    def value(self):
        return self.read_value()

    def __xdev_tensor__(self):
        return self.read_value()

    def numpy(self):
        return self.read_value().numpy()

    def __array__(self, dtype=None, copy=None):
        return self.read_value().__array__(dtype=dtype, copy=copy)

    # Without a read (a tape does not see these).
    shape = property(lambda self: tuple(self._var.shape))
    dtype = property(lambda self: self._var.dtype)
    device = property(lambda self: self._var.device)
    ndim = property(lambda self: len(self.shape))

    # --- writing, on the variable's device; tapes do not record it ---
    def assign(self, value):
        """value = ``value`` (same shape and dtype; copied to the variable's device)."""
        self._var.assign(convert_to_tensor(value, self.dtype))
        return self

    def assign_add(self, delta):
        """value += delta (broadcast to the variable's shape)."""
        self._var.assign_add(convert_to_tensor(delta, self.dtype))
        return self

    def assign_sub(self, delta):
        """value -= delta (broadcast to the variable's shape)."""
        self._var.assign_sub(convert_to_tensor(delta, self.dtype))
        return self

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
