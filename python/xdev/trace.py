"""Tracing: a Chrome trace-event file of ops, copies, allocations, placement decisions
and collectives, for Perfetto or chrome://tracing (``XDEV_TRACE=path`` traces a whole run).

    xdev.trace.start("run.json")
    c = a @ b
    xdev.trace.stop()

    with xdev.trace.tracing("run.json"):
        c = a @ b
"""

import contextlib

from ._xdev import trace_active as active
from ._xdev import trace_start as start
from ._xdev import trace_stop as stop


@contextlib.contextmanager
def tracing(path):
    """Traces the block into ``path``; the file is complete JSON once the block ends."""
    start(str(path))
    try:
        yield
    finally:
        stop()


__all__ = ["active", "start", "stop", "tracing"]
