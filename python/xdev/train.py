"""Checkpoints (``tf.train.Checkpoint``, ``tf.train.latest_checkpoint``) over safetensors.

    ckpt = xdev.train.Checkpoint(step=step, optimizer=opt, model=model)
    path = ckpt.save("/tmp/run/ckpt")          # "/tmp/run/ckpt-1"
    ...
    ckpt.restore(xdev.train.latest_checkpoint("/tmp/run")).assert_consumed()

A checkpoint holds the objects given to it by name: variables, models and layers (their
``variables``), optimizers (their step count and, for every variable of the same
checkpoint, its slots: momentum, Adam's moments) and other checkpoints. ``save`` and
``write`` store every value as a tensor named by its path (``model/variables/0``,
``optimizer/slots/model/variables/0/1``, ``optimizer/iterations``) in one safetensors
file, ``PREFIX.safetensors``, and ``save`` records it in the folder's ``checkpoint``
file as TensorFlow does. ``restore`` and ``read`` load the file and assign each value
to its object on the device that object lives on, so a checkpoint saved on one device
restores onto another.

Where this differs from TensorFlow: the file is safetensors, not TensorFlow's bundle
(TensorFlow cannot read it, nor xdev TensorFlow's); values are restored at once, so a
model must be built (called once) before ``restore``, which raises ``ValueError``
otherwise (TensorFlow defers such values until the variables exist); an optimizer's
slots for ``MirroredVariable`` objects are not checkpointed yet (``UnimplementedError``).
"""

import json
import os

import numpy as np

from . import _xdev
from . import safetensors as _safetensors
from ._variables import Variable
from .dtypes import int64

_SUFFIX = ".safetensors"
_STATE_FILE = "checkpoint"


def _variables_of(obj):
    """The variables of a model or layer (``variables``), or None for other objects."""
    variables = getattr(obj, "variables", None)
    if variables is None or callable(variables):
        return None
    return list(variables)


def _is_optimizer(obj):
    from .optimizers import Optimizer
    return isinstance(obj, Optimizer)


class CheckpointLoadStatus:
    """What ``restore`` matched (TensorFlow's load status)."""

    def __init__(self, path, unused_in_file, missing_in_file):
        self._path = path
        self._unused = sorted(unused_in_file)
        self._missing = sorted(missing_in_file)

    def assert_consumed(self):
        """Raises AssertionError unless every value of the file went to an object and
        every object of the checkpoint had a value in the file."""
        if self._unused or self._missing:
            parts = []
            if self._unused:
                parts.append(f"values of the file that matched no object: {self._unused}")
            if self._missing:
                parts.append(f"objects with no value in the file: {self._missing}")
            raise AssertionError(f"{self._path}: " + "; ".join(parts))
        return self

    def assert_existing_objects_matched(self):
        """Raises AssertionError when an object of the checkpoint had no value in the file."""
        if self._missing:
            raise AssertionError(f"{self._path}: objects with no value in the file: "
                                 f"{self._missing}")
        return self

    def expect_partial(self):
        """Silences nothing here (xdev never warns about unmatched values); returns self."""
        return self


