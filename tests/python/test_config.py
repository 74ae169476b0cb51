"""xdev.config: listing devices, configuring them before initialization, memory info."""

import re

import pytest

import xdev
from conftest import CPU0, CPU1, GPU0, GPU1, REPO, needs_sim, run_python


def test_lists_physical_and_logical_devices():
    cpus = xdev.config.list_physical_devices("CPU")
    assert [d.name for d in cpus] == ["/physical_device:CPU:0"]
    assert cpus[0].device_type == "CPU"
    assert repr(cpus[0]) == "PhysicalDevice(name='/physical_device:CPU:0', device_type='CPU')"
    assert cpus[0].platform == "host" and cpus[0].plugin == "cpu"
    assert cpus[0].memory_limit > 0
    details = xdev.config.experimental.get_device_details(cpus[0])
    assert details["plugin"] == "cpu" and details["device_name"]
    logical = xdev.config.list_logical_devices("cpu")  # case-insensitive
    assert [d.name for d in logical] == [CPU0]
    assert repr(logical[0]) == f"LogicalDevice(name='{CPU0}', device_type='CPU')"
    assert xdev.config.list_physical_devices("TPU") == []


@needs_sim
def test_gpus_come_first():
    assert [d.name for d in xdev.config.list_physical_devices()][:2] == [
        "/physical_device:GPU:0", "/physical_device:GPU:1"]
    assert [d.name for d in xdev.config.list_logical_devices()] == [GPU0, GPU1, CPU0]
    assert xdev.num_gpus() == 2
    assert xdev.try_gpu(1).name == GPU1
    assert xdev.try_gpu(7).name == CPU0
    assert len(xdev.try_all_gpus()) == 2


def test_configuration_after_initialization_fails_with_the_cpp_message():
    xdev.constant(1.0)  # initializes the devices
    cpu = xdev.config.list_physical_devices("CPU")[0]
    with pytest.raises(RuntimeError, match="Virtual devices cannot be modified after being initialized"):
        xdev.config.set_logical_device_configuration(
            cpu, [xdev.config.LogicalDeviceConfiguration(memory_limit=64)])
    with pytest.raises(xdev.errors.FailedPreconditionError,
                       match="Virtual devices cannot be modified after being initialized"):
        xdev.config.set_logical_device_configuration(
            cpu, [xdev.config.LogicalDeviceConfiguration(),
                  xdev.config.LogicalDeviceConfiguration()])


def test_setting_again_what_is_in_effect_after_initialization_is_no_error():
    # TensorFlow returns early when nothing would change.
    xdev.constant(1.0)
    cpus = xdev.config.list_physical_devices("CPU")
    xdev.config.set_visible_devices(cpus, "CPU")
    xdev.config.set_visible_devices(xdev.config.get_visible_devices("GPU"), "GPU")
    xdev.config.set_logical_device_configuration(
        cpus[0], xdev.config.get_logical_device_configuration(cpus[0]) or [])
    assert [d.name for d in xdev.config.get_visible_devices("CPU")] == [d.name for d in cpus]


@needs_sim
def test_a_visible_devices_change_after_initialization_is_refused():
    xdev.constant(1.0)
    with pytest.raises(RuntimeError, match="Visible devices cannot be modified after being initialized"):
        xdev.config.set_visible_devices([], "GPU")
    assert len(xdev.config.list_logical_devices("GPU")) == 2


def test_memory_growth_on_a_cpu_is_a_value_error_as_in_tensorflow():
    cpu = xdev.config.list_physical_devices("CPU")[0]
    with pytest.raises(ValueError, match="Cannot set memory growth on non-GPU"):
        xdev.config.experimental.set_memory_growth(cpu, True)


