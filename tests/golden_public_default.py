#!/usr/bin/env python3
"""golden_public_default.py — the PyTorch report with default flags on the
public traces (../shared/data/public), against the reference's default-flag
output.

tests/golden/public_default/manifest.json (made by make.py there, which runs
the reference) lists per case the CSVs the reference writes with default
flags and the SHA-256 of each. A CSV equal to the flagged run's file in
../shared/data/public/<case>/reference_csvs is read from there (the hash
proves it is the same file); one that differs would sit in
tests/golden/public_default/<case>/. Ours runs with default flags (plus the
case's flags of golden_public.py: --reference_linking for HTA's old trace)
and is compared by the reference's rules (golden_pytorch.compare_sheet:
pandas NA cells skipped, floats abs 1e-6, rows by position). Every sheet the
flagged run writes and the default run does not (kernel_summary and the
short-kernel sheets) must be absent from ours.

usage: golden_public_default.py BUILD_DIR [-v] [-k SUBSTRING]
Prints a line per case and the totals; exit 0 when every case matches, 77
(skipped) when ../shared/data/public is absent.
"""
import hashlib
import json
import os
import sys
import tempfile

import golden_pytorch
import golden_public

HERE = os.path.dirname(os.path.abspath(__file__))
GOLDEN = os.path.join(HERE, "golden", "public_default")


def sha256(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def expected_dir(case, sheets, tmp, problems):
    """A folder of links to the reference's default-flag CSVs of case, each
    checked against its manifest hash; None when one is missing or differs."""
    d = os.path.join(tmp, "expected_" + case)
    os.makedirs(d)
    for f, digest in sheets.items():
        src = os.path.join(GOLDEN, case, f)
        if not os.path.exists(src):
            src = os.path.join(golden_public.PUBLIC, case, "reference_csvs", f)
        if not os.path.exists(src) or sha256(src) != digest:
            problems.append(f"{f}: no reference file with the manifest's hash ({src})")
            return None
        os.symlink(src, os.path.join(d, f))
    return d


def run_case(build, case, entry, tmp, verbose):
    """(cells, mismatches, problems) of one case."""
    problems = []
    trace = os.path.join(golden_public.PUBLIC, case, case + ".json.gz")
    ref = expected_dir(case, entry["sheets"], tmp, problems)
    if ref is None:
        return 0, 1, problems
    out = os.path.join(tmp, "ours_" + case)
    os.makedirs(out)
    flags = golden_public.CASE_FLAGS.get(case + "/reference_csvs", [])
    cells, bad, problems, pend, _ = golden_pytorch.run_folder(build, ref, trace, flags, out, verbose)
    if pend:
        problems.append("pending sheets: " + ", ".join(pend))
        bad += 1
    flagged = os.path.join(golden_public.PUBLIC, case, "reference_csvs")
    ours = os.path.join(out, os.path.basename(ref))
    for f in sorted(os.listdir(flagged)) if os.path.isdir(flagged) else []:
        if f not in entry["sheets"] and os.path.exists(os.path.join(ours, f)):
            problems.append(f"{f}: written with default flags, the reference writes it only with flags")
            bad += 1
    return cells, bad, problems


def main():
    parsed = golden_pytorch.parse_args(sys.argv[1:], __doc__)
    if not parsed:
        return 2
    build, verbose, filt = parsed
    if not os.path.isdir(golden_public.PUBLIC):
        print(f"skipped: no public reference data at {golden_public.PUBLIC}")
        return 77
    with open(os.path.join(GOLDEN, "manifest.json")) as f:
        manifest = json.load(f)
    passed = failed = refused = total = 0
    with tempfile.TemporaryDirectory(prefix="tl_public_default_") as tmp:
        os.environ["TRACELENS_DB"] = os.path.join(tmp, "db")
        for case, entry in sorted(manifest.items()):
            if filt and filt not in case:
                continue
            if "refused" in entry:
                print(f"n/a   {case}: the reference refuses it ({entry['refused']})")
                refused += 1
                continue
            cells, bad, problems = run_case(build, case, entry, tmp, verbose)
            total += cells
            ok = bad == 0
            passed += ok
            failed += not ok
            print(f"{'ok' if ok else 'FAIL':5} {case}: {len(entry['sheets'])} sheets, {cells} cells compared, "
                  f"{bad} mismatches")
            if not ok or verbose:
                for p in problems[: (1000 if verbose else 8)]:
                    print("      " + p)
    print(f"{total} cells compared; {passed} passed, {failed} failed, {refused} refused by the reference")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
