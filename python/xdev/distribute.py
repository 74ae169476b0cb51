"""Many devices (``tf.distribute``): :class:`MirroredStrategy` (one process) and
:class:`MultiWorkerMirroredStrategy` (many processes under ``mpirun``, on Open MPI).

    strategy = xdev.distribute.MirroredStrategy()    # every GPU, else every CPU
    with strategy.scope():
        w = xdev.Variable(xdev.zeros([3, 1]))          # a copy per replica device
    xs = strategy.split_batch(x)                       # PerReplica shards
    grads = strategy.run(gradient, args=(w, xs))       # once per replica, concurrently
    w.assign_sub(strategy.all_reduce("SUM", grads), 0.2)
    # or an optimizer: it sums the PerReplica gradients and updates every copy alike
    xdev.optimizers.Adam(0.01).apply_gradients([(grads, w)])

``run`` calls the step function once per replica, each on its own thread under a
scope of its device; the replicas take turns running Python and run their ops
in parallel (the GIL is released in every op).

Across processes (``mpirun -np 2 python train.py``; docs/user-guide.md, Many workers):

    strategy = xdev.distribute.MultiWorkerMirroredStrategy()   # this worker's devices
    xs = strategy.split_batch(global_x)                # this worker's rows of the batch
    grads = strategy.run(gradient, args=(w, xs))
    w.assign_sub(strategy.all_reduce("SUM", grads, name="grad/w"), 0.2)

Both are the C++ SDK's strategies (``xdev::MirroredStrategy``,
``xdev::MultiWorkerMirroredStrategy`` in libxdev_mpi); this module adds
``scope()``, PerReplica values and TensorFlow's argument handling.
"""

import contextlib
import importlib
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
    if isinstance(op, str) and op.upper() in ("SUM", "MEAN", "MAX", "MIN"):
        return getattr(ReduceOp, op.upper())
    raise ValueError(f"reduce_op must be ReduceOp.SUM, MEAN, MAX or MIN, not {op!r}")


class _ReplicaStopped(_xdev.FailedPreconditionError):
    """Raised in the replicas that wait for one that failed (its error is the one run raises)."""


class _Rendezvous:
    """Where the replicas of one ``run`` meet when a step function calls
    ``apply_gradients`` (TensorFlow's custom-training-loop pattern): every replica
    arrives with its gradients, replica 0 sums them and applies one update, then all go
    on together. Each replica also arrives once when its step function returns, so a
    replica that skips an ``apply_gradients`` the others make is an error, not a hang."""

    def __init__(self, replicas):
        self.sites = [None] * replicas
        self.slots = [None] * replicas
        self.mismatch = None
        self.error = None
        self.result = None
        self.primary = None  # (replica id, exception) of the first replica that failed
        self.barrier = threading.Barrier(replicas, action=self._check)

    def _check(self):  # runs once, in one thread, when every replica has arrived
        if len(set(self.sites)) != 1:
            where = ", ".join(f"replica {i}: {site}" for i, site in enumerate(self.sites))
            self.mismatch = (f"MirroredStrategy.run: the replicas did not make the same "
                             f"apply_gradients calls ({where}); every replica must apply "
                             "its gradients the same number of times")

    def meet(self, replica_id, site):
        self.sites[replica_id] = site
        try:
            self.barrier.wait()
        except threading.BrokenBarrierError:
            raise _ReplicaStopped(
                "MirroredStrategy.run: another replica failed while this one waited for it "
                "in apply_gradients") from None
        if self.mismatch is not None:
            raise _xdev.FailedPreconditionError(self.mismatch)


