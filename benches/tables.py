#!/usr/bin/env python3
"""Markdown tables from the JSON that benches/gpu_select.rs and benches/peers.py write.

    python3 benches/tables.py speedup RESULTS.json        # Alabi et al. Table VII: sort&choose / X
    python3 benches/tables.py floor RESULTS.json [PEERS.json]  # ms and ratio to the floor by case
    python3 benches/tables.py table1 RESULTS.json...      # Blanchard et al. Table I: ranks in sort&choose's time
    python3 benches/tables.py multi RESULTS.json... [PEERS.json...]  # multiselection: ms, × floor, peers

table1 and multi take several files (the parts of one sweep) and merge their results; multi tells
the peers' files (rows with a `peer`) from gpu_select's (rows with an `algorithm`) by their rows.
"""
import json
import sys
from collections import defaultdict

# Orders for rows and columns; names not listed come after, alphabetically.
TYPE_ORDER = ["u32", "f32", "f64", "i32", "i64", "u64"]
DIST_ORDER = ["uniform", "normal", "half-normal", "cauchy", "distinct16", "sorted", "integers",
              "two-values", "equal", "bucket-killer"]
PEER_ORDER = ["torch.quantile", "cupy.percentile", "torch.sort+gather"]
# Blanchard et al. 2016, Table I (K40, B = 11264): the largest number of uniformly spaced order
# statistics bucketMultiSelect selects in the time of sort&choose, by log2 n and (type, dist).
PAPER_TABLE1_COLUMNS = [("u32", "uniform"), ("f32", "uniform"), ("f32", "normal"), ("f32", "half-normal"),
                        ("f32", "cauchy"), ("f64", "uniform"), ("f64", "normal")]
PAPER_TABLE1 = {
    21: [0, 0, 0, 0, 0, 293, 268],
    22: [235, 233, 219, 217, 0, 4097, 4096],
    23: [1025, 1025, 1025, 1024, 365, 6219, 5872],
    24: [2795, 2433, 2377, 2268, 1251, 7532, 7282],
    25: [3920, 3725, 3511, 3476, 2230, 8190, 7899],
    26: [4339, 4213, 4086, 4081, 2885, 8190, 8189],
    27: [4645, 4516, 4228, 4206, 3191, 8190, 8190],
    28: [4745, 4672, 4358, 4354, 3319, 8190, 8190],
}


def load(path):
    with open(path) as f:
        return json.load(f)


def order(names, preferred):
    return sorted(names, key=lambda x: (preferred.index(x) if x in preferred else len(preferred), x))


def log2(n):
    return f"2^{n.bit_length() - 1}" if n & (n - 1) == 0 else str(n)


def rank_set(r):
    """(kind, M) of a multiselection row: `M even` (--percentiles) or `M clustered`
    (--clustered), from the row's `rank` label; None for a single-rank row."""
    label = str(r.get("rank", "n/2")).split()
    if len(label) == 2 and label[1] in ("even", "clustered") and label[0].isdigit():
        return label[1], int(label[0])
    if r.get("ranks", 1) > 1:
        return "set", r["ranks"]
    return None


def speedup(doc):
    """sort&choose time over bucketSelect's and radixSelect's, by n, distribution and type."""
    times = defaultdict(dict)
    for r in doc["results"]:
        if r.get("rank", "n/2") != "n/2":
            continue
        times[(r["dist"], r["dtype"], r["n"])][r["algorithm"]] = r["median_ms"]
    columns = sorted({(d, t) for (d, t, _) in times}, key=lambda c: (c[0] != "uniform", c))
    sizes = sorted({n for (_, _, n) in times})
    for algo in ("bucket", "radix"):
        print(f"\nsort&choose / {algo}\n")
        print("| n | " + " | ".join(f"{d} {t}" for d, t in columns) + " |")
        print("|---" * (len(columns) + 1) + "|")
        for n in sizes:
            cells = []
            for d, t in columns:
                row = times.get((d, t, n), {})
                if "sort-choose" in row and algo in row:
                    cells.append(f"{row['sort-choose'] / row[algo]:.2f}")
                else:
                    cells.append("—")
            print(f"| 2^{n.bit_length() - 1} | " + " | ".join(cells) + " |")


