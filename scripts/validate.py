#!/usr/bin/env python3
"""End-to-end validation of etsim against the published figures of
shared/spec/hardware-models.md section 4; writes docs/validation.md.

Usage: scripts/validate.py [--etsim build/apps/etsim] [--out docs/validation.md]
                           [--work DIR] [--quick] [--sections LIST] [--reuse]

Only the Python standard library is used. Every figure is produced by the etsim command
(etsim gen, etsim run, etsim mem) so that anyone can rerun it; the work folder keeps every
trace and report, each with a stamp file (the etsim commit, the SHA-256 of the binary
that made it and its etsim arguments) so that a figure is never taken from another binary's
output or another command's. Without --work the traces go to a temporary folder that is
removed at the end (the Megatron-LM 1T trace alone takes about 10 GB). --quick skips the
training runs (GPT-3, Llama 3 and Megatron-LM: minutes of simulation); --sections picks
sections by name."""

import argparse
import json
import math
import os
import hashlib
import shlex
import shutil
import subprocess
import sys
import tempfile
import time

MiB = 1 << 20
GiB = 1 << 30


def human_size(size):
    for unit, scale in (("GiB", GiB), ("MiB", MiB), ("KiB", 1024)):
        if size >= scale:
            return f"{size // scale} {unit}"
    return f"{size} B"


def file_sha256(path):
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def source_commit(root):
    """`git rev-parse HEAD` of the etsim tree, with -dirty when it has uncommitted changes;
    "unknown" outside a git checkout."""
    def git(*args):
        return subprocess.run(["git", "-C", root, *args], capture_output=True, text=True)
    head = git("rev-parse", "HEAD")
    if head.returncode != 0:
        return "unknown"
    status = git("status", "--porcelain")
    return head.stdout.strip() + ("-dirty" if status.stdout.strip() else "")


def read_stamp(path):
    """The stamp of a kept report or trace, or None when it has none or cannot be read."""
    try:
        with open(path) as f:
            stamp = json.load(f)
    except (OSError, ValueError):
        return None
    return stamp if isinstance(stamp, dict) else None


class Etsim:
    def __init__(self, binary, work, reuse, commit):
        self.binary = binary
        self.work = work
        self.reuse = reuse
        self.commands = []
        # Reports made in this invocation, by their arguments: a run that two sections need
        # (the 2-node cut of section 4.2 and its cross-checks) runs once.
        self.made = {}
        self.stamp = {"etsim_commit": commit, "etsim_sha256": file_sha256(binary)}

    def write_stamp(self, path, arguments):
        with open(path, "w") as f:
            json.dump({**self.stamp, "arguments": arguments}, f, indent=2)
            f.write("\n")

    def reusable(self, what, output, stamp_path, arguments):
        """Whether a kept output may be used: it exists and its stamp names this binary and
        the etsim arguments that made it. Says why when it is made again."""
        if not os.path.exists(output):
            return False
        stamp = read_stamp(stamp_path)
        if stamp is None:
            reason = "it has no stamp"
        elif stamp.get("etsim_sha256") != self.stamp["etsim_sha256"]:
            reason = (f"it was made by another etsim binary (SHA-256 "
                      f"{stamp.get('etsim_sha256')}, this one {self.stamp['etsim_sha256']})")
        elif stamp.get("arguments") != arguments:
            reason = f"it was made with other arguments ({stamp.get('arguments')})"
        else:
            print(f"validate: reusing {what} {output}", file=sys.stderr)
            return True
        print(f"validate: not reusing {what} {output}: {reason}; running it again",
              file=sys.stderr)
        return False

    def __call__(self, *args, record=True):
        command = [self.binary] + [str(a) for a in args]
        if record:
            self.commands.append(" ".join(shlex.quote(c) for c in command[1:]))
        started = time.monotonic()
        result = subprocess.run(command, capture_output=True, text=True)
        if result.returncode != 0:
            sys.exit(f"validate: etsim {' '.join(command[1:])} failed ({result.returncode}):\n"
                     f"{result.stdout}{result.stderr}")
        return result.stdout, time.monotonic() - started

    def gen(self, name, *args):
        folder = os.path.join(self.work, name)
        full = ["gen", *args, "--out", folder, "--name", name]
        arguments = [str(a) for a in full]
        # A trace is a pure function of the binary and the arguments (both in its stamp), so
        # the same binary's trace of the same arguments is kept even without --reuse.
        stamp = os.path.join(folder, "stamp.json")
        if self.reusable("trace", os.path.join(folder, name + ".0.et"), stamp, arguments):
            self.commands.append(" ".join(shlex.quote(c) for c in arguments))
        else:
            shutil.rmtree(folder, ignore_errors=True)
            self(*full)
            self.write_stamp(stamp, arguments)
        return os.path.join(folder, name)

    def run(self, name, platform, trace, sets=()):
        report = os.path.join(self.work, name + ".report.json")
        args = ["run", "--platform", platform, "--trace", trace, "--quiet", "--report", report]
        for s in sets:
            args += ["--set", s]
        arguments = [str(a) for a in args]
        if tuple(arguments) in self.made:
            return self.made[tuple(arguments)]
        stamp = report + ".stamp.json"
        if self.reuse and self.reusable("report", report, stamp, arguments):
            self.commands.append(" ".join(shlex.quote(c) for c in arguments))
            wall = None
        else:
            # A report left without a stamp is never reused, should this run fail.
            if os.path.exists(stamp):
                os.remove(stamp)
            _, wall = self(*args)
            self.write_stamp(stamp, arguments)
        with open(report) as f:
            data = json.load(f)
        # The simulator's own time when the report was reused.
        data["_wall"] = wall if wall is not None else data["wall_seconds"]
        self.made[tuple(arguments)] = data
        return data


def error_pct(etsim_value, published):
    return 100.0 * (etsim_value - published) / published


def allreduce_time_ns(report):
    for c in report["collectives"]:
        if c["type"] == "all_reduce":
            return c["time_ns"] / c["count"]
    raise SystemExit("validate: a report without an all_reduce")


def busbw(size, time_ns, ranks):
    return size / (time_ns * 1e-9) * 2 * (ranks - 1) / ranks / 1e9


def geomean_abs(errors):
    logs = [math.log(1 + abs(e) / 100) for e in errors]
    return 100 * (math.exp(sum(logs) / len(logs)) - 1)


# ------------------------------------------------------------------------------------------
# 4.1 and 4.2: NCCL all-reduce bus bandwidth

# hardware-models.md 4.1, the stand-in curve of ASTRA-sim's calibrated HGX-H100 parameters at
# the measured B = 370 GB/s (busbw, GB/s), and the measured ring peak ~370 GB/s (nccl-tests #212).
H100_8 = [(1 * MiB, 59), (4 * MiB, 159), (16 * MiB, 278), (64 * MiB, 342), (256 * MiB, 363),
          (1 * GiB, 368), (8 * GiB, 370)]
# hardware-models.md 4.2: AWS 2 x p5.48xlarge, nccl-tests (time us, busbw GB/s).
H100_16 = [(64 * 1024, 135, 0.91), (1 * MiB, 123, 16.0), (4 * MiB, 169, 46.6),
           (16 * MiB, 298, 105.5), (64 * MiB, 602, 209.2), (256 * MiB, 1468, 342.8),
           (1 * GiB, 4608, 437.0), (4 * GiB, 17286, 465.9), (8 * GiB, 33605, 479.3),
           (16 * GiB, 66132, 487.1)]


