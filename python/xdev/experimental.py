"""xdev's own additions: strict placement, the plugins the runtime found, and
``broadcast_to_copy`` (TF's BroadcastTo as a dense copy; ``xdev.broadcast_to`` is a view)."""

from ._xdev import (
    StrictPlacement,
    broadcast_to_copy,
    devices_initialized,
    list_plugins,
    plugin_search_path,
)


def strict_placement(strict=True):
    """``with xdev.experimental.strict_placement():`` an op whose inputs live on another
    device fails instead of copying them (per thread, nestable)."""
    return StrictPlacement(strict)


__all__ = ["broadcast_to_copy", "strict_placement", "list_plugins", "plugin_search_path",
           "devices_initialized"]
