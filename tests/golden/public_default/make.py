#!/usr/bin/env python3
"""make.py — the reference's PyTorch report with default flags on the public
traces (../shared/data/public), for tests/golden_public_default.py.

../shared/data/public/<case>/reference_csvs holds the reference's report made
with --enable_kernel_summary --short_kernel_study. This runs the reference
(TraceLens main 171dd747) on every case with default flags and writes
manifest.json: per case, the CSVs the default run writes with the SHA-256 of
each; a CSV that differs from the flagged run's file of the same name is
copied here as <case>/<sheet>.csv (today none differs: the default run
writes the flagged run's files minus kernel_summary, short_kernels_summary
and short_kernel_histogram, byte for byte). A case the reference refuses is
recorded with the last line of its error.

usage: make.py TRACELENS_CHECKOUT [DATA_DIR]
(Debian python3-pandas and python3-openpyxl; /usr/bin/python3)
"""
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
# --reference_linking is ours only; the reference needs no flag for it
CASES = ["b200_eager", "hta_amd_mi250_minitoy", "hta_filter_rank0", "hta_filter_rank1", "hta_negq_rank0",
         "hta_ns_resolution_rank0", "hta_tracediff_control", "hta_tracediff_test", "xdit_flux_aiter_sage",
         "xdit_sd35"]


def sha256(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def main():
    if len(sys.argv) not in (2, 3):
        print(__doc__)
        return 2
    checkout = os.path.abspath(sys.argv[1])
    data = sys.argv[2] if len(sys.argv) == 3 else os.path.join(HERE, "..", "..", "..", "..", "shared", "data")
    public = os.path.join(os.path.abspath(data), "public")
    env = dict(os.environ, PYTHONPATH=checkout)
    manifest = {}
    with tempfile.TemporaryDirectory(prefix="public_default_") as tmp:
        for case in CASES:
            out = os.path.join(tmp, case)
            p = subprocess.run(["/usr/bin/python3", "-m", "TraceLens.Reporting.generate_perf_report_pytorch",
                                "--profile_json_path", os.path.join(public, case, case + ".json.gz"),
                                "--output_csvs_dir", out], env=env, capture_output=True, text=True)
            if p.returncode != 0:
                manifest[case] = {"refused": p.stderr.strip().splitlines()[-1]}
                print(f"{case}: refused ({manifest[case]['refused']})")
                continue
            flagged = os.path.join(public, case, "reference_csvs")
            sheets, own = {}, []
            for f in sorted(os.listdir(out)):
                sheets[f] = sha256(os.path.join(out, f))
                fl = os.path.join(flagged, f)
                if not os.path.exists(fl) or sha256(fl) != sheets[f]:
                    os.makedirs(os.path.join(HERE, case), exist_ok=True)
                    shutil.copy(os.path.join(out, f), os.path.join(HERE, case, f))
                    own.append(f)
            manifest[case] = {"sheets": sheets}
            print(f"{case}: {len(sheets)} CSVs, {len(own)} differ from the flagged run's")
    with open(os.path.join(HERE, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1, sort_keys=True)
        f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
