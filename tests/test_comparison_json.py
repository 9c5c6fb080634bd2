#!/usr/bin/env python3
"""test_comparison_json.py — `--comparison_json_path` of the PyTorch report
(spec diff-compare-phases.md A10): the mi300 timesformer trace reported
against the h100 one. Checks that diff_stats is the sheet `tracelens diff`
writes for the same pair (byte for byte), that unified_perf_summary gains
exactly the seven LCA columns right after `Kernel Time (µs)_sum` and is
otherwise unchanged, and that the LCA columns agree with diff_stats (each
row's LCA ids, their first trace1/trace2 busy times, trace2 counts, speedup
and delta). Also: a stored id works as the comparison, a bad path fails.

Usage: test_comparison_json.py BUILD_DIR   (exit 77 when ../shared/data is absent)
Prints "N passed, M failed" last."""
import csv
import os
import subprocess
import sys
import shutil
import tempfile

from tlcheck import Checks

HERE = os.path.dirname(os.path.abspath(__file__))
BUILD = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("TL_BUILD", "build")
DATA = os.path.realpath(os.environ.get("TL_SHARED_DATA", os.path.join(HERE, "..", "..", "shared", "data")))
T1 = os.path.join(DATA, "kineto", "mi300", "facebook_timesformer-base-finetuned-k400__1016002.json.gz")
T2 = os.path.join(DATA, "kineto", "h100", "facebook_timesformer-base-finetuned-k400__1016002.json.gz")
TL = os.path.join(BUILD, "tracelens")
REF = os.path.join(BUILD, "TraceLens_generate_perf_report_pytorch")
KSUM = "Kernel Time (µs)_sum"
LCA_COLS = ["speedup (trace2/trace1)", "delta_us (trace2 - trace1)", "lca_count_trace2", "lca_id",
            "lca_name", "lca_total_kernel_time_trace1_us", "lca_total_kernel_time_trace2_us"]

check = Checks()




def run(cmd, db):
    env = dict(os.environ, TRACELENS_DB=db)
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    return p.returncode, p.stdout, p.stderr


def table(path):
    with open(path, newline="", encoding="utf-8") as f:
        r = csv.reader(f)
        head = next(r)
        return head, list(r)


def close(a, b):
    return abs(a - b) <= 1e-9 * max(1.0, abs(a), abs(b))


