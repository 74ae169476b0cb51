"""``tf.GradientTape`` and ``tf.stop_gradient`` over the C++ tape (xdev::GradientTape).

    w = xdev.Variable([[1.0], [2.0]])
    x = xdev.constant([[3.0, 4.0]])
    with xdev.GradientTape() as tape:
        loss = xdev.reduce_sum(xdev.square(x @ w))
    dw = tape.gradient(loss, w)          # 2 * (x @ w) * x^T

The C++ tape records every op the thread runs between ``__enter__`` and
``__exit__`` whose inputs it watches (``watch``, trainable variables read in the
block) and computes the backward pass with ordinary ops on the devices that ran
the forward ops. ``gradient`` may be called after the block, as in TensorFlow.
"""

import contextlib
import threading

from . import _xdev
from ._convert import convert_to_tensor
from ._variables import Variable, _python_variable

_state = threading.local()
_FLOATS = ("float32", "float64")  # the dtypes with gradients


def _active():
    """The Python tapes recording on this thread (innermost last)."""
    if not hasattr(_state, "tapes"):
        _state.tapes = []
    return _state.tapes


def watch_accessed(value):
    """Called by variables the C++ tape cannot see (MirroredVariable) when read: every tape
    recording on this thread with watch_accessed_variables watches ``value``."""
    if value.dtype.name not in _FLOATS:
        return
    for tape in _active():
        if tape._watch_accessed_variables and tape._cpp.recording:
            tape._cpp.watch(value)


def stop_gradient(input, name=None):  # noqa: A002 (TensorFlow's name)
    """``tf.stop_gradient``: input's values as a tensor no tape sees as a function of input
    (no copy)."""
    return _xdev.stop_gradient(input)


def _flatten(structure, leaves):
    if isinstance(structure, (list, tuple)):
        for item in structure:
            _flatten(item, leaves)
    elif isinstance(structure, dict):
        for key in sorted(structure):
            _flatten(structure[key], leaves)
    else:
        leaves.append(structure)
    return leaves


def _pack(structure, leaves):
    """``structure`` with its leaves replaced, in _flatten's order."""
    if isinstance(structure, (list, tuple)):
        items = [_pack(item, leaves) for item in structure]
        if isinstance(structure, tuple) and hasattr(structure, "_fields"):
            return type(structure)(*items)
        return type(structure)(items)
    if isinstance(structure, dict):
        return {key: _pack(structure[key], leaves) for key in sorted(structure)}
    return leaves.pop(0)


def _describe(value):
    return type(value).__module__ + "." + type(value).__qualname__


def _check_float(what, dtype):
    if dtype.name not in _FLOATS:
        raise _xdev.InvalidArgumentError(
            f"GradientTape.gradient: {what} is {dtype.name}; only float32 and float64 "
            "tensors have gradients (cast it to a float inside the tape)")


