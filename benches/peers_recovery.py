#!/usr/bin/env python3
"""PyTorch peers of benches/recovery.rs: NIHT and HTP written with torch on a CUDA GPU, the
hard threshold by torch.topk of the magnitudes, on the same shapes (dense Gaussian N(0, 1/m)
matrices drawn by torch, k-sparse signals with N(0, 1) nonzeros).

NIHT follows Blumensath & Davies as src/recovery/iterative.rs does: the step |g_S|^2 / |A g_S|^2
on the current support, halved by 2 (1 - 0.01) while the support changes and the step exceeds
0.99 |x' - x|^2 / |A (x' - x)|^2; the residual updated by linearity while the support holds.
HTP takes NIHT's step to choose the support and least squares on it by CGLS (at most 50 steps).
Both stop when |y - A x| <= tol |y| (tol 1e-5 for f32, 1e-10 for f64) or after 5000 iterations.

Each time is one solve between CUDA events (the operator and y already on the GPU), median of
--reps after one untimed solve; the time an iteration is that over the iterations run. The floor
is A x and A^T y once each (torch.mv), median of 20 after 3.

    python3 benches/peers_recovery.py --n 16384 --m 8192 --rho 0.1 --dtype f32 --json peers.json
"""
import argparse
import json
import statistics
import sys

import torch


def threshold(v, k):
    idx = torch.topk(v.abs(), k, sorted=False).indices
    return torch.sort(idx).values


def restrict(v, idx):
    out = torch.zeros_like(v)
    out[idx] = v[idx]
    return out


def start(A, y, k):
    """The start at x = 0: x, r = y, g = A^T y, the support of the k largest of g, and |y|."""
    x = torch.zeros(A.shape[1], device=A.device, dtype=A.dtype)
    r = y.clone()
    g = A.T @ r
    return x, r, g, threshold(g, k), torch.linalg.norm(y).item()


def step(A, g, supp):
    """NIHT's step |g_S|^2 / |A g_S|^2 on the support S, and A g_S."""
    gs = restrict(g, supp)
    ag = A @ gs
    return (gs @ gs / (ag @ ag)).item(), ag


def niht(A, y, k, tol, maxit):
    x, r, g, supp, ny = start(A, y, k)
    it = 0
    while it < maxit:
        mu, ag = step(A, g, supp)
        while True:
            v = x + mu * g
            idx = threshold(v, k)
            nxt = restrict(v, idx)
            if idx.shape == supp.shape and torch.equal(idx, supp):
                r = r - mu * ag
                moved = False
                break
            d = nxt - x
            ad = A @ d
            omega = 0.99 * (d @ d / (ad @ ad)).item()
            if mu <= omega:
                r = r - ad
                moved = True
                break
            mu /= 2 * 0.99
        x, supp = nxt, idx
        it += 1
        if it % 32 == 0 or moved:
            r = y - A @ x
        if torch.linalg.norm(r).item() <= tol * ny:
            r = y - A @ x
            if torch.linalg.norm(r).item() <= tol * ny:
                break
        g = A.T @ r
    return x, it


def cgls(A, y, supp, z, tol, steps=50):
    r = y - A @ z
    s = restrict(A.T @ r, supp)
    p = s.clone()
    gamma = (s @ s).item()
    start = gamma ** 0.5
    for _ in range(steps):
        if gamma == 0 or gamma ** 0.5 <= tol * start:
            break
        q = A @ p
        alpha = gamma / (q @ q).item()
        z = z + alpha * p
        r = r - alpha * q
        s = restrict(A.T @ r, supp)
        nxt = (s @ s).item()
        p = s + (nxt / gamma) * p
        gamma = nxt
    return z, r


def htp(A, y, k, tol, maxit):
    x, r, g, supp, ny = start(A, y, k)
    it = 0
    while it < maxit:
        mu, ag = step(A, g, supp)
        v = x + mu * g
        supp = threshold(v, k)
        x, r = cgls(A, y, supp, restrict(v, supp), tol)
        it += 1
        if torch.linalg.norm(r).item() <= tol * ny:
            break
        g = A.T @ r
    return x, it


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--n", type=int, default=16384)
    p.add_argument("--m", type=int, default=None)
    p.add_argument("--rho", type=float, default=0.1)
    p.add_argument("--dtype", default="f32", choices=("f32", "f64"))
    p.add_argument("--algorithms", default="niht,htp")
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--json", default=None)
    args = p.parse_args()
    if not torch.cuda.is_available():
        print("no CUDA device", file=sys.stderr)
        return 1
    torch.backends.cuda.matmul.allow_tf32 = False
    dev = torch.device("cuda")
    dtype = torch.float32 if args.dtype == "f32" else torch.float64
    n = args.n
    m = args.m or n // 2
    k = max(1, round(args.rho * m))
    gen = torch.Generator(device=dev).manual_seed(args.seed)
    A = torch.randn(m, n, device=dev, dtype=dtype, generator=gen) / m ** 0.5
    x0 = torch.zeros(n, device=dev, dtype=dtype)
    pos = torch.randperm(n, device=dev, generator=gen)[:k]
    x0[pos] = torch.randn(k, device=dev, dtype=dtype, generator=gen)
    y = A @ x0
    tol = 1e-5 if args.dtype == "f32" else 1e-10

    def timed(f, reps, warmups):
        for _ in range(warmups):
            f()
        times = []
        for _ in range(reps):
            b, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            b.record()
            out = f()
            e.record()
            e.synchronize()
            times.append(b.elapsed_time(e))
        return statistics.median(times), times, out

    xs = torch.ones(n, device=dev, dtype=dtype)
    floor, _, _ = timed(lambda: (A @ xs, A.T @ y), 20, 3)
    print(f"{torch.cuda.get_device_name(0)}: n = {n}, m = {m}, k = {k}, {args.dtype}; floor {floor:.4f} ms")
    results = []
    for name in args.algorithms.split(","):
        solve = {"niht": niht, "htp": htp}[name]
        ms, times, (x, its) = timed(lambda: solve(A, y, k, tol, 5000), args.reps, 1)
        err = ((x - x0).abs().max() / x0.abs().max()).item()
        per = ms / max(its, 1)
        print(f"torch-{name}: {its} iterations, {ms:.3f} ms, {per:.4f} ms an iteration, {per / floor:.2f} x floor, error {err:.1e}")
        results.append(dict(peer=f"torch-{name}", iterations=its, solve_ms=ms, times_ms=times,
                            ms_per_iteration=per, floor_ms=floor, x_floor=per / floor, relative_error=err))
    if args.json:
        doc = dict(device=torch.cuda.get_device_name(0), n=n, m=m, k=k, dtype=args.dtype,
                   torch=torch.__version__, command=" ".join(sys.argv), results=results)
        with open(args.json, "w") as f:
            json.dump(doc, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
