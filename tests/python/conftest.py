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


def _fixture_dir(variable, subdir, file):
    """Where the meson build tree has a test plugin, or None."""
    build = os.environ.get("XDEV_TEST_BUILD_DIR") or str(REPO / "build")
    for c in (os.environ.get(variable, ""), os.path.join(build, *subdir)):
        if c and os.path.exists(os.path.join(c, file)):
            return c
    return None


SIM_DIR = _fixture_dir("XDEV_TEST_SIM_PLUGIN_DIR", ("tests", "plugins", "sim"), "xdev_test_sim.so")
# A device that declares DLPack OpenCL memory and offers stream handles.
FAKECL_DIR = _fixture_dir("XDEV_TEST_FAKECL_PLUGIN_DIR", ("tests", "interop"),
                          "xdev_test_fakecl.so")
if SIM_DIR is not None:
    os.environ["XDEV_PLUGIN_PATH"] = SIM_DIR
    os.environ["XDEV_SIM_DEVICES"] = "2"
    # The sim's kernels before it ran the cpu plugin's host kernels (MatMul and Add,
    # float32 and float64; tests/plugins/sim/README.md): the placement and fallback
    # expectations of these tests (Cast, reductions and int ops on the CPU) need ops
    # the sim lacks. Inherited by run_python's interpreters and the examples' runs.
    os.environ.setdefault("XDEV_SIM_KERNELS", "MatMul,Add")
    os.environ.setdefault("XDEV_SIM_KERNEL_DTYPES", "float32,float64")
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


def run_python(code, sim=False, env=None, timeout=120, fakecl=False):
    """Runs ``code`` in a fresh interpreter (the sim GPUs loaded when ``sim``, the fakecl
    device when ``fakecl``); returns the CompletedProcess (text stdout/stderr). Fails the
    test when it exits non-zero."""
    full_env = dict(os.environ)
    full_env.pop("XDEV_PLUGIN_PATH", None)
    dirs = []
    if sim:
        if SIM_DIR is None:
            pytest.skip("the simulated accelerator is not built")
        dirs.append(SIM_DIR)
        full_env.setdefault("XDEV_SIM_DEVICES", "2")
    if fakecl:
        if FAKECL_DIR is None:
            pytest.skip("the fakecl test plugin (build/tests/interop) is not built")
        dirs.append(FAKECL_DIR)
    if dirs:
        full_env["XDEV_PLUGIN_PATH"] = ":".join(dirs)
    full_env.update(env or {})
    result = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                            text=True, env=full_env, timeout=timeout, cwd="/")
    if result.returncode != 0:
        pytest.fail(f"the subprocess failed ({result.returncode}):\n--- stdout\n{result.stdout}"
                    f"\n--- stderr\n{result.stderr}")
    return result


def run_on_logical_cpus(count, code, **kwargs):
    """``run_python(code)`` in an interpreter whose CPU is first split into ``count``
    logical CPUs (``xdev`` imported)."""
    prefix = ("import xdev\n"
              "xdev.config.set_logical_device_configuration(\n"
              "    xdev.config.list_physical_devices('CPU')[0],\n"
              f"    [xdev.config.LogicalDeviceConfiguration(memory_limit=64)] * {count})\n")
    return run_python(prefix + textwrap.dedent(code), **kwargs)


@pytest.fixture(autouse=True)
def _placement_defaults():
    """Every test starts with soft placement on and the placement log off."""
    xdev.config.set_soft_device_placement(True)
    xdev.debugging.set_log_device_placement(False)
    yield
    xdev.config.set_soft_device_placement(True)
    xdev.debugging.set_log_device_placement(False)
