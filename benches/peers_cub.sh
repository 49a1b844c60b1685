#!/usr/bin/env bash
# Builds benches/peers_cub.cu (CUB's batched top-k as a peer) and runs it, from the repository
# root, on a machine with a GPU (sm_90: H100, H200) and nvcc:
#
#   benches/peers_cub.sh [options of peers_cub] --json OUT.json
#
# The options are peers_cub's (see the head of benches/peers_cub.cu); without any it runs the
# default cases. The program needs CCCL 3.6 or later (CUDA 13.0's own CCCL is 3.0): the headers
# are read from $CCCL_INCLUDE, by default tune/cccl/include, unpacked first from tune/cccl.tar.xz
# where only that is there. The binary is built once per source and headers (under
# $PEERS_CUB_BUILD, default /tmp/peers_cub); $PEERS_CUB_BIN names a ready one instead, and
# tune/cccl/bin/peers_cub is used when its peers_cub.sha256 matches benches/peers_cub.cu and the
# headers. The build takes minutes (hundreds of instantiations of CUB's top-k);
# PEERS_CUB_NVCC_FLAGS adds flags (-DPEERS_CUB_F64=0 and -DPEERS_CUB_SORTED=0 leave out f64 and
# the sorted output, most of the build).
#
# Off the GPU machine:
#   benches/peers_cub.sh --pack-headers     # tune/cccl.tar.xz and tune/cccl/VERSION from PyPI's
#                                           # cuda-cccl wheel ($CCCL_WHEEL, default cuda-cccl==1.2.1)
#   benches/peers_cub.sh --pip-nvcc DIR     # CUDA 13.0's nvcc from PyPI's wheels laid out in DIR:
#                                           # it compiles (it cannot run) the program without a GPU
#   benches/peers_cub.sh --build-only [DIR] # builds into DIR (default tune/cccl/bin) with $NVCC,
#                                           # recording the source's and headers' hash beside it
set -u
cd "$(dirname "$0")/.."

inc=${CCCL_INCLUDE:-tune/cccl/include}
nvcc=${NVCC:-nvcc}
src=benches/peers_cub.cu

# A hash of the source, the headers' version and the flags: which build a binary is.
build_id() {
    {
        cat "$src"
        cat "$inc/cuda/std/__cccl/version.h" 2>/dev/null
        echo "${PEERS_CUB_NVCC_FLAGS:-}"
    } | sha256sum | cut -d' ' -f1
}

# cccl_version [INCLUDE]: "3.6.0 (CCCL_VERSION 3006000)" of the headers under INCLUDE ($inc).
cccl_version() {
    sed -n 's/^#define CCCL_VERSION \([0-9]*\).*/\1/p' "${1:-$inc}/cuda/std/__cccl/version.h" 2>/dev/null |
        awk '{ printf "%d.%d.%d (CCCL_VERSION %d)", $1 / 1000000, ($1 / 1000) % 1000, $1 % 1000, $1 }'
}

unpack_headers() {
    if [ ! -d "$inc/cub" ] && [ "$inc" = tune/cccl/include ] && [ -f tune/cccl.tar.xz ]; then
        tar xJf tune/cccl.tar.xz -C tune || exit 1
    fi
    if [ ! -f "$inc/cub/device/device_batched_topk.cuh" ]; then
        echo "peers_cub.sh: no CCCL with cub::DeviceBatchedTopK under $inc (CCCL_INCLUDE)" >&2
        exit 1
    fi
}

# build DIR: builds DIR/peers_cub and writes DIR/peers_cub.sha256.
build() {
    local dir=$1 id
    id=$(build_id)
    mkdir -p "$dir" || exit 1
    "$nvcc" --version | tail -n 2
    echo "CCCL $(cccl_version) from $inc"
    echo "building $dir/peers_cub ..."
    local start=$SECONDS
    # shellcheck disable=SC2086
    "$nvcc" -O3 -std=c++17 -arch=sm_90 -I"$inc" ${PEERS_CUB_NVCC_FLAGS:-} "$src" -o "$dir/peers_cub" || exit 1
    echo "$id" >"$dir/peers_cub.sha256"
    echo "built in $((SECONDS - start)) s"
}