# A preset of 8-GPU nodes cut to two of them (section 4.2, the cross-checks).
TWO_NODES = ["ranks=16", "fabric.topology.dims[1].size=2"]


def allreduce_ns(etsim, ranks, size, platform, sets=(), run=None):
    """The time, ns, of one all-reduce of `size` bytes over `ranks` ranks (`etsim gen
    microbench`, one trace per shape whatever runs it) on `platform` with `sets`; the report
    is named `run`, by default as the trace."""
    name = f"ar{ranks}_{size}"
    trace = etsim.gen(name, "microbench", "--ranks", ranks, "--collective", "all_reduce",
                      "--size", f"{size} B", "--iterations", 1)
    return allreduce_time_ns(etsim.run(run or name, platform, trace, sets))


def busbw_rows(etsim, ranks, table, platform, sets=()):
    """(size, etsim time us, etsim busbw, published busbw, error %) for each (size, published
    busbw) of `table`, one all-reduce over `ranks` ranks on `platform` with `sets`."""
    rows = []
    for size, published in table:
        t = allreduce_ns(etsim, ranks, size, platform, sets)
        bw = busbw(size, t, ranks)
        rows.append((human_size(size), t / 1e3, bw, published, error_pct(bw, published)))
    return rows


def time_rows(etsim, ranks, table, platform, sets=(), run_prefix=None):
    """(size, etsim time us, published time us, error %, etsim busbw, published busbw, busbw
    error %) for each (size, published time us[, published busbw]) of `table`. Without a
    published busbw it comes from the time, so sizes whose printed busbw rounds to 0.00 still
    get an error. Reports are named `run_prefix`_size (default: as the trace)."""
    rows = []
    for size, published_us, *printed in table:
        t = allreduce_ns(etsim, ranks, size, platform, sets,
                         run=f"{run_prefix}_{size}" if run_prefix else None)
        bw = busbw(size, t, ranks)
        published_bw = printed[0] if printed else busbw(size, published_us * 1e3, ranks)
        rows.append((human_size(size), t / 1e3, published_us, error_pct(t / 1e3, published_us),
                     bw, published_bw, error_pct(bw, published_bw)))
    return rows


def bandwidth_text(gbps):
    """One decimal, or three significant digits below 10 GB/s (small messages' busbw)."""
    return f"{gbps:.1f}" if gbps >= 10 else f"{gbps:.3g}"


def write_time_table(w, rows):
    """The rows of time_rows as a Markdown table."""
    w("| size | etsim time (us) | published time (us) | error | etsim busbw (GB/s) | "
      "published busbw (GB/s) | error |")
    w("|---|---|---|---|---|---|---|")
    for size, t, pt, terr, bw, pbw, berr in rows:
        w(f"| {size} | {t:.1f} | {pt} | {terr:+.1f} % | {bandwidth_text(bw)} | "
          f"{bandwidth_text(pbw)} | {berr:+.1f} % |")
    w("")


def write_busbw_table(w, rows):
    """The rows of busbw_rows as a Markdown table."""
    w("| size | etsim time (us) | etsim busbw (GB/s) | published busbw (GB/s) | error |")
    w("|---|---|---|---|---|")
    for size, t, bw, published, err in rows:
        w(f"| {size} | {t:.1f} | {bw:.1f} | {published} | {err:+.1f} % |")


def nccl_8(etsim):
    return busbw_rows(etsim, 8, H100_8, "hgx_h100")


def nccl_16(etsim):
    return time_rows(etsim, 16, H100_16, "hgx_h100_4node", TWO_NODES)


# Other all-reduce measurements of hardware-models.md 4.1 and 4.2, none used to fit anything:
# 4 x H100 in one HGX node (S22), 2 x 8 H100 over Oracle's RoCE network (S27, busbw at 1-16 GiB)
# and 2 x p4de, A100 with 400 Gb/s of EFA per node (S27).
#
# 4 x H100 (80GB HBM3, NVSwitch), nccl-tests 2.18.3 with NCCL 2.29.2, NCCL's own choice of
# algorithm and protocol, out-of-place busbw (GB/s) from 1 MiB to 8 GiB: the measurement behind
# S22's 366 GB/s, published with it (github.com/waynehacking8/nccl-collectives-bench,
# results/all_reduce.txt). The same repository's NCCL_ALGO=Ring runs (results/algo_sweep.txt:
# 339.1, 355.7 and 366.3 GB/s at 256 MiB, 1 GiB and 8 GiB) agree within 0.5 % from 256 MiB.
H100_4 = [(1 * MiB, 58.18), (2 * MiB, 100.59), (4 * MiB, 144.94), (8 * MiB, 200.12),
          (16 * MiB, 246.47), (32 * MiB, 285.66), (64 * MiB, 308.92), (128 * MiB, 325.89),
          (256 * MiB, 340.82), (512 * MiB, 348.36), (1 * GiB, 357.03), (2 * GiB, 361.00),
          (4 * GiB, 363.25), (8 * GiB, 366.37)]
ORACLE_16 = [(1 * GiB, 446), (2 * GiB, 456), (4 * GiB, 462), (8 * GiB, 464), (16 * GiB, 465)]
P4DE_2GIB_BUSBW = 78
P4DE_8B_US = 164
# The 8-byte row of section 4.2's AWS p5 table, outside the 64 KiB-16 GiB range of its target.
P5_8B_US = 69
# 2 x 8 H100 on Google Cloud A3 Mega (8 x 200 Gb/s GPUDirect-TCPXO NICs per node, 200 Gb/s
# per GPU), nccl-tests all_reduce_perf -b 8 -e 8G -f 2, out-of-place time in us per size:
# github.com/lessizzmore/create-a3mega-ztan-fork, file ztan-NCCL-test-result (commit 02dd8f4).
A3MEGA_16_US = [135.8, 123.2, 123.3, 123.4, 123.0, 123.6, 126.6, 147.1, 125.8, 126.9, 131.6,
                138.6, 155.2, 159.4, 159.3, 167.1, 174.2, 203.2, 254.0, 364.6, 571.9, 977.6,
                1059.9, 1261.6, 1652.2, 2360.9, 3817.5, 6759.0, 12646, 24361, 47535]
A3MEGA_16 = [(8 << i, us) for i, us in enumerate(A3MEGA_16_US)]
A3MEGA_SETS = TWO_NODES + ["fabric.topology.dims[1].bandwidth=200 Gb/s"]
# The A3 Mega cut with the preset's 4 chunks kept (pipeline_depth: fixed), at these sizes.
A3MEGA_FIXED = [1 * GiB, 8 * GiB]


