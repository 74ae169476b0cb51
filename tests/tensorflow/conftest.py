"""The TensorFlow oracle: TensorFlow and xdev imported into one process (the lane's venv,
tools/quickstart), the same calls made through both. Without TensorFlow every test here
skips and says why."""

import os
import pathlib
import re

import pytest

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")  # TensorFlow's start-up chatter

REPO = pathlib.Path(__file__).resolve().parents[2]
DIFFERENCES = REPO / "docs" / "tensorflow-differences.md"

try:
    import tensorflow  # noqa: F401
    TF_MISSING = None
except ImportError as error:
    TF_MISSING = (f"TensorFlow is not installed in this venv ({error}); tools/quickstart "
                  "test installs tensorflow-cpu into build/tf-venv, and could not this time "
                  "(see build/tf-venv-install.log)")


def pytest_collection_modifyitems(items):
    if TF_MISSING:
        for item in items:
            item.add_marker(pytest.mark.skip(reason=TF_MISSING))


def documented_differences():
    """{(subject, dtype): row} of docs/tensorflow-differences.md's table: `subject` an op
    of the op table, an edge case of test_edges.py or a snippet of examples/python; the
    dtype column a comma-separated list, or "—" for none."""
    rows = {}
    in_table = False
    for line in DIFFERENCES.read_text(encoding="utf-8").splitlines():
        if line.startswith("| subject |"):
            in_table = True
            continue
        if not in_table:
            continue
        if not line.startswith("|"):
            break
        cells = [c.strip() for c in line.strip("|").split("|")]
        if set(cells[0]) <= {"-", " "}:
            continue
        subject = cells[0].strip("`")
        for dtype in re.split(r",\s*", cells[1]):
            rows[(subject, dtype.strip("`"))] = cells
    return rows


RESULTS = {"compared": 0, "same": 0, "documented": 0}


def pytest_terminal_summary(terminalreporter):
    if RESULTS["compared"]:
        terminalreporter.write_line(
            f"tensorflow oracle: {RESULTS['compared']} cases compared, {RESULTS['same']} the "
            f"same, {RESULTS['documented']} documented differences "
            f"(docs/tensorflow-differences.md)")
