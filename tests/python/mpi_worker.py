"""One worker of tests/python/test_multi_worker.py, started by it under
``mpirun -np 2 --oversubscribe`` (or alone, as a single worker).

    python mpi_worker.py collectives DIR|train|optimizer|mismatch

Each mode prints ``PASS <mode> task <k> ...`` and exits 0 when its checks hold, or
raises (non-zero exit). The devices are one logical CPU per worker.
"""

import os
import sys

import numpy as np

import xdev

failures = []


def say(line):
    """Prints one line in one write: the two workers share mpirun's output, and print()
    writes the text and its newline apart when Python runs unbuffered (PYTHONUNBUFFERED),
    so another worker's line could land between them."""
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def expect(ok, what):
    if not ok:
        failures.append(what)
        say(f"FAIL: {what}")


def strategy_on_one_cpu():
    return xdev.distribute.MultiWorkerMirroredStrategy(devices=["/CPU:0"])


def collectives():
    s = strategy_on_one_cpu()
    task = s.cluster_resolver.task_id
    workers = s.cluster_resolver.cluster_spec().num_tasks("worker")
    rank = int(os.environ.get("OMPI_COMM_WORLD_RANK", "0"))
    size = int(os.environ.get("OMPI_COMM_WORLD_SIZE", "1"))
    expect(task == rank and workers == size,
           f"task {task} of {workers}, mpirun's rank {rank} of {size}")
    expect(s.cluster_resolver.source == "mpi", f"source {s.cluster_resolver.source}")
    expect(s.num_replicas_in_sync == size, f"num_replicas_in_sync {s.num_replicas_in_sync}")
    expect(s.extended.worker_devices == (f"/job:worker/replica:0/task:{task}/device:CPU:0",),
           f"worker_devices {s.extended.worker_devices}")
    expect(s.extended.should_checkpoint == (task == 0), "only task 0 checkpoints")

    # Task k holds [k + 1, 10 - k].
    mine = xdev.constant([task + 1.0, 10.0 - task])
    total = s.all_reduce("SUM", mine, name="sum").values[0].numpy()
    expect(total.tolist() == [3.0, 19.0], f"SUM {total}")
    expect(s.all_reduce("MEAN", mine).values[0].numpy().tolist() == [1.5, 9.5], "MEAN")
    largest = s.all_reduce(xdev.distribute.ReduceOp.MAX, mine).values[0]
    expect(largest.numpy().tolist() == [2.0, 10.0], "MAX")
    expect(s.all_reduce("MIN", mine).values[0].numpy().tolist() == [1.0, 9.0], "MIN")
    expect(s.reduce("SUM", mine).numpy().tolist() == [3.0, 19.0], "reduce SUM")
    expect(s.reduce("MEAN", mine, axis=0).numpy().item() == 22.0 / 4, "reduce MEAN over axis 0")
    gathered = s.all_gather(xdev.constant([[task * 1.0]])).values[0].numpy()
    expect(gathered.tolist() == [[0.0], [1.0]], f"all_gather {gathered}")
    expect(s.gather(xdev.constant([task * 1.0])).numpy().tolist() == [0.0, 1.0], "gather")
    # [1, 2] on task 0 and [2, 4] on task 1: the sum [3, 6], global replica k keeps row k.
    scattered = s.reduce_scatter("SUM", xdev.constant([task + 1.0, 2.0 * (task + 1)]))
    expect(scattered.values[0].numpy().tolist() == [[3.0], [6.0]][task],
           f"reduce_scatter {scattered}")
    sent = s.broadcast(xdev.constant([task + 5.0]), root_task=1).values[0]
    expect(sent.numpy().tolist() == [6.0], "broadcast from task 1")
    with s.scope():
        v = xdev.Variable([task + 7.0])
    expect(v.numpy().tolist() == [7.0], f"a variable starts as task 0's value: {v.numpy()}")

    def step():
        ctx = xdev.distribute.get_replica_context()
        return xdev.constant([float(ctx.replica_id_in_sync_group), float(ctx.num_replicas_in_sync)])

    expect(s.run(step).numpy().tolist() == [float(task), float(size)], "replica context in run")
    # A checkpoint from task 0 only: each worker names its own directory, so task 1's
    # must stay empty.
    path = os.path.join(sys.argv[2], str(task), "ckpt.safetensors")
    os.makedirs(os.path.dirname(path))
    s.save_checkpoint({"v": v}, path)
    expect(os.path.exists(path) == (task == 0), f"task {task} wrote {path}: {os.path.exists(path)}")
    if task == 0:
        expect(xdev.load_file(path)["v"].numpy().tolist() == [7.0], "the checkpoint holds v")
    s.barrier()
    if failures:
        sys.exit(1)
    say(f"PASS collectives task {task} of {workers} sum {total.tolist()}")


# A dense layer, y = x w + b, trained on a global batch of 64 rows: each worker takes
# its rows (split_batch), its loss is its part of the global mean squared error, and
# the gradients are summed over the workers before the optimizer applies them. The
# weights start from task 0's values (a broadcast; every task draws its own).
GLOBAL_BATCH = 64
STEPS = 8  # short of convergence, so that wrong gradients show in the weights