def test_memory_info_and_reset():
    with xdev.device("/CPU:0"):
        keep = xdev.zeros([1024, 256])  # 1 MiB
    info = xdev.config.experimental.get_memory_info("CPU:0")
    assert info["current"] >= 1024 * 256 * 4
    assert info["peak"] >= info["current"]
    assert set(info) >= {"current", "peak", "limit", "bytes_reserved", "num_allocations"}
    del keep
    xdev.config.experimental.reset_memory_stats("/device:CPU:0")
    after = xdev.config.experimental.get_memory_info(xdev.config.list_logical_devices("CPU")[0])
    assert after["peak"] == after["current"]


def test_logical_cpus_without_memory_limits_as_the_tensorflow_guide_splits_them():
    # TensorFlow's guide tests multi-device code this way; the CPU's memory is shared.
    out = run_python("""
        import xdev as tf
        cpus = tf.config.list_physical_devices("CPU")
        tf.config.set_logical_device_configuration(
            cpus[0], [tf.config.LogicalDeviceConfiguration(),
                      tf.config.LogicalDeviceConfiguration()])
        logical = tf.config.list_logical_devices("CPU")
        print(len(cpus), "Physical CPU,", len(logical), "Logical CPUs")
        with tf.device(logical[1].name):
            t = tf.add_n([tf.constant([1.0]), tf.constant([2.0])])
        print(t.device, t.numpy())
    """).stdout.splitlines()
    assert out == ["1 Physical CPU, 2 Logical CPUs", f"{CPU1} [3.]"]


def test_two_logical_cpus_from_one():
    out = run_python("""
        import xdev
        cpus = xdev.config.list_physical_devices("CPU")
        xdev.config.set_logical_device_configuration(
            cpus[0], [xdev.config.LogicalDeviceConfiguration(memory_limit=64),
                      xdev.config.LogicalDeviceConfiguration(memory_limit=64)])
        print(xdev.config.get_logical_device_configuration(cpus[0]))
        logical = xdev.config.list_logical_devices("CPU")
        print(len(cpus), "Physical CPU,", len(logical), "Logical CPUs")
        with xdev.device(logical[1]):
            t = xdev.constant([1.0])
        print(t.device)
        print(xdev.config.experimental.get_memory_info("CPU:1")["limit"])
    """).stdout.splitlines()
    assert out == [
        "[LogicalDeviceConfiguration(memory_limit=64), LogicalDeviceConfiguration(memory_limit=64)]",
        "1 Physical CPU, 2 Logical CPUs",
        CPU1,
        str(64 << 20),
    ]


def test_visible_devices_and_memory_growth_before_initialization():
    out = run_python("""
        import xdev
        gpus = xdev.config.list_physical_devices("GPU")
        xdev.config.set_visible_devices(gpus[1], "GPU")
        xdev.config.experimental.set_memory_growth(gpus[1], True)
        print(xdev.config.experimental.get_memory_growth(gpus[1]))
        print([d.name for d in xdev.config.get_visible_devices("GPU")])
        print([d.name for d in xdev.config.list_logical_devices("GPU")])
        print(xdev.config.experimental.get_memory_info("GPU:0")["growth"])
    """, sim=True).stdout.splitlines()
    assert out == ["True", "['/physical_device:GPU:1']", f"['{GPU0}']", "True"]


def test_logical_device_configuration_rejects_what_it_does_not_do():
    with pytest.raises(xdev.errors.UnimplementedError):
        xdev.config.LogicalDeviceConfiguration(memory_limit=1, experimental_priority=1)
    assert xdev.config.experimental.VirtualDeviceConfiguration is xdev.config.LogicalDeviceConfiguration


def test_plugins_and_search_path():
    plugins = {p.name: p for p in xdev.experimental.list_plugins()}
    assert plugins["cpu"].loaded
    # The cpu plugin is built against the ABI header of this checkout.
    header = (REPO / "sdk" / "include" / "xdev" / "plugin.h").read_text()
    version = [re.search(rf"#define XDEV_ABI_VERSION_{part} (\d+)", header).group(1)
               for part in ("MAJOR", "MINOR")]
    assert plugins["cpu"].abi_version == ".".join(version)
    assert any(path.endswith("xdev/_lib/xdev/plugins") for path in xdev.experimental.plugin_search_path())