def crosscheck(etsim):
    """The presets as they are, cut or set to each machine: hgx_h100 cut to four GPUs;
    hgx_h100_4node cut to two nodes (Oracle's BM.GPU.H100.8 has 16 x 200 Gb/s RoCE per node,
    the same 400 Gb/s per GPU; the EFA per-message latency of the preset does not matter from
    1 GiB); dgx_a100_cluster cut to two nodes with the p4de's 400 Gb/s per node (50 Gb/s per
    GPU rail) and EFA's per-message latency, the same sourced 20 us as hgx_h100_4node."""
    out = {"h100x4": busbw_rows(etsim, 4, H100_4, "hgx_h100",
                                ["ranks=4", "ranks_per_node=4", "fabric.topology.dims[0].size=4"])}
    rows = []
    for size, published in ORACLE_16:
        t = allreduce_ns(etsim, 16, size, "hgx_h100_4node", TWO_NODES)
        bw = busbw(size, t, 16)
        rows.append((human_size(size), bw, published, error_pct(bw, published)))
    out["oracle"] = rows
    p4de = TWO_NODES + ["fabric.topology.dims[1].bandwidth=50 Gb/s",
                             "fabric.topology.dims[1].nic_latency=20 us"]
    t = allreduce_ns(etsim, 16, 2 * GiB, "dgx_a100_cluster", p4de, run="xc_p4de_2GiB")
    out["p4de_busbw"] = busbw(2 * GiB, t, 16)
    out["p4de_8B_us"] = allreduce_ns(etsim, 16, 8, "dgx_a100_cluster", p4de,
                                     run="xc_p4de_8B") / 1e3
    out["p5_8B_us"] = allreduce_ns(etsim, 16, 8, "hgx_h100_4node", TWO_NODES) / 1e3
    out["a3mega"] = time_rows(etsim, 16, A3MEGA_16, "hgx_h100_4node", A3MEGA_SETS, "xc_a3mega")
    out["a3mega_fixed"] = time_rows(etsim, 16, [(s, dict(A3MEGA_16)[s]) for s in A3MEGA_FIXED],
                                    "hgx_h100_4node",
                                    A3MEGA_SETS + ["fabric.collectives.pipeline_depth=fixed"],
                                    "xc_a3mega_fixed")
    return out


# NVLS on one node of 8 x H100 80GB HBM3 (HGX), nccl-tests with NCCL's default algorithm (NVLS,
# as an NCCL maintainer confirms in the thread), out-of-place time in us, 128 MiB-4 GiB, two
# iterations a size: github.com/NVIDIA/nccl-tests/issues/290 (single-node run). Its 473.6 GB/s
# busbw at 4 GiB agrees with the spec's "about 480 GB/s" for large messages (4.1).
NVLS_8 = [(128 * MiB, 613.3), (256 * MiB, 1139.2), (512 * MiB, 2175.8), (1 * GiB, 4038.8),
          (2 * GiB, 8020.3), (4 * GiB, 15870)]


def nvls_8(etsim):
    """NCCL's default all-reduce on H100 is NVLS: etsim's in_switch algorithm on the node's
    NVSwitch against the measured curve."""
    return time_rows(etsim, 8, NVLS_8, "hgx_h100",
                     ["fabric.collectives.algorithms.all_reduce=[in_switch]"], "ar8_nvls")


# The ways etsim's in_switch algorithm can enter the 2-node all-reduce (it runs whole
# all-reduces only, so under local_bw_aware it may sit only on the last dimension).
IN_SWITCH_16 = [
    ("in_switch in the node, then ring across; baseline (whole all-reduce per dimension)",
     ["fabric.collectives.algorithms.all_reduce=[in_switch, ring]",
      "fabric.collectives.optimization=baseline"]),
    ("ring in the node, in_switch across (SHARP on the rail switches); local_bw_aware",
     ["fabric.collectives.algorithms.all_reduce=[ring, in_switch]"]),
]


def in_switch_16(etsim):
    size = 1 * GiB
    # The preset's ring: section 4.2's run, made once when that section ran too.
    ring = allreduce_ns(etsim, 16, size, "hgx_h100_4node", TWO_NODES)
    rows = [("ring in the node, ring across (the preset); local_bw_aware", busbw(size, ring, 16))]
    for i, (label, extra) in enumerate(IN_SWITCH_16):
        t = allreduce_ns(etsim, 16, size, "hgx_h100_4node", TWO_NODES + extra,
                         run=f"ar16_in_switch{i}_{size}")
        rows.append((label, busbw(size, t, 16)))
    return rows


# ------------------------------------------------------------------------------------------
# 4.5: training iterations


def gpt3(etsim):
    """GPT-3 175B, TP8 x PP8 x DP16 on 1,024 A100, global batch 1,536, seq 2,048, full
    recompute (Narayanan et al. SC'21), every rank simulated: the 16 data-parallel replicas'
    pipelines and the gradient all-reduces after their last backward (not overlapped in that
    Megatron-LM), on the preset's 128 nodes of 8 A100."""
    # What Megatron-LM ran in 2021: attention without a fused kernel (the scores go through
    # HBM), its default attention and hidden dropout of 0.1, and each weight gradient added
    # into the step's buffer by a kernel of its own (its main_grad hook).
    trace = etsim.gen("gpt3", "transformer", "--preset", "gpt3-175b", "--tp", 8, "--pp", 8,
                      "--dp", 16, "--micro-batch", 1, "--global-batch", 1536, "--seq-len", 2048,
                      "--recompute", "full", "--attention", "unfused", "--dropout", 0.1,
                      "--grad-accumulation", "separate", "--dtype", "bf16")
    report = etsim.run("gpt3", "dgx_a100_cluster", trace)
    total = report["simulated_time_ns"] / 1e9
    finishes = [r["finish_ns"] / 1e9 for r in report["ranks"]]
    all_reduce = [c for c in report["collectives"] if c["type"] == "all_reduce"]
    flops = 4.51e18  # hardware-models.md 4.5, FLOPs per iteration with recompute
    return {"total_s": total, "first_finish_s": min(finishes),
            "tflops": flops / 1024 / total / 1e12, "nodes": report["nodes"],
            "all_reduces": sum(c["count"] for c in all_reduce), "wall": report["_wall"],
            "report": report}


def llama3(etsim):
    """Llama 3 405B-class on H100: TP8 x PP16 x DP64 = 8,192 GPUs, seq 8,192, 16 M tokens per
    step (2,048 sequences, 32 per replica), BF16, no recompute. One replica (128 ranks on 16
    HGX nodes) is simulated; data-parallel communication is taken as hidden behind compute,
    as the Llama 3 paper overlaps its FSDP traffic. FSDP also shards the optimizer state over
    the 64 replicas (--optimizer-shards 64): unsharded, a rank's Adam state alone (3.2 G
    parameters x 16 B) would not fit in its 80 GB of HBM, and etsim refuses the node."""
    trace = etsim.gen("llama3", "transformer", "--layers", 128, "--hidden", 16384, "--heads", 128,
                      "--kv-heads", 8, "--ffn", 53248, "--vocab", 128256, "--gated-mlp",
                      "--tp", 8, "--pp", 16, "--dp", 1, "--optimizer-shards", 64,
                      "--micro-batch", 1, "--global-batch", 32, "--seq-len", 8192,
                      "--attention", "fused", "--dropout", 0, "--grad-accumulation", "none",
                      "--dtype", "bf16")
    report = etsim.run("llama3", "hgx_h100_4node", trace,
                       ["ranks=128", "fabric.topology.dims[1].size=16"])
    seconds = report["simulated_time_ns"] / 1e9
    # Model FLOPs of the step: 6 N tokens + attention (hardware-models.md 4.5), for the
    # 405B shape actually generated (128 layers, see the text).
    tokens = 32 * 8192
    h, layers, ffn, vocab, kv = 16384, 128, 53248, 128256, 8
    head_dim = h // 128
    layer_params = h * h * 2 + 2 * h * kv * head_dim + 3 * h * ffn
    params = layers * layer_params + vocab * h
    flops = 6 * params * tokens + 12 * layers * 8192 * h * tokens
    return {"seconds": seconds, "tflops": flops / 128 / seconds / 1e12, "nodes": report["nodes"],
            "wall": report["_wall"], "params": params, "report": report}


