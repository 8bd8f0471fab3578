#!/usr/bin/env python3
"""scripts/validate.py --quick on the collective sections, into a temporary folder: the stamp
names this etsim binary, a report stamped by another binary (or by other arguments) is run
again under --reuse while this binary's are reused, no training row appears and every summary
row has a result; on the cross-checks, the A3 Mega table's time and busbw errors agree with each
other for every size, and the document is written whole (no partial file left).

Usage: ValidateScriptTest.py SOURCE_DIR ETSIM"""

import hashlib
import json
import os
import subprocess
import sys
import tempfile

SECTIONS = "nccl8,nccl16"


def fail(message):
    sys.exit(f"validate_script_test: {message}")


def run(source, etsim, work, out, *extra):
    command = [sys.executable, os.path.join(source, "scripts", "validate.py"), "--etsim", etsim,
               "--work", work, "--out", out, "--quick", "--sections", SECTIONS, *extra]
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        fail(f"{' '.join(command)} failed ({result.returncode}):\n{result.stderr}")
    with open(out) as f:
        return f.read(), result.stderr


def summary_rows(text):
    lines = text.split("\n")
    start = lines.index("## Summary")
    table = []
    for line in lines[start + 1:]:
        if line.startswith("## "):
            break
        if line.startswith("|"):
            table.append([cell.strip() for cell in line.strip("|").split("|")])
    return table


