"""The installed package: importable outside the source tree, plugins inside it."""

import os
import pathlib
import shutil
import subprocess
import sys

import pytest

import xdev
from conftest import REPO, run_python

PACKAGE = pathlib.Path(xdev.__file__).parent
PLUGINS = PACKAGE / "_lib" / "xdev" / "plugins"
# The C++ build of the same checkout on the same machine: a plugin it built had
# its build dependencies found here, so the package must carry it too.
BUILD = pathlib.Path(os.environ.get("XDEV_TEST_BUILD_DIR") or REPO / "build")
BUILT_CUDA = (BUILD / "plugins" / "cuda" / "xdev_plugin_cuda.so").exists()
needs_cuda_build = pytest.mark.skipif(
    not BUILT_CUDA,
    reason=f"no cuda plugin in the C++ build ({BUILD}/plugins/cuda): the CUDA Toolkit was "
           "not found on this machine, so the package has none either")


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


@pytest.mark.parametrize("plugin", ["cpu", "cuda", "opencl"])
def test_the_package_carries_every_plugin_the_build_found(plugin):
    built = BUILD / "plugins" / plugin / f"xdev_plugin_{plugin}.so"
    if not built.exists():
        pytest.skip(f"the C++ build has no {plugin} plugin ({built}): its build dependencies "
                    "were not found on this machine")
    assert (PLUGINS / f"xdev_plugin_{plugin}.so").exists()
    if plugin == "cuda":
        # The shim loads its implementation from cuda_impl/ beside it.
        assert (PLUGINS / "cuda_impl" / "xdev_cuda_impl.so").exists()


@needs_cuda_build
def test_the_cuda_plugin_loads_and_says_why_it_has_no_device():
    out = run_python("""
        import xdev
        print(xdev.config.list_physical_devices("CPU"))
        for p in xdev.experimental.list_plugins():
            if p.name == "cuda":
                print(p.loaded, p.device_count, p.file)
                print(p.status)
    """).stdout.splitlines()
    assert out[0] == "[PhysicalDevice(name='/physical_device:CPU:0', device_type='CPU')]"
    loaded, count, path = out[1].split(" ")
    assert loaded == "True"
    assert pathlib.Path(path) == PLUGINS / "xdev_plugin_cuda.so"
    if int(count) == 0:
        # The shim's reason: no driver, no device, a driver too old, ...
        assert out[2].startswith(("CUDA driver", "no CUDA-capable device", "CUDA unavailable",
                                  "CUDA runtime unavailable")), out[2]
    else:
        assert len(xdev.config.list_physical_devices("GPU")) >= int(count)


def _driver_present():
    import ctypes
    try:
        ctypes.CDLL("libcuda.so.1")
    except OSError:
        return False
    return True


@needs_cuda_build
def test_listing_devices_maps_no_cuda_library_without_a_driver():
    if _driver_present():
        pytest.skip("an NVIDIA driver (libcuda.so.1) is installed: the cuda plugin loads CUDA")
    maps = run_python("""
        import xdev
        xdev.config.list_physical_devices()
        xdev.config.list_logical_devices()
        print(open("/proc/self/maps").read())
    """).stdout
    mapped = {line.split()[-1] for line in maps.splitlines() if "/" in line}
    cuda = sorted(p for p in mapped
                  if any(n in os.path.basename(p) for n in
                         ("libcudart", "libcublas", "libnccl", "libcuda.", "xdev_cuda_impl")))
    assert cuda == []
    assert str(PLUGINS / "xdev_plugin_cuda.so") in mapped  # the shim itself was loaded


def _runpath(file):
    readelf = shutil.which("readelf")
    if readelf is None:
        pytest.skip("readelf (binutils) is not installed")
    out = subprocess.run([readelf, "-d", str(file)], capture_output=True, text=True,
                         check=True).stdout
    for line in out.splitlines():
        if "(RUNPATH)" in line or "(RPATH)" in line:
            return line.split("[", 1)[1].rstrip("]").split(":")
    return []


