#!/usr/bin/env python3
"""test_inference.py — inference traces on the shared vLLM/SGLang samples:
graph-replay attribution with capture traces (no graph-launch row keeps more
than a few percent of GPU time, total GPU time unchanged, real ops appear),
and `tracelens split` (per-step and steady-state windows stored with labels).

Usage: test_inference.py BUILD_DIR   (exit 77 when ../shared/data is absent)
Prints "N passed, M failed" last."""
import csv
import json
import os
import subprocess
import sys
import tempfile

from tlcheck import Checks

HERE = os.path.dirname(os.path.abspath(__file__))
BUILD = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("TL_BUILD", "build")
DATA = os.environ.get("TL_SHARED_DATA", os.path.join(HERE, "..", "..", "shared", "data"))
INF = os.path.join(DATA, "inference")
BIN = os.path.join(BUILD, "tracelens")
GRAPH_LAUNCH_MAX_PCT = 5.0

check = Checks()




def run(*args):
    p = subprocess.run([BIN, "--db", DB] + list(args), stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True)
    return p.returncode, p.stdout, p.stderr


def report(tid, out):
    rc, _, err = run("report", tid, "--output_csvs_dir", out)
    check(rc == 0, f"report {tid}: rc {rc} {err.strip()[-300:]}")
    return out


def rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def gpu_total(csvdir):
    for r in rows(os.path.join(csvdir, "gpu_timeline.csv")):
        if r["type"] == "total_time":
            return float(r["time ms"])
    return None


def busy(csvdir):
    for r in rows(os.path.join(csvdir, "gpu_timeline.csv")):
        if r["type"] == "busy_time":
            return float(r["time ms"])
    return None


def graph_case(name, replay):
    d = os.path.join(INF, name)
    rc, out, err = run("split", os.path.join(d, replay), "--capture_folder",
                       os.path.join(d, "capture_traces"), "--merge-only")
    check(rc == 0, f"{name}: merge rc {rc} {err.strip()[-300:]}")
    if rc:
        return
    lines = [l for l in out.splitlines() if not l.startswith("#")]
    merged = lines[-1].split("\t")[0]
    launches = [l for l in out.splitlines() if l.startswith("# ") and "Launch" in l]
    check(launches and all(l.rstrip().endswith("\tresolved") for l in launches),
          f"{name}: every graph launch resolved")
    rc, out0, _ = run("ingest", os.path.join(d, replay))
    orig = out0.split("\t")[0]
    a = report(orig, os.path.join(TMP, name + "-orig"))
    b = report(merged, os.path.join(TMP, name + "-merged"))
    ta, tb = gpu_total(a), gpu_total(b)
    check(ta is not None and ta == tb, f"{name}: total GPU time unchanged ({ta} vs {tb})")
    check(busy(a) == busy(b), f"{name}: busy time unchanged")
    ops = rows(os.path.join(b, "ops_summary.csv"))
    gl = [r for r in ops if r["name"] in ("hipGraphLaunch", "cudaGraphLaunch")]
    worst = max([float(r["Percentage (%)"]) for r in gl] or [0.0])
    check(worst <= GRAPH_LAUNCH_MAX_PCT, f"{name}: graph-launch row holds {worst}% of kernel time")
    before = [r for r in rows(os.path.join(a, "ops_summary.csv"))
              if r["name"] in ("hipGraphLaunch", "cudaGraphLaunch")]
    check(before and float(before[0]["Percentage (%)"]) > GRAPH_LAUNCH_MAX_PCT,
          f"{name}: without captures the graph launch dominates (sanity)")
    sa = sum(float(r["total_direct_kernel_time_sum"]) for r in rows(os.path.join(a, "ops_summary.csv")))
    sb = sum(float(r["total_direct_kernel_time_sum"]) for r in ops)
    check(abs(sa - sb) <= 1e-6 * max(sa, 1), f"{name}: direct kernel time conserved ({sa} vs {sb})")
    uni = rows(os.path.join(b, "unified_perf_summary.csv"))
    shaped = [r for r in uni if r.get("Input Dims") and r["name"] not in ("hipGraphLaunch", "cudaGraphLaunch")]
    check(len(shaped) > 5, f"{name}: unified_perf_summary has real ops with shapes")
    ref = os.path.join(d, "perf_csvs", "ops_summary.csv")
    if os.path.exists(ref):
        want = {r["name"]: r for r in rows(ref)}
        top = ops[0]
        w = want.get(top["name"])
        check(w is not None and abs(float(w["total_direct_kernel_time_sum"]) -
                                    float(top["total_direct_kernel_time_sum"])) < 1e-3
              and w["Count"] == top["Count"], f"{name}: top op {top['name']} matches the reference")


def split_case(name, replay, want_kind, want_bs, steady=False, nwin=1):
    d = os.path.join(INF, name)
    args = ["split", os.path.join(d, replay)] + (["--steady-state"] if steady else [])
    rc, out, err = run(*args)
    check(rc == 0, f"{name}: split rc {rc} {err.strip()[-200:]}")
    if rc:
        return
    lines = [l.split("\t") for l in out.splitlines() if l and not l.startswith("#")]
    check(len(lines) == nwin and all(l[1] == want_kind and l[2] == f"bs={want_bs}" for l in lines),
          f"{name}: split windows {lines}")
    if not lines:
        return
    rc, info, _ = run("info", lines[0][0])
    check(rc == 0, f"{name}: window trace stored")
    try:
        cat = json.loads(info.splitlines()[0].rstrip(","))["catalog"] if info.startswith("{") else None
    except Exception:
        cat = None
    if cat is None:
        try:
            cat = json.loads(info)["catalog"]
        except Exception:
            cat = {}
    labels = cat.get("labels", {})
    check(labels.get("step") == want_kind and labels.get("bs") == str(want_bs),
          f"{name}: window labels {labels}")
    rc2, out2, _ = run(*args)
    check(rc2 == 0 and "already stored" in out2, f"{name}: splitting twice stores nothing new")
    report(lines[0][0], os.path.join(TMP, name + "-window"))


def main():
    global DB, TMP
    if not os.path.isdir(INF):
        print("0 passed, 0 failed (skipped: no shared data)")
        return 77
    if not os.path.exists(BIN):
        print(f"FAIL: {BIN} missing\n0 passed, 1 failed")
        return 1
    with tempfile.TemporaryDirectory() as tmp:
        TMP = tmp
        DB = os.path.join(tmp, "db")
        graph_case("vllm_decode_full", "graph_execution.json.gz")
        graph_case("vllm_prefilldecode_piecewise", "graph_execution.json.gz")
        split_case("vllm_decode_full", "graph_execution.json.gz", "decode", 32)
        split_case("sglang_prefilldecode", "sglang_Qwen3-8B_prefilldecode.json.gz", "prefill", 15)
        # one decode step: the reference's mixed and decode-only windows are that step
        split_case("sglang_decode", "sglang_Qwen3-8B_decode.json.gz", "decode", 32, steady=True, nwin=2)
        split_case("vllm_prefilldecode_piecewise", "graph_execution.json.gz", "prefilldecode", 46)
        rc, _, _ = run("split", "--help")
        check(rc == 0, "split --help")
        rc, _, _ = run("split")
        check(rc == 2, "split without a trace is a usage error")
    print(f"{check.passed} passed, {check.failed} failed")
    return 0 if check.failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
