#!/usr/bin/env python3
"""Prints the start-up table of docs/performance.md from one run of bench_startup.

    build/bench/startup/bench_startup --benchmark_repetitions=10 \
        --benchmark_enable_random_interleaving=true \
        --benchmark_report_aggregates_only=true --benchmark_out=startup.json
    bench/startup/table.py startup.json

Medians of the repetitions; every difference is against the baseline process (links
libxdev, does nothing) of the same run. Goals: cold discovery with
every in-tree plugin installed at most 1.5 ms more than the baseline, and at most 16 MiB
peak RSS.
"""
import json
import sys

ROWS = [
    ("BM_Startup/none", "links libxdev, does nothing (baseline)"),
    ("BM_Startup/list/all", "lists its devices, every in-tree plugin installed"),
    ("BM_Startup/list/cpu", "lists its devices, cpu plugin only"),
    ("BM_Startup/list/cpu_eager",
     "lists its devices, cpu plugin only, OpenBLAS preloaded (`LD_PRELOAD`: its cost when "
     "the plugin linked it)"),
    ("BM_Startup/matmul/cpu", "lists, then one 64×64 `xdev::matmul` (OpenBLAS loads)"),
    ("BM_Startup/list/other", "lists its devices, the plugin in XDEV_BENCH_STARTUP_OTHER_PLUGIN"),
]
GOAL_MS = 1.5
GOAL_MIB = 16.0


def main():
    with open(sys.argv[1]) as f:
        data = json.load(f)
    medians = {}
    for b in data["benchmarks"]:
        if b.get("aggregate_name") != "median":
            continue
        name = b["run_name"].split("/min_time")[0].replace("/manual_time", "")
        medians[name] = b
    base = medians.get("BM_Startup/none")
    if base is None:
        sys.exit("BM_Startup/none is missing")

    def ms(b):
        unit = {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}[b.get("time_unit", "ms")]
        return b["real_time"] * unit

    print("| process | plugins | wall | − baseline | peak RSS | child CPU | − baseline |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for name, what in ROWS:
        b = medians.get(name)
        if b is None:
            continue
        delta = "" if b is base else f"{ms(b) - ms(base):+.2f} ms"
        cpu_delta = "" if b is base else f"{b['child_cpu_ms'] - base['child_cpu_ms']:+.2f} ms"
        print(f"| {what} | {b.get('label', '').replace('plugins: ', '').replace('plugin: ', '')} | {ms(b):.2f} ms | "
              f"{delta} | {b['peak_rss_MiB']:.1f} MiB | {b['child_cpu_ms']:.2f} ms | "
              f"{cpu_delta} |")
    listing = medians.get("BM_Startup/list/all")
    if listing is not None:
        delta = ms(listing) - ms(base)
        rss = listing["peak_rss_MiB"]
        print()
        print(f"- cold discovery − baseline: {delta:.2f} ms (goal ≤ {GOAL_MS} ms): "
              f"**{'met' if delta <= GOAL_MS else 'missed'}**")
        print(f"- peak RSS of cold discovery: {rss:.1f} MiB (goal ≤ {GOAL_MIB:.0f} MiB): "
              f"**{'met' if rss <= GOAL_MIB else 'missed'}**")
    ctx = data.get("context", {})
    print()
    print(f"({ctx.get('host_name', '?')}, {ctx.get('num_cpus', '?')} CPUs, "
          f"load average {ctx.get('load_avg', ['?'])[0] if ctx.get('load_avg') else '?'} at "
          f"the start, {ctx.get('date', '?')})")


if __name__ == "__main__":
    main()
