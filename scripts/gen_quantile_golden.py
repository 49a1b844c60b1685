#!/usr/bin/env python3
"""Write tests/data/quantile/golden.json: numpy.quantile results for every method.

Usage (from the repository root; needs numpy >= 2):

    python3 scripts/gen_quantile_golden.py [OUTPUT]

tests/quantile_numpy.rs checks kselect's quantiles against this file bit for bit. The file
is committed, so the tests do not need numpy.

Encoding (all exact):
  * "qs": the probabilities, f64 bit patterns as 16 hex digits. numpy gets them as one float64
    array (not a Python scalar), so it computes in float64.
  * case "values": f64 as 16 hex digits, f32 as 8 hex digits of their bit patterns; integers as
    decimal strings.
  * case "expected": method name -> one f64 bit pattern (16 hex digits) per q, the result of
    numpy.quantile(x, qs, method=m) converted to float64 (exact), where x is the input itself
    for f32/f64 and input.astype(float64) for integers.
  * case "zero_sign_ambiguous": the data holds both -0.0 and +0.0. numpy's partition leaves
    equal zeros in an unspecified order (kselect orders -0.0 first), so the sign of a zero
    result is not meaningful there; every other bit is.
"""

import json
import math
import os
import sys
import warnings

import numpy as np

METHODS = [
    "inverted_cdf",
    "averaged_inverted_cdf",
    "closest_observation",
    "interpolated_inverted_cdf",
    "hazen",
    "weibull",
    "linear",
    "median_unbiased",
    "normal_unbiased",
    "lower",
    "higher",
    "midpoint",
    "nearest",
]

QS = np.concatenate(
    [
        np.array([0.0, 1.0, 0.5, 0.25, 0.75, 1 / 3, 0.1, 0.9, 0.999, 1e-9], dtype=np.float64),
        np.linspace(0.0, 1.0, 101, dtype=np.float64),
    ]
)

SIZES = [1, 2, 3, 4, 5, 10, 101, 1000]


def hex64(x):
    return format(int(np.float64(x).view(np.uint64)), "016x")


def hex32(x):
    return format(int(np.float32(x).view(np.uint32)), "08x")


def encode(values):
    if values.dtype == np.float64:
        return [hex64(v) for v in values]
    if values.dtype == np.float32:
        return [hex32(v) for v in values]
    return [str(int(v)) for v in values]


def make_case(name, values):
    values = np.asarray(values)
    dtype = {
        np.dtype(np.float64): "f64",
        np.dtype(np.float32): "f32",
        np.dtype(np.int32): "i32",
        np.dtype(np.int64): "i64",
        np.dtype(np.uint32): "u32",
        np.dtype(np.uint64): "u64",
    }[values.dtype]
    x = values if values.dtype.kind == "f" else values.astype(np.float64)
    expected = {}
    for method in METHODS:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # inf - inf in numpy's _lerp
            result = np.quantile(x, QS, method=method)
        assert result.shape == QS.shape
        expected[method] = [hex64(r) for r in result.astype(np.float64)]
    zeros = values[values == 0] if values.dtype.kind == "f" else np.array([])
    signs = {bool(np.signbit(z)) for z in zeros}
    return {
        "name": name,
        "dtype": dtype,
        "values": encode(values),
        "zero_sign_ambiguous": len(signs) == 2,
        "expected": expected,
    }


def spread(rng, n):
    """Normal values scaled over six decades, so neighbours differ in exponent."""
    return rng.standard_normal(n) * 10.0 ** rng.integers(-3, 4, n)