def main():
    source, etsim = sys.argv[1], sys.argv[2]
    with open(etsim, "rb") as f:
        sha = hashlib.sha256(f.read()).hexdigest()
    with tempfile.TemporaryDirectory(prefix="validate-test-") as tmp:
        work = os.path.join(tmp, "work")
        text, _ = run(source, etsim, work, os.path.join(tmp, "first.md"))

        if f"binary SHA-256 `{sha}`" not in text:
            fail(f"the document does not carry the binary's SHA-256 {sha}")
        reports = sorted(n for n in os.listdir(work) if n.endswith(".report.json"))
        traces = sorted(n for n in os.listdir(work) if os.path.isdir(os.path.join(work, n)))
        if len(reports) != 17 or len(traces) != 17:
            fail(f"expected 17 reports and 17 traces (7 + 10 sizes), found {len(reports)} "
                 f"and {len(traces)}")
        stamps = [os.path.join(work, r + ".stamp.json") for r in reports]
        stamps += [os.path.join(work, t, "stamp.json") for t in traces]
        for path in stamps:
            with open(path) as f:
                stamp = json.load(f)
            if stamp.get("etsim_sha256") != sha or not stamp.get("etsim_commit"):
                fail(f"{path}: stamp {stamp} does not name this binary ({sha})")

        # Forge one report as another binary's: mark its content and its stamp.
        forged = os.path.join(work, "ar8_1048576.report.json")
        with open(forged) as f:
            data = json.load(f)
        data["simulated_time_ns"] = -1
        with open(forged, "w") as f:
            json.dump(data, f)
        with open(forged + ".stamp.json", "w") as f:
            json.dump({"etsim_commit": "0" * 40, "etsim_sha256": "0" * 64}, f)
        # And one trace, by its stamp alone.
        with open(os.path.join(work, "ar16_65536", "stamp.json"), "w") as f:
            json.dump({"etsim_commit": "0" * 40, "etsim_sha256": "1" * 64}, f)
        # And one report of this binary, as if made by another command.
        other = os.path.join(work, "ar8_16777216.report.json")
        with open(other + ".stamp.json") as f:
            stamp = json.load(f)
        stamp["arguments"] = stamp["arguments"] + ["--set", "ranks=4"]
        with open(other + ".stamp.json", "w") as f:
            json.dump(stamp, f)

        second, log = run(source, etsim, work, os.path.join(tmp, "second.md"), "--reuse")
        if f"not reusing report {forged}: it was made by another etsim binary" not in log:
            fail(f"the forged report was not refused; the script said:\n{log}")
        if "not reusing trace" not in log or "ar16_65536" not in log:
            fail(f"the forged trace was not refused; the script said:\n{log}")
        if f"not reusing report {other}: it was made with other arguments" not in log:
            fail(f"the report of other arguments was not refused; the script said:\n{log}")
        if f"reusing report {os.path.join(work, 'ar8_4194304.report.json')}" not in log:
            fail(f"this binary's report was not reused; the script said:\n{log}")
        with open(forged) as f:
            if json.load(f)["simulated_time_ns"] <= 0:
                fail("the forged report was kept, not run again")
        with open(forged + ".stamp.json") as f:
            if json.load(f)["etsim_sha256"] != sha:
                fail("the re-run report's stamp does not name this binary")
        if second.split("## Summary")[1] != text.split("## Summary")[1]:
            fail("the document made from reused reports differs from the first one")

        for document in (text, second):
            for word in ("GPT-3 175B iteration", "Llama 3 405B-class, TFLOP", "Megatron-LM GPT"):
                if word in document.split("## Where etsim misses")[0]:
                    fail(f"a training row ({word}) appears although --quick skipped it")
            if "--quick skips the training runs" not in document:
                fail("the document does not say that --quick skipped the training sections")
            rows = summary_rows(document)
            if rows[0][-1] != "result" or rows[0][1] != "kind":
                fail(f"the summary has no kind and result columns: {rows[0]}")
            body = rows[2:]
            if len(body) != 3:
                fail(f"expected 3 summary rows for {SECTIONS}, found {body}")
            for row in body:
                if row[-1] not in ("pass", "**MISS**"):
                    fail(f"summary row without a pass/fail result: {row}")
            kinds = {row[0]: row[1] for row in body}
            if kinds["NCCL ring all-reduce busbw, 8 x H100, 8 GiB"] != "calibration":
                fail(f"the 8 x H100 rows are calibration rows (docs/calibration.md): {kinds}")
            if kinds["NCCL all-reduce busbw, 2 x 8 H100, 64 KiB-16 GiB"] != "validation":
                fail(f"the 2 x 8 H100 row is a validation row: {kinds}")

        # The cross-checks: the A3 Mega table gives both errors of every size from the times
        # (its busbw column rounds to 0.00 below 1 KiB), so they must agree with each other.
        crosscheck = os.path.join(tmp, "crosscheck.md")
        command = [sys.executable, os.path.join(source, "scripts", "validate.py"), "--etsim",
                   etsim, "--work", work, "--out", crosscheck, "--sections", "crosscheck"]
        result = subprocess.run(command, capture_output=True, text=True)
        if result.returncode != 0:
            fail(f"{' '.join(command)} failed ({result.returncode}):\n{result.stderr}")
        if os.path.exists(crosscheck + ".partial"):
            fail("the document's partial file was left behind")
        with open(crosscheck) as f:
            document = f.read()
        kinds = {row[0]: (row[1], row[-1]) for row in summary_rows(document)[2:]}
        a3 = "NCCL all-reduce busbw, 2 x 8 H100 on GCP A3 Mega (TCPXO), 8 B-8 GiB"
        if a3 not in kinds or kinds[a3][0] != "validation" or \
                kinds[a3][1] not in ("pass", "**MISS**"):
            fail(f"no A3 Mega validation row with a result in the summary: {kinds}")
        table = document.split("2 x 8 H100 on Google Cloud A3 Mega")[1].split("\n\n")[1]
        rows = [[c.strip() for c in line.strip("|").split("|")]
                for line in table.split("\n")[2:] if line.startswith("|")]
        if len(rows) != 31 or rows[0][0] != "8 B" or rows[-1][0] != "8 GiB":
            fail(f"the A3 Mega table should have 31 sizes, 8 B to 8 GiB: {rows}")
        for row in rows:
            time_error = float(row[3].rstrip(" %")) / 100
            busbw_error = float(row[6].rstrip(" %")) / 100
            if abs((1 + time_error) * (1 + busbw_error) - 1) > 2e-3:
                fail(f"time and busbw errors disagree: {row}")

        # Without --work the temporary folder (traces of gigabytes for the training rows) is
        # removed at the end.
        command = [sys.executable, os.path.join(source, "scripts", "validate.py"), "--etsim",
                   etsim, "--out", os.path.join(tmp, "third.md"), "--quick", "--sections",
                   "nccl8"]
        result = subprocess.run(command, capture_output=True, text=True)
        if result.returncode != 0:
            fail(f"{' '.join(command)} failed ({result.returncode}):\n{result.stderr}")
        marker = "temporary work folder "
        if marker not in result.stderr:
            fail(f"the script did not say it removed its temporary folder:\n{result.stderr}")
        folder = result.stderr.split(marker)[1].split(" removed")[0]
        if not folder or os.path.exists(folder):
            fail(f"the temporary work folder {folder!r} was left behind")
    print("validate_script_test: ok")


if __name__ == "__main__":
    main()