# Model FLOPs utilisation of Megatron-LM with selective recomputation and sequence parallelism
# (hardware-models.md 4.5: the Megatron-LM README's table, S28), data-parallel size 1 on
# Selene's A100. The shapes, parallelism and batches are those of the paper the README cites
# (Korthikanti et al. 2022, arXiv 2205.05198, table 3), all with s = 2,048 and V = 51,200.
MEGATRON = (
    # (name, layers, hidden, heads, tp, pp, global batch, published MFU %)
    ("22B", 48, 6144, 64, 8, 1, 4, 41.5),
    ("175B", 96, 12288, 96, 8, 8, 64, 51.4),
    ("530B", 105, 20480, 128, 8, 35, 280, 56.0),
    ("1T", 128, 25600, 160, 8, 64, 512, 56.3),
)


def megatron_model_flops(batch, layers, hidden, seq=2048, vocab=51200):
    """Model FLOPs of one iteration without recomputation, the paper's MFU numerator:
    72 B s l h^2 (1 + s / 6h + V / 12 l h)."""
    return 72 * batch * seq * layers * hidden ** 2 * (
        1 + seq / (6 * hidden) + vocab / (12 * layers * hidden))


def first_dimension(preset):
    """The first topology dimension of a bundled preset, as its file writes it (one flow-style
    line under `dims:`), so that a run on that dimension alone takes the preset's figures
    rather than a copy of them."""
    path = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                        "platforms", "presets", preset + ".yaml")
    with open(path) as f:
        lines = f.read().split("\n")
    for i, line in enumerate(lines[:-1]):
        following = lines[i + 1].strip()
        if line.strip() == "dims:" and following.startswith("- {") and following.endswith("}"):
            return following[2:]
    sys.exit(f"validate: {path}: no one-line first dimension under 'dims:'; write it as "
             "'- {kind: ..., size: ...}' or update first_dimension()")


def megatron(etsim):
    """Each configuration's whole iteration (every rank: DP 1), as Megatron-LM ran it in 2022:
    unfused attention with dropout 0.1, the attention core recomputed, sequence parallelism,
    gradients accumulated in fp32 by a kernel after each weight-gradient GEMM."""
    rows = []
    for name, layers, hidden, heads, tp, pp, batch, published in MEGATRON:
        ranks = tp * pp
        tag = "megatron_" + name.lower()
        trace = etsim.gen(tag, "transformer", "--layers", layers, "--hidden", hidden,
                          "--heads", heads, "--kv-heads", heads, "--ffn", 4 * hidden,
                          "--vocab", 51200, "--tied-embeddings", "--tp", tp, "--pp", pp,
                          "--dp", 1, "--micro-batch", 1, "--global-batch", batch,
                          "--seq-len", 2048, "--recompute", "selective", "--sequence-parallel",
                          "--attention", "unfused", "--dropout", 0.1,
                          "--grad-accumulation", "separate", "--dtype", "bf16")
        if ranks > 8:
            sets = [f"ranks={ranks}", f"fabric.topology.dims[1].size={ranks // 8}"]
        else:
            # One DGX node: the preset's NVSwitch dimension alone.
            sets = ["ranks=8", f"fabric.topology.dims=[{first_dimension('dgx_a100_cluster')}]",
                    "fabric.collectives.algorithms.default=[ring]"]
        report = etsim.run(tag, "dgx_a100_cluster", trace, sets)
        seconds = report["simulated_time_ns"] / 1e9
        mfu = 100 * megatron_model_flops(batch, layers, hidden) / (seconds * ranks * 312e12)
        rows.append({"name": name, "layers": layers, "hidden": hidden, "heads": heads,
                     "tp": tp, "pp": pp, "ranks": ranks, "batch": batch, "seconds": seconds,
                     "mfu": mfu, "published": published, "nodes": report["nodes"],
                     "wall": report["_wall"]})
    return rows


# ------------------------------------------------------------------------------------------
# 4.4: memory


def memory(etsim):
    def mem(*args):
        out, _ = etsim("mem", *args, "--json")
        return json.loads(out)

    rows = []
    # Large requests stand for the coalesced sector streams of a copy kernel; its stores
    # reach HBM as write-back drains of COPY_BURST requests (see the notes).
    copy = mem("--preset", "hbm3_h100", "--count", 100 * COPY_BURST, "--size", "2048 B",
               "--pattern", "copy", "--burst", COPY_BURST, "--outstanding", 256)
    rows.append((f"H100 SXM device-to-device copy (hbm3_h100, 2 KiB requests, copy pattern, "
                 f"bursts of {COPY_BURST})", 100 * copy["peakFraction"], 86.7, False))
    stream = mem("--preset", "hbm2", "--count", 100000, "--size", "2048 B", "--outstanding", 256)
    rows.append(("HBM2 streaming reads, Shuhai (hbm2, 2 KiB requests)",
                 100 * stream["peakFraction"], 92.0, False))
    refresh = mem("--preset", "hbm3_6400", "--count", 100000, "--size", "2048 B",
                  "--outstanding", 256)
    rows.append(("HBM3-6400 streaming reads: refresh-bound limit", 100 * refresh["peakFraction"],
                 92.3, True))
    random = mem("--preset", "hbm3_6400", "--count", 50000, "--size", "32 B", "--pattern",
                 "random", "--outstanding", 256)
    rows.append(("HBM3-6400 random 32 B row misses: activation-bound limit",
                 100 * random["peakFraction"], 33.0, True))
    return rows


# Requests per read burst and per write burst of the copy row: 2 MiB drains (chosen, not
# published; copy_bursts shows the figure for other lengths).
COPY_BURST = 1024


def copy_bursts(etsim):
    """The H100 copy figure against the burst length (and the old interleaved stream)."""
    rows = []
    for burst in (1, 64, 256, 1024, 4096):
        out, _ = etsim("mem", "--preset", "hbm3_h100", "--count", 32768, "--size", "2048 B",
                       "--pattern", "copy", "--burst", burst, "--outstanding", 256, "--json")
        data = json.loads(out)
        rows.append((f"copy, bursts of {burst} ({human_size(burst * 2048)})",
                     100 * data["peakFraction"], data["rowBuffer"]["readWriteSwitches"]))
    out, _ = etsim("mem", "--preset", "hbm3_h100", "--count", 32768, "--size", "2048 B",
                   "--write-fraction", 0.5, "--outstanding", 256, "--json")
    data = json.loads(out)
    rows.append(("sequential, --write-fraction 0.5 (every other request writes, one address "
                 "stream)", 100 * data["peakFraction"], data["rowBuffer"]["readWriteSwitches"]))
    return rows


# ------------------------------------------------------------------------------------------
# Sections, their kinds and the summary verdicts

