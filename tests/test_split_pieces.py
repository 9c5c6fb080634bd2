#!/usr/bin/env python3
"""test_split_pieces.py — the pieces of `tracelens split` on every shared
trace with a capture folder:
  - they keep graph-replay attribution: their GPU compute time (gpu_timeline
    computation_time, which counts only kernels linked to a launching op)
    sums to the merged trace's within 0.1 %;

Usage: test_split_pieces.py BUILD_DIR   (exit 77 when ../shared/data is absent)
Prints "N passed, M failed" last."""
import csv
import os
import subprocess
import sys
import tempfile

from tlcheck import Checks

HERE = os.path.dirname(os.path.abspath(__file__))
BUILD = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("TL_BUILD", "build")
DATA = os.environ.get("TL_SHARED_DATA", os.path.join(HERE, "..", "..", "shared", "data"))
BIN = os.path.join(BUILD, "tracelens")
TOLERANCE = 0.001

check = Checks()


def run(db, *args):
    p = subprocess.run([BIN, "--db", db] + list(args), stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True)
    return p.returncode, p.stdout, p.stderr


def compute_ms(db, tid, tmp):
    out = os.path.join(tmp, tid)
    rc, _, err = run(db, "report", tid, "--output_csvs_dir", out)
    if not check(rc == 0, f"report {tid}: rc {rc} {err.strip()[-200:]}"):
        return 0.0
    with open(os.path.join(out, "gpu_timeline.csv"), newline="") as f:
        for r in csv.DictReader(f):
            if r["type"] == "computation_time":
                return float(r["time ms"])
    return 0.0


def capture_cases():
    roots = [os.path.join(DATA, "inference", d) for d in sorted(os.listdir(os.path.join(DATA, "inference")))]
    for d in roots:
        cap = os.path.join(d, "capture_traces")
        traces = [f for f in sorted(os.listdir(d)) if f.endswith(".json.gz")] if os.path.isdir(d) else []
        if os.path.isdir(cap) and traces:
            yield os.path.basename(d), os.path.join(d, traces[0]), cap


def main():
    if not os.path.isdir(os.path.join(DATA, "inference")):
        print("skipped: no ../shared/data/inference")
        return 77
    with tempfile.TemporaryDirectory() as tmp:
        for name, trace, cap in capture_cases():
            db = os.path.join(tmp, name + ".db")
            rc, out, err = run(db, "split", trace, "--capture_folder", cap)
            if not check(rc == 0, f"{name}: split rc {rc} {err.strip()[-200:]}"):
                continue
            lines = [l.split("\t") for l in out.splitlines() if l and not l.startswith("#")]
            merged = lines[0][0]
            pieces = [(l[0], int(l[3].split()[1].split("-")[0])) for l in lines[1:]]
            check(pieces, f"{name}: no pieces")
            whole = compute_ms(db, merged, tmp)
            parts = sum(compute_ms(db, p, tmp) for p, _ in pieces)
            check(whole > 0 and abs(parts - whole) <= TOLERANCE * whole,
                  f"{name}: pieces' GPU compute time {parts:.3f} ms vs the merged trace's {whole:.3f} ms")
    return check.summary()


if __name__ == "__main__":
    sys.exit(main())
