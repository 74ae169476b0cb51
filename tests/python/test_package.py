"""The installed package: importable outside the source tree, plugins inside it."""

import os
import pathlib

import xdev
from conftest import run_python


def test_imports_outside_the_source_tree_and_finds_its_cpu_plugin():
    out = run_python("""
        import xdev
        print(xdev.config.list_physical_devices())
        print(xdev.__version__)
        for p in xdev.experimental.list_plugins():
            print(p.name, p.loaded, p.file)
    """).stdout.splitlines()
    assert out[0] == "[PhysicalDevice(name='/physical_device:CPU:0', device_type='CPU')]"
    assert out[1] == xdev.__version__
    name, loaded, path = out[2].split(" ")
    assert (name, loaded) == ("cpu", "True")
    package = pathlib.Path(xdev.__file__).parent
    # Found relative to libxdev inside the package, like the C++ install tree.
    assert pathlib.Path(path).parent == package / "_lib" / "xdev" / "plugins"


def test_the_package_ships_its_native_parts_and_stubs():
    package = pathlib.Path(xdev.__file__).parent
    assert (package / "_lib" / "libxdev.so").exists()
    assert (package / "_lib" / "xdev" / "xdev-plugin-probe").exists()
    assert (package / "_xdev.pyi").exists()
    assert (package / "py.typed").exists()
    assert os.path.getsize(package / "_xdev.pyi") > 1000


def test_the_version_is_the_sdk_version():
    assert xdev.__version__ == xdev._xdev.version()
    assert xdev.__version__.count(".") == 2
