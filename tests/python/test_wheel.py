"""The repaired wheel installs and runs on a Debian 12 with nothing of xdev's build.

tools/quickstart's Python lane makes the wheel (``pip wheel``, then ``auditwheel repair``:
oneTBB, CLBlast and the OpenCL loader vendored into ``xdev.libs``), installs it into
the venv these tests run in, and sets ``XDEV_TEST_WHEEL`` (the repaired wheel),
``XDEV_TEST_WHEEL_DEPS`` (a folder with the wheels it depends on, NumPy and
scipy-openblas32, downloaded beside it) and ``XDEV_TEST_DEBIAN_ROOT`` (a minimal Debian 12
made by ``debootstrap --variant=minbase`` with python3 and python3-venv only: no compiler,
no -dev package, no OpenBLAS, oneTBB or OpenCL). This test installs the wheel into a
fresh venv inside that root, offline, and runs the guide's walkthrough there.
"""

import os
import pathlib
import shlex
import shutil
import subprocess
import textwrap

import pytest

from conftest import REPO

WHEEL = os.environ.get("XDEV_TEST_WHEEL", "")
DEPS = os.environ.get("XDEV_TEST_WHEEL_DEPS", "")
ROOT = os.environ.get("XDEV_TEST_DEBIAN_ROOT", "")


def _why_not():
    if not WHEEL or not ROOT:
        return ("XDEV_TEST_WHEEL and XDEV_TEST_DEBIAN_ROOT are not set (tools/quickstart test "
                "makes the repaired wheel and the debootstrap root and sets them)")
    if os.geteuid() != 0:
        return "chroot needs root"
    if shutil.which("unshare") is None:
        return "unshare (util-linux) is not installed"
    return None


pytestmark = pytest.mark.skipif(_why_not() is not None, reason=_why_not() or "")


def run_in_root(script, tmp_name):
    """Runs ``script`` (sh) in the Debian root, in a private mount namespace with its own
    /proc (nothing stays mounted afterwards), with a clean environment."""
    root = pathlib.Path(ROOT)
    work = root / "work" / tmp_name
    if work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True)
    shutil.copy(WHEEL, work)
    for dep in pathlib.Path(DEPS).glob("*.whl"):
        shutil.copy(dep, work)
    shutil.copytree(REPO / "examples" / "python", work / "examples")
    inner = f"/work/{tmp_name}"
    command = (f"mount -t proc proc {root}/proc && "
               f"exec chroot {root} /usr/bin/env -i PATH=/usr/bin:/bin HOME=/root "
               f"/bin/sh -ec {shlex.quote(textwrap.dedent(script).replace('@W', inner))}")
    try:
        return subprocess.run(["unshare", "--mount", "--fork", "--", "/bin/sh", "-c", command],
                              capture_output=True, text=True, timeout=300)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def test_the_root_has_none_of_the_build_dependencies():
    root = pathlib.Path(ROOT)
    for pattern in ("usr/bin/g++*", "usr/bin/gcc*", "usr/lib/x86_64-linux-gnu/libtbb*",
                    "usr/lib/x86_64-linux-gnu/libopenblas*", "usr/lib/x86_64-linux-gnu/libOpenCL*",
                    "usr/include/python3*", "usr/local/cuda*"):
        assert not list(root.glob(pattern)), f"{root}: {pattern} exists"


def test_the_repaired_wheel_runs_the_walkthrough_in_a_bare_debian():
    result = run_in_root("""
        python3 -m venv @W/venv
        @W/venv/bin/pip install -q --no-index --find-links @W @W/xdev-*.whl
        cd /
        @W/venv/bin/python @W/examples/02_logging_device_placement.py
        @W/venv/bin/python @W/examples/11_manual_towers.py
        XDEV_LOG_LEVEL=info @W/venv/bin/python -c '
        import numpy as np, xdev
        a = np.random.default_rng(0).standard_normal((256, 256)).astype(np.float32)
        c = xdev.matmul(a, a).numpy()
        print("matmul max error", float(np.abs(c - a @ a).max()))
        for p in xdev.experimental.list_plugins():
            print("plugin", p.name, p.loaded, p.device_count)
        '
        @W/venv/bin/python -m xdev doctor
    """, "wheel")
    assert result.returncode == 0, f"--- stdout\n{result.stdout}\n--- stderr\n{result.stderr}"
    out = result.stdout
    assert "tf.Tensor(\n[[22. 28.]\n [49. 64.]], shape=(2, 2), dtype=float32)" in out
    error = float(out.split("matmul max error ")[1].split()[0])
    assert error < 1e-3
    # OpenBLAS from PyPI (the root has none), through the prefixed symbols.
    assert "libscipy_openblas.so (PyPI scipy-openblas32)" in result.stderr
    assert "plugin cpu True 1" in out
    # The vendored libraries, not a system's, as the doctor shows them.
    assert "xdev.libs/libtbb-" in out
