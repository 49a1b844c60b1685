#!/usr/bin/env python3
"""The headline table of BENCHMARKS.md: each of kselect's GPU targets against what the
benchmarks measured, from the JSON that scripts/headline.sh leaves in one directory.

    python3 benches/headline.py DIR [--splice BENCHMARKS.md] [--json OUT.json]
    python3 benches/headline.py --self-test

DIR holds JSON documents of benches/gpu_select.rs, benches/gpu_batch.rs, benches/regression.rs
(--device cuda), benches/peers.py, benches/peers_batch.py and benches/peers_cub.cu, told apart by
their rows (peers_cub.cu's by its "benchmark" field); other files are passed over. One row a
target: the worst case over the cases that target covers (its ratio to the one-read floor
measured in the same run, to the fastest peer on the same device, or its seconds), named, and
whether the target is met. The batched top-k targets name their fastest peer: torch.topk
(peers_batch.py) or CUB's DeviceBatchedTopK / DeviceTopK with indices (peers_cub.cu), in the
same order and sorting. A target none of whose cases were measured
reads "not measured"; one measured only in part, within its target, "partly measured". A case
whose result differs from the CPU's (`correct`: false) fails its target.

--splice FILE puts the table, after a line naming the device, the dates, the files and the
command, between the lines `<!-- headline:begin -->` and `<!-- headline:end -->` of FILE,
adding them after its first `# ` title line when it has none. --json OUT.json writes the same
rows as JSON.
"""
import argparse
import contextlib
import io
import json
import os
import re
import sys
import tempfile
import unittest
from dataclasses import dataclass, field

BEGIN = "<!-- headline:begin -->"
END = "<!-- headline:end -->"

TYPES = ("f32", "f64")
SELECT_N = 1 << 28
SELECT_DISTS = ("uniform", "normal", "half-normal", "cauchy", "distinct16", "sorted", "bucket-killer")
SELECT_RANKS = ("0", "n/100", "n/2", "n-1")
SMALL_LOG2 = (10, 12, 14, 16, 18, 20, 21, 22)
# The peers of one selection (benches/peers.py's names) that the small inputs race.
SELECTION_PEERS = ("torch.sort", "torch.kthvalue", "torch.topk(1024)", "cupy.partition")
TOPK_CASES = ("top-k sorted", "top-k unsorted", "top-k smallest sorted")
SORTED_TOPK_CASES = ("top-k sorted", "top-k smallest sorted")
# Hard thresholding with the result left on the device (threshold-to-host adds a copy to the host).
THRESHOLD_CASES = ("threshold", "hard-threshold")
THRESHOLD_N = 1 << 26
# gpu_batch's case -> (largest, sorted) of the torch.topk row of benches/peers_batch.py.
TOPK_PEER_ORDER = {"top-k sorted": (True, True), "top-k unsorted": (True, False),
                   "top-k smallest sorted": (False, True)}
THRESHOLD_PEERS = ("torch.topk-abs+scatter", "cupy.argpartition-abs+scatter")
# The CUB top-k calls of benches/peers_cub.cu that race gpu_batch's top-k (its floor rows are not).
CUB_TOPK_APIS = ("DeviceBatchedTopK", "DeviceTopK")


# --- Reading the results ---------------------------------------------------------------------

def device_name(text):
    """A device as the benchmarks name it, without the architecture regression.rs adds:
    'NVIDIA H200 (sm_90, 132 SMs)' is 'NVIDIA H200'."""
    return re.sub(r"\s*\(.*\)$", "", str(text or "unknown device"))


def kind_of(doc):
    """Which benchmark wrote the document, from its rows: 'select' (gpu_select.rs), 'batch'
    (gpu_batch.rs), 'lts' (regression.rs, LTS on CUDA), 'peers' (peers.py), 'peers_batch'
    (peers_batch.py), 'peers_cub' (peers_cub.cu, named by the document's "benchmark"); None for
    anything else."""
    rows = doc.get("results") if isinstance(doc, dict) else None
    if not isinstance(rows, list) or not rows or not all(isinstance(r, dict) for r in rows):
        return None
    if doc.get("benchmark") == "peers_cub":
        return "peers_cub"
    first = rows[0]
    if "algorithm" in first and "floor_ms" in first:
        return "select"
    if "peer" in first:
        return "peers"
    if "case" in first and "median_ms" in first:
        return "batch"
    if "case" in first and "type" in first:
        return "peers_batch"
    if "seconds" in first and doc.get("backend") == "cuda" and "Lts" in str(doc.get("estimator")):
        return "lts"
    return None


def load(directory):
    """The rows of the benchmark documents in directory, by kind (see kind_of); each row a copy
    with its document's device (`_device`), date (`_date`) and file name (`_file`) added; a
    peers_cub row's median_ms is also its `ms`, the time field of peers_batch.py's rows. Files
    that are not such JSON (a run cut short may leave a broken one) are passed over, with a note
    on stderr for the broken ones."""
    rows = {kind: [] for kind in ("select", "batch", "lts", "peers", "peers_batch", "peers_cub")}
    for name in sorted(os.listdir(directory)):
        if not name.endswith(".json"):
            continue
        try:
            with open(os.path.join(directory, name)) as f:
                doc = json.load(f)
        except (OSError, ValueError) as e:
            print(f"headline: passing over {name}: {e}", file=sys.stderr)
            continue
        kind = kind_of(doc)
        if kind is None:
            continue
        extra = dict(_device=device_name(doc.get("device")), _date=str(doc.get("date", "")), _file=name)
        found = [dict(r, **extra) for r in doc["results"]]
        if kind == "peers_cub":
            found = [dict(r, ms=r["median_ms"]) if "median_ms" in r else r for r in found]
        rows[kind] += found
    return rows


