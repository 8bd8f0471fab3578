#!/usr/bin/env bash
# Simulator speed of `etsim mem --dramsys` on DRAMSys's HBM2 example with 200,000 reads of
# 32 B, one offered every 0.5 ns (docs/hbm.md, "Agreement with DRAMSys"): the two generator
# runs and the same traffic as STL traces played by the example's player. Prints the CPU time
# (user + system) and the wall time of each run, best of three.
# Usage: bench/dramsys-speed.sh [BUILD_DIR] [REFERENCE_DIR]
set -euo pipefail
build_dir=${1:-build}
reference=${2:-../shared/reference/dramsys-configs}
etsim="$build_dir/apps/etsim"
[[ -x "$etsim" ]] || { echo "bench/dramsys-speed.sh: no $etsim; build the etsim target" >&2; exit 2; }
[[ -f "$reference/hbm2-example.json" ]] || {
    echo "bench/dramsys-speed.sh: no $reference/hbm2-example.json" >&2; exit 2; }
reference=$(cd "$reference" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The example with absolute part paths, 200,000 reads, and a tracesetup of our choice.
simulation() {
    sed -e "s#\"\([a-z]*/[^\"]*\.json\)\"#\"$reference/\1\"#" \
        -e 's/"numRequests": 2000,/"numRequests": 200000,/' -e 's/"rwRatio": 0.85,/"rwRatio": 1.0,/' \
        "$reference/hbm2-example.json"
}
simulation >"$work/sequential.json"
sed 's/"sequential"/"random"/' "$work/sequential.json" >"$work/random.json"
# STL: cycle i of the 2 GHz player clock, sequential addresses, or a fixed LCG over 2 GiB.
python3 - "$work" <<'PY'
import sys
work = sys.argv[1]
with open(work + "/seq.stl", "w") as f:
    for i in range(200000):
        f.write(f"{i}: read {i * 32:x}\n")
x = 1
with open(work + "/random.stl", "w") as f:
    for i in range(200000):
        x = (x * 1103515245 + 12345) % 2147483648
        f.write(f"{i}: read {x - x % 32:x}\n")
PY
player='"tracesetup": [{"clkMhz": 2000, "dataLength": 32, "type": "player", "name": "FILE"}]'
for t in seq random; do
    simulation | tr '\n' ' ' | sed -e "s#\"tracesetup\": *\[[^]]*\]#${player/FILE/$work/$t.stl}#" \
        >"$work/player-$t.json"
done

measure() {
    local label=$1 file=$2 best_cpu="" best_wall="" out
    for _ in 1 2 3; do
        out=$( { TIMEFORMAT='%U %S %R'; time "$etsim" mem --dramsys "$file" >"$work/out.txt"; } 2>&1 )
        read -r user sys wall <<<"$out"
        cpu=$(awk -v u="$user" -v s="$sys" 'BEGIN { printf "%.2f", u + s }')
        if [[ -z "$best_cpu" ]] || awk -v a="$cpu" -v b="$best_cpu" 'BEGIN { exit !(a < b) }'; then
            best_cpu=$cpu
            best_wall=$wall
        fi
    done
    printf '%-28s cpu %6s s  wall %6s s  %s\n' "$label" "$best_cpu" "$best_wall" \
        "$(grep -E '^bandwidth' "$work/out.txt")"
}
measure "generator sequential" "$work/sequential.json"
measure "generator random" "$work/random.json"
measure "player sequential (STL)" "$work/player-seq.json"
measure "player random (STL)" "$work/player-random.json"
