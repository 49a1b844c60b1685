#!/usr/bin/env python3
"""Exact k-nearest-neighbour peers of benches/knn.rs, on the same data and shapes.

PyTorch on a CUDA GPU:
  torch-matmul  the matrix form |q|^2 + |x|^2 - 2 q x^T (one matmul per chunk of queries),
                then torch.topk(largest=False) along each row (and a square root of the k
                values kept, clamped at 0, for the Euclidean metric);
  torch-cdist   torch.cdist(q, x) (its default compute mode, the matrix form at these sizes),
                then torch.topk(largest=False);
  torch-matmul-host  torch-matmul, then the lists copied to the host (Tensor.cpu(), inside
                the timing), as kselect's search(queries, k) returns them;
all for f32 (TF32 off: torch.backends.cuda.matmul.allow_tf32 = False) and f64, chunked over
the queries so that each chunk's distances (chunk x n values) fit in --chunk-bytes. The data
are on the GPU before the timing and the lists stay there except for torch-matmul-host (the
kselect GPU times include the copies both ways, or with --lists device only the queries' copy). Each time is all the chunks of one search between two CUDA events, median of
--reps after --warmups untimed searches. A peer that runs out of memory records the error and
the run goes on.

scikit-learn on the CPU: NearestNeighbors(n_neighbors=k, algorithm='brute', metric=M,
n_jobs=-1).fit(X).kneighbors(Q): its chunked matrix form (BLAS gemm, float64 accumulation for
float32 input too) and a heap per query. Each time is one kneighbors call, wall clock, median
of --reps after --warmups; the fit (which only stores X for brute force) is not timed.

KeOps (pykeops) is not a peer here: it compiles its kernels at first use with nvcc and a C++
toolchain fetched and cached on the machine, and the GPU machine has neither network access nor
that cache, so it cannot run there.

None of these is exact in the sense of benches/knn.rs: the matrix form cancels (its distances
differ from the canonical ones by rounding, and ties and near-ties may come out in another
order); they are the fast, common ways of doing the same search.

    python3 benches/peers_knn.py --peers sklearn --dtype f32,f64 --n 1e5 --d 32 \\
        --queries 1e4 --ks 1,10,100 --reps 3 --json sk.json
    python3 benches/peers_knn.py --peers torch-matmul,torch-cdist --dtype f32,f64 --n 1e6 \\
        --d 128 --queries 1e4 --ks 1,10,100 --reps 5 --json torch.json

The data are those of benches/knn.rs for the same --n, --d, --queries, --data and --seed: the
reference points are the first n d numbers of the SplitMix64 stream whose state starts at seed,
the queries the first queries d of the stream starting at seed ^ 0xD1B54A32D192ED03, row-major;
uniform: (u >> 11) 2^-53 (bit for bit the same numbers), normal: Box-Muller pairs (u1 = ((a >>
11) + 0.5) 2^-53, u2 = (b >> 11) 2^-53, sqrt(-2 ln u1) cos(2 pi u2), then sin; numpy's log and
cos may differ from Rust's in the last bit). Values are made in float64 and rounded for f32.

The JSON is {"device", "cpu", "date", "command", "versions", "n", "d", "queries", "metric",
"data", "seed", "timing", "results"}, rewritten after each case; each result is

    {"peer": "sklearn", "device": "cpu", "dtype": "f32", "k": 10, "seconds": 1.23,
     "times": [...], "chunk": null}

("chunk": the queries per chunk for the torch peers; "error" in place of "seconds" and "times"
for a case that failed).
"""
import argparse
import datetime
import json
import os
import platform
import sys
import time

import numpy as np

GAMMA = 0x9E3779B97F4A7C15
QUERY_STREAM = 0xD1B54A32D192ED03
PEERS = ("sklearn", "torch-matmul", "torch-cdist", "torch-matmul-host")
METRICS = ("euclidean", "sqeuclidean")


def count(text):
    """A count given as 100000 or 1e5."""
    return int(float(text))


def splitmix(state, count_):
    """The first count_ outputs of the SplitMix64 stream whose state starts at state."""
    with np.errstate(over="ignore"):
        i = np.arange(1, count_ + 1, dtype=np.uint64)
        z = np.uint64(state) + i * np.uint64(GAMMA)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return z ^ (z >> np.uint64(31))


