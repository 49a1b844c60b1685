#!/usr/bin/env bash
# The runs behind the headline table of BENCHMARKS.md, in one GPU-machine call from the
# repository root; JSON and logs to $OUT/headline/, the table to $OUT/headline/headline.md:
#
#   BIN=<dir> OUT=<dir> [PARTS="select small percentiles batch lts peers cub"] [DEADLINE=540] \
#       scripts/headline.sh
#
# BIN holds the release bench binaries gpu_select, gpu_batch and regression (here:
# `cargo build --release --features io --bench gpu_select --bench gpu_batch --bench regression`,
# then copy each target/release/deps/<name>-<hash> to BIN/<name>; gpu-bin/regression of
# scripts/build-gpu-tests.sh is a test binary, not this one). The peers need python3 with
# PyTorch (CuPy optional); the part cub, CUB's top-k (benches/peers_cub.sh), needs CCCL 3.6
# headers (tune/cccl.tar.xz, carried with tune/) and BIN/peers_cub or tune/cccl/bin/peers_cub
# built from the same source, else nvcc and minutes to build it within the step's limit. Back
# on the build machine, `python3 benches/headline.py <OUT>/headline --splice BENCHMARKS.md`
# puts the table there.
#
# Each step runs under its own timeout, cut to the time left before DEADLINE seconds from the
# start (a step with less than 10 s left is skipped); a step that fails or times out (exit 124)
# does not stop the others. Each step's exit status goes to steps.log.
#
# Expected device time, from the H200 runs of benches/results and the notes of
# scripts/bench-sweep.sh (host work dominates: each gpu_select case generates its input on the
# CPU, finds the answer there, copies >= 512 MiB to the GPU; kernels compile on first use):
#   select       ~70 s  2^28, f32/f64, 7 distributions, 4 ranks (14 inputs, ~4 s of host work each)
#   small        ~20 s  2^10-2^22, f32/f64, k = n/2 (16 small inputs)
#   percentiles  ~15 s  2^28, f32/f64, 101 and 1001 evenly spaced ranks (one CPU sort each)
#   batch        ~55 s  4 GiB of rows (top-65536 sorted 14 ms a call), 2^26 thresholding (an
#                       upload a run for the in-place form), one array of 2^28 (its CPU reference)
#   lts          ~15 s  10^6 and 10^7 rows (~0.15 s and ~1.2 s a fit, 5 fits each)
#   peers       ~130 s  torch.kthvalue of 2^28 takes ~2 s a call (--slow-reps 1), torch.sort of
#                       4 GiB of rows ~0.1 s, CuPy's kernels compile on first use
#   cub           ~5 s  CUB's top-k on the batch part's inputs (H200, 2026-11-28, a ready binary;
#                       building it there takes minutes more)
# About 5 minutes in all; DEADLINE (540 s) bounds the whole below 10 minutes.
set -u
bin=${BIN:?BIN: the directory of the gpu_select, gpu_batch and regression bench binaries}
out=${OUT:-/tmp/out}/headline
parts=" ${PARTS:-select small percentiles batch lts peers cub} "
deadline=${DEADLINE:-540}
mkdir -p "$out"
: >"$out/steps.log"
export KSELECT_REQUIRE_GPU=1

# The sizes (log2 n) of the small-input comparison: even exponents, and 2^20-2^22.
small_sizes=10,12,14,16,18,20,21,22
# The batched top-k inputs: rows of 1024 and rows of 2^20 (k = 32, 1024 and the top 65536),
# then one array of 2^28 values as a single row.
batch_shapes=65536x1024,1024x1048576
long_array=1x268435456
long_ks=32,1024,65536

# Whether PARTS names part $1.
wanted() { [[ $parts == *" $1 "* ]]; }

# step NAME TIMEOUT COMMAND...: runs COMMAND --json $out/NAME.json, its output to NAME.log,
# under TIMEOUT seconds or the time left before the deadline, whichever is less.
step() {
    local name=$1 limit=$2 left=$((deadline - SECONDS)) start=$SECONDS rc
    shift 2
    if [ "$left" -lt 10 ]; then
        echo "== $name skipped: ${left} s left before the deadline" | tee -a "$out/steps.log"
        return
    fi
    [ "$limit" -le "$left" ] || limit=$left
    timeout "$limit" "$@" --json "$out/$name.json" >"$out/$name.log" 2>&1
    rc=$?
    echo "== $name exit $rc after $((SECONDS - start)) s (limit $limit s)" | tee -a "$out/steps.log"
    grep -E "WRONG|MISMATCH|rror" "$out/$name.log" | head -5
}

nvidia-smi --query-gpu=name,memory.total,clocks.sm,clocks.mem --format=csv >"$out/gpu.txt" 2>&1
if wanted select; then
    step select 150 "$bin/gpu_select" --sizes 28 --types f32,f64 \
        --dists uniform,normal,half-normal,cauchy,distinct16,sorted,bucket-killer \
        --ranks 0,n/100,n/2,n-1 --algorithms auto --reps 15
fi
if wanted small; then
    step small 60 "$bin/gpu_select" --sizes "$small_sizes" --types f32,f64 --dists uniform \
        --ranks n/2 --algorithms auto --reps 25
fi
if wanted percentiles; then
    step percentiles 60 "$bin/gpu_select" --sizes 28 --types f32,f64 --dists uniform \
        --ranks none --percentiles 101,1001 --algorithms auto --reps 15
fi
if wanted batch; then
    step batch 90 "$bin/gpu_batch" --shapes "$batch_shapes" --ks-short 16,256 \
        --ks-long "$long_ks" --threshold-sizes 26 --types f32 --reps 11
    step batch-long-array 90 "$bin/gpu_batch" --shapes "$long_array" --ks-long "$long_ks" \
        --threshold-sizes none --types f32 --reps 11
fi
if wanted lts; then
    step lts 60 "$bin/regression" --device cuda --sizes 1e6,1e7 --reps 5
fi
if wanted peers; then
    # The small sizes and 2^28 (beside the select part's uniform inputs), one rank each.
    step peers-select 120 python3 benches/peers.py --sizes "$small_sizes,28" --types f32,f64 \
        --dists uniform --reps 25 --slow-reps 1
    step peers-percentiles 60 python3 benches/peers.py --sizes 28 --types f32,f64 \
        --dists uniform --percentiles 101,1001 --reps 15 --slow-reps 2
    step peers-batch 90 python3 benches/peers_batch.py --shapes "$batch_shapes" --ks-short 16,256 \
        --ks-long "$long_ks" --threshold-sizes 26 --types f32 --reps 11 --slow-reps 3
    step peers-batch-long-array 60 python3 benches/peers_batch.py --shapes "$long_array" \
        --ks-long "$long_ks" --threshold-sizes "" --types f32 --reps 11 --slow-reps 1
fi
if wanted cub; then
    # The batch part's inputs and k with CUB's DeviceBatchedTopK (the rows) and DeviceTopK (the
    # one array), largest/smallest, keys/pairs, unsorted/sorted; BIN/peers_cub where there is one.
    [ -x "$bin/peers_cub" ] && export PEERS_CUB_BIN="$bin/peers_cub"
    step peers-cub 240 benches/peers_cub.sh --shapes "$batch_shapes,$long_array" --ks-short 16,256 \
        --ks-long "$long_ks" --types f32 --reps 11 --slow-reps 3
fi
python3 benches/headline.py "$out" --json "$out/headline.json" >"$out/headline.md" 2>&1
echo "== headline table exit $? ($SECONDS s in all)"
cat "$out/headline.md"
