"""xdev.distribute.MultiWorkerMirroredStrategy: the C++ strategy (libxdev_mpi, through
xdev._xdev_mpi) across processes started by ``mpirun -np 2 --oversubscribe`` (the
workers are tests/python/mpi_worker.py), and alone as a single worker."""

import importlib.util
import os
import pathlib
import shutil
import subprocess
import sys

import numpy as np
import pytest

import xdev
from conftest import run_on_logical_cpus, run_python

WORKER = pathlib.Path(__file__).resolve().parent / "mpi_worker.py"
MPIRUN = shutil.which("mpirun")
HAS_MPI = importlib.util.find_spec("xdev._xdev_mpi") is not None

needs_mpi_package = pytest.mark.skipif(
    not HAS_MPI, reason="this xdev package was built without MPI (meson found no Open MPI: "
                        "install openmpi-bin and libopenmpi-dev, then pip install .)")
needs_mpirun = pytest.mark.skipif(
    MPIRUN is None, reason="mpirun is not installed (Debian openmpi-bin)")


def _worker_env():
    env = dict(os.environ)
    env.pop("XDEV_PLUGIN_PATH", None)  # the cpu plugin only: one logical CPU per worker
    env.update({
        "XDEV_PLUGINS": "cpu",
        # Open MPI refuses to start as root without both.
        "OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
        # No warnings about high-speed networks a CI machine lacks.
        "OMPI_MCA_btl_base_warn_component_unused": "0",
    })
    # Not one of mpirun's ranks itself (pytest run under mpirun): the single-worker runs
    # must not look started by it.
    for name in ("OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_SIZE"):
        env.pop(name, None)
    return env


def _run(mode, workers, *args):
    """Runs mpi_worker.py MODE ARGS under mpirun -np WORKERS (WORKERS=None: alone); returns
    its output, stdout and stderr together. Fails the test when it exits non-zero."""
    command = [sys.executable, str(WORKER), mode, *[str(a) for a in args]]
    if workers is not None:
        command = [MPIRUN, "--oversubscribe", "-np", str(workers)] + command
    result = subprocess.run(command, capture_output=True, text=True, env=_worker_env(),
                            timeout=180, cwd="/")
    output = result.stdout + result.stderr
    if result.returncode != 0:
        pytest.fail(f"{' '.join(command)} exited {result.returncode}:\n{output}")
    return output


def _lines(output, prefix):
    return sorted(line for line in output.splitlines() if line.startswith(prefix))


@needs_mpi_package
@needs_mpirun
def test_two_workers_see_their_rank_and_size_and_agree_on_an_all_reduce(tmp_path):
    output = _run("collectives", 2, tmp_path)
    passed = _lines(output, "PASS collectives")
    assert passed == ["PASS collectives task 0 of 2 sum [3.0, 19.0]",
                      "PASS collectives task 1 of 2 sum [3.0, 19.0]"], output
    # Each worker prints the cluster, like TensorFlow.
    assert output.count("Using MultiWorkerMirroredStrategy with cluster_spec = {'worker': [") == 2
    assert (tmp_path / "0" / "ckpt.safetensors").exists()
    assert not (tmp_path / "1" / "ckpt.safetensors").exists()


def _weights(output, task):
    line = _lines(output, f"WEIGHTS task {task} ")
    assert len(line) == 1, output
    return np.array([float(v) for v in line[0].split()[3:]])


@needs_mpi_package
@needs_mpirun
def test_two_workers_train_to_the_weights_of_one_process_with_the_same_global_batch():
    two = _run("train", 2)
    one = _run("train", None)
    assert "running as a single worker" in one
    assert _lines(two, "PASS train") == ["PASS train task 0 of 2", "PASS train task 1 of 2"], two
    # Both workers start from task 0's draw (a broadcast) and end identical.
    assert _lines(two, "START task 1")[0].split()[3:] == _lines(two, "START task 0")[0].split()[3:]
    assert _lines(one, "START task 0")[0].split()[3:] == _lines(two, "START task 0")[0].split()[3:]
    np.testing.assert_array_equal(_weights(two, 1), _weights(two, 0))
    # The same weights as one process on the whole batch.
    np.testing.assert_allclose(_weights(two, 0), _weights(one, 0), rtol=0, atol=1e-6)
    # And they did train: the loss fell and the weights moved toward (1, -2, 0.5; 0.25).
    first, last = (float(v) for v in _lines(two, "LOSS task 0")[0].split()[4::2])
    assert last < 0.1 * first, two
    np.testing.assert_allclose(_weights(two, 0), [1.0, -2.0, 0.5, 0.25], atol=0.2)


