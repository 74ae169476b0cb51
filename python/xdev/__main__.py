"""``python -m xdev``: the device mapping and the doctor report.

The report is xdev-smi's, the same program the C++ build installs: the package
carries it in ``xdev/_lib/xdev/`` beside the plugins, and it loads the
package's own libxdev, so it sees the plugins this package sees.

    python -m xdev                  the device mapping, then `doctor` (why a
                                    plugin has no device, which library each
                                    plugin file needs and where it was found)
    python -m xdev --json           any xdev-smi arguments are passed through
    python -m xdev doctor --expect GPU
    xdev-smi ...                    the same program, as a command (pip makes it)
"""

import os
import subprocess
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))


def smi_path():
    """The xdev-smi program of this package (a FileNotFoundError names the path looked at)."""
    path = os.path.join(_HERE, "_lib", "xdev", "xdev-smi")
    if not os.access(path, os.X_OK):
        raise FileNotFoundError(
            f"xdev-smi is not in this xdev package: {path} is missing or not executable "
            "(reinstall the package: pip install --force-reinstall .)")
    return path


def _run(args):
    # Flushed first: the child writes to the same stdout.
    sys.stdout.flush()
    return subprocess.call([smi_path(), *args])


def main(argv=None):
    """Runs xdev-smi with ``argv``; with no arguments, the mapping and then the doctor."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args:
        return _run(args)
    status = _run([])
    print(flush=True)
    return _run(["doctor"]) or status


def smi():
    """The ``xdev-smi`` command of the package: xdev-smi with the command line's arguments."""
    try:
        path = smi_path()
    except FileNotFoundError as e:
        print(f"xdev-smi: {e}", file=sys.stderr)
        return 2
    sys.stdout.flush()
    os.execv(path, [path, *sys.argv[1:]])
    return 2  # not reached


if __name__ == "__main__":
    sys.exit(main())
