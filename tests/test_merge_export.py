#!/usr/bin/env python3
"""test_merge_export.py — a split piece of a graph-merged trace, written out
as Kineto JSON (`tracelens split --capture_folder DIR --out DIR`), rebuilds
the merged tree when read back by time: its ops_summary (op names, kernel
times and counts) equals the stored piece's. The merge's copies all share
the graph launch's span, so the export gives them nested slices of it; a
reader that nested them by their stored times would chain them and credit
replayed kernels to launch calls. Run on every shared inference trace with
a capture folder.

Usage: test_merge_export.py BUILD_DIR   (exit 77 when ../shared/data is absent)
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
check = Checks()


def run(db, *args):
    p = subprocess.run([BIN, "--db", db] + list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return p.returncode, p.stdout, p.stderr


def ops_summary(db, what, out):
    rc, _, err = run(db, "report", what, "--inference", "--csv-dir", out)
    if not check(rc == 0, f"report {what}: rc {rc} {err.strip()[-200:]}"):
        return []
    with open(os.path.join(out, "ops_summary.csv"), newline="") as f:
        return [(r["name"], round(float(r["total_direct_kernel_time_sum"]), 6), r["Count"])
                for r in csv.DictReader(f)]


def main():
    root = os.path.join(DATA, "inference")
    if not os.path.isdir(root):
        print(f"skipped: no {root}")
        return 77
    with tempfile.TemporaryDirectory(prefix="tl_merge_export_") as tmp:
        for case in sorted(os.listdir(root)):
            d = os.path.join(root, case)
            cap = os.path.join(d, "capture_traces")
            traces = sorted(f for f in os.listdir(d) if f.endswith(".json.gz"))
            if not os.path.isdir(cap) or not traces:
                continue
            db, outdir = os.path.join(tmp, case + ".db"), os.path.join(tmp, case + ".pieces")
            rc, out, err = run(db, "split", os.path.join(d, traces[0]), "--capture_folder", cap, "--out", outdir)
            if not check(rc == 0, f"{case}: split rc {rc} {err.strip()[-200:]}"):
                continue
            pieces = [l.split("\t")[0] for l in out.splitlines() if l and not l.startswith("#")][1:]
            files = sorted(os.listdir(outdir))
            check(pieces and len(files) == len(pieces), f"{case}: {len(files)} files for pieces {pieces}")
            for tid, fn in zip(pieces, files):
                want = ops_summary(db, tid, os.path.join(tmp, case + tid))
                got = ops_summary(os.path.join(tmp, case + ".back.db"), os.path.join(outdir, fn),
                                  os.path.join(tmp, case + fn))
                check(want and got == want, f"{case}: {fn} reads back with ops_summary {got[:3]}, "
                                            f"the stored piece's {want[:3]}")
    return check.summary()


if __name__ == "__main__":
    sys.exit(main())
