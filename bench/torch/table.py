#!/usr/bin/env python3
"""Prints the xdev-beside-libtorch table of docs/performance.md from one run of bench_torch.

    env -u OPENBLAS_CORETYPE -u OPENBLAS_NUM_THREADS build/bench/torch/bench_torch \
        --benchmark_min_time=0.3 --benchmark_repetitions=5 \
        --benchmark_enable_random_interleaving=true \
        --benchmark_report_aggregates_only=true --benchmark_out=torch.json
    bench/torch/table.py torch.json

Medians of the repetitions, wall time; every ratio compares benchmarks of the same run.
Goals: small ops at most 1/8 of libtorch's time, a 1-element add at most 100 ns, SGEMM
and the large add at least 0.97x the throughput of the better of libtorch and direct
OpenBLAS/oneTBB. A training step of a 784-512-512-10 MLP at least 0.8x the speed of
libtorch's autograd in its fastest of three thread settings. Exp and sum of 16 Mi floats
and Softmax over [4096, 1024] at least 0.9x libtorch's speed, Conv2D on a ResNet-style
3x3 layer at least 0.8x (its fastest of NCHW, channels_last and channels_last on one OpenMP
thread); the two gradients of that layer are shown beside it.
"""
import json
import sys


def load(path):
    with open(path) as f:
        data = json.load(f)
    medians = {}
    for b in data["benchmarks"]:
        if b.get("aggregate_name") == "median":
            medians[b["run_name"].replace("/real_time", "")] = b
    return data.get("context", {}), medians


