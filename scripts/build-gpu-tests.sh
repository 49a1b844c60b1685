#!/usr/bin/env bash
# Builds the release test binaries for a CUDA machine that has no Rust toolchain.
#
#   scripts/build-gpu-tests.sh [extra cargo args...]
#
# Puts into ./gpu-bin/ (git-ignored), with stable names:
#   lib            the library's unit tests
#   <name>         every integration test of tests/<name>.rs (selection, properties, nan_policy, ...)
#   bin-<name>     the unit tests of a binary target, if it has any
#   kselect        the release CLI (the CLI tests run it: run-tests.sh sets KSELECT_BIN to it)
#   gpu_select     the GPU bench binary, when the crate has one
#   cutting_plane  the cutting-plane comparison bench (`--backend cuda`), when the crate has one
#   run-tests.sh   runs every test binary with KSELECT_REQUIRE_GPU=1 (see there)
#   BUILD-INFO     commit, date and the build machine's paths
#
# On the GPU machine: `gpu-bin/run-tests.sh [test-harness args...]`, e.g. `gpu-bin/run-tests.sh
# cuda` runs only the tests whose name contains "cuda". The binaries load the CUDA driver and
# NVRTC at run time (cudarc's dynamic loading); they need nothing else from the build machine,
# except what the notes below say.
#
# Notes:
# - The CLI tests (cli, cli_topk, cli_regression) start the binary named by KSELECT_BIN, or
#   else the one cargo built (a path on the build machine); run-tests.sh sets KSELECT_BIN to
#   the kselect copied beside it, so they run on the GPU machine too, their --backend cuda
#   cases included.
# - Tests read the repository's files (tests/data/..., datasets/...) by their path from the
#   working directory, falling back to the build machine's repository. Keep gpu-bin/ inside a
#   copy of the repository: run-tests.sh then runs the tests from its root, as cargo does, and
#   warns when it is not in one.
# - Debug info is stripped from the copies (symbols stay) to keep gpu-bin/ small; set
#   KSELECT_KEEP_DEBUG=1 to keep it (line numbers in backtraces).
# - Requires cargo and python3 (for reading cargo's JSON messages) on the build machine.

set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=$(pwd)
out="$root/gpu-bin"

command -v python3 >/dev/null || {
    echo "error: python3 is needed to read cargo's JSON messages" >&2
    exit 1
}

# Reads cargo's JSON messages on stdin; prints `<stable name> <executable>` for each executable
# artifact. $1 = "tests" for test executables, "bins" for plain binaries, "any" for both.
artifacts() {
    python3 -c '
import json, sys
want = sys.argv[1]
for line in sys.stdin:
    line = line.strip()
    if not line.startswith("{"):
        continue
    msg = json.loads(line)
    if msg.get("reason") != "compiler-artifact" or not msg.get("executable"):
        continue
    target, is_test = msg["target"], msg["profile"]["test"]
    kinds, name = target["kind"], target["name"]
    if want == "tests" and is_test:
        if "test" in kinds:
            stable = name
        elif "lib" in kinds or "rlib" in kinds or "cdylib" in kinds:
            stable = "lib"
        else:
            stable = kinds[0] + "-" + name
    elif want == "bins" and not is_test and "bin" in kinds:
        stable = name
    elif want == "any" and (not is_test or "bench" in kinds):
        stable = name
    else:
        continue
    print(stable, msg["executable"])
' "$1"
}

rm -rf "$out"
mkdir -p "$out"

# The command, and the tests that run it or read data files, need the `cli` feature (the
# library's default build has no features); extra --features arguments add to it.
set -- --features cli "$@"

echo "==> cargo test --release --no-run $*" >&2
tests=$(cargo test --release --no-run --message-format=json-render-diagnostics "$@" | artifacts tests \
    | sort -u)

echo "==> cargo build --release --bins $*" >&2
bins=$(cargo build --release --bins --message-format=json-render-diagnostics "$@" | artifacts bins)

# The GPU bench binary: a bench target named gpu_select if the crate declares one, otherwise
# whatever an earlier build left in target/release/deps.
bench=""
if grep -q '^name *= *"gpu_select"' Cargo.toml || [ -f benches/gpu_select.rs ]; then
    echo "==> cargo build --release --bench gpu_select $*" >&2
    bench=$(cargo build --release --bench gpu_select --message-format=json-render-diagnostics "$@" \
        | artifacts any | awk '$1 == "gpu_select" { print $2 }' | tail -n 1)
