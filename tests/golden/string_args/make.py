#!/usr/bin/env python3
"""make.py — checks the claim tests/golden_string_args.py rests on: the
reference (TraceLens main 171dd747) writes, for every in-repo PyTorch golden
case and every mode of rewrite.py, CSVs byte-identical to the case's
reference_csvs/ when the tolerated args keys are strings or floats. Writes
nothing; exits 1 naming the first case and file that differ.

usage: make.py TRACELENS_CHECKOUT   (/usr/bin/python3: Debian pandas)
"""
import filecmp
import gzip
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
GOLDEN = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import rewrite  # noqa: E402

CASES = ("b200_eager_window", "hta_mi250_minitoy", "hta_negq_step551")
FLAGS = ["--enable_kernel_summary", "--short_kernel_study"]


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    env = dict(os.environ, PYTHONPATH=os.path.abspath(sys.argv[1]))
    bad = 0
    with tempfile.TemporaryDirectory(prefix="string_args_") as tmp:
        for case in CASES:
            want = os.path.join(GOLDEN, case, "reference_csvs")
            for mode in rewrite.MODES:
                with gzip.open(os.path.join(GOLDEN, case, case + ".json.gz")) as f:
                    doc = rewrite.rewrite(json.load(f), mode)
                trace = os.path.join(tmp, f"{case}.{mode}.json")
                with open(trace, "w") as f:
                    json.dump(doc, f)
                out = os.path.join(tmp, f"{case}.{mode}")
                subprocess.run(["/usr/bin/python3", "-m", "TraceLens.Reporting.generate_perf_report_pytorch",
                                "--profile_json_path", trace, "--output_csvs_dir", out] + FLAGS,
                               env=env, check=True, capture_output=True)
                cmp = filecmp.dircmp(want, out)
                differ = cmp.diff_files + cmp.left_only + cmp.right_only
                _, mismatch, errors = filecmp.cmpfiles(want, out, cmp.common_files, shallow=False)
                differ += mismatch + errors
                print(f"{case} {mode}: {'identical' if not differ else 'DIFFERS: ' + ', '.join(sorted(set(differ)))}")
                bad += bool(differ)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
