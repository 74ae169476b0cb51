"""The type stubs that ship with the package describe the extension as built."""

import pathlib
import subprocess
import sys

import pytest

import xdev


def test_the_shipped_stub_is_what_stubgen_makes_of_the_extension(tmp_path):
    pytest.importorskip("nanobind.stubgen", reason="nanobind (a build requirement) is not installed")
    out = tmp_path / "_xdev.pyi"
    subprocess.run([sys.executable, "-m", "nanobind.stubgen", "-q", "-m", "xdev._xdev", "-o",
                    str(out)], check=True, cwd=tmp_path)
    shipped = pathlib.Path(xdev.__file__).parent / "_xdev.pyi"
    assert out.read_text() == shipped.read_text(), (
        "python/xdev/_xdev.pyi is stale: regenerate it with "
        "`python -m nanobind.stubgen -m xdev._xdev -o python/xdev/_xdev.pyi` (after pip install .)")