# The sections in the order they run; --quick leaves out the training runs.
SECTIONS = ("nccl8", "nccl16", "nvls", "crosscheck", "hbm", "gpt3", "llama3", "megatron")
TRAINING = ("gpt3", "llama3", "megatron")
SECTION_TITLES = {"nccl8": "NCCL all-reduce on 8 x H100 (4.1)",
                  "nccl16": "NCCL all-reduce on 2 x 8 H100 (4.2)",
                  "nvls": "in-switch reduction (NVLS), evaluated (4.1, 4.2)",
                  "crosscheck": "other all-reduce measurements: 4 x H100, 2 x 8 H100 on RoCE, "
                                "2 x p4de (4.1, 4.2)",
                  "hbm": "HBM sustained bandwidth (4.4)",
                  "gpt3": "GPT-3 175B training iteration on 1,024 A100 (4.5)",
                  "llama3": "Llama 3 405B-class training on H100 (4.5)",
                  "megatron": "Megatron-LM model FLOPs utilisation on A100 (4.5)"}

# What a summary row is, following docs/calibration.md: a row whose parameter was fitted on
# the figure it compares with is a calibration; a row against a stand-in (not a measurement)
# is a stand-in; neither counts as validation.
VALIDATION = "validation"
CALIBRATION = "calibration"
STAND_IN = "stand-in"


def point_row(anchor, kind, published_text, etsim_text, value, published, bound):
    """A summary row of one figure against one published value, passing within +-bound %."""
    err = error_pct(value, published)
    return (anchor, kind, published_text, etsim_text, f"{err:+.1f} %", f"within {bound} %",
            abs(err) <= bound)


def table_row(anchor, published_text, errors, mean_bound=20):
    """A summary row of a table of (label, error %) against the collective tables' target:
    geomean absolute error within `mean_bound` %, every entry within 35 %."""
    mean = geomean_abs([e for _, e in errors])
    label, worst = max(errors, key=lambda e: abs(e[1]))
    return (anchor, VALIDATION, published_text, "table below",
            f"{mean:.2f} % geomean abs, worst {worst:+.1f} % ({label})",
            f"geomean within {mean_bound} %, every size within 35 %",
            mean <= mean_bound and abs(worst) <= 35)


def result_cell(passed):
    return "pass" if passed else "**MISS**"


