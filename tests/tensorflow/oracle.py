"""Running one call under TensorFlow and under xdev, and comparing what comes back."""

import numpy as np

# Relative and absolute tolerances by dtype; float32's relative one is the case's.
TOLERANCES = {"float64": (1e-12, 1e-12), "float16": (2e-3, 2e-3), "bfloat16": (1.6e-2, 1.6e-2)}


class Outcome:
    """Either `values` (a list of (dtype name, shape, float64 or int array)) or `error`
    (the exception's class name) with its message."""

    def __init__(self, values=None, error=None, message=""):
        self.values, self.error, self.message = values, error, message

    def __repr__(self):
        if self.error:
            return f"{self.error}: {self.message[:300]}"
        return repr([(d, s, v.tolist()) for d, s, v in self.values])


def flatten(out):
    if isinstance(out, (list, tuple)):
        return [t for o in out for t in flatten(o)]
    return [out]


def run(m, call, args):
    """`call(m, *tensors)` on /CPU:0, each NumPy array of `args` made `m.constant` first."""
    try:
        with m.device("/CPU:0"):
            tensors = [m.constant(a) if isinstance(a, np.ndarray) else a for a in args]
            out = call(m, *tensors)
        values = []
        for t in flatten(out):
            array = np.asarray(t.numpy())
            kind = array.dtype.kind
            values.append((t.dtype.name, tuple(int(d) for d in t.shape),
                           array.astype(np.float64) if kind in "fV" or array.dtype.name ==
                           "bfloat16" else array))
        return Outcome(values=values)
    except Exception as error:  # noqa: BLE001 -- the class is what is compared
        return Outcome(error=type(error).__name__, message=str(error))


def differ(tf_out, xdev_out, rtol32=2e-6):
    """None when both gave the same (values within the dtype's tolerance, or errors of the
    same class), else what differs."""
    if tf_out.error or xdev_out.error:
        if tf_out.error == xdev_out.error:
            return None
        return f"TensorFlow: {tf_out!r}\nxdev: {xdev_out!r}"
    if len(tf_out.values) != len(xdev_out.values):
        return f"{len(tf_out.values)} results against {len(xdev_out.values)}"
    for i, ((td, ts, tv), (xd, xs, xv)) in enumerate(zip(tf_out.values, xdev_out.values)):
        if td != xd or ts != xs:
            return f"result {i}: TensorFlow {td} {ts}, xdev {xd} {xs}"
        if tv.dtype.kind == "f":
            rtol, atol = TOLERANCES.get(td, (rtol32, rtol32))
            if not np.allclose(xv, tv, rtol=rtol, atol=atol, equal_nan=True):
                return (f"result {i} ({td}): TensorFlow {tv.tolist()}\n"
                        f"xdev {xv.tolist()}")
        elif not np.array_equal(xv, tv):
            return f"result {i} ({td}): TensorFlow {tv.tolist()}\nxdev {xv.tolist()}"
    return None
