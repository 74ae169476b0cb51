"""The type stubs that ship with the package describe the extensions as built."""

import importlib.util
import pathlib
import subprocess
import sys

import pytest

import xdev


@pytest.mark.parametrize("module", ["_xdev", "_xdev_mpi"])
def test_the_shipped_stub_is_what_stubgen_makes_of_the_extension(tmp_path, module):
    pytest.importorskip("nanobind.stubgen", reason="nanobind (a build requirement) is not installed")
    if importlib.util.find_spec(f"xdev.{module}") is None:
        pytest.skip(f"xdev.{module} is not built (the package was built without MPI)")
    out = tmp_path / f"{module}.pyi"
    subprocess.run([sys.executable, "-m", "nanobind.stubgen", "-q", "-m", f"xdev.{module}", "-o",
                    str(out)], check=True, cwd=tmp_path)
    shipped = pathlib.Path(xdev.__file__).parent / f"{module}.pyi"
    assert out.read_text() == shipped.read_text(), (
        f"python/xdev/{module}.pyi is stale: regenerate it with `python -m nanobind.stubgen "
        f"-m xdev.{module} -o python/xdev/{module}.pyi` (after pip install .)")