class GradientTape:
    """Records the ops of the ``with`` block for automatic differentiation
    (``tf.GradientTape``).

    persistent: ``gradient`` may be called more than once (the records are kept until
    the tape is garbage collected); otherwise the first ``gradient`` frees them.
    watch_accessed_variables: trainable variables read in the block are watched.
    A tape belongs to the thread that enters it; tapes nest (an outer tape records an
    inner tape's ``gradient``: second derivatives).
    """

    def __init__(self, persistent=False, watch_accessed_variables=True):
        self._persistent = bool(persistent)
        self._watch_accessed_variables = bool(watch_accessed_variables)
        self._cpp = _xdev._GradientTape(self._persistent, self._watch_accessed_variables)
        self._used = False

    def __enter__(self):
        if self._used:
            raise _xdev.FailedPreconditionError(
                "GradientTape: a non-persistent tape that computed its gradient cannot "
                "record again; make a new tape")
        self._cpp.start()
        _active().append(self)
        return self

    def __exit__(self, *exc_info):
        self._cpp.stop()
        stack = _active()
        if self in stack:
            stack.remove(self)
        return False

    def _require_recording(self, what):
        if not self._cpp.recording:
            raise _xdev.FailedPreconditionError(
                f"GradientTape.{what}: the tape is not recording; call it inside "
                "`with xdev.GradientTape() as tape:`")

    def watch(self, tensor):
        """Records the ops that use ``tensor`` from now on: a tensor, a Variable, or a
        (nested) list/tuple of them. Only float32 and float64 tensors can be watched."""
        self._require_recording("watch")
        for i, leaf in enumerate(_flatten(tensor, [])):
            if isinstance(leaf, Variable) and hasattr(leaf, "_var"):
                self._cpp.watch(leaf._var)
            elif isinstance(leaf, Variable):  # MirroredVariable: this replica's copy
                self._cpp.watch(leaf._local())
            elif isinstance(leaf, _xdev.Tensor):
                self._cpp.watch(leaf)
            else:
                raise TypeError(
                    f"GradientTape.watch: item {i} is a {_describe(leaf)}; pass xdev "
                    "tensors or Variables (a tensor made from it now would not be the one "
                    "your ops use)")

    @contextlib.contextmanager
    def stop_recording(self):
        """``with tape.stop_recording():`` ops of the block are not recorded."""
        self._require_recording("stop_recording")
        self._cpp.stop()
        try:
            yield
        finally:
            self._cpp.start()

    def gradient(self, target, sources, output_gradients=None,
                 unconnected_gradients="none"):
        """d target / d source for each source (a tensor, a Variable, or a nested
        list/tuple/dict of them), in the structure of ``sources``. A source the target
        does not depend on gets None (``unconnected_gradients="zero"``: zeros).
        ``output_gradients`` weights the target (default: ones of its shape)."""
        if self._used:
            raise _xdev.FailedPreconditionError(
                "GradientTape.gradient: a non-persistent tape computes gradients only once; "
                "make it xdev.GradientTape(persistent=True) to call gradient() again")
        unconnected = getattr(unconnected_gradients, "value", unconnected_gradients)
        if unconnected not in ("none", "zero"):
            raise ValueError(
                f"unconnected_gradients must be 'none' or 'zero', not {unconnected_gradients!r}")
        if isinstance(target, (list, tuple, dict)):
            raise TypeError(
                "GradientTape.gradient: the target must be one tensor (xdev has no "
                "list of targets: add them up inside the tape)")
        target = convert_to_tensor(target)
        _check_float(f"the target (shape {tuple(target.shape)})", target.dtype)

        leaves = _flatten(sources, [])
        tensors, tensor_at, variables, variable_at = [], [], [], []
        for i, leaf in enumerate(leaves):
            if isinstance(leaf, Variable) and hasattr(leaf, "_var"):
                _check_float(f"source {i} (Variable '{leaf.name}')", leaf.dtype)
                variables.append(leaf._var)
                variable_at.append(i)
                continue
            if isinstance(leaf, Variable):  # MirroredVariable: this replica's copy
                leaf = leaf._local()
            if not isinstance(leaf, _xdev.Tensor):
                raise TypeError(
                    f"GradientTape.gradient: source {i} is a {_describe(leaf)}; sources are "
                    "xdev tensors and Variables")
            _check_float(f"source {i} (shape {tuple(leaf.shape)})", leaf.dtype)
            tensors.append(leaf)
            tensor_at.append(i)
        grads = [None] * len(leaves)
        og = output_gradients
        if og is not None:
            og = convert_to_tensor(og, target.dtype)
        try:
            # One backward pass for both kinds (a non-persistent tape makes one).
            for i, g in zip(tensor_at + variable_at,
                            self._cpp.gradient(target, tensors, variables, og)):
                grads[i] = g
        finally:
            if not self._persistent:  # spent, even when the backward pass failed
                self._used = True
                self._cpp.close()
        if unconnected == "zero":
            for i, g in enumerate(grads):
                if g is None:
                    source = leaves[i]
                    with _xdev.DeviceScope(source.device):
                        grads[i] = _xdev.zeros(list(source.shape), source.dtype)
        return _pack(sources, grads)

    def watched_variables(self):
        """The variables this tape watched (read while recording, or ``watch``ed), in the
        order it first saw them. MirroredVariables are not listed (the tape watched their
        replica's copy, a tensor)."""
        return [_python_variable(v) for v in self._cpp.watched_variables()]


__all__ = ["GradientTape", "stop_gradient"]
