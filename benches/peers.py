#!/usr/bin/env python3
"""Selection peers on the GPU, timed the way benches/gpu_select.rs times kselect.

PyTorch (torch.sort then index, torch.kthvalue, torch.topk(1024), torch.median, torch.quantile
where it accepts the size) and CuPy (cupy.partition), each against a one-read floor (torch.sum over the same array) measured in
the same run. CUDA events around each call after warm-up, median of --reps runs, inputs rotated
among copies totalling >= 512 MiB so that L2 never holds the input.

    python3 benches/peers.py --sizes 24,26,28 --types f32,f64 --json peers.json
    python3 benches/peers.py --sizes 24,28 --types f32,f64 --percentiles 11,101,1001 --json q.json

With --percentiles, each count M is timed as M uniformly spaced quantiles instead of one rank
(the input, its reference quantiles and the floor made once per type, distribution and size).
The JSON is rewritten after each type, distribution and size, so a run cut short keeps the
cases it finished.
"""
import argparse
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from peers_common import copies_for, import_cupy, timed, write_json  # noqa: E402


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--sizes", default="20,24,26,28", help="log2 of n, comma separated")
    p.add_argument("--types", default="f32,f64,u32", help="f32,f64,i32,i64,u32,u64")
    p.add_argument("--dists", default="uniform,normal")
    p.add_argument("--reps", type=int, default=21)
    p.add_argument("--slow-reps", type=int, default=3, help="reps for calls slower than 100 ms")
    p.add_argument("--json", default=None)
    p.add_argument("--percentiles", default="0",
                   help="counts M, comma separated: time M uniformly spaced quantiles (numpy's linear "
                        "method) instead of one rank, each M its own case: torch.quantile, "
                        "cupy.percentile, torch.sort + gather (0: one rank)")
    args = p.parse_args()
    counts = [int(s) for s in args.percentiles.split(",") if s.strip() and int(s) > 0]

    import torch

    cupy = import_cupy()

    dev = torch.device("cuda")
    dtypes = {
        "f32": torch.float32, "f64": torch.float64, "i32": torch.int32,
        "i64": torch.int64, "u32": torch.uint32, "u64": torch.uint64,
    }
    gen = torch.Generator(device=dev)
    gen.manual_seed(1234)

    def make(dtype, dist, n):
        if dist in ("normal", "half-normal"):
            x = torch.randn(n, device=dev, dtype=torch.float64, generator=gen)
            if dist == "half-normal":
                x = x.abs()
        elif dist == "cauchy":
            u = torch.rand(n, device=dev, dtype=torch.float64, generator=gen)
            x = torch.tan(math.pi * (u - 0.5))
        elif dist == "distinct16":
            x = torch.randint(0, 16, (n,), device=dev, generator=gen).to(torch.float64)
        elif dist == "sorted":
            x = torch.arange(n, device=dev, dtype=torch.float64) / n
        else:
            x = torch.rand(n, device=dev, dtype=torch.float64, generator=gen)
        if dtypes[dtype].is_floating_point:
            return x.to(dtypes[dtype])
        if dtype in ("u32", "u64"):
            x = x.abs()
        return (x * 1e6).to(torch.int64).to(dtypes[dtype])

    def floor_fn(a):
        # A plain reduction in the array's own type (PyTorch has no sum for unsigned types).
        if a.dtype == torch.uint32:
            return a.view(torch.int32).sum()
        if a.dtype == torch.uint64:
            return a.view(torch.int64).sum()
        return a.sum()

    rows = []

    def dump():
        write_json(args.json, cupy, rows)

    for dtype in args.types.split(","):
        for dist in args.dists.split(","):
            for log2n in [int(s) for s in args.sizes.split(",")]:
                n = 1 << log2n
                k = n // 2
                x = make(dtype, dist, n)
                nbytes = x.element_size() * n
                copies = [x.clone() for _ in range(copies_for(nbytes))]
                if counts:
                    # Reference quantiles for every count from one sort, freed before the timings.
                    ordered = torch.sort(x).values.to(torch.float64)
                    qsets = []
                    for m in counts:
                        probs = torch.linspace(0, 1, m, device=dev, dtype=torch.float64)
                        h = probs * (n - 1)
                        lo = h.floor().long()
                        hi = torch.clamp(lo + 1, max=n - 1)
                        expected = ordered[lo] + (h - lo) * (ordered[hi] - ordered[lo])
                        qsets.append((m, probs, lo, expected))
                    del ordered
                    floor_ms, _, _ = timed(floor_fn, copies, args.reps, args.slow_reps)
                    for m, probs, lo, expected in qsets:
                        qcases = {
                            "torch.quantile": lambda a, probs=probs: torch.quantile(a, probs.to(a.dtype)),
                            "torch.sort+gather": lambda a, lo=lo: torch.sort(a).values[lo],
                        }
                        if cupy is not None:
                            qcases["cupy.percentile"] = lambda a, probs=probs: cupy.percentile(
                                cupy.asarray(a), cupy.asarray(probs * 100))
                        for name, fn in qcases.items():
                            try:
                                got = torch.as_tensor(fn(copies[0]), device=dev).to(torch.float64)
                                if name == "torch.sort+gather":
                                    ok = True  # ranks only: the gather is what a quantile needs first
                                else:
                                    ok = bool(torch.allclose(got, expected, rtol=1e-5, atol=1e-6))
                                med, mn, _ = timed(fn, copies, args.reps, args.slow_reps)
                            except Exception as e:  # unsupported dtype or size
                                msg = str(e).splitlines()[0][:120]
                                print(f"{dtype:>4} {dist:>8} 2^{log2n:<2} {m:>5} {name:>17}  unsupported: {msg}")
                                rows.append(dict(dtype=dtype, dist=dist, n=n, peer=name, percentiles=m,
                                                 unsupported=msg))
                                continue
                            rows.append(dict(dtype=dtype, dist=dist, n=n, peer=name, percentiles=m,
                                             median_ms=med, min_ms=mn, floor_ms=floor_ms,
                                             ratio_to_floor=med / floor_ms, correct=ok, bytes=nbytes))
                            print(f"{dtype:>4} {dist:>8} 2^{log2n:<2} {m:>5} {name:>17} {med:10.3f} ms"
                                  f"  floor {floor_ms:8.3f} ms  x{med / floor_ms:8.2f}  {'ok' if ok else 'MISMATCH'}")
                    del copies, x, qsets
                    torch.cuda.empty_cache()
                    dump()
                    continue
                ordered = torch.sort(x.to(torch.float64) if dtype in ("u32", "u64") else x).values
                ref = ordered[k].item()
                # torch.quantile(q=0.5, interpolation="lower") takes rank floor(0.5 * (n - 1)).
                ref_lower_median = ordered[(n - 1) // 2].item()
                ref_top1024 = ordered[n - 1024].item()
                del ordered
                floor_ms, _, _ = timed(floor_fn, copies, args.reps, args.slow_reps)
                cases = {
                    "torch.sort": lambda a: torch.sort(a).values[k],
                    "torch.kthvalue": lambda a: torch.kthvalue(a, k + 1).values,
                    # The 1024 largest: the smallest of them is rank n - 1024.
                    "torch.topk(1024)": lambda a: torch.topk(a, 1024).values[-1],
                    # torch.median is the lower median, rank (n - 1) // 2.
                    "torch.median": lambda a: torch.median(a),
                }
                if dtypes[dtype].is_floating_point and n <= (1 << 24):
                    cases["torch.quantile"] = lambda a: torch.quantile(a, 0.5, interpolation="lower")
                if cupy is not None:
                    cases["cupy.partition"] = lambda a: cupy.partition(cupy.asarray(a), k)[k]
                for name, fn in cases.items():
                    try:
                        got = fn(copies[0])
                        got = float(got.item() if hasattr(got, "item") else got)
                        expected = {"torch.quantile": ref_lower_median, "torch.median": ref_lower_median,
                                    "torch.topk(1024)": ref_top1024}.get(name, ref)
                        ok = got == float(expected)
                        med, mn, _ = timed(fn, copies, args.reps, args.slow_reps)
                    except Exception as e:  # unsupported dtype or size
                        print(f"{dtype:>4} {dist:>8} 2^{log2n:<2} {name:>15}  unsupported: {str(e).splitlines()[0][:80]}")
                        continue
                    rows.append(dict(dtype=dtype, dist=dist, n=n, peer=name, median_ms=med, min_ms=mn,
                                     floor_ms=floor_ms, ratio_to_floor=med / floor_ms, correct=ok, bytes=nbytes))
                    print(f"{dtype:>4} {dist:>8} 2^{log2n:<2} {name:>15} {med:10.3f} ms  floor {floor_ms:8.3f} ms"
                          f"  x{med / floor_ms:8.2f}  {'ok' if ok else 'MISMATCH'}")
                del copies, x
                torch.cuda.empty_cache()
                dump()
    dump()


if __name__ == "__main__":
    main()