@needs_cuda_build
def test_the_cuda_implementation_looks_in_nvidias_wheels_first(tmp_path):
    """pip install "xdev[cuda]": libcudart from nvidia-cuda-runtime (nvidia/cu13/lib in
    site-packages) is the one loaded, before the toolkit's. Proven with a copy of the
    package's implementation in a tree laid out like site-packages, and a libcudart in
    that tree's nvidia/cu13/lib: loading the copy maps that libcudart."""
    impl = PLUGINS / "cuda_impl" / "xdev_cuda_impl.so"
    site = PACKAGE.parent
    wheel_dirs = [d.replace("$ORIGIN", str(impl.parent)) for d in _runpath(impl)]
    wheel_dirs = [os.path.normpath(d) for d in wheel_dirs]
    cu = [d for d in wheel_dirs if os.path.dirname(d).startswith(str(site / "nvidia" / "cu"))]
    assert cu, f"no nvidia/cuNN/lib in {impl}'s RUNPATH: {wheel_dirs}"
    assert str(site / "nvidia" / "nccl" / "lib") in wheel_dirs
    # The wheels' folders come before the toolkit's.
    assert wheel_dirs.index(cu[0]) == 0
    # Where would the loader find libcudart without the wheels? It must exist to copy.
    probe = run_python(f"""
        import ctypes
        ctypes.CDLL({str(impl)!r})
        for line in open("/proc/self/maps"):
            if "libcudart.so" in line:
                print(line.split()[-1])
                break
    """).stdout.split()
    if not probe:
        pytest.skip("no libcudart to copy (the implementation did not load one)")
    fake_site = tmp_path / "site-packages"
    fake_impl = fake_site / impl.relative_to(site)
    fake_impl.parent.mkdir(parents=True)
    shutil.copy(impl, fake_impl)
    fake_cu = fake_site / os.path.relpath(cu[0], site)
    fake_cu.mkdir(parents=True)
    soname = "libcudart.so." + fake_cu.parent.name[len("cu"):]  # nvidia/cu13 -> .so.13
    shutil.copy(probe[0], fake_cu / soname)
    mapped = run_python(f"""
        import ctypes
        ctypes.CDLL({str(fake_impl)!r})
        print("\\n".join(line.split()[-1] for line in open("/proc/self/maps")
                        if "libcudart.so" in line))
    """).stdout.split()
    assert mapped and set(mapped) == {str(fake_cu / soname)}, mapped


def test_python_dash_m_xdev_prints_the_mapping_and_the_doctor():
    result = subprocess.run([sys.executable, "-m", "xdev"], capture_output=True, text=True,
                            cwd="/", timeout=120, env={k: v for k, v in os.environ.items()
                                                       if k != "XDEV_PLUGIN_PATH"})
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "/job:localhost/replica:0/task:0/device:CPU:0" in out
    assert f"xdev {xdev.__version__} doctor" in out
    # Every plugin file of the package, with what the loader found for it.
    assert str(PLUGINS / "xdev_plugin_cpu.so") in out
    if BUILT_CUDA:
        assert "CUDA driver not found" in out or "loaded: plugin \"cuda\"" in out
        assert "libcudart.so.13: found (" in out


def test_pip_made_the_xdev_smi_command():
    smi = pathlib.Path(sys.executable).parent / "xdev-smi"
    assert smi.exists(), f"{smi}: pip did not make the package's xdev-smi command"
    result = subprocess.run([str(smi), "--json"], capture_output=True, text=True, cwd="/",
                            timeout=120)
    assert result.returncode == 0, result.stderr
    import json
    assert json.loads(result.stdout)["version"] == xdev.__version__


def test_python_dash_m_xdev_passes_arguments_to_xdev_smi():
    import json
    result = subprocess.run([sys.executable, "-m", "xdev", "--json"], capture_output=True,
                            text=True, cwd="/", timeout=120)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["version"] == xdev.__version__
    assert any(d["name"].endswith("CPU:0") for d in report["devices"])