# --- Cases and targets -----------------------------------------------------------------------

@dataclass
class Case:
    """One measured case of a target: `key` identifies it among the cases the target expects,
    `value` is what the target's limit bounds (a ratio, or seconds)."""
    key: tuple
    label: str
    figure: str
    value: float
    device: str
    date: str
    files: tuple
    correct: bool = True
    context: str = ""


@dataclass
class Target:
    """A headline target: `cases(rows)` the measured cases, `expected` the keys of those it
    covers, `unit` what its value is ('floor', 'peer' or 's'), `limit` the largest value that
    meets it."""
    name: str
    measured: str
    unit: str
    limit: float
    expected: list
    cases: object = field(repr=False)


def ratio_to_floor(row):
    """A bench row's median time over its floor."""
    return row.get("ratio_to_floor", row["median_ms"] / row["floor_ms"])


def peer_note(peer, time_key):
    """'best peer NAME T ms' for a peer row, or '' without one."""
    if peer is None:
        return ""
    name = peer.get("peer") or peer["case"]
    return f"best peer {name} {peer[time_key]:.3f} ms"


def case_of(row, key, label, value, figure, peer=None, peer_time="median_ms"):
    """The Case of a bench row; `peer`, the row of the fastest peer of the same case where there
    is one (its time under `peer_time`), is named after the figure."""
    return Case(key=key, label=label, figure=figure, value=value, device=row["_device"], date=row["_date"],
                files=(row["_file"],) + ((peer["_file"],) if peer else ()),
                correct=row.get("correct", True) is not False, context=peer_note(peer, peer_time))


def fastest(candidates, time_key):
    """The row of least time_key among candidates, or None."""
    timed = [r for r in candidates if isinstance(r.get(time_key), (int, float))]
    return min(timed, key=lambda r: r[time_key], default=None)


def same_input(peer, row):
    """Whether a peers.py row and a gpu_select row measured the same device, type, distribution
    and size."""
    return all(peer[f] == row[f] for f in ("_device", "dtype", "dist", "n"))


def best_selection_peer(rows, r):
    """The fastest correct one-rank peer of SELECTION_PEERS on gpu_select's row r's device and
    input, or None."""
    return fastest([p for p in rows["peers"] if p.get("peer") in SELECTION_PEERS and not p.get("percentiles")
                    and p.get("correct") is not False and same_input(p, r)], "median_ms")


def select_rows(rows, n, rank):
    """gpu_select's Auto rows of n values (f32, f64) at the rank label `rank`."""
    return [r for r in rows["select"] if r["algorithm"] == "auto" and r["n"] == n
            and r["dtype"] in TYPES and str(r.get("rank", "n/2")) == rank]


def single_selection_cases(rows):
    """Auto at 2^28 on each distribution and rank, against the floor."""
    cases = []
    for rank in SELECT_RANKS:
        for r in select_rows(rows, SELECT_N, rank):
            if r["dist"] not in SELECT_DISTS:
                continue
            peer = best_selection_peer(rows, r)
            cases.append(case_of(r, (r["dtype"], r["dist"], rank), f"{r['dtype']} {r['dist']} k = {rank}",
                                 ratio_to_floor(r), f"{r['median_ms']:.3f} ms", peer))
    return cases


def small_size_cases(rows):
    """Auto's median at each small size over the fastest peer's on the same device and input."""
    cases = []
    for e in SMALL_LOG2:
        for r in select_rows(rows, 1 << e, "n/2"):
            if r["dist"] != "uniform":
                continue
            peer = best_selection_peer(rows, r)
            if peer is None:
                continue
            cases.append(case_of(r, (r["dtype"], e), f"{r['dtype']} 2^{e}", r["median_ms"] / peer["median_ms"],
                                 f"{r['median_ms']:.3f} ms", peer))
    return cases


def percentile_cases(count):
    """The cases of `count` evenly spaced ranks of 2^28 uniform values, against the floor."""
    def cases(rows):
        found = []
        for r in select_rows(rows, SELECT_N, f"{count} even"):
            if r["dist"] != "uniform":
                continue
            peer = fastest([p for p in rows["peers"] if p.get("percentiles") == count
                            and p.get("correct") is not False and same_input(p, r)], "median_ms")
            found.append(case_of(r, (r["dtype"], r["dist"]), f"{r['dtype']} {r['dist']}", ratio_to_floor(r),
                                 f"{r['median_ms']:.3f} ms", peer))
        return found
    return cases