def generate(count_, state, normal):
    """benches/knn.rs's `generate`: count_ uniform [0, 1) or standard normal float64 values."""
    scale = 1.0 / float(1 << 53)
    if not normal:
        return (splitmix(state, count_) >> np.uint64(11)).astype(np.float64) * scale
    pairs = (count_ + 1) // 2
    u = (splitmix(state, 2 * pairs) >> np.uint64(11)).astype(np.float64)
    u1 = (u[0::2] + 0.5) * scale
    u2 = u[1::2] * scale
    r = np.sqrt(-2.0 * np.log(u1))
    a = 2.0 * np.pi * u2
    out = np.empty(2 * pairs)
    out[0::2] = r * np.cos(a)
    out[1::2] = r * np.sin(a)
    return out[:count_]


def median(times):
    """The median of times (of an even number, the upper of the middle two, as the Rust
    benchmarks take it)."""
    return sorted(times)[len(times) // 2]


def cpu_name():
    """The CPU's model name and its logical CPUs."""
    model = platform.processor() or "unknown CPU"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return f"{model} ({os.cpu_count()} logical CPUs)"


class Run:
    """The JSON document of a run, rewritten after each case."""

    def __init__(self, args):
        self.args = args
        self.doc = dict(device=None, cpu=cpu_name(), date=datetime.date.today().isoformat(),
                        command=" ".join(sys.argv), versions=dict(numpy=np.__version__),
                        n=args.n, d=args.d, queries=args.queries, metric=args.metric,
                        data=args.data, seed=args.seed,
                        timing=("torch: all chunks of one search between CUDA events, data and "
                                "lists on the GPU; sklearn: one kneighbors call, wall clock; "
                                f"median of {args.reps} after {args.warmups} warm-up(s)"),
                        results=[])

    def add(self, result):
        self.doc["results"].append(result)
        line = f"{result['peer']:>13} {result['device']:>5} {result['dtype']:>4} {result['k']:>5}"
        if "error" in result:
            print(f"{line}  error: {result['error']}", flush=True)
        else:
            chunk = f"  (chunks of {result['chunk']})" if result.get("chunk") else ""
            print(f"{line} {result['seconds'] * 1e3:12.2f} ms{chunk}", flush=True)
        if self.args.json:
            with open(self.args.json, "w") as f:
                json.dump(self.doc, f, indent=1)


def run_sklearn(args, run, data):
    try:
        import sklearn
        from sklearn.neighbors import NearestNeighbors
        from threadpoolctl import threadpool_info
    except Exception as e:  # scikit-learn is optional
        print(f"sklearn unavailable: {e}", file=sys.stderr)
        return
    run.doc["versions"]["sklearn"] = sklearn.__version__
    run.doc["versions"]["threadpools"] = [
        dict(api=p.get("internal_api"), library=p.get("prefix"), threads=p.get("num_threads"),
             architecture=p.get("architecture")) for p in threadpool_info()]
    for dtype, (x, q) in data.items():
        for k in args.ks:
            result = dict(peer="sklearn", device="cpu", dtype=dtype, k=k, chunk=None)
            try:
                nn = NearestNeighbors(n_neighbors=k, algorithm="brute", metric=args.metric,
                                      n_jobs=-1).fit(x)
                for _ in range(args.warmups):
                    nn.kneighbors(q, k)
                times = []
                for _ in range(args.reps):
                    start = time.perf_counter()
                    nn.kneighbors(q, k)
                    times.append(time.perf_counter() - start)
                result.update(seconds=median(times), times=times)
            except Exception as e:  # recorded, and the run goes on
                result["error"] = f"{type(e).__name__}: {e}"
            run.add(result)


def run_torch(args, run, data, peers):
    try:
        import torch
    except Exception as e:  # PyTorch is optional
        print(f"torch unavailable: {e}", file=sys.stderr)
        return
    if not torch.cuda.is_available():
        print("torch: no CUDA device", file=sys.stderr)
        return
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    dev = torch.device("cuda")
    run.doc["device"] = torch.cuda.get_device_name(0)
    run.doc["versions"]["torch"] = torch.__version__
    types = {"f32": torch.float32, "f64": torch.float64}
    euclidean = args.metric == "euclidean"

    for dtype, (x_host, q_host) in data.items():
        x = torch.from_numpy(x_host).to(dev, types[dtype])
        q = torch.from_numpy(q_host).to(dev, types[dtype])
        n, m = x.shape[0], q.shape[0]
        chunk = max(1, min(m, args.chunk_bytes // (n * x.element_size())))
        for peer in peers:
            for k in args.ks:
                result = dict(peer=peer, device="cuda", dtype=dtype, k=k, chunk=chunk)
                values = torch.empty(m, k, device=dev, dtype=types[dtype])
                indices = torch.empty(m, k, device=dev, dtype=torch.int64)

                to_host = peer.endswith("-host")
                form = peer.removesuffix("-host")

                def search():
                    if form == "torch-matmul":
                        xx = (x * x).sum(dim=1)
                    for first in range(0, m, chunk):
                        qc = q[first:first + chunk]
                        if form == "torch-matmul":
                            dist = (qc * qc).sum(dim=1, keepdim=True) + xx[None, :]
                            dist.addmm_(qc, x.T, alpha=-2.0)
                        else:
                            dist = torch.cdist(qc, x)
                            if not euclidean:
                                dist.square_()
                        v, i = torch.topk(dist, k, dim=1, largest=False, sorted=True)
                        if form == "torch-matmul" and euclidean:
                            v = v.clamp_(min=0).sqrt_()
                        values[first:first + chunk] = v
                        indices[first:first + chunk] = i
                        del dist
                    if to_host:
                        values.cpu()
                        indices.cpu()

                try:
                    for _ in range(args.warmups):
                        search()
                    torch.cuda.synchronize()
                    begin = torch.cuda.Event(enable_timing=True)
                    end = torch.cuda.Event(enable_timing=True)
                    times = []
                    for _ in range(args.reps):
                        begin.record()
                        search()
                        end.record()
                        end.synchronize()
                        times.append(begin.elapsed_time(end) / 1e3)
                    result.update(seconds=median(times), times=times)
                except torch.cuda.OutOfMemoryError:
                    result["error"] = "out of memory"
                except Exception as e:  # recorded, and the run goes on
                    result["error"] = f"{type(e).__name__}: {e}"
                del values, indices
                torch.cuda.empty_cache()
                run.add(result)
        del x, q
        torch.cuda.empty_cache()


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--peers", default=",".join(PEERS), help="comma separated: " + ", ".join(PEERS))
    p.add_argument("--dtype", "--dtypes", default="f32", help="f32, f64 or both, comma separated")
    p.add_argument("--n", type=count, default=100_000, help="reference points (1e5 or 100000)")
    p.add_argument("--d", type=count, default=32, help="coordinates")
    p.add_argument("--queries", type=count, default=10_000)
    p.add_argument("--ks", default="1,10,100")
    p.add_argument("--metric", default="euclidean", choices=METRICS)
    p.add_argument("--data", default="uniform", choices=("uniform", "normal"))
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--warmups", type=int, default=1)
    p.add_argument("--chunk-bytes", type=count, default=2 << 30,
                   help="the most bytes of one chunk's distances on the GPU (default 2 GiB)")
    p.add_argument("--json", default=None)
    args = p.parse_args()
    args.ks = [int(s) for s in args.ks.split(",") if s.strip()]
    peers = [s.strip() for s in args.peers.split(",") if s.strip()]
    dtypes = [s.strip() for s in args.dtype.split(",") if s.strip()]
    for peer in peers:
        if peer not in PEERS:
            sys.exit(f"unknown peer {peer!r}: {', '.join(PEERS)}")
    for t in dtypes:
        if t not in ("f32", "f64"):
            sys.exit(f"unknown dtype {t!r}: f32, f64")

    normal = args.data == "normal"
    x64 = generate(args.n * args.d, args.seed, normal).reshape(args.n, args.d)
    q64 = generate(args.queries * args.d, args.seed ^ QUERY_STREAM, normal).reshape(args.queries, args.d)
    data = {t: (x64.astype(np.float32), q64.astype(np.float32)) if t == "f32" else (x64, q64)
            for t in dtypes}
    run = Run(args)
    print(f"n = {args.n}, d = {args.d}, queries = {args.queries}, metric = {args.metric}, "
          f"data = {args.data}; cpu: {run.doc['cpu']}")
    if "sklearn" in peers:
        run_sklearn(args, run, data)
    torch_peers = [peer for peer in peers if peer.startswith("torch")]
    if torch_peers:
        run_torch(args, run, data, torch_peers)


if __name__ == "__main__":
    main()
