#!/usr/bin/env python3
"""golden_overlap.py — the per-family _kl_overlap sheets of
`--include_overlap_info` (GEMM_kl_overlap, Reduce_fwd_kl_overlap,
Binary-/UnaryElementwise_kl_overlap, ...) against the reference's own.

For each in-repo case of tests/golden with a reference_kl_overlap/ folder
(made by tests/golden/make.py: the reference's PyTorch report with
--include_overlap_info on the cut trace), runs
TraceLens_generate_perf_report_pytorch --include_overlap_info and compares
every sheet there by the reference's rules (golden_pytorch.py: pandas NA
cells skipped, floats abs 1e-6, Python literals parsed, np.float64
wrappers removed, rows by position). A sheet we do not write fails.

usage: golden_overlap.py BUILD_DIR [-v]
Prints one line per case and "N passed, M failed"; exit 0 when all passed.
"""
import os
import sys
import tempfile

import golden_pytorch

HERE = os.path.dirname(os.path.abspath(__file__))
GOLDEN = os.path.join(HERE, "golden")


def main():
    args = [a for a in sys.argv[1:] if a != "-v"]
    verbose = "-v" in sys.argv[1:]
    if not args:
        print(__doc__)
        return 2
    build = os.path.abspath(args[0])
    passed = failed = 0
    with tempfile.TemporaryDirectory(prefix="tl_overlap_") as tmp:
        os.environ["TRACELENS_DB"] = os.path.join(tmp, "db")
        for case in sorted(os.listdir(GOLDEN)):
            ref = os.path.join(GOLDEN, case, "reference_kl_overlap")
            trace = os.path.join(GOLDEN, case, case + ".json.gz")
            if not os.path.isdir(ref) or not os.path.isfile(trace):
                continue
            out = os.path.join(tmp, case)
            os.makedirs(out)
            cells, bad, problems, _, dt = golden_pytorch.run_folder(build, ref, trace, ["--include_overlap_info"], out,
                                                                    verbose)
            sheets = ", ".join(sorted(f[:-4] for f in os.listdir(ref)))
            print("%-5s %s: %s; %d cells compared, %d mismatches (%.2f s)" %
                  ("ok" if bad == 0 else "FAIL", case, sheets, cells, bad, dt))
            for p in problems[: (1000 if verbose else 8)]:
                print("      " + p)
            if bad or not cells:
                failed += 1
            else:
                passed += 1
    print("%d passed, %d failed" % (passed, failed))
    return 0 if failed == 0 and passed else 1


if __name__ == "__main__":
    sys.exit(main())
