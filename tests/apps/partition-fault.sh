#!/usr/bin/env bash
# A partitioned run (mpirun -n 2) whose second process is killed, then one whose second process
# stalls (SIGSTOP): each run must end by itself with the documented error, leave no process
# behind and no report of an earlier run (docs/partitioned-runs.md, Faults).
# Usage: partition-fault.sh ETSIM_BINARY
set -u
etsim=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; [ -f "$work/out" ] && cat "$work/out"; exit 1; }

# Long enough (a few seconds) that both processes are well into the simulation when hit.
"$etsim" gen microbench --ranks 64 --size "8 MiB" --iterations 2000 --out "$work" --name job \
    >/dev/null || fail "gen"
job=(run --platform hgx_h100_4node --set ranks=64 --set "fabric.topology.dims[1].size=8"
     --set fabric.fidelity=analytical --trace "$work/job" --quiet --partitions 2
     --partition-timeout 3 --report "$work/report.json")

hit() { # SIGNAL EXPECTED-OUTPUT
    local signal=$1 expected=$2
    echo '{"outcome": "an earlier run"}' >"$work/report.json"
    mpirun --allow-run-as-root --oversubscribe --bind-to none -n 2 "$etsim" "${job[@]}" >"$work/out" 2>&1 &
    local launcher=$! victim="" other="" ticks=0
    # Both processes simulating: the second has used 0.3 s of CPU.
    for _ in $(seq 1 400); do
        mapfile -t children < <(pgrep -P "$launcher")
        if [ "${#children[@]}" -ge 2 ]; then
            other=${children[0]}
            victim=${children[1]}
            ticks=$(awk '{print $14}' "/proc/$victim/stat" 2>/dev/null || echo 0)
            [ "$ticks" -ge 30 ] && break
        fi
        sleep 0.05
    done
    [ "$ticks" -ge 30 ] || { kill -KILL "$launcher"; fail "SIG$signal: the run did not start"; }
    kill "-$signal" "$victim"
    local waited=0
    while kill -0 "$launcher" 2>/dev/null && [ $waited -lt 600 ]; do
        sleep 0.1
        waited=$((waited + 1))
    done
    if kill -0 "$launcher" 2>/dev/null; then
        kill -KILL "$launcher" "$victim" "$other"
        fail "SIG$signal: mpirun still runs 60 s after the signal"
    fi
    wait "$launcher"
    local code=$?
    [ "$code" -ne 0 ] || fail "SIG$signal: exit code 0"
    grep -q "$expected" "$work/out" || fail "SIG$signal: no \"$expected\" in the output"
    # mpirun has ended; its processes must follow within a few seconds (a dying process
    # releases its memory first).
    for pid in "$victim" "$other"; do
        local left=0
        while [ -d "/proc/$pid" ] && [ "$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null)" != Z ] &&
            [ $left -lt 50 ]; do
            sleep 0.1
            left=$((left + 1))
        done
        if [ -d "/proc/$pid" ] && [ "$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null)" != Z ]; then
            ps -o pid,stat,etime,args -p "$pid"
            kill -KILL "$pid"
            fail "SIG$signal: process $pid was left behind"
        fi
    done
    if [ -f "$work/report.json" ]; then
        grep -q '"an earlier run"' "$work/report.json" && fail "SIG$signal: the earlier report survived"
        grep -q '"outcome": "failed"' "$work/report.json" ||
            fail "SIG$signal: a report that is not a failed run's"
    fi
    echo "SIG$signal: exit code $code after $((waited / 10)) s, no process left, no stale report"
}

hit KILL "exited on signal 9"
hit STOP "no ROUND for 3 s: it died or stalled"
