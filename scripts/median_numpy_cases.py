#!/usr/bin/env python3
"""Print numpy.median / numpy.nanmedian of the inputs of tests/median_numpy.rs.

Usage (from the repository root; needs numpy, 1.x or 2.x give the same values here):

    python3 scripts/median_numpy_cases.py

The expected values in tests/median_numpy.rs are literals pasted from this output, so the tests
do not need numpy. Each line is `name: numpy's result` with the result's shortest round-trip
text in its own type (float32 results as float32, everything else as float64) and its bits.
Inputs are the tests' own (the deterministic ones are generated here the same way as there).
"""

import warnings
from fractions import Fraction

import numpy as np

F32, F64 = np.float32, np.float64
INF, NAN = np.inf, np.nan


def show(name, value):
    value = np.asarray(value)[()]
    if value.dtype == np.float32:
        bits = f"{np.asarray(value).view(np.uint32)[()]:08x}"
    else:
        value = np.float64(value)
        bits = f"{np.asarray(value).view(np.uint64)[()]:016x}"
    print(f"{name}: {value!r} ({bits})")


def median(name, values, dtype, nan=False):
    a = np.array(values, dtype=dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        show(name, np.nanmedian(a) if nan else np.median(a))


def overflow_mean(dtype, a, b):
    """Shows a / 2 + b / 2 in the type of a and b, checked against the exact mean rounded."""
    mean = a / a.dtype.type(2) + b / a.dtype.type(2) if dtype == "f32" else a / 2 + b / 2
    exact = (Fraction(float(a)) + Fraction(float(b))) / 2
    rounded = F32(float(exact)) if dtype == "f32" else float(exact)
    assert mean == rounded, (mean, rounded)
    show(f"  a / 2 + b / 2 (the exact mean, rounded)", mean)


def lcg_values(n, seed):
    """The deterministic data of `numpy_nanmedian_small_and_large_inputs`: values
    ((state >> 11) % 20011 - 10005) / 64 of a 64-bit LCG, NaN where (state >> 7) % 5 == 0."""
    state = seed
    out = []
    for _ in range(n):
        state = (state * 6364136223846793005 + 1442695040888963407) % 2**64
        if (state >> 7) % 5 == 0:
            out.append(NAN)
        else:
            out.append(((state >> 11) % 20011 - 10005) / 64.0)
    return out


def main():
    print(f"numpy {np.__version__}")

    print("\n# The reported inputs")
    median("f32 [inf, -10, 4]", [INF, -10, 4], F32)
    median("f32 [-inf, -10, 4]", [-INF, -10, 4], F32)
    median("f32 nanmedian [inf, nan, nan, nan]", [INF, NAN, NAN, NAN], F32, nan=True)
    median("f64 nanmedian [-inf, nan, nan, nan]", [-INF, NAN, NAN, NAN], F64, nan=True)

    print("\n# Two middle values, every type")
    median("f64 [0.7, 0.1, 0.9, 0.2]", [0.7, 0.1, 0.9, 0.2], F64)
    median("f64 [5e-324, -1, 0, 3]", [5e-324, -1.0, 0.0, 3.0], F64)
    median("f64 [1e16, 1.0000000000000002e16, 3e16, -1e16]",
           [1e16, 1.0000000000000002e16, 3e16, -1e16], F64)
    median("f32 [0.1, 0.2]", [0.1, 0.2], F32)
    median("f32 [0.7, 0.1, 0.9, 0.2]", [0.7, 0.1, 0.9, 0.2], F32)
    median("f32 [1e-45, 0, -1, 1]", [1e-45, 0, -1, 1], F32)
    median("f32 [16777216, 16777218, 0, 3e7]", [16777216, 16777218, 0, 3e7], F32)
    median("i32 [MAX, MAX-1, MIN, MAX]", [2**31 - 1, 2**31 - 2, -2**31, 2**31 - 1], np.int32)
    median("i32 [-7, 4]", [-7, 4], np.int32)
    median("i64 [2^53+1, 2^53+2, -1, 2^62]", [2**53 + 1, 2**53 + 2, -1, 2**62], np.int64)
    median("i64 [2^62+1, 2^62+3]", [2**62 + 1, 2**62 + 3], np.int64)
    median("i64 [MAX, MAX-1]", [2**63 - 1, 2**63 - 2], np.int64)
    median("i64 [MIN, MAX]", [-2**63, 2**63 - 1], np.int64)
    median("i64 [2^53+1, 5, -3]", [2**53 + 1, 5, -3], np.int64)
    median("u32 [MAX, 0]", [2**32 - 1, 0], np.uint32)
    median("u32 [MAX, MAX-1, 1, 2]", [2**32 - 1, 2**32 - 2, 1, 2], np.uint32)
    median("u64 [MAX, MAX-1]", [2**64 - 1, 2**64 - 2], np.uint64)
    median("u64 [2^53+1, 2^53+3, 0, MAX]", [2**53 + 1, 2**53 + 3, 0, 2**64 - 1], np.uint64)

    print("\n# Overflow (numpy: inf with a warning; kselect: a / 2 + b / 2)")
    big = np.finfo(F64).max
    median("f64 [1e308, 1.5e308]", [1e308, 1.5e308], F64)
    overflow_mean("f64", 1e308, 1.5e308)
    median("f64 [-MAX, -1.5e308, -MAX, -1e308]", [-big, -1.5e308, -big, -1e308], F64)
    overflow_mean("f64", -big, -1.5e308)
    median("f32 [3e38, 3.2e38]", [3e38, 3.2e38], F32)
    overflow_mean("f32", F32(3e38), F32(3.2e38))

    print("\n# Infinities")
    median("f64 [-inf, inf]", [-INF, INF], F64)
    median("f64 [1, inf]", [1, INF], F64)
    median("f64 [-inf, -inf, inf, inf]", [-INF, -INF, INF, INF], F64)
    median("f64 [-inf, 1, 2, inf]", [-INF, 1, 2, INF], F64)
    median("f32 [inf, inf]", [INF, INF], F32)

    print("\n# n = 1 and 2")
    median("f64 [2.5]", [2.5], F64)
    median("f32 [-3.25, 1e-45]", [-3.25, 1e-45], F32)
    median("u64 [MAX]", [2**64 - 1], np.uint64)

    print("\n# NaN: numpy.median is NaN with any NaN")
    a = np.arange(24, dtype=F64)
    a[2] = NAN
    median("f64 arange(24), a[2] = nan", a, F64)
    median("f64 [1, 2, 3, nan]", [1, 2, 3, NAN], F64)
    median("f64 nanmedian arange(24), a[2] = nan", a, F64, nan=True)
    median("f64 nanmedian [1, 2, 3, nan]", [1, 2, 3, NAN], F64, nan=True)
    median("f64 nanmedian [nan, nan]", [NAN, NAN], F64, nan=True)
    median("f64 median []", [], F64)

    print("\n# TestMedian.test_basic, test_axis_keyword, test_overwrite_keyword")
    median("arange(2)", np.arange(2), np.int64)
    median("arange(6)", np.arange(6), np.int64)
    for i, col in enumerate(np.arange(6).reshape(2, 3).T):
        median(f"arange(6).reshape(2, 3)[:, {i}]", col, np.int64)
    for i, row in enumerate(np.arange(6).reshape(2, 3)):
        median(f"arange(6).reshape(2, 3)[{i}]", row, np.int64)
    median("[0.0444502, 0.0463301, 0.141249, 0.0606775]",
           [0.0444502, 0.0463301, 0.141249, 0.0606775], F64)
    median("[0.0463301, 0.0444502, 0.141249]", [0.0463301, 0.0444502, 0.141249], F64)
    median("[0.0444502, 0.141249, 0.0463301]", [0.0444502, 0.141249, 0.0463301], F64)
    a3 = np.array([[2, 3], [0, 1], [6, 7], [4, 5]])
    median("a3", a3.ravel(), np.int64)
    for i, col in enumerate(a3.T):
        median(f"a3[:, {i}]", col, np.int64)
    a4 = np.arange(3 * 4 * 5, dtype=F32)
    median("arange(60, float32)", a4, F32)

    print("\n# TestNanFunctions_Median.test_result_values (rows of _ndat)")
    ndat = np.array([[0.6244, NAN, 0.2692, 0.0116, NAN, 0.1170],
                     [0.5351, -0.9403, NAN, 0.2100, 0.4759, 0.2833],
                     [NAN, NAN, NAN, 0.1042, NAN, -0.5954],
                     [0.1610, NAN, NAN, 0.1859, 0.3146, NAN]])
    for i, row in enumerate(ndat):
        median(f"_ndat[{i}]", row, F64, nan=True)
    median("_ndat", ndat.ravel(), F64, nan=True)

    print("\n# TestNanFunctions_Median.test_float_special")
    for sign, inf in [("+", INF), ("-", -INF)]:
        a = np.array([[inf, 7, -inf, -9],
                      [-10, NAN, NAN, 5],
                      [4, NAN, NAN, inf]], dtype=F32)
        median(f"{sign} f32 a", a.ravel(), F32, nan=True)
        for i, col in enumerate(a.T):
            median(f"{sign} f32 a[:, {i}]", col, F32, nan=True)
        for i, row in enumerate(a):
            median(f"{sign} f32 a[{i}]", row, F32, nan=True)
        for rows in ([[inf, NAN], [NAN, NAN]], [[NAN, NAN, inf], [NAN, NAN, inf]],
                     [[inf, inf], [inf, inf]]):
            median(f"{sign} {rows}", np.ravel(rows), F64, nan=True)
        results = set()
        for i in range(10):
            for j in range(1, 10):
                a = np.array([[NAN] * i + [inf] * j] * 2)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", RuntimeWarning)
                    results.add(float(np.nanmedian(a)))
                    results.add(float(np.nanmedian(a[0])))
        print(f"{sign} [nan] * i + [inf] * j, i < 10, 0 < j < 10: {sorted(results)}")

    print("\n# TestNanFunctions_Median.test_small_large (deterministic data)")
    for s in [5, 20, 51, 200, 1000]:
        a = np.array(lcg_values(s, s), dtype=F64)
        a[0] = 1.0
        show(f"lcg_values({s}, {s}) with [0] = 1.0 (nan: {np.isnan(a).sum()})",
             np.nanmedian(a))

    print("\n# TestNanFunctions_Median.test_scalar, test_allnans")
    median("nanmedian [0.0]", [0.0], F64, nan=True)
    median("nanmedian f32 [nan] * 9", [NAN] * 9, F32, nan=True)


if __name__ == "__main__":
    main()
