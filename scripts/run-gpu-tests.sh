#!/usr/bin/env bash
# Runs the GPU test binaries that scripts/build-gpu-tests.sh put into gpu-bin/, on a CUDA
# machine (no Rust toolchain needed there):
#
#   scripts/run-gpu-tests.sh [test-harness args...]     e.g. scripts/run-gpu-tests.sh cuda
#
# Every binary runs with KSELECT_REQUIRE_GPU=1, so CUDA tests fail instead of skipping when the
# GPU is not usable; the CLI tests run gpu-bin/kselect (KSELECT_BIN), their --backend cuda
# cases against --backend cpu. Exits non-zero when any binary fails.

set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

if [ ! -x gpu-bin/run-tests.sh ]; then
    echo "error: gpu-bin/run-tests.sh is missing: run scripts/build-gpu-tests.sh first" >&2
    echo "       (on a machine with the Rust toolchain), then bring gpu-bin/ here." >&2
    exit 2
fi
if command -v nvidia-smi >/dev/null; then
    nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || true
fi
sed -n '1,6p' gpu-bin/BUILD-INFO 2>/dev/null || true
exec gpu-bin/run-tests.sh "$@"
