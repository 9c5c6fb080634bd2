#!/usr/bin/env python3
"""golden_compare.py — report-comparison conformance:
`TraceLens_compare_perf_reports_pytorch h100_perf_report_csvs
mi300_perf_report_csvs --names h100 mi300` must reproduce the reference
folder ../shared/data/compare/compare_h100_mi300_qwen_csvs under the
reference tool's own comparison rules (spec pytorch-report.md §1):

  - every reference CSV is checked; an empty reference file (a lone "\\n")
    is not compared cell by cell, but ours must be empty too (stricter);
  - columns: those of the reference (a missing one is a failure; extra
    output columns are ignored); rows matched by position, counts equal;
  - an empty reference cell is not checked;
  - numbers: absolute difference < 1e-6;
  - other cells: np.float64(...)/np.int64(...) wrappers removed, then parsed
    as a Python literal (lists whose items are all dicts sorted by the text
    of their sorted items); unparsable text compared as a raw string.

A second, in-repo case (tests/golden/compare_mi250_workbook, made by
tests/golden/make.py) compares the reference's own workbook of
hta_mi250_minitoy, whose perf sheets hold the text "None" (a parameter the
model lacks, e.g. `param: stride_output`), with that trace's reference CSV
folder, and must reproduce the reference's output there: every sheet byte
for byte, except gpu_timeline and kernel_summary, whose rows all tie on the
sort key (diffs 0): the reference ran there on NumPy 1.24, whose introsort
orders ties unlike the NumPy 2 network this comparison replays, so their
rows are compared as a multiset.

Usage: golden_compare.py [--build DIR] [--data DIR]
Prints sheets and cells compared and `N passed, M failed` (one test per
sheet); exit 0 all passed, 1 a mismatch.
Python 3 standard library only."""
import argparse
import ast
import csv
import math
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
NP_WRAP = re.compile(r"np\.(?:float64|int64|float32|int32|bool_)\(([^()]*)\)")


def as_float(s):
    try:
        return float(s)
    except ValueError:
        return None


def parse_literal(s):
    t = NP_WRAP.sub(r"\1", s)
    try:
        v = ast.literal_eval(t)
    except Exception:
        return ("raw", s)
    if isinstance(v, list) and v and all(isinstance(x, dict) for x in v):
        v = sorted(v, key=lambda d: str(sorted(d.items())))
    return ("lit", v)


def cell_equal(ours, ref):
    a, b = as_float(ours), as_float(ref)
    if b is not None:
        if a is None:
            return False
        if math.isnan(b):
            return True
        return abs(a - b) < 1e-6 or (math.isinf(a) and a == b)
    return parse_literal(ours) == parse_literal(ref)


