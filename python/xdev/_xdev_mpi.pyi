"""
xdev's MultiWorkerMirroredStrategy over MPI (use xdev.distribute, not this module)
"""

from collections.abc import Sequence

import xdev._xdev


class ClusterSpec:
    @property
    def workers(self) -> list[str]: ...

    @property
    def task_id(self) -> int: ...

    @property
    def source(self) -> str: ...

class MultiWorkerMirroredStrategy:
    def __init__(self, local_devices: Sequence[str]) -> None: ...

    @property
    def cluster(self) -> ClusterSpec: ...

    @property
    def task_id(self) -> int: ...

    @property
    def num_workers(self) -> int: ...

    @property
    def is_chief(self) -> bool: ...

    @property
    def local(self) -> xdev._xdev._MirroredStrategy: ...

    def cross_replica_sum(self) -> xdev._xdev._CrossReplicaSum:
        """
        SUM over every replica of every worker, for optimizers (xdev._xdev._CrossReplicaSum).
        """

    @property
    def num_local_replicas(self) -> int: ...

    @property
    def num_replicas_in_sync(self) -> int: ...

    def global_replica_id(self, local_replica_id: int) -> int: ...

    @property
    def device_names(self) -> list[str]: ...

    def create_variable(self, initial: xdev._xdev.Tensor) -> xdev._xdev._MirroredVariable: ...

    def split_batch(self, global_batch: xdev._xdev.Tensor) -> list[xdev._xdev.Tensor]: ...

    def all_reduce(self, op: xdev._xdev.ReduceOp, per_replica: Sequence[xdev._xdev.Tensor], name: str = '') -> list[xdev._xdev.Tensor]:
        """
        SUM/MEAN/MAX/MIN over every replica of every worker (one tensor per local replica); the result on every local replica device. `name` names the tensor in errors and logs.
        """

    def broadcast(self, value: xdev._xdev.Tensor, root_task: int = 0, name: str = '') -> list[xdev._xdev.Tensor]:
        """Task `root_task`'s `value` on every local replica device."""

    def all_gather(self, per_replica: Sequence[xdev._xdev.Tensor], name: str = '') -> list[xdev._xdev.Tensor]:
        """
        Every replica's tensor concatenated along axis 0 in global replica order.
        """

    def reduce_scatter(self, op: xdev._xdev.ReduceOp, per_replica: Sequence[xdev._xdev.Tensor], name: str = '') -> list[xdev._xdev.Tensor]:
        """
        all_reduce, then global replica g keeps its share of rows along axis 0.
        """

    def barrier(self) -> None:
        """Returns when every worker has called it."""

    def save_checkpoint(self, variables: Sequence[tuple[str, xdev._xdev._MirroredVariable]], path: str) -> None:
        """
        A safetensors file of replica 0's values, written by task 0 only; then a barrier.
        """
