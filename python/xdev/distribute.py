"""Many devices (``tf.distribute``): :class:`MirroredStrategy`.

    strategy = xdev.distribute.MirroredStrategy()    # every GPU, else every CPU
    with strategy.scope():
        w = xdev.Variable(xdev.zeros([3, 1]))          # a copy per replica device
    xs = strategy.split_batch(x)                       # PerReplica shards
    grads = strategy.run(gradient, args=(w, xs))       # once per replica, concurrently
    w.assign_sub(strategy.all_reduce("SUM", grads), 0.2)

``run`` calls the step function once per replica, each on its own thread under a
scope of its device; the replicas take turns running Python and run their ops
in parallel (the GIL is released in every op).
"""

import contextlib
import threading

from . import _xdev
from ._convert import convert_to_tensor
from ._variables import Variable
from ._xdev import ReduceOp

_state = threading.local()


def _stack():
    if not hasattr(_state, "strategies"):
        _state.strategies = []
    return _state.strategies


def get_strategy():
    """The strategy whose ``scope()`` this thread is in (the replica's, inside ``run``), or None."""
    replica = get_replica_context()
    if replica is not None:
        return replica.strategy
    stack = _stack()
    return stack[-1] if stack else None


def has_strategy():
    return get_strategy() is not None


def get_replica_context():
    """The :class:`ReplicaContext` of the replica this thread runs, inside ``run``; else None."""
    return getattr(_state, "replica", None)


def in_cross_replica_context():
    return get_replica_context() is None and has_strategy()


def _reduce_op(op):
    if isinstance(op, ReduceOp):
        return op
    if isinstance(op, str) and op.upper() in ("SUM", "MEAN"):
        return getattr(ReduceOp, op.upper())
    raise ValueError(f"reduce_op must be ReduceOp.SUM or ReduceOp.MEAN, not {op!r}")


class ReplicaContext:
    """What a step function learns about the replica it runs as."""

    def __init__(self, strategy, replica_id):
        self.strategy = strategy
        self.replica_id_in_sync_group = replica_id
        self.num_replicas_in_sync = strategy.num_replicas_in_sync
        self.device = strategy.extended.worker_devices[replica_id]

    def __repr__(self):
        return (f"ReplicaContext(replica_id_in_sync_group={self.replica_id_in_sync_group}, "
                f"device='{self.device}')")


class PerReplica:
    """One value per replica (``.values``, in replica order)."""

    def __init__(self, values):
        self.values = tuple(values)

    def __repr__(self):
        return "PerReplica:{" + ", ".join(
            f"\n  {i}: {v}" for i, v in enumerate(self.values)) + "\n}"


class MirroredVariable(Variable):
    """A variable with one copy per replica device, kept identical by its updates."""

    def _init(self, tensor):
        strategy = get_strategy()
        self._strategy = strategy
        self._mirrored = strategy._cpp.create_variable(tensor)

    @property
    def values(self):
        return tuple(self._mirrored.values)

    def _local(self):
        replica = get_replica_context()
        return self._mirrored.local(replica.replica_id_in_sync_group if replica else 0)

    def read_value(self):
        """This replica's copy inside ``run``, else replica 0's; GradientTapes recording
        on this thread watch it (trainable variables)."""
        value = self._local()
        if self.trainable:
            from ._tape import watch_accessed
            watch_accessed(value)
        return value

    # Without a read (a tape does not see these).
    shape = property(lambda self: self._local().shape)
    dtype = property(lambda self: self._local().dtype)
    device = property(lambda self: self._local().device)
    ndim = property(lambda self: self._local().ndim)

    def _deltas(self, delta):
        if isinstance(delta, PerReplica):
            return [convert_to_tensor(v) for v in delta.values]
        delta = convert_to_tensor(delta, self.dtype)
        return [delta] * self._strategy.num_replicas_in_sync

    def _cross_replica(self, what):
        if get_replica_context() is not None:
            raise _xdev.FailedPreconditionError(
                f"MirroredVariable.{what} inside run: return the update from the step "
                "function and apply it after run returns")

    def assign_sub(self, delta, scale=1.0):
        """Every copy -= scale * delta (one delta per replica as a PerReplica, or one for
        all); all copies or none change."""
        self._cross_replica("assign_sub")
        self._mirrored.assign_sub(self._deltas(delta), float(scale))
        return self

    def assign_add(self, delta):
        self._cross_replica("assign_add")
        self._mirrored.assign_sub(self._deltas(delta), -1.0)
        return self

    def assign(self, value):
        self._cross_replica("assign")
        self._mirrored.assign(convert_to_tensor(value, self.dtype))
        return self

    def __repr__(self):
        return f"MirroredVariable:{{{', '.join(f'{i}: {v}' for i, v in enumerate(self.values))}}}"


