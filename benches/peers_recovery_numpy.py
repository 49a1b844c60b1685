#!/usr/bin/env python3
"""numpy peers of benches/recovery.rs on the CPU: NIHT and HTP written with plain numpy
(float32 or float64), for a dense Gaussian A with N(0, 1/m) entries, n = 2^12 by default,
m = n / 2, k = round(rho m), a k-sparse signal with N(0, 1) nonzeros at random positions,
y = A x.

NIHT (Blumensath & Davies, normalised IHT): with S the current support and g = A^T (y - A x),
the step mu = |g_S|^2 / |A g_S|^2 and the candidate x' = H_k(x + mu g); if supp(x') != S,
omega = (1 - c) |x' - x|^2 / |A (x' - x)|^2 with c = 0.01, and while mu > omega, mu is divided
by 2 (1 - c) and x' (and omega) computed again. The residual is updated by linearity
(r' = r - mu A g_S, or r - A (x' - x) when the support moved) and recomputed every 32
iterations and before stopping.
HTP: mu as NIHT, T = supp(H_k(x + mu g)), x' = the least-squares solution on A[:, T]
(numpy.linalg.lstsq), zero off T.
Both stop when |y - A x| <= tol |y| (tol 1e-5 for float32, 1e-10 for float64) or after 5000
iterations.

Each solve is timed by the wall clock (time.perf_counter), median of --reps after one untimed
solve; ms per iteration = that median over the iterations run. The floor is the median time of
one A @ x plus one A.T @ r (median of 20 after 3). relative_error is max|x - x0| / max|x0|,
as benches/recovery.rs reports it. BLAS threads are whatever numpy's BLAS chooses (leave
OMP_NUM_THREADS / OPENBLAS_NUM_THREADS unset to use every core).

    python3 benches/peers_recovery_numpy.py --n 4096 --rho 0.1 --dtype f32 --json numpy-f32.json
"""
import argparse
import json
import os
import statistics
import sys
import time

import numpy as np


def threshold(v, k):
    """Indices (ascending) of the k entries of largest magnitude.

    numpy.argpartition does not order ties by index as kselect does (kselect keeps the
    smaller index among equal magnitudes); ties do not occur with Gaussian data in practice.
    """
    n = v.shape[0]
    idx = np.argpartition(np.abs(v), n - k)[n - k:]
    idx.sort()
    return idx


def restrict(v, idx):
    out = np.zeros_like(v)
    out[idx] = v[idx]
    return out


def start(A, y, k):
    """The start at x = 0: x, r = y, g = A^T y, the support of the k largest of g, and |y|."""
    x = np.zeros(A.shape[1], dtype=A.dtype)
    r = y.copy()
    g = A.T @ r
    return x, r, g, threshold(g, k), np.linalg.norm(y)


def step(A, g, supp):
    gs = restrict(g, supp)
    ag = A @ gs
    return float(gs @ gs) / float(ag @ ag), ag


def niht(A, y, k, tol, maxit, c=0.01):
    x, r, g, supp, ny = start(A, y, k)
    it = 0
    while it < maxit:
        mu, ag = step(A, g, supp)
        while True:
            v = x + A.dtype.type(mu) * g
            idx = threshold(v, k)
            nxt = restrict(v, idx)
            if np.array_equal(idx, supp):
                r = r - A.dtype.type(mu) * ag
                moved = False
                break
            d = nxt - x
            ad = A @ d
            omega = (1 - c) * float(d @ d) / float(ad @ ad)
            if mu <= omega:
                r = r - ad
                moved = True
                break
            mu /= 2 * (1 - c)
        x, supp = nxt, idx
        it += 1
        if it % 32 == 0 or moved:
            r = y - A @ x
        if np.linalg.norm(r) <= tol * ny:
            r = y - A @ x
            if np.linalg.norm(r) <= tol * ny:
                break
        g = A.T @ r
    return x, it


def htp(A, y, k, tol, maxit):
    x, r, g, supp, ny = start(A, y, k)
    it = 0
    while it < maxit:
        mu, _ = step(A, g, supp)
        supp = threshold(x + A.dtype.type(mu) * g, k)
        x = np.zeros_like(x)
        x[supp] = np.linalg.lstsq(A[:, supp], y, rcond=None)[0]
        r = y - A @ x
        it += 1
        if np.linalg.norm(r) <= tol * ny:
            break
        g = A.T @ r
    return x, it


def blas_name():
    """The BLAS numpy was built with, from numpy.show_config, or None."""
    try:
        cfg = np.show_config(mode="dicts")
        return cfg["Build Dependencies"]["blas"]["name"]
    except Exception:
        return None


def timed(f, reps, warmups):
    for _ in range(warmups):
        out = f()
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        out = f()
        times.append(time.perf_counter() - t)
    return statistics.median(times), times, out


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--n", type=int, default=4096)
    p.add_argument("--m", type=int, default=None, help="default n / 2")
    p.add_argument("--rho", type=float, default=0.1, help="k = round(rho m)")
    p.add_argument("--dtype", default="f32", choices=("f32", "f64"))
    p.add_argument("--algorithms", default="niht,htp")
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--maxit", type=int, default=5000)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--json", default=None, help="also write the JSON object to this file")
    args = p.parse_args()

    dtype = np.float32 if args.dtype == "f32" else np.float64
    n = args.n
    m = args.m or n // 2
    k = max(1, round(args.rho * m))
    rng = np.random.default_rng(args.seed)
    A = (rng.standard_normal((m, n)) / np.sqrt(m)).astype(dtype)
    x0 = np.zeros(n, dtype=dtype)
    x0[rng.permutation(n)[:k]] = rng.standard_normal(k)
    y = A @ x0
    tol = 1e-5 if args.dtype == "f32" else 1e-10

    ones = np.ones(n, dtype=dtype)
    floor_s, _, _ = timed(lambda: (A @ ones, A.T @ y), 20, 3)
    doc = {
        "peer": "numpy",
        "numpy_version": np.__version__,
        "blas": blas_name(),
        "threads": os.cpu_count(),
        "n": n, "m": m, "k": k, "dtype": args.dtype,
        "floor_ms": floor_s * 1e3,
        "algorithms": [],
    }
    solvers = {"niht": niht, "htp": htp}
    for name in args.algorithms.split(","):
        solve = solvers[name]
        s, times, (x, its) = timed(lambda: solve(A, y, k, tol, args.maxit), args.reps, 1)
        err = float(np.abs(x.astype(np.float64) - x0).max() / np.abs(x0).max())
        doc["algorithms"].append({
            "name": name,
            "ms_per_iteration": s * 1e3 / max(its, 1),
            "iterations": its,
            "seconds": s,
            "relative_error": err,
            "times_s": times,
        })
    text = json.dumps(doc, indent=1)
    print(text)
    if args.json:
        with open(args.json, "w") as f:
            f.write(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
