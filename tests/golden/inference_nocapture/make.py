#!/usr/bin/env python3
"""make.py — the reference's inference report on the shared traces that come
with a graph-capture folder, made without that folder, packed into
reference_csvs.tar.xz (one folder of CSVs per trace).

The inference report without --capture_folder warns that hipGraph launches
are left unanalysed and reports the replayed kernels without their ops;
tests/golden_public.py checks ours on the same path. Flags: those of the
reference's tests/test_inference_perf_report.py (golden_public.INFERENCE_FLAGS).

usage: make.py TRACELENS_CHECKOUT SHARED_DATA
  (a checkout of TraceLens 171dd747: git --git-dir=<mirror> archive 171dd747
   TraceLens | tar x -C DIR; Debian python3-pandas, python3-openpyxl)
"""
import glob
import os
import subprocess
import sys
import tarfile
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", ".."))
import golden_public  # noqa: E402


def traces(data):
    out = {}
    for case in sorted(os.listdir(os.path.join(data, "public"))):
        d = os.path.join(data, "public", case)
        if os.path.isdir(os.path.join(d, "capture_traces")):
            out[case] = os.path.join(d, case + ".json.gz")
    for case in sorted(os.listdir(os.path.join(data, "inference"))):
        d = os.path.join(data, "inference", case)
        if os.path.isdir(os.path.join(d, "capture_traces")):
            out[case] = sorted(glob.glob(os.path.join(d, "*.json.gz")))[0]
    return out


def main():
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    ref, data = sys.argv[1], sys.argv[2]
    env = dict(os.environ, PYTHONPATH=ref)
    with tempfile.TemporaryDirectory() as tmp:
        for case, trace in traces(data).items():
            out = os.path.join(tmp, case)
            subprocess.run(["/usr/bin/python3", "-m", "TraceLens.Reporting.generate_perf_report_pytorch_inference",
                            "--profile_json_path", trace, "--output_csvs_dir", out] + golden_public.INFERENCE_FLAGS,
                           env=env, check=True)
        with tarfile.open(os.path.join(HERE, "reference_csvs.tar.xz"), "w:xz") as t:
            for case in sorted(os.listdir(tmp)):
                t.add(os.path.join(tmp, case), arcname=case)
    return 0


if __name__ == "__main__":
    sys.exit(main())
