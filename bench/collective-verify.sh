#!/usr/bin/env bash
# `etsim collective verify` as a user runs it, on the ring all-reduce programs that `etsim gen
# collective` writes, in both forms: MSCCL XML and Chakra algorithm traces. Usage:
#
#   bench/collective-verify.sh ETSIM [RANKS] [ETSIM ...]
#
# RANKS defaults to 1024. The programs are written once (with the first ETSIM) to a temporary
# folder; every ETSIM given (e.g. a build before and after a change) then verifies each form.
# Prints one Markdown table row per binary and form: user and system CPU, wall time and peak
# RSS of the whole command (reading the files included), from /usr/bin/time.
set -euo pipefail
first=$(realpath "${1:?usage: bench/collective-verify.sh ETSIM [RANKS] [ETSIM ...]}")
ranks=${2:-1024}
shift 2 || shift 1
binaries=("$first" "$@")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

"$first" gen collective --ranks "$ranks" --out "$work/ring.xml" >/dev/null
"$first" gen collective --ranks "$ranks" --format chakra --out "$work/ring" >/dev/null

echo "| binary | form | ranks | user CPU | system CPU | wall | peak RSS |"
echo "|---|---|---|---|---|---|---|"
for etsim in "${binaries[@]}"; do
    for form in xml chakra; do
        input="$work/ring"
        [[ $form == xml ]] && input="$work/ring.xml"
        stats=$( { /usr/bin/time -f "%U %S %e %M" "$etsim" collective verify "$input" >/dev/null; } 2>&1 | tail -1)
        read -r user sys wall rss <<<"$stats"
        printf '| %s | %s | %s | %s s | %s s | %s s | %d MB |\n' \
            "$etsim" "$form" "$ranks" "$user" "$sys" "$wall" $((rss / 1024))
    done
done