fi
if [ -z "$bench" ]; then
    bench=$(find target/release/deps -maxdepth 1 -type f -name 'gpu_select-*' -perm -u+x \
        -printf '%T@ %p\n' 2>/dev/null | sort -n | tail -n 1 | cut -d' ' -f2- || true)
fi

# The cutting-plane comparison bench (benches/cutting_plane.rs), when the crate has one.
cp_bench=""
if [ -f benches/cutting_plane.rs ]; then
    echo "==> cargo build --release --bench cutting_plane $*" >&2
    cp_bench=$(cargo build --release --bench cutting_plane --message-format=json-render-diagnostics \
        "$@" | artifacts any | awk '$1 == "cutting_plane" { print $2 }' | tail -n 1)
fi

# Debug info (profile.release has debug = 1) is stripped to keep gpu-bin/ small enough to ship;
# symbols stay, so backtraces keep function names. KSELECT_KEEP_DEBUG=1 keeps it all.
copy() { # name path
    cp "$2" "$out/$1"
    chmod u+w,+x "$out/$1"
    if [ "${KSELECT_KEEP_DEBUG:-0}" != 1 ] && command -v strip >/dev/null; then
        strip --strip-debug "$out/$1"
    fi
    printf '    %-16s <- %s (%s)\n' "$1" "${2#"$root"/}" "$(du -h "$out/$1" | cut -f1)" >&2
}

echo "==> copying into ${out#"$root"/}/" >&2
test_names=()
while read -r name path; do
    [ -n "$name" ] || continue
    copy "$name" "$path"
    test_names+=("$name")
done <<<"$tests"
while read -r name path; do
    [ -n "$name" ] || continue
    copy "$name" "$path"
done <<<"$bins"
if [ -n "$bench" ]; then
    copy gpu_select "$bench"
else
    echo "    (no gpu_select bench binary)" >&2
fi
if [ -n "$cp_bench" ]; then
    copy cutting_plane "$cp_bench"
fi

{
    echo "commit:        $(git rev-parse HEAD 2>/dev/null || echo unknown)"
    echo "dirty files:   $(git --no-optional-locks status --porcelain 2>/dev/null | wc -l)"
    echo "built:         $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(uname -srm)"
    echo "manifest dir:  $root"
    echo "rustc:         $(rustc --version 2>/dev/null || echo unknown)"
    echo "tests:         ${test_names[*]}"
} >"$out/BUILD-INFO"

# The runner: every test binary, the CLI tests with the copied CLI.
run_list=("${test_names[@]}")

cat >"$out/run-tests.sh" <<EOF
#!/usr/bin/env bash
# Runs every kselect test binary of this folder with KSELECT_REQUIRE_GPU=1, so that the CUDA
# tests (the CLI's --backend cuda cases among them) fail instead of skipping when no GPU is
# usable. Written by scripts/build-gpu-tests.sh.
#
#   run-tests.sh [test-harness args...]     e.g. run-tests.sh cuda --test-threads=4
#
# Extra arguments go to every test binary. Prints pass/fail per binary; exits non-zero when
# any failed. The CLI tests run the kselect beside this script (KSELECT_BIN).

set -u
here=\$(cd "\$(dirname "\${BASH_SOURCE[0]}")" && pwd)
tests=(${run_list[*]})
export KSELECT_REQUIRE_GPU=1
export KSELECT_BIN="\$here/kselect"

# Run from the repository root, as cargo does, when this folder sits in one: the tests find
# the repository's files (tests/data/..., datasets/...) from there.
if [ -f "\$here/../Cargo.toml" ]; then
    cd "\$here/.."
elif [ ! -d "$root/tests" ]; then
    echo "warning: \$here is not inside a copy of the repository, nor is $root (the build" >&2
    echo "         machine's) here: tests that read the repository's files will fail." >&2
fi
if [ ! -x "\$KSELECT_BIN" ]; then
    echo "warning: \$KSELECT_BIN is missing: the CLI tests will fail." >&2
fi

passed=()
failed=()
for t in "\${tests[@]}"; do
    echo "=================== \$t"
    if "\$here/\$t" "\$@"; then
        passed+=("\$t")
    else
        failed+=("\$t (exit \$?)")
    fi
done

echo "=================== summary"
for t in "\${passed[@]}"; do echo "PASS  \$t"; done
for t in "\${failed[@]}"; do echo "FAIL  \$t"; done
[ \${#failed[@]} -eq 0 ]
EOF
chmod +x "$out/run-tests.sh"

echo "==> done: ${out#"$root"/}/run-tests.sh runs ${run_list[*]}" >&2
