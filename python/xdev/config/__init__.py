"""Devices and their configuration (``tf.config``).

Configuration calls work only before the devices are initialized, which the
first call that needs a logical device does (creating a tensor,
``list_logical_devices``, ``get_memory_info``); afterwards they raise
:class:`xdev.errors.FailedPreconditionError` (a ``RuntimeError``) and change
nothing.
"""

from .. import _xdev
from .._xdev import LogicalDevice, PhysicalDevice
from . import experimental


class LogicalDeviceConfiguration:
    """One logical device carved out of a physical one; ``memory_limit`` in MiB."""

    def __init__(self, memory_limit=None, experimental_priority=None,
                 experimental_device_ordinal=None):
        if experimental_priority is not None or experimental_device_ordinal is not None:
            raise _xdev.UnimplementedError(
                "LogicalDeviceConfiguration: experimental_priority and "
                "experimental_device_ordinal are not supported")
        self.memory_limit = memory_limit

    def __eq__(self, other):
        return (isinstance(other, LogicalDeviceConfiguration)
                and other.memory_limit == self.memory_limit)

    def __repr__(self):
        return f"LogicalDeviceConfiguration(memory_limit={self.memory_limit})"


def _type(device_type):
    return "" if device_type is None else device_type


def list_physical_devices(device_type=None):
    """Physical devices of ``device_type`` ("GPU", "CPU", case-insensitive; None: all)."""
    return _xdev.list_physical_devices(_type(device_type))


def list_logical_devices(device_type=None):
    """Logical devices (what ops run on) of ``device_type``; initializes the devices."""
    return _xdev.list_logical_devices(_type(device_type))


def set_visible_devices(devices, device_type=None):
    """Only these physical devices (one or a list) of ``device_type`` become logical devices,
    in this order. None: the types of the devices listed; other types are not affected."""
    if isinstance(devices, PhysicalDevice):
        devices = [devices]
    _xdev.set_visible_devices(list(devices), _type(device_type))


def get_visible_devices(device_type=None):
    return _xdev.get_visible_devices(_type(device_type))


def set_logical_device_configuration(device, logical_devices):
    """One entry caps ``device``; several split it into logical devices with their own limits."""
    limits = []
    for config in logical_devices:
        if not isinstance(config, LogicalDeviceConfiguration):
            raise TypeError(f"expected LogicalDeviceConfiguration, got {config!r}")
        limits.append(None if config.memory_limit is None else int(config.memory_limit))
    _xdev.set_logical_device_configuration(device, limits)


def get_logical_device_configuration(device):
    """The configuration set for ``device``, or None."""
    limits = _xdev.get_logical_device_configuration(device)
    if not limits:
        return None
    return [LogicalDeviceConfiguration(memory_limit=limit) for limit in limits]


def set_soft_device_placement(enabled):
    """On (the default): an op that cannot run on its scope's device runs elsewhere."""
    _xdev.set_soft_device_placement(bool(enabled))


def get_soft_device_placement():
    return _xdev.get_soft_device_placement()


def set_fallback_policy(policy):
    """What an op does when its device has no kernel for it: ``"warn"`` (the default: it runs
    on another device, with one warning per op, dtypes and device) or ``"error"`` (it raises
    ``UnimplementedError``). ``XDEV_FALLBACK`` sets the policy a process starts with."""
    _xdev.set_fallback_policy(policy)


def get_fallback_policy():
    return _xdev.get_fallback_policy()


def has_kernel(device, op, dtype, output_dtype=None):
    """Whether ``device`` ("GPU:0") has a kernel for ``op`` ("Exp") on ``dtype``; without
    ``output_dtype``, the op's own output (Cast and Select: any). False means the op falls
    back to another device there."""
    return _xdev.has_kernel(device, op, dtype, output_dtype)


def list_kernels(device):
    """Every op of the op table with the (input, output) dtype pairs it is ``defined`` for and
    those ``device`` has kernels for (``available``), as dicts; ``xdev-smi --ops`` prints
    the same."""
    return _xdev.list_kernels(device)


__all__ = [
    "PhysicalDevice", "LogicalDevice", "LogicalDeviceConfiguration", "experimental",
    "list_physical_devices", "list_logical_devices", "set_visible_devices",
    "get_visible_devices", "set_logical_device_configuration",
    "get_logical_device_configuration", "set_soft_device_placement",
    "get_soft_device_placement", "set_fallback_policy", "get_fallback_policy", "has_kernel",
    "list_kernels",
]
