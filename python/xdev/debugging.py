"""Seeing where ops run (``tf.debugging``).

``set_log_device_placement(True)`` prints ``Executing op MatMul in device
/job:localhost/replica:0/task:0/device:GPU:0`` for every op on stderr (the C++
SDK's lines), as does ``XDEV_LOG_DEVICE_PLACEMENT=1``.
"""

from ._xdev import (
    clear_recent_placements,
    get_log_device_placement,
    placement_counters,
    recent_placements,
    reset_placement_counters,
    set_log_device_placement,
)

__all__ = [
    "set_log_device_placement", "get_log_device_placement", "placement_counters",
    "reset_placement_counters", "recent_placements", "clear_recent_placements",
]