def floor_table(doc, peers=None):
    """Each case's median time and its ratio to the floor, one row per case and algorithm."""
    print("| type | dist | n | k | algorithm | ms | floor ms | × floor | GB/s |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in doc["results"]:
        n = r["n"]
        print(f"| {r['dtype']} | {r['dist']} | 2^{n.bit_length() - 1} | {r.get('rank', 'n/2')} | "
              f"{r['algorithm']} | {r['median_ms']:.3f} | {r['floor_ms']:.3f} | "
              f"{r['ratio_to_floor']:.2f} | {r.get('gb_per_s', r['bytes'] / r['median_ms'] / 1e6):.0f} |")
    if peers:
        for r in peers["results"]:
            if "median_ms" not in r:  # a call the peer refused (see `unsupported`)
                continue
            n = r["n"]
            k = f"{r['percentiles']} even" if r.get("percentiles") else "n/2"
            print(f"| {r['dtype']} | {r['dist']} | 2^{n.bit_length() - 1} | {k} | {r['peer']} | "
                  f"{r['median_ms']:.3f} | {r['floor_ms']:.3f} | {r['ratio_to_floor']:.2f} | "
                  f"{r['bytes'] / r['median_ms'] / 1e6:.0f} |")


def table1(docs):
    """Blanchard et al. Table I: for each (dist, type, n) and algorithm, the largest count M of
    the ladder such that the algorithm selects M uniformly spaced ranks faster than sort&choose
    for every ladder count up to M; and sort&choose's time over the algorithm's at M = 101."""
    # times[(dist, dtype, n)][M][algorithm] = (median ms, correct)
    times = defaultdict(lambda: defaultdict(dict))
    for doc in docs:
        for r in doc["results"]:
            s = rank_set(r) if "algorithm" in r else None
            if s is None or s[0] != "even":
                continue
            times[(r["dist"], r["dtype"], r["n"])][s[1]][r["algorithm"]] = (r["median_ms"], r.get("correct", True))
    # Only the cases that have sort&choose to compare with.
    times = {key: by_m for key, by_m in times.items() if any("sort-choose" in row for row in by_m.values())}
    if not times:
        print("no multiselection of evenly spaced ranks (--percentiles) in the results")
        return
    algorithms = []
    for doc in docs:
        for r in doc["results"]:
            if r.get("algorithm") not in algorithms + ["sort-choose", None]:
                algorithms.append(r["algorithm"])
    columns = [(d, t) for t in order({t for (_, t, _) in times}, TYPE_ORDER)
               for d in order({d for (d, tt, _) in times if tt == t}, DIST_ORDER)]
    sizes = sorted({n for (_, _, n) in times})
    ladders = {tuple(sorted(m for m, row in by_m.items() if "sort-choose" in row)) for by_m in times.values()}
    wrong = set()

    def cell(key, algo):
        by_m = times.get(key)
        if not by_m:
            return "—"
        ladder = sorted(m for m, row in by_m.items() if "sort-choose" in row)
        if not ladder or not any(algo in by_m[m] for m in ladder):
            return "—"
        best, gap = 0, False
        for m in ladder:
            if algo not in by_m[m]:
                gap = True  # not measured at this count: the run stops counting here
                break
            (ms, ok), (sc, sc_ok) = by_m[m][algo], by_m[m]["sort-choose"]
            if not ok:
                wrong.add((key, m, algo))
            if not sc_ok:
                wrong.add((key, m, "sort-choose"))
            if ms >= sc:
                break
            best = m
        else:
            best = f"≥{best}"
        text = f"{best}{'?' if gap else ''}"
        if 101 in by_m and algo in by_m[101] and "sort-choose" in by_m[101]:
            text += f" ({by_m[101]['sort-choose'][0] / by_m[101][algo][0]:.1f}×)"
        return text

    print("Blanchard et al. Table I, measured here: the number of uniformly spaced order statistics")
    print("an algorithm selects in less time than sort&choose.\n")
    print("How to read it: each cell is the largest count M of the ladder such that the algorithm,")
    print("given the M ranks i·(n−1)/(M−1), i = 0, …, M−1, as one multiselection, took less time")
    print("(median) than sort&choose given the same ranks, at M and at every smaller count of the")
    print("ladder. The crossover lies between that M and the next count of the ladder. `≥M`: faster")
    print("at every count measured, M the largest; `0`: slower already at the smallest count; `?`:")
    print("the next count was not measured. In parentheses: sort&choose's time over the algorithm's")
    print("at M = 101 (the percentiles), so `(12.0×)` is twelve times faster than sorting.")
    print("Blanchard et al.'s figures (K40, bucketMultiSelect) follow the measured tables; theirs")
    print("are to the unit, a crossover found by search, where the ladder's are bounds.\n")
    for ladder in sorted(ladders):
        print(f"Ladder: M = {', '.join(str(m) for m in ladder)}.")
    for algo in algorithms:
        print(f"\n{algo} against sort&choose\n")
        print("| n | " + " | ".join(f"{t} {d}" for d, t in columns) + " |")
        print("|---" * (len(columns) + 1) + "|")
        for n in sizes:
            print(f"| {log2(n)} | " + " | ".join(cell((d, t, n), algo) for d, t in columns) + " |")
    print("\nsort&choose, ms (median over the ladder's counts; its time hardly depends on M)\n")
    print("| n | " + " | ".join(f"{t} {d}" for d, t in columns) + " |")
    print("|---" * (len(columns) + 1) + "|")
    for n in sizes:
        cells = []
        for d, t in columns:
            sc = sorted(row["sort-choose"][0] for row in times.get((d, t, n), {}).values() if "sort-choose" in row)
            cells.append(f"{sc[len(sc) // 2]:.2f}" if sc else "—")
        print(f"| {log2(n)} | " + " | ".join(cells) + " |")
    paper_sizes = [n.bit_length() - 1 for n in sizes if n.bit_length() - 1 in PAPER_TABLE1]
    if paper_sizes:
        print("\nBlanchard et al. 2016, Table I (NVIDIA K40, bucketMultiSelect against sort&choose, "
              "B = 11264), the sizes measured here\n")
        print("| n | " + " | ".join(f"{t} {d}" for t, d in PAPER_TABLE1_COLUMNS) + " |")
        print("|---" * (len(PAPER_TABLE1_COLUMNS) + 1) + "|")
        for e in paper_sizes:
            print(f"| 2^{e} | " + " | ".join(str(v) for v in PAPER_TABLE1[e]) + " |")
    if wrong:
        print(f"\nWARNING: {len(wrong)} case(s) with a result that differs from the CPU's (`correct`: false), e.g. "
              + ", ".join(f"{a} {t} {d} {log2(n)} M={m}" for (d, t, n), m, a in sorted(wrong)[:5]))


def multi(docs):
    """Multiselection (--percentiles and --clustered) by (n, type, dist, M): each algorithm's
    median ms and its ratio to the floor, then the peers' ms for the same count of evenly spaced
    ranks (peers.py --percentiles)."""
    cases = {}  # (n, dtype, dist, kind, M) -> {"floor": ms, algorithm: (ms, ratio, correct)}
    peers = defaultdict(dict)  # (n, dtype, dist, M) -> {peer: row}
    algorithms, peer_names = [], []
    for doc in docs:
        for r in doc["results"]:
            if "peer" in r:
                if r.get("percentiles"):
                    peers[(r["n"], r["dtype"], r["dist"], r["percentiles"])][r["peer"]] = r
                    if r["peer"] not in peer_names:
                        peer_names.append(r["peer"])
                continue
            s = rank_set(r)
            if s is None:
                continue
            case = cases.setdefault((r["n"], r["dtype"], r["dist"]) + s, {})
            case.setdefault("floor", r["floor_ms"])
            case[r["algorithm"]] = (r["median_ms"], r["median_ms"] / r["floor_ms"], r.get("correct", True))
            if r["algorithm"] not in algorithms:
                algorithms.append(r["algorithm"])
    if not cases:
        print("no multiselection (--percentiles, --clustered) in the results")
        return
    peer_names = order(peer_names, PEER_ORDER)
    ref = "auto" if "auto" in algorithms else algorithms[0]
    types = order({k[1] for k in cases}, TYPE_ORDER)
    dists = order({k[2] for k in cases}, DIST_ORDER)
    keys = sorted(cases, key=lambda k: (k[0], types.index(k[1]), dists.index(k[2]), k[3] != "even", k[4]))
    print("Multiselection: one call for all M ranks (`M even`: i·(n−1)/(M−1), i = 0, …, M−1; "
          "`M clustered`: n/3, …, n/3+M−1). Median ms (× floor, the one-read sum in the same run).")
    if peer_names:
        print(f"Peers: median ms for M quantiles (numpy's linear method) of data of the same distribution; "
              f"`refused`: the call raised (see below); last column: the fastest peer's time over {ref}'s.")
    refusals = {}
    header = ["n", "type", "dist", "ranks", "floor ms"] + [f"{a} ms (× floor)" for a in algorithms]
    if peer_names:
        header += [f"{p} ms" for p in peer_names] + [f"fastest peer / {ref}"]
    print("\n| " + " | ".join(header) + " |")
    print("|---" * len(header) + "|")
    wrong = 0
    for key in keys:
        n, dtype, dist, kind, m = key
        case = cases[key]
        cells = [log2(n), dtype, dist, f"{m} {kind}", f"{case['floor']:.3f}"]
        for a in algorithms:
            if a in case:
                ms, ratio, ok = case[a]
                wrong += not ok
                cells.append(f"{ms:.3f} ({ratio:.1f})" + ("" if ok else " WRONG"))
            else:
                cells.append("—")
        if peer_names:
            found = peers.get((n, dtype, dist, m), {}) if kind == "even" else {}
            fastest = None
            for p in peer_names:
                r = found.get(p)
                if r is None:
                    cells.append("—")
                elif "median_ms" not in r:
                    refusals.setdefault(r.get("unsupported", "?"), set()).add(p)
                    cells.append("refused")
                else:
                    cells.append(f"{r['median_ms']:.3f}" + ("" if r.get("correct", True) else " (mismatch)"))
                    fastest = r["median_ms"] if fastest is None else min(fastest, r["median_ms"])
            cells.append(f"{fastest / case[ref][0]:.1f}×" if fastest is not None and ref in case else "—")
        print("| " + " | ".join(cells) + " |")
    for msg, who in sorted(refusals.items()):
        print(f"\nrefused ({', '.join(sorted(who))}): {msg}")
    if wrong:
        print(f"\nWARNING: {wrong} result(s) differ from the CPU's (`correct`: false)")


def main():
    if len(sys.argv) < 3:
        print(__doc__)
        sys.exit(2)
    what = sys.argv[1]
    if what == "speedup":
        speedup(load(sys.argv[2]))
    elif what == "floor":
        floor_table(load(sys.argv[2]), load(sys.argv[3]) if len(sys.argv) > 3 else None)
    elif what == "table1":
        table1([load(p) for p in sys.argv[2:]])
    elif what == "multi":
        multi([load(p) for p in sys.argv[2:]])
    else:
        print(__doc__)
        sys.exit(2)


if __name__ == "__main__":
    main()
