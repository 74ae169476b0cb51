"""``tf.config.experimental``: memory growth, memory statistics, device details."""

from .. import _xdev


def _name(device):
    return device if isinstance(device, str) else device.name


def set_memory_growth(device, enable):
    """Start small and grow on demand (True) instead of reserving up front.

    As in TensorFlow, a CPU has no such setting (ValueError): its memory is the
    host's and always grows. (The C++ SDK's xdev::set_memory_growth accepts it.)"""
    if getattr(device, "device_type", None) == "CPU":
        raise ValueError("Cannot set memory growth on non-GPU and non-Pluggable devices "
                         f"({device.name} is a CPU)")
    _xdev.set_memory_growth(device, bool(enable))


def get_memory_growth(device):
    return _xdev.get_memory_growth(device)


def get_memory_info(device):
    """Memory of one logical device ("GPU:0", any spelling): a dict with ``current`` and
    ``peak`` bytes (as TensorFlow), and xdev's ``num_allocations``, ``total_allocations``,
    ``largest_free_block``, ``bytes_reserved``, ``limit``, ``growth``."""
    return _xdev.get_memory_info(_name(device))


def reset_memory_stats(device):
    """Sets the peak to the current value."""
    _xdev.reset_memory_stats(_name(device))


def set_per_process_memory_fraction(fraction):
    """Each pool without an explicit limit gets this fraction of its device's free memory."""
    _xdev.set_per_process_memory_fraction(float(fraction))


def get_device_details(device):
    """What the plugin reports about a physical device (model, bus id, properties)."""
    details = dict(device.properties)
    details["device_name"] = device.model
    details["platform"] = device.platform
    details["plugin"] = device.plugin
    if device.bus_id:
        details["bus_id"] = device.bus_id
    return details


def _config():
    from . import LogicalDeviceConfiguration
    return LogicalDeviceConfiguration


def __getattr__(name):
    # TensorFlow's older names for the logical-device configuration.
    if name == "VirtualDeviceConfiguration":
        return _config()
    if name in ("set_virtual_device_configuration", "set_logical_device_configuration"):
        from . import set_logical_device_configuration
        return set_logical_device_configuration
    if name in ("list_physical_devices", "list_logical_devices", "set_visible_devices",
                "get_visible_devices"):
        from .. import config
        return getattr(config, name)
    raise AttributeError(name)


__all__ = [
    "set_memory_growth", "get_memory_growth", "get_memory_info", "reset_memory_stats",
    "set_per_process_memory_fraction", "get_device_details",
]