def cub_peers(rows, r, largest, sorted_):
    """The correct peers_cub.cu top-k rows with indices for gpu_batch's row r: same device, shape,
    type and k, in the order and sorting given."""
    case = (r["_device"], r["shape"], r["dtype"], r["k"])
    return [p for p in rows["peers_cub"] if p.get("api") in CUB_TOPK_APIS and p.get("with_indices") is True
            and (p["_device"], p.get("shape"), p.get("dtype"), p.get("k")) == case
            and (p.get("largest"), p.get("sorted")) == (largest, sorted_) and p.get("correct") is True]


def batch_peer(rows, r):
    """The fastest peers_batch.py or peers_cub.cu row for gpu_batch's row r (same device, input
    and k; for top-k, the same order and sorting), or None."""
    same = [p for p in rows["peers_batch"] if (p["_device"], p["shape"], p["type"], p.get("k"))
            == (r["_device"], r["shape"], r["dtype"], r["k"]) and p.get("correct") is not False]
    if r["case"] in TOPK_PEER_ORDER:
        largest, sorted_ = TOPK_PEER_ORDER[r["case"]]
        same = [p for p in same if p["case"] == "torch.topk" and (p["largest"], p["sorted"]) == (largest, sorted_)]
        same += cub_peers(rows, r, largest, sorted_)
    else:
        same = [p for p in same if p["case"] in THRESHOLD_PEERS]
    return fastest(same, "ms")


def batch_cases(shape, k_low, k_high, names):
    """The cases of gpu_batch's input `shape` (its `shape` field), k in [k_low, k_high], of the
    case names `names`, against the floor."""
    def cases(rows):
        return [case_of(r, (r["dtype"], r["k"], r["case"]), f"{r['dtype']} {r['case']} k = {r['k']}",
                        ratio_to_floor(r), f"{r['median_ms']:.3f} ms", batch_peer(rows, r), "ms")
                for r in rows["batch"] if r["shape"] == shape and k_low <= r["k"] <= k_high
                and r["case"] in names]
    return cases


def lts_cases(n):
    """The seconds of one LTS fit (p = 10 and an intercept) of n rows on CUDA."""
    def cases(rows):
        return [case_of(r, (n,), f"n = {n:.0e}".replace("e+0", "e"), r["seconds"], f"{r['seconds']:.3f} s")
                for r in rows["lts"] if r["n"] == n and r.get("p") == 11]
    return cases


def expected_topk(ks, names=TOPK_CASES):
    """The keys of f32 cases `names` at each k of ks."""
    return [("f32", k, name) for k in ks for name in names]


