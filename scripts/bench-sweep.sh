#!/usr/bin/env bash
# The GPU selection benchmarks of BENCHMARKS.md, in one GPU-machine call; JSON and logs to $OUT.
#   scripts/bench-sweep.sh [dists] [algorithms] [sizes] [table7] [peers]   (default: all)
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
    esac
done
