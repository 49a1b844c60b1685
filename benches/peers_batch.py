#!/usr/bin/env python3
"""Batched top-k, k-th value and hard-thresholding peers on the GPU, timed the way
benches/gpu_select.rs times kselect (and benches/peers.py times the one-array peers).

Rows: each RxC matrix of --shapes is timed with torch.topk along dim 1 for every k of --ks-long
(rows of at least --long-cols values) or --ks-short (shorter rows), as the k largest sorted, the
k largest unsorted and the k smallest sorted; then torch.kthvalue at rank C/2 (0-based) and a
full torch.sort along dim 1, once per shape. Hard thresholding: each 1-D array of 2^n values
(--threshold-sizes) keeps its k largest magnitudes for every k of --threshold-ks, the way a
PyTorch user writes H_k (torch.topk of |x|, unsorted, then zeros and a scatter), and the same
with cupy.argpartition when CuPy is installed. Each input has its one-read floor (torch.sum over
the same array) measured in the same run. CUDA events around each call after warm-up, median of
--reps runs (--slow-reps for calls slower than 100 ms), inputs rotated among copies totalling
>= 512 MiB so that L2 never holds the input (one copy when the input alone is that large).

    python3 benches/peers_batch.py --json batch.json
    python3 benches/peers_batch.py --shapes 1024x1048576 --ks-long 32,1024,65536 --types f32,f64 \\
        --dists uniform,normal --json rows.json
    python3 benches/peers_batch.py --shapes "" --threshold-sizes 24,26,28 --threshold-ks n/1000,n/100
    python3 benches/peers_batch.py --dry-run    # the cases it would time: no torch, no GPU

An empty --shapes or --threshold-sizes skips that part. Cheap checks run once per case before
the timings, on the first 4 rows (top-k, k-th value, sort: equal to torch.sort of those rows,
values exactly, indices by gathering them back) or the whole array (hard thresholding: k distinct
indices, values kept exactly, zeros elsewhere, no dropped magnitude above a kept one). A peer that
fails records its error ("out of memory" for CUDA's) instead of a time, and the run goes on.

The JSON is {"device", "date", "command", "torch", "cupy", "timing", "floor", "results"}, rewritten
after each case so that a run cut short keeps the cases it finished. Each result:

    {"shape": "1024x1048576", "rows": 1024, "cols": 1048576, "type": "f32", "dist": "uniform",
     "case": "torch.topk", "k": 1024, "largest": true, "sorted": true, "bytes": 4294967296,
     "copies": 1, "ms": 12.3, "min_ms": 12.2, "reps": 21, "floor_ms": 1.7, "ratio": 7.2,
     "correct": true}

Cases: "floor" (k, largest, sorted null; ratio 1), "torch.topk", "torch.kthvalue" (k = C/2, the
0-based rank; largest and sorted null), "torch.sort" (k, largest, sorted null),
"torch.topk-abs+scatter" and "cupy.argpartition-abs+scatter" (shape is n as a string, with "n"
in place of rows and cols; largest true: the largest magnitudes; sorted false). A failed case
has "error" in place of ms, min_ms, reps, ratio and correct; correct is null where nothing is
checked.
"""
import argparse
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from peers_common import copies_for, import_cupy, timed, write_json  # noqa: E402

ELEMENT_BYTES = {"f32": 4, "f64": 8}
DISTS = ("uniform", "normal")
CHECK_ROWS = 4  # rows checked against torch.sort of the same rows


def parse_list(text):
    """The items of a comma-separated option; an empty option is an empty list."""
    return [s.strip() for s in text.split(",") if s.strip()]


def parse_shape(text):
    """'RxC' as (R, C)."""
    rows, cols = text.lower().split("x")
    return int(rows), int(cols)


def parse_k(expr, n):
    """A k for hard thresholding: 'n/D' (n // D) or a number."""
    expr = expr.replace(" ", "")
    if expr.startswith("n/"):
        return n // int(expr[2:])
    return int(expr)