class Checkpoint:
    """Groups variables, models, layers, optimizers and checkpoints to save and restore
    together (``tf.train.Checkpoint(**kwargs)``)."""

    def __init__(self, **kwargs):
        for name, obj in kwargs.items():
            if obj is None:
                raise ValueError(f"Checkpoint: {name} is None")
            if "/" in name:
                raise ValueError(f"Checkpoint: the name {name!r} contains '/'")
        self._children = dict(kwargs)
        self.save_counter = 0
        for name, obj in kwargs.items():
            setattr(self, name, obj)

    # --- what is checkpointed ---
    def _variables(self, prefix=""):
        """(path, variable) for every variable under this checkpoint, depth first in the
        order the objects were given."""
        out = []
        for name, obj in self._children.items():
            path = prefix + name
            if isinstance(obj, Variable):
                out.append((path, obj))
            elif isinstance(obj, Checkpoint):
                out.extend(obj._variables(path + "/"))
            elif _is_optimizer(obj):
                continue
            else:
                variables = _variables_of(obj)
                if variables is None:
                    raise TypeError(
                        f"Checkpoint: {path} is a {type(obj).__name__}; a checkpoint holds "
                        "variables, models and layers, optimizers and checkpoints")
                out.extend((f"{path}/variables/{i}", v) for i, v in enumerate(variables))
        return out

    def _optimizers(self, prefix=""):
        out = []
        for name, obj in self._children.items():
            if _is_optimizer(obj):
                out.append((prefix + name, obj))
            elif isinstance(obj, Checkpoint):
                out.extend(obj._optimizers(prefix + name + "/"))
        return out

    def _unbuilt(self, prefix=""):
        """Paths of models and layers that have no variables yet."""
        out = []
        for name, obj in self._children.items():
            if isinstance(obj, Checkpoint):
                out.extend(obj._unbuilt(prefix + name + "/"))
            elif not isinstance(obj, Variable) and not _is_optimizer(obj):
                if not _variables_of(obj):
                    out.append(prefix + name)
        return out

    @staticmethod
    def _check_mirrored_slots(variables, optimizers):
        from .distribute import MirroredVariable
        mirrored = [path for path, v in variables if isinstance(v, MirroredVariable)]
        for opt_path, opt in optimizers:
            if mirrored and opt._cpp.slot_count != 0:
                raise _xdev.UnimplementedError(
                    f"Checkpoint: {opt_path} keeps slots for MirroredVariables ({mirrored[0]}); "
                    "checkpointing those is not implemented yet. Save the optimizer's "
                    "iterations and the variables without it, or train without the strategy")

    def _tensors(self):
        variables = self._variables()
        optimizers = self._optimizers()
        self._check_mirrored_slots(variables, optimizers)
        tensors = {path: v.read_value() for path, v in variables}
        for opt_path, opt in optimizers:
            tensors[f"{opt_path}/iterations"] = np.array(opt.iterations, np.int64)
            if opt._cpp.slot_count == 0:
                continue
            for var_path, v in variables:
                for i, slot in enumerate(opt._cpp.slots(v._var)):
                    tensors[f"{opt_path}/slots/{var_path}/{i}"] = slot
        return tensors

    # --- writing ---
    def write(self, file_prefix):
        """Writes every value to ``file_prefix + ".safetensors"``; returns ``file_prefix``
        (what ``read`` and ``restore`` take)."""
        file_prefix = os.fspath(file_prefix)
        tensors = self._tensors()
        folder = os.path.dirname(file_prefix)
        if folder:
            os.makedirs(folder, exist_ok=True)
        # Written beside, then renamed: an interrupted save leaves the last one whole.
        final = file_prefix + _SUFFIX
        partial = final + ".partial"
        _safetensors.save_file(tensors, partial, metadata={"format": "xdev.train.Checkpoint"})
        os.replace(partial, final)
        return file_prefix

    def save(self, file_prefix):
        """Writes ``file_prefix-N`` (N counts this checkpoint's saves from 1), records it as
        the folder's latest checkpoint and returns it."""
        self.save_counter += 1
        path = self.write(f"{os.fspath(file_prefix)}-{self.save_counter}")
        folder = os.path.dirname(path) or "."
        state = {"model_checkpoint_path": os.path.basename(path)}
        state_path = os.path.join(folder, _STATE_FILE)
        with open(state_path + ".partial", "w") as f:
            f.write(f"model_checkpoint_path: {json.dumps(state['model_checkpoint_path'])}\n")
        os.replace(state_path + ".partial", state_path)
        return path

    # --- reading ---
    def read(self, save_path):
        """Assigns every value of ``save_path`` (a prefix ``write`` or ``save`` returned)
        to its object; returns a status whose ``assert_consumed()`` checks the match.
        Shapes and dtypes must match (``ValueError``, nothing assigned then)."""
        if save_path is None:
            raise ValueError("Checkpoint.restore: save_path is None (latest_checkpoint found "
                             "no checkpoint?)")
        save_path = os.fspath(save_path)
        file = save_path if save_path.endswith(_SUFFIX) else save_path + _SUFFIX
        if not os.path.exists(file):
            raise _xdev.NotFoundError(f"Checkpoint.restore: no checkpoint at {save_path} "
                                      f"({file} does not exist)")
        loaded = _safetensors.load_file(file, device="/CPU:0")
        variables = self._variables()
        optimizers = self._optimizers()
        self._check_mirrored_slots(variables, optimizers)
        unbuilt = [p for p in self._unbuilt() if any(k.startswith(p + "/") for k in loaded)]
        if unbuilt:
            raise ValueError(
                f"Checkpoint.restore: {unbuilt[0]} has no variables yet but {file} has values "
                "for it; build it first (call it once on an input): xdev restores at once, "
                "where TensorFlow defers")
        # Every check before any assignment: all or nothing.
        plan = []
        missing = []
        for path, v in variables:
            t = loaded.get(path)
            if t is None:
                missing.append(path)
                continue
            self._check(file, path, t, tuple(v.shape), v.dtype)
            plan.append((v, t))
        slot_plan = []
        for opt_path, opt in optimizers:
            it = loaded.get(f"{opt_path}/iterations")
            if it is None:
                missing.append(f"{opt_path}/iterations")
            else:
                self._check(file, f"{opt_path}/iterations", it, (), int64)
            for var_path, v in variables:
                found = []
                while f"{opt_path}/slots/{var_path}/{len(found)}" in loaded:
                    found.append(loaded[f"{opt_path}/slots/{var_path}/{len(found)}"])
                if not found:
                    continue  # not updated yet when saved
                if len(found) != opt._cpp.slot_count:
                    raise ValueError(
                        f"Checkpoint.restore: {file} has {len(found)} slots for {var_path} in "
                        f"{opt_path}, which keeps {opt._cpp.slot_count} (another optimizer?)")
                for i, t in enumerate(found):
                    self._check(file, f"{opt_path}/slots/{var_path}/{i}", t, tuple(v.shape),
                                v.dtype)
                slot_plan.append((opt, v, found))
            if it is not None:
                slot_plan.append((opt, None, it))
        for v, t in plan:
            v.assign(t.to(v.device))
        for opt, v, value in slot_plan:
            if v is None:
                opt._cpp.set_iterations(int(value.numpy()))
            else:
                opt._cpp.set_slots(v._var, value)
        used = {path for path, _ in variables}
        for opt_path, _ in optimizers:
            used.add(f"{opt_path}/iterations")
            used.update(k for k in loaded if k.startswith(f"{opt_path}/slots/"))
        return CheckpointLoadStatus(save_path, set(loaded) - used, missing)

    restore = read

    @staticmethod
    def _check(file, path, t, shape, dtype):
        if tuple(t.shape) != shape or t.dtype != dtype:
            raise ValueError(f"Checkpoint.restore: {path} is {dtype.name}{shape} here, "
                             f"{t.dtype.name}{tuple(t.shape)} in {file}")


def latest_checkpoint(checkpoint_dir):
    """The prefix of the checkpoint ``save`` wrote last in ``checkpoint_dir``, or None."""
    state_path = os.path.join(os.fspath(checkpoint_dir), _STATE_FILE)
    try:
        with open(state_path) as f:
            lines = f.read().splitlines()
    except FileNotFoundError:
        return None
    for line in lines:
        key, _, value = line.partition(":")
        if key.strip() == "model_checkpoint_path":
            name = json.loads(value.strip())
            path = os.path.join(os.fspath(checkpoint_dir), name)
            return path if os.path.exists(path + _SUFFIX) else None
    return None


__all__ = ["Checkpoint", "CheckpointLoadStatus", "latest_checkpoint"]