def cases():
    rng = np.random.default_rng(20240611)
    out = []
    for n in SIZES:
        out.append(make_case(f"f64 random n={n}", spread(rng, n)))
    for n in SIZES:
        out.append(make_case(f"f32 random n={n}", spread(rng, n).astype(np.float32)))
    out.append(make_case("f32 uniform n=101", rng.random(101).astype(np.float32)))

    # Integers, converted to float64 before numpy sees them.
    out.append(make_case("i32 random n=10", rng.integers(-1000, 1000, 10, dtype=np.int32)))
    out.append(
        make_case(
            "i32 extremes n=101",
            np.concatenate(
                [
                    np.array([np.iinfo(np.int32).min, np.iinfo(np.int32).max], dtype=np.int32),
                    rng.integers(np.iinfo(np.int32).min, np.iinfo(np.int32).max, 99, dtype=np.int32),
                ]
            ),
        )
    )
    out.append(make_case("u32 random n=10", rng.integers(0, 2**32, 10, dtype=np.uint32)))
    big = 2**53
    i64_big = np.concatenate(
        [
            np.array(
                [np.iinfo(np.int64).min, np.iinfo(np.int64).max, big, big + 1, -big - 1, big + 3],
                dtype=np.int64,
            ),
            rng.integers(-(2**62), 2**62, 95, dtype=np.int64),
        ]
    )
    out.append(make_case("i64 above 2^53 n=101", i64_big))
    out.append(make_case("i64 random n=5", rng.integers(-50, 50, 5, dtype=np.int64)))
    u64_big = np.concatenate(
        [
            np.array([np.iinfo(np.uint64).max, 0, big, big + 1, 2**63, 2**63 + 1], dtype=np.uint64),
            rng.integers(0, 2**64 - 1, 4, dtype=np.uint64, endpoint=True),
        ]
    )
    out.append(make_case("u64 above 2^53 n=10", u64_big))
    out.append(make_case("u64 random n=101", rng.integers(0, 2**64 - 1, 101, dtype=np.uint64, endpoint=True)))

    # Ties.
    out.append(make_case("f64 ties n=9", np.array([3, 1, 2, 3, 1, 3, 2, 3, 1], dtype=np.float64)))
    out.append(make_case("f64 all equal n=7", np.full(7, 2.5)))
    out.append(make_case("f64 few distinct n=101", rng.integers(0, 4, 101).astype(np.float64)))
    out.append(make_case("f32 few distinct n=10", (rng.integers(0, 3, 10) * 0.1).astype(np.float32)))
    out.append(make_case("i64 ties n=10", np.array([5, 5, 5, -1, -1, 7, 7, 7, 7, 5], dtype=np.int64)))

    # Infinities (numpy's _lerp makes NaN from inf - inf and inf * 0).
    inf = math.inf
    out.append(make_case("f64 inf both ends n=4", np.array([inf, 1.0, -inf, 2.0])))
    out.append(make_case("f64 one and inf n=2", np.array([1.0, inf])))
    out.append(make_case("f64 -inf and inf n=2", np.array([-inf, inf])))
    out.append(make_case("f64 all inf n=3", np.array([inf, inf, inf])))
    out.append(make_case("f64 single -inf n=1", np.array([-inf])))
    out.append(make_case("f64 infs and values n=10", np.array([-inf, -inf, 0.0, 5.0, 1.5, inf, -2.0, 3.0, inf, 7.0])))
    out.append(make_case("f32 inf both ends n=5", np.array([inf, 1.0, -inf, 2.0, 0.5], dtype=np.float32)))
    # Finite values whose difference overflows (in f32 only, or in f64 too).
    out.append(make_case("f64 difference overflows n=3", np.array([-1.7e308, 1.7e308, 0.0])))
    out.append(make_case("f32 difference overflows n=3", np.array([-3e38, 3e38, 1.0], dtype=np.float32)))
    out.append(make_case("f64 subnormals n=4", np.array([5e-324, 1e-320, -5e-324, 2.5e-310])))

    # Negative zeros.
    out.append(make_case("f64 negative zero n=1", np.array([-0.0])))
    out.append(make_case("f64 negative zeros n=3", np.array([-0.0, -0.0, -0.0])))
    out.append(make_case("f64 negative zeros and values n=4", np.array([-0.0, 1.0, -1.0, -0.0])))
    out.append(make_case("f32 negative zeros and values n=5", np.array([-0.0, 2.0, -0.0, -3.0, -0.0], dtype=np.float32)))
    out.append(make_case("f64 both zeros n=4", np.array([-0.0, 0.0, 0.0, -0.0])))
    out.append(make_case("f32 both zeros and values n=6", np.array([0.0, -0.0, 1.0, -1.0, 0.0, -0.0], dtype=np.float32)))
    return out


def dumps(doc):
    """Compact JSON with one line per case field and per method, for readable diffs."""

    def compact(value):
        return json.dumps(value, separators=(",", ":"))

    lines = ["{"]
    for key, value in doc.items():
        if key != "cases":
            lines.append(f"{compact(key)}:{compact(value)},")
    lines.append('"cases":[')
    for i, case in enumerate(doc["cases"]):
        lines.append("{")
        for key in ("name", "dtype", "zero_sign_ambiguous", "values"):
            lines.append(f"{compact(key)}:{compact(case[key])},")
        lines.append('"expected":{')
        methods = list(case["expected"].items())
        for j, (method, bits) in enumerate(methods):
            lines.append(f"{compact(method)}:{compact(bits)}" + ("," if j + 1 < len(methods) else ""))
        lines.append("}}" + ("," if i + 1 < len(doc["cases"]) else ""))
    lines.append("]}")
    text = "\n".join(lines) + "\n"
    assert json.loads(text) == doc
    return text


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(root, "tests", "data", "quantile", "golden.json")
    if int(np.__version__.split(".")[0]) < 2:
        sys.exit(f"numpy >= 2 is required (found {np.__version__})")
    doc = {
        "generator": "scripts/gen_quantile_golden.py",
        "numpy_version": np.__version__,
        "description": "numpy.quantile(x, qs, method=m) with qs a float64 array; "
        "integers as x.astype(float64); outputs as float64 bit patterns",
        "methods": METHODS,
        "qs": [hex64(q) for q in QS],
        "cases": cases(),
    }
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(dumps(doc))
    print(f"wrote {path}: {len(doc['cases'])} cases, {os.path.getsize(path)} bytes, numpy {np.__version__}")


if __name__ == "__main__":
    main()