class _Extended:
    def __init__(self, devices):
        self.worker_devices = tuple(devices)
        self.parameter_devices = self.worker_devices


class MirroredStrategy:
    """Mirrored data parallelism over ``devices`` (logical devices or names; None: every
    logical GPU, or every logical CPU without one). Prints ``Using MirroredStrategy with
    devices (...)`` like TensorFlow."""

    def __init__(self, devices=None, cross_device_ops=None):
        if cross_device_ops is not None:
            raise _xdev.UnimplementedError(
                "MirroredStrategy: cross_device_ops is chosen by xdev (all_reduce_path())")
        names = [] if devices is None else [getattr(d, "name", d) for d in devices]
        self._cpp = _xdev._MirroredStrategy([str(n) for n in names])
        self.extended = _Extended(d.name for d in self._cpp.devices)

    @property
    def num_replicas_in_sync(self):
        return self._cpp.num_replicas_in_sync

    @contextlib.contextmanager
    def scope(self):
        """Variables created in the block are mirrored on every replica device."""
        _stack().append(self)
        try:
            yield self
        finally:
            _stack().pop()

    def _unwrap(self, value):
        if isinstance(value, PerReplica):
            return value
        return PerReplica([value] * self.num_replicas_in_sync)

    def run(self, fn, args=(), kwargs=None):
        """Calls ``fn(*args, **kwargs)`` once per replica, concurrently, each under a scope of
        its device; PerReplica arguments give each replica its own value. Returns what
        ``fn`` returned (a tensor, a tuple/list of tensors, or None), as PerReplica values
        (plain values with one replica). An exception in a replica is raised here, with a
        note naming the replica and device."""
        kwargs = kwargs or {}
        structure = {}

        def one(replica_id):
            previous = getattr(_state, "replica", None)
            _state.replica = ReplicaContext(self, replica_id)
            try:
                pick = lambda v: v.values[replica_id] if isinstance(v, PerReplica) else v  # noqa: E731
                out = fn(*[pick(a) for a in args], **{k: pick(v) for k, v in kwargs.items()})
            finally:
                _state.replica = previous
            if out is None:
                structure[replica_id] = None
                return []
            if isinstance(out, (tuple, list)):
                structure[replica_id] = type(out)
                return [convert_to_tensor(o) for o in out]
            structure[replica_id] = "single"
            return [convert_to_tensor(out)]

        results = self._cpp.run(one)
        kind = structure.get(0)
        if kind is None:
            return None
        columns = [PerReplica(column) for column in zip(*results)]
        if self.num_replicas_in_sync == 1:
            columns = [c.values[0] for c in columns]
        if kind == "single":
            return columns[0]
        return kind(columns)

    def reduce(self, reduce_op, value, axis=None):
        """The SUM or MEAN over replicas (and over ``axis`` of each value), on /CPU:0."""
        op = _reduce_op(reduce_op)
        values = list(self._unwrap(value).values)
        values = [convert_to_tensor(v) for v in values]
        if axis is None:
            return self._cpp.reduce(op, values, "/CPU:0")
        total = self._cpp.reduce(ReduceOp.SUM, [_xdev.reduce_sum(v, axis) for v in values],
                                 "/CPU:0")
        if op == ReduceOp.SUM:
            return total
        count = sum(int(v.shape[axis]) for v in values)
        return total / _xdev.cast(count, total.dtype)

    def all_reduce(self, reduce_op, value):
        """SUM or MEAN of one value per replica, on every replica device (PerReplica)."""
        values = [convert_to_tensor(v) for v in self._unwrap(value).values]
        return PerReplica(self._cpp.all_reduce(_reduce_op(reduce_op), values))

    def all_reduce_path(self):
        """"shared memory", "direct copies" or "host staging"."""
        return self._cpp.all_reduce_path()

    def split_batch(self, batch):
        """``batch`` split along axis 0, one shard per replica on its device."""
        return PerReplica(self._cpp.split_batch(convert_to_tensor(batch)))

    def experimental_distribute_values_from_function(self, value_fn):
        """PerReplica of ``value_fn(context)``, each called under a scope of its device."""
        values = []
        for replica_id, device in enumerate(self.extended.worker_devices):
            with _xdev.DeviceScope(device):
                values.append(convert_to_tensor(value_fn(ReplicaContext(self, replica_id))))
        return PerReplica(values)


__all__ = [
    "MirroredStrategy", "MirroredVariable", "PerReplica", "ReduceOp", "ReplicaContext",
    "get_strategy", "has_strategy", "get_replica_context", "in_cross_replica_context",
]