class ReplicaContext:
    """What a step function learns about the replica it runs as: its index among all
    replicas (of every worker, with :class:`MultiWorkerMirroredStrategy`) and the
    device it runs on."""

    def __init__(self, strategy, local_replica_id, rendezvous=None):
        self.strategy = strategy
        self._local_id = local_replica_id  # which copy of a MirroredVariable it reads
        self._rendezvous = rendezvous
        self._applies = 0
        self.replica_id_in_sync_group = strategy._global_replica_id(local_replica_id)
        self.num_replicas_in_sync = strategy.num_replicas_in_sync
        self.device = strategy._local_devices[local_replica_id]

    def _apply_together(self, apply_across, pairs):
        """``optimizer.apply_gradients`` inside ``run``: this replica's (gradient,
        variable) pairs meet the others'; replica 0 calls ``apply_across(slots)`` once
        with every replica's pairs (in replica order), outside the replica context; the
        result (or its error) is every replica's."""
        r = self._rendezvous
        if r is None:
            raise _xdev.FailedPreconditionError(
                "apply_gradients in a replica context made outside strategy.run")
        self._applies += 1
        r.slots[self._local_id] = pairs
        site = f"apply_gradients call {self._applies}"
        r.meet(self._local_id, site)
        if self._local_id == 0:
            r.error = r.result = None
            _state.replica = None
            try:
                r.result = apply_across(list(r.slots))
            except BaseException as e:  # every replica raises it below
                r.error = e
            finally:
                _state.replica = self
        r.meet(self._local_id, site)
        if r.error is not None:
            raise r.error
        return r.result

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
    """A variable with one copy per replica device, kept identical by its updates
    (``assign_sub``, ``assign``, or an optimizer's ``apply_gradients`` with the
    PerReplica gradients ``strategy.run`` returned)."""

    def _init(self, tensor):
        strategy = get_strategy()
        self._strategy = strategy
        self._mirrored = strategy._cpp.create_variable(tensor)

    @property
    def values(self):
        return tuple(self._mirrored.values)

    def _local(self):
        replica = get_replica_context()
        return self._mirrored.local(replica._local_id if replica else 0)

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
        return [delta] * len(self._mirrored.values)  # one per replica of this process

    def _cross_replica(self, what):
        if get_replica_context() is not None:
            raise _xdev.FailedPreconditionError(
                f"MirroredVariable.{what} inside run: return the update from the step "
                "function and apply it after run returns")

    def assign_sub(self, delta, scale=1.0):
        """Every copy -= scale * delta (one delta per replica of this process as a
        PerReplica, or one for all); all copies or none change."""
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


