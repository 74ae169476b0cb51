"""examples/python: TensorFlow's GPU guide, run on two simulated GPUs and on the CPU alone."""

import os
import subprocess
import sys

import pytest

from conftest import CPU0, GPU0, GPU1, REPO, SIM_DIR

EXAMPLES = REPO / "examples" / "python"
CONST = "Executing op _EagerConst in device "
MATMUL = "Executing op MatMul in device "
# print(tensor) as TensorFlow prints it: NumPy's text, from a line of its own.
PRODUCT = "tf.Tensor(\n[[22. 28.]\n [49. 64.]], shape=(2, 2), dtype=float32)"


def run(name, sim):
    env = dict(os.environ)
    env.pop("XDEV_PLUGIN_PATH", None)
    if sim:
        if SIM_DIR is None:
            pytest.skip("the simulated accelerator is not built")
        env.update(XDEV_PLUGIN_PATH=SIM_DIR, XDEV_SIM_DEVICES="2", XDEV_SIM_MEMORY_MB="4096")
    result = subprocess.run([sys.executable, str(EXAMPLES / name)], capture_output=True,
                            text=True, env=env, timeout=120, cwd="/")
    assert result.returncode == 0, result.stderr
    return result.stdout.splitlines(), result.stderr.splitlines()


def test_every_example_is_tested():
    tested = {name for name, _, _ in CASES} | {"01_setup.py"}
    assert tested == {p.name for p in EXAMPLES.glob("*.py")}


CASES = [
    ("02_logging_device_placement.py", [PRODUCT],
     [CONST + GPU0, CONST + GPU0, MATMUL + GPU0]),
    ("03_manual_device_placement.py", [PRODUCT],
     [CONST + CPU0, CONST + CPU0, MATMUL + GPU0]),
    ("04_visible_devices.py", ["2 Physical GPUs, 1 Logical GPU"], []),
    ("05_memory_growth.py", ["2 Physical GPUs, 2 Logical GPUs"], []),
    ("06_memory_limit.py", ["2 Physical GPUs, 2 Logical GPUs"], []),
    ("07_single_gpu_on_multi_gpu.py",
     ["_EagerConst cannot run: /job:localhost/replica:0/task:0/device:GPU:2 unknown device "
      "(soft placement is off; devices: " + ", ".join([GPU0, GPU1, CPU0]) + ")"], []),
    ("08_soft_placement.py", [PRODUCT], [MATMUL + GPU0]),
    ("09_virtual_gpus.py", ["2 Physical GPU, 3 Logical GPUs"], []),
    ("10_mirrored_strategy.py", [],
     [f"Using MirroredStrategy with devices ('{GPU0}', '{GPU1}')", MATMUL + GPU0]),
    ("11_manual_towers.py", ["tf.Tensor(\n[[ 44.  56.]\n [ 98. 128.]], shape=(2, 2), dtype=float32)"],
     [MATMUL + GPU0, MATMUL + GPU1, "Executing op AddN in device " + CPU0]),
    ("12_d2l_sequential.py", ["(2, 1)"],
     [f"Using MirroredStrategy with devices ('{GPU0}', '{GPU1}')"]),
]


@pytest.mark.parametrize("name,stdout,stderr", CASES, ids=[c[0] for c in CASES])
def test_the_guide_on_two_gpus(name, stdout, stderr):
    out, err = run(name, sim=True)
    printed = "\n".join(out)
    for text in stdout:
        assert text in printed, f"{text!r} not in {printed!r}"
    for line in stderr:
        assert line in err, f"{line!r} not in {err}"


def test_setup_counts_the_gpus():
    assert run("01_setup.py", sim=False)[0] == ["Num GPUs Available:  0"]
    assert run("01_setup.py", sim=True)[0] == ["Num GPUs Available:  2"]


def test_without_a_gpu_the_guarded_snippets_print_nothing_and_the_rest_runs_on_the_cpu():
    for name in ("04_visible_devices.py", "05_memory_growth.py", "06_memory_limit.py",
                 "09_virtual_gpus.py", "11_manual_towers.py"):
        assert run(name, sim=False)[0] == [], name
    assert run("12_d2l_sequential.py", sim=False)[0] == ["(2, 1)", f"{CPU0} {CPU0}"]
    assert run("10_mirrored_strategy.py", sim=False)[0] == []
    out, err = run("03_manual_device_placement.py", sim=False)
    assert "\n".join(out) == PRODUCT and MATMUL + CPU0 in err
