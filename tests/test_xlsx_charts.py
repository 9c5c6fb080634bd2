#!/usr/bin/env python3
"""test_xlsx_charts.py — every workbook kind carries native charts: the
rocprofv3 report (the in-repo MI300 slice), the multi-rank collective
report (a generated 4-rank corpus), the compare workbook (two in-repo
reference folders, one series per report), the three rocprofv3 Perfetto
reports (the reference's test inputs) and, with ../shared/data, the JAX
report. Per workbook: it opens with openpyxl; it has chart parts; every
series range names a sheet of the workbook and rows inside it; every
series and pie slice has its own colour (LibreOffice draws none without).

usage: test_xlsx_charts.py BUILD_DIR
"""
import os
import re
import subprocess
import sys
import tempfile
import zipfile

import openpyxl

HERE = os.path.dirname(os.path.abspath(__file__))
from tlcheck import Checks

check = Checks()


def check_workbook(path, what, want_titles):
    try:
        wb = openpyxl.load_workbook(path)
    except Exception as e:  # the workbook must open
        check(False, f"{what}: does not open: {e}")
        return
    sheets = {ws.title: ws.max_row for ws in wb.worksheets}
    with zipfile.ZipFile(path) as z:
        charts = [z.read(n).decode() for n in z.namelist() if n.startswith("xl/charts/chart")]
    check(len(charts) >= len(want_titles), f"{what}: {len(charts)} charts")
    text = "".join(charts)
    for t in want_titles:
        check(t in text, f"{what}: no chart titled '{t}'")
    for c in charts:
        for f in re.findall(r"<c:f>([^<]*)</c:f>", c):
            for sheet, row in re.findall(r"'([^']+)'!\$[A-Z]+\$(\d+)", f):
                check(sheet in sheets and int(row) <= sheets[sheet],
                      f"{what}: range {f} outside the workbook ({sheets.get(sheet)} rows)")
        for ser in c.split("<c:ser>")[1:]:
            check("<a:solidFill>" in ser.split("</c:ser>")[0], f"{what}: a series without a fill")
    print(f"{what}: {len(charts)} charts over {len(sheets)} sheets")


def main():
    build = os.path.abspath(sys.argv[1])
    with tempfile.TemporaryDirectory(prefix="tl_charts_") as tmp:
        env = dict(os.environ, TRACELENS_DB=os.path.join(tmp, "db"))
        roc = os.path.join(HERE, "golden", "rocprof_908_slice", "rocprof_908_slice.json.gz")
        out = os.path.join(tmp, "rocprof.xlsx")
        r = subprocess.run([os.path.join(build, "TraceLens_generate_perf_report_rocprof"), "--profile_json_path", roc,
                            "--output_xlsx_path", out], capture_output=True, text=True, env=env)
        check(r.returncode == 0, f"rocprof report: {r.stderr[-300:]}")
        check_workbook(out, "rocprof", ["GPU timeline (ms)", "GPU kernel time by category (ms)",
                                        "Top kernels by total time (ms)"])

        corpus = os.path.join(tmp, "corpus")
        subprocess.run([os.path.join(build, "tracegen"), "--size", "200K", "--ranks", "4", "-q", "-o", corpus],
                       check=True)
        out = os.path.join(tmp, "collective.xlsx")
        r = subprocess.run([os.path.join(build, "TraceLens_generate_multi_rank_collective_report_pytorch"),
                            "--trace_glob", os.path.join(corpus, "rank_*.json"), "--world_size", "4", "--output_xlsx_path", out],
                           capture_output=True, text=True, env=env)
        check(r.returncode == 0, f"collective report: {r.stderr[-300:]}")
        check_workbook(out, "collective", ["Collective wait per rank (µs)"])

        # compare: two in-repo reference report folders side by side
        g = os.path.join(HERE, "golden")
        out = os.path.join(tmp, "compare.xlsx")
        r = subprocess.run([os.path.join(build, "TraceLens_compare_perf_reports_pytorch"),
                            os.path.join(g, "b200_eager_window", "reference_csvs"),
                            os.path.join(g, "hta_mi250_minitoy", "reference_csvs"), "--names", "b200", "mi250",
                            "-o", out], capture_output=True, text=True, env=env)
        check(r.returncode == 0, f"compare: {r.stderr[-300:]}")
        check_workbook(out, "compare", ["GPU timeline per report (ms)", "Top ops per report: GPU kernel time (ms)"])
        with zipfile.ZipFile(out) as z:
            side = [z.read(n).decode() for n in z.namelist() if n.startswith("xl/charts/chart")]
        check(any(c.count("<c:ser>") == 2 and "<c:legend>" in c for c in side), "compare: two series with a legend")

        # the rocprofv3 Perfetto reports, on the reference's own test inputs
        pf = os.path.join(HERE, "golden", "pftrace", "inputs")
        for cmd, trace, titles in [
                ("hip_activity", "fixture_rich.json", ["GPU time by kernel category (ms)",
                                                       "Top kernels: share of GPU kernel time (%)",
                                                       "Top HIP API calls: share of API time (%)"]),
                ("hip_api", "hip_api_minimal.json", ["Kernel launches per HIP API call site"]),
                ("memory_copy", "memory_copy_events.json", ["Memory copies by size (bytes)"])]:
            out = os.path.join(tmp, f"pftrace_{cmd}.xlsx")
            r = subprocess.run([os.path.join(build, "TraceLens_generate_perf_report_pftrace_" + cmd), "--trace_path",
                                os.path.join(pf, trace), "--output_xlsx_path", out], capture_output=True, text=True,
                               env=env)
            check(r.returncode == 0, f"pftrace {cmd}: {r.stderr[-300:]}")
            check_workbook(out, f"pftrace {cmd}", titles)

        data = os.environ.get("TL_SHARED_DATA") or os.path.join(HERE, "..", "..", "shared", "data")
        jax = sorted(os.path.join(d, f) for d, _, fs in os.walk(os.path.join(data, "jax")) for f in fs
                     if f.endswith(".xplane.pb"))
        if jax:
            out = os.path.join(tmp, "jax.xlsx")
            r = subprocess.run([os.path.join(build, "TraceLens_generate_perf_report_jax"), "--profile_path", jax[0],
                                "--output_xlsx_path", out], capture_output=True, text=True, env=env)
            check(r.returncode == 0, f"JAX report: {r.stderr[-300:]}")
            check_workbook(out, "jax", ["GPU time: computation, exposed comm, exposed memcpy and idle",
                                        "GPU kernel time by category (ms)"])
        else:
            print("jax: skipped (no ../shared/data/jax)")
    return check.summary()


if __name__ == "__main__":
    sys.exit(main())