TARGETS = [
    Target("single selection, n = 2^28", "Auto, f32/f64, 7 distributions, k = 0, n/100, n/2, n−1",
           "floor", 1.25, [(t, d, k) for t in TYPES for d in SELECT_DISTS for k in SELECT_RANKS],
           single_selection_cases),
    Target("small inputs, 2^10–2^22", "Auto against the fastest of torch.sort, torch.kthvalue, "
           "torch.topk, cupy.partition, f32/f64, k = n/2", "peer", 1.0,
           [(t, e) for t in TYPES for e in SMALL_LOG2], small_size_cases),
    Target("101 percentiles, n = 2^28", "Auto, 101 evenly spaced ranks, f32/f64, uniform", "floor", 1.5,
           [(t, "uniform") for t in TYPES], percentile_cases(101)),
    Target("1001 percentiles, n = 2^28", "Auto, 1001 evenly spaced ranks, f32/f64, uniform", "floor", 2.0,
           [(t, "uniform") for t in TYPES], percentile_cases(1001)),
    Target("batched top-k, rows of 1024", "65536 × 1024, k = 16, 256, largest/smallest, sorted/unsorted",
           "floor", 3.0, expected_topk((16, 256)), batch_cases("65536x1024", 16, 256, TOPK_CASES)),
    Target("batched top-k, long rows", "1024 × 2^20, k = 32, 1024, largest/smallest, sorted/unsorted",
           "floor", 1.2, expected_topk((32, 1024)), batch_cases("1024x1048576", 1, 1024, TOPK_CASES)),
    Target("top-65536 sorted", "1024 × 2^20, k = 65536, largest/smallest, sorted", "floor", 4.0,
           expected_topk((65536,), SORTED_TOPK_CASES),
           batch_cases("1024x1048576", 65536, 65536, SORTED_TOPK_CASES)),
    Target("top-k of one long array", "one array of 2^28 (a 1 × 2^28 batch), k = 32–65536",
           "floor", 2.0, expected_topk((32, 1024, 65536)), batch_cases("1x268435456", 32, 65536, TOPK_CASES)),
    Target("hard thresholding, n = 2^26", "support and threshold, and H_k in place, k = n/1000, n/100",
           "floor", 2.0, expected_topk((THRESHOLD_N // 1000, THRESHOLD_N // 100), THRESHOLD_CASES),
           batch_cases(str(THRESHOLD_N), 1, THRESHOLD_N, THRESHOLD_CASES)),
    Target("LTS, 10^6 rows", "one whole fit, p = 10, CUDA", "s", 0.05, [(10**6,)], lts_cases(10**6)),
    Target("LTS, 10^7 rows", "one whole fit, p = 10, CUDA", "s", 0.5, [(10**7,)], lts_cases(10**7)),
]


# --- The table ---------------------------------------------------------------------------------

def limit_text(target):
    """The target's limit as the table prints it."""
    return {"floor": f"≤ {target.limit:g}× floor", "peer": "≤ fastest peer",
            "s": f"≤ {target.limit:g} s"}[target.unit]


def value_text(target, value):
    """A case's value as the ratio column prints it."""
    return {"floor": f"{value:.2f}× floor", "peer": f"{value:.2f}× fastest peer", "s": "—"}[target.unit]


def evaluate(target, rows):
    """The table row of a target: its worst case, and whether the target is met."""
    cases = target.cases(rows)
    row = dict(target=target.name, measured=target.measured, target_value=limit_text(target),
               expected_cases=len(target.expected))
    if not cases:
        return dict(row, device="—", figure="—", ratio="—", status="not measured", measured_cases=0,
                    dates=[], files=[])
    worst = max(cases, key=lambda c: c.value)
    wrong = [c for c in cases if not c.correct]
    present = {c.key for c in cases} & set(target.expected)
    notes = [worst.context] if worst.context else []
    if wrong:
        notes.append("wrong result: " + ", ".join(c.label for c in wrong[:3]))
    if len(present) < len(target.expected):
        notes.append(f"{len(present)} of {len(target.expected)} cases")
    if worst.value > target.limit or wrong:
        status = "not met"
    elif len(present) < len(target.expected):
        status = "partly measured"
    else:
        status = "met"
    figure = f"{worst.figure} ({worst.label})" + "".join(f"; {n}" for n in notes)
    return dict(row, device=", ".join(sorted({c.device for c in cases})), figure=figure,
                ratio=value_text(target, worst.value), value=worst.value, worst_case=worst.label,
                status=status, measured_cases=len(present), dates=sorted({c.date for c in cases}),
                files=sorted({f for c in cases for f in c.files}))


def table(results):
    """The Markdown table of the evaluated rows."""
    lines = ["| target | what is measured | device | worst case | ratio | target | status |",
             "|---|---|---|---|---|---|---|"]
    for r in results:
        lines.append(f"| {r['target']} | {r['measured']} | {r['device']} | {r['figure']} | {r['ratio']} | "
                     f"{r['target_value']} | {r['status']} |")
    return "\n".join(lines)


def provenance(results, command):
    """The line above the table: the devices, the dates and the files of the figures, and the
    command that made it."""
    devices = sorted({d for r in results if r["device"] != "—" for d in r["device"].split(", ")})
    dates = sorted({d for r in results for d in r["dates"] if d})
    files = sorted({f for r in results for f in r["files"]})
    when = dates[0] if len(dates) == 1 else f"{dates[0]} to {dates[-1]}" if dates else "no date"
    return (f"Device: {', '.join(devices) or 'none'}; results of {when}"
            f"{' (' + ', '.join(files) + ')' if files else ''}; made by `{command}`.")


def splice(text, block):
    """text with `block` between its BEGIN and END lines (replacing what was there), or with
    BEGIN, block and END after its first `# ` title line (at its start without one)."""
    lines = text.split("\n")
    inside = [BEGIN, *block.split("\n"), END]
    if BEGIN in lines and END in lines[lines.index(BEGIN):]:
        begin = lines.index(BEGIN)
        end = lines.index(END, begin)
        return "\n".join(lines[:begin] + inside + lines[end + 1:])
    title = next((i for i, line in enumerate(lines) if line.startswith("# ")), -1)
    head, rest = lines[:title + 1], lines[title + 1:]
    if rest and rest[0].strip():
        rest = [""] + rest
    return "\n".join(head + ([""] if head else []) + inside + rest)


def command_line(argv):
    """How the table was made, as the provenance line names it."""
    return " ".join(["python3 benches/headline.py", *argv])


def main(argv):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("dir", nargs="?", help="the directory of the benchmarks' JSON")
    p.add_argument("--splice", metavar="FILE", help="put the table between the headline markers of FILE")
    p.add_argument("--json", metavar="OUT", help="write the rows as JSON")
    p.add_argument("--self-test", action="store_true", help="run the unit tests")
    args = p.parse_args(argv)
    if args.self_test:
        suite = unittest.defaultTestLoader.loadTestsFromTestCase(HeadlineTest)
        return 0 if unittest.TextTestRunner(verbosity=2).run(suite).wasSuccessful() else 1
    if not args.dir:
        p.error("DIR is required")
    rows = load(args.dir)
    results = [evaluate(t, rows) for t in TARGETS]
    command = command_line(argv)
    block = provenance(results, command) + "\n\n" + table(results)
    print(block)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(dict(command=command, directory=args.dir, targets=results), f, indent=1)
    if args.splice:
        with open(args.splice) as f:
            text = f.read()
        with open(args.splice, "w") as f:
            f.write(splice(text, block))
    return 0


# --- Self-test ---------------------------------------------------------------------------------

# Rows copied from benches/results (2026-11-21, NVIDIA H200), with the fields of their documents.
SELECT_DOC = {"arch": "sm_90", "command": "gpu-bin/gpu_select --sizes 28 --json dists.json", "date": "2026-11-21",
              "device": "NVIDIA H200", "floor": "DeviceBuffer::sum over the same array (one read, 16-byte loads)"}
SELECT_ROW = {"algorithm": "auto", "bytes": 1073741824, "correct": True, "dist": "uniform", "dtype": "f32",
              "floor_ms": 0.2620159983634949, "gb_per_s": 3107.7552441531598, "k": 0, "median_ms": 0.3455039858818054,
              "min_ms": 0.34089601039886475, "n": 268435456, "rank": "0", "ratio_to_floor": 1.3186369841527297}
SMALL_ROW = {"algorithm": "auto", "bytes": 4194304, "correct": True, "dist": "uniform", "dtype": "f32",
             "floor_ms": 0.02454400062561035, "gb_per_s": 58.07355007951131, "k": 524288,
             "median_ms": 0.07222399860620499, "min_ms": 0.06844799965620041, "n": 1048576, "rank": "n/2",
             "ratio_to_floor": 2.9426335057555004}
PERCENTILE_ROW = {"algorithm": "auto", "bytes": 2147483648, "correct": True, "dist": "uniform", "dtype": "f64",
                  "floor_ms": 0.5029760003089905, "gb_per_s": 2056.0943300557597, "k": 0,
                  "median_ms": 1.0444480180740356, "min_ms": 1.0423680543899536, "n": 268435456,
                  "rank": "101 even", "ranks": 101, "ratio_to_floor": 2.0765364896782463}
PEERS_DOC = {"device": "NVIDIA H200", "date": "2026-11-21", "command": "benches/peers.py --json peers.json",
             "torch": "2.11.0+cu130", "cupy": "14.2.0"}
PEER_ROWS = [
    {"dtype": "f32", "dist": "uniform", "n": 1048576, "peer": "torch.sort", "median_ms": 0.11238399893045425,
     "min_ms": 0.10927999764680862, "floor_ms": 0.014751999638974667, "ratio_to_floor": 7.61822137207329,
     "correct": True, "bytes": 4194304},
    {"dtype": "f32", "dist": "uniform", "n": 1048576, "peer": "torch.quantile", "median_ms": 0.143327996134758,
     "min_ms": 0.13820800185203552, "floor_ms": 0.014751999638974667, "ratio_to_floor": 9.715835116758447,
     "correct": True, "bytes": 4194304},
    {"dtype": "f32", "dist": "uniform", "n": 1048576, "peer": "cupy.partition", "median_ms": 0.10867200046777725,
     "min_ms": 0.10150399804115295, "floor_ms": 0.014751999638974667, "ratio_to_floor": 7.366594572078668,
     "correct": True, "bytes": 4194304},
    {"dtype": "f64", "dist": "uniform", "n": 268435456, "peer": "torch.quantile", "percentiles": 101,
     "unsupported": "quantile() input tensor is too large"},
    {"dtype": "f64", "dist": "uniform", "n": 268435456, "peer": "cupy.percentile", "percentiles": 101,
     "median_ms": 17.950176239013672, "min_ms": 17.931135177612305, "floor_ms": 0.48895999789237976,
     "ratio_to_floor": 36.71092996643155, "correct": True, "bytes": 2147483648},
]
BATCH_DOC = {"arch": "sm_90", "command": "tune/bin/gpu_batch --reps 11 --json batch.json", "date": "2026-11-21",
             "device": "NVIDIA H200"}
BATCH_ROWS = [
    {"case": "top-k sorted", "correct": True, "dtype": "f32", "floor_ms": 0.08873599767684937,
     "gb_per_s": 284.7, "k": 16, "median_ms": 0.9426, "ratio_to_floor": 10.6224, "shape": "65536x1024",
     "bytes": 268435456},
    {"case": "threshold", "correct": True, "dtype": "f32", "floor_ms": 0.0844, "gb_per_s": 345.7, "k": 67108,
     "median_ms": 0.7764, "ratio_to_floor": 9.1979, "shape": "67108864", "bytes": 268435456},
    {"case": "threshold-to-host", "correct": True, "dtype": "f32", "floor_ms": 0.0844, "gb_per_s": 148.0,
     "k": 671088, "median_ms": 1.8338, "ratio_to_floor": 21.7237, "shape": "67108864", "bytes": 268435456},
]
PEERS_BATCH_DOC = {"device": "NVIDIA H200", "date": "2026-11-21", "command": "tune/peers_batch.py --json peers.json"}
PEERS_BATCH_ROWS = [
    {"shape": "65536x1024", "rows": 65536, "cols": 1024, "type": "f32", "dist": "uniform", "case": "floor",
     "k": None, "largest": None, "sorted": None, "bytes": 268435456, "copies": 2, "ms": 0.0941, "min_ms": 0.0934,
     "reps": 11, "correct": None, "floor_ms": 0.0941, "ratio": 1.0},
    {"shape": "65536x1024", "rows": 65536, "cols": 1024, "type": "f32", "dist": "uniform", "case": "torch.topk",
     "k": 16, "largest": True, "sorted": True, "bytes": 268435456, "copies": 2, "ms": 2.3751, "min_ms": 2.36,
     "reps": 11, "correct": True, "floor_ms": 0.0941, "ratio": 25.2284},
    {"shape": "65536x1024", "rows": 65536, "cols": 1024, "type": "f32", "dist": "uniform", "case": "torch.topk",
     "k": 16, "largest": False, "sorted": True, "bytes": 268435456, "copies": 2, "ms": 2.2838, "min_ms": 2.27,
     "reps": 11, "correct": True, "floor_ms": 0.0941, "ratio": 24.259},
    {"shape": "67108864", "n": 67108864, "type": "f32", "dist": "uniform", "case": "cupy.argpartition-abs+scatter",
     "k": 67108, "largest": True, "sorted": False, "bytes": 268435456, "copies": 2, "error": "out of memory"},
]
# The format of benches/peers_cub.cu's document; the figures are made up (no run copied here yet).
PEERS_CUB_DOC = {"benchmark": "peers_cub", "device": "NVIDIA H200", "arch": "sm_90", "date": "2026-11-21",
                 "command": "tune/cccl/bin/peers_cub --json cub.json", "cccl": "3.6.0", "cccl_version": 3006000,
                 "cuda_runtime": "13.0", "cuda_driver": "13.0", "nvcc": "13.0.88"}
CUB_ROW = {"peer": "cub.DeviceBatchedTopK.MaxPairs.sorted", "api": "DeviceBatchedTopK", "case": "top-k",
           "dtype": "f32", "type": "f32", "dist": "uniform", "shape": "65536x1024", "rows": 65536, "cols": 1024,
           "k": 16, "largest": True, "sorted": True, "with_indices": True, "bytes": 268435456, "copies": 2,
           "seg_bound": 1024, "k_bound": 16, "temp_bytes": 2097152, "median_ms": 0.5, "min_ms": 0.49, "reps": 21,
           "floor_ms": 0.0941, "ratio_to_floor": 5.31, "correct": True, "checked": "8 rows against std::nth_element",
           "device": "NVIDIA H200"}
PEERS_CUB_ROWS = [
    {"peer": "cub.DeviceReduce.Sum", "api": "DeviceReduce", "case": "floor", "dtype": "f32", "type": "f32",
     "dist": "uniform", "shape": "65536x1024", "rows": 65536, "cols": 1024, "k": None, "largest": None,
     "sorted": None, "with_indices": None, "bytes": 268435456, "copies": 2, "temp_bytes": 4096, "median_ms": 0.09,
     "min_ms": 0.089, "reps": 21, "floor_ms": 0.09, "ratio_to_floor": 1.0, "correct": None,
     "device": "NVIDIA H200"},
    CUB_ROW,
    # Not peers of the sorted case: unsorted, keys only, a wrong result, a failed call.
    dict(CUB_ROW, peer="cub.DeviceBatchedTopK.MaxPairs", sorted=False, median_ms=0.3),
    dict(CUB_ROW, peer="cub.DeviceBatchedTopK.MaxKeys.sorted", with_indices=False, median_ms=0.2),
    dict(CUB_ROW, correct=False, median_ms=0.1),
    dict({k: v for k, v in CUB_ROW.items() if k not in ("median_ms", "min_ms", "reps", "ratio_to_floor")},
         error="out of memory", correct=None),
]
REGRESSION_DOC = {"backend": "cuda", "command": "tune/bin/regression --device cuda --sizes 1e6,1e7 --reps 3",
                  "date": "2026-11-21", "device": "NVIDIA H200 (sm_90, 132 SMs)",
                  "estimator": "kselect::regression::Lts::new().nsamp(500).seed(42) (alpha 0.5, intercept)"}
REGRESSION_ROWS = [
    {"coefficient_error": 0.0025, "flagged": 200665, "h": 500006, "n": 1000000, "p": 11,
     "planted_flagged": 200000, "planted_outliers": 200000, "seconds": 0.1461, "starts": 500},
    {"coefficient_error": 0.0009, "flagged": 2006547, "h": 5000006, "n": 10000000, "p": 11,
     "planted_flagged": 2000000, "planted_outliers": 2000000, "seconds": 1.1904, "starts": 500},
]


def text_between_markers(path):
    """The text between the headline markers of the file at path."""
    with open(path) as f:
        text = f.read()
    return text[text.index(BEGIN) + len(BEGIN):text.index(END)]


class HeadlineTest(unittest.TestCase):
    """The table from small documents in the real formats (rows copied from benches/results)."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = self.tmp.name

    def tearDown(self):
        self.tmp.cleanup()

    def write(self, name, fields, rows):
        """A benchmark document of `rows` in the test's directory."""
        with open(os.path.join(self.dir, name), "w") as f:
            json.dump(dict(fields, results=rows), f)

    def row(self, name):
        """The evaluated row of the target `name` from the test's directory."""
        rows = load(self.dir)
        return next(evaluate(t, rows) for t in TARGETS if t.name == name)

    def full_selection(self, ratio):
        """The 56 cases of the single-selection target, each at `ratio` floors."""
        return [dict(SELECT_ROW, dtype=t, dist=d, rank=k, ratio_to_floor=ratio)
                for t in TYPES for d in SELECT_DISTS for k in SELECT_RANKS]

    def test_empty_directory_leaves_every_target_not_measured(self):
        with open(os.path.join(self.dir, "notes.txt"), "w") as f:
            f.write("not JSON")
        rows = load(self.dir)
        for target in TARGETS:
            r = evaluate(target, rows)
            self.assertEqual((r["status"], r["figure"], r["ratio"], r["device"]),
                             ("not measured", "—", "—", "—"), target.name)

    def test_broken_and_foreign_json_are_passed_over(self):
        with open(os.path.join(self.dir, "cut.json"), "w") as f:
            f.write('{"results": [')
        self.write("r.json", {"peer": "R ltsReg", "device": "cpu"}, [dict(REGRESSION_ROWS[0])])
        notes = io.StringIO()
        with contextlib.redirect_stderr(notes):
            self.assertEqual(sum(len(v) for v in load(self.dir).values()), 0)
        self.assertIn("passing over cut.json", notes.getvalue())

    def test_worst_case_is_named_and_fails_the_limit(self):
        rows = self.full_selection(1.2)
        rows[5] = dict(rows[5], ratio_to_floor=1.3186369841527297)
        self.write("select.json", SELECT_DOC, rows)
        r = self.row("single selection, n = 2^28")
        self.assertEqual(r["status"], "not met")
        self.assertEqual(r["worst_case"], "f32 normal k = n/100")
        self.assertEqual(r["ratio"], "1.32× floor")
        self.assertEqual(r["device"], "NVIDIA H200")

    def test_every_case_within_the_limit_is_met(self):
        self.write("select.json", SELECT_DOC, self.full_selection(1.25))
        r = self.row("single selection, n = 2^28")
        self.assertEqual((r["status"], r["measured_cases"], r["expected_cases"]), ("met", 56, 56))

    def test_some_cases_within_the_limit_are_partly_measured(self):
        self.write("select.json", SELECT_DOC, [dict(SELECT_ROW, ratio_to_floor=1.1)])
        r = self.row("single selection, n = 2^28")
        self.assertEqual(r["status"], "partly measured")
        self.assertIn("1 of 56 cases", r["figure"])

    def test_a_wrong_result_fails_the_target(self):
        rows = self.full_selection(1.0)
        rows[0] = dict(rows[0], correct=False)
        self.write("select.json", SELECT_DOC, rows)
        r = self.row("single selection, n = 2^28")
        self.assertEqual(r["status"], "not met")
        self.assertIn("wrong result: f32 uniform k = 0", r["figure"])

    def test_small_inputs_race_the_fastest_peer_of_the_same_device(self):
        self.write("small.json", SELECT_DOC, [SMALL_ROW])
        # torch.quantile is not one of the peers raced, and the H100's figures are not this device's.
        self.write("peers.json", PEERS_DOC, PEER_ROWS + [dict(PEER_ROWS[1], median_ms=0.01)])
        faster_elsewhere = dict(PEER_ROWS[0], median_ms=0.01)
        self.write("peers-h100.json", dict(PEERS_DOC, device="NVIDIA H100 80GB HBM3"), [faster_elsewhere])
        r = self.row("small inputs, 2^10–2^22")
        self.assertEqual(r["worst_case"], "f32 2^20")
        self.assertIn("0.072 ms (f32 2^20); best peer cupy.partition 0.109 ms", r["figure"])
        self.assertAlmostEqual(r["value"], 0.07222399860620499 / 0.10867200046777725)
        self.assertEqual((r["status"], r["ratio"]), ("partly measured", "0.66× fastest peer"))

    def test_small_inputs_without_peers_are_not_measured(self):
        self.write("small.json", SELECT_DOC, [SMALL_ROW])
        self.assertEqual(self.row("small inputs, 2^10–2^22")["status"], "not measured")

    def test_percentiles_name_the_best_peer(self):
        self.write("percentiles.json", SELECT_DOC, [PERCENTILE_ROW])
        self.write("peers.json", PEERS_DOC, PEER_ROWS)
        r = self.row("101 percentiles, n = 2^28")
        self.assertEqual((r["status"], r["worst_case"]), ("not met", "f64 uniform"))
        self.assertIn("best peer cupy.percentile 17.950 ms", r["figure"])
        self.assertEqual(self.row("1001 percentiles, n = 2^28")["status"], "not measured")

    def test_percentiles_cover_uniform_inputs_only(self):
        self.write("percentiles.json", SELECT_DOC, [dict(PERCENTILE_ROW, dtype=t, ratio_to_floor=1.4) for t in TYPES]
                   + [dict(PERCENTILE_ROW, dist="distinct16", ratio_to_floor=6.8)])
        self.assertEqual(self.row("101 percentiles, n = 2^28")["status"], "met")

    def test_batch_rows_pair_with_the_peer_of_the_same_order(self):
        self.write("batch.json", BATCH_DOC, BATCH_ROWS)
        self.write("peers-batch.json", PEERS_BATCH_DOC, PEERS_BATCH_ROWS)
        r = self.row("batched top-k, rows of 1024")
        self.assertEqual((r["status"], r["ratio"]), ("not met", "10.62× floor"))
        self.assertIn("best peer torch.topk 2.375 ms", r["figure"])
        self.assertEqual(self.row("top-k of one long array")["status"], "not measured")

    def test_batch_rows_race_cub_with_indices_in_the_same_order(self):
        self.write("batch.json", BATCH_DOC, BATCH_ROWS)
        self.write("peers-batch.json", PEERS_BATCH_DOC, PEERS_BATCH_ROWS)
        self.write("cub.json", PEERS_CUB_DOC, PEERS_CUB_ROWS)
        # Another device's faster CUB is not this device's peer.
        h100 = dict(PEERS_CUB_DOC, device="NVIDIA H100 80GB HBM3")
        self.write("cub-h100.json", h100, [dict(CUB_ROW, median_ms=0.05)])
        r = self.row("batched top-k, rows of 1024")
        self.assertIn("best peer cub.DeviceBatchedTopK.MaxPairs.sorted 0.500 ms", r["figure"])
        self.assertEqual(r["ratio"], "10.62× floor")  # the target's ratio is still to the floor

    def test_cub_document_is_its_own_kind(self):
        self.write("cub.json", PEERS_CUB_DOC, PEERS_CUB_ROWS)
        self.assertEqual(kind_of(dict(PEERS_CUB_DOC, results=PEERS_CUB_ROWS)), "peers_cub")
        rows = load(self.dir)
        self.assertEqual((len(rows["peers_cub"]), len(rows["peers"])), (len(PEERS_CUB_ROWS), 0))
        self.assertEqual(rows["peers_cub"][1]["ms"], 0.5)
        # Without a torch.topk row of the case, CUB alone is the best peer; the failed call is passed over.
        self.write("batch.json", BATCH_DOC, BATCH_ROWS)
        r = self.row("batched top-k, rows of 1024")
        self.assertIn("best peer cub.DeviceBatchedTopK.MaxPairs.sorted 0.500 ms", r["figure"])
        self.assertIn("cub.json", r["files"])

    def test_thresholding_leaves_out_the_copy_to_the_host(self):
        self.write("batch.json", BATCH_DOC, BATCH_ROWS)
        self.write("peers-batch.json", PEERS_BATCH_DOC, PEERS_BATCH_ROWS)
        r = self.row("hard thresholding, n = 2^26")
        self.assertEqual((r["worst_case"], r["ratio"]), ("f32 threshold k = 67108", "9.20× floor"))
        self.assertNotIn("best peer", r["figure"])  # the one peer row failed (out of memory)

    def test_lts_reads_cuda_fits_only(self):
        self.write("lts.json", REGRESSION_DOC, REGRESSION_ROWS)
        cpu = dict(REGRESSION_DOC, backend="cpu", device="cpu: AMD EPYC (2 threads)")
        self.write("cpu.json", cpu, [dict(REGRESSION_ROWS[0], seconds=0.01)])
        r = self.row("LTS, 10^6 rows")
        self.assertEqual((r["status"], r["figure"], r["device"]), ("not met", "0.146 s (n = 1e6)", "NVIDIA H200"))
        self.write("lts.json", REGRESSION_DOC, [dict(REGRESSION_ROWS[1], seconds=0.4)])
        self.assertEqual(self.row("LTS, 10^7 rows")["status"], "met")
        self.assertEqual(self.row("LTS, 10^6 rows")["status"], "not measured")

    def test_splice_replaces_the_text_between_the_markers(self):
        text = f"# Benchmarks\n\nIntro.\n\n{BEGIN}\nold table\n{END}\n\n## More\n"
        once = splice(text, "new table")
        self.assertEqual(once, f"# Benchmarks\n\nIntro.\n\n{BEGIN}\nnew table\n{END}\n\n## More\n")
        self.assertEqual(splice(once, "new table"), once)

    def test_splice_adds_the_markers_after_the_title(self):
        text = "# Benchmarks\n\nIntro.\n"
        once = splice(text, "table")
        self.assertEqual(once, f"# Benchmarks\n\n{BEGIN}\ntable\n{END}\n\nIntro.\n")
        self.assertEqual(splice(once, "table"), once)

    def test_main_prints_splices_and_writes_json(self):
        self.write("lts.json", REGRESSION_DOC, REGRESSION_ROWS)
        doc = os.path.join(self.dir, "BENCHMARKS.md")
        with open(doc, "w") as f:
            f.write("# Benchmarks\n\nIntro.\n")
        out = os.path.join(self.dir, "headline.json")
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            self.assertEqual(main([self.dir, "--splice", doc, "--json", out]), 0)
        self.assertIn(printed.getvalue().strip(), text_between_markers(doc))
        with open(doc) as f:
            text = f.read()
        self.assertIn("Device: NVIDIA H200; results of 2026-11-21 (lts.json); made by `python3", text)
        self.assertIn("| LTS, 10^7 rows | one whole fit, p = 10, CUDA | NVIDIA H200 | 1.190 s (n = 1e7) |", text)
        self.assertEqual(text.count("| not measured |"), len(TARGETS) - 2)
        with open(out) as f:
            saved = json.load(f)
        self.assertEqual([t["status"] for t in saved["targets"][-2:]], ["not met", "not met"])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
