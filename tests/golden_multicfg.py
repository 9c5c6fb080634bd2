#!/usr/bin/env python3
"""golden_multicfg.py — the multi-configuration generator
(TraceLens_generate_multi_config_perf_report) against the reference's own
generator (branch feat/gen_report_node_replay_bench) on the generated corpus
in tests/golden/multicfg (see its make.py): three configurations of 2, 4 and
1 ranks, every rank of each (-f rank_, -e gz).

For each configuration: the workbook's sheets in the reference's order (ours
may add imbalance_* sheets at the end), then every reference sheet against
our CSV of it (--csv) by the reference's rules of golden_pytorch.py (pandas
NA cells skipped, floats abs 1e-6, rows by position, columns by name); a
sheet whose header row repeats a name (cuda_events_summary's two-level
header) is compared cell by cell by position, with the same float rule.
Then the command-line behaviour the generator shares with the reference: a
dry run lists every configuration and exits 0 without writing; an existing
workbook is left as it is.

usage: golden_multicfg.py BUILD_DIR [-v]
"""
import html
import os
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile

import golden_pytorch

HERE = os.path.dirname(os.path.abspath(__file__))
GOLDEN = os.path.join(HERE, "golden", "multicfg")
EXE = "TraceLens_generate_multi_config_perf_report"
FILTER = "rank_"
PASS = FAIL = 0


def check(ok, what):
    global PASS, FAIL
    if ok:
        PASS += 1
    else:
        FAIL += 1
        print("FAIL:", what)


def same_cell(rv, ov):
    if rv in golden_pytorch.NA_STRINGS:
        return True
    a, b = golden_pytorch.as_float(rv), golden_pytorch.as_float(ov)
    if a is not None and b is not None:
        return abs(a - b) < 1e-6 or a == b
    return rv == ov


def compare_by_position(sheet, ref, ours, problems):
    """Every reference cell against ours at the same row and column."""
    ref_rows, our_rows = [ref[0]] + ref[1], [ours[0]] + ours[1]
    cells = bad = 0
    if len(ref_rows) != len(our_rows):
        problems.append(f"{sheet}: {len(our_rows)} rows, reference has {len(ref_rows)}")
        bad += 1
    for ri, row in enumerate(ref_rows):
        for ci, rv in enumerate(row):
            cells += 1
            ov = our_rows[ri][ci] if ri < len(our_rows) and ci < len(our_rows[ri]) else None
            if ov is None or not same_cell(rv, ov):
                bad += 1
                problems.append(f"{sheet}[{ri}][{ci}]: reference {rv!r}, ours {ov!r}")
    return cells, bad


def sheet_names(xlsx):
    xml = zipfile.ZipFile(xlsx).read("xl/workbook.xml").decode()
    return [html.unescape(n) for n in re.findall(r'<sheet name="([^"]+)"', xml)]


def compare_config(name, base, csv_root, verbose):
    ref_dir = os.path.join(GOLDEN, "reference", name)
    want = open(os.path.join(ref_dir, "sheets.txt")).read().split()
    xlsx = os.path.join(base, name, "%s_%s_performance_report.xlsx" % (name, FILTER))
    if not os.path.exists(xlsx):
        check(False, f"{name}: no workbook {xlsx}")
        return 0
    have = sheet_names(xlsx)
    extra = have[len(want):]
    check(have[:len(want)] == want and all(s.startswith("imbalance_") for s in extra),
          f"{name}: sheet order {have}, reference {want}")
    cells = 0
    problems = []
    for sheet in want:
        ref = golden_pytorch.read_csv(os.path.join(ref_dir, sheet + ".csv"))
        path = os.path.join(csv_root, name, sheet + ".csv")
        ours = golden_pytorch.read_csv(path) if os.path.exists(path) else None
        if ref is None:
            check(ours is None, f"{name}/{sheet}: the reference's sheet is empty, ours is not")
            continue
        if ours is None:
            check(False, f"{name}/{sheet}: sheet missing or empty")
            continue
        if len(set(ref[0])) < len(ref[0]):
            c, b = compare_by_position(sheet, ref, ours, problems)
        else:
            c, b = golden_pytorch.compare_sheet(sheet, ref, ours, set(), problems)
        cells += c
        check(b == 0, f"{name}/{sheet}: {b} mismatched of {c} cells")
    for p in problems[: None if verbose else 20]:
        print("  " + name + "/" + p)
    return cells


def run(cmd):
    return subprocess.run(cmd, capture_output=True, text=True)


def main():
    args = [a for a in sys.argv[1:] if a != "-v"]
    verbose = "-v" in sys.argv[1:]
    if len(args) != 1:
        sys.exit(__doc__)
    exe = os.path.join(args[0], EXE)
    configs = sorted(os.listdir(os.path.join(GOLDEN, "reference")))
    tmp = tempfile.mkdtemp(prefix="tl_golden_multicfg_")
    try:
        base = os.path.join(tmp, "base")
        shutil.copytree(os.path.join(GOLDEN, "traces"), base)
        db = os.path.join(tmp, "db")
        # dry run: every configuration listed, nothing written, exit 0
        p = run([exe, "--db", db, "-b", base, "-e", "gz", "-f", FILTER, "-d"])
        check(p.returncode == 0, f"dry run exit status {p.returncode}: {p.stderr[-500:]}")
        check(p.stdout.count("End of dry run") == len(configs), "dry run: 'End of dry run' per configuration")
        check(not any(f.endswith(".xlsx") for _, _, fs in os.walk(base) for f in fs), "dry run writes nothing")
        csv_root = os.path.join(tmp, "csv")
        p = run([exe, "--db", db, "-b", base, "-e", "gz", "-f", FILTER, "--csv", csv_root, "-q"])
        check(p.returncode == 0, f"exit status {p.returncode}: {p.stderr[-2000:]}")
        cells = 0
        for name in configs:
            cells += compare_config(name, base, csv_root, verbose)
        # a second run finds every workbook: reported, not overwritten, exit 0
        stamp = {n: os.path.getmtime(os.path.join(base, n, "%s_%s_performance_report.xlsx" % (n, FILTER)))
                 for n in configs if os.path.exists(os.path.join(base, n, "%s_%s_performance_report.xlsx" % (n, FILTER)))}
        p = run([exe, "--db", db, "-b", base, "-e", "gz", "-f", FILTER, "-q"])
        check(p.returncode == 0 and p.stdout.count("Excel file already exists") == len(configs),
              "existing workbooks reported, exit 0")
        check(all(os.path.getmtime(os.path.join(base, n, "%s_%s_performance_report.xlsx" % (n, FILTER))) == t
                  for n, t in stamp.items()), "existing workbooks left as they are")
        print(f"{cells} cells compared")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"{PASS} passed, {FAIL} failed")
    return 1 if FAIL else 0


if __name__ == "__main__":
    sys.exit(main())