# ------------------------------------------------------------------------------------------


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    parser.add_argument("--etsim", default=os.path.join(root, "build", "apps", "etsim"))
    parser.add_argument("--out", default=os.path.join(root, "docs", "validation.md"))
    parser.add_argument("--work", default=None, help="keep traces and reports here")
    parser.add_argument("--quick", action="store_true", help="skip the training runs")
    parser.add_argument("--sections", default=None,
                        help="comma-separated sections to run, of " + ", ".join(SECTIONS) +
                             " (default: all; with --quick, all but the training runs)")
    parser.add_argument("--reuse", action="store_true",
                        help="reuse reports already in the work folder (same etsim only)")
    args = parser.parse_args()
    if args.sections is None:
        chosen = [n for n in SECTIONS if not (args.quick and n in TRAINING)]
    else:
        chosen = [n.strip() for n in args.sections.split(",") if n.strip()]
        unknown = [n for n in chosen if n not in SECTIONS]
        if unknown:
            parser.error(f"--sections: unknown section {', '.join(unknown)}; "
                         f"choose from {', '.join(SECTIONS)}")
        if args.quick:
            chosen = [n for n in chosen if n not in TRAINING]
    skipped = {}
    for n in SECTIONS:
        if n not in chosen:
            skipped[n] = ("--quick skips the training runs" if args.quick and n in TRAINING
                          else "not selected with --sections")
    work = args.work or tempfile.mkdtemp(prefix="etsim-validate-")
    os.makedirs(work, exist_ok=True)
    if not os.path.isfile(args.etsim):
        sys.exit(f"validate: no etsim binary at {args.etsim}; build it "
                 "(cmake --build build --target etsim) or pass --etsim PATH")
    etsim = Etsim(os.path.abspath(args.etsim), work, args.reuse, source_commit(root))
    version, _ = etsim("--version", record=False)
    print(f"validate: etsim {etsim.stamp['etsim_commit']}, binary SHA-256 "
          f"{etsim.stamp['etsim_sha256']}", file=sys.stderr)

    started = time.monotonic()
    # Each section's runs, in SECTIONS order (a run two sections share is made once, Etsim.run).
    runners = {"nccl8": lambda: nccl_8(etsim),
               "nccl16": lambda: nccl_16(etsim),
               "nvls": lambda: (nvls_8(etsim), in_switch_16(etsim)),
               "crosscheck": lambda: crosscheck(etsim),
               "hbm": lambda: (memory(etsim), copy_bursts(etsim)),
               "gpt3": lambda: gpt3(etsim),
               "llama3": lambda: llama3(etsim),
               "megatron": lambda: megatron(etsim)}
    done = {}
    for n in SECTIONS:
        if n in chosen:
            print(f"validate: {SECTION_TITLES[n]}", file=sys.stderr)
            done[n] = runners[n]()
    r8, r16, g, l = (done.get(n) for n in ("nccl8", "nccl16", "gpt3", "llama3"))
    mg = done.get("megatron")
    xc = done.get("crosscheck")
    nvls8, sw16 = done.get("nvls", (None, None))
    mem_rows, bursts = done.get("hbm", (None, None))
    elapsed = time.monotonic() - started

    out = []
    w = out.append
    w("# Validation against published measurements\n")
    w("Generated by `scripts/validate.py` (" + version.strip() + "); do not edit by hand. "
      "Regenerate with the command below (most of the time goes to the training runs; "
      "`--quick` skips them; this invocation took "
      f"{elapsed:.0f} s" + (", with --quick" if args.quick else "") + "):\n")
    w("```sh\nscripts/validate.py --etsim build/apps/etsim --out docs/validation.md\n```\n")
    w(f"etsim commit `{etsim.stamp['etsim_commit']}`, binary SHA-256 "
      f"`{etsim.stamp['etsim_sha256']}`. Every trace and report in the work folder carries "
      "the same stamp (`stamp.json` in a trace's folder, `<report>.stamp.json` beside a "
      "report); `--reuse` takes only those of this binary.\n")
    if skipped:
        w("Sections not run, so left out of this document (no figure is carried over from "
          "an earlier run):\n")
        for n, reason in skipped.items():
            w(f"- {SECTION_TITLES[n]}: {reason}.")
        w("")
    w("Published figures are those of `shared/spec/hardware-models.md` section 4 (sources "
      "S1-S29 there). Error = (etsim - published) / published. Every figure below comes from "
      "the bundled presets and `etsim gen`; the commands are listed at the end.\n")

    w("## Summary\n")
    w("Kind follows docs/calibration.md: *calibration* rows compare with the figure a "
      "parameter was fitted on, *stand-in* rows compare with a substitute for a measurement; "
      "only *validation* rows test the model.\n")
    rows = []  # (anchor, kind, published, etsim, error, target, passed)
    if r8:
        g8 = geomean_abs([r[4] for r in r8])
        rows.append(("NCCL ring all-reduce busbw, 8 x H100, 1 MiB-8 GiB",
                     f"{STAND_IN}, {CALIBRATION}", "ASTRA-sim curve, table 4.1", "table below",
                     f"{g8:.2f} % geomean abs", "geomean within 15 %", g8 <= 15))
        big8 = r8[-1]
        rows.append(point_row("NCCL ring all-reduce busbw, 8 x H100, 8 GiB", CALIBRATION,
                              f"{big8[3]} GB/s", f"{big8[2]:.0f} GB/s", big8[2], big8[3], 10))
    if r16:
        rows.append(table_row("NCCL all-reduce busbw, 2 x 8 H100, 64 KiB-16 GiB", "table 4.2",
                              [(r[0], r[6]) for r in r16]))
    if xc:
        # The 8 x H100 target's geomean bound, on the measured 4-GPU curve.
        rows.append(table_row("NCCL all-reduce busbw, 4 x H100, 1 MiB-8 GiB",
                              "nccl-tests (S22's data)",
                              [(r[0], r[4]) for r in xc["h100x4"]], mean_bound=15))
        rows.append(table_row("NCCL all-reduce busbw, 2 x 8 H100 on RoCE (Oracle), 1-16 GiB",
                              "446-465 GB/s", [(r[0], r[3]) for r in xc["oracle"]]))
        rows.append(table_row("NCCL all-reduce busbw, 2 x 8 H100 on GCP A3 Mega (TCPXO), "
                              "8 B-8 GiB", "nccl-tests, 31 sizes",
                              [(r[0], r[6]) for r in xc["a3mega"]]))
        rows.append(point_row("NCCL all-reduce busbw, 2 x p4de (A100, EFA), 2 GiB", VALIDATION,
                              f"{P4DE_2GIB_BUSBW} GB/s", f"{xc['p4de_busbw']:.1f} GB/s",
                              xc["p4de_busbw"], P4DE_2GIB_BUSBW, 35))
        rows.append(point_row("NCCL all-reduce time, 2 x p4de (A100, EFA), 8 B", VALIDATION,
                              f"{P4DE_8B_US} us", f"{xc['p4de_8B_us']:.0f} us",
                              xc["p4de_8B_us"], P4DE_8B_US, 35))
        rows.append(point_row("NCCL all-reduce time, 2 x 8 H100 (p5, EFA), 8 B", VALIDATION,
                              f"{P5_8B_US} us", f"{xc['p5_8B_us']:.0f} us", xc["p5_8B_us"],
                              P5_8B_US, 35))
    if g:
        rows.append(point_row("GPT-3 175B iteration, 1,024 A100", VALIDATION,
                              "31.5 s (140 TF/GPU)",
                              f"{g['total_s']:.1f} s ({g['tflops']:.0f} TF/GPU)", g["total_s"],
                              31.5, 15))
    if l:
        rows.append(point_row("Llama 3 405B-class, TFLOP/s per H100", VALIDATION, "430",
                              f"{l['tflops']:.0f}", l["tflops"], 430, 15))
    for r in mg or []:
        rows.append(point_row(f"Megatron-LM GPT {r['name']} MFU, {r['ranks']} A100", VALIDATION,
                              f"{r['published']} %", f"{r['mfu']:.1f} %", r["mfu"],
                              r["published"], 15))
    if mem_rows:
        # The copy row's burst length was chosen to match it (COPY_BURST).
        for (name, value, published, _), kind in zip(mem_rows[:2], (CALIBRATION, VALIDATION)):
            rows.append(point_row(name, kind, f"{published} % of peak", f"{value:.1f} %", value,
                                  published, 10))
    w("| anchor | kind | published | etsim | error | target | result |")
    w("|---|---|---|---|---|---|---|")
    for anchor, kind, published, value, err, target, passed in rows:
        w(f"| {anchor} | {kind} | {published} | {value} | {err} | {target} | "
          f"{result_cell(passed)} |")
    checked = [r for r in rows if r[1] == VALIDATION]
    w(f"\nValidation rows: {sum(1 for r in checked if r[6])} of {len(checked)} within "
      "target; calibration and stand-in rows are not counted.\n")

    if r8:
        w("## NCCL all-reduce on one HGX H100 node (8 GPUs), section 4.1\n")
        w("Preset `hgx_h100` (NVLink4 through NVSwitch, 450 GB/s per direction at efficiency 0.82, "
          "ring, 4 chunks), one all-reduce per size (`etsim gen microbench --collective "
          "all_reduce`). busbw = size / time x 2(n-1)/n, as nccl-tests reports it; time is the "
          "report's collective time (first post to last completion).\n")
        write_busbw_table(w, r8)
        w(f"\nGeomean absolute error {geomean_abs([r[4] for r in r8]):.1f} %. The published column "
          "is the spec's stand-in: the curve of ASTRA-sim's calibrated HGX-H100 parameters at the "
          "measured ring bandwidth B = 370 GB/s; its large-message end is the measured NCCL ring "
          "peak of about 370 GB/s (nccl-tests #212), the figure NCCL reaches with "
          "`NCCL_ALGO=RING`; the preset keeps ring, as ASTRA-sim's validated HGX-H100 inputs do. "
          "These rows are calibration against a stand-in, not validation: the NVLink4 "
          "efficiency was fitted on the same curve (docs/calibration.md).\n")
    if nvls8:
        if not r8:
            w("## NCCL NVLS all-reduce on one HGX H100 node (8 GPUs), section 4.1\n")
        w("NVLS (NCCL's default all-reduce on H100, NVSwitch multicast and in-switch reduction) "
          "evaluated with etsim's `in_switch` algorithm (`--set "
          "'fabric.collectives.algorithms.all_reduce=[in_switch]'`), which reduces at line rate "
          "in one step, against the single-node NVLS run of nccl-tests issue #290 "
          "(github.com/NVIDIA/nccl-tests/issues/290: 8 x H100 80GB HBM3 in an HGX node, NCCL's "
          "default algorithm, NVLS as an NCCL maintainer confirms there; two iterations a size). "
          "Not the preset, and not counted: the preset runs ring.\n")
        write_time_table(w, nvls8)
    if r16:
        w("## NCCL all-reduce on 2 nodes x 8 H100 (16 ranks), section 4.2\n")
        w("Preset `hgx_h100_4node` cut to two nodes (`--set ranks=16 --set "
          "fabric.topology.dims[1].size=2`): NVSwitch inside a node, one 400 Gb/s NIC per GPU on "
          "rail switches (AWS p5: 3,200 Gb/s EFA per node), hierarchical ring (reduce-scatter in "
          "the node, all-reduce across, all-gather in the node). Published: AWS 2 x p5.48xlarge, "
          "nccl-tests out of place.\n")
        write_time_table(w, r16)
    if sw16:
        w("In-switch reduction evaluated at 1 GiB (published busbw 437.0 GB/s), as whole "
          "all-reduces entering the hierarchical all-reduce in these ways "
          "(`--set fabric.collectives.algorithms.all_reduce=[...]`, and "
          "`fabric.collectives.optimization`); in-switch reduce-scatter and all-gather phases in "
          "the node (`all_reduce_phases`) are evaluated in the notes below:\n")
        w("| algorithms (node, across); optimization | etsim busbw (GB/s) | error |")
        w("|---|---|---|")
        for label, bw in sw16:
            w(f"| {label} | {bw:.1f} | {error_pct(bw, 437.0):+.1f} % |")
        w("")

    if xc:
        w("## Other all-reduce measurements, sections 4.1 and 4.2\n")
        w("Measurements the spec lists besides its two tables, none of them used to fit a "
          "parameter; each preset as it is, cut or set to the machine (`etsim gen microbench "
          "--collective all_reduce`, one all-reduce per size):\n")
        w("- 2 x p4de (8 A100 and 400 Gb/s of EFA per node, S27): `dgx_a100_cluster` cut to two "
          "nodes with `fabric.topology.dims[1].bandwidth=50 Gb/s` (400 Gb/s over the node's 8 "
          "GPU rails) and `fabric.topology.dims[1].nic_latency=20 us` (EFA's per-message "
          "latency, the sourced constant of `hgx_h100_4node`): 2 GiB "
          f"{xc['p4de_busbw']:.1f} GB/s busbw against {P4DE_2GIB_BUSBW} "
          f"({error_pct(xc['p4de_busbw'], P4DE_2GIB_BUSBW):+.1f} %), 8 B "
          f"{xc['p4de_8B_us']:.1f} us against {P4DE_8B_US} "
          f"({error_pct(xc['p4de_8B_us'], P4DE_8B_US):+.1f} %);")
        w("- 2 x 8 H100 on AWS p5 (section 4.2's table, its 8-byte row, which the 64 KiB-16 GiB "
          "target leaves out): the same cut of `hgx_h100_4node`, "
          f"{xc['p5_8B_us']:.1f} us against {P5_8B_US} "
          f"({error_pct(xc['p5_8B_us'], P5_8B_US):+.1f} %);")
        w("- 2 x 8 H100 over Oracle's RoCE v2 network (BM.GPU.H100.8: 16 x 200 Gb/s per node, "
          "the 400 Gb/s per GPU of `hgx_h100_4node`, cut to two nodes as in section 4.2):\n")
        w("| size | etsim busbw (GB/s) | published busbw (GB/s) | error |")
        w("|---|---|---|---|")
        for size, bw, published, err in xc["oracle"]:
            w(f"| {size} | {bw:.1f} | {published} | {err:+.1f} % |")
        w("")
        w("4 x H100 in one HGX node (S22: the blog's nccl-tests output, published with it, "
          "github.com/waynehacking8/nccl-collectives-bench `results/all_reduce.txt`; nccl-tests "
          "2.18.3, NCCL 2.29.2 choosing its algorithm and protocol per size, out of place): "
          "`hgx_h100` with `--set ranks=4 --set ranks_per_node=4 --set "
          "fabric.topology.dims[0].size=4`. Neither the NVLink4 efficiency (fitted on the 8-GPU "
          "ring peak, nccl-tests #212) nor the link latency (ASTRA-sim's HGX-H100 calibration) "
          "was fitted on these figures. From 256 MiB NCCL's choice is the ring: the same "
          "repository's `NCCL_ALGO=Ring` runs agree within 0.5 %.\n")
        write_busbw_table(w, xc["h100x4"])
        w(f"\nGeomean absolute error {geomean_abs([r[4] for r in xc['h100x4']]):.1f} %.\n")
        w("2 x 8 H100 on Google Cloud A3 Mega (8 x 200 Gb/s GPUDirect-TCPXO NICs per node, so "
          "half of p5's 400 Gb/s per GPU; nccl-tests `-b 8 -e 8G -f 2`, out of place, "
          "github.com/lessizzmore/create-a3mega-ztan-fork, file `ztan-NCCL-test-result` at commit "
          "02dd8f4): the cut of section 4.2 with "
          "`--set 'fabric.topology.dims[1].bandwidth=200 Gb/s'`. The NIC latency stays the "
          "preset's EFA figure: no public per-message figure for TCPXO was found. Bus bandwidths "
          "are computed from the times (the printed ones round to 0.00 below 1 KiB).\n")
        write_time_table(w, xc["a3mega"])
        g3 = geomean_abs([r[6] for r in xc["a3mega"]])
        w(f"Geomean absolute busbw error {g3:.1f} %. The same cut with the preset's 4 chunks "
          "kept whatever the size (`--set fabric.collectives.pipeline_depth=fixed`, "
          "docs/network.md, Pipeline depth):\n")
        w("| size | etsim time, fixed depth (us) | published time (us) | error |")
        w("|---|---|---|---|")
        for size, t, published, err, *_ in xc["a3mega_fixed"]:
            w(f"| {size} | {t:.1f} | {published} | {err:+.1f} % |")
        w("")

    if g:
        w("## GPT-3 175B training iteration on 1,024 A100, section 4.5\n")
        w("Published: Narayanan et al. (SC'21) ran GPT-3 175B (96 layers, h = 12,288, s = 2,048, "
          "V = 51,200) with TP 8 x PP 8 x DP 16 on 1,024 A100 (Selene), global batch 1,536, at "
          "140 TFLOP/s per GPU; with full recompute an iteration is 4.51e18 FLOPs, so "
          "**31.5 s per iteration**.\n")
        w("Method: every rank of the iteration is simulated: `etsim gen transformer --preset "
          "gpt3-175b --tp 8 --pp 8 --dp 16 --micro-batch 1 --global-batch 1536 --seq-len 2048 "
          "--recompute full --attention unfused --dropout 0.1 --grad-accumulation separate` "
          f"(1,024 rank files, {g['nodes']:,} nodes: 96 micro-batches per replica) on preset "
          "`dgx_a100_cluster` as it is (128 nodes of 8 A100, one pipeline stage per node, as "
          "rank = tp + 8 pp + 64 dp places them). The trace holds what Megatron-LM ran in 2021: "
          "attention unfused (the s x s scores of each head written to HBM by a batched GEMM, "
          "read and written by the fused scale-mask-softmax, by dropout, which also writes a "
          "mask, and read by the second batched GEMM; the backward the same in reverse), "
          "attention and hidden dropout of 0.1 (Megatron-LM's defaults), the bias-dropout-add "
          "after each block, the sum of the residual gradients in backward, and the add of "
          "every weight gradient into the step's gradient buffer after each micro-batch "
          "(Megatron-LM's main_grad hook, an fp32 buffer, since Megatron-LM accumulates and "
          "all-reduces gradients in fp32 when it trains in bf16: `etsim gen`'s default "
          "`--grad-dtype` for bf16) (docs/cli.md, \"Kernels of one layer\"). Each stage's "
          "gradients are all-reduced in fp32 across its 16 replicas after its last backward, "
          "one group per rail, all stages sharing the rail switches.\n")
        w("Until commit 676e31c this section simulated one replica (64 ranks) and the "
          "all-reduce of the largest stage's gradients (128 ranks) apart and added them, a "
          "reduction that needs the replicas to share nothing but that all-reduce. It gave "
          "26.77 + 0.857 = 27.63 s (-12.3 %). The full run replaces it now that it fits in the "
          "time a validation run may take (bench/README.md); what it changes is explained in "
          "the notes below.\n")
        w("| part | etsim |")
        w("|---|---|")
        w(f"| iteration (the last rank's finish) | **{g['total_s']:.2f} s** (published 31.5 s, "
          f"error {error_pct(g['total_s'], 31.5):+.1f} %) |")
        w(f"| the first rank's finish | {g['first_finish_s']:.2f} s |")
        w(f"| all-reduces (tensor-parallel and data-parallel) | {g['all_reduces']:,} |")
        w(f"| TFLOP/s per GPU (4.51e18 / 1,024 / iteration) | {g['tflops']:.0f} (published 140) |")
        rk = g["report"]["ranks"]
        mean = lambda key: sum(r[key] for r in rk) / len(rk) / 1e9
        w(f"| mean per rank: compute / memory / exposed comm / idle | {mean('compute_ns'):.2f} / "
          f"{mean('memory_ns'):.2f} / {mean('exposed_comm_ns'):.2f} / {mean('idle_ns'):.2f} s |")
        w(f"\nSimulation wall time {g['wall']:.0f} s.\n")

    if l:
        w("## Llama 3 405B-class training on H100, section 4.5\n")
        w("Published: Llama 3 405B, seq 8,192, 16 M tokens per step, TP 8 x PP 16 x DP 64 on "
          "8,192 H100: **430 TFLOP/s per GPU** (43 % of BF16 dense peak).\n")
        w("Method: one data-parallel replica (TP 8 x PP 16 = 128 ranks on 16 HGX H100 nodes, "
          "preset `hgx_h100_4node` with `--set ranks=128 --set fabric.topology.dims[1].size=16`) "
          "runs its 32 sequences of the step as 32 micro-batches (`etsim gen transformer "
          "--layers 128 --hidden 16384 --heads 128 --kv-heads 8 --ffn 53248 --vocab 128256 "
          "--gated-mlp --tp 8 --pp 16 --dp 1 --global-batch 32 --seq-len 8192 --attention "
          "fused --dropout 0 --grad-accumulation none`: fused attention and no dropout, as "
          "Meta trained; the residual adds and their backward are in the trace; how Meta's "
          "stack sums weight gradients over micro-batches is not published, so no kernel is "
          "written for it). The model has "
          "126 layers; 128 are generated because the generator needs layers divisible by PP "
          "(Meta balanced 126 over 16 stages by giving the first and last stage fewer layers), "
          "and TFLOP/s per GPU counts the FLOPs of the generated model, so the extra layers "
          "cancel to first order. Data-parallel traffic (FSDP all-gather and reduce-scatter over "
          "64 replicas) is not simulated: Meta overlaps it with compute. TFLOP/s per GPU = "
          "(6 x parameters x tokens + 12 x layers x seq x h x tokens) / 128 / step time, the "
          "spec's model-FLOPs convention.\n")
        w("| quantity | etsim | published | error |")
        w("|---|---|---|---|")
        w(f"| step time of one replica | {l['seconds']:.2f} s | 11.6-12.5 s (derived) | - |")
        w(f"| TFLOP/s per GPU | **{l['tflops']:.0f}** | 430 | "
          f"{error_pct(l['tflops'], 430):+.1f} % |")
        rk = l["report"]["ranks"]
        mean = lambda key: sum(r[key] for r in rk) / len(rk) / 1e9
        w(f"| mean per rank: compute / memory / exposed comm / idle | {mean('compute_ns'):.2f} / "
          f"{mean('memory_ns'):.2f} / {mean('exposed_comm_ns'):.2f} / {mean('idle_ns'):.2f} s | "
          "| |")
        w(f"\nParameters of the generated model: {l['params']/1e9:.0f} B; "
          f"{l['nodes']:,} nodes simulated in {l['wall']:.0f} s.\n")

    if mg:
        w("## Megatron-LM model FLOPs utilisation on A100, section 4.5\n")
        w("Published: the Megatron-LM README's table of model FLOPs utilisation (MFU) with "
          "selective recomputation and sequence parallelism, data-parallel size 1, on Selene "
          "(A100 80 GB): 41.5 % (22B), 51.4 % (175B), 56.0 % (530B), 56.3 % (1T). The "
          "configurations are those of the paper the README cites (Korthikanti et al. 2022, "
          "table 3): s = 2,048, V = 51,200, TP 8, micro-batch 1. MFU = 72 B s l h^2 (1 + s / 6h "
          "+ V / 12 l h) / (iteration x GPUs x 312 TFLOP/s), the paper's definition (recomputed "
          "work not counted). Nothing in etsim was fitted to these figures "
          "(docs/calibration.md).\n")
        w("Method: every rank of the iteration (no reduction is needed at DP 1): `etsim gen "
          "transformer` with the shape below and `--kv-heads` = heads, FFN 4h, tied "
          "embeddings, `--tp 8 --pp P --dp 1 --micro-batch 1 --global-batch B --seq-len 2048 "
          "--recompute selective --sequence-parallel --attention unfused --dropout 0.1 "
          "--grad-accumulation separate` (Megatron-LM of 2022: attention without a fused "
          "kernel, its default dropout, the attention core recomputed in backward, fp32 "
          "gradient accumulation), on `dgx_a100_cluster` cut to P nodes (22B: one node, the "
          "NVSwitch dimension alone).\n")
        w("| model | layers / hidden / heads | TP x PP = GPUs | batch | etsim iteration | "
          "etsim MFU | published MFU | error |")
        w("|---|---|---|---|---|---|---|---|")
        for r in mg:
            w(f"| {r['name']} | {r['layers']} / {r['hidden']:,} / {r['heads']} | "
              f"{r['tp']} x {r['pp']} = {r['ranks']} | {r['batch']} | {r['seconds']:.3f} s | "
              f"**{r['mfu']:.1f} %** | {r['published']} % | "
              f"{error_pct(r['mfu'], r['published']):+.1f} % |")
        w("\n" + "; ".join(f"{r['name']}: {r['nodes']:,} nodes simulated in {r['wall']:.1f} s"
                            for r in mg) + ".\n")

    if mem_rows:
        w("## HBM sustained bandwidth, sections 2.4, 2.5 and 4.4\n")
        w("`etsim mem` with the detailed HBM model, closed loop, 256 requests outstanding. The "
          "first two rows are measurements (error against them); the last two are upper bounds "
          "the model must respect (section 2.4), so they say whether the bound holds.\n")
        w("| measurement | published (% of peak) | etsim (% of peak) | error |")
        w("|---|---|---|---|")
        for name, value, published, bound in mem_rows:
            if bound:
                verdict = "bound holds" if value <= published + 0.05 else "bound VIOLATED"
            else:
                verdict = f"{error_pct(value, published):+.1f} %"
            w(f"| {name} | {'<= ' if bound else ''}{published} | {value:.1f} | {verdict} |")
        w("")
        w("The H100 copy figure against the length of the read and write bursts (`etsim mem "
          "--preset hbm3_h100 --size '2048 B' --count 32768 --outstanding 256 --pattern copy "
          "--burst N`; published 86.7 %):\n")
        w("| traffic | etsim (% of peak) | read/write switches |")
        w("|---|---|---|")
        for label, value, switches in bursts:
            w(f"| {label} | {value:.1f} | {switches:,} |")
        w("")

    w("## Where etsim misses, and why\n")
    w("MISSES_PLACEHOLDER\n")

    w("## Commands\n")
    w("Every etsim command the script ran (paths under its work folder):\n")
    w("```")
    for c in etsim.commands:
        w("etsim " + c.replace(work, "$WORK"))
    w("```")
    text = "\n".join(out) + "\n"
    notes_file = os.path.join(os.path.dirname(os.path.abspath(__file__)), "validation-notes.md")
    notes = open(notes_file).read().strip() if os.path.exists(notes_file) else "(none yet)"
    text = text.replace("MISSES_PLACEHOLDER", notes)
    # Written whole or not at all: a failed write leaves the previous file in place.
    partial = args.out + ".partial"
    with open(partial, "w") as f:
        f.write(text)
    os.replace(partial, args.out)
    if args.work is None:
        shutil.rmtree(work, ignore_errors=True)
        print(f"validate: wrote {args.out} (temporary work folder {work} removed)",
              file=sys.stderr)
    else:
        print(f"validate: wrote {args.out} (work folder {work})", file=sys.stderr)


if __name__ == "__main__":
    main()
