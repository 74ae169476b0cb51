"""Shared set-up of the Python tests.

The tests use the installed package (``pip install .``, as tools/quickstart does in
its venv), never the sources. When the meson build tree has the simulated
accelerator (a test plugin: type GPU, memory the host cannot read), this process
loads it, so two "GPUs" sit beside the CPU; tests that need them skip otherwise.
Scenarios that configure devices run in a fresh interpreter (``run_python``):
configuration is possible only before the devices are initialized.
"""

import os
import pathlib
import subprocess
import sys
import textwrap

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]


def _sim_dir():
    candidates = [os.environ.get("XDEV_TEST_SIM_PLUGIN_DIR", "")]
    build = os.environ.get("XDEV_TEST_BUILD_DIR") or str(REPO / "build")
    candidates.append(os.path.join(build, "tests", "plugins", "sim"))
    for c in candidates:
        if c and os.path.exists(os.path.join(c, "xdev_test_sim.so")):
            return c
    return None


SIM_DIR = _sim_dir()
if SIM_DIR is not None:
    os.environ["XDEV_PLUGIN_PATH"] = SIM_DIR
    os.environ["XDEV_SIM_DEVICES"] = "2"
else:
    os.environ.pop("XDEV_PLUGIN_PATH", None)

import xdev  # noqa: E402 -- after the environment is set

if "site-packages" not in xdev.__file__ and "dist-packages" not in xdev.__file__:
    raise RuntimeError(f"the tests must use the installed xdev, not {xdev.__file__}")

needs_sim = pytest.mark.skipif(
    SIM_DIR is None,
    reason="the simulated accelerator (build/tests/plugins/sim/xdev_test_sim.so) is not built; "
           "run tools/quickstart test, or set XDEV_TEST_SIM_PLUGIN_DIR")

CPU0 = "/job:localhost/replica:0/task:0/device:CPU:0"
CPU1 = "/job:localhost/replica:0/task:0/device:CPU:1"
GPU0 = "/job:localhost/replica:0/task:0/device:GPU:0"
GPU1 = "/job:localhost/replica:0/task:0/device:GPU:1"


def run_python(code, sim=False, env=None, timeout=120):
    """Runs ``code`` in a fresh interpreter (the sim GPUs loaded when ``sim``); returns the
    CompletedProcess (text stdout/stderr). Fails the test when it exits non-zero."""
    full_env = dict(os.environ)
    full_env.pop("XDEV_PLUGIN_PATH", None)
    if sim:
        if SIM_DIR is None:
            pytest.skip("the simulated accelerator is not built")
        full_env["XDEV_PLUGIN_PATH"] = SIM_DIR
        full_env.setdefault("XDEV_SIM_DEVICES", "2")
    full_env.update(env or {})
    result = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                            text=True, env=full_env, timeout=timeout, cwd="/")
    if result.returncode != 0:
        pytest.fail(f"the subprocess failed ({result.returncode}):\n--- stdout\n{result.stdout}"
                    f"\n--- stderr\n{result.stderr}")
    return result


@pytest.fixture(autouse=True)
def _placement_defaults():
    """Every test starts with soft placement on and the placement log off."""
    xdev.config.set_soft_device_placement(True)
    xdev.debugging.set_log_device_placement(False)
    yield
    xdev.config.set_soft_device_placement(True)
    xdev.debugging.set_log_device_placement(False)
