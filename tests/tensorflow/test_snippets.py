"""examples/python under TensorFlow and under xdev: the same program (`import xdev as tf`;
for TensorFlow, `xdev` is made an alias of `tensorflow` before it runs), on this machine's
CPU. What it prints must be the same, and so must the device of every op both placement
logs name. TensorFlow 2.21 logs placement as `node: (Op): device` on stdout, xdev as the
guide shows it, `Executing op Op in device device` on stderr; both are read."""

import os
import pathlib
import re
import subprocess
import sys

import pytest

from conftest import REPO, RESULTS, documented_differences

EXAMPLES = sorted((REPO / "examples" / "python").glob("*.py"))
TF_LOG = re.compile(r"^[^:\s]+: \((\w+)\): (/job:\S+)$")
XDEV_LOG = re.compile(r"^Executing op (\w+) in device (\S+)$")
RUNNER = ("import runpy, sys\n"
          "if sys.argv[1] == 'tensorflow':\n"
          "    import tensorflow\n"
          "    sys.modules['xdev'] = tensorflow\n"
          "runpy.run_path(sys.argv[2], run_name='__main__')\n")


def run(module, path):
    env = dict(os.environ)
    for name in ("XDEV_PLUGIN_PATH", "XDEV_SIM_DEVICES"):
        env.pop(name, None)
    env["TF_CPP_MIN_LOG_LEVEL"] = "2"
    result = subprocess.run([sys.executable, "-c", RUNNER, module, str(path)],
                            capture_output=True, text=True, env=env, timeout=300, cwd="/")
    printed, placed = [], {}
    for line in result.stdout.splitlines() + result.stderr.splitlines():
        match = TF_LOG.match(line) or XDEV_LOG.match(line)
        if match:
            placed.setdefault(match.group(1), set()).add(match.group(2))
    printed = [line for line in result.stdout.splitlines() if not TF_LOG.match(line)]
    error = result.stderr.strip().splitlines()[-1] if result.returncode else None
    return printed, placed, error


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_snippet_agrees_with_tensorflow(path):
    tf_out, tf_placed, tf_error = run("tensorflow", path)
    xdev_out, xdev_placed, xdev_error = run("xdev", path)
    RESULTS["compared"] += 1
    assert xdev_error is None, f"{path.name} fails under xdev: {xdev_error}"
    differences = []
    if tf_error:
        differences.append(f"fails under TensorFlow: {tf_error}")
    elif tf_out != xdev_out:
        differences.append(f"prints\n{tf_out}\nunder TensorFlow, and\n{xdev_out}\nunder xdev")
    for op in sorted(set(tf_placed) & set(xdev_placed)):
        if tf_placed[op] != xdev_placed[op]:
            differences.append(f"{op} runs on {sorted(tf_placed[op])} under TensorFlow, "
                               f"on {sorted(xdev_placed[op])} under xdev")
    key = (path.name, "—")
    documented = documented_differences()
    if not differences:
        RESULTS["same"] += 1
        assert key not in documented, f"{path.name}: documented, but no longer differs"
        return
    assert key in documented, (f"{path.name} differs from TensorFlow and "
                               f"docs/tensorflow-differences.md does not say why: "
                               + "; ".join(differences))
    RESULTS["documented"] += 1
