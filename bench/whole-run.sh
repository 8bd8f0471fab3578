#!/usr/bin/env bash
# Whole-run benchmark: the workloads of a user's day, end to end, each run REPEATS times
# (median reported) under /usr/bin/time -v. Usage:
#
#   bench/whole-run.sh BUILD_DIR [REPEATS] [WORKLOADS] [KEY=VALUE...]
#
# WORKLOADS is a comma-separated subset of: llama (Llama-3 70B cut to 8 layers, TP 8 x PP 4 x
# DP 4 = 128 ranks, on hgx_h100_4node), ring_flow and ring_aware (a 1,024-rank ring
# all-reduce of 1 MiB, 4 chunks, 50 GiB/s and 500 ns links, in the `flow` and `astra_aware`
# fabric modes, through etsim_bench_models), gpt3 (GPT-3 175B with all of its 1,024 ranks,
# TP 8 x PP 8 x DP 16 on dgx_a100_cluster, the trace of docs/validation.md: 67.7 M nodes,
# 24 GB of trace in the temporary folder, 8 minutes to write and 8 to run, so only when
# named), and step16k (a 405B-class model on 16,384 ranks, TP 8 x PP 16 x DP 128, one layer
# per stage: 4.2 M nodes, 1.3 GB of trace, about 5 GB of memory and a minute and a half a
# run, so only when named). Default: llama, ring_flow and ring_aware, 3 repeats. KEY=VALUE
# pairs are passed to the `etsim run` workloads as --set, e.g. accelerator.dma.per_chunk=true
# to time the per-chunk transactions that the streaming fast path replaces.
#
# Prints one Markdown table row per workload: median wall and CPU (user + system) time,
# work done (trace nodes, or fabric messages), rates per CPU second and per wall second,
# median peak RSS, and the simulated time (which must not change between builds). Needs the
# build's apps/etsim and bench/etsim_bench_models; traces go to a temporary folder that is
# removed at the end.
set -euo pipefail
build=${1:?usage: bench/whole-run.sh BUILD_DIR [REPEATS] [WORKLOADS]}
repeats=${2:-3}
workloads=${3:-llama,ring_flow,ring_aware}
sets=()
for pair in "${@:4}"; do sets+=(--set "$pair"); done
etsim="$build/apps/etsim"
bench="$build/bench/etsim_bench_models"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# measure NAME KIND -- COMMAND...: runs COMMAND `repeats` times; KIND says where the work
# count comes from (report: the etsim JSON report at $work/report.json; bench: the Google
# Benchmark JSON on stdout).
measure() {
    local name=$1 kind=$2
    shift 3
    local i
    for ((i = 0; i < repeats; ++i)); do
        /usr/bin/time -v -o "$work/time.$i" "$@" >"$work/out.$i" 2>"$work/err.$i" || {
            echo "bench/whole-run.sh: $name failed, see below" >&2
            cat "$work/err.$i" >&2
            exit 1
        }
        [[ $kind == report ]] && cp "$work/report.json" "$work/report.$i.json"
    done
    python3 - "$name" "$kind" "$repeats" "$work" <<'PY'
import json, re, statistics, sys
name, kind, repeats, work = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
walls, cpus, rss, counts, sims = [], [], [], [], []
for i in range(repeats):
    text = open(f"{work}/time.{i}").read()
    def field(label):
        return re.search(re.escape(label) + r": (.*)", text).group(1).strip()
    parts = [float(p) for p in field("Elapsed (wall clock) time (h:mm:ss or m:ss)").split(":")]
    wall = parts[-1] + 60 * parts[-2] + (3600 * parts[-3] if len(parts) > 2 else 0)
    walls.append(wall)
    cpus.append(float(field("User time (seconds)")) + float(field("System time (seconds)")))
    rss.append(int(field("Maximum resident set size (kbytes)")) / 1024)
    if kind == "report":
        report = json.load(open(f"{work}/report.{i}.json"))
        counts.append(report["nodes"])
        sims.append(f'{report["simulated_time_ns"] / 1e3:,.3f} us')
    else:
        run = json.load(open(f"{work}/out.{i}"))["benchmarks"][0]
        counts.append(run["messages"])
        sims.append(f'{run["simulated_us"]:,.3f} us')
wall, cpu, count = statistics.median(walls), statistics.median(cpus), statistics.median(counts)
unit = "nodes" if kind == "report" else "messages"
print(f"| {name} | {repeats} | {wall:.2f} s | {cpu:.2f} s | {count:,.0f} {unit} | "
      f"{count / cpu:,.0f}/s | {count / wall:,.0f}/s | {statistics.median(rss):.0f} MiB | "
      f"{sims[0]}{'' if len(set(sims)) == 1 else ' (differs between runs!)'} |")
PY
}

echo "| workload | runs | wall (median) | CPU (median) | work | per CPU s | per wall s | peak RSS | simulated |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|"
IFS=, read -ra selected <<<"$workloads"
for workload in "${selected[@]}"; do
    case $workload in
    llama)
        "$etsim" gen transformer --preset llama3-70b --layers 8 --tp 8 --pp 4 --dp 4 \
            --global-batch 32 --micro-batch 1 --out "$work/llama" >/dev/null
        measure "Llama-3 70B, 8 layers, 128 ranks" report -- "$etsim" run \
            --platform hgx_h100_4node --trace "$work/llama/transformer" --quiet \
            --report "$work/report.json" --set ranks=128 --set 'fabric.topology.dims[1].size=16' \
            "${sets[@]}"
        ;;
    gpt3)
        # docs/validation.md's trace: what Megatron-LM ran in 2021.
        "$etsim" gen transformer --preset gpt3-175b --tp 8 --pp 8 --dp 16 --micro-batch 1 \
            --global-batch 1536 --seq-len 2048 --recompute full --attention unfused \
            --dropout 0.1 --grad-accumulation separate --dtype bf16 \
            --out "$work/gpt3" --name gpt3 >/dev/null
        measure "GPT-3 175B, 1,024 ranks" report -- "$etsim" run --platform dgx_a100_cluster \
            --trace "$work/gpt3/gpt3" --quiet --report "$work/report.json" "${sets[@]}"
        rm -rf "$work/gpt3"
        ;;
    step16k)
        # A Llama-3 405B-class model, one layer per pipeline stage: TP 8 x PP 16 x DP 128 =
        # 16,384 ranks, 8 micro-batches per replica.
        "$etsim" gen transformer --layers 16 --hidden 16384 --heads 128 --kv-heads 8 \
            --ffn 53248 --vocab 128256 --gated-mlp --seq-len 8192 --tp 8 --pp 16 --dp 128 \
            --global-batch 1024 --micro-batch 1 --out "$work/step16k" >/dev/null
        measure "405B-class, 16 layers, 16,384 ranks" report -- "$etsim" run \
            --platform hgx_h100_4node --trace "$work/step16k/transformer" --quiet \
            --report "$work/report.json" --set ranks=16384 \
            --set 'fabric.topology.dims[1].size=2048' "${sets[@]}"
        rm -rf "$work/step16k"
        ;;
    ring_flow | ring_aware)
        mode=$([[ $workload == ring_flow ]] && echo 0 || echo 1)
        measure "ring all-reduce 1 MiB, 1,024 ranks, ${workload#ring_}" bench -- "$bench" \
            --benchmark_filter="^BM_RingAllReduce/1024/1/$mode/" --benchmark_format=json
        ;;
    *)
        echo "bench/whole-run.sh: unknown workload '$workload' (llama, ring_flow, ring_aware, gpt3, step16k)" >&2
        exit 2
        ;;
    esac
done
