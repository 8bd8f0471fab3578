#!/usr/bin/env python3
"""Fits the analytic HBM's write efficiency and read/write turnaround of each preset on its own
detailed model (docs/hbm.md, "Two fidelities"; docs/calibration.md):

  write_efficiency  the bandwidth of a stream of writes over the device peak;
  turnaround        what a copy costs the detailed model beyond the analytic model's time of the
                    same copy with that write efficiency and no turnaround, per read/write
                    switch of the copy.

Traffic (`etsim mem`): 16 KiB requests, 16 in flight, 1,600 of them (26 MB); the copy alternates
bursts of 64 reads and 64 writes (1 MiB each), 24 switches. The read efficiency
(`analytic.efficiency`) is the presets' own, measured as docs/hbm.md says.
Usage: scripts/calibrate-analytic-hbm.py build/apps/etsim [preset ...]
"""
import json
import subprocess
import sys
import tempfile

PRESETS = ["hbm2", "hbm2e_a100", "hbm3_h100", "hbm3_6400", "hbm3e_9600", "hbm3e_h200", "hbm4"]
COUNT = 1600
BURST = 64
COMMON = ["--size", "16 KiB", "--outstanding", "16", "--count", str(COUNT), "--json"]


def mem(etsim, *args):
    out = subprocess.run([etsim, "mem", *COMMON, *args], check=True, capture_output=True,
                         text=True).stdout
    return json.loads(out)


def main():
    etsim = sys.argv[1]
    copy = ["--pattern", "copy", "--burst", str(BURST)]
    switches = COUNT // BURST - 1
    for preset in sys.argv[2:] or PRESETS:
        writes = mem(etsim, "--preset", preset, "--write-fraction", "1")
        detailed = mem(etsim, "--preset", preset, *copy)
        write_efficiency = round(writes["peakFraction"], 3)
        with tempfile.NamedTemporaryFile("w", suffix=".yaml") as config:
            config.write(f"preset: {preset}\nfidelity: analytic\nanalytic: "
                         f"{{write_efficiency: {write_efficiency}, turnaround: 0 ps}}\n")
            config.flush()
            plain = mem(etsim, "--config", config.name, "--fidelity", "analytic", *copy)
        turnaround_ns = (detailed["lastDonePs"] - plain["lastDonePs"]) / switches / 1000
        print(json.dumps({"preset": preset, "write_efficiency": write_efficiency,
                          "turnaround_ns": round(max(turnaround_ns, 0.0), 1),
                          "copy_detailed_ns": detailed["lastDonePs"] / 1000,
                          "copy_analytic_without_turnaround_ns": plain["lastDonePs"] / 1000}))


if __name__ == "__main__":
    main()