def _device_names(devices):
    """Device names for the C++ strategies: logical devices or names; None: the default."""
    return [] if devices is None else [str(getattr(d, "name", d)) for d in devices]


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
        self._cpp = _xdev._MirroredStrategy(_device_names(devices))
        self._set_replicas(self._cpp)
        self.extended = _Extended(self._local_devices)

    def _set_replicas(self, replicas):
        # The C++ MirroredStrategy of this process's replicas: it runs the step functions.
        self._replicas = replicas
        self._local_devices = tuple(d.name for d in replicas.devices)

    def _global_replica_id(self, local_replica_id):
        return local_replica_id

    @property
    def num_replicas_in_sync(self):
        """The number of replicas (of every worker, with MultiWorkerMirroredStrategy)."""
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
        """One tensor per replica of this process."""
        if not isinstance(value, PerReplica):
            value = PerReplica([value] * len(self._local_devices))
        return [convert_to_tensor(v) for v in value.values]

    def run(self, fn, args=(), kwargs=None):
        """Calls ``fn(*args, **kwargs)`` once per replica, concurrently, each under a scope of
        its device; PerReplica arguments give each replica its own value. Returns what
        ``fn`` returned (a tensor, a tuple/list of tensors, or None), as PerReplica values
        (plain values with one replica in this process). An exception in a replica is
        raised here, with a note naming the replica and device."""
        kwargs = kwargs or {}
        structure = {}
        rendezvous = _Rendezvous(len(self._local_devices))

        def one(replica_id):
            previous = getattr(_state, "replica", None)
            context = ReplicaContext(self, replica_id, rendezvous)
            _state.replica = context
            try:
                pick = lambda v: v.values[replica_id] if isinstance(v, PerReplica) else v  # noqa: E731
                out = fn(*[pick(a) for a in args], **{k: pick(v) for k, v in kwargs.items()})
                # Every replica made as many apply_gradients calls as the others.
                rendezvous.meet(replica_id,
                                f"return after {context._applies} apply_gradients call(s)")
            except BaseException as e:
                if not isinstance(e, _ReplicaStopped) and rendezvous.primary is None:
                    rendezvous.primary = (replica_id, e)
                rendezvous.barrier.abort()  # the replicas waiting for this one stop
                raise
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

        try:
            results = self._replicas.run(one)
        except _ReplicaStopped:
            if rendezvous.primary is None:
                raise
            replica_id, error = rendezvous.primary
            if hasattr(error, "add_note"):
                error.add_note(f"raised by replica {replica_id} on "
                               f"{self._local_devices[replica_id]} in MirroredStrategy.run")
            raise error from None
        kind = structure.get(0)
        if kind is None:
            return None
        columns = [PerReplica(column) for column in zip(*results)]
        if len(self._local_devices) == 1:
            columns = [c.values[0] for c in columns]
        if kind == "single":
            return columns[0]
        return kind(columns)

    def reduce(self, reduce_op, value, axis=None):
        """The SUM or MEAN over replicas (and over ``axis`` of each value), on /CPU:0
        (MAX and MIN without ``axis``)."""
        op = _reduce_op(reduce_op)
        values = self._unwrap(value)
        if axis is None:
            return self._reduce_to_host(op, values)
        if op not in (ReduceOp.SUM, ReduceOp.MEAN):
            raise ValueError(f"reduce with an axis takes SUM or MEAN, not {op}")
        total = self._reduce_to_host(ReduceOp.SUM, [_xdev.reduce_sum(v, axis) for v in values])
        if op == ReduceOp.SUM:
            return total
        return total / _xdev.cast(self._count_rows(values, axis), total.dtype)

    def _reduce_to_host(self, op, values):
        return self._cpp.reduce(op, values, "/CPU:0")

    def _count_rows(self, values, axis):
        """The length of ``axis`` summed over every replica's value."""
        return sum(int(v.shape[axis]) for v in values)

    def all_reduce(self, reduce_op, value):
        """SUM, MEAN, MAX or MIN of one value per replica, on every replica device
        (PerReplica)."""
        return PerReplica(self._cpp.all_reduce(_reduce_op(reduce_op), self._unwrap(value)))

    def all_reduce_path(self):
        """"shared memory", "direct copies" or "host staging"."""
        return self._cpp.all_reduce_path()

    def split_batch(self, batch):
        """``batch`` split along axis 0, one shard per replica on its device."""
        return PerReplica(self._cpp.split_batch(convert_to_tensor(batch)))

    def experimental_distribute_values_from_function(self, value_fn):
        """PerReplica of ``value_fn(context)`` for each replica of this process, each called
        under a scope of its device."""
        values = []
        for replica_id, device in enumerate(self._local_devices):
            with _xdev.DeviceScope(device):
                values.append(convert_to_tensor(value_fn(ReplicaContext(self, replica_id))))
        return PerReplica(values)


def _mpi_extension():
    """xdev._xdev_mpi (libxdev_mpi), built when meson found Open MPI."""
    try:
        return importlib.import_module("xdev._xdev_mpi")
    except ModuleNotFoundError as e:
        if e.name != "xdev._xdev_mpi":
            raise
        raise _xdev.UnimplementedError(
            "MultiWorkerMirroredStrategy: this xdev package was built without MPI (no "
            "xdev._xdev_mpi or libxdev_mpi: meson found no Open MPI, or -Dmpi=disabled). "
            "Install Debian's openmpi-bin and libopenmpi-dev and rebuild the package "
            "(pip install .)") from None
    except ImportError as e:
        raise _xdev.UnavailableError(
            f"MultiWorkerMirroredStrategy: xdev._xdev_mpi is built but does not load "
            f"(is Open MPI's runtime, libmpi, installed?): {e}") from e


