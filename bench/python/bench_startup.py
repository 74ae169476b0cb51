"""Start-up of a Python process that lists its devices, beside one that imports NumPy.

    python bench/python/bench_startup.py [--runs 20]

Whole processes of the Python running this script, started with ``posix_spawn``
and reaped with ``os.wait4`` (wall time from spawn to exit, peak RSS of the
child): the peer ``python -c "import numpy"`` (xdev imports NumPy itself), then
``import xdev; xdev.config.list_physical_devices()`` with every plugin the package
carries, and the same with ``XDEV_PLUGINS`` naming all but one plugin, to show
what each one costs. Each case runs once untimed first (page cache, the plugin
probe's cache), then the cases run interleaved; the table has medians and
the ratio to NumPy. The goal on a machine with the CUDA Toolkit and no GPU: at
most 1.5x the NumPy process. A plain script rather than Google Benchmark: the
thing measured is a whole interpreter.
"""

import argparse
import os
import statistics
import sys
import time

import xdev

LIST = "import xdev; xdev.config.list_physical_devices()"


def run_once(code, env):
    start = time.perf_counter()
    pid = os.posix_spawn(sys.executable, [sys.executable, "-c", code], env)
    _, status, usage = os.wait4(pid, 0)
    wall = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"the child failed: {code!r} (status {status})")
    return wall, usage.ru_maxrss / 1024.0  # ru_maxrss is in KiB on Linux


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()

    env = {k: v for k, v in os.environ.items() if k not in ("XDEV_PLUGINS", "XDEV_PLUGIN_PATH")}
    plugins = [p.name for p in xdev.experimental.list_plugins() if p.loaded]
    cases = [("import numpy (peer)", "import numpy", env),
             (f"lists its devices: {', '.join(plugins)}", LIST, env)]
    if len(plugins) > 1:
        for left_out in plugins:
            kept = [p for p in plugins if p != left_out]
            cases.append((f"lists its devices: {', '.join(kept)} (no {left_out})", LIST,
                          dict(env, XDEV_PLUGINS=",".join(kept))))

    for _, code, case_env in cases:
        run_once(code, case_env)
    walls = [[] for _ in cases]
    rss = [[] for _ in cases]
    for _ in range(args.runs):
        for i, (_, code, case_env) in enumerate(cases):
            w, r = run_once(code, case_env)
            walls[i].append(w)
            rss[i].append(r)

    peer = statistics.median(walls[0])
    print(f"{args.runs} runs each, interleaved; load average {os.getloadavg()[0]:.1f}; "
          f"xdev {xdev.__version__}, Python {sys.version.split()[0]}")
    print("| process | wall, median | ratio to NumPy | peak RSS, median |")
    print("| --- | --- | --- | --- |")
    for (name, _, _), w, r in zip(cases, walls, rss):
        m = statistics.median(w)
        print(f"| {name} | {m * 1e3:.1f} ms | {m / peer:.2f}x | {statistics.median(r):.1f} MiB |")


if __name__ == "__main__":
    main()
