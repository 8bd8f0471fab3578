#!/usr/bin/env bash
# Builds the trace-reader fuzzer with clang in BUILD_DIR and runs it from a seed corpus of
# small traces written by our writer plus tests/et_driver/corpus. The whole script, build
# included, takes at most SECONDS of wall time (the fuzzing gets what the build leaves).
# Inputs that crash, leak or time out are copied to tests/et_driver/corpus/ (keep them: a
# gtest reads them) and the script fails.
# SECONDS = 0 only builds (ctest runs that first, so the timed run is all fuzzing).
# TARGET is `reader` (default) or `pytorch`: the PyTorch importer's readers, seeded from
# tests/importers/corpus, which also receives what that fuzzer finds.
# Usage: tests/fuzz/run-fuzz.sh BUILD_DIR SECONDS [TARGET]
set -euo pipefail
if [[ $# -lt 2 || $# -gt 3 ]]; then
    echo "usage: $0 BUILD_DIR SECONDS [reader|pytorch]" >&2
    exit 2
fi
build_dir=$1
budget=$2
target=${3:-reader}
started=$SECONDS
source_dir=$(cd "$(dirname "$0")/../.." && pwd)

"$source_dir/scripts/install-deps.sh" fuzz
if [[ ! -f "$build_dir/CMakeCache.txt" ]]; then
    generator=()
    command -v ninja >/dev/null 2>&1 && generator=(-G Ninja)
    CXX=clang++ cmake -S "$source_dir" -B "$build_dir" "${generator[@]}" \
        -DCMAKE_BUILD_TYPE=RelWithDebInfo -DETSIM_FUZZ=ON \
        -DETSIM_BUILD_TESTS=OFF -DETSIM_BUILD_BENCH=OFF -DETSIM_BUILD_APPS=OFF >/dev/null
fi
cmake --build "$build_dir" -j 2 --target etsim_fuzz_trace_reader etsim_fuzz_seeds \
    etsim_fuzz_pytorch_import >/dev/null
[[ $budget -eq 0 ]] && exit 0

case $target in
reader) fuzzer=etsim_fuzz_trace_reader; keep="$source_dir/tests/et_driver/corpus" ;;
pytorch) fuzzer=etsim_fuzz_pytorch_import; keep="$source_dir/tests/importers/corpus" ;;
*) echo "$0: unknown target $target (reader, pytorch)" >&2; exit 2 ;;
esac
seeds="$build_dir/fuzz/$target/seeds"
corpus="$build_dir/fuzz/$target/corpus"
artifacts="$build_dir/fuzz/$target/artifacts"
rm -rf "$seeds" "$artifacts"
mkdir -p "$seeds" "$corpus" "$artifacts"
[[ $target == reader ]] && "$build_dir/tests/fuzz/etsim_fuzz_seeds" "$seeds"
find "$keep" -type f ! -name README.md -exec cp {} "$seeds/" \;

left=$((budget - (SECONDS - started) - 5))
((left < 1)) && left=1
echo "fuzzing $target for ${left}s"
status=0
"$build_dir/tests/fuzz/$fuzzer" -max_total_time="$left" -max_len=65536 \
    -timeout=10 -rss_limit_mb=1024 -print_final_stats=1 \
    -artifact_prefix="$artifacts/" "$corpus" "$seeds" 2>"$build_dir/fuzz/$target/log.txt" || status=$?
tail -n 12 "$build_dir/fuzz/$target/log.txt"
found=$(find "$artifacts" -type f | wc -l)
if [[ $status -ne 0 || $found -ne 0 ]]; then
    for input in "$artifacts"/*; do
        [[ -f "$input" ]] || continue
        cp "$input" "$keep/$(basename "$input")"
        echo "kept $(basename "$input") in ${keep#"$source_dir"/}/"
    done
    echo "run-fuzz.sh: the fuzzer found a failing input (exit $status); see $build_dir/fuzz/$target/log.txt" >&2
    exit 1
fi