class ClusterSpec:
    """The workers (``tf.train.ClusterSpec``): one job, ``"worker"``, whose tasks are
    MPI's host names, or the addresses XDEV_CONFIG (TF_CONFIG's shape) gives."""

    def __init__(self, workers):
        self._workers = tuple(workers)

    @property
    def jobs(self):
        return ["worker"]

    def as_dict(self):
        return {"worker": list(self._workers)}

    def num_tasks(self, job_name):
        return len(self._job(job_name))

    def task_address(self, job_name, task_index):
        return self._job(job_name)[task_index]

    def _job(self, job_name):
        if job_name != "worker":
            raise ValueError(f"No such job in cluster: {job_name!r} (the only job is 'worker')")
        return self._workers

    def __repr__(self):
        return f"ClusterSpec({self.as_dict()})"


class ClusterResolver:
    """Who the workers are and which one this process is (TensorFlow's
    ``strategy.cluster_resolver``); ``source`` says where xdev learnt it: "mpi",
    "XDEV_CONFIG" or "single worker"."""

    def __init__(self, cluster):
        self._spec = ClusterSpec(cluster.workers)
        self.task_type = "worker"
        self.task_id = cluster.task_id
        self.source = cluster.source
        self.rpc_layer = None

    def cluster_spec(self):
        return self._spec

    def __repr__(self):
        return (f"ClusterResolver(task_type='worker', task_id={self.task_id}, "
                f"cluster_spec={self._spec.as_dict()}, source='{self.source}')")


class _MultiWorkerExtended(_Extended):
    def __init__(self, cpp):
        # TensorFlow's names in a cluster: "/job:worker/replica:0/task:1/device:CPU:0".
        super().__init__(cpp.device_names)
        self.num_workers = cpp.num_workers
        self.task_id = cpp.task_id
        # Only the chief (task 0) writes checkpoints and summaries.
        self.should_checkpoint = cpp.is_chief
        self.should_save_summary = cpp.is_chief
        self.should_init = True


