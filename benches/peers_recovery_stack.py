#!/usr/bin/env python3
"""PyTorch peer of `benches/recovery.rs --operators each`: B problems, each with its own dense
Gaussian N(0, 1/m) operator (a B x m x n stack drawn by torch), solved together by IHT written
with torch on a CUDA GPU: x = H_k(x + mu A^T (y - A x)) for every problem at once, the products
by torch.bmm, the hard threshold by torch.topk of the magnitudes along each row, mu = 1 / |A_b|^2
(from torch.linalg.matrix_norm(ord=2), not timed).

Printed and written (--json): the time of an IHT iteration (a fixed --iterations run between
CUDA events, median of --reps after one untimed run, over the iterations), the floor of the
products (A x and A^T y of every problem by torch.bmm, median of 20 after 3), and a read of the
stack twice (torch.sum twice, median of 20 after 3).

    python3 benches/peers_recovery_stack.py --batch 1024 --n 1024 --m 512 --rho 0.1 --json p.json
"""
import argparse
import json
import statistics

import torch


def event_time(f, reps, warmups):
    for _ in range(warmups):
        f()
    times = []
    for _ in range(reps):
        start = torch.cuda.Event(enable_timing=True)
        stop = torch.cuda.Event(enable_timing=True)
        start.record()
        f()
        stop.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(stop))
    return statistics.median(times)


def iht(A, y, mu, k, iterations):
    """`iterations` IHT steps of every problem (rows of y, x), from x = 0."""
    batch, _, n = A.shape
    x = torch.zeros(batch, n, device=A.device, dtype=A.dtype)
    for _ in range(iterations):
        r = y - torch.bmm(A, x.unsqueeze(2)).squeeze(2)
        v = x + mu * torch.bmm(A.transpose(1, 2), r.unsqueeze(2)).squeeze(2)
        idx = torch.topk(v.abs(), k, dim=1, sorted=False).indices
        x = torch.zeros_like(v).scatter_(1, idx, v.gather(1, idx))
    return x


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--batch", type=int, default=1024)
    p.add_argument("--n", type=int, default=1024)
    p.add_argument("--m", type=int, default=None)
    p.add_argument("--rho", type=float, default=0.1)
    p.add_argument("--dtype", default="f32")
    p.add_argument("--iterations", type=int, default=50)
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--json", default=None)
    a = p.parse_args()
    dtype = torch.float32 if a.dtype == "f32" else torch.float64
    m = a.m or a.n // 2
    k = max(1, round(a.rho * m))
    dev = torch.device("cuda")
    gen = torch.Generator(device=dev).manual_seed(1)
    A = torch.randn(a.batch, m, a.n, device=dev, dtype=dtype, generator=gen) / m**0.5
    x = torch.zeros(a.batch, a.n, device=dev, dtype=dtype)
    for b in range(a.batch):
        idx = torch.randperm(a.n, device=dev, generator=gen)[:k]
        x[b, idx] = torch.randn(k, device=dev, dtype=dtype, generator=gen)
    y = torch.bmm(A, x.unsqueeze(2)).squeeze(2)
    mu = (1.0 / torch.linalg.matrix_norm(A, ord=2) ** 2).unsqueeze(1)

    xs = torch.ones(a.batch, a.n, 1, device=dev, dtype=dtype)
    ys = torch.ones(a.batch, m, 1, device=dev, dtype=dtype)
    At = A.transpose(1, 2)
    floor = event_time(lambda: (torch.bmm(A, xs), torch.bmm(At, ys)), 20, 3)
    read = event_time(lambda: (A.sum(), A.sum()), 20, 3)
    per = event_time(lambda: iht(A, y, mu, k, a.iterations), a.reps, 1) / a.iterations
    found = iht(A, y, mu, k, 500)
    err = ((found - x).abs().amax(dim=1) / x.abs().amax(dim=1)).cpu()
    recovered = int((err < 1e-3).sum())
    result = {
        "device": torch.cuda.get_device_name(),
        "batch": a.batch, "n": a.n, "m": m, "k": k, "dtype": a.dtype,
        "iht_ms_per_iteration": per, "bmm_floor_ms": floor, "read_floor_ms": read,
        "x_bmm_floor": per / floor, "x_read_floor": per / read,
        "recovered_in_500": recovered,
        "timing": "CUDA events; iteration: a run of --iterations, median of --reps after one, "
        "over the iterations; floors: median of 20 after 3",
    }
    print(
        f"torch IHT, {a.batch} problems of {m} x {a.n}, one operator each, k = {k}, {a.dtype}: "
        f"{per:.4f} ms / iteration; bmm floor (A x + A^T y) {floor:.4f} ms "
        f"({per / floor:.2f}x); two reads of the stack {read:.4f} ms ({per / read:.2f}x); "
        f"{recovered} of {a.batch} recovered in 500 iterations"
    )
    if a.json:
        with open(a.json, "w") as f:
            json.dump(result, f, indent=1)


if __name__ == "__main__":
    main()
