#!/usr/bin/env python3
"""make.py — regenerates the multi-configuration golden set: a small
generated corpus (tracegen, several configurations of 1 to 4 ranks) and the
workbooks the reference's multi-configuration generator writes for it.

usage: /usr/bin/python3 tests/golden/multicfg/make.py TRACEGEN BRANCH_CHECKOUT

TRACEGEN is the built tools/tracegen (build/tracegen). BRANCH_CHECKOUT is a
checkout of AMD-AGI/TraceLens branch feat/gen_report_node_replay_bench
(commit f0bff094), whose examples/custom_workflows/generate_perf_report.py is
the generator, e.g.
    G=<mirror>; git --git-dir=$G ls-tree -r --name-only -z feat/gen_report_node_replay_bench \\
      | grep -zv '^tests/traces' | xargs -0 git --git-dir=$G archive feat/gen_report_node_replay_bench -- \\
      | tar x -C /tmp/ref-multicfg
(the branch's tests/traces hold objects the mirror lacks). Needs Debian's
python3-pandas and python3-openpyxl (pandas 1.5.3).

Writes, next to this file:
  traces/<config>/rank_<r>.json.gz   tracegen --ranks N --size S --seed K --gzip
                                     (cfgB: every 4th GPU event without its
                                     "External id", i.e. unlinked)
  reference/<config>/<sheet>.csv     every cell of the reference workbook's
                                     sheet, row by row as openpyxl reads it
                                     (a merged cell's value in its first cell;
                                     empty cells empty; floats as Python repr)
  reference/<config>/sheets.txt      the workbook's sheet names in order
The reference is run as `generate_perf_report.py -b <copy of traces> -e gz
-f rank_` (every rank of every configuration).
"""
import csv
import gzip
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
# (configuration, ranks, uncompressed bytes per rank, seed)
CONFIGS = [
    ("cfgA", 2, "256K", 1),
    ("cfgB", 4, "128K", 3),
    ("cfgC", 1, "512K", 7),
]
FILTER = "rank_"
# configuration -> n: every n-th GPU event (kernel, memcpy, memset) of each
# rank loses its "External id" arg, so that the workbook has unlinked events
# (tracegen links every one)
UNLINK_EVERY = {"cfgB": 4}
GPU_CATS = {"kernel", "gpu_memcpy", "gpu_memset"}


def text(v):
    if v is None:
        return ""
    if isinstance(v, bool):
        return "True" if v else "False"
    if isinstance(v, float):
        return repr(v)
    return str(v)


def workbook_to_csvs(xlsx, out):
    import openpyxl

    wb = openpyxl.load_workbook(xlsx)
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "sheets.txt"), "w") as f:
        f.write("".join(name + "\n" for name in wb.sheetnames))
    for ws in wb.worksheets:
        with open(os.path.join(out, ws.title + ".csv"), "w", newline="", encoding="utf-8") as f:
            w = csv.writer(f, lineterminator="\n")
            for row in ws.iter_rows(values_only=True):
                w.writerow([text(v) for v in row])


def unlink(path, every):
    """Drops "External id" from every n-th GPU event of a gzip trace, rewritten
    deterministically (no name, mtime 0)."""
    with gzip.open(path, "rt", encoding="utf-8") as f:
        doc = json.load(f)
    k = 0
    for e in doc["traceEvents"]:
        if e.get("cat") in GPU_CATS and "External id" in e.get("args", {}):
            if k % every == 0:
                del e["args"]["External id"]
            k += 1
    raw = json.dumps(doc, separators=(",", ":")).encode("utf-8")
    with open(path, "wb") as f, gzip.GzipFile(filename="", mode="wb", fileobj=f, mtime=0, compresslevel=9) as g:
        g.write(raw)


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    tracegen, checkout = sys.argv[1], os.path.abspath(sys.argv[2])
    traces = os.path.join(HERE, "traces")
    reference = os.path.join(HERE, "reference")
    shutil.rmtree(traces, ignore_errors=True)
    shutil.rmtree(reference, ignore_errors=True)
    for name, ranks, size, seed in CONFIGS:
        d = os.path.join(traces, name)
        subprocess.run([tracegen, "--ranks", str(ranks), "--size", size, "--seed", str(seed), "--gzip",
                        "--gzip-level", "9", "-q", "-o", d], check=True)
        os.remove(os.path.join(d, "truth.json"))
        if name in UNLINK_EVERY:
            for r in range(ranks):
                unlink(os.path.join(d, "rank_%d.json.gz" % r), UNLINK_EVERY[name])
    tmp = tempfile.mkdtemp(prefix="multicfg_ref_")
    try:
        base = os.path.join(tmp, "base")
        shutil.copytree(traces, base)
        workflows = os.path.join(checkout, "examples", "custom_workflows")
        env = dict(os.environ, PYTHONPATH=checkout + os.pathsep + workflows)
        subprocess.run([sys.executable, os.path.join(workflows, "generate_perf_report.py"), "-b", base, "-e", "gz",
                        "-f", FILTER], env=env, cwd=workflows, check=True, stdout=subprocess.DEVNULL)
        for name, _, _, _ in CONFIGS:
            xlsx = os.path.join(base, name, "%s_%s_performance_report.xlsx" % (name, FILTER))
            workbook_to_csvs(xlsx, os.path.join(reference, name))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
