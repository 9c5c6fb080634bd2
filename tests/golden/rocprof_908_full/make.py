#!/usr/bin/env python3
"""make.py — SHA-256 of the reference's rocprofv3 report CSVs on the whole
908_results.json.gz sample (../shared/data/rocprof; TraceLens
tests/rocprof), for tests/golden_rocprof_exact.py. The CSVs themselves are
too large for the repository (kernel_details lists all 43,915 dispatches);
their hashes let the test demand byte-identical output from
`--reference-units`.

Runs TraceLens.Reporting.generate_perf_report_rocprof (main 171dd747) with
each flag set of FLAG_SETS and writes manifest.json: flag set -> CSV name ->
SHA-256.

usage: make.py TRACELENS_CHECKOUT [DATA_DIR]   (/usr/bin/python3: Debian pandas)
"""
import hashlib
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
FLAG_SETS = {"default": [], "kernel_details": ["--kernel_details", "--short_kernel_study"]}


def main():
    if len(sys.argv) not in (2, 3):
        print(__doc__)
        return 2
    data = sys.argv[2] if len(sys.argv) == 3 else os.path.join(HERE, "..", "..", "..", "..", "shared", "data")
    trace = os.path.join(os.path.abspath(data), "rocprof", "908_results.json.gz")
    env = dict(os.environ, PYTHONPATH=os.path.abspath(sys.argv[1]))
    manifest = {}
    with tempfile.TemporaryDirectory(prefix="rocprof_full_") as tmp:
        for name, flags in FLAG_SETS.items():
            out = os.path.join(tmp, name)
            subprocess.run(["/usr/bin/python3", "-m", "TraceLens.Reporting.generate_perf_report_rocprof",
                            "--profile_json_path", trace, "--output_csvs_dir", out] + flags,
                           env=env, check=True, capture_output=True)
            manifest[name] = {"flags": flags, "sheets": {}}
            for f in sorted(os.listdir(out)):
                with open(os.path.join(out, f), "rb") as fh:
                    manifest[name]["sheets"][f] = hashlib.sha256(fh.read()).hexdigest()
            print(f"{name}: {len(manifest[name]['sheets'])} CSVs")
    with open(os.path.join(HERE, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1, sort_keys=True)
        f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