def case(name, k=None, largest=None, sorted_=None):
    return dict(case=name, k=k, largest=largest, sorted=sorted_)


def plan(args):
    """The inputs to make and the cases to time on each, without torch: a list of groups, each
    one input (type, distribution, shape) with its cases in the order they run (its floor,
    timed first, is not listed)."""
    types, dists = parse_list(args.types), parse_list(args.dists)
    for t in types:
        if t not in ELEMENT_BYTES:
            sys.exit(f"unknown type {t!r}: {', '.join(ELEMENT_BYTES)}")
    for d in dists:
        if d not in DISTS:
            sys.exit(f"unknown distribution {d!r}: {', '.join(DISTS)}")
    shapes = [parse_shape(s) for s in parse_list(args.shapes)]
    ks_long = [int(s) for s in parse_list(args.ks_long)]
    ks_short = [int(s) for s in parse_list(args.ks_short)]
    threshold_sizes = [int(s) for s in parse_list(args.threshold_sizes)]
    threshold_ks = parse_list(args.threshold_ks)

    groups = []
    skipped = set()  # each skipped k told once, not once per type and distribution

    def skip(note):
        if note not in skipped:
            skipped.add(note)
            print(f"skipped: {note}", file=sys.stderr)

    for t in types:
        for dist in dists:
            for rows, cols in shapes:
                cases = []
                for k in ks_long if cols >= args.long_cols else ks_short:
                    if not 1 <= k <= cols:
                        skip(f"k = {k} for rows of {cols}")
                        continue
                    cases += [case("torch.topk", k, True, True), case("torch.topk", k, True, False),
                              case("torch.topk", k, False, True)]
                cases += [case("torch.kthvalue", cols // 2), case("torch.sort")]
                groups.append(dict(kind="rows", type=t, dist=dist, shape=f"{rows}x{cols}", dims=(rows, cols),
                                   extra=dict(rows=rows, cols=cols), cases=cases))
            for log2n in threshold_sizes:
                n = 1 << log2n
                cases = []
                for expr in threshold_ks:
                    k = parse_k(expr, n)
                    if not 1 <= k <= n:
                        skip(f"k = {expr} = {k} for n = 2^{log2n}")
                        continue
                    cases += [case("torch.topk-abs+scatter", k, True, False),
                              case("cupy.argpartition-abs+scatter", k, True, False)]
                groups.append(dict(kind="threshold", type=t, dist=dist, shape=str(n), dims=(n,),
                                   extra=dict(n=n), cases=cases))
    for g in groups:
        g["bytes"] = ELEMENT_BYTES[g["type"]] * math.prod(g["dims"])
        g["copies"] = copies_for(g["bytes"])
    return groups


def describe_case(c):
    """The case as printed: name, k and order."""
    text = c["case"]
    if c["k"] is not None:
        text += f" k={c['k']}"
    if c["largest"] is not None:
        text += " largest" if c["largest"] else " smallest"
    if c["sorted"] is not None:
        text += " sorted" if c["sorted"] else " unsorted"
    return text


def dry_run(groups):
    """Print the plan: each input, its size and copies, and its cases."""
    for g in groups:
        print(f"{g['type']:>4} {g['dist']:>8} {g['shape']:>14}  {g['bytes'] / (1 << 20):10.1f} MiB"
              f"  x{g['copies']} copies")
        for c in [case("floor")] + g["cases"]:
            print(f"{'':>30}{describe_case(c)}")
    print(f"{len(groups)} inputs, {sum(len(g['cases']) + 1 for g in groups)} cases")


def run(args, groups):
    import torch

    cupy = import_cupy()

    dev = torch.device("cuda")
    dtypes = {"f32": torch.float32, "f64": torch.float64}
    gen = torch.Generator(device=dev)
    gen.manual_seed(1234)
    oom = getattr(torch.cuda, "OutOfMemoryError", ())

    def make(dtype, dist, dims):
        # Made in its own type: a 4 GiB f32 matrix needs no f64 temporary.
        draw = torch.randn if dist == "normal" else torch.rand
        return draw(dims, device=dev, dtype=dtypes[dtype], generator=gen)

    def free():
        # Give back what the caching allocators hold, CuPy's too (its pool is not PyTorch's).
        torch.cuda.empty_cache()
        if cupy is not None:
            cupy.get_default_memory_pool().free_all_blocks()

    def describe_error(e):
        text = str(e)
        if isinstance(e, oom) or "out of memory" in text.lower():
            return "out of memory"
        return (text.splitlines() or [type(e).__name__])[0][:200] or type(e).__name__

    def measure(fn, check, copies):
        """Check fn once on the first copy, then time it; a dict of the results or of the error.
        A function of its own so that the checked output is freed before the timings begin."""
        try:
            got = fn(copies[0])
            correct = None if check is None else bool(check(copies[0], got))
            del got
            ms, min_ms, reps = timed(fn, copies, args.reps, args.slow_reps, start=1)
        except Exception as e:  # out of memory, unsupported type or size
            return dict(error=describe_error(e))
        return dict(ms=ms, min_ms=min_ms, reps=reps, correct=correct)

    # The cases of a matrix: (function, check) with the reference rows from torch.sort.
    def rows_case(c, ref_asc, ref_desc):
        name, k = c["case"], c["k"]
        head = CHECK_ROWS

        def gathered(a, got):
            # The indices point at the values returned.
            idx = got.indices[:head]
            vals = got.values[:head]
            if idx.dim() == 1:
                return torch.equal(a[:head].gather(1, idx.unsqueeze(1)).squeeze(1), vals)
            return torch.equal(a[:head].gather(1, idx), vals)

        if name == "torch.topk":
            largest, sorted_ = c["largest"], c["sorted"]

            def check(a, got):
                vals = got.values[:head]
                if not sorted_:
                    vals = torch.sort(vals, dim=1, descending=largest).values
                want = (ref_desc if largest else ref_asc)[:, :k]
                return gathered(a, got) and torch.equal(vals, want)

            return (lambda a: torch.topk(a, k, dim=1, largest=largest, sorted=sorted_)), check
        if name == "torch.kthvalue":
            # torch's k is 1-based: rank k (0-based) is kthvalue's k + 1.
            return ((lambda a: torch.kthvalue(a, k + 1, dim=1)),
                    lambda a, got: gathered(a, got) and torch.equal(got.values[:head], ref_asc[:, k]))
        if name == "torch.sort":
            return ((lambda a: torch.sort(a, dim=1)),
                    lambda a, got: gathered(a, got) and torch.equal(got.values[:head], ref_asc))
        raise ValueError(name)

    # The cases of hard thresholding: each returns (output, kept indices).
    def torch_threshold(a, k):
        idx = torch.topk(a.abs(), k, sorted=False).indices
        out = torch.zeros_like(a)
        out[idx] = a[idx]
        return out, idx

    def cupy_threshold(a, k):
        c = cupy.asarray(a)
        idx = cupy.argpartition(-cupy.abs(c), k - 1)[:k]
        out = cupy.zeros_like(c)
        out[idx] = c[idx]
        return out, idx

    def threshold_check(k):
        def check(a, got):
            out, idx = (torch.as_tensor(t, device=dev) for t in got)
            kept = torch.zeros(a.shape[0], dtype=torch.bool, device=dev)
            kept[idx.long()] = True
            if int(kept.sum()) != k:  # k distinct indices
                return False
            if not torch.equal(out[kept], a[kept]) or bool((out[~kept] != 0).any()):
                return False
            mag = a.abs()
            return k == a.shape[0] or mag[kept].min().item() >= mag[~kept].max().item()
        return check

    def threshold_case(c):
        name, k = c["case"], c["k"]
        if name == "torch.topk-abs+scatter":
            return (lambda a: torch_threshold(a, k)), threshold_check(k)
        if name == "cupy.argpartition-abs+scatter":
            return (lambda a: cupy_threshold(a, k)), threshold_check(k)
        raise ValueError(name)

    results = []

    def dump():
        write_json(args.json, cupy, results)

    def record(g, c, outcome, floor_ms):
        row = dict(shape=g["shape"], **g["extra"], type=g["type"], dist=g["dist"], **c,
                   bytes=g["bytes"], copies=g["copies"])
        row.update(outcome)
        label = f"{g['type']:>4} {g['dist']:>8} {g['shape']:>14} {describe_case(c):>52}"
        if "error" in outcome:
            print(f"{label}  error: {outcome['error']}")
        else:
            row["floor_ms"] = floor_ms
            row["ratio"] = outcome["ms"] / floor_ms
            mark = {True: "ok", False: "MISMATCH", None: ""}[outcome["correct"]]
            print(f"{label} {outcome['ms']:10.3f} ms  floor {floor_ms:8.3f} ms"
                  f"  x{row['ratio']:8.2f}  {mark}")
        results.append(row)
        dump()

    for g in groups:
        cases = [c for c in g["cases"] if cupy is not None or not c["case"].startswith("cupy.")]
        try:
            x = make(g["type"], g["dist"], g["dims"])
            copies = [x] + [x.clone() for _ in range(g["copies"] - 1)]
            del x
        except Exception as e:  # out of memory making the input: nothing to time on it
            copies = None
            record(g, case("floor"), dict(error=describe_error(e)), None)
        if copies is None:
            free()
            continue
        floor = measure(lambda a: a.sum(), None, copies)
        record(g, case("floor"), floor, floor.get("ms"))
        if "error" in floor:
            del copies
            free()
            continue
        floor_ms = floor["ms"]
        ref_asc = ref_desc = None
        if g["kind"] == "rows":
            ref_asc = torch.sort(copies[0][:CHECK_ROWS], dim=1).values
            ref_desc = ref_asc.flip(1)  # no NaN: descending values are the ascending ones reversed
        for c in cases:
            fn, check = rows_case(c, ref_asc, ref_desc) if g["kind"] == "rows" else threshold_case(c)
            outcome = measure(fn, check, copies)
            record(g, c, outcome, floor_ms)
            if "error" in outcome:
                free()
        del copies, ref_asc, ref_desc
        free()
    dump()
    bad = sum(1 for r in results if r.get("correct") is False)
    failed = sum(1 for r in results if "error" in r)
    print(f"{len(results)} cases: {bad} mismatched, {failed} failed")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--shapes", default="1024x1048576,65536x1024",
                   help="matrices RxC, comma separated (empty: none)")
    p.add_argument("--ks-long", default="32,1024,65536", help="k for rows of at least --long-cols values")
    p.add_argument("--ks-short", default="16,256", help="k for shorter rows")
    p.add_argument("--long-cols", type=int, default=65536, help="the shortest row that takes --ks-long")
    p.add_argument("--threshold-sizes", default="26",
                   help="log2 of n for hard thresholding, comma separated (empty: none)")
    p.add_argument("--threshold-ks", default="n/1000,n/100", help="k for hard thresholding: n/D or a number")
    p.add_argument("--types", default="f32", help="f32,f64")
    p.add_argument("--dists", default="uniform", help="uniform (in [0, 1)), normal")
    p.add_argument("--reps", type=int, default=21)
    p.add_argument("--slow-reps", type=int, default=3, help="reps for calls slower than 100 ms")
    p.add_argument("--json", default=None)
    p.add_argument("--dry-run", action="store_true", help="print the cases without running them (no torch)")
    args = p.parse_args()
    groups = plan(args)
    if args.dry_run:
        dry_run(groups)
        return
    run(args, groups)


if __name__ == "__main__":
    main()
