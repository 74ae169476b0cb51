#!/usr/bin/env python3
"""Prints the table of docs/performance.md "Ops on the CPU" from one run of bench_ops.

    build/bench/ops/bench_ops --benchmark_min_time=0.5 --benchmark_repetitions=5 \
        --benchmark_report_aggregates_only=true --benchmark_out=ops.json
    bench/ops/ratios.py ops.json

Uses the medians of the repetitions; every ratio compares two benchmarks of the same run.
"""
import json
import sys


def load(path):
    with open(path) as f:
        data = json.load(f)
    medians = {}
    for b in data["benchmarks"]:
        if b.get("aggregate_name") == "median":
            medians[b["run_name"]] = b
    return data.get("context", {}), medians


def ns(b):
    unit = {"ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9}[b.get("time_unit", "ns")]
    return b["real_time"] * unit


def fmt_time(v):
    if v < 1e3:
        return f"{v:.1f} ns"
    if v < 1e6:
        return f"{v / 1e3:.1f} µs"
    return f"{v / 1e6:.2f} ms"


def main():
    context, m = load(sys.argv[1])
    rows = []

    def get(name):
        b = m.get(name)
        if b is None:
            sys.exit(f"{name} is missing from {sys.argv[1]}")
        return b

    x, k = get("BM_Add1_Xdev"), get("BM_Add1_KernelThroughAbi")
    rows.append(("1-element `xdev::add` (f32)", fmt_time(ns(x)),
                 f"kernel through the ABI: {fmt_time(ns(k))}",
                 f"core overhead {fmt_time(ns(x) - ns(k))} (target: total ≤ 100 ns)"))
    x, loop, blas, k = (get("BM_MatMul2x3x2_Xdev"), get("BM_MatMul2x3x2_PlainLoop"),
                        get("BM_MatMul2x3x2_Cblas"), get("BM_MatMul2x3x2_KernelThroughAbi"))
    rows.append(("2×3·3×2 `xdev::matmul` (f32)", fmt_time(ns(x)),
                 f"plain loop (sizes known at compile time) {fmt_time(ns(loop))}; "
                 f"`cblas_sgemm` {fmt_time(ns(blas))}; the MatMul kernel through the ABI "
                 f"{fmt_time(ns(k))}",
                 f"kernel time / cblas time {ns(k) / ns(blas):.2f}; core overhead "
                 f"{fmt_time(ns(x) - ns(k))}"))
    for n in (256, 1024, 2048):
        x = get(f"BM_Sgemm_Xdev/{n}/real_time")
        p = get(f"BM_Sgemm_CblasDirect/{n}/real_time")
        gx, gp = x["GFLOP/s"], p["GFLOP/s"]
        rows.append((f"SGEMM n={n} `xdev::matmul`", f"{gx:.1f} GFLOP/s",
                     f"`cblas_sgemm`, OpenBLAS {int(p.get('blas_threads', 0))} threads: "
                     f"{gp:.1f} GFLOP/s", f"**{gx / gp:.3f}×** (target ≥ 0.97)"))
    x, p = get("BM_Add16M_Xdev/real_time"), get("BM_Add16M_TbbLoop/real_time")
    k = get("BM_Add16M_KernelThroughAbi/real_time")
    rows.append(("add of 16 Mi f32 `xdev::add`", f"{x['GB/s']:.1f} GB/s",
                 f"plain oneTBB `parallel_for`: {p['GB/s']:.1f} GB/s (the Add kernel "
                 f"alone: {k['GB/s']:.1f} GB/s)",
                 f"**{x['GB/s'] / p['GB/s']:.3f}×** (target ≥ 0.95)"))

    print(f"Host: {context.get('host_name', '?')}, {context.get('num_cpus', '?')} CPUs at "
          f"{context.get('mhz_per_cpu', '?')} MHz, load average "
          f"{', '.join(f'{v:.2f}' for v in context.get('load_avg', []))}")
    print()
    print("| benchmark | xdev | peer (same run) | ratio |")
    print("| --- | --- | --- | --- |")
    for r in rows:
        print("| " + " | ".join(r) + " |")


if __name__ == "__main__":
    main()
