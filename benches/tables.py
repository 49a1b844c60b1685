#!/usr/bin/env python3
"""Markdown tables from the JSON that benches/gpu_select.rs and benches/peers.py write.

    python3 benches/tables.py speedup RESULTS.json        # Alabi et al. Table VII: sort&choose / X
    python3 benches/tables.py floor RESULTS.json [PEERS.json]  # ms and ratio to the floor by case
"""
import json
import sys
from collections import defaultdict


def load(path):
    with open(path) as f:
        return json.load(f)


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
            n = r["n"]
            print(f"| {r['dtype']} | {r['dist']} | 2^{n.bit_length() - 1} | n/2 | {r['peer']} | "
                  f"{r['median_ms']:.3f} | {r['floor_ms']:.3f} | {r['ratio_to_floor']:.2f} | "
                  f"{r['bytes'] / r['median_ms'] / 1e6:.0f} |")


def main():
    if len(sys.argv) < 3:
        print(__doc__)
        sys.exit(2)
    what, doc = sys.argv[1], load(sys.argv[2])
    if what == "speedup":
        speedup(doc)
    elif what == "floor":
        floor_table(doc, load(sys.argv[3]) if len(sys.argv) > 3 else None)
    else:
        print(__doc__)
        sys.exit(2)


if __name__ == "__main__":
    main()
