#!/usr/bin/env bash
# One GPU-machine call: tests, then benches and a per-kernel profile. Writes logs under $OUT.
#   scripts/device-step.sh [tests|huge|bench|profile|cutting|peers|regression|knn|knn-peers]...
#                                                                    (default: tests bench)
# Arguments of each step come from BENCH_ARGS, PROFILE_ARGS, CUTTING_ARGS, PEERS_ARGS,
# REGRESSION_ARGS, KNN_ARGS, KNN_PEERS_ARGS; the regression step needs gpu-bin/regression_bench
# (the bench binary of benches/regression.rs, copied there by hand: gpu-bin/regression is the
# test binary), the knn step gpu-bin/knn_bench (the bench binary of benches/knn.rs, likewise).
# knn and knn-peers default to the same shapes, so that their JSON compare case by case.
set -u
out=${OUT:-/tmp/out}
mkdir -p "$out"
steps=("$@")
[ ${#steps[@]} -gt 0 ] || steps=(tests bench)
nvidia-smi --query-gpu=name,memory.total,clocks.sm,clocks.mem --format=csv | tee "$out/gpu.txt"
for step in "${steps[@]}"; do
    case "$step" in
    tests)
        timeout ${TESTS_TIMEOUT:-300} gpu-bin/run-tests.sh --test-threads=4 >"$out/tests.log" 2>&1
        echo "tests exit $?"; grep -E "^(PASS|FAIL)|panicked|FAILED|failures:" "$out/tests.log" | head -40 ;;
    huge)
        timeout ${HUGE_TIMEOUT:-300} gpu-bin/huge_inputs --ignored --nocapture >"$out/huge.log" 2>&1
        echo "huge exit $?"; tail -15 "$out/huge.log" ;;
    bench)
        KSELECT_REQUIRE_GPU=1 timeout ${BENCH_TIMEOUT:-200} gpu-bin/gpu_select ${BENCH_ARGS:---sizes 20,22,24,26,28 --types f32,f64 --dists uniform --algorithms auto,randomized,radix,radix-inplace,bucket --reps 15} --json "$out/bench.json" >"$out/bench.log" 2>&1
        echo "bench exit $?"; cat "$out/bench.log" ;;
    profile)
        timeout 120 ncu --clock-control none --metrics gpu__time_duration.sum --print-summary per-kernel \
            gpu-bin/gpu_select ${PROFILE_ARGS:---sizes 28 --types f32 --dists uniform --algorithms randomized --reps 5} >"$out/profile.log" 2>&1
        echo "profile exit $?"; grep -vE "^(==PROF==|  *-|$)" "$out/profile.log" | grep -E "[a-z]+_[a-z0-9_]+\(|duration" | cut -c1-150 | head -60 ;;
    cutting)
        KSELECT_REQUIRE_GPU=1 timeout 120 gpu-bin/cutting_plane --backend cuda ${CUTTING_ARGS:---sizes 20,24,26} --json "$out/cutting.json" >"$out/cutting.log" 2>&1
        echo "cutting exit $?"; cat "$out/cutting.log" ;;
    regression)
        KSELECT_REQUIRE_GPU=1 timeout ${REGRESSION_TIMEOUT:-200} gpu-bin/regression_bench --device cuda ${REGRESSION_ARGS:---method lms --sizes 1e5,1e6 --reps 5} --json "$out/regression.json" >"$out/regression.log" 2>&1
        echo "regression exit $?"; cat "$out/regression.log" ;;
    knn)
        KSELECT_REQUIRE_GPU=1 timeout ${KNN_TIMEOUT:-300} gpu-bin/knn_bench --device cuda ${KNN_ARGS:---dtype f32,f64 --n 1e5 --d 32 --queries 1e4 --ks 1,10,100 --reps 5} --json "$out/knn.json" >"$out/knn.log" 2>&1
        echo "knn exit $?"; cat "$out/knn.log" ;;
    knn-peers)
        timeout ${KNN_PEERS_TIMEOUT:-300} python3 benches/peers_knn.py --peers torch-matmul,torch-cdist ${KNN_PEERS_ARGS:---dtype f32,f64 --n 1e5 --d 32 --queries 1e4 --ks 1,10,100 --reps 5} --json "$out/knn-peers.json" >"$out/knn-peers.log" 2>&1
        echo "knn-peers exit $?"; cat "$out/knn-peers.log" ;;
    peers)
        timeout ${PEERS_TIMEOUT:-200} python3 benches/peers.py ${PEERS_ARGS:---sizes 28 --types f32,f64} --json "$out/peers.json" >"$out/peers.log" 2>&1
        echo "peers exit $?"; cat "$out/peers.log" ;;
    esac
done
