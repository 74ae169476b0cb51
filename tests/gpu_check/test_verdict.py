"""tools/gpu-check-verdict on canned inputs: the decisions of tools/gpu-check.

    python3 test_verdict.py PATH_TO_gpu-check-verdict
"""
import json
import os
import subprocess
import sys
import tempfile
import unittest

VERDICT = None


def run(*args):
    result = subprocess.run([sys.executable, VERDICT, *args], capture_output=True, text=True)
    return result.returncode, result.stdout + result.stderr


class Driver(unittest.TestCase):
    def test_a_new_enough_driver_passes(self):
        code, out = run("driver", "--driver", "580.65.06", "--cuda", "13.0")
        self.assertEqual(code, 0, out)
        self.assertIn("PASS", out)

    def test_an_old_driver_fails_with_the_fix(self):
        code, out = run("driver", "--driver", "535.104.05", "--cuda", "13.0")
        self.assertEqual(code, 1, out)
        self.assertIn("FAIL: NVIDIA driver 535.104.05 is too old", out)
        self.assertIn("R580 or newer", out)
        self.assertIn("cuda-compat-13-0", out)
        self.assertIn("CUDA 12 (R525+)", out)  # a toolkit this driver runs

    def test_cuda_12_on_r535_passes(self):
        self.assertEqual(run("driver", "--driver", "535.104.05", "--cuda", "12.4")[0], 0)

    def test_unreadable_versions_fail(self):
        self.assertEqual(run("driver", "--driver", "", "--cuda", "13.0")[0], 1)
        self.assertEqual(run("driver", "--driver", "580.1", "--cuda", "?")[0], 1)


