#!/usr/bin/env bash
# A small training step (2 layers of a transformer, tensor parallel over 8 ranks) run twice:
# with the local flow fabric and with the fabric in ns-3. Both print the same report; the
# times differ by the packet effects docs/cosim-ns3.md explains.
set -euo pipefail
cd "$(dirname "$0")/../.."
etsim=build/apps/etsim
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
$etsim gen transformer --preset llama3-8b --layers 2 --tp 8 --dp 1 --out "$out/trace" >/dev/null
echo "== local fabric =="
$etsim run --trace "$out/trace" --platform hgx_h100
echo "== fabric in ns-3 =="
$etsim run --trace "$out/trace" --platform examples/cosim_ns3/platform.yaml
