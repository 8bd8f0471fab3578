#!/usr/bin/env bash
# Builds the libFuzzer targets with clang in BUILD_DIR and runs each named TARGET (default:
# all) for SECONDS of fuzzing, from its seed corpus: inputs our own writers make
# (etsim_fuzz_seeds), the committed text seeds in tests/fuzz/seeds/TARGET and the committed
# regressions in tests/fuzz/regressions/TARGET (tests/et_driver/corpus for the trace reader). The corpus each run grows is kept in BUILD_DIR/fuzz/corpus/TARGET, so later runs
# start where earlier ones stopped.
# Inputs that crash, leak or time out are copied to the regressions folder (commit them: every
# later run replays them, and a gtest should pin the fix) and the script fails.
# SECONDS = 0 only builds (ctest runs that first, so the timed runs are all fuzzing).
# At the end it prints one line per target: "fuzz TARGET: N executions in S s, 0 crashes".
# Environment: FUZZ_RUNS=N stops each target after N executions instead of after SECONDS
# (SECONDS then only has to be non-zero); FUZZ_FLAGS adds libFuzzer flags (`make fuzz-long`
# passes -entropic=0, see bench/README.md "Fuzzing").
# Usage: tests/fuzz/run-fuzz.sh BUILD_DIR SECONDS [TARGET...]
set -euo pipefail
if [[ $# -lt 2 ]]; then
    echo "usage: $0 BUILD_DIR SECONDS [TARGET...]" >&2
    exit 2
fi
build_dir=$1
budget=$2
shift 2
all_targets=(trace_reader trace_json platform astra_config wire stl msccl pytorch_import round)
targets=("$@")
((${#targets[@]} == 0)) && targets=("${all_targets[@]}")
source_dir=$(cd "$(dirname "$0")/../.." && pwd)

"$source_dir/scripts/install-deps.sh" fuzz
if [[ ! -f "$build_dir/CMakeCache.txt" ]]; then
    generator=()
    command -v ninja >/dev/null 2>&1 && generator=(-G Ninja)
    # ccache keeps the sanitizer objects across fresh build folders and checkouts.
    launcher=()
    command -v ccache >/dev/null 2>&1 &&
        launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
    CXX=clang++ cmake -S "$source_dir" -B "$build_dir" "${generator[@]}" "${launcher[@]}" \
        -DCMAKE_BUILD_TYPE=RelWithDebInfo -DETSIM_FUZZ=ON -DETSIM_WITH_NS3=OFF \
        -DETSIM_WITH_VERILATOR=OFF -DETSIM_BUILD_TESTS=OFF -DETSIM_BUILD_BENCH=OFF \
        -DETSIM_BUILD_APPS=OFF >/dev/null
fi
build_targets=(etsim_fuzz_seeds)
for target in "${targets[@]}"; do
    build_targets+=("etsim_fuzz_$target")
done
# Quiet when it works; on failure the compiler's errors are what the caller needs to see.
mkdir -p "$build_dir/fuzz"
if ! cmake --build "$build_dir" -j 2 --target "${build_targets[@]}" >"$build_dir/fuzz/build.log" 2>&1; then
    grep -E -B2 -A12 'error|FAILED' "$build_dir/fuzz/build.log" | head -n 80 >&2 || tail -n 80 "$build_dir/fuzz/build.log" >&2
    echo "run-fuzz.sh: building the fuzzers with clang failed; full log: $build_dir/fuzz/build.log" >&2
    exit 1
fi
[[ $budget -eq 0 ]] && exit 0

# Each invocation generates its own seeds: CTest runs several targets at once.
generated=$(mktemp -d "$build_dir/fuzz/generated.XXXXXX")
trap 'rm -rf "$generated"' EXIT
"$build_dir/tests/fuzz/etsim_fuzz_seeds" "$generated"

status=0
for target in "${targets[@]}"; do
    seeds="$build_dir/fuzz/seeds/$target"
    corpus="$build_dir/fuzz/corpus/$target"
    artifacts="$build_dir/fuzz/artifacts/$target"
    log="$build_dir/fuzz/$target.log"
    regressions="$source_dir/tests/fuzz/regressions/$target"
    # The trace reader's regressions are also read by a gtest (FuzzCorpus, et_driver_tests).
    [[ $target == trace_reader ]] && regressions="$source_dir/tests/et_driver/corpus"
    # The PyTorch importer's seeds and regressions, read by PytorchCorpus (importers_tests).
    [[ $target == pytorch_import ]] && regressions="$source_dir/tests/importers/corpus"
    rm -rf "$seeds" "$artifacts"
    mkdir -p "$seeds" "$corpus" "$artifacts"
    for folder in "$generated/$target" "$source_dir/tests/fuzz/seeds/$target" "$regressions"; do
        [[ -d "$folder" ]] && find "$folder" -type f ! -name README.md -exec cp {} "$seeds/" \;
    done
    run=0
    limit=(-max_total_time="$budget")
    [[ -n ${FUZZ_RUNS:-} ]] && limit=(-runs="$FUZZ_RUNS")
    started=$SECONDS
    # shellcheck disable=SC2086 # FUZZ_FLAGS is a list of flags
    "$build_dir/tests/fuzz/etsim_fuzz_$target" "${limit[@]}" -max_len=65536 \
        -timeout=10 -rss_limit_mb=1024 -print_final_stats=1 ${FUZZ_FLAGS:-} \
        -artifact_prefix="$artifacts/" "$corpus" "$seeds" 2>"$log" || run=$?
    executions=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
    seconds=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -n 1)
    found=$(find "$artifacts" -type f | wc -l)
    echo "fuzz $target: ${executions:-0} executions in $((SECONDS - started)) s" \
        "(${seconds:-0}/s), $found crashes (exit $run)"
    if [[ $run -ne 0 || $found -ne 0 ]]; then
        tail -n 40 "$log"
        mkdir -p "$regressions"
        for input in "$artifacts"/*; do
            [[ -f "$input" ]] || continue
            cp "$input" "$regressions/$(basename "$input")"
            echo "kept $(basename "$input") in ${regressions#"$source_dir"/}/"
        done
        status=1
    fi
done
if [[ $status -ne 0 ]]; then
    echo "run-fuzz.sh: a fuzzer found a failing input; see $build_dir/fuzz/*.log" >&2
    exit 1
fi
