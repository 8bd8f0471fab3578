#!/usr/bin/env bash
# Measures the timeline's size: bytes per node drawn, and what a 1,000-rank run writes with
# and without the filters. Usage: bench/timeline-size.sh [BUILD_DIR]; prints one line per case.
# The 1,000-rank job is a one-layer transformer step, dp 125 x tp 8 (tp inside a node), on
# the 4-node preset widened to 125 nodes of 8 GPUs.
set -euo pipefail
build_dir=${1:-build}
etsim="$build_dir/apps/etsim"
[[ -x "$etsim" ]] || { echo "bench/timeline-size.sh: no $etsim; build the etsim target" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

"$etsim" gen transformer --layers 1 --hidden 1024 --heads 16 --ffn 4096 --vocab 32000 \
    --seq-len 1024 --dp 125 --tp 8 --out "$work" --name step >/dev/null
platform=(--platform hgx_h100_4node --set ranks=1000 --set "fabric.topology.dims[1].size=125"
          --quiet)

measure() {
    local label=$1
    shift
    local start end
    start=$(date +%s.%N)
    "$etsim" run "${platform[@]}" --trace "$work/step" --report "$work/report.json" \
        --timeline "$work/t.json" "$@"
    end=$(date +%s.%N)
    python3 - "$label" "$work/report.json" "$work/t.json" "$start" "$end" <<'PY'
import json, os, sys
label, report, timeline, start, end = sys.argv[1:]
r = json.load(open(report))
size = os.path.getsize(timeline)
events = json.load(open(timeline))["traceEvents"]
kinds = {}
for e in events:
    kinds[e["ph"]] = kinds.get(e["ph"], 0) + 1
print(f"{label}: {size} B ({size / 1e6:.1f} MB), {len(events)} events {kinds}, "
      f"{r['nodes']} nodes in the run, {size / r['nodes']:.0f} B per node of the run, "
      f"simulated {r['simulated_time_ns'] / 1e3:.1f} us, wall {float(end) - float(start):.1f} s")
PY
}

measure "every rank, links" 
measure "every rank, no links" --timeline-links off
measure "rank 0 drawn, node tracks, links" --timeline-ranks 0 --timeline-links on
measure "every rank, links, 100 us window" --timeline-window 1ms:1.1ms
measure "rank 0 drawn, node tracks, no links" --timeline-ranks 0 --timeline-links off
measure "no rank drawn, node tracks only" --timeline-ranks none --timeline-links off
