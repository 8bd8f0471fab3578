#!/usr/bin/env python3
"""Runs the job bundled with the hgx_h100 preset (the Makefile's `run` target, full size) with
the analytic and with the detailed HBM and compares them as HbmFidelityRunTest does for its
reduced form (docs/hbm.md, "Two fidelities"): the same nodes in the same order on every rank
(by end time in the timeline), and each rank's memory time.

The detailed run simulates every DRAM command of the job's 86.5 GB of HBM traffic: about an
hour and a half of one core. Reports and timelines stay in WORKDIR, so a run that was cut short
can be compared later with --compare-only.

Usage: scripts/compare-hbm-fidelities.py build/apps/etsim WORKDIR [--compare-only]
"""
import json
import os
import subprocess
import sys

JOB = ["--layers", "4", "--hidden", "2048", "--heads", "16", "--ffn", "8192", "--seq-len", "2048",
       "--micro-batch", "2", "--dp", "2", "--tp", "4", "--offload", "activations"]


def run(etsim, work, fidelity):
    subprocess.run([etsim, "run", "--platform", "hgx_h100", "--trace", os.path.join(work, "job", "step"),
                    "--quiet", "--report", os.path.join(work, fidelity + ".json"),
                    "--timeline", os.path.join(work, fidelity + ".timeline.json"),
                    "--timeline-links", "off",
                    "--set", "accelerator.hbm.fidelity=" + fidelity], check=True)


def load(work, fidelity):
    with open(os.path.join(work, fidelity + ".json")) as f:
        report = json.load(f)
    with open(os.path.join(work, fidelity + ".timeline.json")) as f:
        timeline = json.load(f)
    events = timeline if isinstance(timeline, list) else timeline["traceEvents"]
    ends = {}
    for event in events:
        if event.get("ph") == "X" and "pid" in event:
            ends.setdefault(event["pid"], []).append(
                (event["ts"] + event.get("dur", 0.0), event.get("name", "")))
    order = {rank: [name for _, name in sorted(slices, key=lambda s: s[0])]
             for rank, slices in ends.items()}
    return report, order


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    etsim, work = sys.argv[1], sys.argv[2]
    if "--compare-only" not in sys.argv[3:]:
        os.makedirs(work, exist_ok=True)
        subprocess.run([etsim, "gen", "transformer", *JOB, "--out", os.path.join(work, "job"),
                        "--name", "step"], check=True, stdout=subprocess.DEVNULL)
        run(etsim, work, "analytic")
        run(etsim, work, "detailed")
    analytic, analytic_order = load(work, "analytic")
    detailed, detailed_order = load(work, "detailed")
    print(f"outcome: analytic {analytic['outcome']}, detailed {detailed['outcome']}; "
          f"nodes {analytic['nodes']} and {detailed['nodes']}")
    print(f"same nodes in the same order on every rank: {analytic_order == detailed_order} "
          f"({len(analytic_order)} ranks)")
    step_a, step_d = analytic["simulated_time_ns"], detailed["simulated_time_ns"]
    print(f"step: {step_a / 1e3:.3f} us analytic, {step_d / 1e3:.3f} us detailed "
          f"({100 * (step_d / step_a - 1):+.2f} %)")
    print("| rank | memory, analytic (us) | memory, detailed (us) | difference | compute, analytic (us) | compute, detailed (us) |")
    print("|---|---:|---:|---:|---:|---:|")
    for a, d in zip(analytic["ranks"], detailed["ranks"]):
        print(f"| {a['rank']} | {a['memory_ns'] / 1e3:.3f} | {d['memory_ns'] / 1e3:.3f} | "
              f"{100 * (d['memory_ns'] / a['memory_ns'] - 1):+.2f} % | "
              f"{a['compute_ns'] / 1e3:.3f} | {d['compute_ns'] / 1e3:.3f} |")


if __name__ == "__main__":
    main()
