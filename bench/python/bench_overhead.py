"""The cost of one op from Python: a 1-element float32 add with xdev (``a + b`` and
``xdev.add(a, b)``) beside NumPy's 1-element add, measured in the same run.

    python bench/python/bench_overhead.py [--repeats 15] [--number 200000]

Runs the candidates interleaved (one repetition of each in turn, ``timeit`` with the
garbage collector off), reports the median time per call and the ratio to NumPy. The
target: xdev's add costs at most 2x NumPy's. A plain script rather than
Google Benchmark: the thing measured is the Python call itself.
"""

import argparse
import statistics
import timeit

import numpy as np

import xdev


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--number", type=int, default=200_000)
    args = parser.parse_args()

    with xdev.device("/CPU:0"):
        xa = xdev.constant([1.0])
        xb = xdev.constant([2.0])
    na = np.array([1.0], np.float32)
    nb = np.array([2.0], np.float32)
    assert (xa + xb).device.endswith("CPU:0")
    add = xdev.add
    candidates = {
        "numpy a + b": lambda: na + nb,
        "xdev a + b": lambda: xa + xb,
        "xdev.add(a, b)": lambda: add(xa, xb),
    }
    timers = {name: timeit.Timer(fn) for name, fn in candidates.items()}
    for t in timers.values():  # warm up: pools, placement cache
        t.timeit(number=1000)
    samples = {name: [] for name in candidates}
    for _ in range(args.repeats):
        for name, t in timers.items():
            samples[name].append(t.timeit(number=args.number) / args.number * 1e9)
    numpy_ns = statistics.median(samples["numpy a + b"])
    print(f"xdev {xdev.__version__}, numpy {np.__version__}; "
          f"median of {args.repeats} x {args.number} calls")
    print(f"{'candidate':<16} {'ns/call':>9} {'stdev':>7} {'vs numpy':>9}")
    for name, values in samples.items():
        median = statistics.median(values)
        print(f"{name:<16} {median:9.1f} {statistics.stdev(values):7.1f} "
              f"{median / numpy_ns:8.2f}x")


if __name__ == "__main__":
    main()