@needs_mpi_package
@needs_mpirun
def test_adam_on_mirrored_variables_across_two_workers_matches_one_process():
    two = _run("optimizer", 2)
    one = _run("optimizer", None)
    assert _lines(two, "PASS optimizer") == ["PASS optimizer task 0", "PASS optimizer task 1"], two
    np.testing.assert_array_equal(_weights(two, 1), _weights(two, 0))
    # float32: the two halves' gradients are summed in another order than the whole
    # batch's.
    np.testing.assert_allclose(_weights(two, 0), _weights(one, 0), rtol=0, atol=1e-6)
    # Training moved them (8 Adam steps of 0.05 each way at most).
    start = np.array([float(v) for v in _lines(two, "START task 0")[0].split()[3:]])
    assert np.abs(_weights(two, 0) - start).max() > 0.1, two


@needs_mpi_package
@needs_mpirun
def test_a_mismatched_all_reduce_raises_on_every_worker_naming_both_shapes():
    output = _run("mismatch", 2)
    assert _lines(output, "PASS mismatch") == ["PASS mismatch task 0",
                                               "PASS mismatch task 1"], output
    caught = _lines(output, "task ")
    assert len([c for c in caught if " caught: " in c]) == 2, output


@needs_mpi_package
def test_without_mpirun_it_runs_as_a_single_worker_and_says_so(capfd):
    strategy = xdev.distribute.MultiWorkerMirroredStrategy(devices=["/CPU:0"])
    err = capfd.readouterr().err
    assert "not started by mpirun" in err and "running as a single worker (task 0 of 1)" in err
    assert "Using MultiWorkerMirroredStrategy with cluster_spec = {'worker': ['localhost']}" in err
    resolver = strategy.cluster_resolver
    assert (resolver.task_type, resolver.task_id, resolver.source) == ("worker", 0, "single worker")
    assert resolver.cluster_spec().as_dict() == {"worker": ["localhost"]}
    assert strategy.num_replicas_in_sync == 1
    assert strategy.extended.worker_devices == ("/job:worker/replica:0/task:0/device:CPU:0",)
    summed = strategy.all_reduce("SUM", xdev.constant([1.0, 2.0]), name="t")
    assert summed.values[0].numpy().tolist() == [1.0, 2.0]
    largest = strategy.all_reduce("MAX", xdev.constant([1.0, 2.0])).values[0]
    assert largest.numpy().tolist() == [1.0, 2.0]
    with strategy.scope():
        w = xdev.Variable([3.0])
    assert isinstance(w, xdev.distribute.MirroredVariable)
    strategy.barrier()


@needs_mpi_package
def test_two_local_replicas_without_mpirun_reduce_in_process():
    run_on_logical_cpus(2, """
        s = xdev.distribute.MultiWorkerMirroredStrategy()
        assert s.num_replicas_in_sync == 2, s.num_replicas_in_sync
        assert s.extended.worker_devices == ("/job:worker/replica:0/task:0/device:CPU:0",
                                             "/job:worker/replica:0/task:0/device:CPU:1")
        ids = s.run(lambda: xdev.constant([
            float(xdev.distribute.get_replica_context().replica_id_in_sync_group)]))
        assert [v.numpy().tolist() for v in ids.values] == [[0.0], [1.0]]
        total = s.all_reduce("SUM", ids)
        assert [v.numpy().tolist() for v in total.values] == [[1.0], [1.0]]
        assert s.all_gather(ids).values[1].numpy().tolist() == [0.0, 1.0]
        shards = s.split_batch(xdev.constant([[1.0], [2.0], [3.0], [4.0]]))
        assert [v.numpy().tolist() for v in shards.values] == [[[1.0], [2.0]], [[3.0], [4.0]]]
        assert s.reduce("MEAN", shards, axis=0).numpy().tolist() == [2.5]
    """, env=_worker_env())


def test_importing_xdev_does_not_load_mpi():
    # libxdev_mpi (and libmpi) load when a MultiWorkerMirroredStrategy is made, not before.
    out = run_python("""
        import xdev
        maps = open("/proc/self/maps").read()
        print("libmpi" in maps, "libxdev_mpi" in maps)
    """).stdout.split()
    assert out == ["False", "False"]


def test_without_mpi_in_the_package_the_constructor_says_so(monkeypatch):
    if HAS_MPI:
        # As a package built without MPI sees it: no xdev._xdev_mpi.
        monkeypatch.setitem(sys.modules, "xdev._xdev_mpi", None)
    with pytest.raises(xdev.errors.UnimplementedError, match="built without MPI") as e:
        xdev.distribute.MultiWorkerMirroredStrategy()
    assert "openmpi-bin and libopenmpi-dev" in str(e.value)


def test_a_cluster_resolver_or_communication_options_are_refused():
    with pytest.raises(xdev.errors.UnimplementedError, match="mpirun or XDEV_CONFIG"):
        xdev.distribute.MultiWorkerMirroredStrategy(cluster_resolver=object())
    with pytest.raises(xdev.errors.UnimplementedError, match="chosen by xdev"):
        xdev.distribute.MultiWorkerMirroredStrategy(communication_options=object())
