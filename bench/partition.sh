#!/usr/bin/env bash
# Partitioned runs (docs/partitioned-runs.md): the same job in 1, 2 and 4 processes. Usage:
#
#   bench/partition.sh BUILD_DIR [CASES] [COUNTS]
#
# CASES is a comma-separated subset of: ring1024 (a 1,024-rank ring all-reduce of 1 MiB in
# astra_unaware on dgx_a100_cluster), torus3d (a 3-D all-reduce of 16 MiB in analytical on a
# 8 x 8 x 16 torus), big4096 (4,096 ranks of dgx_a100_cluster widened, analytical, a GEMM and
# an all-reduce of 16 MiB, 3 iterations). Default: all. COUNTS: the process counts, default
# "1 2 4" (1 = the single-process run, without mpirun).
#
# Prints one Markdown table row per case and count: wall time, the peak RSS of the largest
# process, the simulated time, and whether the report (without wall_seconds, events and
# command_line) is identical to the single-process one. Traces go to a temporary folder.
set -euo pipefail
build=${1:?usage: bench/partition.sh BUILD_DIR [CASES] [COUNTS]}
cases=${2:-ring1024,torus3d,big4096}
counts=${3:-1 2 4}
etsim=$(realpath "$build/apps/etsim")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

declare -A platform trace
"$etsim" gen microbench --ranks 1024 --size "1 MiB" --out "$work/ring1024" >/dev/null
platform[ring1024]="--platform dgx_a100_cluster --set fabric.fidelity=astra_unaware"
"$etsim" gen microbench --ranks 1024 --size "16 MiB" --out "$work/torus3d" >/dev/null
cat >"$work/torus.yaml" <<'YAML'
name: torus3d
ranks: 1024
ranks_per_node: 8
accelerator: {preset: h100_sxm, hbm: {preset: hbm3_h100}}
fabric:
  fidelity: analytical
  topology:
    kind: multi_dim
    dims:
      - {kind: ring, size: 8, bandwidth: "100 GB/s", latency: "500 ns"}
      - {kind: ring, size: 8, bandwidth: "100 GB/s", latency: "500 ns"}
      - {kind: ring, size: 16, bandwidth: "50 GB/s", latency: "1 us"}
  collectives: {algorithms: {default: [ring, ring, ring]}, chunks: 4}
driver: {mode: model}
YAML
platform[torus3d]="--platform $work/torus.yaml"
"$etsim" gen microbench --ranks 4096 --size "16 MiB" --iterations 3 --compute-flops 1e11 \
    --out "$work/big4096" >/dev/null
platform[big4096]="--platform dgx_a100_cluster --set ranks=4096
    --set fabric.topology.dims[1].size=512 --set fabric.fidelity=analytical"

same() { # the reports without the host's figures
    python3 - "$1" "$2" <<'PY'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
for r in (a, b):
    for k in ("wall_seconds", "events", "command_line"):
        r.pop(k, None)
print("yes" if a == b else "NO")
PY
}

echo "| case | processes | wall s | peak RSS per process, MiB (max) | simulated time | report identical |"
echo "|---|---|---|---|---|---|"
IFS=, read -r -a list <<<"$cases"
for name in "${list[@]}"; do
    # shellcheck disable=SC2206
    args=(run ${platform[$name]} --trace "$work/$name/microbench" --quiet)
    for count in $counts; do
        report="$work/$name.$count.json"
        rm -f "$work"/time.*
        start=$(date +%s.%N)
        if [ "$count" = 1 ]; then
            /usr/bin/time -v -o "$work/time.0" "$etsim" "${args[@]}" --report "$report"
        else
            mpirun --allow-run-as-root --oversubscribe -n "$count" sh -c \
                '/usr/bin/time -v -o "$0/time.$OMPI_COMM_WORLD_RANK" "$@"' "$work" \
                "$etsim" "${args[@]}" --partitions "$count" --report "$report"
        fi
        end=$(date +%s.%N)
        rss=$(grep -h "Maximum resident" "$work"/time.* | awk '{print $6}' | sort -n | tail -1)
        sim=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['simulated_time_ns'])" "$report")
        identical=$([ "$count" = 1 ] && echo "(reference)" || same "$work/$name.1.json" "$report")
        printf "| %s | %s | %.2f | %d | %s ns | %s |\n" "$name" "$count" \
            "$(echo "$end - $start" | bc)" $((rss / 1024)) "$sim" "$identical"
    done
done
