#!/usr/bin/env python3
"""test_args_sel.py — the args_sel table (ingest/schema.h) gives the reports
the same args as the full args column.

Kineto ingest stores the args of communication kernels and of events with
an "Output type" key a second time, in a small table the reports read
instead of decoding the whole args column. TRACELENS_ARGS_PASS=full makes
them ignore that table. This test ingests
  - a hand-written trace with a Reduce op carrying "Output type" (which
    changes its bytes), one without it, and an NCCL kernel with collective
    args, and
  - a tracegen corpus of two ranks,
and checks that the PyTorch report, the corpus workbook's CSVs and the
collective report are byte-identical both ways, and that "Output type"
really reached the Reduce sheet (so the test fails if the table missed it).
usage: test_args_sel.py BUILD_DIR
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

from tlcheck import Checks

BUILD = sys.argv[1]
TL = os.path.join(BUILD, "tracelens")
COLL = os.path.join(BUILD, "TraceLens_generate_multi_rank_collective_report_pytorch")
check = Checks()




def run(args, full):
    env = dict(os.environ)
    env.pop("TRACELENS_ARGS_PASS", None)
    if full:
        env["TRACELENS_ARGS_PASS"] = "full"
    r = subprocess.run(args, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        print(" ".join(args), "->", r.returncode, r.stderr, file=sys.stderr)
    return r.returncode


def tree(d):
    out = {}
    for root, _, files in os.walk(d):
        for f in files:
            p = os.path.join(root, f)
            with open(p, "rb") as fh:
                out[os.path.relpath(p, d)] = fh.read()
    return out


def trace():
    ev = []
    uid = [0]

    def op(name, ts, dur, args, corr=None, kernel=None):
        uid[0] += 1
        ev.append({"ph": "X", "cat": "cpu_op", "name": name, "pid": 1, "tid": 1, "ts": ts, "dur": dur,
                   "args": dict(args, **{"External id": uid[0]})})
        if kernel:
            c = 100 + uid[0]
            ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1,
                       "ts": ts + 1, "dur": 2, "args": {"correlation": c, "External id": uid[0]}})
            kargs = dict(kernel[1], correlation=c, stream=7, device=0)
            ev.append({"ph": "X", "cat": "kernel", "name": kernel[0], "pid": 0, "tid": 7, "ts": ts + 5,
                       "dur": 20, "args": kargs})
            ev.append({"ph": "s", "id": c, "pid": 1, "tid": 1, "ts": ts + 1, "cat": "ac2g", "name": "ac2g"})
            ev.append({"ph": "f", "id": c, "pid": 0, "tid": 7, "ts": ts + 5, "cat": "ac2g", "name": "ac2g",
                       "bp": "e"})

    dims = {"Input Dims": [[1024, 1024], []], "Input type": ["c10::BFloat16", "Scalar"],
            "Input Strides": [[1024, 1], []], "Concrete Inputs": ["", "1"]}
    op("aten::cumsum", 100, 40, dict(dims, **{"Output type": ["float"]}), kernel=("cumsum_kernel", {}))
    op("aten::cumsum", 200, 40, dims, kernel=("cumsum_kernel", {}))
    op("c10d::allreduce_", 300, 40, {}, kernel=(
        "ncclDevKernel_AllReduce_Sum_bf16_RING_LL",
        {"Collective name": "allreduce", "dtype": "BFloat16", "In msg nelems": 4096,
         "Out msg nelems": 4096, "Group size": 2, "Process Group Name": "0",
         "Process Group Ranks": "[0, 1]", "In split size": "[]", "Out split size": "[]"}))
    return {"traceEvents": ev, "deviceProperties": [{"id": 0, "name": "NVIDIA H100 80GB HBM3"}]}


def main():
    tmp = tempfile.mkdtemp(prefix="tl_args_sel.")
    try:
        db = os.path.join(tmp, "db")
        path = os.path.join(tmp, "reduce.json")
        with open(path, "w") as f:
            json.dump(trace(), f)
        corpus = os.path.join(tmp, "corpus", "cfg")
        subprocess.run([os.path.join(BUILD, "tracegen"), "--ranks", "2", "--size", "2M", "--seed", "5", "-q",
                        "-o", corpus], check=True)
        check(run([TL, "--db", db, "ingest", "-q", path, os.path.dirname(corpus)], False) == 0, "ingest")
        ls = subprocess.run([TL, "--db", db, "ls"], stdout=subprocess.PIPE, text=True).stdout.splitlines()
        ids = {l.split("\t")[-2]: l.split("\t")[0] for l in ls}
        rid = [v for k, v in ids.items() if k.endswith("reduce.json")][0]
        info = subprocess.run([TL, "--db", db, "info", rid], stdout=subprocess.PIPE, text=True).stdout
        check('"args_sel":true' in info and '"args_sel.args"' in info, "catalog flag and table stored")
        outs = {}
        for mode in ("sel", "full"):
            full = mode == "full"
            o = os.path.join(tmp, mode)
            check(run([TL, "--db", db, "report", rid, "--csv-dir", os.path.join(o, "rep")], full) == 0, "report " + mode)
            for k, v in ids.items():
                if "rank_" in k:
                    check(run([TL, "--db", db, "report", v, "--csv-dir", os.path.join(o, "r" + os.path.basename(k))],
                              full) == 0, "rank report " + mode)
            check(run([TL, "--db", db, "corpus-report", "--config", "cfg", "-q", "-o", os.path.join(o, "wb.xlsx"),
                       "--csv", os.path.join(o, "wb")], full) == 0, "corpus-report " + mode)
            check(run([COLL, "--db", db, "--config", "cfg", "--output_csvs_dir", os.path.join(o, "coll")], full) == 0,
                  "collective report " + mode)
            outs[mode] = tree(o)
            outs[mode].pop("wb.xlsx", None)  # (zip timestamps) the CSVs carry the same tables
        check(len(outs["sel"]) >= 20, "%d output files" % len(outs["sel"]))
        check(sorted(outs["sel"]) == sorted(outs["full"]), "same files both ways")
        same = [f for f in outs["sel"] if outs["sel"][f] == outs["full"].get(f)]
        check(len(same) == len(outs["sel"]), "identical: %d of %d files" % (len(same), len(outs["sel"])))
        red = outs["sel"].get(os.path.join("rep", "Reduce_fwd.csv"), b"").decode()
        check("float" in red, "Output type reached the Reduce sheet")
        coll = outs["sel"].get(os.path.join("rep", "coll_analysis.csv"), b"").decode()
        check("allreduce" in coll and "4096" in coll, "collective args reached coll_analysis")
        print("compared %d files" % len(outs["sel"]))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("%d passed, %d failed" % (check.passed, check.failed))
    return 1 if check.failed else 0


if __name__ == "__main__":
    sys.exit(main())