class Devices(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.dir.cleanup()

    def files(self, gpus_listed, xdev_gpus, plugin_state="2 devices", loaded=True):
        smi = os.path.join(self.dir.name, "smi.txt")
        with open(smi, "w") as f:
            for i in range(gpus_listed):
                f.write(f"GPU {i}: NVIDIA H100 80GB HBM3 (UUID: GPU-{i})\n")
        devices = [{"name": f"/device:GPU:{i}", "device_type": "GPU", "plugin": "cuda",
                    "physical_device_desc": f"device: {i}"} for i in range(xdev_gpus)]
        devices.append({"name": "/device:CPU:0", "device_type": "CPU", "plugin": "cpu"})
        plugin = {"file": "/x/xdev_plugin_cuda.so", "name": "cuda",
                  "status": "loaded" if loaded else "skipped"}
        plugin["state" if loaded else "reason"] = plugin_state
        js = os.path.join(self.dir.name, "xdev.json")
        with open(js, "w") as f:
            json.dump({"devices": devices, "plugins": [plugin]}, f)
        return smi, js

    def test_the_same_gpus_pass(self):
        smi, js = self.files(2, 2)
        code, out = run("devices", "--nvidia-smi-l", smi, "--xdev-json", js)
        self.assertEqual(code, 0, out)

    def test_a_plugin_that_sees_none_fails_with_its_reason(self):
        smi, js = self.files(1, 0, "CUDA driver too old: it supports CUDA 12.2")
        code, out = run("devices", "--nvidia-smi-l", smi, "--xdev-json", js)
        self.assertEqual(code, 1, out)
        self.assertIn("nvidia-smi lists 1 GPU but xdev reports 0", out)
        self.assertIn("plugin cuda: CUDA driver too old", out)

    def test_a_skipped_plugin_fails_with_the_loaders_reason(self):
        smi, js = self.files(1, 0, "cannot be loaded: libcudart.so.13: not found", loaded=False)
        code, out = run("devices", "--nvidia-smi-l", smi, "--xdev-json", js)
        self.assertEqual(code, 1, out)
        self.assertIn("skipped: cannot be loaded", out)

    def test_no_gpu_listed_is_its_own_answer(self):
        smi, js = self.files(0, 0)
        self.assertEqual(run("devices", "--nvidia-smi-l", smi, "--xdev-json", js)[0], 3)

    def test_cuda_visible_devices(self):
        smi, js = self.files(4, 2)
        self.assertEqual(run("devices", "--nvidia-smi-l", smi, "--xdev-json", js,
                             "--visible", "1,3")[0], 0)
        code, out = run("devices", "--nvidia-smi-l", smi, "--xdev-json", js, "--visible", "")
        self.assertEqual(code, 1, out)
        self.assertIn("CUDA_VISIBLE_DEVICES is set and empty", out)

    def test_gpus_of_other_plugins_do_not_count(self):
        smi, js = self.files(1, 1)
        code, out = run("devices", "--nvidia-smi-l", smi, "--xdev-json", js, "--plugins", "rocm")
        self.assertEqual(code, 1, out)


GTEST_XML = """<?xml version="1.0" encoding="UTF-8"?>
<testsuites tests="3" failures="0" disabled="0" errors="0" name="AllTests">
  <testsuite name="CudaGpu" tests="3">
    <testcase name="MatMulMatchesTheCpu" status="run" result="completed" classname="CudaGpu" />
    <testcase name="Walkthrough" status="run" result="skipped" classname="CudaGpu">
      <skipped message="../tests/cuda/test_cuda_sdk.cpp:406&#x0A;{skip_one}"><![CDATA[...]]></skipped>
    </testcase>
    <testcase name="StreamOrderingAcrossDevices" status="run" result="skipped" classname="CudaGpu">
      <skipped message="../tests/cuda/test_cuda_sdk.cpp:353&#x0A;needs 2 GPUs, this machine has 1"/>
    </testcase>
  </testsuite>
</testsuites>
"""


class Skips(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.dir.cleanup()

    def xml(self, skip_one):
        path = os.path.join(self.dir.name, "test_cuda_sdk.xml")
        with open(path, "w") as f:
            f.write(GTEST_XML.format(skip_one=skip_one))
        return path

    def test_a_gpu_test_that_skips_on_a_gpu_machine_fails(self):
        self.xml("no CUDA device (cuda plugin: CUDA driver not found)")
        code, out = run("skips", "--gpus", "1", self.dir.name)
        self.assertEqual(code, 1, out)
        self.assertIn("CudaGpu.Walkthrough: ../tests/cuda/test_cuda_sdk.cpp:406 no CUDA device", out)
        self.assertIn("needs more GPUs than this machine has", out)  # the 2-GPU test is fine

    def test_needing_more_gpus_than_there_are_is_the_one_allowed_skip(self):
        path = self.xml("needs 2 GPUs, this machine has 1")
        code, out = run("skips", "--gpus", "1", path)
        self.assertEqual(code, 0, out)
        code, out = run("skips", "--gpus", "2", path)  # with 2 GPUs it must run
        self.assertEqual(code, 1, out)

    def test_without_a_gpu_skips_are_expected(self):
        self.xml("no CUDA device")
        self.assertEqual(run("skips", "--gpus", "0", self.dir.name)[0], 0)

    def test_junit_from_the_conformance_runner(self):
        path = os.path.join(self.dir.name, "conformance.xml")
        with open(path, "w") as f:
            f.write('<testsuites><testsuite name="cuda"><testcase classname="memory" '
                    'name="allocate"><skipped message="the plugin reports no devices"/>'
                    '</testcase></testsuite></testsuites>')
        code, out = run("skips", "--gpus", "1", path)
        self.assertEqual(code, 1, out)
        self.assertIn("memory.allocate", out)

    def conformance_skip(self, message):
        path = os.path.join(self.dir.name, "conformance.xml")
        with open(path, "w") as f:
            f.write('<testsuites><testsuite name="cuda"><testcase classname="kernel" '
                    f'name="case"><skipped message="{message}"/>'
                    '</testcase></testsuite></testsuites>')
        return run("skips", "--gpus", "1", path)

    def test_conformance_tests_that_do_not_apply_to_the_plugin_are_listed_apart(self):
        # Seen on an H200: the cuda plugin's memory is not host-addressable,
        # and it registers every dtype ops.md defines (nothing to refuse).
        for message in ("the plugin does not declare XDEV_CAP_HOST_ADDRESSABLE",
                        "every op the plugin registers accepts every dtype docs/ops.md "
                        "defines for it (nothing to refuse)"):
            code, out = self.conformance_skip(message)
            self.assertEqual(code, 0, out)
            self.assertIn("does not apply to the plugin", out)
        # The conformance runner says "devices", GoogleTest cases "GPUs".
        code, out = self.conformance_skip("needs 2 devices; the plugin reports 1")
        self.assertEqual(code, 0, out)
        self.assertIn("needs more GPUs", out)
        # A missing kernel is not "does not apply": it fails.
        code, out = self.conformance_skip("the plugin registers no kernel for op Abs")
        self.assertEqual(code, 1, out)

    def test_no_results_is_a_failure(self):
        self.assertEqual(run("skips", "--gpus", "1", os.path.join(self.dir.name, "none"))[0], 1)


def mpi_test(name, result, stdout=""):
    return json.dumps({"name": f"xdev:mpi_cuda / {name}", "result": result, "stdout": stdout})


NCCL_OUTPUT = (
    "PASS one_worker\n"
    "Using MultiWorkerMirroredStrategy with cluster_spec = {'worker': ['gpu']}, task_type = "
    "'worker', task_id = 0, num_workers = 1, local_devices = "
    "('/job:worker/replica:0/task:0/device:GPU:0',), communication = MPI (Open MPI v4.1.4), "
    "across workers via cuda device collectives\n"
    "Collective all_reduce SUM of 'sum' (2,) float32 (8 B) over 1 workers x 1 local replicas: "
    "via cuda device collectives\n")
FOUR_GPUS = ("skipped: 2 workers x 2 GPUs need 4 GPUs (NCCL takes one GPU per rank); "
             "this machine has 1\n")


class Mpi(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.dir.cleanup()

    def log(self, *tests):
        path = os.path.join(self.dir.name, "testlog.json")
        with open(path, "w") as f:
            f.write("".join(t + "\n" for t in tests))
        return path

    def one_gpu_log(self, one_worker_result="OK", one_worker_output=NCCL_OUTPUT):
        return self.log(mpi_test("mpi_cuda_collectives", "SKIP", FOUR_GPUS),
                        mpi_test("mpi_cuda_mismatch", "SKIP", FOUR_GPUS),
                        mpi_test("mpi_cuda_one_worker", one_worker_result, one_worker_output))

    def test_one_gpu_runs_the_nccl_path_with_one_rank(self):
        code, out = run("mpi", "--gpus", "1", self.one_gpu_log())
        self.assertEqual(code, 0, out)
        self.assertIn("NCCL path: Collective all_reduce SUM of 'sum'", out)
        self.assertIn("NCCL path: Using MultiWorkerMirroredStrategy", out)

    def test_with_four_gpus_the_two_worker_cases_must_run(self):
        code, out = run("mpi", "--gpus", "4", self.one_gpu_log())
        self.assertEqual(code, 1, out)
        self.assertIn("mpi_cuda_collectives skipped on a machine with 4 GPU(s)", out)

    def test_a_skipped_one_worker_case_on_a_gpu_machine_fails_with_its_reason(self):
        path = self.one_gpu_log("SKIP", "skipped: needs a GPU (the cuda plugin found none)\n")
        code, out = run("mpi", "--gpus", "1", path)
        self.assertEqual(code, 1, out)
        self.assertIn("mpi_cuda_one_worker SKIP on a machine with 1 GPU(s) (skipped: needs a GPU",
                      out)

    def test_a_build_without_nccl_is_not_run_not_passed(self):
        no_nccl = "skipped: the cuda plugin was built without NCCL (...)\n"
        path = self.log(mpi_test("mpi_cuda_collectives", "SKIP", no_nccl),
                        mpi_test("mpi_cuda_mismatch", "SKIP", no_nccl),
                        mpi_test("mpi_cuda_one_worker", "SKIP", no_nccl))
        code, out = run("mpi", "--gpus", "1", path)
        self.assertEqual(code, 3, out)
        self.assertIn("NOT RUN: the NCCL device path needs Open MPI and an NCCL", out)
        self.assertIn("not run: mpi_cuda_one_worker: skipped: the cuda plugin was built without "
                      "NCCL", out)
        self.assertNotIn("PASS", out)

    def test_the_host_path_is_not_the_nccl_path(self):
        host = NCCL_OUTPUT.replace("via cuda device collectives",
                                   "via host memory (no device collectives: ...)")
        code, out = run("mpi", "--gpus", "1", self.one_gpu_log("OK", host))
        self.assertEqual(code, 1, out)
        self.assertIn("the NCCL path was not shown to run", out)

    def test_no_mpi_cuda_tests_is_not_run_on_a_gpu_machine(self):
        # meson test --suite mpi_cuda with no such tests: "No suitable tests defined", exit 0.
        code, out = run("mpi", "--gpus", "1", self.log(mpi_test("other", "OK").replace(
            "mpi_cuda / other", "core / other")))
        self.assertEqual(code, 3, out)
        self.assertIn("the build defines no mpi_cuda tests", out)
        self.assertIn("openmpi-bin", out)
        # No log at all: what meson leaves when the suite has no tests (a machine without
        # Open MPI); not run, not a failure.
        code, out = run("mpi", "--gpus", "1", os.path.join(self.dir.name, "none"))
        self.assertEqual(code, 3, out)
        self.assertIn("the build defines no mpi_cuda tests", out)
        # A log that is not meson's JSON lines still fails.
        garbled = os.path.join(self.dir.name, "garbled.json")
        with open(garbled, "w") as f:
            f.write("not json\n")
        self.assertEqual(run("mpi", "--gpus", "1", garbled)[0], 1)

    def test_a_failed_case_fails(self):
        path = self.log(mpi_test("mpi_cuda_mismatch", "FAIL", "FAIL: ...\n"),
                        mpi_test("mpi_cuda_one_worker", "OK", NCCL_OUTPUT))
        code, out = run("mpi", "--gpus", "1", path)
        self.assertEqual(code, 1, out)
        self.assertIn("mpi_cuda_mismatch: FAIL", out)

    def test_without_a_gpu_nothing_is_required(self):
        self.assertEqual(run("mpi", "--gpus", "0", self.log())[0], 0)


if __name__ == "__main__":
    VERDICT = sys.argv.pop(1)
    unittest.main(verbosity=2)