def ns(b, key="real_time"):
    unit = {"ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9}[b.get("time_unit", "ns")]
    return b[key] * unit


def fmt_time(v):
    if v < 1e3:
        return f"{v:.0f} ns"
    if v < 1e6:
        return f"{v / 1e3:.1f} µs"
    return f"{v / 1e6:.2f} ms"


def verdict(ok):
    return "**met**" if ok else "**missed**"


def small_ops(get):
    # Small ops: time ratio against libtorch. They run in the calling thread,
    # so their CPU time is shown too (wall time includes preemption by other
    # processes on a shared machine); the verdicts use wall time.
    for case, label in (("Add1", "1-element add (f32)"),
                        ("MatMul2x3x2", "2×3·3×2 matmul (f32)")):
        xb, tb = get(f"BM_{case}_Xdev"), get(f"BM_{case}_Torch")
        x, t = ns(xb), ns(tb)
        xc, tc = ns(xb, "cpu_time"), ns(tb, "cpu_time")
        goal = [f"≤ 1/8 of libtorch's time: {verdict(x <= t / 8)}"]
        if case == "Add1":
            goal.append(f"≤ 100 ns: {verdict(x <= 100)}")
        print(f"| {label} | {fmt_time(x)} (CPU {fmt_time(xc)}) | {fmt_time(t)} (CPU "
              f"{fmt_time(tc)}) | – | 1/{t / x:.1f} of libtorch's time (CPU: 1/{tc / xc:.1f}) | "
              f"{'; '.join(goal)} |")


def sgemm(get):
    for n in (256, 1024, 2048):
        x = get(f"BM_Sgemm_Xdev/{n}")["GFLOP/s"]
        t = get(f"BM_Sgemm_Torch/{n}")["GFLOP/s"]
        ob = get(f"BM_Sgemm_OpenBlas/{n}")
        o = ob["GFLOP/s"]
        best = max(t, o)
        kernels = ob.get("label", "").replace("OpenBLAS kernels ", "")
        print(f"| SGEMM n={n} | {x:.1f} GFLOP/s | {t:.1f} GFLOP/s | OpenBLAS ({kernels}), all "
              f"cores: {o:.1f} GFLOP/s | {x / best:.3f}× | ≥ 0.97×: {verdict(x / best >= 0.97)} |")


def large_add(get):
    x = get("BM_Add16M_Xdev")["GB/s"]
    t = get("BM_Add16M_Torch")["GB/s"]
    to = get("BM_Add16M_TorchOut")["GB/s"]
    loop = get("BM_Add16M_TbbLoop")["GB/s"]
    best = max(t, to, loop)
    print(f"| add of 16 Mi f32 | {x:.2f} GB/s | {t:.2f} GB/s (into a preallocated output: "
          f"{to:.2f} GB/s) | oneTBB loop: {loop:.2f} GB/s | {x / best:.3f}× | "
          f"≥ 0.97×: {verdict(x / best >= 0.97)} |")


def large_unary_and_sum(get):
    # Target: elementwise and reductions at 16 Mi elements at least 0.9x libtorch's
    # speed (its faster of a fresh and a preallocated output for exp).
    x = get("BM_Large16M_Xdev/exp")["GB/s"]
    t, to = get("BM_Large16M_Torch/exp")["GB/s"], get("BM_Large16M_Torch/exp_out")["GB/s"]
    best = max(t, to)
    print(f"| exp of 16 Mi f32 | {x:.2f} GB/s | {t:.2f} GB/s (into a preallocated output: "
          f"{to:.2f} GB/s) | – | {x / best:.3f}× | ≥ 0.9×: {verdict(x / best >= 0.9)} |")
    x, t = get("BM_Large16M_Xdev/sum")["GB/s"], get("BM_Large16M_Torch/sum")["GB/s"]
    print(f"| sum of 16 Mi f32 (all axes) | {x:.2f} GB/s | {t:.2f} GB/s | – | {x / t:.3f}× | "
          f"≥ 0.9×: {verdict(x / t >= 0.9)} |")


def zeros(get):
    for n, label in ((256, "256"), (1 << 20, "1 Mi")):
        x, t = ns(get(f"BM_Zeros_Xdev/{n}")), ns(get(f"BM_Zeros_Torch/{n}"))
        e = ns(get(f"BM_Empty_Torch/{n}"))
        print(f"| zeros of {label} f32 + free | {fmt_time(x)} | {fmt_time(t)} (`at::empty` "
              f"alone: {fmt_time(e)}) | – | {x / t:.3f}× libtorch's time | – |")


def train_step(get):
    # Training step: speed = 1 / time per step, against libtorch's fastest
    # thread setting (OpenMP threads / OpenBLAS threads, T = all cores).
    x = ns(get("BM_TrainStep_Xdev"))
    settings = (("defaults", "OpenMP T, OpenBLAS T (defaults)"), ("blas1", "OpenMP T, OpenBLAS 1"),
                ("omp1", "OpenMP 1, OpenBLAS T"))
    torch = {k: ns(get(f"BM_TrainStep_Torch/{k}")) for k, _ in settings}
    best = min(torch.values())
    cells = "; ".join(f"{label}: {fmt_time(torch[k])}" for k, label in settings)
    print(f"| MLP training step 784-512-512-10, batch 256 | {fmt_time(x)} | autograd, {cells} | – | "
          f"{best / x:.3f}× the speed of libtorch's fastest | ≥ 0.8×: {verdict(best / x >= 0.8)} |")


def softmax(get):
    # Softmax and Conv2D; speed = 1 / time against libtorch's fastest (Softmax:
    # fresh output or preallocated; Conv2D: NCHW, channels_last, channels_last on
    # one OpenMP thread).
    x = ns(get("BM_Softmax_Xdev"))
    t, to = ns(get("BM_Softmax_Torch/fresh")), ns(get("BM_Softmax_Torch/out"))
    best = min(t, to)
    print(f"| softmax of [4096, 1024] f32 (last axis) | {fmt_time(x)} | {fmt_time(t)} (into a "
          f"preallocated output: {fmt_time(to)}) | – | {best / x:.3f}× the speed of libtorch's "
          f"faster | ≥ 0.9×: {verdict(best / x >= 0.9)} |")


def conv2d(get):
    layouts = (("nchw", "NCHW"), ("channels_last", "channels_last"),
               ("channels_last_omp1", "channels_last, OpenMP 1"))
    for name, label, goal in (("forward", "Conv2D", 0.8),
                              ("input_grad", "Conv2DBackpropInput", None),
                              ("filter_grad", "Conv2DBackpropFilter", None)):
        xb = get(f"BM_Conv2D_Xdev/{name}")
        x = ns(xb)
        torch = {k: ns(get(f"BM_Conv2D_Torch/{name}_{k}")) for k, _ in layouts}
        best = min(torch.values())
        cells = "; ".join(f"{lab}: {fmt_time(torch[k])}" for k, lab in layouts)
        goal_cell = f"≥ {goal}×: {verdict(best / x >= goal)}" if goal else "–"
        print(f"| {label} 3×3, 8×56×56×64 → 64, SAME | {fmt_time(x)} ({xb['GFLOP/s']:.1f} "
              f"GFLOP/s) | {cells} | – | {best / x:.3f}× the speed of libtorch's fastest | "
              f"{goal_cell} |")


class Missing(Exception):
    pass


def main():
    context, m = load(sys.argv[1])

    def get(name):
        b = m.get(name)
        if b is None:
            raise Missing(name)
        return b

    print("| benchmark | xdev | libtorch 1.13 | direct peer | xdev vs best peer | goal |")
    print("| --- | --- | --- | --- | --- | --- |")
    # Each section prints its rows; one whose benchmarks the run did not
    # have (a --benchmark_filter run) is left out and named below the table.
    missing = []
    sections = (small_ops, sgemm, large_add, large_unary_and_sum, zeros, train_step, softmax,
                conv2d)
    for section in sections:
        try:
            section(get)
        except Missing as e:
            missing.append(f"{section.__name__} ({e})")
    if len(missing) == len(sections):
        sys.exit(f"{sys.argv[1]} has none of the benchmarks")

    print()
    print(f"({context.get('host_name', '?')}, {context.get('num_cpus', '?')} CPUs, load average "
          f"{(context.get('load_avg') or ['?'])[0]} at the start, {context.get('date', '?')})")
    if missing:
        print(f"(not in this run: {', '.join(missing)})")


if __name__ == "__main__":
    main()
