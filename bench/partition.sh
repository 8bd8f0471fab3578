#!/usr/bin/env bash
# Partitioned runs (docs/partitioned-runs.md): the same job in 1, 2 and 4 processes. Usage:
#
#   bench/partition.sh BUILD_DIR [CASES] [COUNTS]
#
# CASES is a comma-separated subset of: ring1024 (a 1,024-rank ring all-reduce of 1 MiB in
# astra_unaware on dgx_a100_cluster), ring1024aware (the same in astra_aware), torus3d (a 3-D all-reduce of 16 MiB in analytical on a
# 8 x 8 x 16 torus), big4096 (4,096 ranks of dgx_a100_cluster widened, analytical, a GEMM and
# an all-reduce of 16 MiB, 3 iterations), transformer256 (a Llama-3 70B step cut to 4 layers,
# TP 8 x PP 4 x DP 8, on hgx_h100_4node widened to 256 ranks, flow fidelity, every send
# eager), and three 32-rank flow cases: ring32 (a ring all-reduce of 4 MiB, 2 iterations, on
# hgx_h100_4node), crossbar32 (the same with one 100 GB/s crossbar shared by every rail,
# dims[1].switch_bandwidth) and alltoall32 (a direct all-to-all of 16 MiB, 2 iterations, on a
# fat tree of 4 leaves and 8 spines), and multidim65536 (a 4-D all-reduce of 16 MiB over
# 8 x 8 x 32 x 32 rings in analytical, one rank's trace replicated to 65,536 ranks; about
# 3 minutes and 4.7 GiB in one process). Default: all. COUNTS: the process counts, default
# "1 2 4" (1 = the single-process run, without mpirun).
#
# Prints one Markdown table row per case and count: wall time, the peak RSS of the largest
# process, the simulated time, and whether the report (without wall_seconds, events and
# command_line) is identical to the single-process one; where it is not, the error of the
# simulated time and, for flow, whether only the link figures are missing. Traces go to a
# temporary folder.
set -euo pipefail
build=${1:?usage: bench/partition.sh BUILD_DIR [CASES] [COUNTS]}
cases=${2:-ring1024,ring1024aware,torus3d,big4096,transformer256,ring32,crossbar32,alltoall32,multidim65536}
counts=${3:-1 2 4}
etsim=$(realpath "$build/apps/etsim")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# A platform of rings in analytical, one dimension per argument "SIZE|BANDWIDTH|LATENCY":
# ring_platform FILE NAME RANKS DIM...
ring_platform() {
    local file=$1 name=$2 ranks=$3 dim size bandwidth latency algorithms=""
    shift 3
    {
        printf 'name: %s\nranks: %s\nranks_per_node: 8\n' "$name" "$ranks"
        printf 'accelerator: {preset: h100_sxm, hbm: {preset: hbm3_h100}}\n'
        printf 'fabric:\n  fidelity: analytical\n  topology:\n    kind: multi_dim\n    dims:\n'
        for dim in "$@"; do
            IFS='|' read -r size bandwidth latency <<<"$dim"
            printf '      - {kind: ring, size: %s, bandwidth: "%s", latency: "%s"}\n' \
                "$size" "$bandwidth" "$latency"
            algorithms+="${algorithms:+, }ring"
        done
        printf '  collectives: {algorithms: {default: [%s]}, chunks: 4}\n' "$algorithms"
        printf 'driver: {mode: model}\n'
    } >"$file"
}

declare -A platform
"$etsim" gen microbench --ranks 1024 --size "1 MiB" --out "$work/ring1024" >/dev/null
platform[ring1024]="--platform dgx_a100_cluster --set fabric.fidelity=astra_unaware"
ln -s ring1024 "$work/ring1024aware"
platform[ring1024aware]="--platform dgx_a100_cluster --set fabric.fidelity=astra_aware"
"$etsim" gen microbench --ranks 1024 --size "16 MiB" --out "$work/torus3d" >/dev/null
ring_platform "$work/torus.yaml" torus3d 1024 "8|100 GB/s|500 ns" "8|100 GB/s|500 ns" \
    "16|50 GB/s|1 us"
platform[torus3d]="--platform $work/torus.yaml"
"$etsim" gen microbench --ranks 4096 --size "16 MiB" --iterations 3 --compute-flops 1e11 \
    --out "$work/big4096" >/dev/null
platform[big4096]="--platform dgx_a100_cluster --set ranks=4096
    --set fabric.topology.dims[1].size=512 --set fabric.fidelity=analytical"

# One rank's all-reduce replicated to 65,536 ranks: the trace is one file however many ranks.
"$etsim" gen microbench --ranks 1 --size "16 MiB" --out "$work/multidim65536" >/dev/null
ring_platform "$work/multidim.yaml" four_d_65536 65536 "8|200 GB/s|500 ns" "8|100 GB/s|1 us" \
    "32|50 GB/s|2 us" "32|25 GB/s|5 us"
platform[multidim65536]="--platform $work/multidim.yaml --replicate 65536"

"$etsim" gen transformer --preset llama3-70b --layers 4 --tp 8 --pp 4 --dp 8 --global-batch 32 \
    --micro-batch 1 --out "$work/transformer256" --name microbench >/dev/null
platform[transformer256]="--platform hgx_h100_4node --set ranks=256
    --set fabric.topology.dims[1].size=32 --set driver.eager_threshold=1GiB"

"$etsim" gen microbench --ranks 32 --size "4 MiB" --iterations 2 --compute-flops 1e9 \
    --out "$work/ring32" >/dev/null
platform[ring32]="--platform hgx_h100_4node"
"$etsim" gen microbench --ranks 32 --size "4 MiB" --iterations 2 --out "$work/crossbar32" >/dev/null
platform[crossbar32]="--platform hgx_h100_4node --set fabric.topology.dims[1].switch_bandwidth=100GB/s"
"$etsim" gen microbench --ranks 32 --collective all_to_all --size "16 MiB" --iterations 2 \
    --out "$work/alltoall32" >/dev/null
cat >"$work/fattree.yaml" <<'YAML'
name: fat_tree_32
ranks: 32
ranks_per_node: 8
accelerator: {preset: h100_sxm, hbm: {preset: hbm3_h100}}
fabric:
  fidelity: flow
  topology:
    kind: fat_tree
    fat_tree: {endpoints: 32, endpoints_per_leaf: 8, spines: 8, host_bandwidth: "50 GB/s",
               host_latency: "1 us", uplink_bandwidth: "50 GB/s", uplink_latency: "500 ns"}
  collectives: {algorithms: {default: [direct], all_reduce: [ring]}}
driver: {mode: model}
YAML
platform[alltoall32]="--platform $work/fattree.yaml"

same() { # the reports without the host's figures
    python3 - "$1" "$2" <<'PY'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
for r in (a, b):
    for k in ("wall_seconds", "events", "command_line", "partitions"):
        r.pop(k, None)
if a == b:
    print("yes")
else:
    error = b["simulated_time_ns"] / a["simulated_time_ns"] - 1
    rest = [k for k in a if k != "resources" and a[k] != b.get(k)]
    links = "links_unavailable" in b["resources"] and "links_unavailable" not in a["resources"]
    print("NO: time %+.4f %%, %s" % (100 * error, "other fields differ: " + ", ".join(rest)
          if rest else "only the link figures are left out" if links else "resources differ"))
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
            mpirun --allow-run-as-root --oversubscribe --bind-to none -n "$count" sh -c \
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
