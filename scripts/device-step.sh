#!/usr/bin/env bash
# One GPU-machine call: tests, then benches and a per-kernel profile. Writes logs under $OUT.
#   scripts/device-step.sh [tests|bench|profile|huge]...   (default: tests bench)
set -u
out=${OUT:-/tmp/out}
mkdir -p "$out"
steps=("$@")
[ ${#steps[@]} -gt 0 ] || steps=(tests bench)
nvidia-smi --query-gpu=name,memory.total,clocks.sm,clocks.mem --format=csv | tee "$out/gpu.txt"
for step in "${steps[@]}"; do
    case "$step" in
    tests)
        gpu-bin/run-tests.sh --test-threads=4 >"$out/tests.log" 2>&1
        echo "tests exit $?"; grep -E "^(PASS|FAIL)|panicked|FAILED|failures:" "$out/tests.log" | head -40 ;;
    huge)
        gpu-bin/huge_inputs --ignored --nocapture >"$out/huge.log" 2>&1
        echo "huge exit $?"; tail -15 "$out/huge.log" ;;
    bench)
        KSELECT_REQUIRE_GPU=1 gpu-bin/gpu_select ${BENCH_ARGS:---sizes 20,22,24,26,28 --types f32,f64 --dists uniform --algorithms auto,randomized,radix,radix-inplace,bucket --reps 15} --json "$out/bench.json" >"$out/bench.log" 2>&1
        echo "bench exit $?"; cat "$out/bench.log" ;;
    profile)
        ncu --clock-control none --metrics gpu__time_duration.sum --print-summary per-kernel \
            gpu-bin/gpu_select ${PROFILE_ARGS:---sizes 28 --types f32 --dists uniform --algorithms randomized --reps 5} >"$out/profile.log" 2>&1
        echo "profile exit $?"; grep -vE "^(==PROF==|  *-|$)" "$out/profile.log" | grep -E "[a-z]+_[a-z0-9_]+\(|duration" | cut -c1-150 | head -60 ;;
    esac
done