def train():
    s = strategy_on_one_cpu()
    task = s.cluster_resolver.task_id
    rng = np.random.default_rng(0)
    x = rng.standard_normal((GLOBAL_BATCH, 3)).astype(np.float32)
    y = (x @ np.array([[1.0], [-2.0], [0.5]]) + 0.25).astype(np.float32)
    mine = np.random.default_rng(100 + task).standard_normal((3, 1)).astype(np.float32)
    w = xdev.Variable(s.broadcast(mine, name="init/w").values[0], name="w")
    b = xdev.Variable(s.broadcast(np.zeros([1], np.float32), name="init/b").values[0], name="b")
    start = np.concatenate([w.numpy().ravel(), b.numpy().ravel()])
    xs, ys = s.split_batch(x), s.split_batch(y)
    opt = xdev.optimizers.SGD(learning_rate=0.1, momentum=0.5)

    def step(xb, yb):
        with xdev.GradientTape() as tape:
            err = xdev.matmul(xb, w) + b - yb
            loss = xdev.reduce_sum(err * err) * (1.0 / GLOBAL_BATCH)
        return [loss] + tape.gradient(loss, [w, b])

    losses = []
    for _ in range(STEPS):
        loss, gw, gb = s.run(step, args=(xs, ys))
        losses.append(float(s.reduce("SUM", loss)))
        grads = [s.all_reduce("SUM", g, name=f"grad/{n}").values[0]
                 for g, n in ((gw, "w"), (gb, "b"))]
        opt.apply_gradients(zip(grads, [w, b]))
    weights = np.concatenate([w.numpy().ravel(), b.numpy().ravel()])
    say(f"START task {task} " + " ".join(repr(float(v)) for v in start))
    say(f"WEIGHTS task {task} " + " ".join(repr(float(v)) for v in weights))
    say(f"LOSS task {task} first {losses[0]!r} last {losses[-1]!r}")
    say(f"PASS train task {task} of {s.cluster_resolver.cluster_spec().num_tasks('worker')}")


def optimizer():
    """Adam on MirroredVariables made in strategy.scope(), with the gradients strategy.run
    returns: the optimizer sums them over the workers."""
    s = strategy_on_one_cpu()
    task = s.cluster_resolver.task_id
    rng = np.random.default_rng(0)
    x = rng.standard_normal((GLOBAL_BATCH, 3)).astype(np.float32)
    y = (x @ np.array([[1.0], [-2.0], [0.5]]) + 0.25).astype(np.float32)
    with s.scope():
        # Task 0's draw on every worker (create_variable broadcasts it).
        w = xdev.Variable(np.random.default_rng(100 + task).standard_normal((3, 1))
                          .astype(np.float32), name="w")
        b = xdev.Variable(np.zeros([1], np.float32), name="b")
    expect(isinstance(w, xdev.distribute.MirroredVariable), f"w is a {type(w).__name__}")
    start = np.concatenate([w.numpy().ravel(), b.numpy().ravel()])
    xs, ys = s.split_batch(x), s.split_batch(y)
    opt = xdev.optimizers.Adam(learning_rate=0.05)

    def step(xb, yb):
        with xdev.GradientTape() as tape:
            err = xdev.matmul(xb, w) + b - yb
            loss = xdev.reduce_sum(err * err) * (1.0 / GLOBAL_BATCH)
        return tape.gradient(loss, [w, b])

    for _ in range(STEPS):
        opt.apply_gradients(zip(s.run(step, args=(xs, ys)), [w, b]))
    expect(opt.iterations == STEPS, f"iterations {opt.iterations}")
    if failures:
        sys.exit(1)
    weights = np.concatenate([w.numpy().ravel(), b.numpy().ravel()])
    say(f"START task {task} " + " ".join(repr(float(v)) for v in start))
    say(f"WEIGHTS task {task} " + " ".join(repr(float(v)) for v in weights))
    say(f"PASS optimizer task {task}")


def mismatch():
    s = strategy_on_one_cpu()
    task = s.cluster_resolver.task_id
    try:
        s.all_reduce("SUM", xdev.zeros([3 if task == 0 else 4, 1]), name="dense/kernel/grad")
    except xdev.errors.InvalidArgumentError as e:
        say(f"task {task} caught: {e}")
        message = str(e)
        expect("task 0 has all_reduce SUM of 'dense/kernel/grad' (3, 1) float32" in message and
               "task 1 has all_reduce SUM of 'dense/kernel/grad' (4, 1) float32" in message,
               "the error names the tensor and both shapes")
    else:
        expect(False, "mismatched shapes were reduced")
    # The strategy stays usable after a mismatch.
    expect(s.all_reduce("SUM", xdev.constant([1.0])).values[0].numpy().tolist() == [2.0],
           "an all-reduce after the mismatch")
    s.barrier()
    if failures:
        sys.exit(1)
    say(f"PASS mismatch task {task}")


if __name__ == "__main__":
    {"collectives": collectives, "train": train, "optimizer": optimizer,
     "mismatch": mismatch}[sys.argv[1]]()
