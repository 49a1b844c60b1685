#!/usr/bin/env bash
# The GPU selection benchmarks of BENCHMARKS.md, in one GPU-machine call; JSON and logs to $OUT.
#   scripts/bench-sweep.sh [dists] [algorithms] [sizes] [table7] [peers]   (default: these five)
#   scripts/bench-sweep.sh table1 multi peers-multi                       (multiselection, ~5 min)
# table1, multi and peers-multi also write Markdown (benches/tables.py) to $OUT/table1.md and
# $OUT/multi.md.
set -u
out=${OUT:-/tmp/out}
mkdir -p "$out"
export KSELECT_REQUIRE_GPU=1
steps=("$@")
[ ${#steps[@]} -gt 0 ] || steps=(dists algorithms sizes table7 peers)
bench() { # name timeout args...
    local name=$1 limit=$2
    shift 2
    timeout "$limit" gpu-bin/gpu_select "$@" --json "$out/$name.json" >"$out/$name.log" 2>&1
    echo "== $name exit $?"
    grep -c " ok$" "$out/$name.log" | sed 's/^/rows ok: /'
    grep -E "WRONG|rror" "$out/$name.log" | head -5
}
tables() { # mode output.md json-files...: the Markdown of those files that exist (a step cut
    # short by its timeout leaves no JSON)
    local mode=$1 md=$2 files=() f
    shift 2
    for f in "$@"; do [ -s "$f" ] && files+=("$f"); done
    [ ${#files[@]} -gt 0 ] || return 0
    python3 benches/tables.py "$mode" "${files[@]}" >"$md" 2>&1
    echo "== $(basename "$md"): ${files[*]##*/}"
}
# Multiselection (Blanchard et al.). Device time, estimated from the H200 figures of
# benches/results (sort&choose 2^28: u32 31 ms, f32 26 ms, f64 63 ms; multiselection ~0.3 ms
# plus 0.4 (2^20) to 2.6 (2^28, f32; f64 x1.3, bucket-multiselect x1.6) us per rank) and from
# what gpu_select does per type, distribution and size before timing: generate n values on the
# CPU, sort their keys on the CPU for the reference (par_sort_unstable: ~1.5 s at 2^28, ~3-5 s
# at 2^29 on 16 cores, the largest host cost), copy max(n values, 512 MiB) to the GPU; then per
# rank set and algorithm 1 checked + 3 warm-up + --reps timed calls. Each gpu_select call writes
# its JSON only when it ends, so the sweeps are cut by size, each under its own timeout.
#   table1:      2^20-2^26 ~25 s, 2^28 ~37 s (of which sort&choose f64 ~8 s), + kernel compile
#   multi:       2^20-2^26 ~12 s, 2^28 ~28 s, 2^29 ~55 s (host work ~80% of it)
#   peers-multi: ~105 s (sorts at every count: torch.sort 2^28 f64 ~27 ms, cupy.percentile ~18 ms)
# About 4.5-5 minutes in all; the timeouts (60+90, 40+60+110, 160 s) bound it at 520 s.
# table1's ladder of counts M (evenly spaced ranks i(n-1)/(M-1)): doubling from 2 to 16384 (2^28
# f32 crosses sort&choose near 10^4), with 101, the percentiles, for the speedup column.
ladder=2,4,8,16,32,64,101,128,256,512,1024,2048,4096,8192,16384
table1_algorithms=sort-choose,bucket-multiselect,iterative-bucket-multiselect,fused-multiselect,auto
multi_dists=uniform,normal,half-normal,cauchy,distinct16
for step in "${steps[@]}"; do
    case "$step" in
    dists) bench dists 150 --sizes 28 --types f32,f64 \
        --dists uniform,normal,half-normal,cauchy,distinct16,sorted,bucket-killer \
        --ranks 0,n/100,n/2,n-1 --algorithms auto --reps 15 ;;
    algorithms) bench algorithms 90 --sizes 28 --types f32,f64 --dists uniform \
        --algorithms auto,randomized,radix,radix-inplace,bucket,sample,quick,cutting-plane,sort-choose --reps 11 ;;
    sizes)
        bench sizes-f32 120 --sizes 20,21,22,23,24,25,26,27,28,29,30 --types f32 --dists uniform \
            --algorithms auto,randomized,radix --reps 15
        bench sizes-f64 100 --sizes 20,21,22,23,24,25,26,27,28,29 --types f64 --dists uniform \
            --algorithms auto,randomized,radix --reps 15 ;;
    table7)
        bench table7-uniform 120 --sizes 18,20,22,24,26,28 --types u32,f32,f64 --dists uniform \
            --algorithms sort-choose,bucket,radix --reps 7
        bench table7-normal 90 --sizes 18,20,22,24,26,28 --types f32,f64 --dists normal \
            --algorithms sort-choose,bucket,radix --reps 7 ;;
    peers)
        timeout 200 python3 benches/peers.py --sizes 28 --types f32,f64 \
            --dists uniform,normal,half-normal,cauchy,distinct16,sorted --reps 11 --slow-reps 1 \
            --json "$out/peers.json" >"$out/peers.log" 2>&1
        echo "== peers exit $?"; cat "$out/peers.log" ;;
    table1) # Blanchard et al. Table I: up to which count M of evenly spaced ranks each
        # multiselection beats sort&choose (uniform; u32, f32, f64; 2^20-2^28)
        bench table1-20-26 60 --sizes 20,22,24,26 --types f32,f64,u32 --dists uniform --ranks none \
            --percentiles "$ladder" --algorithms "$table1_algorithms" --reps 5
        bench table1-28 90 --sizes 28 --types f32,f64,u32 --dists uniform --ranks none \
            --percentiles "$ladder" --algorithms "$table1_algorithms" --reps 5
        tables table1 "$out/table1.md" "$out/table1-20-26.json" "$out/table1-28.json"
        cat "$out/table1.md" 2>/dev/null ;;
    multi) # Auto on 11, 101, 1001, 8191 evenly spaced ranks and 1000 clustered ones, five
        # distributions, f32 and f64, 2^20-2^29
        multi_args=(--types f32,f64 --dists "$multi_dists" --ranks none \
            --percentiles 11,101,1001,8191 --clustered 1000 --algorithms auto --reps 7)
        bench multi-20-26 40 --sizes 20,22,24,26 "${multi_args[@]}"
        bench multi-28 60 --sizes 28 "${multi_args[@]}"
        bench multi-29 110 --sizes 29 "${multi_args[@]}"
        tables multi "$out/multi.md" "$out"/multi-*.json "$out/peers-multi.json" ;;
    peers-multi) # the same grid for torch.quantile, cupy.percentile and torch.sort + gather
        timeout 160 python3 benches/peers.py --sizes 20,22,24,26,28,29 --types f32,f64 \
            --dists "$multi_dists" --percentiles 11,101,1001,8191 --reps 7 --slow-reps 2 \
            --json "$out/peers-multi.json" >"$out/peers-multi.log" 2>&1
        echo "== peers-multi exit $?"
        grep -c " ok$" "$out/peers-multi.log" | sed 's/^/rows ok: /'
        grep -c "unsupported" "$out/peers-multi.log" | sed 's/^/rows refused: /'
        grep -E "MISMATCH|rror" "$out/peers-multi.log" | sort | uniq -c | head -5
        tables multi "$out/multi.md" "$out"/multi-*.json "$out/peers-multi.json" ;;
    esac
done