class MultiWorkerMirroredStrategy(MirroredStrategy):
    """Mirrored data parallelism across processes and hosts on Open MPI
    (``tf.distribute.MultiWorkerMirroredStrategy``): started under ``mpirun -np N``, each
    process is one worker (a "task") with the replicas ``devices`` on it (None: every
    logical GPU, else every logical CPU; the same number on every worker). The cluster
    comes from mpirun, or from an XDEV_CONFIG JSON shaped like TF_CONFIG; started without
    mpirun it runs as a single worker and says so. Prints ``Using
    MultiWorkerMirroredStrategy with cluster_spec = ...`` like TensorFlow.

    The collectives (``all_reduce``, ``broadcast``, ``all_gather``, ``reduce_scatter``,
    ``barrier``, ``reduce``, ``gather``) are calls every worker makes in the same order
    with values of the same shape and dtype, from the thread that constructed the
    strategy; a mismatch raises :class:`xdev.errors.InvalidArgumentError` on every
    worker, naming the tensor and both shapes, and a worker that stops answering raises
    :class:`xdev.errors.UnavailableError` naming it after XDEV_COLLECTIVE_TIMEOUT_S
    seconds (default 60). Without MPI in the package, the constructor raises
    :class:`xdev.errors.UnimplementedError` saying so.
    """

    def __init__(self, cluster_resolver=None, communication_options=None, devices=None):
        if cluster_resolver is not None:
            raise _xdev.UnimplementedError(
                "MultiWorkerMirroredStrategy: the cluster comes from mpirun or XDEV_CONFIG "
                "(TF_CONFIG's shape), not from a cluster_resolver")
        if communication_options is not None:
            raise _xdev.UnimplementedError(
                "MultiWorkerMirroredStrategy: communication is chosen by xdev (MPI, or the "
                "devices' own collectives; XDEV_COLLECTIVE_TIMEOUT_S and "
                "XDEV_COLLECTIVE_CHUNK_MIB tune it)")
        self._cpp = _mpi_extension().MultiWorkerMirroredStrategy(_device_names(devices))
        self._set_replicas(self._cpp.local)
        self.cluster_resolver = ClusterResolver(self._cpp.cluster)
        self.extended = _MultiWorkerExtended(self._cpp)

    def _global_replica_id(self, local_replica_id):
        return self._cpp.global_replica_id(local_replica_id)

    def _reduce_to_host(self, op, values):
        return self._cpp.all_reduce(op, values)[0].to("/CPU:0")

    def _count_rows(self, values, axis):
        counts = [_xdev.cast(int(v.shape[axis]), "int64") for v in values]
        return int(self._reduce_to_host(ReduceOp.SUM, counts).numpy())

    def split_batch(self, batch):
        """This worker's share of ``batch`` (the same global batch on every worker), one
        shard per local replica on its device: global replica g gets the rows
        MirroredStrategy would give replica g of ``num_replicas_in_sync``."""
        return super().split_batch(batch)

    def all_reduce(self, reduce_op, value, name=None):
        """SUM, MEAN, MAX or MIN over every replica of every worker of one value per local
        replica (PerReplica, or one value for all); the result on every local replica
        device (PerReplica). ``name`` names the tensor in errors and the placement log."""
        return PerReplica(self._cpp.all_reduce(_reduce_op(reduce_op), self._unwrap(value),
                                               name or ""))

    def broadcast(self, value, root_task=0, name=None):
        """Task ``root_task``'s ``value`` on every local replica device (PerReplica); the
        other workers pass a value of the same shape and dtype."""
        return PerReplica(self._cpp.broadcast(convert_to_tensor(value), int(root_task),
                                              name or ""))

    def all_gather(self, value, name=None):
        """Every replica's value concatenated along axis 0 in global replica order, on
        every local replica device (PerReplica)."""
        return PerReplica(self._cpp.all_gather(self._unwrap(value), name or ""))

    def reduce_scatter(self, reduce_op, value, name=None):
        """all_reduce, then global replica g keeps rows [g·n/R, (g+1)·n/R) of the result
        (n rows along axis 0 must divide by R = ``num_replicas_in_sync``)."""
        return PerReplica(self._cpp.reduce_scatter(_reduce_op(reduce_op), self._unwrap(value),
                                                   name or ""))

    def gather(self, value, axis=0):
        """Every replica's value concatenated along axis 0, on /CPU:0 (``strategy.gather``)."""
        if axis != 0:
            raise _xdev.UnimplementedError(
                f"MultiWorkerMirroredStrategy.gather: along axis 0 only, not axis {axis}")
        return self._cpp.all_gather(self._unwrap(value), "")[0].to("/CPU:0")

    def barrier(self):
        """Returns when every worker has called it."""
        self._cpp.barrier()

    def save_checkpoint(self, variables, path):
        """Writes a safetensors file of ``variables`` (a dict of name to MirroredVariable,
        replica 0's values) on task 0 only, then waits for every worker."""
        items = []
        for name, variable in variables.items():
            if not isinstance(variable, MirroredVariable):
                raise TypeError(f"save_checkpoint: {name!r} is a {type(variable).__name__}, "
                                "not a MirroredVariable (create it under strategy.scope())")
            items.append((str(name), variable._mirrored))
        self._cpp.save_checkpoint(items, str(path))


__all__ = [
    "ClusterResolver", "ClusterSpec", "MirroredStrategy", "MirroredVariable",
    "MultiWorkerMirroredStrategy", "PerReplica", "ReduceOp", "ReplicaContext",
    "get_strategy", "has_strategy", "get_replica_context", "in_cross_replica_context",
]
