#!/usr/bin/env bash
# Runs every benchmark binary of a build and prints its table. Usage: bench/run.sh BUILD_DIR
set -euo pipefail
build_dir=${1:-build}
shopt -s nullglob
ran=0
for binary in "$build_dir"/bench/etsim_bench_*; do
    [[ -x "$binary" ]] || continue
    echo "== $(basename "$binary")"
    "$binary" --benchmark_counters_tabular=true
    ran=1
done
[[ $ran -eq 1 ]] || { echo "bench/run.sh: no benchmark binaries in $build_dir/bench" >&2; exit 2; }
