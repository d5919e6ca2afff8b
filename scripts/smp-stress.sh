#!/usr/bin/env bash
# The in-guest test suite, many times over, on all four cores, with the
# host's CPUs busy: what docs/smp.md quotes for "runs under load".
#
#   scripts/smp-stress.sh [RUNS] [MACHINE] [HOGS]
#
# RUNS (default 50) boots of `portcullis run --mode test --cpus 4` on
# MACHINE (virt or raspi4b, default virt), with HOGS (default: the host's
# CPU count) busy loops running beside them the whole time. Prints one line
# per run and a summary; the output of each failed run is kept in
# target/smp-stress/MACHINE-N.log. Exits non-zero if any run failed.
set -u
runs=${1:-50}
machine=${2:-virt}
hogs=${3:-$(nproc)}
cd "$(dirname "$0")/.."
out=target/smp-stress
mkdir -p "$out"
cargo build -q --release -p portcullis --bin portcullis || exit 2
runner=${CARGO_TARGET_DIR:-target}/release/portcullis
hog_pids=()
for _ in $(seq "$hogs"); do
    (while :; do :; done) &
    hog_pids+=($!)
done
trap 'kill "${hog_pids[@]}" 2>/dev/null' EXIT
failed=0
for n in $(seq "$runs"); do
    start=$(date +%s)
    if "$runner" run --mode test --machine "$machine" --cpus 4 --timeout 600 \
        >"$out/$machine-$n.log" 2>&1; then
        verdict=pass
        rm -f "$out/$machine-$n.log"
    else
        verdict=FAIL
        failed=$((failed + 1))
    fi
    echo "run $n/$runs on $machine: $verdict in $(( $(date +%s) - start )) s"
done
echo "smp-stress: $machine, $runs runs with $hogs CPU hogs: $failed failed"
[ "$failed" -eq 0 ]
