#!/usr/bin/env python3
"""golden_inrepo.py — conformance on the golden set kept in the repository
(tests/golden/), so that a fresh clone without ../shared checks real numbers.

Each tests/golden/<case>/ holds a small real trace cut by tests/golden/make.py
and reference_csvs/, the reference tool's own output on that trace. This runs
our reference-compatible command with the flags make.py gave the reference
and compares sheet by sheet with golden_pytorch.py's implementation of the
reference's rules (pandas NA cells skipped, floats within 1e-6 absolute,
other cells as Python literals, rows by position):
- PyTorch traces: TraceLens_generate_perf_report_pytorch
  --enable_kernel_summary --short_kernel_study;
- the rocprofv3 slice: TraceLens_generate_perf_report_rocprof --kernel_details
  --topk_kernels 50 --short_kernel_study --reference-units (the reference's
  units, which its CSVs carry).
Known conformance differences are listed below with their reason
(EXCLUDED_ROWS); a trace our command knowingly refuses
(KNOWN_REFUSALS) is reported as pending, neither passed nor failed.

usage: golden_inrepo.py BUILD_DIR [-v]
Prints per case the cells compared and mismatches, the total cells compared,
then "N passed, M failed" (one check per case). Python standard library only.
"""
import os
import subprocess
import sys
import tempfile

import golden_pytorch

HERE = os.path.dirname(os.path.abspath(__file__))
GOLDEN = os.path.join(HERE, "golden")
PYTORCH_FLAGS = ["--enable_kernel_summary", "--short_kernel_study"]
ROCPROF_CASE = "rocprof_908_slice"
ROCPROF_FLAGS = ["--kernel_details", "--topk_kernels", "50", "--short_kernel_study", "--reference-units"]

# Where our output differs from the reference for a known conformance reason
# (the same difference shows on the whole source trace), those reference rows
# and our rows are left out before the positional comparison, with the
# columns that carry those rows into the others (a running sum):
# (case, sheet, reference-row predicate, our-row predicate on the name cell,
#  columns, reason).
EXCLUDED_ROWS = [
]
# Traces our command refuses where the reference reads them: (case, message, reason).
# The case is reported as pending while the message shows; once the command
# accepts the trace, it is compared like any other.
KNOWN_REFUSALS = []


def drop_rows(table, pred):
    header, rows = table
    if "name" not in header:
        return table
    i = header.index("name")
    return header, [r for r in rows if not pred(r[i] if i < len(r) else "")]


def compare_text(sheet, ref, ours, problems):
    """A sheet whose header repeats a name (the reference's two-level header
    of an empty aggregate, e.g. short_kernels_summary with no group), which
    the by-name comparison cannot pair: every cell as text, by position."""
    ref_rows, our_rows = [ref[0]] + ref[1], [ours[0]] + ours[1]
    cells = sum(len(r) for r in ref_rows)
    if ref_rows == our_rows:
        return cells, 0
    problems.append(f"{sheet}: reference {ref_rows[:3]!r}, ours {our_rows[:3]!r}")
    return cells, 1


def compare_dir(case, ref_dir, out):
    """Every reference sheet against ours; returns (cells, mismatches, problems)."""
    cells = bad = 0
    problems = []
    for f in sorted(os.listdir(ref_dir)):
        sheet = f[:-4]
        ref = golden_pytorch.read_csv(os.path.join(ref_dir, f))
        if ref is None:
            continue
        ours_path = os.path.join(out, f)
        ours = golden_pytorch.read_csv(ours_path) if os.path.exists(ours_path) else None
        if ours is None:
            problems.append(f"{sheet}: sheet missing or empty")
            bad += 1
            continue
        if len(set(ref[0])) < len(ref[0]):
            c, b = compare_text(sheet, ref, ours, problems)
            cells += c
            bad += b
            continue
        ignored = set(golden_pytorch.ALWAYS_IGNORED)
        for c, s, ref_pred, our_pred, columns, _ in EXCLUDED_ROWS:
            if c == case and s == sheet:
                ref, ours = drop_rows(ref, ref_pred), drop_rows(ours, our_pred)
                ignored |= columns
        c, b = golden_pytorch.compare_sheet(sheet, ref, ours, ignored, problems)
        cells += c
        bad += b
    return cells, bad, problems


def run_case(build, case, tmp):
    """Runs our command on the case's trace; (cells, mismatches, problems, pending)."""
    case_dir = os.path.join(GOLDEN, case)
    out = os.path.join(tmp, case)
    if case == ROCPROF_CASE:
        exe, flags = "TraceLens_generate_perf_report_rocprof", ROCPROF_FLAGS + ["--db", os.path.join(tmp, "rocprof_db")]
    else:
        exe, flags = "TraceLens_generate_perf_report_pytorch", PYTORCH_FLAGS
    cmd = [os.path.join(build, exe), "--profile_json_path", os.path.join(case_dir, case + ".json.gz"),
           "--output_csvs_dir", out] + flags
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        for c, message, reason in KNOWN_REFUSALS:
            if c == case and message in p.stderr:
                return 0, 0, [], reason
        return 0, 1, [f"command failed ({p.returncode}): {' '.join(cmd)}\n{p.stderr[-2000:]}"], None
    return compare_dir(case, os.path.join(case_dir, "reference_csvs"), out) + (None,)


def main():
    args = sys.argv[1:]
    verbose = "-v" in args
    args = [a for a in args if a != "-v"]
    if len(args) != 1:
        print(__doc__)
        return 2
    build = os.path.abspath(args[0])
    passed = failed = total = 0
    with tempfile.TemporaryDirectory(prefix="tl_golden_inrepo_") as tmp:
        os.environ["TRACELENS_DB"] = os.path.join(tmp, "db")
        for case in sorted(os.listdir(GOLDEN)):
            if not os.path.isdir(os.path.join(GOLDEN, case, "reference_csvs")):
                continue
            cells, bad, problems, pending = run_case(build, case, tmp)
            if pending:
                print(f"pend {case}: not compared: our command refuses the trace ({pending})")
                continue
            total += cells
            print(f"{'ok' if bad == 0 else 'FAIL':4} {case}: {cells} cells compared, {bad} mismatches")
            for p in problems[: (1000 if verbose else 8)]:
                print("     " + p)
            if len(problems) > 8 and not verbose:
                print(f"     ... {len(problems) - 8} more (-v shows all)")
            if bad == 0:
                passed += 1
            else:
                failed += 1
    print(f"golden_inrepo: {total} cells compared")
    print(f"{passed} passed, {failed} failed")
    return 0 if failed == 0 and passed else 1


if __name__ == "__main__":
    sys.exit(main())
