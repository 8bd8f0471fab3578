#!/usr/bin/env bash
# Runs a small 2-rank transformer step with its GEMMs on the RTL, then the same step on the
# analytical model, and prints both finish times.  Usage: examples/cosim_rtl/run.sh [build]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${1:-$here/../../build}" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export PATH="$build/cosim/adapters/verilator:$PATH"   # etsim-rtl
"$build/apps/etsim" gen transformer --layers 1 --hidden 256 --heads 4 --ffn 1024 --seq-len 128 \
    --micro-batch 1 --dp 2 --tp 1 --out "$work/job" --name step >/dev/null
echo "== GEMMs on the RTL (etsim-rtl per rank)"
"$build/apps/etsim" run --platform "$here/platform.yaml" --trace "$work/job/step" \
    --report "$work/rtl.json"
# The same file without its accelerator.compute block.
awk '/^  compute:/ {skip = 1; next} skip && /^    / {next} {skip = 0; print}' \
    "$here/platform.yaml" > "$work/analytical.yaml"
echo "== the same platform, analytical"
"$build/apps/etsim" run --platform "$work/analytical.yaml" --trace "$work/job/step" \
    --report "$work/model.json"