case "${1:-}" in
--pack-headers)
    tmp=$(mktemp -d) || exit 1
    wheel=${CCCL_WHEEL:-cuda-cccl==1.2.1}
    python3 -m pip download --no-deps --only-binary=:all: --python-version 3.11 -d "$tmp" "$wheel" || exit 1
    python3 -m zipfile -e "$tmp"/*.whl "$tmp/w" || exit 1
    rm -rf tune/cccl/include
    mkdir -p tune/cccl || exit 1
    cp -r "$tmp/w/cuda/cccl/headers/include" tune/cccl/include || exit 1
    rm -f tune/cccl/include/__init__.py
    {
        echo "CCCL $(cccl_version tune/cccl/include)"
        echo "headers: cuda/cccl/headers/include of $(basename "$tmp"/*.whl) ($wheel, PyPI)"
        echo "sha256 of the wheel: $(sha256sum "$tmp"/*.whl | cut -d' ' -f1)"
    } >tune/cccl/VERSION
    tar cJf tune/cccl.tar.xz -C tune cccl/include cccl/VERSION || exit 1
    rm -rf "$tmp" tune/cccl/include
    cat tune/cccl/VERSION
    ls -l tune/cccl.tar.xz
    exit 0
    ;;
--pip-nvcc)
    dir=${2:?--pip-nvcc DIR}
    tmp=$(mktemp -d) || exit 1
    for w in nvidia-cuda-nvcc==13.0.88 nvidia-nvvm==13.0.88 nvidia-cuda-crt==13.0.88 \
        nvidia-cuda-runtime==13.0.88 nvidia-cuda-cccl==13.0.85; do
        python3 -m pip download --no-deps --only-binary=:all: -d "$tmp" "$w" || exit 1
    done
    for w in "$tmp"/*.whl; do python3 -m zipfile -e "$w" "$tmp/w" || exit 1; done
    mkdir -p "$dir" && cp -r "$tmp/w/nvidia/cu13/." "$dir/" || exit 1
    [ -e "$dir/lib64" ] || ln -s lib "$dir/lib64"
    chmod +x "$dir"/bin/* "$dir"/nvvm/bin/* 2>/dev/null
    rm -rf "$tmp"
    "$dir/bin/nvcc" --version | tail -n 2
    echo "NVCC=$dir/bin/nvcc benches/peers_cub.sh --build-only"
    exit 0
    ;;
--build-only)
    unpack_headers
    build "${2:-tune/cccl/bin}"
    exit 0
    ;;
esac

unpack_headers
if command -v "$nvcc" >/dev/null 2>&1; then
    "$nvcc" --version | tail -n 2
else
    echo "no nvcc ($nvcc)"
fi
echo "CCCL $(cccl_version) from $inc"
[ -f tune/cccl/VERSION ] && sed 's/^/  /' tune/cccl/VERSION

bin=${PEERS_CUB_BIN:-}
if [ -z "$bin" ]; then
    id=$(build_id)
    if [ -x tune/cccl/bin/peers_cub ] && [ "$(cat tune/cccl/bin/peers_cub.sha256 2>/dev/null)" = "$id" ]; then
        bin=tune/cccl/bin/peers_cub
    else
        dir=${PEERS_CUB_BUILD:-/tmp/peers_cub}
        if [ ! -x "$dir/peers_cub" ] || [ "$(cat "$dir/peers_cub.sha256" 2>/dev/null)" != "$id" ]; then
            build "$dir"
        fi
        bin=$dir/peers_cub
    fi
fi
echo "running $bin $*"
exec "$bin" "$@"