def main():
    if not (os.path.exists(T1) and os.path.exists(T2)):
        print("shared data absent: skipped")
        return 77
    tmp = tempfile.mkdtemp(prefix="tl_cmpjson.")
    db = os.path.join(tmp, "db")
    plain, cmp_dir, diff_dir, ids_dir = (os.path.join(tmp, d) for d in ("plain", "cmp", "diff", "ids"))

    rc, _, err = run([REF, "--profile_json_path", T1, "--output_csvs_dir", plain], db)
    check(rc == 0, f"plain report: rc {rc} {err[-300:]}")
    rc, _, err = run([REF, "--profile_json_path", T1, "--comparison_json_path", T2,
                      "--output_csvs_dir", cmp_dir], db)
    check(rc == 0, f"report with --comparison_json_path: rc {rc} {err[-300:]}")
    rc, _, err = run([TL, "diff", T1, T2, "--out", diff_dir], db)
    check(rc == 0, f"tracelens diff: rc {rc} {err[-300:]}")
    if check.failed:
        print(f"{check.passed} passed, {check.failed} failed")
        return 1

    # diff_stats: the sheet is the file tracelens diff writes
    ds_path = os.path.join(cmp_dir, "diff_stats.csv")
    check(os.path.exists(ds_path), "diff_stats.csv written")
    with open(ds_path, "rb") as a, open(os.path.join(diff_dir, "diff_stats.csv"), "rb") as b:
        check(a.read() == b.read(), "diff_stats.csv equals tracelens diff's")
    # other sheets unchanged
    for f in sorted(os.listdir(plain)):
        if f == "unified_perf_summary.csv":
            continue
        with open(os.path.join(plain, f), "rb") as a, open(os.path.join(cmp_dir, f), "rb") as b:
            check(a.read() == b.read(), f"{f} unchanged by the comparison")
    check(sorted(os.listdir(cmp_dir)) == sorted(os.listdir(plain) + ["diff_stats.csv"]),
          "sheets: the plain report's plus diff_stats")

    # unified_perf_summary: seven columns after Kernel Time (µs)_sum, the rest unchanged
    ph, prows = table(os.path.join(plain, "unified_perf_summary.csv"))
    ch, crows = table(os.path.join(cmp_dir, "unified_perf_summary.csv"))
    k = ph.index(KSUM)
    check(ch == ph[:k + 1] + LCA_COLS + ph[k + 1:], "LCA columns inserted right after Kernel Time (µs)_sum")
    keep = [ch.index(c) for c in ph]
    check(len(crows) == len(prows) and all([r[i] for i in keep] == p for r, p in zip(crows, prows)),
          "unified_perf_summary otherwise unchanged")

    # LCA columns against diff_stats: per LCA id, first busy_time per side
    dh, drows = table(ds_path)
    ci = {c: dh.index(c) for c in ("source", "busy_time", "lowest_common_ancestor_id",
                                   "lowest_common_ancestor_name")}
    first = {}
    for r in drows:
        lid = r[ci["lowest_common_ancestor_id"]]
        if lid == "":
            continue
        e = first.setdefault(lid, {"name": r[ci["lowest_common_ancestor_name"]]})
        e.setdefault(r[ci["source"]], float(r[ci["busy_time"]]))
    col = {c: ch.index(c) for c in LCA_COLS + [KSUM]}
    mapped = bad = 0
    for r in crows:
        ids = r[col["lca_id"]]
        if ids == "":
            if any(r[col[c]] != "" for c in LCA_COLS):
                bad += 1
            continue
        mapped += 1
        ids = ids.split("; ")
        names = r[col["lca_name"]].split("; ")
        if len(set(ids)) != len(ids) or any(i not in first or "trace1" not in first[i] for i in ids):
            bad += 1
            continue
        t1 = sum(first[i]["trace1"] for i in ids)
        t2 = sum(first[i].get("trace2", 0.0) for i in ids)
        n2 = sum(1 for i in ids if "trace2" in first[i])
        ok = names == [first[i]["name"] for i in ids]
        ok = ok and close(float(r[col["lca_total_kernel_time_trace1_us"]]), t1)
        ok = ok and close(float(r[col["lca_total_kernel_time_trace2_us"]]), t2)
        ok = ok and int(r[col["lca_count_trace2"]]) == n2
        ok = ok and close(float(r[col["delta_us (trace2 - trace1)"]]), t2 - float(r[col[KSUM]]))
        sp = r[col["speedup (trace2/trace1)"]]
        ok = ok and (sp == "" if t1 == 0 else close(float(sp), t2 / t1))
        if not ok:
            bad += 1
    check(mapped > 0 and mapped * 2 >= len(crows), f"most rows mapped to an LCA ({mapped} of {len(crows)})")
    check(bad == 0, f"LCA columns agree with diff_stats ({bad} rows differ)")

    # stored ids work as well (tracelens report ID --comparison_json_path ID2)
    rc, out, _ = run([TL, "ls"], db)
    by_path = {ln.split("\t")[5]: ln.split("\t")[0] for ln in out.splitlines() if ln.count("\t") >= 5}
    check(rc == 0 and T1 in by_path and T2 in by_path, "both traces stored")
    if T1 in by_path and T2 in by_path:
        rc, _, err = run([TL, "report", by_path[T1], "--comparison_json_path", by_path[T2],
                          "--csv-dir", ids_dir], db)
        check(rc == 0, f"tracelens report ID --comparison_json_path ID2: rc {rc} {err[-300:]}")
        if rc == 0:
            with open(ds_path, "rb") as a, open(os.path.join(ids_dir, "diff_stats.csv"), "rb") as b:
                check(a.read() == b.read(), "by stored ids: same diff_stats")
            with open(os.path.join(cmp_dir, "unified_perf_summary.csv"), "rb") as a, \
                    open(os.path.join(ids_dir, "unified_perf_summary.csv"), "rb") as b:
                check(a.read() == b.read(), "by stored ids: same unified_perf_summary")

    # a comparison that cannot be opened fails before anything is written
    bad_dir = os.path.join(tmp, "bad")
    rc, _, _ = run([REF, "--profile_json_path", T1, "--comparison_json_path",
                    os.path.join(tmp, "no_such_trace.json"), "--output_csvs_dir", bad_dir], db)
    check(rc != 0 and not os.path.exists(bad_dir), f"missing comparison trace: rc {rc}, nothing written")
    rc, out, _ = run([REF, "--help"], db)
    check("--comparison_json_path" in out and "Not supported: --enable_pseudo_ops, --enable-origami" in out,
          "--help documents --comparison_json_path")

    shutil.rmtree(tmp, ignore_errors=True)
    print(f"{check.passed} passed, {check.failed} failed")
    return 0 if check.failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