def read_csv(path):
    with open(path, newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    if not rows or rows == [[]]:
        return None, []
    return rows[0], rows[1:]


def workbook_case(exe, tmp):
    """The in-repo workbook-vs-folder case: (passed, failed)."""
    golden = os.path.join(HERE, "golden")
    case = os.path.join(golden, "compare_mi250_workbook")
    ref_dir = os.path.join(case, "reference_compare")
    out = os.path.join(tmp, "workbook_csvs")
    cmd = [exe, os.path.join(case, "reference_report.xlsx"), os.path.join(golden, "hta_mi250_minitoy", "reference_csvs"),
           "--names", "xlsx", "csv", "-o", os.path.join(tmp, "workbook.xlsx"), "--output_csvs_dir", out]
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if r.returncode != 0:
        print("FAIL workbook: %s failed (%d):\n%s" % (" ".join(cmd), r.returncode, r.stderr.decode(errors="replace")))
        return 0, 1
    passed = failed = 0
    for name in sorted(os.listdir(ref_dir)):
        with open(os.path.join(ref_dir, name), "rb") as f:
            want = f.read()
        path = os.path.join(out, name)
        got = open(path, "rb").read() if os.path.exists(path) else None
        if name in ("gpu_timeline.csv", "kernel_summary.csv") and got is not None:
            gl, wl = got.split(b"\n"), want.split(b"\n")
            ok = gl[0] == wl[0] and sorted(gl[1:]) == sorted(wl[1:])
        else:
            ok = got == want
        if ok:
            print("ok   workbook/%s" % name)
            passed += 1
        else:
            print("FAIL workbook/%s: %s" % (name, "not written" if got is None else "differs"))
            failed += 1
    return passed, failed


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.environ.get("TL_BUILD", os.path.join(ROOT, "build")))
    ap.add_argument("--data", default=os.environ.get("TL_SHARED_DATA", os.path.join(ROOT, "..", "shared", "data")))
    args = ap.parse_args()
    base = os.path.join(args.data, "compare")
    ref_dir = os.path.join(base, "compare_h100_mi300_qwen_csvs")
    h100 = os.path.join(base, "h100_perf_report_csvs")
    mi300 = os.path.join(base, "mi300_perf_report_csvs")
    exe = os.path.join(args.build, "TraceLens_compare_perf_reports_pytorch")
    if not os.access(exe, os.X_OK):
        print("golden_compare: %s not built" % exe)
        return 1
    passed = failed = cells = mismatches = identical = 0
    with tempfile.TemporaryDirectory() as tmp:
        passed, failed = workbook_case(exe, tmp)
        if not all(os.path.isdir(p) for p in (ref_dir, h100, mi300)):
            print("shared case: skipped (no shared data at %s)" % args.data)
            print("%d passed, %d failed" % (passed, failed))
            return 0 if failed == 0 else 1
        inputs = [h100, mi300]
        out = os.path.join(tmp, "csvs")
        cmd = [exe] + inputs + ["--names", "h100", "mi300", "-o", os.path.join(tmp, "comparison.xlsx"), "--output_csvs_dir", out]
        r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        if r.returncode != 0:
            print("golden_compare: %s failed (%d):\n%s" % (" ".join(cmd), r.returncode, r.stderr.decode(errors="replace")))
            return 1
        sheets = sorted(f for f in os.listdir(ref_dir) if f.endswith(".csv"))
        for name in sheets:
            rh, rrows = read_csv(os.path.join(ref_dir, name))
            path = os.path.join(out, name)
            if not os.path.exists(path):
                print("FAIL %s: not written" % name)
                failed += 1
                continue
            oh, orows = read_csv(path)
            with open(path, "rb") as f1, open(os.path.join(ref_dir, name), "rb") as f2:
                identical += f1.read() == f2.read()
            if rh is None:
                if oh is None:
                    print("ok   %s (empty, as the reference)" % name)
                    passed += 1
                else:
                    print("FAIL %s: reference empty, ours has %d rows x %d columns" % (name, len(orows), len(oh)))
                    failed += 1
                continue
            if oh is None:
                print("FAIL %s: ours is empty" % name)
                failed += 1
                continue
            problems = []
            missing = [c for c in rh if c not in oh]
            if missing:
                problems.append("missing columns %s" % missing[:5])
            if len(orows) != len(rrows):
                problems.append("rows: ours %d, reference %d" % (len(orows), len(rrows)))
            ocol = {c: i for i, c in enumerate(oh)}
            bad = 0
            shown = 0
            for ri, (ro, rr) in enumerate(zip(orows, rrows)):
                for ci, c in enumerate(rh):
                    if c not in ocol or ci >= len(rr) or rr[ci] == "":
                        continue
                    cells += 1
                    ov = ro[ocol[c]] if ocol[c] < len(ro) else ""
                    if not cell_equal(ov, rr[ci]):
                        bad += 1
                        if shown < 3:
                            problems.append("row %d %r: ours %r, reference %r" % (ri, c, ov[:120], rr[ci][:120]))
                            shown += 1
            mismatches += bad
            if problems:
                print("FAIL %s: %d cell mismatches; %s" % (name, bad, "; ".join(problems)))
                failed += 1
            else:
                print("ok   %s (%d rows x %d columns)" % (name, len(rrows), len(rh)))
                passed += 1
    print("sheets compared: %d, cells compared: %d, mismatches: %d" % (passed + failed, cells, mismatches))
    print("byte-identical to the reference: %d of %d shared-case files (informational)" % (identical, len(sheets)))
    print("%d passed, %d failed" % (passed, failed))
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
