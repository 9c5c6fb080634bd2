#!/usr/bin/env python3
"""test_split_inference.py — TraceLens_split_inference_trace against the
reference's splitter: for every case of tests/golden/split_inference/
expected.json (made by its make.py from the reference at 171dd747), ours
must print the same lines, write the same files, the same
execution_details.json (numbers within 1e-6) and pieces with the same event
count, GPU event count and kernel time; the CSV must hold the JSON's rows.
The first piece of each synthetic case must be accepted by our own report, and `tracelens split
--steady-state` must cut the windows the reference's --find-steady-state
selects. Cases on the public
inference traces need ../shared/data and are skipped without it.

Usage: test_split_inference.py BUILD_DIR
Prints how many values it compared, then "N passed, M failed"."""
import csv
import gzip
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

from tlcheck import Checks

HERE = os.path.dirname(os.path.abspath(__file__))
GOLD = os.path.join(HERE, "golden", "split_inference")
BUILD = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("TL_BUILD", "build")
DATA = os.environ.get("TL_SHARED_DATA", os.path.join(HERE, "..", "..", "shared", "data"))
SPLIT = os.path.join(BUILD, "TraceLens_split_inference_trace")
TL = os.path.join(BUILD, "tracelens")

check = Checks()
compared = 0


def trace_path(name):
    if name.startswith("shared:"):
        return os.path.join(DATA, name[len("shared:"):])
    return os.path.join(GOLD, "traces", name + ".json.gz")


def same(a, b, where):
    """Compares JSON values (numbers within 1e-6), counting each leaf."""
    global compared
    if isinstance(a, dict) and isinstance(b, dict):
        check(sorted(a) == sorted(b), f"{where}: keys {sorted(a)} != {sorted(b)}")
        for k in a:
            if k in b:
                same(a[k], b[k], f"{where}.{k}")
        return
    if isinstance(a, list) and isinstance(b, list):
        check(len(a) == len(b), f"{where}: {len(a)} items, expected {len(b)}")
        for i, (x, y) in enumerate(zip(a, b)):
            same(x, y, f"{where}[{i}]")
        return
    compared += 1
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool):
        check(abs(a - b) <= 1e-6 * max(1.0, abs(b)), f"{where}: {a!r} != {b!r}")
    else:
        check(a == b, f"{where}: {a!r} != {b!r}")


def piece_summary(path):
    with gzip.open(path, "rt") as f:
        ev = json.load(f)["traceEvents"]
    kern = [e for e in ev if e.get("cat") == "kernel"]
    gpu = [e for e in ev if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset", "gpu_user_annotation")]
    return {"events": len(ev), "gpu_events": len(gpu), "kernel_us": round(sum(e["dur"] for e in kern), 6)}


def check_csv(out, details, case):
    """execution_details.csv: one row per JSON entry, the phase flattened."""
    with open(os.path.join(out, "execution_details.csv"), newline="") as f:
        rows = list(csv.DictReader(f))
    if not check(len(rows) == len(details), f"{case}: csv has {len(rows)} rows, json {len(details)}"):
        return
    for r, d in zip(rows, details):
        same(int(r["event_count"]), d["event_count"], f"{case}.csv.event_count")
        same(int(r["num_steps"]), len(d["steps"]), f"{case}.csv.num_steps")
        same(round(float(r["gpu_busy_duration"]), 2), round(d["gpu_busy_duration"], 2), f"{case}.csv.busy")
        for k, v in d["phase"].items():
            same(int(r["phase_" + k]), v, f"{case}.csv.phase_{k}")


def report_accepts(db, piece, case):
    """Our report reads the piece and finds its kernels."""
    out = tempfile.mkdtemp(prefix="split_rep_")
    try:
        p = subprocess.run([TL, "--db", db, "report", piece, "--output_csvs_dir", out],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        ok = check(p.returncode == 0, f"{case}: report of {os.path.basename(piece)}: rc {p.returncode} "
                   f"{p.stderr.strip()[-200:]}")
        if ok:
            check(os.path.exists(os.path.join(out, "kernel_summary.csv")) or
                  os.path.exists(os.path.join(out, "gpu_timeline.csv")),
                  f"{case}: report of {os.path.basename(piece)} wrote no sheets")
    finally:
        shutil.rmtree(out)


def run_case(db, case, exp, report_pieces):
    path = trace_path(exp["trace"])
    out = tempfile.mkdtemp(prefix="split_ours_")
    try:
        p = subprocess.run([SPLIT, "--db", db, path, "-o", out] + exp["flags"], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True)
        if not check(p.returncode == 0, f"{case}: rc {p.returncode}: {p.stderr.strip()[-300:]}"):
            return
        lines = p.stdout.replace(out, "{OUT}").replace(path, "{TRACE}").splitlines()
        same(lines, exp["stdout"], f"{case}.stdout")
        files = sorted(os.path.relpath(os.path.join(d, f), out) for d, _, fs in os.walk(out) for f in fs)
        same(files, exp["files"], f"{case}.files")
        if exp["details"] is not None and check("execution_details.json" in files, f"{case}: no details"):
            with open(os.path.join(out, "execution_details.json")) as f:
                details = json.load(f)
            for d in details:
                d["output_path"] = d["output_path"].replace(out, "{OUT}")
            same(details, exp["details"], f"{case}.details")
            check_csv(out, details, case)
        for k, (name, want) in enumerate(sorted(exp["pieces"].items())):
            if check(os.path.exists(os.path.join(out, name)), f"{case}: {name} missing"):
                same(piece_summary(os.path.join(out, name)), want, f"{case}.{name}")
                if report_pieces and k == 0:  # one piece a case: the report reads them alike
                    report_accepts(db, os.path.join(out, name), case)
    finally:
        shutil.rmtree(out)


def native_steady(db, case, exp):
    """`tracelens split --steady-state` cuts the windows the reference's
    --find-steady-state selects (at its default --num-steps 32)."""
    want = {}
    for line in exp["stdout"]:
        m = re.match(r"\[(mixed|decode_only|max_prefilldecode)\] .*Selected (?:window )?\[(\d+), (\d+)\)", line)
        if m:
            label = {"mixed": "mixed_steady_state", "decode_only": "decode_only_steady_state",
                     "max_prefilldecode": "prefilldecode_steady_state"}[m.group(1)]
            want[label] = f"{m.group(2)}-{int(m.group(3)) - 1}"
    p = subprocess.run([TL, "--db", db, "split", trace_path(exp["trace"]), "--steady-state"],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if not check(p.returncode == 0, f"{case}: split --steady-state rc {p.returncode} {p.stderr[-200:]}"):
        return
    got = {}
    for line in p.stdout.splitlines():
        f = line.split("\t")
        if len(f) >= 4 and not line.startswith("#"):
            label, rng = f[3].split(" ")
            got[label] = rng
    same(got, want, f"{case}.split--steady-state")


def main():
    with open(os.path.join(GOLD, "expected.json")) as f:
        expected = json.load(f)
    db = tempfile.mkdtemp(prefix="split_db_")
    skipped = 0
    try:
        for case, exp in sorted(expected.items()):
            if not os.path.exists(trace_path(exp["trace"])):
                print(f"{case}: skipped ({exp['trace']} absent)")
                skipped += 1
                continue
            run_case(db, case, exp, not exp["trace"].startswith("shared:"))
            if exp["flags"] == ["--find-steady-state"]:
                native_steady(db, case, exp)
    finally:
        shutil.rmtree(db)
    print(f"{compared} values compared over {len(expected) - skipped} cases ({skipped} skipped)")
    return check.summary()


if __name__ == "__main__":
    sys.exit(main())
