"""Every op of the op table × every dtype, through TensorFlow and through xdev.

For each op that xdev's /CPU:0 lists (xdev.config.list_kernels) and each dtype of the
nine, the op's case (cases.py) runs under both. Where both give values, dtypes, shapes
and values must agree (within the dtype's tolerance); where both raise, the classes must
agree for a dtype xdev defines, and "both refuse" is enough for one it does not. Any
other outcome must be a row of docs/tensorflow-differences.md, and every row there must
still be a real difference.
"""

import zlib

import numpy as np
import pytest

from conftest import RESULTS, TF_MISSING, documented_differences
import cases
import oracle

DTYPES = ("float32", "float64", "int32", "int64", "bool", "float16", "bfloat16", "uint8",
          "int8")
# Ops whose cases take a second dtype (the output's, or Select's x and y): only the
# pairs xdev defines are run.
PAIRED = {"Cast", "Select", "OneHot", "Fill", "Range", "RandomUniform"}


def params():
    if TF_MISSING:
        return [pytest.param("none", "none", "none", False, id="tensorflow-missing")]
    import xdev
    out = []
    for entry in xdev.config.list_kernels("/CPU:0"):
        op = entry["op"]
        defined = [(a.name, b.name) for a, b in entry["defined"]]
        for din, dout in defined:
            out.append(pytest.param(op, din, dout, True, id=f"{op}-{din}-{dout}"))
        if op in PAIRED:
            for d in DTYPES:
                if op in ("Fill", "Range", "RandomUniform") and (d, d) not in defined:
                    out.append(pytest.param(op, d, d, False, id=f"{op}-{d}-{d}"))
            continue
        for d in DTYPES:
            if d not in {a for a, _ in defined}:
                out.append(pytest.param(op, d, d, False, id=f"{op}-{d}"))
    return out


def test_every_op_has_a_case():
    import xdev
    ops = {e["op"] for e in xdev.config.list_kernels("/CPU:0")}
    assert ops <= set(cases.CASES) | {s for s, _ in documented_differences()}, \
        sorted(ops - set(cases.CASES))
    assert set(cases.CASES) <= ops, sorted(set(cases.CASES) - ops)


def outcomes(op, din, dout):
    import tensorflow as tf
    import xdev
    case = cases.CASES[op]
    seed = zlib.crc32(f"{op}/{din}/{dout}".encode())
    results = []
    for m in (tf, xdev):
        args, call = case.make(np.random.default_rng(seed), din, dout)
        results.append(oracle.run(m, call, args))
    return results


@pytest.mark.parametrize("op,din,dout,defined", params())
def test_op_agrees_with_tensorflow(op, din, dout, defined):
    if op == "Copy":
        pytest.skip("Copy has no TensorFlow API: the runtime's own contiguous copy "
                    "(docs/tensorflow-differences.md)")
    tf_out, xdev_out = outcomes(op, din, dout)
    RESULTS["compared"] += 1
    if not defined and tf_out.error and xdev_out.error:
        RESULTS["same"] += 1
        return  # neither has the dtype
    difference = oracle.differ(tf_out, xdev_out, cases.CASES[op].rtol32)
    documented = documented_differences()
    key = (op, din if din == dout else f"{din}->{dout}")
    if difference is None:
        RESULTS["same"] += 1
        assert key not in documented, (
            f"{op} {key[1]}: docs/tensorflow-differences.md lists a difference that is no "
            f"longer there: {documented[key]}")
        return
    assert key in documented, (
        f"{op} ({din} -> {dout}) differs from TensorFlow and docs/tensorflow-differences.md "
        f"does not say why:\n{difference}")
    RESULTS["documented"] += 1
